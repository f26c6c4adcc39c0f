"""Excel glossaries (openpyxl, the optional extra ``xlsx``): the active sheet or one named.
A zip bomb is refused from the zip's directory before openpyxl opens the file (``zipfile``
never inflates a part past its declared size); openpyxl expands no entity (defusedxml)."""

from __future__ import annotations

import datetime
import io
import re
import zipfile
from pathlib import Path
from typing import Any

from ..errors import Remedy, UsageProblem
from ..models.glossary import Glossary
from ..models.records import Entry
from .base import Columns, guard, refuse_unwritable

MAX_UNCOMPRESSED = 128 * 1024 * 1024  # all parts together
MAX_PARTS = 2_000
_ESCAPED = re.compile("_x([0-9A-Fa-f]{4})_")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\ufffe\uffff]")
_NEEDS = "needs openpyxl, which is not installed: pip install 'dict-magics[xlsx]'"


def _openpyxl(what: str) -> Any:
    try:
        import openpyxl
    except ImportError:
        raise UsageProblem(f"{what} {_NEEDS} (or use .csv).") from None
    return openpyxl


def check_zip(path: Path) -> None:
    """Refuse a file that is not a zip, has too many parts or inflates too far."""
    try:
        with zipfile.ZipFile(path) as archive:
            parts = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise UsageProblem(f"{path} is not an .xlsx workbook ({exc}).") from None
    if len(parts) > MAX_PARTS:
        raise UsageProblem(f"{path} is refused: it holds {len(parts):,} parts (an xlsx has few).")
    total = sum(p.file_size for p in parts)
    if total > MAX_UNCOMPRESSED:
        raise UsageProblem(
            f"{path} is refused: it would inflate to {total / 2**20:,.0f} MiB "
            f"(at most {MAX_UNCOMPRESSED // 2**20} MiB is read; a zip bomb?)."
        )


def escape(text: str) -> str:
    """OOXML's own escape, as Excel writes it: a control character (CR included, which XML
    would turn into LF) or U+FFFE/U+FFFF (which XML cannot hold) as ``_xHHHH_``, and the ``_``
    of a literal ``_xHHHH_`` as ``_x005F_``."""
    text = _ESCAPED.sub(r"_x005F_x\1_", text)
    return _CONTROL.sub(lambda m: f"_x{ord(m.group()):04X}_", text)


def unescape(text: str) -> str:
    """Undo ``escape`` (and Excel's): every ``_xHHHH_`` is that character."""
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), text) if "_x" in text else text


def _text(value: Any) -> str:
    """A cell as text, as a person typed it (``12`` not ``12.0``)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return unescape(value)
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    return str(value)


def read(path: Path, kind: str, pair: tuple[str, str] | None, sheet: str | None) -> Glossary:
    """The rows of the sheet named, else of the active one, numbered as Excel shows them."""
    openpyxl = _openpyxl("reading .xlsx")
    check_zip(path)
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many kinds for a damaged file
        raise UsageProblem(f"{path} cannot be read as a workbook ({type(exc).__name__}).") from None
    try:
        chosen = _sheet(path, book, sheet)
        chosen.reset_dimensions()  # read-only mode trusts <dimension>: read what is there
        found = chosen.iter_rows(values_only=True)
        header = next(found, None)
        if header is None:
            raise UsageProblem(
                f"{path}: sheet {chosen.title!r} is empty: its first row must name the columns."
            )
        columns = Columns(path, [_text(v) for v in header], pair)
        records = ((n, [_text(v) for v in values]) for n, values in enumerate(found, start=2))
        rows = list(columns.rows(records))
        visible = [s.title for s in book.worksheets if s.sheet_state == "visible"]
        others = [title for title in visible if title != chosen.title]
        return Glossary(path, kind, rows, sheet=chosen.title, other_sheets=others)
    finally:
        book.close()


def _sheet(path: Path, book: Any, name: str | None) -> Any:
    """The sheet named (even hidden), else the active one if it is a visible worksheet."""
    titles = ", ".join(repr(s.title) for s in book.worksheets) or "none"
    if name is not None:
        if name not in book.sheetnames or book[name] not in book.worksheets:
            raise UsageProblem(f"{path} has no sheet {name!r}; its sheets: {titles}.")
        return book[name]
    active = book.active
    if active in book.worksheets and active.sheet_state == "visible":
        return active
    hidden = active in book.worksheets  # else a chart sheet, or none
    shown = f"sheet {active.title!r}, which is hidden" if hidden else "no sheet of cells"
    raise UsageProblem(
        f"{path} opens at {shown}: name the sheet to read (its sheets: {titles}).",
        option=Remedy.SHEET,
    )


def to_bytes(entries: list[Entry], kind: str = "xlsx") -> bytes:
    """A one-sheet workbook: header, then one guarded, escaped row per entry, all text."""
    openpyxl = _openpyxl("writing .xlsx")
    refuse_unwritable(entries, "xlsx")
    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("dictionary")
    sheet.append(list(Entry.FIELDS))
    for entry in entries:
        sheet.append([escape(guard(c)) for c in (entry.id, *entry.terms)])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()
