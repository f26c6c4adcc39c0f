"""The confirm-then-delete widget panel (``%dict_panel``), imported only when it is used.

Nothing is ever deleted by one click: Delete and Delete all only *arm* a confirmation row that
names exactly what will go and where, and a purge also needs a typed word. Requests run on a
background thread so the notebook stays responsive; that thread only sets widget traits, which
ipywidgets syncs safely from any thread (``with output:`` from a thread is not safe).
ipywidgets hides exceptions raised in callbacks in a log, so every handler reports its own
errors in the panel's status area and leaves the panel usable.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import deque
from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any, Literal

import ipywidgets as widgets

from ..errors import DictMagicsError, InvalidIdError
from ..operations.context import OperationSettings
from ..operations.delete import delete, interruption
from ..operations.prompts import ScriptedPrompter
from ..operations.purge import purge, purge_confirmed
from ..operations.user_input import ID_SEPARATORS
from ..profiles.secret import mask
from ..render import batch_html, result_html
from ..service.models import BatchResult, DeleteResult
from ..service.paths import check_id
from ..settings import PURGE_WORD, WORKERS

if TYPE_CHECKING:
    from ..service.client import DictionaryClient

__all__ = ["DictPanel", "parse_ids"]

HISTORY_SIZE = 10
_STATUS_COLOUR = {"info": "#57606a", "error": "#cf222e", "busy": "#0969da"}

State = Literal["idle", "armed", "running"]
Result = DeleteResult | BatchResult


def parse_ids(text: str) -> list[str]:
    """Split what the user typed on spaces and commas, keeping the first of any duplicates."""
    return list(dict.fromkeys(part for part in ID_SEPARATORS.split(text) if part))


def _show(widget: widgets.Widget, visible: bool) -> None:
    widget.layout.display = "" if visible else "none"


class DictPanel(widgets.VBox):
    """Delete entries (or every entry) after an explicit confirmation, with results inline.

    The panel owns ``client`` and closes it in ``close()``. ``state`` is ``"idle"``,
    ``"armed"`` (a confirmation is showing) or ``"running"`` (a request is in flight);
    ``wait()`` blocks until the background request, if any, has finished.
    """

    def __init__(
        self, client: DictionaryClient, *, profile: str, workers: int = WORKERS, **kwargs: Any
    ) -> None:
        self._settings = OperationSettings(profile=profile, workers=workers)
        self._client = client
        self.profile = profile
        self.workers = workers
        self.history: deque[Result] = deque(maxlen=HISTORY_SIZE)
        self._history_html: deque[str] = deque(maxlen=HISTORY_SIZE)
        # Guards the state and the controls that show it; re-entrant because setting a
        # trait can call an observer (the purge word) that refreshes the controls again.
        self._lock = threading.RLock()
        self._state: State = "idle"
        self._armed: tuple[str, ...] | None = None  # () arms the purge
        self._worker: threading.Thread | None = None

        self.header = widgets.HTML(self._header_html())
        self.ids_text = widgets.Text(
            placeholder="entry ids, separated by spaces or commas",
            description="Entry ids",
            layout=widgets.Layout(width="28em"),
        )
        self.delete_button = widgets.Button(
            description="Delete", tooltip="Delete the entries named on the left"
        )
        self.delete_all_button = widgets.Button(
            description="Delete all\u2026",
            button_style="danger",
            tooltip="Delete every entry of this account (asks for a typed confirmation)",
        )
        self.confirm_message = widgets.HTML()
        self.purge_word_text = widgets.Text(
            placeholder=f"type {PURGE_WORD}",
            tooltip=f"type {PURGE_WORD} to enable Confirm",
            layout=widgets.Layout(width="14em"),
        )
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
        self.history_view = widgets.HTML()

        self.delete_button.on_click(self._guard(self._on_delete))
        self.delete_all_button.on_click(self._guard(self._on_delete_all))
        self.confirm_button.on_click(self._guard(self._on_confirm))
        self.cancel_button.on_click(self._guard(self._on_cancel))
        self.purge_word_text.observe(self._guard(self._on_purge_word), names="value")

        super().__init__(
            [
                self.header,
                widgets.HBox([self.ids_text, self.delete_button, self.delete_all_button]),
                self.confirm_box,
                self.progress,
                self.status,
                self.result,
                self.history_view,
            ],
            **kwargs,
        )
        _show(self.progress, False)
        self._refresh()

    @classmethod
    def from_profile(cls, profile: str | None = None, **client_options: Any) -> DictPanel:
        """Build the client from a stored profile (or ``DICT_MAGICS_*``) and wrap it in a panel.

        ``client_options`` go to ``DictionaryClient`` (``timeout``, ``max_retries``, ...);
        ``workers`` is also used for batches. Raises ``CredentialsError`` if nothing is stored.
        """
        from ..operations.session import make_client

        workers = int(client_options.pop("workers", WORKERS))
        client, creds = make_client(profile, workers=workers, **client_options)
        try:
            return cls(client, profile=creds.profile, workers=workers)
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
        )

    # -- public ------------------------------------------------------------------------------

    @property
    def state(self) -> State:
        """``idle``, ``armed`` or ``running``."""
        return self._state

    @property
    def host(self) -> str:
        """Where this panel's requests go."""
        return self._client.host

    @property
    def base_url(self) -> str:
        """The base URL this panel's requests go to."""
        return self._client.base_url

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the background request (if any) is done; ``False`` if it still runs.

        For scripts and tests that click Confirm and then need the outcome.
        """
        worker = getattr(self, "_worker", None)  # None also if __init__ failed early
        if worker is None:
            return True
        if worker is threading.current_thread():
            return False  # the request cannot wait for itself
        worker.join(timeout)
        return not worker.is_alive()

    def close(self) -> None:
        """Wait for a running request, close the client, and close every widget of the panel."""
        self.wait()
        client = getattr(self, "_client", None)
        if client is not None:
            client.close()
        for child in _descendants(self):
            child.close()
        super().close()

    # -- handlers (main thread) ----------------------------------------------------------------

    def _guard(self, handler: Callable[..., None]) -> Callable[..., None]:
        """Report any exception of ``handler`` in the status area and return to idle."""

        @functools.wraps(handler)
        def guarded(*args: Any) -> None:
            try:
                handler(*args)
            except Exception as exc:
                worker = self._worker
                in_worker = threading.current_thread() is worker
                with self._lock:
                    stuck = worker is None or not worker.is_alive()
                    if self._state != "running" or in_worker or stuck:
                        self._state, self._armed = "idle", None
                message = f"Unexpected error: {type(exc).__name__}: {exc}"
                if in_worker:
                    message += " (the request may or may not have reached the service)"
                self._set_status(message, "error")
                self._refresh()

        return guarded

    def _on_delete(self, _button: widgets.Button) -> None:
        ids = parse_ids(self.ids_text.value)
        if not ids:
            self._set_status("Type one or more entry ids first.", "error")
            return
        problems = []
        for entry_id in ids:
            try:
                check_id(entry_id)
            except InvalidIdError as exc:
                problems.append(str(exc))
        if problems:
            self._set_status("Nothing armed: " + " ".join(problems), "error")
            return
        if len(ids) == 1:
            what = f"entry <code>{escape(repr(ids[0]))}</code>"
        else:
            listed = ", ".join(f"<code>{escape(repr(i))}</code>" for i in ids)
            what = (
                f"these {len(ids)} entries: "
                f'<div style="max-height:8em;overflow:auto">{listed}</div>'
            )
        message = f"<b>Delete</b> {what} on <b>{escape(self.host)}</b>?"
        if self._arm(tuple(ids), message):
            self._set_status("Check what will be deleted, then press Confirm or Cancel.", "info")

    def _on_delete_all(self, _button: widgets.Button) -> None:
        message = (
            f"<b>Delete EVERY entry</b> of profile <code>{escape(self.profile)}</code> on "
            f"<b>{escape(self.host)}</b>? This cannot be undone. To enable Confirm, type "
            f"<code>{escape(PURGE_WORD)}</code> (or <code>{escape(self.host)}</code>) "
            "in the box below."
        )
        if self._arm((), message):
            self._set_status(
                f"Type {PURGE_WORD} (or the host) to enable Confirm, or press Cancel.", "info"
            )

    def _on_purge_word(self, _change: dict[str, Any]) -> None:
        self._refresh()

    def _on_cancel(self, _button: widgets.Button) -> None:
        with self._lock:
            if self._state != "armed":
                return
            self._state, self._armed = "idle", None
        self._set_status("Cancelled: nothing was sent.", "info")
        self._refresh()

    def _on_confirm(self, _button: widgets.Button) -> None:
        with self._lock:
            if self._state != "armed" or self._armed is None:
                return  # a second click, or a click with nothing armed: send nothing
            target = self._armed
            answer = self.purge_word_text.value
            if not target and not self._purge_word_ok():
                self._set_status(
                    f"Type {PURGE_WORD} (or the host) exactly to enable Confirm.", "error"
                )
                return
            self._state, self._armed = "running", None
            self._worker = threading.Thread(
                target=self._guard(self._run),
                args=(target, answer),
                name="dict-panel",
                daemon=True,
            )
        self._refresh()
        if not target:
            what = "every entry"
        elif len(target) <= 5:
            what = ", ".join(repr(i) for i in target)
        else:
            what = f"{len(target)} entries"
        self._set_status(f"Deleting {what} on {self.host}\u2026", "busy")
        self._show_progress(len(target) if len(target) > 1 else 0)
        self._worker.start()

    # -- background work (worker thread: traits only) -----------------------------------------

    def _run(self, target: tuple[str, ...], answer: str) -> None:
        """The operation the confirmation armed: ``()`` is the purge, confirmed by ``answer``."""
        try:
            result: Result
            if target:
                result = delete(self._settings, target, progress=self._sink, client=self._client)
            else:
                prompter = ScriptedPrompter([answer])
                result = purge(self._settings, prompter, client=self._client)
            html = batch_html(result) if isinstance(result, BatchResult) else result_html(result)
            self._record(result, html)
            if result.ok:
                self.ids_text.value = ""
            self._set_status(interruption(result) or "", "error")
        except DictMagicsError as exc:
            self._set_status(f"{exc}", "error")
        finally:
            with self._lock:
                self._state, self._armed = "idle", None
            self._refresh()

    # -- display helpers -----------------------------------------------------------------------

    def _arm(self, target: tuple[str, ...], message: str) -> bool:
        """Show the confirmation for ``target`` (``()``: the purge); only from idle."""
        with self._lock:
            if self._state != "idle":
                return False
            self._state, self._armed = "armed", target
        self.confirm_message.value = message
        self.purge_word_text.value = ""
        _show(self.progress, False)
        self._refresh()
        return True

    def _purge_word_ok(self) -> bool:
        return purge_confirmed(self.purge_word_text.value, self.host)

    def _refresh(self) -> None:
        """Make every control match the state: the only place that enables or disables them."""
        with self._lock:
            self._apply_state(self._state, self._armed)

    def _apply_state(self, state: State, armed: tuple[str, ...] | None) -> None:
        idle = state == "idle"
        self.ids_text.disabled = not idle
        self.delete_button.disabled = not idle
        self.delete_all_button.disabled = not idle
        _show(self.confirm_box, state == "armed")
        purge = state == "armed" and armed == ()
        _show(self.purge_word_text, purge)
        self.purge_word_text.disabled = not purge
        self.cancel_button.disabled = state != "armed"
        self.confirm_button.disabled = state != "armed" or (purge and not self._purge_word_ok())

    def _show_progress(self, total: int) -> None:
        self.progress.max = max(total, 1)
        self.progress.value = 0
        self.progress.description = f"0 / {total}"
        _show(self.progress, total > 1)

    def _set_status(self, message: str, kind: str) -> None:
        if not message:
            self.status.value = ""
            return
        self.status.value = (
            f'<div class="dict-magics-status dict-magics-status-{kind}" '
            f'style="color:{_STATUS_COLOUR[kind]}">{escape(message)}</div>'
        )

    def _record(self, result: Result, html: str) -> None:
        self.history.append(result)
        stamp = time.strftime("%H:%M:%S")
        self._history_html.append(f'<li><span style="color:#57606a">{stamp}</span> {html}</li>')
        self.result.value = html
        items = "".join(reversed(self._history_html))
        self.history_view.value = (
            f'<details class="dict-magics-history"><summary>Recent results '
            f"({len(self._history_html)}, newest first)</summary>"
            f'<ol style="margin:0.2em 0">{items}</ol></details>'
        )

    def _header_html(self) -> str:
        return (
            '<div class="dict-magics-header"><b>Dictionary entries</b> &mdash; '
            f"profile <code>{escape(self.profile)}</code>, "
            f"host <code>{escape(self._client.host)}</code>, "
            f"access key <code>{escape(mask(self._client.access_key))}</code></div>"
        )


class _ProgressSink:
    """The panel's ``ProgressSink``: its own bar, set from the worker thread (traits only)."""

    def __init__(self, bar: widgets.IntProgress) -> None:
        self.bar = bar

    def start(self, total: int, label: str) -> None:
        self.bar.max = max(total, 1)

    def __call__(self, done: int, total: int, result: DeleteResult) -> None:
        self.bar.max = total
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
