"""Every record dict-magics hands around: entries, results, plans, reports, snapshots, audit
lines. Plain data that shows itself (``str``, ``_repr_html_``); importing nothing above
``errors``/``settings``, and nothing heavy, so ``%load_ext`` stays light."""

from __future__ import annotations

from .glossary import (
    ChangePreview,
    Conflict,
    ExportResult,
    Glossary,
    GlossaryRow,
    InvalidRow,
    NoChange,
    PlannedUpdate,
    SyncPlan,
    SyncResult,
)
from .impact import Impact
from .lint import Finding, LintReport
from .probe import ProbeResult
from .purge import PurgePlan
from .records import (
    AddBatch,
    AddResult,
    BatchResult,
    Cause,
    DeleteResult,
    DryRunResult,
    Entry,
    EntryList,
    Outcome,
    RestoreResult,
    UpdateResult,
)
from .store import AuditLine, AuditTable, Snapshot, SnapshotInfo, SnapshotList
from .text import Rendered
from .textcheck import CheckReport, Match, Segment

__all__ = ["AddBatch", "AddResult", "AuditLine", "AuditTable", "BatchResult", "Cause"]
__all__ += ["ChangePreview", "CheckReport", "Conflict", "DeleteResult", "DryRunResult", "Entry"]
__all__ += ["EntryList", "ExportResult", "Finding", "Glossary", "GlossaryRow", "Impact"]
__all__ += ["InvalidRow", "LintReport", "Match", "NoChange", "Outcome", "PlannedUpdate"]
__all__ += ["ProbeResult", "PurgePlan", "Rendered", "RestoreResult", "Segment", "Snapshot"]
__all__ += ["SnapshotInfo", "SnapshotList", "SyncPlan", "SyncResult", "UpdateResult"]
