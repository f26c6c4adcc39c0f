"""Progress of a batch of deletions (or of a restore's additions): a widget bar in a notebook,
a text bar in a terminal.

The client calls ``update(done, total, result)`` from its worker threads (one call at a time),
so both bars only set values: the widget one sets traits, which ipywidgets syncs safely from any
thread, and the text one writes whole lines to the stream chosen when it started.
ipywidgets is imported only when a notebook bar is actually shown.
"""

from __future__ import annotations

import sys
import threading
from typing import IO, TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..models import AddResult, DeleteResult

    Result = DeleteResult | AddResult
    """A deletion's or an addition's (a restore's) result: the bars read ``ok`` only."""

__all__ = [
    "BarSink",
    "ProgressDisplay",
    "TextProgress",
    "WidgetProgress",
    "in_notebook",
    "start",
]

BAR_WIDTH = 30


class ProgressDisplay(Protocol):
    """What the magics need from a progress bar."""

    def update(self, done: int, total: int, result: Result) -> None: ...

    def close(self) -> None: ...


def in_notebook(shell: Any) -> bool:
    """True when the shell runs in a kernel (a notebook or another front end that draws widgets)."""
    return getattr(shell, "kernel", None) is not None


class TextProgress:
    """``label [#####.....] 5/10 (1 failed)``: redrawn in place on a terminal, else a few lines."""

    def __init__(self, total: int, label: str, stream: IO[str] | None = None) -> None:
        self.total = total
        self.label = label
        self.done = 0
        self.failed = 0
        self.note = ""
        self._stream = stream if stream is not None else sys.stdout
        self._lock = threading.Lock()
        self._shown: tuple[int, int] | None = None
        self._closed = False
        isatty = getattr(self._stream, "isatty", None)
        self._live = bool(isatty and isatty())
        self._draw()

    def _line(self) -> str:
        filled = BAR_WIDTH * self.done // self.total if self.total else BAR_WIDTH
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        failed = f" ({self.failed} failed)" if self.failed else ""
        note = f" \u2014 {self.note}" if self.note else ""
        return f"{self.label} [{bar}] {self.done}/{self.total}{failed}{note}"

    def _draw(self) -> None:
        # A terminal redraws the line in place whenever the percentage or the failure count
        # changes; a log or pipe gets a whole line at each quarter, never one per entry.
        percent = 100 * self.done // self.total if self.total else 100
        key = (percent, self.failed, self.note) if self._live else (percent // 25, 0, self.note)
        if key == self._shown:
            return
        self._shown = key
        if self._live:
            self._stream.write("\r" + self._line())
        else:
            self._stream.write(self._line() + "\n")
        self._stream.flush()

    def update(self, done: int, total: int, result: Result) -> None:
        """Record one more result (called from the client's worker threads)."""
        with self._lock:
            if self._closed:
                return
            self.done, self.total = done, total
            self.failed += 0 if result.ok else 1
            self.note = ""
            self._draw()

    def waiting(self, seconds: float, reason: str) -> None:
        """Say that every worker waits (the service's rate limit), until the next result."""
        with self._lock:
            if not self._closed:
                self.note = f"waiting {seconds:.0f} s: {reason}"
                self._draw()

    def close(self) -> None:
        """End the bar's line so what follows starts on a fresh one."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._live:
                self._stream.write("\n")
            elif self._shown != (100 // 25, 0, ""):
                self._stream.write(self._line() + "\n")
            self._stream.flush()


class WidgetProgress:
    """An ipywidgets ``IntProgress`` with a count beside it, shown in the cell's output.

    Its plain-text form (what GitHub and other viewers that draw no widgets show of a saved
    notebook) says what it is and where it ended, not ``HBox(children=...)``: the output is
    displayed with a display id and replaced by its final state when the bar closes.
    """

    def __init__(self, total: int, label: str) -> None:
        import ipywidgets as widgets
        from IPython.display import display

        self.total = total
        self.failed = 0
        self.note = ""
        self.bar = widgets.IntProgress(
            value=0, min=0, max=max(total, 1), description="", bar_style="info"
        )
        self.text = widgets.HTML(self._html(label, 0))
        self.label = label
        self.box = widgets.HBox([self.bar, self.text])
        self._lock = threading.Lock()
        self._closed = False
        self._handle = display(self._bundle(), raw=True, display_id=True)

    def plain(self) -> str:
        """The bar in words, for viewers that draw no widgets."""
        failed = f", {self.failed} failed" if self.failed else ""
        state = "finished" if self._closed else "running"
        return (
            f"{self.label}: {self.bar.value}/{self.total}{failed} ({state}; a progress bar "
            "widget, drawn when the notebook runs in Jupyter)"
        )

    def _bundle(self) -> dict[str, Any]:
        data: dict[str, Any] = dict(self.box._repr_mimebundle_() or {})
        data["text/plain"] = self.plain()
        return data

    def _html(self, label: str, done: int) -> str:
        from html import escape

        failed = f", {self.failed} failed" if self.failed else ""
        note = f" \u2014 {self.note}" if self.note else ""
        return escape(f"{label}: {done}/{self.total}{failed}{note}")

    def update(self, done: int, total: int, result: Result) -> None:
        """Set the bar's value (trait updates are safe from the client's worker threads)."""
        with self._lock:
            self.failed += 0 if result.ok else 1
            self.total = total
            self.bar.max = max(total, 1)
            self.bar.value = done
            if self.failed:
                self.bar.bar_style = "warning"
            self.note = ""
            self.text.value = self._html(self.label, done)

    def waiting(self, seconds: float, reason: str) -> None:
        """Say that every worker waits (the service's rate limit): traits only, any thread."""
        with self._lock:
            self.note = f"waiting {seconds:.0f} s: {reason}"
            self.text.value = self._html(self.label, self.bar.value)

    def close(self) -> None:
        """Leave the bar at its final state: green when every entry went, red otherwise."""
        with self._lock:
            if self._closed:
                return
            complete = self.bar.value >= self.total
            self.bar.bar_style = "success" if complete and not self.failed else "danger"
            self._closed = True
            bundle = self._bundle()
        if self._handle is not None:
            self._handle.update(bundle, raw=True)


def start(
    total: int, label: str, *, shell: Any = None, stream: IO[str] | None = None
) -> ProgressDisplay:
    """A widget bar when ``shell`` runs in a kernel and ipywidgets loads, else a text bar."""
    if in_notebook(shell):
        try:
            return WidgetProgress(total, label)
        except ImportError:
            pass
    return TextProgress(total, label, stream)


class BarSink:
    """The ``ProgressSink`` of the magics and the command line: the right bar for where it runs.

    The bar appears when the operation starts a batch (so one id draws nothing) and is closed
    when the batch ends, whatever happened.
    """

    def __init__(self, *, shell: Any = None, stream: IO[str] | None = None) -> None:
        self._shell = shell
        self._stream = stream
        self._bar: ProgressDisplay | None = None

    def start(self, total: int, label: str) -> None:
        self._bar = start(total, label, shell=self._shell, stream=self._stream)

    def __call__(self, done: int, total: int, result: Result) -> None:
        if self._bar is not None:
            self._bar.update(done, total, result)

    def waiting(self, seconds: float, reason: str) -> None:
        if self._bar is not None:
            self._bar.waiting(seconds, reason)

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.close()
