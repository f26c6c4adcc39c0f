"""The panel's changes beyond deleting: edit one entry, add one, sync a glossary file, and the
two offline views, Problems (lint) and Check (a text against the entries).

``ToolHandlers`` is mixed into ``DictPanel``: its handlers run on the main thread and only arm
a confirmation (or start offline work); its ``_work_*`` methods run on the panel's worker thread
and only set traits. The forms themselves (widgets and checks) are in ``panel_forms``.
"""

from __future__ import annotations

import functools
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from ..models import AddResult, Entry, EntryList, NoChange, UpdateResult
from ..models.glossary import SyncResult
from ..operations.add import add
from ..operations.delete import count
from ..operations.prompts import ScriptedPrompter
from ..operations.sync import plan_sync, sync
from ..operations.update import update
from ..render import panel as view
from .commands import PANEL
from .panel_state import Armed, SyncRequest, Undo, show

if TYPE_CHECKING:
    import threading

    from ..operations.context import OperationSettings
    from ..service.client import DictionaryClient
    from .panel_forms import AddForm, CheckForm, EditForm, ProblemsView, SyncForm
    from .panel_rows import EntryRows

__all__ = ["FIELDS", "ToolHandlers"]

FIELDS = ("from_lang", "from_text", "to_lang", "to_text")
"""The keyword names of an entry's terms, in ``Entry.terms`` order."""


class ToolHandlers:
    """Edit, add, sync, problems and check, for ``DictPanel`` (which provides the state, the
    widgets and ``_begin`` / ``_arm`` / ``_record`` / ``_after_change``)."""

    if TYPE_CHECKING:  # what DictPanel provides
        _lock: threading.RLock
        _state: str
        _settings: OperationSettings
        _client: DictionaryClient
        _cancel: threading.Event
        _warnings: list[str]
        _listed: bool
        _linted: bool
        _follow: tuple[Armed, str] | None
        _uploads: tempfile.TemporaryDirectory[str] | None
        _index: Any
        _sink: Any
        profile: str
        undo: Undo | None
        rows: EntryRows
        edit_form: EditForm
        add_form: AddForm
        sync_form: SyncForm
        problems: ProblemsView
        check_form: CheckForm

        @property
        def host(self) -> str: ...
        @property
        def listing_supported(self) -> bool: ...
        @property
        def _snapshots_on(self) -> bool: ...
        def _set_status(self, message: str, kind: str) -> None: ...
        def _arm(self, armed: Armed, message: str) -> bool: ...
        def _begin(self, kind: str, what: str, work: Any, *args: Any, total: int = 0) -> None: ...
        def _record(self, result: Any) -> None: ...
        def _after_change(self, note: str | None) -> None: ...
        def _cancelled_note(self) -> str | None: ...
        def _refresh(self) -> None: ...
        def _selection_changed(self) -> None: ...
        def _guard(self, handler: Any) -> Any: ...

    # -- handlers (main thread) ----------------------------------------------------------------

    def _on_edit(self, _button: widgets.Button) -> None:
        with self._lock:
            if self._state != "idle" or not self.listing_supported:
                return
            by_id = {e.id: e for e in self._index.entries}
            chosen = [by_id[i] for i in self.rows.selected if i in by_id]
        if len(chosen) != 1:
            self._set_status("Tick exactly one entry to edit it.", "error")
            return
        self.edit_form.load(chosen[0], view.edit_title_html(chosen[0]))
        show(self.edit_form, True)
        self._set_status("Change the terms, then press Review change\u2026", "info")
        self._refresh()

    def _on_close_edit(self, _button: widgets.Button) -> None:
        if self._state == "idle":
            show(self.edit_form, False)

    def _on_review_edit(self, _button: widgets.Button) -> None:
        new, problems = self.edit_form.proposal()
        old = self.edit_form.entry
        if new is None or old is None:
            return
        if problems:
            self._set_status(view.problems_text(problems), "error")
            return
        if new.terms == old.terms:
            self._set_status("Nothing changed: the terms are as listed.", "info")
            return
        message = view.confirm_update_html(old, new, self.profile, self.host, self._snapshots_on)
        if self._arm(Armed("update", (old.id,), old=old, new=new), message):
            self._set_status("Check the change, then press Confirm or Cancel.", "info")

    def _on_add(self, _button: widgets.Button) -> None:
        new, problems = self.add_form.proposal()
        if problems:
            self._set_status(view.problems_text(problems), "error")
            return
        with self._lock:
            same = [e for e in self._index.entries if e.terms == new.terms]
        message = view.confirm_add_html(new, self.profile, self.host, same)
        if self._arm(Armed("add", new=new, duplicate=bool(same)), message):
            self._set_status("Check the entry, then press Confirm or Cancel.", "info")

    def _on_sync_plan(self, _button: widgets.Button) -> None:
        with self._lock:
            if self._state != "idle":
                return
            form = self.sync_form
            upload = form.uploaded()
            if upload is None:
                self._set_status("Choose a glossary file first (csv, tsv, xlsx or tbx).", "error")
                return
            name, content = upload
            if self._uploads is None:
                self._uploads = tempfile.TemporaryDirectory(prefix="dict-magics-panel-")
            path = Path(self._uploads.name) / name
            path.write_bytes(content)
            request = SyncRequest(
                str(path),
                name,
                form.pair_text.value.strip() or None,
                form.delete_missing.value,
                form.skip_invalid.value,
                0,
            )
            form.plan_html.value = ""
            self._begin(
                "plan",
                f"Planning the sync of {name} with {self.host}\u2026",
                self._work_plan,
                request,
            )

    def _on_find_problems(self, _button: widgets.Button) -> None:
        with self._lock:
            if self._state != "idle" or not self._listed:
                self._set_status("Problems need a listing of the entries.", "error")
                return
            what = f"Looking for problems in {count(len(self._index), 'entry', 'entries')}"
            self._begin("lint", what + "\u2026", self._work_lint)

    def _work_lint(self) -> None:
        self._linted = True
        self._show_problems(announce=True)

    def _show_problems(self, announce: bool = False) -> None:
        """Lint the entries listed (offline) and show the findings with their buttons."""
        report = EntryList(self._index.entries, self.host).lint()
        self.problems.report_html.value = view.any_result_html(report)
        buttons: dict[str, widgets.Button] = {}
        for kind, ids in view.problem_groups(report):
            button = widgets.Button(
                description=f"Select {kind} ({len(ids):,})",
                tooltip=view.problem_tooltip(kind),
                disabled=self._state != "idle",
            )
            button.on_click(self._guard(functools.partial(self._on_select_problem, kind, ids)))
            buttons[kind] = button
        self.problems.set_buttons(buttons)
        if announce:
            found = count(len(report.findings), "problem", "problems")
            self._set_status(f"Found {found} in {count(report.total, 'entry', 'entries')}.", "info")

    def _on_select_problem(self, kind: str, ids: tuple[str, ...], _button: widgets.Button) -> None:
        with self._lock:
            if self._state != "idle":
                return
            self.rows.clear()
            self.rows.select(ids)
        self._selection_changed()
        self._set_status(
            f"Selected {count(len(ids), 'entry', 'entries')} ({kind}): Delete selected, or Edit "
            "selected\u2026 for one.",
            "info",
        )

    def _on_check(self, _button: widgets.Button) -> None:
        text = self.check_form.text.value
        with self._lock:
            if self._state != "idle":
                return
            if not text.strip():
                self._set_status("Paste a text to check first.", "error")
                return
            if not self._listed:
                self._set_status("The check needs a listing of the entries.", "error")
                return
            self._begin(
                "check", "Checking the text against the entries\u2026", self._work_check, text
            )

    def _work_check(self, text: str) -> None:
        report = EntryList(self._index.entries, self.host).check(text)
        self.check_form.report_html.value = view.any_result_html(report)
        self._set_status("", "info")

    # -- background work (worker thread: traits only) -----------------------------------------

    def _work_update(self, old: Entry, new: Entry) -> None:
        result = self._send_update(old, new)
        self._record(result)
        if result.ok:
            show(self.edit_form, False)
            if isinstance(result, UpdateResult) and result.snapshot:
                self.undo = Undo(result.snapshot, f"the old terms of entry {old.id}")
        self._after_change(None)

    def _work_add(self, new: Entry, duplicate: bool) -> None:
        result = self._send_add(new, duplicate)
        self._record(result)
        if result.ok:
            self.add_form.clear()
        self._after_change(None)

    def _work_plan(self, request: SyncRequest) -> None:
        plan = plan_sync(
            self._settings,
            request.path,
            pair=request.pair,
            delete_missing=request.delete_missing,
            client=self._client,
        )
        # The name the user knows, not our temp copy; the panel's words for what it names.
        plan = replace(plan, path=request.name, names=PANEL.names)
        shown = view.any_result_html(plan)
        changes = len(plan.adds) + len(plan.updates) + len(plan.deletes)
        self.sync_form.plan_html.value = shown
        if plan.invalid and not request.skip_invalid:
            self._set_status(
                f"{request.name} has invalid rows (listed in the plan): fix them, or tick "
                "\u201cskip invalid rows\u201d and plan again. Nothing was sent.",
                "error",
            )
        elif changes == 0:
            self._set_status(f"Nothing to change: the dictionary matches {request.name}.", "info")
        else:
            ready = replace(request, changes=changes)
            message = view.confirm_sync_html(shown, self.profile, self.host, self._snapshots_on)
            self.sync_form.plan_html.value = ""  # shown in the confirmation instead
            self._follow = (Armed("sync", sync=ready), message)
            self._set_status("Check the plan, then press Confirm or Cancel.", "info")

    def _work_sync(self, request: SyncRequest) -> None:
        result = sync(
            self._settings,
            request.path,
            apply=True,
            delete_missing=request.delete_missing,
            pair=request.pair,
            skip_invalid=request.skip_invalid,
            yes=True,  # the panel's confirmation listed what goes
            prompter=ScriptedPrompter(reason="the panel asked already"),
            progress=self._sink,
            cancel=self._cancel,
            client=self._client,
            warn=self._warnings.append,
        )
        if isinstance(result, SyncResult):
            result = replace(result, plan=replace(result.plan, path=request.name))
        self._record(result)
        if isinstance(result, SyncResult) and result.snapshot:
            self.undo = Undo(result.snapshot, f"the sync of {request.name}")
        self.sync_form.plan_html.value = ""
        self._after_change(self._cancelled_note())

    def _send_update(self, old: Entry, new: Entry) -> UpdateResult | NoChange:
        """PUT ``new``'s terms into entry ``old.id`` (the operation keeps the entry as the
        service holds it in a snapshot first); only the terms that changed are given."""
        changed = {
            name: after
            for name, before, after in zip(FIELDS, old.terms, new.terms, strict=True)
            if before != after
        }
        result = update(
            self._settings, old.id, client=self._client, warn=self._warnings.append, **changed
        )
        # Not a dry run; NoChange: the entry already read so (changed since the panel's listing).
        assert isinstance(result, UpdateResult | NoChange)
        return result

    def _send_add(self, new: Entry, duplicate: bool) -> AddResult | NoChange:
        """Add ``new`` (the service picks the id; a listing after names it). A copy of an entry
        is added only when the confirmation named the entry it copies (``duplicate``): one
        that appeared since the panel's listing makes a ``NoChange``, nothing sent."""
        result = add(
            self._settings,
            *new.terms,
            duplicate=duplicate,
            client=self._client,
            warn=self._warnings.append,
        )
        assert isinstance(result, AddResult | NoChange)  # not a dry run
        return result
