"""The curation panel (``%dict_panel``): a click only arms a confirmation; Confirm runs the
operation on a worker thread that only sets widget traits. ipywidgets hides callback
exceptions, so every handler shows its own."""

from __future__ import annotations

import contextlib
import functools
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import ipywidgets as widgets

from ..errors import DictMagicsError, InvalidIdError, ListingUnsupportedError, ServiceError
from ..models import DryRunResult, Entry, EntryList
from ..models.entry import check_id
from ..models.glossary import SyncResult
from ..models.impact import after_change, impact, read_corpus
from ..models.secret import mask
from ..models.terms import entry_problems
from ..operations import history
from ..operations import purge as purging
from ..operations.add import add
from ..operations.context import ID_SEPARATORS, OperationSettings
from ..operations.delete import delete, interruption
from ..operations.listing import list_entries
from ..operations.prompts import ScriptedPrompter
from ..operations.restore import restore
from ..operations.snapshots import snapshot_dir
from ..operations.sync import plan_sync, sync
from ..operations.update import update
from ..settings import WORKERS
from . import panel_html as view
from .commands import PANEL, limit_unit
from .panel_forms import AddForm, CheckForm, EditForm, ProblemsView, SyncForm, text_input
from .panel_table import ALL_PAIRS, COLUMNS, EntryIndex, EntryRows

if TYPE_CHECKING:
    from ..models import LintReport, PurgePlan, SnapshotInfo
    from ..service.client import DictionaryClient

__all__ = ["PAGE", "Armed", "DictPanel", "Undo", "parse_ids"]

PAGE = 50  # rows of the table per page
FIXED = {"id": view.ID_WIDTH, "languages": view.LANG_WIDTH}  # the other columns share the rest
ALREADY_ASKED = "the panel asked already"
"""Why an operation the panel runs may not ask a question of its own: Confirm was it."""


def parse_ids(text: str) -> list[str]:
    """Split what the user typed on spaces and commas, keeping the first of any duplicates."""
    return list(dict.fromkeys(part for part in ID_SEPARATORS.split(text) if part))


def show(widget: widgets.Widget, visible: bool) -> None:
    """Show or hide ``widget`` (traitlets sends a message only when it changes)."""
    widget.layout.display = "" if visible else "none"


def descendants(box: widgets.Box) -> list[widgets.Widget]:
    found: list[widgets.Widget] = []
    for child in box.children:
        found += [*descendants(child), child] if isinstance(child, widgets.Box) else [child]
    return found


@dataclass(frozen=True)
class Armed:
    """What Confirm starts: ``work`` on the worker thread, saying ``what``, after ``message``
    (``check``: what to check in it); a purge only once its ``plan`` accepts the typed word."""

    kind: Literal["delete", "purge", "restore", "update", "add", "sync"]
    message: str
    what: str
    work: Callable[..., None]
    check: str = "the change"
    total: int = 0
    plan: PurgePlan | None = None


@dataclass(frozen=True)
class Undo:
    """What the Undo button puts back: the snapshot the last change kept, and what it took."""

    snapshot: str
    what: str


class DictPanel(widgets.VBox):
    """Curate a dictionary: ``state`` is ``idle``, ``armed`` or ``running``; ``wait()`` blocks
    until background work ends. The panel owns ``client`` and closes it in ``close()``."""

    def __init__(
        self,
        client: DictionaryClient,
        *,
        profile: str,
        workers: int = WORKERS,
        snapshots: bool = True,
        listing_max_age: float | None = None,
        corpus: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> None:
        self._settings = OperationSettings(
            profile=profile, workers=workers, snapshots=snapshots, listing_max_age=listing_max_age
        )
        self._corpus = corpus  # lines a confirmation shows the change's impact on
        self._keeps = snapshots  # a change keeps a snapshot first (so Undo can put it back)
        self._client, self.host = client, client.host
        self.profile, self.workers = profile, workers
        self.state: Literal["idle", "armed", "running"] = "idle"
        self.running: str | None = None
        self.undo: Undo | None = None
        self.history: deque[Any] = deque(maxlen=10)  # the latest results, newest last
        self.listing_supported = True  # False once the service says it has none
        self.page = 0  # counted from 0
        self.sorted_by: tuple[str | None, bool] = (None, False)  # column (None: as listed), desc.
        # Guards the state, the listing and their controls; re-entrant: observers take it too.
        self._lock = threading.RLock()
        self._armed: Armed | None = None
        self._follow: Armed | None = None  # armed once the background work ends
        self._worker: threading.Thread | None = None
        self._cancel = threading.Event()
        self._warnings: list[str] = []
        self._index, self._listed, self._matches = EntryIndex([]), False, list[int]()
        self._snapshots: dict[str, SnapshotInfo] = {}
        self._quiet = False  # the pair filter's options are being replaced
        self._linted = False  # Problems follows every listing once it was asked for
        self._uploads: tempfile.TemporaryDirectory[str] | None = None
        self._history_html: list[str] = []  # the recent results, newest first
        button = self._button

        self.header = widgets.HTML(
            '<div class="dict-magics-header"><b>Dictionary entries</b> &mdash; profile <code>'
            f"{view.escape(profile)}</code>, host <code>{view.escape(client.host)}</code>, "
            f"access key <code>{view.escape(mask(client.access_key))}</code></div>"
        )
        self.refresh_button = button("Refresh", "List the entries again", self._list)
        self.search_text = text_input("Search", "search either term", "24em")
        self.pair_dropdown = widgets.Dropdown(options=[("all", ALL_PAIRS)], description="Languages")
        self.count_html = widgets.HTML()
        self.select_all_button = button("Select all matches", "Tick them all", self._on_select_all)
        self.clear_button = button("Clear selection", "Untick every entry", self._on_clear)
        self.sort_buttons = {}
        for column in COLUMNS:
            width, flex = FIXED.get(column, "auto"), "0 0 auto" if column in FIXED else "1 1 0"
            layout = widgets.Layout(margin="0 0.3em 0 0", width=width, flex=flex)
            tip = f"Sort by {column} (again: the other way)"
            on_click = functools.partial(self._on_sort, column)
            self.sort_buttons[column] = button(column, tip, on_click, idle=False, layout=layout)
        style = widgets.HTML(view.TABLE_CSS, layout=widgets.Layout(display="none"))
        table_header = widgets.HBox([*self.sort_buttons.values(), style])
        table_header.add_class("dict-magics-table-header")
        rows_layout = widgets.Layout(max_height="24em", overflow="auto")
        self.rows = EntryRows(PAGE, self._selection_changed, self._lock, layout=rows_layout)
        self.rows.add_class("dict-magics-entries")
        turn = self.show_page
        self.prev_button = button("\u25c0 Previous", "", lambda _: turn(self.page - 1), idle=False)
        self.next_button = button("Next \u25b6", "", lambda _: turn(self.page + 1), idle=False)
        self.page_html = widgets.HTML()
        self.pager = widgets.HBox([self.prev_button, self.page_html, self.next_button])
        filters = widgets.HBox([self.search_text, self.pair_dropdown])
        counts = widgets.HBox([self.count_html, self.select_all_button, self.clear_button])
        self.search_box = widgets.VBox([filters, counts, table_header, self.rows, self.pager])
        self.ids_text = text_input("Entry ids", "entry ids, separated by spaces or commas", "28em")
        self.delete_button = button("Delete selected (0)", "Asks first", self._on_delete)
        self.edit_button = button("Edit selected\u2026", "One ticked entry", self._on_edit)
        danger: dict[str, Any] = {"button_style": "danger"}
        every = "Delete every entry (asks for a typed word)"
        self.delete_all_button = button("Delete all\u2026", every, self._on_delete_all, **danger)
        self.undo_button = button("Undo", "Put back what the last change took", self._on_undo)
        self.edit_form, self.add_form, self.sync_form = EditForm(), AddForm(), SyncForm()
        self.problems, self.check_form = ProblemsView(), CheckForm()
        for clicked, handler in [
            (self.edit_form.review_button, self._on_review_edit),
            (self.edit_form.close_button, lambda _: show(self.edit_form, False)),
            (self.add_form.add_button, self._on_add),
            (self.sync_form.plan_button, self._on_sync_plan),
            (self.problems.find_button, self._on_find_problems),
            (self.check_form.check_button, self._on_check),
        ]:
            clicked.on_click(self._guard(handler, idle=True))
        tools = [self.add_form, self.sync_form, self.problems, self.check_form]
        titles = ("Add an entry", "Sync a glossary file", "Problems", "Check a text")
        self.tools = widgets.Accordion(children=tools, titles=titles, selected_index=None)
        self.snapshot_dropdown = widgets.Dropdown(
            options=[("no snapshots yet", "")], description="Snapshot", layout={"width": "30em"}
        )
        self.restore_button = button("Restore\u2026", "Asks first", self._on_restore)
        self.confirm_message = widgets.HTML()
        self.purge_word_text = widgets.Text(layout=widgets.Layout(width="14em"))
        self.confirm_button = button("Confirm", "", self._on_confirm, False, **danger)
        self.cancel_button = button("Cancel", "", self._on_cancel, idle=False)
        answer = widgets.HBox([self.purge_word_text, self.confirm_button, self.cancel_button])
        red = widgets.Layout(border="1px solid #cf222e", padding="0.3em 0.6em")
        self.confirm_box = widgets.VBox([self.confirm_message, answer], layout=red)
        self.progress = ProgressBar(value=0, min=0, max=1, description="0 / 0")
        self.status, self.result, self.history_view = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.result.add_class("dict-magics-latest")  # the newest result
        self.search_text.observe(self._guard(self._on_search), names="value")
        self.pair_dropdown.observe(self._guard(self._on_search), names="value")
        self.purge_word_text.observe(self._guard(lambda _change: self._refresh()), names="value")
        actions = [self.delete_button, self.edit_button, self.delete_all_button, self.undo_button]
        top = widgets.HBox([self.header, self.refresh_button])
        restoring = widgets.HBox([self.snapshot_dropdown, self.restore_button])
        parts = [top, self.search_box, self.ids_text, widgets.HBox(actions), self.edit_form]
        parts += [self.tools, restoring, self.confirm_box, self.progress, self.status]
        super().__init__([*parts, self.result, self.history_view], **kwargs)
        for hidden in (self.progress, self.ids_text, self.edit_form):
            show(hidden, False)
        with self._lock:
            self._list()

    def _button(
        self, text: str, tip: str, on_click: Callable[..., None], idle: bool = True, **more: Any
    ) -> Any:
        """A button whose clicks show their own errors; with ``idle``, only while idle."""
        made = widgets.Button(description=text, tooltip=tip, **more)
        made.on_click(self._guard(on_click, idle))
        return made

    @classmethod
    def from_profile(
        cls, profile: str | None = None, *, corpus: Sequence[str] | None = None, **options: Any
    ) -> DictPanel:
        """The panel of a stored profile (or of the ``DICT_MAGICS_*`` variables); ``options``:
        the panel's (``workers``, ``snapshots``, ``listing_max_age``), the rest go to
        ``DictionaryClient``. Raises ``CredentialsError`` if nothing is stored."""
        from ..operations.context import make_client

        mine = {k: options.pop(k) for k in ("snapshots", "listing_max_age") if k in options}
        workers = options.pop("workers", WORKERS)
        client, creds = make_client(profile, **options)
        try:
            return cls(client, profile=creds.profile, workers=workers, corpus=corpus, **mine)
        except BaseException:
            client.close()
            raise

    @classmethod
    def from_settings(cls, settings: OperationSettings, corpus: str | None = None) -> DictPanel:
        """The panel for ``settings`` (what ``%dict_panel`` shows); ``corpus``: a file of
        sample texts, read before anything is sent."""
        names = ["base_url", "timeout", "max_retries", "auth", "workers", "snapshots"]
        options = {name: getattr(settings, name) for name in [*names, "listing_max_age"]}
        lines = read_corpus(corpus) if corpus else None
        return cls.from_profile(settings.profile, corpus=lines, **options)

    # -- public ------------------------------------------------------------------------------

    @property
    def armed(self) -> str | None:
        """What Confirm will do (``delete``, ``purge``, ``restore``, ...), when armed."""
        return self._armed.kind if self._armed else None

    def __repr__(self) -> str:
        # What a page that cannot run widgets (GitHub, nbviewer, a terminal) shows.
        return (
            f"DictPanel(profile={self.profile!r}, host={self.host!r}, "
            f"access_key={mask(self._client.access_key)!r}, state={self.state!r}): "
            "the curation panel; it shows in a running Jupyter front end (JupyterLab 4, "
            "Notebook 7, VS Code)"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        """The widget, with the whole ``repr`` as its text (ipywidgets cuts it at 110
        characters, before the words that say where the panel shows)."""
        data = super()._repr_mimebundle_(**kwargs)
        if data is not None:
            data["text/plain"] = repr(self)
        return data

    @property
    def entries(self) -> list[Entry]:
        """The entries as last listed (empty when the service has no listing)."""
        return self._index.entries

    @property
    def matches(self) -> list[Entry]:
        """The entries the search and language filter match, in the table's order."""
        return [self._index.entries[i] for i in self._matches]

    @property
    def shown(self) -> list[Entry]:
        """The entries of the page shown, in order."""
        return [entry for entry, _box in self.rows.shown]

    @property
    def pages(self) -> int:
        """How many pages the matches fill (at least 1)."""
        return max(1, -(-len(self._matches) // PAGE))

    @property
    def selected(self) -> list[str]:
        """The ticked ids, in the order they were ticked."""
        return list(self.rows.selected)

    def sort(self, column: str | None, descending: bool = False) -> None:
        """Sort the table by ``column`` (one of ``COLUMNS``; ``None``: as listed)."""
        if column is not None and column not in COLUMNS:
            raise ValueError(f"column must be one of {COLUMNS} or None, not {column!r}")
        with self._lock:
            self.sorted_by, self.page = (column, descending), 0
            self._redraw()

    def show_page(self, page: int) -> None:
        """Show page ``page`` (counted from 0; clamped to the pages there are)."""
        with self._lock:
            self.page = page
            self._redraw()

    def select(self, ids: Sequence[str]) -> None:
        """Tick ``ids`` (as clicking their rows would)."""
        self.rows.select([*self.rows.selected, *map(str, ids)])
        self._selection_changed()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the background work (if any) is done; ``False`` if it still runs."""
        worker = getattr(self, "_worker", None)  # None also if __init__ failed early
        if worker is None or worker is threading.current_thread():  # it cannot wait for itself
            return worker is None
        worker.join(timeout)
        return not worker.is_alive()

    def close(self) -> None:
        """Wait for running work; close the client and every widget; delete the uploads."""
        self.wait()
        uploads = getattr(self, "_uploads", None)
        if uploads is not None:
            uploads.cleanup()
        if getattr(self, "_client", None) is not None:
            self._client.close()
        for child in descendants(self):
            child.close()
        super().close()

    # -- handlers (main thread) ----------------------------------------------------------------

    def _guard(self, handler: Callable[..., Any], idle: bool = False) -> Callable[..., None]:
        """``handler``, its exceptions shown in the status line (the panel idle again unless work
        runs); with ``idle``, a click while a confirmation or work shows does nothing."""

        @functools.wraps(handler)
        def guarded(*args: Any) -> None:
            try:
                with self._lock if idle else contextlib.nullcontext():
                    if not idle or self.state == "idle":
                        handler(*args)
            except Exception as exc:
                worker = self._worker
                with self._lock:
                    alive = worker is not None and worker.is_alive()
                    if self.state != "running" or not alive or worker is threading.current_thread():
                        self.state, self._armed, self.running = "idle", None, None
                self._set_status(f"Unexpected error: {type(exc).__name__}: {exc}", "error")
                self._refresh()

        return guarded

    def _on_search(self, _change: dict[str, Any]) -> None:
        if not self._quiet:
            self.page = 0
            self._redraw()

    def _on_sort(self, column: str, _button: widgets.Button) -> None:
        with self._lock:
            sorted_by, descending = self.sorted_by
            self.sort(column, not descending if column == sorted_by else False)

    def _selection_changed(self) -> None:
        with self._lock:
            self._redraw_counts()
            self._refresh()

    def _on_select_all(self, _button: widgets.Button) -> None:
        self.select([self._index.entries[i].id for i in self._matches])

    def _on_clear(self, _button: widgets.Button) -> None:
        self.rows.select(())
        self._selection_changed()

    def _ticked_entries(self) -> list[Entry]:
        with self._lock:
            by_id = {e.id: e for e in self._index.entries}
            return [by_id[i] for i in self.rows.selected if i in by_id]

    def _on_delete(self, _button: widgets.Button) -> None:
        problems: list[str] = []
        if self.listing_supported:
            going = self._ticked_entries()
            ids, missing = [e.id for e in going], "Tick one or more entries first."
        else:
            going, ids = [], parse_ids(self.ids_text.value)
            missing = "Type one or more entry ids first."
            for entry_id in ids:
                try:
                    check_id(entry_id)
                except InvalidIdError as exc:
                    problems.append(PANEL.message(exc))
        if problems or not ids:
            said = "Nothing armed: " + " ".join(problems) if problems else missing
            self._set_status(said, "error")
            return
        message = view.confirm_delete_html(going, ids, self.profile, self.host, self._keeps)
        message += self._impact_html(deletes=going) if going else ""
        what = f"Deleting {view.entries(len(ids))} on {self.host}\u2026"
        work = functools.partial(self._work_delete, tuple(ids))
        self._arm(Armed("delete", message, what, work, "what will be deleted", total=len(ids)))

    def _impact_html(self, **change: list[Entry]) -> str:
        """What a change to the listing shown does to the corpus, when one is configured."""
        if self._corpus is None:
            return ""
        with self._lock:
            before = list(self._index.entries)
        after, unit = after_change(before, **change), limit_unit(self._settings)
        return view.impact_html(impact(before, after, self._corpus, unit=unit))

    def _on_delete_all(self, _button: widgets.Button) -> None:
        # The plan (count, copy, word) comes from the listing shown; once confirmed the
        # operation lists again and keeps the snapshot itself.
        listed = self._index.entries if self._listed else None
        folder = str(snapshot_dir()) if self._keeps else None
        plan = purging.plan(self.profile, self.host, listed, folder)
        message = view.confirm_purge_html(plan, PANEL.names)
        what = f"Deleting every entry on {self.host}\u2026"
        self._arm(Armed("purge", message, what, self._work_purge, plan=plan))

    def _on_restore(self, _button: widgets.Button) -> None:
        info = self._snapshots.get(self.snapshot_dropdown.value)
        if info is None:
            self._set_status("Choose a snapshot first.", "error")
            return
        message = view.confirm_restore_html(info, self.host)
        what = f"Restoring {view.snapshot_label(info)} to {self.host}\u2026"
        work = functools.partial(self._work_restore, str(info.path))
        self._arm(Armed("restore", message, what, work, "the snapshot", total=info.count))

    def _on_undo(self, _button: widgets.Button) -> None:
        if self.undo is not None:
            work = functools.partial(self._work_restore, self.undo.snapshot)
            self._begin("undo", f"Putting back {self.undo.what} on {self.host}\u2026", work)

    def _on_edit(self, _button: widgets.Button) -> None:
        chosen = self._ticked_entries()
        if not self.listing_supported:
            return
        if len(chosen) != 1:
            self._set_status("Tick exactly one entry to edit it.", "error")
            return
        self.edit_form.load(chosen[0])
        show(self.edit_form, True)
        self._set_status("Change the terms, then press Review change\u2026", "info")
        self._refresh()

    def _refused(self, entry: Entry) -> bool:
        """Say why the service would refuse ``entry``'s terms, if it would."""
        problems = entry_problems(*entry.terms)
        if problems:
            said = "; ".join(view.clean(p.message) for p in problems)
            self._set_status(f"Not sent: {said}.", "error")
        return bool(problems)

    def _on_review_edit(self, _button: widgets.Button) -> None:
        old, new = self.edit_form.entry, self.edit_form.typed()
        if old is None or new is None or self._refused(new):
            return
        if new.terms == old.terms:
            self._set_status("Nothing changed: the terms are as listed.", "info")
            return
        message = view.confirm_update_html(old, new, self.profile, self.host, self._keeps)
        message += self._impact_html(updates=[new])
        what = f"Changing entry {old.id} on {self.host}\u2026"
        work = functools.partial(self._work_update, old, new)
        self._arm(Armed("update", message, what, work))

    def _on_add(self, _button: widgets.Button) -> None:
        new = self.add_form.typed()
        if self._refused(new):
            return
        with self._lock:
            same = [e for e in self._index.entries if e.terms == new.terms]
        message = view.confirm_add_html(new, self.profile, self.host, same)
        message += self._impact_html(adds=[new])
        # A copy of an entry is added only when the confirmation named the entry it copies.
        work = functools.partial(self._work_add, new, bool(same))
        self._arm(Armed("add", message, f"Adding an entry on {self.host}\u2026", work, "the entry"))

    def _on_sync_plan(self, _button: widgets.Button) -> None:
        form, upload = self.sync_form, self.sync_form.uploaded()
        if upload is None:
            self._set_status("Choose a glossary file first (csv, tsv, xlsx or tbx).", "error")
            return
        if self._uploads is None:
            self._uploads = tempfile.TemporaryDirectory(prefix="dict-magics-panel-")
        name, content = upload
        path = Path(self._uploads.name) / name
        path.write_bytes(content)
        options = {
            "pair": form.pair_text.value.strip() or None,
            "delete_missing": form.delete_missing.value,
            "skip_invalid": form.skip_invalid.value,
        }
        form.plan_html.value = ""
        work = functools.partial(self._work_plan, path, name, options)
        self._begin("plan", f"Planning the sync of {name} with {self.host}\u2026", work)

    def _on_find_problems(self, _button: widgets.Button) -> None:
        if not self._listed:
            self._set_status("Problems need a listing of the entries.", "error")
            return
        what = f"Looking for problems in {view.entries(len(self._index))}\u2026"
        self._begin("lint", what, self._work_lint)

    def _on_select_problem(self, kind: str, ids: Sequence[str], _button: widgets.Button) -> None:
        self.rows.select(ids)
        self._selection_changed()
        selected = f"Selected {view.entries(len(ids))} ({kind})"
        self._set_status(f"{selected}: Delete selected, or Edit selected\u2026 for one.", "info")

    def _on_check(self, _button: widgets.Button) -> None:
        text = self.check_form.text.value
        if not text.strip():
            self._set_status("Paste a text to check first.", "error")
        elif not self._listed:
            self._set_status("The check needs a listing of the entries.", "error")
        else:
            work = functools.partial(self._work_check, text)
            self._begin("check", "Checking the text against the entries\u2026", work)

    def _on_cancel(self, _button: widgets.Button) -> None:
        with self._lock:
            if self.state == "running":
                self._cancel.set()
                said = "Cancelling: nothing new is sent; requests already sent are waited for."
                self._set_status(said, "busy")
            elif self.state == "armed":
                self.state, self._armed = "idle", None
                self._set_status("Cancelled: nothing was sent.", "info")
                self._refresh()

    def _on_confirm(self, _button: widgets.Button) -> None:
        with self._lock:
            armed = self._armed
            if self.state != "armed" or armed is None:
                return  # a second click, or nothing armed: send nothing
            work = armed.work
            if armed.plan is not None:  # the purge goes only on its word, typed
                word = self.purge_word_text.value
                if not armed.plan.accepts(word):
                    said = f"Type {armed.plan.word} (or the host) exactly to enable Confirm."
                    self._set_status(said, "error")
                    return
                work = functools.partial(work, word)
            self._begin(armed.kind, armed.what, work, total=armed.total)

    # -- background work ------------------------------------------------------------------------

    def _begin(self, kind: str, what: str, work: Callable[[], None], *, total: int = 0) -> None:
        """Start ``work`` on the worker thread; called with the lock held."""
        self.state, self._armed, self.running = "running", None, kind
        self._cancel = threading.Event()
        self._warnings = []
        self._worker = threading.Thread(
            target=self._guard(self._work), args=(work,), name="dict-panel", daemon=True
        )
        self.confirm_message.value = (
            f'<div class="dict-magics-running"><b>{view.escape(what)}</b> &mdash; Cancel stops '
            "what has not been sent yet; requests already sent are waited for.</div>"
        )
        self._set_status(what, "busy")
        self.progress.start(total if total > 1 else 0, what)
        self._refresh()
        self._worker.start()

    def _work(self, work: Callable[[], None]) -> None:
        """Run ``work``, then go back to idle (or arm what it left to confirm)."""
        try:
            work()
        except (DictMagicsError, ServiceError) as exc:
            self._set_status(PANEL.message(exc), "error")
        except Exception as exc:
            message = f"Unexpected error: {type(exc).__name__}: {exc}"
            if self.running != "list":
                message += " (the request may or may not have reached the service)"
            self._set_status(message, "error")
        finally:
            with self._lock:
                self.state, self._armed, self.running = "idle", None, None
                follow, self._follow = self._follow, None
                if follow is not None and not self._cancel.is_set():
                    self._arm(follow)
                self._refresh()

    # The operations, called on the worker thread (which only sets traits).

    def _operation_args(self, batch: bool = False) -> dict[str, Any]:
        """The panel's client and warnings; for a batch also the progress bar and Cancel."""
        args = {"client": self._client, "warn": self._warnings.append}
        return {**args, "progress": self.progress, "cancel": self._cancel} if batch else args

    def _list(self, _button: widgets.Button | None = None) -> None:
        self._begin("list", f"Listing the entries of {self.host}\u2026", self._work_refresh)

    def _work_refresh(self) -> None:
        if self._reload():
            found = view.entries(len(self._index))
            self._set_status(f"Listed {found} at {time.strftime('%X')}.", "info")

    def _work_delete(self, ids: tuple[str, ...]) -> None:
        result = delete(self._settings, ids, **self._operation_args(batch=True))
        assert not isinstance(result, DryRunResult)  # the panel asks for no dry run
        if result.ok and not self.listing_supported:
            self.ids_text.value = ""
        self._changed(result, view.entries(result.gone), interruption(result))

    def _work_purge(self, word: str) -> None:
        result = purging.purge(self._settings, ScriptedPrompter([word]), **self._operation_args())
        assert not isinstance(result, DryRunResult)  # the panel asks for no dry run
        self._changed(result, "every entry")

    def _work_restore(self, source: str) -> None:
        """Put back ``source``, a snapshot of this profile and host (so no second question)."""
        asked = ScriptedPrompter(reason=ALREADY_ASKED)
        args = self._operation_args(batch=True)
        result = restore(self._settings, source, yes=True, prompter=asked, **args)
        if result.ok and self.undo is not None and Path(self.undo.snapshot) == Path(source):
            self.undo = None  # what Undo would put back is back
        self._changed(result, note=self._cancelled())

    def _work_update(self, old: Entry, new: Entry) -> None:
        """PUT the terms that changed (the languages stay)."""
        texts = ("from_text", "to_text")
        terms = {k: getattr(new, k) for k in texts if getattr(new, k) != getattr(old, k)}
        result = update(self._settings, old.id, **terms, **self._operation_args())
        if result.ok:
            show(self.edit_form, False)
        self._changed(result, f"the old terms of entry {old.id}" if result.ok else None)

    def _work_add(self, new: Entry, duplicate: bool) -> None:
        result = add(self._settings, *new.terms, duplicate=duplicate, **self._operation_args())
        if result.ok:
            self.add_form.from_text.value = self.add_form.to_text.value = ""
        self._changed(result)

    def _work_plan(self, path: Path, name: str, options: dict[str, Any]) -> None:
        """Plan the sync of ``path`` (uploaded as ``name``); arm its confirmation if it changes
        anything and no invalid row stops it."""
        planned = {k: options[k] for k in ("pair", "delete_missing")}
        plan = plan_sync(self._settings, path, client=self._client, **planned)
        plan = replace(plan, path=name, names=PANEL.names)  # the name the user knows, not our copy
        shown = plan._repr_html_()
        self.sync_form.plan_html.value = shown
        if plan.invalid and not options["skip_invalid"]:
            fix = "fix them, or tick \u201cskip invalid rows\u201d and plan again"
            said = f"{name} has invalid rows (listed in the plan): {fix}. Nothing was sent."
            self._set_status(said, "error")
        elif not (plan.adds or plan.updates or plan.deletes):
            self._set_status(f"Nothing to change: the dictionary matches {name}.", "info")
        else:
            self.sync_form.plan_html.value = ""  # shown in the confirmation instead
            if self._corpus is not None:
                unit = limit_unit(self._settings)
                shown += view.impact_html(plan.impact(self._corpus, unit=unit))
            message = view.confirm_sync_html(shown, self.profile, self.host, self._keeps)
            what = f"Applying the sync of {name} to {self.host}\u2026"
            work = functools.partial(self._work_sync, path, name, options)
            total = len(plan.adds) + len(plan.updates) + len(plan.deletes)
            self._follow = Armed("sync", message, what, work, "the plan", total=total)

    def _work_sync(self, path: Path, name: str, options: dict[str, Any]) -> None:
        args = {**options, **self._operation_args(batch=True)}
        asked = ScriptedPrompter(reason=ALREADY_ASKED)  # the confirmation listed what goes
        result = sync(self._settings, path, apply=True, yes=True, prompter=asked, **args)
        if isinstance(result, SyncResult):
            result = replace(result, plan=replace(result.plan, path=name))
        self.sync_form.plan_html.value = ""
        self._changed(result, f"the sync of {name}", self._cancelled())

    def _work_lint(self) -> None:
        self._linted = True
        report = self._show_problems()
        found = view.count(len(report.findings), "problem")
        self._set_status(f"Found {found} in {view.entries(report.total)}.", "info")

    def _show_problems(self) -> LintReport:
        """Lint the entries listed (offline); show the findings and a button per kind that ticks
        its entries (for duplicates every copy but the lowest id: what can go, nothing lost)."""
        report = EntryList(self._index.entries, self.host).lint()
        self.problems.report_html.value = report._repr_html_()
        buttons = {}
        for kind in report.by_kind():
            duplicate = kind == "duplicate"
            ids = report.duplicate_ids if duplicate else report.ids(kind)
            tip = f"Tick every entry with a {kind} finding"
            if duplicate:
                tip = "Tick every duplicate but the lowest id of each group"
            select = functools.partial(self._on_select_problem, kind, tuple(ids))
            if ids:
                text, idle = f"Select {kind} ({len(ids):,})", self.state == "idle"
                buttons[kind] = self._button(text, tip, select, disabled=not idle)
        old, self.problems.select_buttons = self.problems.select_buttons, buttons
        self.problems.select_box.children = tuple(buttons.values())
        for button in old.values():
            button.close()
        return report

    def _work_check(self, text: str) -> None:
        listed = EntryList(self._index.entries, self.host)
        report = listed.check(text, unit=limit_unit(self._settings))
        self.check_form.report_html.value = report._repr_html_()
        self._set_status("", "info")

    def _changed(self, result: Any, undo: str | None = None, note: str | None = None) -> None:
        """Show ``result``; Undo puts back ``undo`` (in words) if it kept a snapshot; list again."""
        self._record(result)
        snapshot = getattr(result, "snapshot", None)
        if undo is not None and snapshot and getattr(result, "gone", True):
            self.undo = Undo(snapshot, undo)
        listed = self._reload()
        notes = [PANEL.message(n) for n in (note, *self._warnings) if n]
        if notes:
            self._set_status(" ".join(notes), "warning")
        elif listed:
            self._set_status("", "info")

    def _cancelled(self) -> str | None:
        return "Cancelled: what was not sent was not restored." if self._cancel.is_set() else None

    def _reload(self) -> bool:
        """List the snapshots and the entries; ``False`` (status set) if the listing failed."""
        found = history.snapshots(profile=self.profile, host=self.host)
        with self._lock:
            self._snapshots = {str(info.path): info for info in found}
            options = [(view.snapshot_label(info), str(info.path)) for info in found]
            self.snapshot_dropdown.options = options or [("no snapshots yet", "")]
            # As `restore` picks "latest": never a restore's own snapshot (that undoes it).
            latest = (str(info.path) for info in found if info.undoes is None)
            self.snapshot_dropdown.value = next(latest, self.snapshot_dropdown.value)
        try:
            listing = list_entries(self._settings, client=self._client)
        except ListingUnsupportedError as exc:
            self._use_listing(None)
            why = "without a listing their terms are unknown and a deletion cannot be undone."
            said = f"{exc} Type the ids of the entries to delete instead; {why}"
            self._set_status(said, "warning")
            return False
        except ServiceError as exc:
            self._set_status(f"Could not list the entries: {exc}. Press Refresh to retry.", "error")
            return False
        self._use_listing(listing)
        return True

    # -- the listing and the table -----------------------------------------------------------

    def _use_listing(self, listing: EntryList | None) -> None:
        """Show ``listing``; ``None``: the service has none, so ids are typed instead."""
        index, listed = EntryIndex(listing.entries if listing else []), listing is not None
        options: list[tuple[str, Any]] = [("all", ALL_PAIRS)]
        options += [(f"{view.pair(*pair)} ({found:,})", pair) for pair, found in index.pairs]
        with self._lock:
            self._index, self._listed, self.listing_supported = index, listed, listed
            chosen = self.pair_dropdown.value
            self._quiet = True
            try:
                self.pair_dropdown.options = options
                values = [value for _, value in options]
                self.pair_dropdown.value = chosen if chosen in values else ALL_PAIRS
            finally:
                self._quiet = False
            present = {e.id for e in index.entries}
            self.rows.select(i for i in self.rows.selected if i in present)
            show(self.search_box, listed)
            show(self.ids_text, not listed)
            self._redraw()
            if not listed:
                self.delete_button.description = "Delete"
            elif self._linted:
                self._show_problems()

    def _redraw(self) -> None:
        """Filter, sort and draw the page: what each keystroke, sort and page costs."""
        with self._lock:
            found = self._index.search(self.search_text.value, self.pair_dropdown.value)
            column, descending = self.sorted_by
            if column is not None:
                found = self._index.order(found, column, descending)
            self._matches = found
            self.page = min(max(self.page, 0), self.pages - 1)
            start = self.page * PAGE
            self.rows.draw([self._index.entries[i] for i in found[start : start + PAGE]])
            for name, sort_button in self.sort_buttons.items():
                arrow = (" \u25bc" if descending else " \u25b2") if name == column else ""
                sort_button.description = name + arrow  # a message only when it changes
            self._redraw_counts()
            self._refresh()

    def _redraw_counts(self) -> None:
        matches, selected = len(self._matches), len(self.rows.selected)
        first, last = min(self.page * PAGE + 1, matches), min((self.page + 1) * PAGE, matches)
        total = len(self._index)
        self.count_html.value = view.count_html(total, matches, first, last, selected, self.host)
        page = f"page {self.page + 1:,} of {self.pages:,}"
        self.page_html.value = f'<div class="dict-magics-page">{page}</div>'
        if self.listing_supported:
            self.delete_button.description = f"Delete selected ({selected:,})"

    # -- the controls -----------------------------------------------------------------------

    def _arm(self, armed: Armed) -> None:
        """Show the confirmation of ``armed``; only from idle."""
        with self._lock:
            if self.state != "idle":
                return
            self.state, self._armed = "armed", armed
            self.confirm_message.value = armed.message
            self.purge_word_text.value = ""
            show(self.progress, False)
            hint = f"Check {armed.check}, then press Confirm or Cancel."
            if armed.plan is not None:
                hint = f"Type {armed.plan.word} (or the host) to enable Confirm, or press Cancel."
                self.purge_word_text.placeholder = f"type {armed.plan.word}"
                self.purge_word_text.tooltip = f"type {armed.plan.word} to enable Confirm"
            self._set_status(hint, "info")
            self._refresh()

    def _refresh(self) -> None:
        """Make every control match the state: the one place that enables or disables them."""
        with self._lock:
            idle, armed = self.state == "idle", self.state == "armed"
            listing = self.listing_supported
            plan = self._armed.plan if self._armed else None
            selected = len(self.rows.selected)
            self.ids_text.disabled = self.refresh_button.disabled = not idle
            self.select_all_button.disabled = not idle or not self._matches
            self.clear_button.disabled = not idle or not selected
            self.delete_button.disabled = not idle or (listing and not selected)
            # Without a listing no snapshot can be taken, and the purge refuses to go without.
            self.delete_all_button.disabled = not idle or (not listing and self._keeps)
            self.undo_button.disabled = not idle or self.undo is None
            self.snapshot_dropdown.disabled = not idle or not self._snapshots
            self.restore_button.disabled = not idle or not self.snapshot_dropdown.value
            self.edit_button.disabled = not idle or not listing or selected != 1
            for part in descendants(self.edit_form) + descendants(self.tools):
                if part.has_trait("disabled"):
                    part.disabled = not idle
            self.prev_button.disabled = self.page <= 0
            self.next_button.disabled = self.page >= self.pages - 1
            show(self.pager, self.pages > 1)
            show(self.confirm_box, not idle)
            show(self.purge_word_text, plan is not None)
            self.purge_word_text.disabled = plan is None
            show(self.confirm_button, armed)
            typed = plan is None or plan.accepts(self.purge_word_text.value)
            self.confirm_button.disabled = not armed or not typed
            self.cancel_button.disabled = idle

    def _set_status(self, message: str, kind: str) -> None:
        self.status.value = view.status_html(message, kind)

    def _record(self, result: Any) -> None:
        """Show ``result`` (in the panel's words) as the latest, first in the recent ones."""
        result = PANEL.named(result)
        self.history.append(result)
        self.result.value = result._repr_html_()
        stamp = f'<span style="color:{view.GREY}">{time.strftime("%H:%M:%S")}</span>'
        self._history_html = [f"<li>{stamp} {self.result.value}</li>", *self._history_html][:10]
        recent = f"Recent results ({len(self._history_html)}, newest first)"
        items = "".join(self._history_html)
        self.history_view.value = (
            f'<details class="dict-magics-history"><summary>{recent}</summary>'
            f'<ol style="margin:0.2em 0">{items}</ol></details>'
        )


class ProgressBar(widgets.IntProgress):
    """The panel's bar and its operations' progress sink (set from the worker: traits only)."""

    def start(self, total: int, label: str) -> None:
        self(0, total, None)
        show(self, total > 1)

    def __call__(self, done: int, total: int, result: object) -> None:
        self.max, self.value = max(total, 1), done
        self.description = f"{done} / {total}"

    def stop(self) -> None:
        pass
