"""Tables of what dict-magics keeps on disk: the snapshots, and the last lines of the audit log.

Reads the plain ``SnapshotInfo`` and ``AuditLine`` records by their fields only (render never
imports operations at run time). Every value is escaped in HTML; in text, control characters
from a service's terms are shown as escapes so they cannot move the cursor or colour a terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from .words import COLOUR, SYMBOL, clean

if TYPE_CHECKING:
    from ..models import AuditLine, SnapshotInfo

__all__ = ["audit_html", "audit_text", "clean", "snapshots_html", "snapshots_text"]

_TABLE = 'class="dict-magics-table" style="border-collapse:collapse;text-align:left"'


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell; the last column is left ragged."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    lines = []
    for row in [header, *rows]:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join(lines)


def _html_table(css: str, header: Sequence[str], rows: Sequence[str], caption: str) -> str:
    head = "".join(f'<th style="padding:0 0.8em 0 0">{escape(h)}</th>' for h in header)
    return (
        f'<div class="{css}"><table {_TABLE}><caption style="text-align:left">'
        f"{escape(caption)}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _cell(text: str, title: str | None = None, style: str = "") -> str:
    tip = f' title="{escape(title)}"' if title else ""
    return f'<td style="padding:0 0.8em 0 0;{style}"{tip}>{escape(text)}</td>'


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# -- snapshots ---------------------------------------------------------------------------------

_SNAPSHOT_HEADER = ("when", "host", "profile", "operation", "entries", "path")


def _snapshot_row(info: SnapshotInfo) -> list[str]:
    return [
        _when(info.taken_at),
        clean(info.host),
        clean(info.profile),
        info.operation,
        str(info.count),
        clean(str(info.path)),
    ]


def snapshots_text(infos: Sequence[SnapshotInfo]) -> str:
    """The snapshots, newest first, one per line, with the path to hand to a restore."""
    if not infos:
        return "No snapshots yet: one is taken before every delete and purge."
    caption = f"{_count(len(infos), 'snapshot')}, newest first"
    return caption + "\n" + _text_table(_SNAPSHOT_HEADER, [_snapshot_row(i) for i in infos])


def snapshots_html(infos: Sequence[SnapshotInfo]) -> str:
    """The same table as HTML."""
    if not infos:
        return f'<div class="dict-magics-snapshots">{escape(snapshots_text(infos))}</div>'
    rows = []
    for info in infos:
        when, host, profile, operation, count, path = _snapshot_row(info)
        rows.append(
            "<tr>"
            + _cell(when, info.taken_at.isoformat())
            + _cell(host, info.base_url)
            + _cell(profile)
            + _cell(operation)
            + _cell(count, style="text-align:right")
            + _cell(Path(path).name, path, "font-family:monospace")
            + "</tr>"
        )
    caption = f"{_count(len(infos), 'snapshot')}, newest first (hover a file name for its path)"
    return _html_table("dict-magics-snapshots", _SNAPSHOT_HEADER, rows, caption)


# -- the audit log -----------------------------------------------------------------------------

_AUDIT_HEADER = ("time", "profile", "host", "operation", "outcome", "HTTP", "tries", "target")


def _target(line: AuditLine) -> str:
    if line.operation == "purge":
        return "every entry"
    parts = []
    if line.entry_id is not None:
        parts.append(clean(line.entry_id))
    if line.entry is not None:
        parts.append(clean(line.entry.describe()))
    return ": ".join(parts) or "?"


def _audit_row(line: AuditLine) -> list[str]:
    return [
        _when(line.time),
        clean(line.profile),
        clean(line.host),
        line.operation,
        f"{SYMBOL[line.outcome]} {line.outcome}",
        "" if line.http_status is None else str(line.http_status),
        str(line.attempts),
        _target(line),
    ]


def _skipped(lines: Sequence[AuditLine]) -> str:
    skipped = getattr(lines, "skipped", 0)
    return f" ({_count(skipped, 'unreadable line')} skipped)" if skipped else ""


def audit_text(lines: Sequence[AuditLine]) -> str:
    """The last audit lines, oldest first; the reason and snapshot on an indented line."""
    if not lines:
        return "The audit log is empty: nothing has been deleted or added yet." + _skipped(lines)
    rows = [_audit_row(line) for line in lines]
    table = _text_table(_AUDIT_HEADER, rows).split("\n")
    out = [f"last {_count(len(lines), 'request')}{_skipped(lines)}", table[0]]
    previous = None
    for line, text in zip(lines, table[1:], strict=True):
        out.append(text)
        notes = []
        if line.reason and line.outcome != "success":
            notes.append(clean(line.reason))
        if line.snapshot and line.snapshot != previous:
            notes.append(f"snapshot {clean(line.snapshot)}")  # once for the rows that share it
        previous = line.snapshot
        if notes:
            out.append("    " + "; ".join(notes))
    return "\n".join(out)


def audit_html(lines: Sequence[AuditLine]) -> str:
    """The same as an HTML table, outcomes coloured, the reason and snapshot in their columns."""
    if not lines:
        return f'<div class="dict-magics-audit">{escape(audit_text(lines))}</div>'
    rows = []
    for line in lines:
        cells = _audit_row(line)
        colour = f"color:{COLOUR[line.outcome]}"
        snapshot = line.snapshot or ""
        rows.append(
            f'<tr class="dict-magics-{line.outcome}">'
            + "".join(_cell(c) for c in cells[:4])
            + _cell(cells[4], style=colour)
            + "".join(_cell(c) for c in cells[5:])
            + _cell(clean(line.reason or "") if line.outcome != "success" else "")
            + _cell(Path(snapshot).name, snapshot or None, "font-family:monospace")
            + "</tr>"
        )
    caption = f"last {_count(len(lines), 'request')}{_skipped(lines)}"
    return _html_table("dict-magics-audit", [*_AUDIT_HEADER, "reason", "snapshot"], rows, caption)
