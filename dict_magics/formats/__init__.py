"""Glossary files (csv, tsv, xlsx, tbx): file layouts, never the service. A file that cannot
be read as its author meant, or a write that could not be read back as the same terms, is
refused, naming where; every reader is bounded. One entry point per direction."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable
from importlib import import_module
from pathlib import Path
from types import ModuleType

from ..errors import UsageProblem
from ..models.glossary import Glossary
from ..models.records import Entry
from .base import FORMATS, check_size, format_of, guard, parse_pair, unguard


def read_glossary(
    path: str | Path,
    *,
    format: str | None = None,
    pair: str | tuple[str, str] | None = None,
    sheet: str | None = None,
) -> Glossary:
    """The rows of ``path`` (format from ``format`` or the extension); ``pair`` (``en:de``)
    names the languages of a two-column file or picks two of a TBX; ``sheet``: an .xlsx's.
    ``UsageProblem`` for a file it will not read as its author meant."""
    path = Path(path).expanduser()
    kind = format_of(path, format)
    languages = parse_pair(pair) if isinstance(pair, str) or pair is None else pair
    if sheet is not None and kind != "xlsx":
        raise UsageProblem(f"a sheet is named, but only an .xlsx has sheets ({path} is .{kind}).")
    check_size(path)
    return _module(kind).read(path, kind, languages, sheet)


def write_glossary(
    path: str | Path, entries: Iterable[Entry], *, format: str | None = None
) -> Path:
    """Write ``entries`` (id and four terms) to ``path``; reading it back gives the same terms.
    Written beside it and renamed over it, so a failure leaves no half file."""
    path = Path(path).expanduser()
    kind = format_of(path, format)
    entries = list(entries)
    if path.is_dir():
        raise UsageProblem(f"{path} is a folder; name a file to write.")
    data = _module(kind).to_bytes(entries, kind)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(temporary, "xb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise UsageProblem(f"cannot write {path}: {exc.strerror or exc}.") from None
    return path


def _module(kind: str) -> ModuleType:
    """The module of a format (loaded on first use: openpyxl and defusedxml are not cheap)."""
    return import_module(f".{'delimited' if kind in ('csv', 'tsv') else kind}", __package__)


__all__ = ["FORMATS", "format_of", "guard", "parse_pair", "read_glossary", "unguard"]
__all__ += ["write_glossary"]
