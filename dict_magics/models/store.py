"""What dict-magics keeps on disk, as records: snapshots (read back or listed) and audit lines.

The files themselves are written and read in ``operations/snapshots.py`` and
``operations/audit.py``; these are the values they hand over, and the tables that render.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from .display import Displayed
from .entry import Entry

__all__ = [
    "AuditLine",
    "AuditLines",
    "AuditOperation",
    "AuditTable",
    "Operation",
    "Snapshot",
    "SnapshotInfo",
    "SnapshotList",
]

Operation = Literal["purge", "delete", "update", "sync"]
"""What a snapshot was taken before (version 1 knows the first two only)."""
AuditOperation = Literal["delete", "purge", "add", "update"]
"""What an audit line records."""


@dataclass(frozen=True)
class SnapshotInfo:
    """One snapshot as the listing shows it: everything but the entries themselves."""

    path: Path
    taken_at: datetime
    profile: str
    host: str
    base_url: str
    operation: Operation
    count: int
    sequence: int | None = None
    """The order in which this machine's snapshots were started (``None`` for older ones):
    what "latest" follows, rather than a clock that may have been wrong."""


@dataclass(frozen=True)
class Snapshot:
    """A snapshot read back (or just written): where, when, from which service, and what."""

    path: Path
    taken_at: datetime
    profile: str
    host: str
    base_url: str
    operation: Operation
    entries: list[Entry]
    copies: dict[str, int] = field(default_factory=dict)
    """Entry id -> entries with its four terms the dictionary held when this was taken (only
    where more than one): what a restore aims for."""
    """Each entry as it was before it was deleted or changed (with its id)."""
    added: list[Entry] = field(default_factory=list)
    """The four terms of each entry the operation added (no id: the service picks it);
    a restore removes them."""
    format: str = "dict-magics-snapshot/2"
    listing_age: float | None = None
    """Seconds between the listing the entries' terms come from and this snapshot (a delete's
    only; 0: listed afresh just before; ``None``: not recorded)."""

    def __repr__(self) -> str:
        added = f", {len(self.added)} added" if self.added else ""
        return (
            f"Snapshot({str(self.path)!r}, {len(self.entries)} entries{added}, "
            f"operation={self.operation!r}, host={self.host!r}, profile={self.profile!r})"
        )


@dataclass(frozen=True)
class AuditLine:
    """One request that could change the dictionary, as the log recorded it.

    ``entry`` holds the terms when they were known (its ``id`` is ``entry_id``, or empty for an
    add, whose new id the service does not return).
    """

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


class AuditLines(list[AuditLine]):
    """The lines ``read_audit`` found, oldest first; ``skipped`` counts unreadable ones."""

    skipped: int = 0


class SnapshotList(Displayed, list[SnapshotInfo]):
    """Snapshots on disk, newest first; ``[0].path`` is what ``restore`` takes."""


class AuditTable(Displayed, list[AuditLine]):
    """The last audit lines, oldest first; ``skipped`` counts unreadable lines passed over."""

    skipped: int = 0
