"""CSV and TSV glossaries: UTF-8 with a BOM on write (Excel opens it right), ``utf-8-sig`` on
read (with or without a BOM), every cell formula-guarded (``base.guard``)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ..errors import UsageProblem
from ..models.glossary import GlossaryRow
from ..models.records import Entry
from .base import MAX_ROWS, WRITE_COLUMNS, Columns, guard, too_many_rows

__all__ = ["delimited_bytes", "read_delimited"]

_DELIMITER = {"csv": ",", "tsv": "\t"}


def read_delimited(path: Path, kind: str, pair: tuple[str, str] | None) -> list[GlossaryRow]:
    """The rows of a csv/tsv file (size already checked); row 1 is the header."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageProblem(
            f'{path} is not UTF-8 text (byte {exc.start}): save it as UTF-8 (Excel: "CSV UTF-8").'
        ) from None
    except OSError as exc:
        raise UsageProblem(f"cannot read {path}: {exc.strerror or exc}.") from None
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_DELIMITER[kind], strict=False)
    try:
        header = next(reader, None)
        if header is None:
            raise UsageProblem(f"{path} is empty: the first row must name the columns.")
        columns = Columns(path, header, pair)
        records = []
        for number, record in enumerate(reader, start=2):
            if number > MAX_ROWS + 1:
                raise too_many_rows(path)
            records.append((number, record))
    except csv.Error as exc:
        raise UsageProblem(f"{path}: row {reader.line_num}: {exc}.") from None
    return list(columns.rows(records))


def delimited_bytes(entries: list[Entry], kind: str) -> bytes:
    """The file's bytes: BOM, header, one guarded row per entry, CRLF line ends."""
    out = io.StringIO(newline="")
    writer = csv.writer(out, delimiter=_DELIMITER[kind], lineterminator="\r\n")
    writer.writerow(WRITE_COLUMNS)
    writer.writerows([guard(c) for c in (e.id, *e.terms)] for e in entries)
    try:
        return out.getvalue().encode("utf-8-sig")
    except UnicodeEncodeError as exc:  # a lone surrogate: no UTF-8 file can hold it
        raise UsageProblem(
            f"an entry holds U+{ord(exc.object[exc.start]):04X}, which UTF-8 cannot hold; "
            "nothing was written."
        ) from None
