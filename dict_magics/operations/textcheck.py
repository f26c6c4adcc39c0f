"""Which entries apply to each sentence of a text: ``%dict_check`` and ``dict-magics check``.

One listing (the cached one when it is fresh), then ``EntryList.check(text)``: the 3-per-sentence
rule is played locally, so no translation request is made and nothing is changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import UsageProblem
from .context import OperationSettings, connect
from .listing import CACHE, check_language_filter

if TYPE_CHECKING:
    from ..models import CheckReport
    from ..service.client import DictionaryClient

__all__ = ["check_text"]


def check_text(
    settings: OperationSettings,
    text: str,
    *,
    from_lang: str | None = None,
    to_lang: str | None = None,
    client: DictionaryClient | None = None,
) -> CheckReport:
    """The entries (of ``from_lang`` / ``to_lang`` when given) that match each sentence of
    ``text``, applied or not under the limit of three.

    Raises ``UsageProblem`` for an empty text (before any request), otherwise as the listing
    does.
    """
    if not isinstance(text, str) or not text.strip():
        raise UsageProblem("no text to check: give a sentence or more.")
    with connect(settings, client) as (client, profile):
        listing = CACHE.current(client, profile)
    check_language_filter(listing, from_lang, to_lang)
    return listing.check(text, from_lang=from_lang or None, to_lang=to_lang or None)
