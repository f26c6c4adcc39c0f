"""What dict-magics kept on disk, as tables that render themselves: the snapshots and the last
lines of the audit log. Nothing here sends a request.
"""

from __future__ import annotations

from ..errors import UsageProblem
from ..models import AuditTable, SnapshotList
from .audit import read_audit
from .snapshots import list_snapshots

__all__ = ["AuditTable", "SnapshotList", "audit", "snapshots"]


def snapshots(profile: str | None = None, host: str | None = None) -> SnapshotList:
    """The snapshots on disk, newest first, of one profile and/or host when given."""
    return SnapshotList(list_snapshots(profile=profile, host=host))


def audit(n: int = 20) -> AuditTable:
    """The last ``n`` requests that could change the dictionary, oldest first."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise UsageProblem(f"-n must be a whole number of lines, 1 or more, not {n!r}.")
    return read_audit(n)
