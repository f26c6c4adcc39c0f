"""Apply a change: deletions, then PUTs, then bulk adds, each audited ahead with the snapshot
that undoes it; a batch that stops (Ctrl-C, Cancel, refused credentials) sends nothing after
it, and one listing afterwards settles what is unknown. Sync and restore both end here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ServiceFailure
from ..models import Cause, UpdateResult
from ..models.text import entries as counted
from .audit import AuditLog
from .context import OperationSettings, ProgressSink, Warn
from .listing import CACHE
from .settle import add_and_settle, settle_adds, settle_deletes, settle_updates
from .snapshots import write_snapshot

if TYPE_CHECKING:
    from ..models import AddResult, DeleteResult, Entry
    from ..service.client import DictionaryClient


class ApplyChanges:
    """One change's requests and what each did; ``sending`` is told as each step starts sending
    (a restore's lock). ``after``: the listing that settled them (``None``: none could be had,
    ``unlisted`` says why); ``snapshot``: the one that undoes the change, on disk first."""

    def __init__(
        self,
        client: DictionaryClient,
        profile: str,
        settings: OperationSettings,
        *,
        progress: ProgressSink | None = None,
        sending: Callable[[], None] | None = None,
        cancel: threading.Event | None = None,
        warn: Warn = None,
    ) -> None:
        self.client, self.profile, self.settings = client, profile, settings
        self.progress, self.sending = progress, sending or (lambda: None)
        self.cancel, self.warn = cancel or threading.Event(), warn
        self.answered = self.total = 0
        self.deletes: list[DeleteResult] = []
        self.updates: list[UpdateResult] = []
        self.adds: list[AddResult] = []
        self.after: list[Entry] | None = None
        self.interrupted, self.unlisted = False, ""
        self.snapshot: Path | None = None

    def run(
        self,
        deletes: Sequence[Entry],
        updates: Sequence[tuple[Entry, Entry]],
        adds: Sequence[Entry],
        listing: Sequence[Entry],
        *,
        doing: str = "Applying",
        verify: bool = False,
        undoes: Path | None = None,
    ) -> ApplyChanges:
        """Keep a snapshot, then send ``deletes`` (as listed just before in ``listing``),
        ``updates`` ((as listed, new) pairs), then ``adds``; list once afterwards when something
        is unknown, a new id is to be named, or ``verify`` asks. ``undoes``: a restore's."""
        listed = {e.id for e in listing}
        self.snapshot = snapshot = write_snapshot(
            [now for now, _ in updates if now.id in listed] + list(deletes),
            profile=self.profile,
            host=self.client.host,
            base_url=self.client.base_url,
            operation="sync",
            added=adds,
            left=[new for _, new in updates],
            undoes=undoes,
        )
        self.total = len(deletes) + len(updates) + len(adds)
        if self.progress is not None:
            self.progress.start(self.total, f"{doing} {counted(self.total)} at {self.client.host}")
        self.logs = [
            AuditLog(
                profile=self.profile,
                host=self.client.host,
                operation=op,
                snapshot=snapshot,
                entries={e.id: e for e in deletes},
                warn=self.warn,
            )
            for op in ("delete", "update", "add")
        ]
        wait = getattr(self.progress, "waiting", None)  # told of rate-limit pauses
        listeners = self.client.rate_limit.listeners
        if wait is not None:
            listeners.append(wait)
        try:
            with self.logs[0], self.logs[1], self.logs[2]:
                self._deletes(deletes)
                self._updates(updates)
                gone = {r.entry_id for r in self.deletes if r.ok}
                new = {r.entry_id: r.new for r in self.updates if r.ok}
                before = [new.get(e.id, e) for e in listing if e.id not in gone]
                self._adds(adds, before)
                self._settle(listing, before, verify)
        finally:
            CACHE.invalidate(self.client, self.profile)
            if wait is not None:
                listeners.remove(wait)
            if self.progress is not None:
                self.progress.stop()
        return self

    def _deletes(self, deletes: Sequence[Entry]) -> None:
        if not deletes:
            return
        self.sending()
        by_id, log = {e.id: e for e in deletes}, self.logs[0]
        run = self.client.delete_entries(
            list(by_id), self.settings.workers, self._tick, self.cancel, audit=log
        )
        path = str(log.snapshot)
        self.deletes = [
            replace(r, entry=by_id[r.entry_id or ""], snapshot=path) for r in run.results
        ]
        self._stop_if(run.interrupted, self.deletes)

    def _updates(self, updates: Sequence[tuple[Entry, Entry]]) -> None:
        if not updates:
            return
        self.sending()
        self.updates, why, stopped = self.client.update_entries(
            [(new.id, new) for _, new in updates],
            old={new.id: now for now, new in updates},
            workers=self.settings.workers,
            progress=self._tick,
            cancel=self.cancel,
            audit=self.logs[1],
        )
        self._stop_if(stopped, self.updates, bool(why))

    def _adds(self, adds: Sequence[Entry], before: list[Entry]) -> None:
        if not adds:
            return
        self.sending()  # a re-run after this process dies waits for these answers
        run = add_and_settle(
            self.client,
            [replace(e, id="") for e in adds],
            before=before,
            chunk_size=self.settings.chunk_size,
            workers=self.settings.workers,
            progress=self._tick,
            cancel=self.cancel,
            audit=self.logs[2],
        )
        self.logs[2].record_all(run.results[i] for i in run.settled)
        self.adds, self.after = list(run.results), run.after
        self.interrupted |= run.interrupted

    def _settle(self, listing: Sequence[Entry], before: list[Entry], verify: bool) -> None:
        """One listing settles what is unknown, each outcome audited in its request's log."""
        unknown = any(r.outcome_unknown for r in (*self.deletes, *self.updates, *self.adds))
        adds_listed = self.after is not None  # the adds' own listing settled them already
        if not (verify or unknown or (not adds_listed and any(r.ok for r in self.adds))):
            return
        try:
            self.after = list(CACHE.fetch(self.client, self.profile).entries)
        except ServiceFailure as exc:
            self.after, self.unlisted = None, str(exc)
            return
        except KeyboardInterrupt:  # what was sent is shown all the same
            self.after, self.interrupted = None, True
            return
        by_id = {e.id: e for e in self.after}
        settled: tuple[list[Any], ...] = (
            settle_deletes(self.deletes, {e.id: e for e in listing}, by_id),
            settle_updates(self.updates, by_id),
            self.adds if adds_listed else settle_adds(self.adds, before, self.after),
        )
        sent: tuple[list[Any], ...] = (self.deletes, self.updates, self.adds)
        for log, was, now in zip(self.logs, sent, settled, strict=True):
            log.record_all(s for r, s in zip(was, now, strict=True) if r is not s)  # decided
        self.deletes, self.updates, self.adds = settled

    def _tick(self, _done: int, _total: int, result: Any) -> None:
        self.answered += 1
        self.sending()
        if self.progress is not None:
            self.progress(self.answered, self.total, result)

    def _stop_if(self, interrupted: bool, results: Sequence[Any], refused: bool = False) -> None:
        """A batch that stopped stops what follows: nothing after it is sent."""
        self.interrupted |= interrupted
        if interrupted or refused or any(r.cause is Cause.NOT_ATTEMPTED for r in results):
            self.cancel.set()
