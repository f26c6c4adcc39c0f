"""What the front ends print: the ``--json`` shapes, and the progress of a long batch.

A deletion is always ``{"results": [...], "ok", ...}``, for one id, many, or the purge, so a
script never has to guess. Progress displays are fed from worker threads: they only set values
or write lines."""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .. import models as m

__all__ = ["JsonlResults", "Output", "TextProgress", "WidgetProgress", "dumps", "progress_for"]


def _plain(value: Any) -> Any:
    """A result's field as JSON: an entry in the service's field names (``id`` only when known:
    an add has none yet), a path or a time as text, a cause as its value."""
    from ..models import Entry

    if isinstance(value, Entry):
        return value.to_service(with_id=bool(value.id))
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return value.value if isinstance(value, Enum) else value


def pick(obj: Any, *names: str) -> dict[str, Any]:
    """``names`` of ``obj``, as JSON."""
    return {name: _plain(getattr(obj, name)) for name in names}


ANSWER = ("http_status", "reason", "cause")
"""What the service answered a change (``verified``/``attempts`` follow)."""


def result_json(r: m.DeleteResult) -> dict[str, Any]:
    """One deletion. An absent id (nothing to delete) is no failure: ``status``, ``outcome``
    and ``cause`` say ``absent``, ``ok`` is true."""
    return {
        "status": "absent" if r.absent else r.status,
        "ok": r.done,
        **pick(r, "outcome", "entry_id", "entry", *ANSWER, "code", "vendor_message"),
        **pick(r, "outcome_unknown", "verified", "attempts"),
        "elapsed": round(r.elapsed, 6),
        "snapshot": r.snapshot,
    }


def batch_json(result: m.DeleteResult | m.BatchResult, warnings: list[str] | None = None) -> dict:
    """One shape for one id, several ids and the purge: every result in input order, the
    counts, the snapshot that holds what was deleted, and ``interrupted`` after Ctrl-C."""
    from ..models import BatchResult

    batch = result if isinstance(result, BatchResult) else BatchResult([result])
    results = batch.results
    purge = results[0] if len(results) == 1 and results[0].entry_id is None else None
    return {
        "results": [result_json(r) for r in results],
        **pick(batch, "ok", "succeeded", "failed", "unknown"),
        # A purge's one request deletes every entry listed just before; an id repeated
        # counts once.
        "deleted": (purge.purged if purge.ok else 0)
        if purge
        else len({r.entry_id for r in results if r.ok}),
        "absent": len({r.entry_id for r in results if r.absent}),
        "interrupted": batch.interrupted,
        "snapshot": result.snapshot,
        "warnings": list(warnings or []),
    }


def summary_json(result: m.DeleteResult | m.BatchResult, warnings: list[str] | None = None) -> dict:
    """The last line of ``--jsonl``: the counts of ``batch_json`` without the results."""
    data = batch_json(result, warnings)
    data["total"] = len(data.pop("results"))
    return {"summary": data}


def restore_json(result: m.RestoreResult) -> dict[str, Any]:
    return {
        **pick(result, "ok", "dry_run", "added", "skipped"),
        "failed": [{"entry": _plain(e), "reason": why} for e, why in result.failed],
        **pick(result, "unknown", "put_back", "removed"),
        "changed": [{"entry": _plain(e), "now": _plain(now)} for e, now in result.changed],
        "snapshot": result.snapshot,
    }


def add_json(result: m.AddResult) -> dict[str, Any]:
    """One addition: the outcome, and the entry with its new id when a listing found it."""
    return {
        "operation": "add",
        **pick(result, "ok", "outcome", "entry"),
        "id": result.entry.id or None,
        **pick(result, *ANSWER, "verified", "attempts"),
    }


def update_json(result: m.UpdateResult) -> dict[str, Any]:
    """One update: the outcome, the id, the entry before and after."""
    return {
        "operation": "update",
        **pick(result, "ok", "outcome"),
        "id": result.entry_id,
        **pick(result, "old", "new", *ANSWER, "verified", "attempts", "snapshot"),
    }


def no_change_json(result: m.NoChange) -> dict[str, Any]:
    """An add or update with nothing to do, in that command's own shape (outcome
    ``unchanged``, no request: ``attempts`` 0), naming the entries that hold the terms."""
    first = result.entry
    data = dict(operation=result.operation, ok=True, outcome="unchanged", changed=False)
    data.update(ids=result.ids, http_status=None, reason=None, cause=None, verified=True)
    data["attempts"] = 0
    if result.operation == "add":
        return {**data, "entry": _plain(first), "id": first.id or None}
    return {**data, "id": first.id, "old": _plain(first), "new": _plain(first), "snapshot": None}


def sync_json(result: m.SyncPlan | m.SyncResult) -> dict[str, Any]:
    """DESIGN's sync shape, for a plan (``applied`` false) and for a plan applied."""
    applied = hasattr(result, "plan")
    plan: m.SyncPlan = result.plan if applied else result  # type: ignore[union-attr,assignment]
    data: dict[str, Any] = {
        "applied": applied and bool(getattr(result, "applied", False)),
        "ok": result.ok,
        **pick(plan, "path", "host", "profile", "adds"),
        "updates": [pick(u, "id", "old", "new", "row") for u in plan.updates],
        **pick(plan, "deletes", "unchanged"),
        "conflicts": [pick(c, "entries", "row") for c in plan.conflicts],
        "invalid": [pick(bad, "row", "reason") for bad in plan.invalid],
        **pick(plan, "sheet", "other_sheets", "warnings"),
        "missing": len(plan.missing),
        "counts": plan.counts(),
        "verified": None,
        "snapshot": None,
        "results": [],
    }
    if applied:
        done: m.SyncResult = result  # type: ignore[assignment]
        data.update(pick(done, "verified", "snapshot", "mismatches"))
        data["results"] = (
            [add_json(r) for r in done.adds]
            + [update_json(r) for r in done.updates]
            + [{**result_json(r), "operation": "delete"} for r in done.deletes]
        )
    return data


DRY_RUN = {"dry_run": True, "ok": True}
WHERE = ("operation", "host", "profile")


def audit_json(line: m.AuditLine) -> dict[str, Any]:
    """One audit line in the audit file's own field names (its entry without the id)."""
    return {
        **pick(line, "time", "profile", "host", "operation", "entry_id"),
        "entry": line.entry and line.entry.to_service(with_id=False),
        **pick(line, "outcome", "http_status", "attempts", "reason", "snapshot"),
    }


def to_json(result: Any, warnings: list[str]) -> dict[str, Any]:
    """The ``--json`` shape of an operation's result (with ``"impact"`` when it holds its impact
    on a corpus: a sync plan's, applied or not, or a dry run's); ``warnings``: what it said."""
    data = _shape(result, warnings)
    impact = getattr(getattr(result, "plan", result), "corpus_impact", None)
    return data if impact is None else {**data, "impact": impact.to_json()}


def _shape(result: Any, warnings: list[str]) -> dict[str, Any]:
    from .. import models as m

    if isinstance(result, m.DeleteResult | m.BatchResult):
        return batch_json(result, warnings)
    changes: dict[type, Callable[[Any], dict[str, Any]]] = {
        m.AddResult: add_json,
        m.UpdateResult: update_json,
        m.NoChange: no_change_json,
        m.RestoreResult: restore_json,
        m.SyncPlan: sync_json,
        m.SyncResult: sync_json,
    }
    for kind, shape in changes.items():
        if isinstance(result, kind):
            shaped = shape(result)  # a sync plan's own warnings (stray spaces...) come first
            return {**shaped, "warnings": [*shaped.get("warnings", []), *warnings]}
    if isinstance(result, m.DryRunResult):
        return {**DRY_RUN, **pick(result, *WHERE, "listed", "entries", "missing")}
    if isinstance(result, m.ChangePreview):
        return {**DRY_RUN, **pick(result, *WHERE, "old", "new", "alongside")}
    if isinstance(result, m.EntryList):
        return {**pick(result, "entries"), "total": len(result)}
    if isinstance(result, m.ExportResult):
        return {"ok": True, **pick(result, "path", "format", "count", "host")}
    if isinstance(result, m.SnapshotList):
        fields = ("path", "taken_at", "profile", "host", "base_url", "operation", "count", "added")
        return {"snapshots": [pick(info, *fields) for info in result]}
    if isinstance(result, m.AuditTable):
        return {"lines": [audit_json(line) for line in result], "skipped": result.skipped}
    return result.to_json()  # a LintReport, a CheckReport


class Output:
    """Where a command's answer goes: text, one JSON document, or JSON lines as they come."""

    def __init__(self, mode: str = "text") -> None:
        self.mode = mode  # "text", "json" or "jsonl"
        self._lock = threading.Lock()

    def show(self, data: dict[str, Any], text: str) -> None:
        """``data`` as JSON (a document, or one line) when asked for, else ``text``."""
        if self.mode == "json":
            self._write(dumps(data, indent=2))
        elif self.mode == "jsonl":
            self.line(data)
        else:
            self._write(text)

    def line(self, data: dict[str, Any]) -> None:
        """One compact JSON line, flushed at once (safe from the client's worker threads)."""
        self._write(dumps(data, separators=(",", ":")))

    def error(self, message: str, code: int) -> None:
        """The error as JSON on stdout, for a program that reads only stdout."""
        if self.mode != "text":
            self.show({"error": message, "exit": code}, "")

    def _write(self, text: str) -> None:
        # A lone surrogate (JSON allows "\ud800"; UTF-8 cannot encode it) is written as that
        # escape: the output of a delete that already happened never crashes.
        text = re.sub("[\ud800-\udfff]", lambda c: f"\\u{ord(c.group()):04x}", text)
        with self._lock:
            try:
                sys.stdout.write(text + "\n")
                sys.stdout.flush()
            except BrokenPipeError:  # a reader that went away (| head): drop the rest
                try:
                    devnull = os.open(os.devnull, os.O_WRONLY)
                    os.dup2(devnull, sys.stdout.fileno())
                    os.close(devnull)
                except (OSError, ValueError):
                    pass


def dumps(data: dict[str, Any], **layout: Any) -> str:
    """JSON with readable text kept as is and every character a terminal would act on or hide
    (controls, bidi overrides, line separators, lone surrogates) as a ``\\u`` escape."""
    text = json.dumps(data, ensure_ascii=False, **layout)
    return _UNSAFE_RUN.sub(_escape_run, text)


_UNSAFE_RUN = re.compile("[^\n\x20-\x7e]+")
"""Runs outside printable ASCII (and the layout's newlines): the only places an unsafe character
can be. Outside JSON strings there are none, so an escape is always inside one."""


def _escape_run(match: re.Match[str]) -> str:
    run = match.group()
    if run.isprintable():
        return run
    import unicodedata

    unsafe = {"Cc", "Cf", "Cs", "Co", "Zl", "Zp"}  # json.dumps escapes them as \\uXXXX
    return "".join(json.dumps(ch)[1:-1] if unicodedata.category(ch) in unsafe else ch for ch in run)


# -- progress ------------------------------------------------------------------------------

BAR_WIDTH = 30
# Each display is an ``operations.context.ProgressSink``: ``start(total, label)`` before a batch,
# ``(done, total, result)`` after each result (from the client's worker threads, one at a time),
# ``waiting(seconds, reason)`` when every worker pauses for the rate limit, ``stop()`` at the end.


def progress_for(shell: Any) -> Any:
    """A widget bar in a kernel (where ipywidgets is installed), else a text one."""
    if getattr(shell, "kernel", None) is not None:
        from importlib.util import find_spec

        if find_spec("ipywidgets") is not None:
            return WidgetProgress()
    return TextProgress()


class TextProgress:
    """``label [#####.....] 5/10 (1 failed)``, redrawn on a terminal, else a line each quarter;
    with ``every`` (logs, CI) a ``5/10 done, 2.0/s`` line every ``every`` seconds instead."""

    def __init__(self, stream: IO[str] | None = None, every: float | None = None) -> None:
        self._stream = stream if stream is not None else sys.stdout
        self._live = bool(getattr(self._stream, "isatty", lambda: False)())
        self._every = None if self._live else every
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self.label, self.note = "", ""
        self.total = self.done = self.failed = self.lines = 0
        self._started = 0.0
        self._shown: tuple[int, int, str] | None = None

    def start(self, total: int, label: str) -> None:
        self.label, self.total, self._started = label, total, time.monotonic()
        self._stopped.clear()
        self._draw()
        if self._every is not None:
            self._thread = threading.Thread(
                target=self._tick, name="dict-magics-progress", daemon=True
            )
            self._thread.start()

    def __call__(self, done: int, total: int, result: Any) -> None:
        with self._lock:
            self.done, self.total = done, total
            self.failed += 0 if result.ok else 1
            self.note = ""
            self._draw()

    def waiting(self, seconds: float, reason: str) -> None:
        """Say that every worker waits (the service's rate limit), until the next result."""
        with self._lock:
            self.note = f"waiting {seconds:.0f} s: {reason}"
            self._draw()

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            if self._live:
                self._write("")
            elif self._every is None and self._shown != (4, 0, ""):
                self._write(self._bar())
            elif self._every is not None and self.lines:
                elapsed = time.monotonic() - self._started
                self._write(f"{self._count()}, finished in {elapsed:.1f} s")

    def _tick(self) -> None:
        while not self._stopped.wait(self._every):
            with self._lock:
                self._write(self._count())

    def _count(self) -> str:
        rate = self.done / max(time.monotonic() - self._started, 1e-9)
        return f"{self.label}: {self.done}/{self.total} done, {rate:.1f}/s, {self.failed} failed"

    def _bar(self) -> str:
        filled = BAR_WIDTH * self.done // self.total if self.total else BAR_WIDTH
        failed = f" ({self.failed} failed)" if self.failed else ""
        note = f" \u2014 {self.note}" if self.note else ""
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        return f"{self.label} [{bar}] {self.done}/{self.total}{failed}{note}"

    def _draw(self) -> None:
        """A terminal redraws when the percentage, failures or note change; a log gets a line
        at each quarter (or note); with ``every``, only a note is written at once."""
        if self._every is not None:
            if self.note:
                self._write(f"{self.label}: {self.note}")
            return
        percent = 100 * self.done // self.total if self.total else 100
        key = (percent, self.failed, self.note) if self._live else (percent // 25, 0, self.note)
        if key != self._shown:
            self._shown = key
            if self._live:
                self._write("\r" + self._bar(), end="")
            else:
                self._write(self._bar())

    def _write(self, line: str, end: str = "\n") -> None:
        try:
            self._stream.write(line + end)
            self._stream.flush()
            self.lines += 1
        except (OSError, ValueError):
            pass  # a closed or broken stream must not stop the batch


class WidgetProgress:
    """An ipywidgets ``IntProgress`` with a count beside it. Its plain-text form (what a viewer
    that draws no widgets shows of a saved notebook) says what it is and where it ended."""

    def start(self, total: int, label: str) -> None:
        import ipywidgets as widgets
        from IPython.display import display

        self.total, self.label, self.failed, self.note = total, label, 0, ""
        self.bar = widgets.IntProgress(value=0, min=0, max=max(total, 1), bar_style="info")
        self.text = widgets.HTML(self._html())
        self.box = widgets.HBox([self.bar, self.text])
        self._lock = threading.Lock()
        self._closed = False
        self._handle = display(self._bundle(), raw=True, display_id=True)

    def plain(self) -> str:
        state = "finished" if self._closed else "running"
        drawn = "a progress bar widget, drawn when the notebook runs in Jupyter"
        return f"{self._count()} ({state}; {drawn})"

    def _bundle(self) -> dict[str, Any]:
        return {**(self.box._repr_mimebundle_() or {}), "text/plain": self.plain()}

    def _count(self) -> str:
        failed = f", {self.failed} failed" if self.failed else ""
        return f"{self.label}: {self.bar.value}/{self.total}{failed}"

    def _html(self) -> str:
        from html import escape

        return escape(self._count() + (f" \u2014 {self.note}" if self.note else ""))

    def __call__(self, done: int, total: int, result: Any) -> None:
        with self._lock:  # trait updates are safe from any thread
            self.failed += 0 if result.ok else 1
            self.total, self.bar.max, self.bar.value = total, max(total, 1), done
            if self.failed:
                self.bar.bar_style = "warning"
            self.note = ""
            self.text.value = self._html()

    def waiting(self, seconds: float, reason: str) -> None:
        with self._lock:
            self.note = f"waiting {seconds:.0f} s: {reason}"
            self.text.value = self._html()

    def stop(self) -> None:
        """Green when every entry went, red otherwise; the saved output says so in words."""
        with self._lock:
            complete = self.bar.value >= self.total and not self.failed
            self.bar.bar_style = "success" if complete else "danger"
            self._closed = True
            bundle = self._bundle()
        if self._handle is not None:
            self._handle.update(bundle, raw=True)


class JsonlResults:
    """``--jsonl``: each result on a line as it arrives, then a summary line (``finish``); a result
    settled only at the end gets its line then, so an id's last line is its final outcome."""

    def __init__(self, output: Output, progress: Any = None) -> None:
        self._output, self._progress = output, progress
        self._lock = threading.Lock()
        self._streamed: dict[str | None, tuple[str, bool]] = {}

    def start(self, total: int, label: str) -> None:
        if self._progress is not None:
            self._progress.start(total, label)

    def __call__(self, done: int, total: int, result: m.DeleteResult) -> None:
        with self._lock:
            self._streamed[result.entry_id] = (result.outcome, result.verified)
        self._output.line(result_json(result))
        if self._progress is not None:
            self._progress(done, total, result)

    def waiting(self, seconds: float, reason: str) -> None:
        if self._progress is not None:
            self._progress.waiting(seconds, reason)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()

    def finish(self, result: m.DeleteResult | m.BatchResult, warnings: list[str]) -> None:
        """Lines for what was settled after it arrived (or never arrived), then the summary."""
        seen: set[str | None] = set()
        for one in getattr(result, "results", [result]):
            with self._lock:
                streamed = self._streamed.get(one.entry_id)
            if one.entry_id not in seen and streamed != (one.outcome, one.verified):
                self._output.line(result_json(one))
            seen.add(one.entry_id)
        self._output.line(summary_json(result, warnings))
