"""Which entries apply to each element of a text (``%dict_check``, ``dict-magics check``): one
listing (the cached one when fresh), then the limit is played locally; nothing else is sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import UsageProblem
from ..models.textcheck import check_unit
from .context import OperationSettings, connect
from .listing import CACHE, check_language_filter

if TYPE_CHECKING:
    from ..models import CheckReport
    from ..service.client import DictionaryClient


def check_text(
    settings: OperationSettings,
    text: str | Sequence[str],
    *,
    from_lang: str | None = None,
    to_lang: str | None = None,
    unit: str = "element",
    case_sensitive: bool = True,
    client: DictionaryClient | None = None,
) -> CheckReport:
    """``EntryList.check`` of ``text`` (a string: its lines; a list: its items) on the
    listing. ``UsageProblem`` for an empty text or an unknown unit, before any request."""
    check_unit(unit)
    texts = [text] if isinstance(text, str) else list(text)
    if not all(isinstance(t, str) for t in texts) or not any(t.strip() for t in texts):
        raise UsageProblem("no text to check: give a sentence or more.")
    with connect(settings, client) as (client, profile):
        listing = CACHE.current(client, profile)
    check_language_filter(listing, from_lang, to_lang)
    how = {"unit": unit, "case_sensitive": case_sensitive}
    return listing.check(text, from_lang=from_lang or None, to_lang=to_lang or None, **how)
