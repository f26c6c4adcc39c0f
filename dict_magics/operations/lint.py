"""Find what is wrong in the dictionary: one listing (the cached one when fresh), then
``EntryList.lint()``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .context import OperationSettings, connect
from .listing import CACHE

if TYPE_CHECKING:
    from ..models import LintReport
    from ..service.client import DictionaryClient


def lint(settings: OperationSettings, *, client: DictionaryClient | None = None) -> LintReport:
    """Every problem the dictionary holds, with a suggested fix for each."""
    with connect(settings, client) as (client, profile):
        listing = CACHE.current(client, profile)
    return listing.lint()
