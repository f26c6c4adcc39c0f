"""Which view renders which model: filled into ``models.display`` on first display.

The top package wires ``load`` in as the loader, so models reach their views without importing
``render``, and a new model needs one line here.
"""

from __future__ import annotations

from ..models import (
    AddBatch,
    AddResult,
    AuditTable,
    BatchResult,
    ChangePreview,
    CheckReport,
    DeleteResult,
    DryRunResult,
    EntryList,
    ExportResult,
    LintReport,
    NoChange,
    PurgePlan,
    RestoreResult,
    SnapshotList,
    SyncPlan,
    SyncResult,
    UpdateResult,
)
from ..models.display import register
from ..profiles.status import ProfileStatus
from .dryrun import dryrun_html, dryrun_text
from .entries import HTML_ROWS, entries_html, entries_text
from .glossary import (
    add_batch_html,
    add_batch_text,
    add_html,
    add_text,
    export_html,
    export_text,
    no_change_html,
    no_change_text,
    plan_html,
    plan_text,
    preview_html,
    preview_text,
    sync_result_html,
    sync_result_text,
)
from .lint import lint_html, lint_pretty, lint_text
from .purge import purge_html, purge_text
from .restore import restore_html, restore_text
from .results import batch_html, batch_text, result_html, result_text
from .status import status_html, status_text
from .store import audit_html, audit_text, snapshots_html, snapshots_text
from .textcheck import check_html, check_pretty, check_text
from .update import update_html, update_text

__all__ = ["load"]


def load() -> None:
    """Register every model's views (idempotent)."""
    register(
        EntryList,
        text=entries_text,
        html=entries_html,
        # The first rows only: a notebook cell is no place for 100,000 lines.
        pretty=lambda listing: entries_text(listing, limit=HTML_ROWS),
    )
    register(DeleteResult, text=result_text, html=result_html)
    register(BatchResult, text=batch_text, html=batch_html)
    register(DryRunResult, text=dryrun_text, html=dryrun_html)
    register(RestoreResult, text=restore_text, html=restore_html)
    register(UpdateResult, text=update_text, html=update_html)
    register(SnapshotList, text=snapshots_text, html=snapshots_html)
    register(AuditTable, text=audit_text, html=audit_html)
    register(ProfileStatus, text=status_text, html=status_html)
    register(SyncPlan, text=plan_text, html=plan_html)
    register(PurgePlan, text=purge_text, html=purge_html)
    register(SyncResult, text=sync_result_text, html=sync_result_html)
    register(ExportResult, text=export_text, html=export_html)
    register(AddResult, text=add_text, html=add_html)
    register(AddBatch, text=add_batch_text, html=add_batch_html)
    register(ChangePreview, text=preview_text, html=preview_html)
    register(NoChange, text=no_change_text, html=no_change_html)
    register(LintReport, text=lint_text, html=lint_html, pretty=lint_pretty)
    register(CheckReport, text=check_text, html=check_html, pretty=check_pretty)
