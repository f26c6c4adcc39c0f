"""The curation panel (``%dict_panel``): find entries, tick them, change or delete them after a
confirmation that names their terms, and undo. Imported only when it is used.

Nothing is sent by one click: every change only arms a confirmation (a purge also needs a typed
word). Confirm runs the operation on a worker thread so the notebook stays responsive; that
thread only sets widget traits (``with output:`` from a thread is not safe). While it runs only
Cancel is enabled. ipywidgets hides exceptions raised in callbacks in a log, so every handler
shows its own in the status line. A service without a listing falls back to typed ids.
"""

from __future__ import annotations

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
from ..models import BatchResult, DeleteResult, Entry, EntryList, PurgePlan, SnapshotInfo
from ..models.glossary import SyncResult
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
from ..service.paths import check_id
from ..settings import WORKERS
from . import panel_html as html
from .hints import PANEL
from .panel_forms import AddForm, CheckForm, EditForm, ProblemsView, SyncForm
from .panel_table import ALL_PAIRS, COLUMNS, EntryIndex, EntryRows

if TYPE_CHECKING:
    from ..service.client import DictionaryClient

__all__ = ["PAGE", "Armed", "DictPanel", "Undo", "parse_ids"]

PAGE = 50
"""Rows of the table per page."""
HISTORY_SIZE = 10
ENTRY_TERMS = ("from_lang", "from_text", "to_lang", "to_text")
"""The keyword names of an entry's terms, in ``Entry.terms`` order."""

State = Literal["idle", "armed", "running"]
COLUMN_LAYOUTS = {
    "id": {"width": html.ID_WIDTH, "flex": "0 0 auto"},
    "languages": {"width": html.LANG_WIDTH, "flex": "0 0 auto"},
}
FILL = {"width": "auto", "flex": "1 1 0"}


def worded(said: BaseException | str) -> str:
    """An error or warning in the panel's words (its buttons, the magics for what it lacks)."""
    return PANEL.worded(said)


NAMES = PANEL.names
"""The panel's words for what a result or plan names (its Undo button, ...)."""


def parse_ids(text: str) -> list[str]:
    """Split what the user typed on spaces and commas, keeping the first of any duplicates."""
    return list(dict.fromkeys(part for part in ID_SEPARATORS.split(text) if part))


def show(widget: widgets.Widget, visible: bool) -> None:
    """Show or hide ``widget`` (one message, only when it changes)."""
    display = "" if visible else "none"
    if widget.layout.display != display:
        widget.layout.display = display


def set_disabled(box: widgets.Box, disabled: bool) -> None:
    """Disable (or enable) every input inside ``box``."""
    for child in box.children:
        if isinstance(child, widgets.Box):
            set_disabled(child, disabled)
        elif child.has_trait("disabled"):
            child.disabled = disabled


@dataclass(frozen=True)
class Armed:
    """What Confirm will start: ``work`` on the worker thread, saying ``what`` while it runs.
    ``message`` is the confirmation and ``hint`` the status beside it; a purge also needs the
    word its ``plan`` accepts, typed."""

    kind: Literal["delete", "purge", "restore", "update", "add", "sync"]
    message: str
    hint: str
    what: str
    work: Callable[..., None]
    total: int = 0
    plan: PurgePlan | None = None


@dataclass(frozen=True)
class Undo:
    """What the Undo button puts back: the snapshot the last change kept (a restore of it
    re-adds deleted entries and puts changed ones back under their ids), and what it took."""

    snapshot: str
    what: str


class DictPanel(widgets.VBox):
    """Curate a dictionary: search, tick, change or delete after confirming, undo, restore.

    ``state`` is ``idle``, ``armed`` (``armed`` names what Confirm will do) or ``running``
    (``running`` names the work in flight); ``wait()`` blocks until that work is done. The
    panel owns ``client`` and closes it in ``close()``. The listing loads in the background.
    """

    def __init__(
        self,
        client: DictionaryClient,
        *,
        profile: str,
        workers: int = WORKERS,
        snapshots: bool = True,
        listing_max_age: float | None = None,
        **kwargs: Any,
    ) -> None:
        self._settings = OperationSettings(
            profile=profile, workers=workers, snapshots=snapshots, listing_max_age=listing_max_age
        )
        self._client = client
        self.profile, self.workers = profile, workers
        self.history: deque[Any] = deque(maxlen=HISTORY_SIZE)
        self._history_html: deque[str] = deque(maxlen=HISTORY_SIZE)
        # Guards the state, the listing and the controls that show them; re-entrant because
        # setting a trait calls observers that take it again.
        self._lock = threading.RLock()
        self._state: State = "idle"
        self._armed: Armed | None = None
        self._running: str | None = None
        self._follow: Armed | None = None  # armed once the background work ends
        self._worker: threading.Thread | None = None
        self._cancel = threading.Event()
        self._warnings: list[str] = []
        self._index = EntryIndex([])
        self._listed = False
        self._unsupported: str | None = None  # why the service has no listing
        self._matches: list[int] = []
        self._page = 0
        self._sorted_by: str | None = None  # None: the service's order
        self._descending = False
        self._snapshots: dict[str, SnapshotInfo] = {}
        self._quiet = False  # the pair filter's options are being replaced
        self._linted = False  # Problems follows every listing once it was asked for
        self._uploads: tempfile.TemporaryDirectory[str] | None = None
        self.undo: Undo | None = None

        def button(description: str, tooltip: str = "", **more: Any) -> widgets.Button:
            return widgets.Button(description=description, tooltip=tooltip, **more)

        self.header = widgets.HTML(html.header_html(profile, client.host, mask(client.access_key)))
        self.refresh_button = button("Refresh", "List the entries again (and the snapshots)")
        self.search_text = widgets.Text(
            placeholder="search either term",
            description="Search",
            layout=widgets.Layout(width="24em"),
        )
        self.pair_dropdown = widgets.Dropdown(
            options=[("all", ALL_PAIRS)], value=ALL_PAIRS, description="Languages"
        )
        self.count_html = widgets.HTML()
        self.select_all_button = button("Select all matches", "Tick every entry the search matches")
        self.clear_button = button("Clear selection")
        self.sort_buttons = {
            column: button(
                column,
                f"Sort by {column} (again: the other way)",
                layout=widgets.Layout(margin="0 0.3em 0 0", **COLUMN_LAYOUTS.get(column, FILL)),
            )
            for column in COLUMNS
        }
        style = widgets.HTML(html.TABLE_CSS, layout=widgets.Layout(display="none"))
        table_header = widgets.HBox([*self.sort_buttons.values(), style])
        table_header.add_class("dict-magics-table-header")
        self.rows = EntryRows(
            PAGE,
            self._selection_changed,
            self._lock,
            layout=widgets.Layout(max_height="24em", overflow="auto"),
        )
        self.rows.add_class("dict-magics-entries")
        self.prev_button = button("\u25c0 Previous", "Previous page")
        self.next_button = button("Next \u25b6", "Next page")
        self.page_html = widgets.HTML()
        self.pager = widgets.HBox([self.prev_button, self.page_html, self.next_button])
        self.search_box = widgets.VBox(
            [
                widgets.HBox([self.search_text, self.pair_dropdown]),
                widgets.HBox([self.count_html, self.select_all_button, self.clear_button]),
                table_header,
                self.rows,
                self.pager,
            ]
        )
        self.ids_text = widgets.Text(
            placeholder="entry ids, separated by spaces or commas",
            description="Entry ids",
            layout=widgets.Layout(width="28em"),
        )
        self.delete_button = button("Delete selected (0)", "Delete the ticked entries (asks first)")
        self.edit_button = button(
            "Edit selected\u2026", "Change the terms of the one ticked entry (asks first)"
        )
        self.delete_all_button = button(
            "Delete all\u2026",
            "Delete every entry of this account (asks for a typed confirmation)",
            button_style="danger",
        )
        self.undo_button = button("Undo", "Put back what the last change took")
        self.edit_form = EditForm(
            layout=widgets.Layout(border="1px solid #d0d7de", padding="0.3em 0.6em")
        )
        self.add_form = AddForm()
        self.sync_form = SyncForm()
        self.problems = ProblemsView()
        self.check_form = CheckForm()
        self.tools = widgets.Accordion(
            children=[self.add_form, self.sync_form, self.problems, self.check_form],
            titles=("Add an entry", "Sync a glossary file", "Problems", "Check a text"),
            selected_index=None,
        )
        self.snapshot_dropdown = widgets.Dropdown(
            options=[("no snapshots yet", "")],
            value="",
            description="Snapshot",
            layout=widgets.Layout(width="30em"),
        )
        self.restore_button = button("Restore\u2026", "Put back the entries of the chosen snapshot")
        self.confirm_message = widgets.HTML()
        self.purge_word_text = widgets.Text(layout=widgets.Layout(width="14em"))
        self.confirm_button = button("Confirm", button_style="danger")
        self.cancel_button = button("Cancel")
        self.confirm_box = widgets.VBox(
            [
                self.confirm_message,
                widgets.HBox([self.purge_word_text, self.confirm_button, self.cancel_button]),
            ],
            layout=widgets.Layout(border="1px solid #cf222e", padding="0.3em 0.6em"),
        )
        self.progress = widgets.IntProgress(value=0, min=0, max=1, description="0 / 0")
        self._sink = ProgressBar(self.progress)
        self.status = widgets.HTML()
        self.result = widgets.HTML()
        self.result.add_class("dict-magics-latest")  # the newest result
        self.history_view = widgets.HTML()

        self.search_text.observe(self._guard(self._on_search), names="value")
        self.pair_dropdown.observe(self._guard(self._on_search), names="value")
        self.purge_word_text.observe(self._guard(lambda _change: self._refresh()), names="value")
        for clicked, handler in [
            (self.refresh_button, self._on_refresh),
            (self.select_all_button, self._on_select_all),
            (self.clear_button, self._on_clear),
            (self.prev_button, lambda _b: self.show_page(self._page - 1)),
            (self.next_button, lambda _b: self.show_page(self._page + 1)),
            (self.delete_button, self._on_delete),
            (self.edit_button, self._on_edit),
            (self.delete_all_button, self._on_delete_all),
            (self.undo_button, self._on_undo),
            (self.restore_button, self._on_restore),
            (self.confirm_button, self._on_confirm),
            (self.cancel_button, self._on_cancel),
            (self.edit_form.review_button, self._on_review_edit),
            (self.edit_form.close_button, self._on_close_edit),
            (self.add_form.add_button, self._on_add),
            (self.sync_form.plan_button, self._on_sync_plan),
            (self.problems.find_button, self._on_find_problems),
            (self.check_form.check_button, self._on_check),
            *((b, functools.partial(self._on_sort, c)) for c, b in self.sort_buttons.items()),
        ]:
            clicked.on_click(self._guard(handler))

        super().__init__(
            [
                widgets.HBox([self.header, self.refresh_button]),
                self.search_box,
                self.ids_text,
                widgets.HBox(
                    [self.delete_button, self.edit_button, self.delete_all_button, self.undo_button]
                ),
                self.edit_form,
                self.tools,
                widgets.HBox([self.snapshot_dropdown, self.restore_button]),
                self.confirm_box,
                self.progress,
                self.status,
                self.result,
                self.history_view,
            ],
            **kwargs,
        )
        for hidden in (self.progress, self.ids_text, self.edit_form):
            show(hidden, False)
        with self._lock:
            self._begin("list", f"Listing the entries of {self.host}\u2026", self._work_refresh)

    @classmethod
    def from_profile(cls, profile: str | None = None, **client_options: Any) -> DictPanel:
        """The panel of a stored profile (or of the ``DICT_MAGICS_*`` variables).

        ``client_options`` go to ``DictionaryClient`` (``timeout``, ``max_retries``, ...);
        ``workers``, ``snapshots`` and ``listing_max_age`` as in ``OperationSettings``.
        Raises ``CredentialsError`` if nothing is stored.
        """
        from ..operations.connect import make_client

        workers = int(client_options.pop("workers", WORKERS))
        snapshots = bool(client_options.pop("snapshots", True))
        max_age = client_options.pop("listing_max_age", None)
        client, creds = make_client(profile, workers=workers, **client_options)
        try:
            return cls(
                client,
                profile=creds.profile,
                workers=workers,
                snapshots=snapshots,
                listing_max_age=max_age,
            )
        except BaseException:
            client.close()
            raise

    @classmethod
    def from_settings(cls, settings: OperationSettings) -> DictPanel:
        """The panel for ``settings`` (what ``%dict_panel`` shows)."""
        return cls.from_profile(
            settings.profile,
            base_url=settings.base_url,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            workers=settings.workers,
            snapshots=settings.snapshots,
            listing_max_age=settings.listing_max_age,
        )

    # -- public ------------------------------------------------------------------------------

    @property
    def state(self) -> State:
        return self._state

    @property
    def armed(self) -> str | None:
        """What Confirm will do (``delete``, ``purge``, ``restore``, ...), when armed."""
        return self._armed.kind if self._armed else None

    @property
    def running(self) -> str | None:
        """The work in flight (``list``, ``delete``, ``purge``, ``restore``, ``undo``, ...)."""
        return self._running

    @property
    def host(self) -> str:
        return self._client.host

    @property
    def base_url(self) -> str:
        return self._client.base_url

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
    def page(self) -> int:
        """The page shown, counted from 0."""
        return self._page

    @property
    def pages(self) -> int:
        """How many pages the matches fill (at least 1)."""
        return max(1, -(-len(self._matches) // PAGE))

    @property
    def sorted_by(self) -> tuple[str | None, bool]:
        """The column the table is sorted by (``None``: the service's order), and whether
        descending."""
        return self._sorted_by, self._descending

    def sort(self, column: str | None, descending: bool = False) -> None:
        """Sort the table by ``column`` (one of ``COLUMNS``; ``None``: the service's order)."""
        if column is not None and column not in COLUMNS:
            raise ValueError(f"column must be one of {COLUMNS} or None, not {column!r}")
        with self._lock:
            self._sorted_by, self._descending, self._page = column, descending, 0
            self._redraw()

    def show_page(self, page: int) -> None:
        """Show page ``page`` (counted from 0; clamped to the pages there are)."""
        with self._lock:
            self._page = page
            self._redraw()

    @property
    def selected(self) -> list[str]:
        """The ticked ids, in the order they were ticked."""
        return list(self.rows.selected)

    @property
    def listing_supported(self) -> bool:
        """False once the service answered that it has no listing (typed ids then)."""
        return self._unsupported is None

    def select(self, ids: Sequence[str]) -> None:
        """Tick ``ids`` (as clicking their rows would)."""
        self.rows.select(str(i) for i in ids)
        self._selection_changed()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the background work (if any) is done; ``False`` if it still runs."""
        worker = getattr(self, "_worker", None)  # None also if __init__ failed early
        if worker is None:
            return True
        if worker is threading.current_thread():
            return False  # the work cannot wait for itself
        worker.join(timeout)
        return not worker.is_alive()

    def close(self) -> None:
        """Wait for running work, close the client and every widget of the panel, and delete
        the files uploaded to it."""
        self.wait()
        if getattr(self, "_uploads", None) is not None:
            self._uploads.cleanup()
        if getattr(self, "_client", None) is not None:
            self._client.close()
        for child in _descendants(self):
            child.close()
        super().close()

    # -- handlers (main thread) ----------------------------------------------------------------

    def _guard(self, handler: Callable[..., None]) -> Callable[..., None]:
        """Show any exception of ``handler`` in the status line; the panel stays usable (idle
        again, unless background work still runs)."""

        @functools.wraps(handler)
        def guarded(*args: Any) -> None:
            try:
                handler(*args)
            except Exception as exc:
                worker = self._worker
                with self._lock:
                    running = worker is not None and worker.is_alive()
                    if (
                        self._state != "running"
                        or not running
                        or worker is threading.current_thread()
                    ):
                        self._state, self._armed, self._running = "idle", None, None
                self._set_status(f"Unexpected error: {type(exc).__name__}: {exc}", "error")
                self._refresh()

        return guarded

    def _on_search(self, _change: dict[str, Any]) -> None:
        if not self._quiet:
            self._page = 0
            self._redraw()

    def _on_sort(self, column: str, _button: widgets.Button) -> None:
        with self._lock:
            again = column == self._sorted_by
            self.sort(column, not self._descending if again else False)

    def _selection_changed(self) -> None:
        with self._lock:
            self._redraw_counts()
            self._refresh()

    def _on_select_all(self, _button: widgets.Button) -> None:
        with self._lock:
            if self._state == "idle":
                self.rows.select(self._index.entries[i].id for i in self._matches)
        self._selection_changed()

    def _on_clear(self, _button: widgets.Button) -> None:
        if self._state == "idle":
            self.rows.clear()
            self._selection_changed()

    def _on_refresh(self, _button: widgets.Button) -> None:
        with self._lock:
            if self._state == "idle":
                self._begin("list", f"Listing the entries of {self.host}\u2026", self._work_refresh)

    def _ticked_entries(self) -> list[Entry]:
        with self._lock:
            by_id = {e.id: e for e in self._index.entries}
            return [by_id[i] for i in self.rows.selected if i in by_id]

    def _on_delete(self, _button: widgets.Button) -> None:
        if self.listing_supported:
            going = self._ticked_entries()
            if not going:
                self._set_status("Tick one or more entries first.", "error")
                return
            message = html.confirm_delete_html(going, self.profile, self.host, self._snapshots_on)
            ids = [e.id for e in going]
        else:
            ids = parse_ids(self.ids_text.value)
            if not ids:
                self._set_status("Type one or more entry ids first.", "error")
                return
            problems = []
            for entry_id in ids:
                try:
                    check_id(entry_id)
                except InvalidIdError as exc:
                    problems.append(worded(exc))
            if problems:
                self._set_status("Nothing armed: " + " ".join(problems), "error")
                return
            message = html.confirm_ids_html(ids, self.profile, self.host)
        what = f"Deleting {html.entries(len(ids))} on {self.host}\u2026"
        hint = "Check what will be deleted, then press Confirm or Cancel."
        work = functools.partial(self._work_delete, tuple(ids))
        self._arm(Armed("delete", message, hint, what, work, total=len(ids)))

    def _on_delete_all(self, _button: widgets.Button) -> None:
        # The plan (count, copy, word) comes from the listing shown; once confirmed the
        # operation lists again and keeps the snapshot itself.
        stated = purging.plan(
            self.profile,
            self.host,
            self._index.entries if self._listed else None,
            str(snapshot_dir()) if self._snapshots_on else None,
        )
        message = html.confirm_purge_html(stated, NAMES)
        hint = f"Type {stated.word} (or the host) to enable Confirm, or press Cancel."
        what = f"Deleting every entry on {self.host}\u2026"
        if self._arm(Armed("purge", message, hint, what, self._work_purge, plan=stated)):
            self.purge_word_text.placeholder = f"type {stated.word}"
            self.purge_word_text.tooltip = f"type {stated.word} to enable Confirm"

    def _on_restore(self, _button: widgets.Button) -> None:
        info = self._snapshots.get(self.snapshot_dropdown.value)
        if info is None:
            self._set_status("Choose a snapshot first.", "error")
            return
        message = html.confirm_restore_html(info, self.host)
        what = f"Restoring {html.snapshot_label(info)} to {self.host}\u2026"
        work = functools.partial(self._work_restore, str(info.path))
        hint = "Press Confirm to restore, or Cancel."
        self._arm(Armed("restore", message, hint, what, work, total=info.count))

    def _on_undo(self, _button: widgets.Button) -> None:
        with self._lock:
            undo = self.undo
            if self._state == "idle" and undo is not None:
                work = functools.partial(self._work_restore, undo.snapshot)
                self._begin("undo", f"Putting back {undo.what} on {self.host}\u2026", work)

    def _on_edit(self, _button: widgets.Button) -> None:
        if self._state != "idle" or not self.listing_supported:
            return
        chosen = self._ticked_entries()
        if len(chosen) != 1:
            self._set_status("Tick exactly one entry to edit it.", "error")
            return
        form = self.edit_form
        form.entry, form.title.value = chosen[0], html.edit_title_html(chosen[0])
        form.source_text.value, form.target_text.value = chosen[0].from_text, chosen[0].to_text
        show(form, True)
        self._set_status("Change the terms, then press Review change\u2026", "info")
        self._refresh()

    def _on_close_edit(self, _button: widgets.Button) -> None:
        if self._state == "idle":
            show(self.edit_form, False)

    def _not_sendable(self, entry: Entry) -> bool:
        """Say why the service would refuse ``entry``'s terms, if it would."""
        problems = entry_problems(*entry.terms)
        if problems:
            said = "; ".join(html.clean(p.message) for p in problems)
            self._set_status(f"Not sent: {said}.", "error")
        return bool(problems)

    def _on_review_edit(self, _button: widgets.Button) -> None:
        old, new = self.edit_form.entry, self.edit_form.typed()
        if old is None or new is None or self._not_sendable(new):
            return
        if new.terms == old.terms:
            self._set_status("Nothing changed: the terms are as listed.", "info")
            return
        message = html.confirm_update_html(old, new, self.profile, self.host, self._snapshots_on)
        what = f"Changing entry {old.id} on {self.host}\u2026"
        hint = "Check the change, then press Confirm or Cancel."
        work = functools.partial(self._work_update, old, new)
        self._arm(Armed("update", message, hint, what, work))

    def _on_add(self, _button: widgets.Button) -> None:
        new = self.add_form.typed()
        if self._not_sendable(new):
            return
        with self._lock:
            same = [e for e in self._index.entries if e.terms == new.terms]
        message = html.confirm_add_html(new, self.profile, self.host, same)
        hint = "Check the entry, then press Confirm or Cancel."
        # A copy is added only when the confirmation named the entry it copies.
        work = functools.partial(self._work_add, new, bool(same))
        self._arm(Armed("add", message, hint, f"Adding an entry on {self.host}\u2026", work))

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
            options = {
                "pair": form.pair_text.value.strip() or None,
                "delete_missing": form.delete_missing.value,
            }
            form.plan_html.value = ""
            work = functools.partial(
                self._work_plan, str(path), name, options, form.skip_invalid.value
            )
            self._begin("plan", f"Planning the sync of {name} with {self.host}\u2026", work)

    def _on_find_problems(self, _button: widgets.Button) -> None:
        with self._lock:
            if self._state != "idle" or not self._listed:
                self._set_status("Problems need a listing of the entries.", "error")
                return
            what = f"Looking for problems in {html.entries(len(self._index))}\u2026"
            self._begin("lint", what, self._work_lint)

    def _on_select_problem(self, kind: str, ids: Sequence[str], _button: widgets.Button) -> None:
        with self._lock:
            if self._state != "idle":
                return
            self.rows.clear()
            self.rows.select(ids)
        self._selection_changed()
        self._set_status(
            f"Selected {html.entries(len(ids))} ({kind}): Delete selected, or Edit "
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
            elif not self._listed:
                self._set_status("The check needs a listing of the entries.", "error")
            else:
                what = "Checking the text against the entries\u2026"
                self._begin("check", what, functools.partial(self._work_check, text))

    def _on_cancel(self, _button: widgets.Button) -> None:
        with self._lock:
            if self._state == "running":
                self._cancel.set()
                self._set_status(
                    "Cancelling: nothing new is sent; requests already sent are waited for.",
                    "busy",
                )
                return
            if self._state != "armed":
                return
            self._state, self._armed = "idle", None
        self._set_status("Cancelled: nothing was sent.", "info")
        self._refresh()

    def _on_confirm(self, _button: widgets.Button) -> None:
        with self._lock:
            armed = self._armed
            if self._state != "armed" or armed is None:
                return  # a second click, or nothing armed: send nothing
            work = armed.work
            if armed.plan is not None:  # the purge goes only on its word, typed
                word = self.purge_word_text.value
                if not armed.plan.accepts(word):
                    needed = armed.plan.word
                    self._set_status(
                        f"Type {needed} (or the host) exactly to enable Confirm.", "error"
                    )
                    return
                work = functools.partial(work, word)
            self._begin(armed.kind, armed.what, work, total=armed.total)

    # -- background work ------------------------------------------------------------------------

    def _begin(self, kind: str, what: str, work: Callable[[], None], *, total: int = 0) -> None:
        """Start ``work`` on the worker thread; called with the lock held."""
        self._state, self._armed, self._running = "running", None, kind
        self._cancel = threading.Event()
        self._warnings = []
        self._worker = threading.Thread(
            target=self._guard(self._work), args=(work,), name="dict-panel", daemon=True
        )
        self.confirm_message.value = html.running_html(what)
        self._set_status(what, "busy")
        self._show_progress(total if total > 1 else 0)
        self._refresh()
        self._worker.start()

    def _work(self, work: Callable[[], None]) -> None:
        """Run ``work`` (worker thread: it sets traits only), then go back to idle, or arm
        what it left to confirm."""
        kind = self._running
        try:
            work()
        except (DictMagicsError, ServiceError) as exc:
            self._set_status(worded(exc), "error")
        except Exception as exc:
            message = f"Unexpected error: {type(exc).__name__}: {exc}"
            if kind != "list":
                message += " (the request may or may not have reached the service)"
            self._set_status(message, "error")
        finally:
            with self._lock:
                self._state, self._armed, self._running = "idle", None, None
                follow, self._follow = self._follow, None
                if follow is not None and not self._cancel.is_set():
                    self._arm(follow)
                self._refresh()

    # The operations, each called from the worker thread.

    def _work_refresh(self) -> None:
        if self._reload():
            found = html.entries(len(self._index))
            self._set_status(f"Listed {found} at {time.strftime('%X')}.", "info")

    def _work_delete(self, ids: tuple[str, ...]) -> None:
        result = delete(
            self._settings,
            ids,
            progress=self._sink,
            cancel=self._cancel,
            client=self._client,
            warn=self._warnings.append,
        )
        result = replace(result, names=NAMES)
        self._record(result)
        gone = _may_be_gone(result)
        if result.snapshot and gone:  # the result says Undo puts back this snapshot
            self.undo = Undo(result.snapshot, html.entries(gone))
        if result.ok and not self.listing_supported:
            self.ids_text.value = ""
        self._after_change(interruption(result))

    def _work_purge(self, word: str) -> None:
        result = purging.purge(
            self._settings,
            prompter=ScriptedPrompter([word]),
            client=self._client,
            warn=self._warnings.append,
        )
        result = replace(result, names=NAMES)
        self._record(result)
        if result.snapshot and _may_be_gone(result):
            self.undo = Undo(result.snapshot, "every entry")
        self._after_change(None)

    def _work_restore(self, source: str) -> None:
        """Put back ``source``, a snapshot of this profile and host (so no second question)."""
        result = restore(
            self._settings,
            source,
            prompter=ScriptedPrompter(reason="the panel asked already"),
            progress=self._sink,
            yes=True,
            cancel=self._cancel,
            client=self._client,
            warn=self._warnings.append,
        )
        self._record(result)
        if result.ok and self.undo is not None and Path(self.undo.snapshot) == Path(source):
            self.undo = None  # what Undo would put back is back
        self._after_change(self._cancelled_note())

    def _work_update(self, old: Entry, new: Entry) -> None:
        """PUT the terms that changed into entry ``old.id`` (the operation keeps the entry as
        the service holds it in a snapshot first). A ``NoChange``: it already reads so."""
        changed = {
            name: after
            for name, before, after in zip(ENTRY_TERMS, old.terms, new.terms, strict=True)
            if before != after
        }
        result = update(
            self._settings, old.id, client=self._client, warn=self._warnings.append, **changed
        )
        self._record(result)
        if result.ok:
            show(self.edit_form, False)
            if getattr(result, "snapshot", None):
                self.undo = Undo(result.snapshot, f"the old terms of entry {old.id}")
        self._after_change(None)

    def _work_add(self, new: Entry, duplicate: bool) -> None:
        """Add ``new`` (a listing after names its id). An entry with the same terms that
        appeared since the panel's listing makes a ``NoChange``, nothing sent."""
        result = add(
            self._settings,
            *new.terms,
            duplicate=duplicate,
            client=self._client,
            warn=self._warnings.append,
        )
        self._record(result)
        if result.ok:
            self.add_form.from_text.value = self.add_form.to_text.value = ""
        self._after_change(None)

    def _work_plan(self, path: str, name: str, options: dict[str, Any], skip_invalid: bool) -> None:
        plan = plan_sync(self._settings, path, client=self._client, **options)
        # The name the user knows, not our temporary copy.
        plan = replace(plan, path=name, names=NAMES)
        shown = html.result_html(plan)
        self.sync_form.plan_html.value = shown
        changes = len(plan.adds) + len(plan.updates) + len(plan.deletes)
        if plan.invalid and not skip_invalid:
            self._set_status(
                f"{name} has invalid rows (listed in the plan): fix them, or tick "
                "\u201cskip invalid rows\u201d and plan again. Nothing was sent.",
                "error",
            )
        elif changes == 0:
            self._set_status(f"Nothing to change: the dictionary matches {name}.", "info")
        else:
            self.sync_form.plan_html.value = ""  # shown in the confirmation instead
            message = html.confirm_sync_html(shown, self.profile, self.host, self._snapshots_on)
            what = f"Applying the sync of {name} to {self.host}\u2026"
            hint = "Check the plan, then press Confirm or Cancel."
            work = functools.partial(self._work_sync, path, name, options, skip_invalid)
            self._follow = Armed("sync", message, hint, what, work, total=changes)

    def _work_sync(self, path: str, name: str, options: dict[str, Any], skip_invalid: bool) -> None:
        result = sync(
            self._settings,
            path,
            apply=True,
            skip_invalid=skip_invalid,
            yes=True,  # the panel's confirmation listed what goes
            prompter=ScriptedPrompter(reason="the panel asked already"),
            progress=self._sink,
            cancel=self._cancel,
            client=self._client,
            warn=self._warnings.append,
            **options,
        )
        if isinstance(result, SyncResult):
            result = replace(result, plan=replace(result.plan, path=name))
            if result.snapshot:
                self.undo = Undo(result.snapshot, f"the sync of {name}")
        self._record(result)
        self.sync_form.plan_html.value = ""
        self._after_change(self._cancelled_note())

    def _work_lint(self) -> None:
        self._linted = True
        self._show_problems(announce=True)

    def _show_problems(self, announce: bool = False) -> None:
        """Lint the entries listed (offline) and show the findings with a button per kind:
        for duplicates it ticks every copy but the lowest id of each group (what can go with
        nothing lost), else every entry the kind names."""
        report = EntryList(self._index.entries, self.host).lint()
        self.problems.report_html.value = html.result_html(report)
        buttons: dict[str, widgets.Button] = {}
        for kind in report.by_kind():
            ids = report.duplicate_ids if kind == "duplicate" else report.ids(kind)
            if not ids:
                continue
            buttons[kind] = widgets.Button(
                description=f"Select {kind} ({len(ids):,})",
                tooltip="Tick every duplicate but the lowest id of each group"
                if kind == "duplicate"
                else f"Tick every entry with a {kind} finding",
                disabled=self._state != "idle",
            )
            select = functools.partial(self._on_select_problem, kind, tuple(ids))
            buttons[kind].on_click(self._guard(select))
        self.problems.set_buttons(buttons)
        if announce:
            found = len(report.findings)
            self._set_status(
                f"Found {found:,} problem{'' if found == 1 else 's'} in "
                f"{html.entries(report.total)}.",
                "info",
            )

    def _work_check(self, text: str) -> None:
        report = EntryList(self._index.entries, self.host).check(text)
        self.check_form.report_html.value = html.result_html(report)
        self._set_status("", "info")

    def _cancelled_note(self) -> str | None:
        return "Cancelled: what was not sent was not restored." if self._cancel.is_set() else None

    def _after_change(self, note: str | None) -> None:
        """List again (the dictionary changed), then say what there is to say."""
        listed = self._reload()
        notes = [worded(n) for n in (note, *self._warnings) if n]
        if notes:
            self._set_status(" ".join(notes), "warning")
        elif listed:
            self._set_status("", "info")

    def _reload(self) -> bool:
        """List the entries and the snapshots; ``False`` (status set) if the listing failed."""
        found = history.snapshots(profile=self.profile, host=self.host)
        with self._lock:
            self._snapshots = {str(info.path): info for info in found}
            options = [(html.snapshot_label(info), str(info.path)) for info in found]
            self.snapshot_dropdown.options = options or [("no snapshots yet", "")]
        try:
            listing = list_entries(self._settings, client=self._client)
        except ListingUnsupportedError as exc:
            self._use_typed_ids(str(exc))
            return False
        except ServiceError as exc:
            self._set_status(f"Could not list the entries: {exc}. Press Refresh to retry.", "error")
            return False
        self._use_listing(listing)
        return True

    # -- the listing and the table -----------------------------------------------------------

    def _use_listing(self, listing: EntryList) -> None:
        index = EntryIndex(listing.entries)
        options = [("all", ALL_PAIRS)] + [
            (f"{html.clean(a)}\u2192{html.clean(b)} ({found:,})", (a, b))
            for (a, b), found in index.pairs
        ]
        with self._lock:
            self._index, self._listed, self._unsupported = index, True, None
            chosen = self.pair_dropdown.value
            self._quiet = True
            try:
                self.pair_dropdown.options = options
                values = [value for _, value in options]
                self.pair_dropdown.value = chosen if chosen in values else ALL_PAIRS
            finally:
                self._quiet = False
            self.rows.keep_only(e.id for e in listing.entries)
            show(self.search_box, True)
            show(self.ids_text, False)
            self._redraw()
            if self._linted:
                self._show_problems()

    def _use_typed_ids(self, why: str) -> None:
        with self._lock:
            self._index, self._listed, self._unsupported = EntryIndex([]), False, why
            self._matches = []
            self.rows.clear()
            self.rows.draw([])
            show(self.search_box, False)
            show(self.ids_text, True)
            self.delete_button.description = "Delete"
        self._set_status(
            f"{why} Type the ids of the entries to delete instead; without a listing their "
            "terms are unknown and a deletion cannot be undone.",
            "warning",
        )

    def _redraw(self) -> None:
        """Filter, sort and draw the page: what each keystroke, sort and page costs."""
        with self._lock:
            found = self._index.search(self.search_text.value, self.pair_dropdown.value)
            if self._sorted_by is not None:
                found = self._index.order(found, self._sorted_by, self._descending)
            self._matches = found
            self._page = min(max(self._page, 0), self.pages - 1)
            start = self._page * PAGE
            self.rows.draw([self._index.entries[i] for i in found[start : start + PAGE]])
            for column, sort_button in self.sort_buttons.items():
                label = html.sort_label(column, self._sorted_by, self._descending)
                if sort_button.description != label:
                    sort_button.description = label
            self._redraw_counts()
            self._refresh()

    def _redraw_counts(self) -> None:
        matches, selected = len(self._matches), len(self.rows.selected)
        first = min(self._page * PAGE + 1, matches)
        last = min((self._page + 1) * PAGE, matches)
        self.count_html.value = html.count_html(
            len(self._index), matches, first, last, selected, self.host
        )
        self.page_html.value = (
            f'<div class="dict-magics-page">page {self._page + 1:,} of {self.pages:,}</div>'
        )
        if self.listing_supported:
            self.delete_button.description = f"Delete selected ({selected:,})"

    # -- the controls -----------------------------------------------------------------------

    @property
    def _snapshots_on(self) -> bool:
        return self._settings.snapshots

    def _arm(self, armed: Armed) -> bool:
        """Show the confirmation of ``armed``; only from idle."""
        with self._lock:
            if self._state != "idle":
                return False
            self._state, self._armed = "armed", armed
            self.confirm_message.value = armed.message
            self.purge_word_text.value = ""
            show(self.progress, False)
            self._set_status(armed.hint, "info")
            self._refresh()
        return True

    def _refresh(self) -> None:
        """Make every control match the state: the one place that enables or disables them."""
        with self._lock:
            state, armed = self._state, self._armed
            idle, listing = state == "idle", self.listing_supported
            purge = armed is not None and armed.plan is not None
            selected = len(self.rows.selected)
            self.ids_text.disabled = not idle
            self.refresh_button.disabled = not idle
            self.select_all_button.disabled = not idle or not self._matches
            self.clear_button.disabled = not idle or not selected
            self.delete_button.disabled = not idle or (listing and not selected)
            # Without a listing no snapshot can be taken, and the purge refuses to go without.
            self.delete_all_button.disabled = not idle or (not listing and self._snapshots_on)
            self.undo_button.disabled = not idle or self.undo is None
            self.snapshot_dropdown.disabled = not idle or not self._snapshots
            self.restore_button.disabled = not idle or not self.snapshot_dropdown.value
            self.edit_button.disabled = not idle or not listing or selected != 1
            for form in (
                self.edit_form,
                self.add_form,
                self.sync_form,
                self.problems,
                self.check_form,
            ):
                set_disabled(form, not idle)
            self.prev_button.disabled = self._page <= 0
            self.next_button.disabled = self._page >= self.pages - 1
            show(self.pager, self.pages > 1)
            show(self.confirm_box, not idle)
            show(self.purge_word_text, purge)
            self.purge_word_text.disabled = not purge
            show(self.confirm_button, state == "armed")
            self.confirm_button.disabled = state != "armed" or (
                purge and not armed.plan.accepts(self.purge_word_text.value)  # type: ignore[union-attr]
            )
            self.cancel_button.disabled = idle

    def _show_progress(self, total: int) -> None:
        self.progress.max = max(total, 1)
        self.progress.value = 0
        self.progress.description = f"0 / {total}"
        show(self.progress, total > 1)

    def _set_status(self, message: str, kind: str) -> None:
        self.status.value = html.status_html(message, kind)

    def _record(self, result: Any) -> None:
        shown = html.result_html(result)
        self.history.append(result)
        stamp = time.strftime("%H:%M:%S")
        self._history_html.append(
            f'<li><span style="color:{html.GREY}">{stamp}</span> {shown}</li>'
        )
        self.result.value = shown
        self.history_view.value = html.history_html(list(reversed(self._history_html)))


def _may_be_gone(result: DeleteResult | BatchResult) -> int:
    """How many entries a delete or purge deleted or may have deleted (outcome unknown): the
    result then names its snapshot and Undo, so Undo must put back that snapshot."""
    if isinstance(result, BatchResult):
        return len({r.entry_id for r in result.results if r.ok or r.outcome_unknown})
    return int(result.ok or result.outcome_unknown)


class ProgressBar:
    """The panel's progress sink: its own bar, set from the worker thread (traits only)."""

    def __init__(self, bar: widgets.IntProgress) -> None:
        self.bar = bar

    def start(self, total: int, label: str) -> None:
        self.bar.max = max(total, 1)
        show(self.bar, total > 1)

    def __call__(self, done: int, total: int, result: object) -> None:
        self.bar.max = max(total, 1)
        self.bar.value = done
        self.bar.description = f"{done} / {total}"

    def stop(self) -> None:
        """The bar stays at its last value, beside the result."""


def _descendants(box: widgets.Box) -> list[widgets.Widget]:
    found: list[widgets.Widget] = []
    for child in box.children:
        if isinstance(child, widgets.Box):
            found.extend(_descendants(child))
        found.append(child)
    return found
