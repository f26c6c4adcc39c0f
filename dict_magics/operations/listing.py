"""The dictionary as it is: a filtered listing for people, and a cached one for the operations.

``list_entries`` always asks the service. ``ListingCache`` keeps one listing per profile, base URL
and access key for this process, kept current from what
this tool deletes, so a loop of one-id deletes does not list the whole dictionary each time. A
listing is fetched again when it is older than ``MAX_AGE`` seconds, when an id asked about is not
in it (someone else may have added it), or after an addition (whose new id is never returned).
A delete that keeps a snapshot lists afresh, unless the ``listing_max_age`` setting lets it take
a cached listing younger than that (``recent``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .context import (
    CACHE,
    MAX_AGE,
    ListingCache,
    OperationSettings,
    cache_key,
    connect,
    listed_after,
)

if TYPE_CHECKING:
    from ..models import EntryList
    from ..service.client import DictionaryClient

__all__ = [
    "CACHE",
    "MAX_AGE",
    "ListingCache",
    "cache_key",
    "check_language_filter",
    "list_entries",
    "listed_after",
]


def list_entries(
    settings: OperationSettings,
    *,
    match: str | None = None,
    from_lang: str | None = None,
    to_lang: str | None = None,
    client: DictionaryClient | None = None,
) -> EntryList:
    """The dictionary's entries whose terms contain ``match`` (any case) in the languages given.

    Raises ``DictMagicsError`` before any request, ``ListingUnsupportedError`` where the service
    has no listing and ``ServiceError`` for a listing it cannot give; ``str(exc)`` is one line.
    """
    with connect(settings, client) as (client, profile):
        listing = CACHE.fetch(client, profile)
    check_language_filter(listing, from_lang, to_lang)
    return listing.filter(match=match, from_lang=from_lang, to_lang=to_lang)


def check_language_filter(listing: EntryList, from_lang: str | None, to_lang: str | None) -> None:
    """``UsageProblem`` naming the codes the service takes when a filter's language code is
    not one of them, in any case (filters ignore case: ``JA`` finds ``ja``), and no listed entry
    has it: ``zh`` for ``zh-CN`` would otherwise list nothing, silently. (A listed entry with
    such a code, which lint reports, is still found by it.)"""
    from ..errors import UsageProblem
    from ..models.terms import LANGUAGE_CODES, language_hint, language_problem

    known = {c.casefold() for c in LANGUAGE_CODES}
    for code, field in ((from_lang, "fromLang"), (to_lang, "toLang")):
        if not code or code.casefold() in known:
            continue
        if listing.filter(**{_FIELDS[field]: code}).entries:
            continue
        problem = language_problem(code, field)
        assert problem is not None
        valid = _VALID_CODES if not language_hint(code) else ""
        raise UsageProblem(f"{problem.message}{valid}; no entry has it, so none was listed.")


_FIELDS = {"fromLang": "from_lang", "toLang": "to_lang"}
_VALID_CODES = (
    ": the service takes ISO 639-1 codes (en, ja, de, ...), and zh-CN or zh-TW for Chinese"
)
