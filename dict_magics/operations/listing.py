"""The dictionary as it is: a filtered listing for people (``list_entries`` always asks the
service); the listings kept for the operations live in ``context``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .context import CACHE, OperationSettings, connect

if TYPE_CHECKING:
    from ..models import EntryList
    from ..service.client import DictionaryClient

__all__ = ["CACHE", "check_language_filter", "list_entries"]


def list_entries(
    settings: OperationSettings,
    *,
    match: str | None = None,
    from_lang: str | None = None,
    to_lang: str | None = None,
    client: DictionaryClient | None = None,
) -> EntryList:
    """The entries whose terms contain ``match`` (any case) in the languages given;
    ``ListingUnsupportedError`` or ``ServiceError`` when the service cannot list."""
    with connect(settings, client) as (client, profile):
        listing = CACHE.fetch(client, profile)
    check_language_filter(listing, from_lang, to_lang)
    return listing.filter(match=match, from_lang=from_lang, to_lang=to_lang)


def check_language_filter(listing: EntryList, from_lang: str | None, to_lang: str | None) -> None:
    """``UsageProblem`` when a filter's language code is none the service takes and no
    listed entry has it: ``zh`` for ``zh-CN`` would otherwise list nothing, silently."""
    from ..errors import UsageProblem
    from ..models.terms import LANGUAGE_CODES, language_hint, language_problem

    known = {c.casefold() for c in LANGUAGE_CODES}
    for code, field, name in ((from_lang, "fromLang", "from_lang"), (to_lang, "toLang", "to_lang")):
        if not code or code.casefold() in known or listing.filter(**{name: code}).entries:
            continue
        problem = language_problem(code, field)
        assert problem is not None
        valid = "" if language_hint(code) else _VALID_CODES
        raise UsageProblem(f"{problem.message}{valid}; no entry has it, so none was listed.")


_VALID_CODES = (
    ": the service takes ISO 639-1 codes (en, ja, de, ...), and zh-CN or zh-TW for Chinese"
)
