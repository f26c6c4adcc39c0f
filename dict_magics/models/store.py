"""What dict-magics keeps on disk, as records: snapshots and audit lines, and the tables that
show them (the files are written and read in ``operations``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from .entry import Entry
from .text import (
    COLOUR,
    MARK,
    Rendered,
    count,
    entries,
    escape,
    html_row,
    html_table,
    shown,
    text_table,
)

Operation = Literal["purge", "delete", "update", "sync"]  # what a snapshot was taken before
AuditOperation = Literal["delete", "purge", "add", "update"]


@dataclass(frozen=True)
class SnapshotInfo:
    """One snapshot as the listing shows it, without its entries. ``sequence``: the order this
    machine started them in (what "latest" follows, not a clock); ``added``: how many entries
    the operation added; ``undoes``: a restore's own snapshot, the file it undid."""

    path: Path
    taken_at: datetime
    profile: str
    host: str
    base_url: str
    operation: Operation
    count: int
    sequence: int | None = None
    added: int = 0
    undoes: str | None = None


@dataclass(frozen=True)
class Snapshot:
    """A snapshot read back (or just written). ``entries``: each as it was before the change;
    ``copies``: id -> how many entries held its terms then (where more than one), what a restore
    aims for; ``added``: what the change added (a restore removes them); ``left``: what the
    change left under the ids it changed (``None``: not recorded), what a restore expects."""

    path: Path
    taken_at: datetime
    profile: str
    host: str
    base_url: str
    operation: Operation
    entries: list[Entry]
    copies: dict[str, int] = field(default_factory=dict)
    added: list[Entry] = field(default_factory=list)
    format: str = "dict-magics-snapshot/2"
    listing_age: float | None = None  # seconds from the listing the terms come from
    left: list[Entry] | None = None
    undoes: str | None = None

    def __repr__(self) -> str:
        added = f", {len(self.added)} added" if self.added else ""
        return (
            f"Snapshot({str(self.path)!r}, {len(self.entries)} entries{added}, "
            f"operation={self.operation!r}, host={self.host!r}, profile={self.profile!r})"
        )


@dataclass(frozen=True)
class AuditLine:
    """One request that could change the dictionary, as the log recorded it."""

    time: datetime
    profile: str
    host: str
    operation: AuditOperation
    entry_id: str | None
    entry: Entry | None
    outcome: Literal["success", "failure", "unknown"]
    http_status: int | None
    attempts: int
    reason: str | None
    snapshot: str | None


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


class SnapshotList(Rendered, list[SnapshotInfo]):
    """Snapshots on disk, newest first; ``[0].path`` is what ``restore`` takes."""

    _HEADER = ("when", "host", "profile", "operation", "holds", "path")

    def _rows(self) -> list[list[str]]:
        rows = []
        for i in self:
            holds = entries(i.count) + (f", {i.added} added" if i.added else "")
            operation = "undo" if i.undoes else i.operation
            rows.append([_when(i.taken_at), i.host, i.profile, operation, holds, str(i.path)])
        return rows

    def _caption(self) -> str:
        return f"{count(len(self), 'snapshot')}, newest first"

    def __str__(self) -> str:
        """One snapshot per line, with the path to hand to a restore."""
        if not self:
            return "No snapshots yet: one is taken before every delete and purge."
        rows = [[shown(cell) for cell in row] for row in [self._HEADER, *self._rows()]]
        return "\n".join([self._caption(), *text_table(rows)])

    def _repr_html_(self) -> str:
        rows = [html_row(row) for row in self._rows()]
        table = html_table(self._HEADER, rows, self._caption()) if self else escape(str(self))
        return f'<div class="dict-magics-snapshots">{table}</div>'


class AuditTable(Rendered, list[AuditLine]):
    """The last audit lines, oldest first; ``skipped`` counts unreadable lines passed over."""

    skipped: int = 0
    _HEADER = ("time", "profile", "host", "operation", "outcome", "HTTP", "tries", "target")

    @staticmethod
    def _row(line: AuditLine) -> list[str]:
        described = line.entry.describe() if line.entry is not None else None
        parts = [p for p in (line.entry_id, described) if p is not None]
        return [
            _when(line.time),
            line.profile,
            line.host,
            line.operation,
            f"{MARK[line.outcome]} {line.outcome}",
            "" if line.http_status is None else str(line.http_status),
            str(line.attempts),
            "every entry" if line.operation == "purge" else ": ".join(parts) or "?",
        ]

    def _caption(self) -> str:
        skipped = f" ({count(self.skipped, 'unreadable line')} skipped)" if self.skipped else ""
        if not self:
            return f"The audit log is empty: nothing has been deleted or added yet.{skipped}"
        return f"last {count(len(self), 'request')}{skipped}"

    def __str__(self) -> str:
        """One request per line; the reason and a new snapshot on an indented line below."""
        if not self:
            return self._caption()
        rows = [[shown(c) for c in row] for row in [self._HEADER, *map(self._row, self)]]
        table = text_table(rows)
        out = [self._caption(), table[0]]
        previous = None
        for line, text in zip(self, table[1:], strict=True):
            notes = [line.reason] if line.reason and line.outcome != "success" else []
            if line.snapshot and line.snapshot != previous:
                notes.append(f"snapshot {line.snapshot}")  # once for the rows that share it
            previous = line.snapshot
            out += [text] + [f"    {shown('; '.join(notes))}"] * bool(notes)
        return "\n".join(out)

    def _repr_html_(self) -> str:
        rows = []
        for line in self:
            reason = line.reason or "" if line.outcome != "success" else ""
            css = f' class="dict-magics-{line.outcome}" style="color:{COLOUR[line.outcome]}"'
            rows.append(html_row([*self._row(line), reason, line.snapshot or ""], css))
        header = [*self._HEADER, "reason", "snapshot"]
        table = html_table(header, rows, self._caption()) if self else escape(self._caption())
        return f'<div class="dict-magics-audit">{table}</div>'
