"""A listing as aligned text columns and as a small HTML table.

Terms come from the service: control characters are shown escaped (a newline in a term must not
break a row), wide characters (金曜日) count as two columns, and the HTML shows the first rows
only, within a fixed size, whatever the dictionary holds.
"""

from __future__ import annotations

import unicodedata
from html import escape

from ..models import Entry, EntryList

__all__ = ["HTML_MAX_BYTES", "HTML_ROWS", "entries_html", "entries_text"]

HTML_ROWS = 200
HTML_MAX_BYTES = 150_000
"""The rows stop earlier than ``HTML_ROWS`` when they would make the table larger than this."""
_CELL_CHARS = 200
_COLUMN_CAP = 40
"""Columns align up to this width; a longer term overflows its own row only."""
_HEADINGS = ("id", "from", "source", "to", "target")


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode() for ch in text)


def _width(text: str) -> int:
    """Columns a terminal gives ``text``: wide characters two, combining marks none."""
    return sum(
        0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        for ch in text
    )


def _cells(entry: Entry) -> tuple[str, ...]:
    return tuple(
        _printable(v)
        for v in (entry.id, entry.from_lang, entry.from_text, entry.to_lang, entry.to_text)
    )


def _title(listing: EntryList) -> str:
    count = len(listing)
    where = f" at {listing.host}" if listing.host else ""
    if not count:
        return f"no entries{where}"
    return f"{count} entr{'y' if count == 1 else 'ies'}{where}"


def _more(shown: int, total: int) -> str:
    return f"\u2026 and {total - shown} more (total {total})"


def entries_text(listing: EntryList, limit: int | None = None) -> str:
    """A title line, then one aligned row per entry (the first ``limit`` when given)."""
    entries = listing.entries if limit is None else listing.entries[:limit]
    lines = [_title(listing)]
    if not entries:
        return lines[0]
    rows = [_HEADINGS, *(_cells(e) for e in entries)]
    widths = [min(_COLUMN_CAP, max(_width(row[i]) for row in rows)) for i in range(5)]
    for row in rows:
        padded = [cell + " " * max(0, widths[i] - _width(cell)) for i, cell in enumerate(row)]
        padded[0] = " " * max(0, widths[0] - _width(row[0])) + row[0]  # ids align right
        lines.append("  " + "  ".join(padded).rstrip())
    if len(entries) < len(listing):
        lines.append(_more(len(entries), len(listing)))
    return "\n".join(lines)


def entries_html(listing: EntryList) -> str:
    """An escaped table of the first rows (at most ``HTML_ROWS``, under ``HTML_MAX_BYTES``),
    then how many more there are."""
    head = "".join(f"<th style='text-align:left'>{h}</th>" for h in _HEADINGS)
    rows: list[str] = []
    size = 0
    for entry in listing.entries[:HTML_ROWS]:
        cells = "".join(f"<td>{escape(_clip(cell))}</td>" for cell in _cells(entry))
        row = f"<tr>{cells}</tr>"
        size += len(row.encode("utf-8"))
        if size > HTML_MAX_BYTES:
            break
        rows.append(row)
    table = ""
    if rows:
        table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    more = ""
    if len(rows) < len(listing):
        more = f"<div>{escape(_more(len(rows), len(listing)))}</div>"
    return (
        f'<div class="dict-magics-entries"><div><b>{escape(_title(listing))}</b></div>'
        f"{table}{more}</div>"
    )


def _clip(text: str) -> str:
    return text if len(text) <= _CELL_CHARS else text[:_CELL_CHARS] + "\u2026"
