"""Every record dict-magics hands around: entries, results, snapshots, audit lines.

Plain data, importing nothing above ``errors``/``settings``; each displayable record shows
itself through ``display.Displayed`` (views registered by ``render/views.py``). Names load on
first use (PEP 562), so ``%load_ext`` does not pay for modules it does not need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:
    from .display import Displayed
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
    from .lint import Finding, LintReport
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
    from .store import AuditLine, AuditLines, AuditTable, Snapshot, SnapshotInfo, SnapshotList
    from .textcheck import CheckReport, Match, Sentence

_WHERE = {
    "Displayed": "display",
    **dict.fromkeys(
        (
            "AddBatch",
            "AddResult",
            "BatchResult",
            "Cause",
            "DeleteResult",
            "DryRunResult",
            "Entry",
            "EntryList",
            "Outcome",
            "RestoreResult",
            "UpdateResult",
        ),
        "records",
    ),
    **dict.fromkeys(("Finding", "LintReport"), "lint"),
    "PurgePlan": "purge",
    **dict.fromkeys(("CheckReport", "Match", "Sentence"), "textcheck"),
    **dict.fromkeys(
        (
            "ChangePreview",
            "Conflict",
            "ExportResult",
            "Glossary",
            "GlossaryRow",
            "InvalidRow",
            "NoChange",
            "PlannedUpdate",
            "SyncPlan",
            "SyncResult",
        ),
        "glossary",
    ),
    **dict.fromkeys(
        ("AuditLine", "AuditLines", "AuditTable", "Snapshot", "SnapshotInfo", "SnapshotList"),
        "store",
    ),
}
__all__ = [
    "AddBatch",
    "AddResult",
    "AuditLine",
    "AuditLines",
    "AuditTable",
    "BatchResult",
    "Cause",
    "ChangePreview",
    "CheckReport",
    "Conflict",
    "DeleteResult",
    "Displayed",
    "DryRunResult",
    "Entry",
    "EntryList",
    "ExportResult",
    "Finding",
    "Glossary",
    "GlossaryRow",
    "InvalidRow",
    "LintReport",
    "Match",
    "NoChange",
    "Outcome",
    "PlannedUpdate",
    "PurgePlan",
    "RestoreResult",
    "Sentence",
    "Snapshot",
    "SnapshotInfo",
    "SnapshotList",
    "SyncPlan",
    "SyncResult",
    "UpdateResult",
]

__getattr__, __dir__ = lazy_names(globals(), _WHERE)
