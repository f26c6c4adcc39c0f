"""Find what is wrong in the dictionary: ``%dict_lint`` and ``dict-magics lint``.

One listing (the cached one when it is fresh), then ``EntryList.lint()``: nothing is changed
and nothing but the listing is requested.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .context import OperationSettings, connect
from .listing import CACHE

if TYPE_CHECKING:
    from ..models import LintReport
    from ..service.client import DictionaryClient


def lint(settings: OperationSettings, *, client: DictionaryClient | None = None) -> LintReport:
    """Every problem the dictionary holds, with a suggested fix for each.

    Raises ``DictMagicsError`` before any request, ``ListingUnsupportedError`` where the service
    has no listing and ``ServiceError`` for a listing it cannot give.
    """
    with connect(settings, client) as (client, profile):
        listing = CACHE.current(client, profile)
    return listing.lint()
