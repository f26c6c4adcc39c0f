"""Write the dictionary to a glossary file (csv, tsv, xlsx, tbx): one listing, one file that
reads back as exactly the terms listed, so ``sync`` of an unedited export plans no change.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UsageProblem
from ..formats import format_of, write_glossary
from ..models.glossary import ExportResult
from .context import OperationSettings, connect
from .listing import CACHE

if TYPE_CHECKING:
    from ..service.client import DictionaryClient


def export(
    settings: OperationSettings,
    path: str | Path,
    *,
    format: str | None = None,
    overwrite: bool = False,
    client: DictionaryClient | None = None,
) -> ExportResult:
    """List the dictionary and write it to ``path``; ``UsageProblem`` before the listing for a
    path or format it cannot write, or a file already there unless ``overwrite``."""
    path = Path(path).expanduser()
    kind = format_of(path, format)
    _refuse_existing(path, overwrite)
    with connect(settings, client) as (client, profile):
        listing = CACHE.fetch(client, profile)
        host = client.host
    _refuse_existing(path, overwrite)  # made while the listing came
    written = write_glossary(path, listing.entries, format=kind)
    return ExportResult(written, kind, len(listing), host)


def _refuse_existing(path: Path, overwrite: bool) -> None:
    """An export never replaces a file silently (it may be the user's edited glossary)."""
    if not overwrite and path.exists() and not path.is_dir():
        raise UsageProblem(f"{path} already exists; nothing was written.", option="overwrite")
