"""The curation panel (``%dict_panel``): find entries, tick them, delete after a confirmation
that names their terms, and put back what a deletion took. Imported only when it is used.

Nothing is deleted by one click: **Delete selected** and **Delete all** only *arm* a
confirmation that lists what will go (a purge also needs a typed word), and **Restore** is
confirmed too. Requests run on a background thread so the notebook stays responsive; that thread
only sets widget traits, which ipywidgets syncs safely from any thread (``with output:`` from a
thread is not safe). While it runs every button but **Cancel** is disabled; Cancel sets an event
the operation honours (nothing new is sent). ipywidgets hides exceptions raised in callbacks in
a log, so every handler reports its own errors in the panel's status line.

The entries show as a table (id, languages, source, target), sortable by any column (click its
header; again to reverse) and paged, ``PAGE`` rows at a time. A listing of 10,000 entries stays
responsive: the search runs over keys casefolded once and a sort over ranks computed once per
column (``panel_index``), and the rows of a page are widgets that are reused (``panel_rows``).
``benchmarks/panel_bench.py`` measures it; ``docs/architecture.md`` ("Panel table") says why
plain ipywidgets and not a grid widget. A service without a listing falls back to typed ids.
"""

from __future__ import annotations

import functools
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import ipywidgets as widgets

from ..errors import (
    DictMagicsError,
    InvalidIdError,
    ListingUnsupportedError,
    ServiceError,
)
from ..models import (
    AddResult,
    BatchResult,
    DeleteResult,
    Entry,
    EntryList,
    RestoreResult,
    SnapshotInfo,
    UpdateResult,
)
from ..models.entry import check_id
from ..models.glossary import SyncResult
from ..models.secret import mask
from ..operations import history
from ..operations.context import ID_SEPARATORS, OperationSettings
from ..operations.delete import count, delete, interruption
from ..operations.listing import list_entries
from ..operations.prompts import ScriptedPrompter
from ..operations.purge import plan as purge_plan
from ..operations.purge import purge
from ..operations.restore import restore
from ..operations.snapshots import snapshot_dir
from ..render import panel as view
from ..settings import WORKERS
from .hints import PANEL
from .panel_forms import AddForm, CheckForm, EditForm, ProblemsView, SyncForm
from .panel_index import ALL_PAIRS, COLUMNS, EntryIndex
from .panel_rows import EntryRows
from .panel_state import Armed, Undo, show
from .panel_tools import ToolHandlers

if TYPE_CHECKING:
    from ..service.client import DictionaryClient

__all__ = ["PAGE", "Armed", "DictPanel", "Undo", "parse_ids"]

PAGE = 50
"""Rows of the table per page."""
HISTORY_SIZE = 10

_COLUMN_LAYOUT = {
    "id": {"width": view.ID_WIDTH, "flex": "0 0 auto"},
    "languages": {"width": view.LANG_WIDTH, "flex": "0 0 auto"},
}
_FILL = {"width": "auto", "flex": "1 1 0"}
_FIELDS = ("from_lang", "from_text", "to_lang", "to_text")
"""The keyword names of an entry's terms, in ``Entry.terms`` order."""

State = Literal["idle", "armed", "running"]
Result = DeleteResult | BatchResult | RestoreResult | UpdateResult | AddResult | SyncResult


def parse_ids(text: str) -> list[str]:
    """Split what the user typed on spaces and commas, keeping the first of any duplicates."""
    return list(dict.fromkeys(part for part in ID_SEPARATORS.split(text) if part))


class DictPanel(ToolHandlers, widgets.VBox):
    """Curate a dictionary: search, tick, delete after confirming, undo, restore.

    The panel owns ``client`` and closes it in ``close()``. ``state`` is ``"idle"``,
    ``"armed"`` (``armed`` says what Confirm will do) or ``"running"`` (``running`` names the
    work in flight); ``wait()`` blocks until the background work, if any, has finished. The
    listing is loaded in the background as the panel is made.
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
            profile=profile,
            workers=workers,
            snapshots=snapshots,
            listing_max_age=listing_max_age,
        )
        self._client = client
        self.profile = profile
        self.workers = workers
        self.history: deque[Result] = deque(maxlen=HISTORY_SIZE)
        self._history_html: deque[str] = deque(maxlen=HISTORY_SIZE)
        # Guards the state, the listing and the controls that show them; re-entrant because
        # setting a trait calls observers that take it again.
        self._lock = threading.RLock()
        self._state: State = "idle"
        self._armed: Armed | None = None
        self._running: str | None = None
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
        self.undo: Undo | None = None
        self._quiet = False
        self._follow: tuple[Armed, str] | None = None  # armed when the background work ends
        self._linted = False  # the Problems view is kept up to date once it was asked for
        self._uploads: tempfile.TemporaryDirectory[str] | None = None

        self.header = widgets.HTML(view.header_html(profile, client.host, mask(client.access_key)))
        self.search_text = widgets.Text(
            placeholder="search either term",
            description="Search",
            continuous_update=True,
            layout=widgets.Layout(width="24em"),
        )
        self.pair_dropdown = widgets.Dropdown(
            options=[("all", ALL_PAIRS)], value=ALL_PAIRS, description="Languages"
        )
        self.refresh_button = widgets.Button(
            description="Refresh", tooltip="List the entries again (and the snapshots)"
        )
        self.count_html = widgets.HTML()
        self.select_all_button = widgets.Button(
            description="Select all matches", tooltip="Tick every entry the search matches"
        )
        self.clear_button = widgets.Button(description="Clear selection")
        self.sort_buttons = {
            column: widgets.Button(
                description=column,
                tooltip=f"Sort by {column} (again: the other way)",
                layout=widgets.Layout(margin="0 0.3em 0 0", **_COLUMN_LAYOUT.get(column, _FILL)),
            )
            for column in COLUMNS
        }
        self.table_style = widgets.HTML(view.TABLE_CSS, layout=widgets.Layout(display="none"))
        self.table_header = widgets.HBox([*self.sort_buttons.values(), self.table_style])
        self.table_header.add_class("dict-magics-table-header")
        self.rows = EntryRows(
            PAGE,
            self._selection_changed,
            self._lock,
            layout=widgets.Layout(max_height="24em", overflow="auto"),
        )
        self.rows.add_class("dict-magics-entries")
        self.prev_button = widgets.Button(description="\u25c0 Previous", tooltip="Previous page")
        self.next_button = widgets.Button(description="Next \u25b6", tooltip="Next page")
        self.page_html = widgets.HTML()
        self.pager = widgets.HBox([self.prev_button, self.page_html, self.next_button])
        self.ids_text = widgets.Text(
            placeholder="entry ids, separated by spaces or commas",
            description="Entry ids",
            layout=widgets.Layout(width="28em"),
        )
        self.delete_button = widgets.Button(
            description="Delete selected (0)", tooltip="Delete the ticked entries (asks first)"
        )
        self.delete_all_button = widgets.Button(
            description="Delete all\u2026",
            button_style="danger",
            tooltip="Delete every entry of this account (asks for a typed confirmation)",
        )
        self.edit_button = widgets.Button(
            description="Edit selected\u2026",
            tooltip="Change the terms of the one ticked entry (asks first)",
        )
        self.edit_form = EditForm(
            layout=widgets.Layout(border="1px solid #d0d7de", padding="0.3em 0.6em")
        )
        self.add_form = AddForm()
        self.sync_form = SyncForm()
        self.problems = ProblemsView()
        self.check_form = CheckForm()
        self.tools = widgets.Accordion(
            children=[self.add_form, self.sync_form, self.problems, self.check_form],
            selected_index=None,
        )
        for position, title in enumerate(
            ["Add an entry", "Sync a glossary file", "Problems", "Check a text"]
        ):
            self.tools.set_title(position, title)
        self.undo_button = widgets.Button(
            description="Undo", tooltip="Put back what the last deletion took"
        )
        self.snapshot_dropdown = widgets.Dropdown(
            options=[("no snapshots yet", "")],
            value="",
            description="Snapshot",
            layout=widgets.Layout(width="30em"),
        )
        self.restore_button = widgets.Button(
            description="Restore\u2026", tooltip="Put back the entries of the chosen snapshot"
        )
        self.confirm_message = widgets.HTML()
        self.purge_word_text = widgets.Text(layout=widgets.Layout(width="14em"))
        self.confirm_button = widgets.Button(description="Confirm", button_style="danger")
        self.cancel_button = widgets.Button(description="Cancel")
        self.confirm_box = widgets.VBox(
            [
                self.confirm_message,
                widgets.HBox([self.purge_word_text, self.confirm_button, self.cancel_button]),
            ],
            layout=widgets.Layout(border="1px solid #cf222e", padding="0.3em 0.6em"),
        )
        self.progress = widgets.IntProgress(value=0, min=0, max=1, description="0 / 0")
        self._sink = _ProgressSink(self.progress)
        self.status = widgets.HTML()
        self.result = widgets.HTML()
        self.result.add_class("dict-magics-latest")  # the newest result, for a reader's eye
        self.history_view = widgets.HTML()
        self.search_box = widgets.VBox(
            [
                widgets.HBox([self.search_text, self.pair_dropdown]),
                widgets.HBox([self.count_html, self.select_all_button, self.clear_button]),
                self.table_header,
                self.rows,
                self.pager,
            ]
        )

        self.search_text.observe(self._guard(self._on_search), names="value")
        self.pair_dropdown.observe(self._guard(self._on_search), names="value")
        self.purge_word_text.observe(self._guard(self._on_purge_word), names="value")
        for button, handler in [
            (self.refresh_button, self._on_refresh),
            (self.select_all_button, self._on_select_all),
            (self.clear_button, self._on_clear),
            (self.delete_button, self._on_delete),
            (self.delete_all_button, self._on_delete_all),
            (self.undo_button, self._on_undo),
            (self.restore_button, self._on_restore),
            (self.confirm_button, self._on_confirm),
            (self.edit_button, self._on_edit),
            (self.edit_form.review_button, self._on_review_edit),
            (self.edit_form.close_button, self._on_close_edit),
            (self.add_form.add_button, self._on_add),
            (self.sync_form.plan_button, self._on_sync_plan),
            (self.problems.find_button, self._on_find_problems),
            (self.check_form.check_button, self._on_check),
            (self.cancel_button, self._on_cancel),
            (self.prev_button, self._on_prev),
            (self.next_button, self._on_next),
            *((button, self._on_sort) for button in self.sort_buttons.values()),
        ]:
            button.on_click(self._guard(handler))

        super().__init__(
            [
                widgets.HBox([self.header, self.refresh_button]),
                self.search_box,
                self.ids_text,
                widgets.HBox(
                    [
                        self.delete_button,
                        self.edit_button,
                        self.delete_all_button,
                        self.undo_button,
                    ]
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
        show(self.progress, False)
        show(self.ids_text, False)
        show(self.edit_form, False)
        with self._lock:
            self._begin("list", f"Listing the entries of {self.host}\u2026", self._work_refresh)

    @classmethod
    def from_profile(cls, profile: str | None = None, **client_options: Any) -> DictPanel:
        """Build the client from a stored profile (or ``DICT_MAGICS_*``) and wrap it in a panel.

        ``client_options`` go to ``DictionaryClient`` (``timeout``, ``max_retries``, ...);
        ``workers`` is also used for batches, ``snapshots=False`` keeps none,
        ``listing_max_age`` as in ``OperationSettings``. Raises
        ``CredentialsError`` if nothing is stored.
        """
        from ..operations.context import make_client

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
        """``idle``, ``armed`` or ``running``."""
        return self._state

    @property
    def armed(self) -> str | None:
        """What Confirm will do (``delete``, ``purge``, ``restore``), when armed."""
        return self._armed.kind if self._armed else None

    @property
    def running(self) -> str | None:
        """The work in flight (``list``, ``delete``, ``purge``, ``restore``, ``undo``)."""
        return self._running

    @property
    def host(self) -> str:
        """Where this panel's requests go."""
        return self._client.host

    def __repr__(self) -> str:
        # What a page that cannot run widgets (GitHub, nbviewer, a terminal) shows instead of
        # the widget tree.
        return (
            f"DictPanel(profile={self.profile!r}, host={self.host!r}, "
            f"access_key={mask(self._client.access_key)!r}, state={self.state!r}): "
            "the curation panel; it shows in a running Jupyter front end (JupyterLab 4, "
            "Notebook 7, VS Code)"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        """The widget, with the whole ``repr`` as its plain text (ipywidgets cuts it at 110
        characters, before the words that say where the panel shows)."""
        data = super()._repr_mimebundle_(**kwargs)
        if data is not None:
            data["text/plain"] = repr(self)
        return data

    @property
    def base_url(self) -> str:
        """The base URL this panel's requests go to."""
        return self._client.base_url

    @property
    def entries(self) -> list[Entry]:
        """The entries as last listed (empty when the service has no listing)."""
        return self._index.entries

    @property
    def matches(self) -> list[Entry]:
        """The entries the search and language filter match, in the table's order."""
        entries = self._index.entries
        return [entries[i] for i in self._matches]

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
        """Block until the background work (if any) is done; ``False`` if it still runs.

        For scripts and tests that click Confirm and then need the outcome.
        """
        worker = getattr(self, "_worker", None)  # None also if __init__ failed early
        if worker is None:
            return True
        if worker is threading.current_thread():
            return False  # the work cannot wait for itself
        worker.join(timeout)
        return not worker.is_alive()

    def close(self) -> None:
        """Wait for running work, close the client, and close every widget of the panel
        (and delete the files uploaded to it)."""
        self.wait()
        uploads = getattr(self, "_uploads", None)
        if uploads is not None:
            uploads.cleanup()
        client = getattr(self, "_client", None)
        if client is not None:
            client.close()
        for child in _descendants(self):
            child.close()
        super().close()

    # -- handlers (main thread) ----------------------------------------------------------------

    def _guard(self, handler: Callable[..., None]) -> Callable[..., None]:
        """Report any exception of ``handler`` in the status line; the panel stays usable
        (back to idle, unless background work is still running)."""

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

    def _on_sort(self, button: widgets.Button) -> None:
        (column,) = [c for c, b in self.sort_buttons.items() if b is button]
        with self._lock:
            again = column == self._sorted_by
            self.sort(column, not self._descending if again else False)

    def _on_prev(self, _button: widgets.Button) -> None:
        self.show_page(self._page - 1)

    def _on_next(self, _button: widgets.Button) -> None:
        self.show_page(self._page + 1)

    def _selection_changed(self) -> None:
        with self._lock:
            self._redraw_counts()
            self._refresh()

    def _on_select_all(self, _button: widgets.Button) -> None:
        with self._lock:
            if self._state != "idle":
                return
            entries = self._index.entries
            self.rows.select(entries[i].id for i in self._matches)
        self._selection_changed()

    def _on_clear(self, _button: widgets.Button) -> None:
        if self._state != "idle":
            return
        self.rows.clear()
        self._selection_changed()

    def _on_refresh(self, _button: widgets.Button) -> None:
        with self._lock:
            if self._state != "idle":
                return
            self._begin("list", f"Listing the entries of {self.host}\u2026", self._work_refresh)

    def _on_delete(self, _button: widgets.Button) -> None:
        if not self.listing_supported:
            self._arm_typed_ids()
            return
        with self._lock:
            by_id = {e.id: e for e in self._index.entries}
            going = [by_id[i] for i in self.rows.selected if i in by_id]
        if not going:
            self._set_status("Tick one or more entries first.", "error")
            return
        message = view.confirm_delete_html(going, self.profile, self.host, self._snapshots_on)
        ids = tuple(e.id for e in going)
        if self._arm(Armed("delete", ids), message):
            self._set_status("Check what will be deleted, then press Confirm or Cancel.", "info")

    def _arm_typed_ids(self) -> None:
        ids = parse_ids(self.ids_text.value)
        if not ids:
            self._set_status("Type one or more entry ids first.", "error")
            return
        problems = []
        for entry_id in ids:
            try:
                check_id(entry_id)
            except InvalidIdError as exc:
                problems.append(PANEL.worded(exc))
        if problems:
            self._set_status("Nothing armed: " + " ".join(problems), "error")
            return
        message = view.confirm_ids_html(ids, self.profile, self.host)
        if self._arm(Armed("delete", tuple(ids)), message):
            self._set_status("Check what will be deleted, then press Confirm or Cancel.", "info")

    def _on_delete_all(self, _button: widgets.Button) -> None:
        # The operation states the plan (count, copy, word) from the listing shown; it lists
        # again and keeps the snapshot itself once confirmed.
        stated = purge_plan(
            self.profile,
            self.host,
            self._index.entries if self._listed else None,
            str(snapshot_dir()) if self._snapshots_on else None,
        )
        message = view.confirm_purge_html(stated, PANEL.names)
        if self._arm(Armed("purge", plan=stated), message):
            self.purge_word_text.placeholder = f"type {stated.word}"
            self.purge_word_text.tooltip = f"type {stated.word} to enable Confirm"
            self._set_status(
                f"Type {stated.word} (or the host) to enable Confirm, or press Cancel.", "info"
            )

    def _on_restore(self, _button: widgets.Button) -> None:
        info = self._snapshots.get(self.snapshot_dropdown.value)
        if info is None:
            self._set_status("Choose a snapshot first.", "error")
            return
        if self._arm(Armed("restore", snapshot=info), view.confirm_restore_html(info, self.host)):
            self._set_status("Press Confirm to restore, or Cancel.", "info")

    def _on_undo(self, _button: widgets.Button) -> None:
        with self._lock:
            undo = self.undo
            if self._state != "idle" or undo is None:
                return
            self._begin("undo", f"Putting back {undo.what} on {self.host}\u2026", self._work_undo)

    def _on_purge_word(self, _change: dict[str, Any]) -> None:
        self._refresh()

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
                return  # a second click, or a click with nothing armed: send nothing
            if armed.kind == "purge":
                word = self.purge_word_text.value
                if armed.plan is None or not armed.plan.accepts(word):
                    needed = armed.plan.word if armed.plan is not None else "the word"
                    self._set_status(
                        f"Type {needed} (or the host) exactly to enable Confirm.", "error"
                    )
                    return
                self._begin(
                    "purge", f"Deleting every entry on {self.host}\u2026", self._work_purge, word
                )
            elif armed.kind == "update":
                assert armed.old is not None and armed.new is not None
                self._begin(
                    "update",
                    f"Changing entry {armed.old.id} on {self.host}\u2026",
                    self._work_update,
                    armed.old,
                    armed.new,
                )
            elif armed.kind == "add":
                assert armed.new is not None
                self._begin(
                    "add",
                    f"Adding an entry on {self.host}\u2026",
                    self._work_add,
                    armed.new,
                    armed.duplicate,
                )
            elif armed.kind == "sync":
                assert armed.sync is not None
                self._begin(
                    "sync",
                    f"Applying the sync of {armed.sync.name} to {self.host}\u2026",
                    self._work_sync,
                    armed.sync,
                    total=armed.sync.changes,
                )
            elif armed.kind == "delete":
                what = count(len(armed.ids), "entry", "entries")
                self._begin(
                    "delete",
                    f"Deleting {what} on {self.host}\u2026",
                    self._work_delete,
                    armed.ids,
                    total=len(armed.ids),
                )
            else:
                assert armed.snapshot is not None
                self._begin(
                    "restore",
                    f"Restoring {view.snapshot_label(armed.snapshot)} to {self.host}\u2026",
                    self._work_restore,
                    str(armed.snapshot.path),
                    total=armed.snapshot.count,
                )

    # -- background work (worker thread: traits only) -----------------------------------------

    def _begin(
        self, kind: str, what: str, work: Callable[..., None], *args: Any, total: int = 0
    ) -> None:
        """Start ``work(*args)`` on the worker thread; called with the lock held."""
        self._state, self._armed, self._running = "running", None, kind
        self._cancel = threading.Event()
        self._warnings = []
        self._worker = threading.Thread(
            target=self._guard(self._work), args=(work, args), name="dict-panel", daemon=True
        )
        self.confirm_message.value = view.running_html(what)
        self._set_status(what, "busy")
        self._show_progress(total if total > 1 else 0)
        self._refresh()
        self._worker.start()

    def _work(self, work: Callable[..., None], args: tuple[Any, ...]) -> None:
        kind = self._running
        try:
            work(*args)
        except (DictMagicsError, ServiceError) as exc:
            self._set_status(PANEL.worded(exc), "error")
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
                    self._arm(*follow)
                self._refresh()

    def _work_refresh(self) -> None:
        if self._reload():
            self._set_status(self._loaded_message(), "info")

    def _work_delete(self, ids: tuple[str, ...]) -> None:
        result = delete(
            self._settings,
            ids,
            progress=self._sink,
            cancel=self._cancel,
            client=self._client,
            warn=self._warnings.append,
        )
        result = replace(result, names=PANEL.names)
        self._record(result)
        gone = _may_be_gone(result)
        if result.snapshot and gone:  # the result says Undo puts back this snapshot
            self.undo = Undo(result.snapshot, count(gone, "entry", "entries"))
        if result.ok and not self.listing_supported:
            self.ids_text.value = ""
        self._after_change(interruption(result))

    def _work_purge(self, word: str) -> None:
        result = purge(
            self._settings,
            prompter=ScriptedPrompter([word]),
            client=self._client,
            warn=self._warnings.append,
        )
        result = replace(result, names=PANEL.names)
        self._record(result)
        if result.snapshot and _may_be_gone(result):
            self.undo = Undo(result.snapshot, "every entry")
        self._after_change(None)

    def _work_restore(self, source: str) -> None:
        result = self._restore(source)
        self._record(result)
        undo = self.undo
        if result.ok and undo is not None and Path(undo.snapshot) == Path(source):
            self.undo = None  # what Undo would put back is back
        self._after_change(self._cancelled_note())

    def _work_undo(self) -> None:
        undo = self.undo
        assert undo is not None
        result = self._restore(undo.snapshot)
        self._record(result)
        if result.ok and self.undo is undo:
            self.undo = None
        self._after_change(self._cancelled_note())

    def _restore(self, source: str) -> RestoreResult:
        """Put back ``source``: a snapshot of this profile and host, so no second question."""
        return restore(
            self._settings,
            source,
            prompter=ScriptedPrompter(reason="the panel asked already"),
            progress=self._sink,
            yes=True,
            cancel=self._cancel,
            client=self._client,
            warn=self._warnings.append,
        )

    def _cancelled_note(self) -> str | None:
        return "Cancelled: what was not sent was not restored." if self._cancel.is_set() else None

    def _after_change(self, note: str | None) -> None:
        """List again (the dictionary changed), then say what there is to say."""
        listed = self._reload()
        notes = [PANEL.worded(n) for n in (note, *self._warnings) if n]
        if notes:
            self._set_status(" ".join(notes), "warning")
        elif listed:
            self._set_status("", "info")

    def _reload(self) -> bool:
        """List the entries and the snapshots; ``False`` (status set) if the listing failed."""
        self._load_snapshots()
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

    # -- listing and list display ----------------------------------------------------------------

    def _use_listing(self, listing: EntryList) -> None:
        index = EntryIndex(listing.entries)
        options = [("all", ALL_PAIRS)] + [
            (view.pair_label(*pair, found), pair) for pair, found in index.pairs
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
        """Filter, sort and redraw the page: what every keystroke in the search box, every
        click on a column's header and every page costs."""
        with self._lock:
            found = self._index.search(self.search_text.value, self.pair_dropdown.value)
            if self._sorted_by is not None:
                found = self._index.order(found, self._sorted_by, self._descending)
            self._matches = found
            self._page = min(max(self._page, 0), self.pages - 1)
            entries = self._index.entries
            start = self._page * PAGE
            self.rows.draw([entries[i] for i in found[start : start + PAGE]])
            for column, button in self.sort_buttons.items():
                label = view.sort_label(column, self._sorted_by, self._descending)
                if button.description != label:
                    button.description = label
            self._redraw_counts()
            self._refresh()

    def _redraw_counts(self) -> None:
        total, matches = len(self._index), len(self._matches)
        selected = len(self.rows.selected)
        first = min(self._page * PAGE + 1, matches)
        last = min((self._page + 1) * PAGE, matches)
        self.count_html.value = view.count_html(total, matches, first, last, selected, self.host)
        self.page_html.value = view.page_html(self._page, self.pages)
        if self.listing_supported:
            self.delete_button.description = f"Delete selected ({selected:,})"

    def _load_snapshots(self) -> None:
        found = history.snapshots(profile=self.profile, host=self.host)
        with self._lock:
            self._snapshots = {str(info.path): info for info in found}
            options = [(view.snapshot_label(info), str(info.path)) for info in found]
            self.snapshot_dropdown.options = options or [("no snapshots yet", "")]

    def _loaded_message(self) -> str:
        return f"Listed {count(len(self._index), 'entry', 'entries')} at {time.strftime('%X')}."

    # -- display helpers -----------------------------------------------------------------------

    @property
    def _snapshots_on(self) -> bool:
        return self._settings.snapshots

    def _arm(self, armed: Armed, message: str) -> bool:
        """Show the confirmation for ``armed``; only from idle."""
        with self._lock:
            if self._state != "idle":
                return False
            self._state, self._armed = "armed", armed
            self.confirm_message.value = message
            self.purge_word_text.value = ""
            show(self.progress, False)
            self._refresh()
        return True

    def _purge_word_ok(self) -> bool:
        armed = self._armed
        stated = armed.plan if armed is not None else None
        return stated is not None and stated.accepts(self.purge_word_text.value)

    def _refresh(self) -> None:
        """Make every control match the state: the only place that enables or disables them."""
        with self._lock:
            state, armed = self._state, self._armed
            idle = state == "idle"
            listing = self.listing_supported
            purge_armed = armed is not None and armed.kind == "purge"
            self.ids_text.disabled = not idle
            self.refresh_button.disabled = not idle
            self.select_all_button.disabled = not idle or not self._matches
            self.clear_button.disabled = not idle or not self.rows.selected
            self.delete_button.disabled = not idle or (listing and not self.rows.selected)
            # Without a listing no snapshot can be taken, and the purge refuses to go without.
            self.delete_all_button.disabled = not idle or (not listing and self._snapshots_on)
            self.undo_button.disabled = not idle or self.undo is None
            self.snapshot_dropdown.disabled = not idle or not self._snapshots
            self.restore_button.disabled = not idle or not self.snapshot_dropdown.value
            self.edit_button.disabled = not idle or not listing or len(self.rows.selected) != 1
            self.edit_form.set_disabled(not idle)
            self.add_form.set_disabled(not idle)
            self.sync_form.set_disabled(not idle)
            self.problems.set_disabled(not idle)
            self.check_form.set_disabled(not idle)
            self.prev_button.disabled = self._page <= 0
            self.next_button.disabled = self._page >= self.pages - 1
            show(self.pager, self.pages > 1)
            show(self.confirm_box, not idle)
            show(self.purge_word_text, purge_armed)
            self.purge_word_text.disabled = not purge_armed
            show(self.confirm_button, state == "armed")
            self.confirm_button.disabled = state != "armed" or (
                purge_armed and not self._purge_word_ok()
            )
            self.cancel_button.disabled = idle

    def _show_progress(self, total: int) -> None:
        self.progress.max = max(total, 1)
        self.progress.value = 0
        self.progress.description = f"0 / {total}"
        show(self.progress, total > 1)

    def _set_status(self, message: str, kind: str) -> None:
        self.status.value = view.status_html(message, kind)

    def _record(self, result: Result) -> None:
        html = view.any_result_html(result)
        self.history.append(result)
        stamp = time.strftime("%H:%M:%S")
        self._history_html.append(f'<li><span style="color:#57606a">{stamp}</span> {html}</li>')
        self.result.value = html
        self.history_view.value = view.history_html(list(reversed(self._history_html)))


def _may_be_gone(result: DeleteResult | BatchResult) -> int:
    """How many entries a delete or purge deleted or may have deleted (its outcome unknown):
    the result then names its snapshot and Undo, so Undo must put back that snapshot."""
    if isinstance(result, BatchResult):
        return len({r.entry_id for r in result.results if r.ok or r.outcome_unknown})
    return int(result.ok or result.outcome_unknown)


class _ProgressSink:
    """The panel's ``ProgressSink``: its own bar, set from the worker thread (traits only)."""

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
