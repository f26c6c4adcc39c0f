"""Write the dictionary to a glossary file (csv, tsv, xlsx, tbx): one listing, one file.

Reading the file back gives exactly the terms listed (``formats`` guards formulas and escapes
what a format needs), so ``sync`` of an unedited export plans no change.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..formats import format_of, write_glossary
from ..models.glossary import ExportResult
from .connect import connect
from .context import OperationSettings
from .listing import CACHE

if TYPE_CHECKING:
    from ..service.client import DictionaryClient

__all__ = ["export"]


def export(
    settings: OperationSettings,
    path: str | Path,
    *,
    format: str | None = None,
    client: DictionaryClient | None = None,
) -> ExportResult:
    """List the dictionary and write it to ``path``; raises ``UsageProblem`` for a path or
    format it cannot write (before the listing) and ``ServiceError`` for no listing."""
    path = Path(path).expanduser()
    kind = format_of(path, format)
    with connect(settings, client) as (client, profile):
        listing = CACHE.fetch(client, profile)
        host = client.host
    written = write_glossary(path, listing.entries, format=kind)
    return ExportResult(written, kind, len(listing), host)
