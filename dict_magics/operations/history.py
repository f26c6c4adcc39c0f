"""What dict-magics kept on disk, as tables: the snapshots, and the last lines of the audit log.

Both are plain lists (of ``SnapshotInfo`` and ``AuditLine``) that render themselves in a
notebook and as text; nothing here sends a request.
"""

from __future__ import annotations

from typing import Any

from ..errors import UsageProblem
from .audit import AuditLine, read_audit
from .snapshots import SnapshotInfo, list_snapshots

__all__ = ["AuditTable", "SnapshotList", "audit", "snapshots"]


class SnapshotList(list[SnapshotInfo]):
    """Snapshots on disk, newest first; ``[0].path`` is what ``restore`` takes."""

    def __str__(self) -> str:
        from ..render.store import snapshots_text

        return snapshots_text(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        from ..render.store import snapshots_html

        return snapshots_html(self)


class AuditTable(list[AuditLine]):
    """The last audit lines, oldest first; ``skipped`` counts unreadable lines passed over."""

    skipped: int = 0

    def __str__(self) -> str:
        from ..render.store import audit_text

        return audit_text(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        from ..render.store import audit_html

        return audit_html(self)


def snapshots(profile: str | None = None, host: str | None = None) -> SnapshotList:
    """The snapshots on disk, newest first, of one profile and/or host when given."""
    return SnapshotList(list_snapshots(profile=profile, host=host))


def audit(n: int = 20) -> AuditTable:
    """The last ``n`` requests that could change the dictionary, oldest first."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise UsageProblem(f"-n must be a whole number of lines, 1 or more, not {n!r}.")
    lines = read_audit(n)
    table = AuditTable(lines)
    table.skipped = lines.skipped
    return table
