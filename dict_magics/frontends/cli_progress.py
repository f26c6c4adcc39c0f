"""Progress of a long batch where no terminal redraws a bar: in a log, a CI job, or a pipe.

``LogProgress`` writes a whole line every ``interval`` seconds while a batch runs (done / total,
rate, failures) and one last line when it ends, so a long job shows it is alive; a batch over
before the first interval writes nothing. ``JsonlResults`` streams each result as one JSON line
the moment it arrives, then whatever only the end of the batch settled, then a summary.
Both are ``ProgressSink``s (``operations.context``); ``Tee`` feeds two at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from .cli_output import Output, result_json, summary_json

if TYPE_CHECKING:
    from ..models import BatchResult, DeleteResult
    from ..operations.context import ProgressSink

__all__ = ["PROGRESS_EVERY", "JsonlResults", "LogProgress", "Tee"]

PROGRESS_EVERY = 5.0
"""Seconds between two progress lines in a log."""


class LogProgress:
    """``Deleting 5000 entries at host: 1200/5000 done, 240.0/s, 3 failed`` every few seconds."""

    def __init__(
        self,
        stream: IO[str],
        interval: float = PROGRESS_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream
        self._interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self._label = ""
        self._total = self._done = self._failed = self._lines = 0
        self._started = 0.0

    def start(self, total: int, label: str) -> None:
        self._label, self._total = label, total
        self._started = self._clock()
        self._thread = threading.Thread(target=self._tick, name="dict-magics-progress", daemon=True)
        self._thread.start()

    def __call__(self, done: int, total: int, result: Any) -> None:
        with self._lock:
            self._done, self._total = done, total
            self._failed += 0 if result.ok else 1

    def waiting(self, seconds: float, reason: str) -> None:
        """One line when every worker pauses for the service's rate limit."""
        try:
            self._stream.write(f"{self._label}: waiting {seconds:.0f} s: {reason}\n")
            self._stream.flush()
        except (OSError, ValueError):
            pass

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join()
        if self._lines:
            self._write(final=True)

    def _tick(self) -> None:
        while not self._stopped.wait(self._interval):
            self._write(final=False)

    def _write(self, *, final: bool) -> None:
        with self._lock:
            elapsed = max(self._clock() - self._started, 1e-9)
            line = (
                f"{self._label}: {self._done}/{self._total} done, "
                f"{self._done / elapsed:.1f}/s, {self._failed} failed"
            )
            if final:
                line += f", finished in {elapsed:.1f} s"
            self._lines += 1
        try:
            self._stream.write(line + "\n")
            self._stream.flush()
        except (OSError, ValueError):
            pass  # a closed or broken stderr must not stop the batch


class Tee:
    """Two progress sinks fed as one (either may be ``None``)."""

    def __init__(self, *sinks: ProgressSink | None) -> None:
        self._sinks = [s for s in sinks if s is not None]

    def start(self, total: int, label: str) -> None:
        for sink in self._sinks:
            sink.start(total, label)

    def __call__(self, done: int, total: int, result: DeleteResult) -> None:
        for sink in self._sinks:
            sink(done, total, result)

    def waiting(self, seconds: float, reason: str) -> None:
        for sink in self._sinks:
            told = getattr(sink, "waiting", None)
            if told is not None:
                told(seconds, reason)

    def stop(self) -> None:
        for sink in self._sinks:
            sink.stop()


class JsonlResults:
    """``--jsonl``: each result on its own line as it arrives, then a ``{"summary": ...}`` line.

    A result that only the end of the batch settled (one id, which is not a batch; an unknown
    outcome a listing resolved; an id Ctrl-C left unsent) gets its line then, so the last line
    for an id is always its final outcome.
    """

    def __init__(self, output: Output) -> None:
        self._output = output
        self._lock = threading.Lock()
        self._streamed: dict[str | None, tuple[str, bool]] = {}

    def start(self, total: int, label: str) -> None:
        """Nothing to say before the first result."""

    def __call__(self, done: int, total: int, result: DeleteResult) -> None:
        with self._lock:
            self._streamed[result.entry_id] = (result.outcome, result.verified)
        self._output.line(result_json(result))

    def stop(self) -> None:
        """The summary needs the final result: see ``finish``."""

    def finish(self, result: DeleteResult | BatchResult, warnings: list[str]) -> None:
        """Lines for what was settled after it arrived (or never arrived), then the summary."""
        seen: set[str | None] = set()
        for one in getattr(result, "results", [result]):
            if one.entry_id in seen:
                continue
            seen.add(one.entry_id)
            with self._lock:
                streamed = self._streamed.get(one.entry_id)
            if streamed != (one.outcome, one.verified):
                self._output.line(result_json(one))
        self._output.line(summary_json(result, warnings))
