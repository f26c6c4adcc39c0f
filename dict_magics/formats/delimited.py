"""CSV and TSV glossaries: UTF-8 with a BOM (Excel opens it right), cells formula-guarded.
Read strictly: no term holds a line break, so a quoted cell running past its line (a stray
quote swallowing rows) refuses the file. A .csv may use ``;`` or a tab: the header decides."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

from ..errors import UsageProblem
from ..models.glossary import Glossary
from ..models.records import Entry
from .base import Columns, guard, refuse_unwritable

_DELIMITERS = {"csv": (",", ";", "\t"), "tsv": ("\t",)}
_NAMED = {",": "commas", ";": "semicolons", "\t": "tabs"}


def read(path: Path, kind: str, pair: tuple[str, str] | None, sheet: None = None) -> Glossary:
    """The rows of a csv/tsv file (size already checked); row 1 is the header."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageProblem(
            f'{path} is not UTF-8 text (byte {exc.start}): save it as UTF-8 (Excel: "CSV UTF-8").'
        ) from None
    except OSError as exc:
        raise UsageProblem(f"cannot read {path}: {exc.strerror or exc}.") from None
    records = _records(path, text, _delimiter(text, kind))
    header = next(records, None)
    if header is None:
        raise UsageProblem(f"{path} is empty: the first row must name the columns.")
    return Glossary(path, kind, list(Columns(path, header[1], pair).rows(records)))


def _delimiter(text: str, kind: str) -> str:
    """The first delimiter whose split of the header line (terms may hold any) names columns."""
    line = text.split("\n", 1)[0].split("\r", 1)[0]
    for delimiter in _DELIMITERS[kind]:
        if Columns.named(next(csv.reader([line], delimiter=delimiter), [])):
            return delimiter
    return _DELIMITERS[kind][0]  # Columns then says what the header holds


def _records(path: Path, text: str, delimiter: str) -> Iterator[tuple[int, list[str]]]:
    """(line, cells) per line; a record spanning lines or breaking the quoting refuses all."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    line = 0
    try:
        for record in reader:
            if reader.line_num > line + 1:
                raise UsageProblem(
                    f"{path}: the quote that opens a cell on line {line + 1} runs to line "
                    f"{reader.line_num}; no term can hold a line break, so a cell that spans "
                    "lines is refused (a stray quote?). Close or remove the quote; nothing "
                    "was read."
                )
            line = reader.line_num
            yield line, record
    except csv.Error as exc:
        if "unexpected end of data" in str(exc):
            raise UsageProblem(
                f"{path}: the quote that opens a cell on line {line + 1} is never closed "
                "(a stray quote?). Close or remove it; nothing was read."
            ) from None
        named = _NAMED.get(delimiter, repr(delimiter))
        raise UsageProblem(
            f"{path}: line {line + 1}: {exc} (columns separated by {named}); a quoted cell "
            "must end at its closing quote. Nothing was read."
        ) from None


def _line_break(text: str) -> str:
    return "a line break" if "\n" in text or "\r" in text else ""


def to_bytes(entries: list[Entry], kind: str) -> bytes:
    """The file's bytes: BOM, header, one guarded row per entry, CRLF line ends."""
    refuse_unwritable(entries, kind, _line_break, ".xlsx or .tbx")
    out = io.StringIO(newline="")
    writer = csv.writer(out, delimiter=_DELIMITERS[kind][0], lineterminator="\r\n")
    writer.writerow(Entry.FIELDS)
    writer.writerows([guard(c) for c in (e.id, *e.terms)] for e in entries)
    return out.getvalue().encode("utf-8-sig")
