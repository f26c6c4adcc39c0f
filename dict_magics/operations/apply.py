"""Apply a change: deletions, then PUTs, then bulk adds, each audited ahead with the snapshot
that undoes it; a batch that stops (Ctrl-C, Cancel, refused credentials) sends nothing after
it, and one listing afterwards settles what is unknown. Sync and restore both end here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ServiceFailure
from ..models import Cause, UpdateResult
from ..service import batch
from .audit import AuditLog
from .context import OperationSettings, ProgressSink, Warn
from .listing import CACHE
from .settle import add_and_settle, settle_adds, settle_deletes, settle_updates

if TYPE_CHECKING:
    from ..models import AddResult, DeleteResult, Entry
    from ..service.client import DictionaryClient


@dataclass
class Applied:
    """What each request did; ``after``: the listing that settled them (``None``: none could be
    had, ``unlisted`` says why)."""

    deletes: list[DeleteResult] = field(default_factory=list)
    updates: list[UpdateResult] = field(default_factory=list)
    adds: list[AddResult] = field(default_factory=list)
    after: list[Entry] | None = None
    interrupted: bool = False
    unlisted: str = ""


class ApplyChanges:
    """One change's requests against ``listing`` (the entries as listed just before), audited
    with ``snapshot``; ``sending`` is told before each request leaves (a restore's lock)."""

    def __init__(
        self,
        client: DictionaryClient,
        profile: str,
        settings: OperationSettings,
        snapshot: Path,
        *,
        progress: ProgressSink | None = None,
        sending: Callable[[], None] | None = None,
        cancel: threading.Event | None = None,
        warn: Warn = None,
    ) -> None:
        self.client, self.profile, self.settings, self.snapshot = (
            client,
            profile,
            settings,
            snapshot,
        )
        self.progress, self.sending, self.warn = progress, sending, warn
        self.cancel = cancel or threading.Event()
        self.done = self.total = 0
        self.before: list[Entry] = []  # the listing as the adds found it

    def run(
        self,
        deletes: Sequence[Entry],
        updates: Sequence[tuple[Entry, Entry]],
        adds: Sequence[Entry],
        listing: Sequence[Entry],
        *,
        label: str = "",
        verify: bool = False,
    ) -> Applied:
        """Send ``deletes``, the ``updates`` ((as listed, new) pairs), then ``adds``; list once
        afterwards when something is unknown, a new id is to be named, or ``verify`` asks."""
        self.total = len(deletes) + len(updates) + len(adds)
        if self.progress is not None:
            self.progress.start(self.total, label)
        logs = [
            AuditLog(
                profile=self.profile,
                host=self.client.host,
                operation=op,
                snapshot=self.snapshot,
                entries={e.id: e for e in deletes},
                warn=self.warn,
            )
            for op in ("delete", "update", "add")
        ]
        wait = getattr(self.progress, "waiting", None)  # told of rate-limit pauses
        if wait is not None:
            self.client.rate_limit.listeners.append(wait)
        try:
            with logs[0], logs[1], logs[2]:
                applied = self._send(deletes, updates, adds, listing, logs)
                self._settle(applied, listing, logs, verify)
        finally:
            CACHE.invalidate(self.client, self.profile)
            if wait is not None:
                self.client.rate_limit.listeners.remove(wait)
            if self.progress is not None:
                self.progress.stop()
        return applied

    def _send(
        self,
        deletes: Sequence[Entry],
        updates: Sequence[tuple[Entry, Entry]],
        adds: Sequence[Entry],
        listing: Sequence[Entry],
        logs: list[AuditLog],
    ) -> Applied:
        client, workers, done = self.client, self.settings.workers, Applied()
        by_id = {e.id: e for e in deletes}
        if deletes:
            self._tell()
            gone = client.delete_entries(
                list(by_id), workers, self._tick, self.cancel, audit=logs[0]
            )
            path = str(self.snapshot)
            done.deletes = [
                replace(r, entry=by_id[r.entry_id or ""], snapshot=path) for r in gone.results
            ]
            self._stop_if(done, gone.interrupted, done.deletes)
        if updates:
            done.updates = self._updates(updates, logs[1], done)
        if adds:
            gone_ids = {r.entry_id for r in done.deletes if r.ok}
            new = {r.entry_id: r.new for r in done.updates if r.ok}
            self.before = [new.get(e.id, e) for e in listing if e.id not in gone_ids]
            self._tell()  # a re-run after this process dies waits for these answers
            added = add_and_settle(
                client,
                [replace(e, id="") for e in adds],
                before=self.before,
                chunk_size=self.settings.chunk_size,
                workers=workers,
                progress=self._tick,
                cancel=self.cancel,
                audit=logs[2],
            )
            logs[2].record_all(added.results[i] for i in added.settled)
            done.adds, done.after = list(added.results), added.after
            done.interrupted |= added.interrupted
        return done

    def _updates(
        self, updates: Sequence[tuple[Entry, Entry]], log: AuditLog, done: Applied
    ) -> list[UpdateResult]:
        """The PUTs on the batch engine (at most ``workers`` in flight)."""

        def send(update: tuple[Entry, Entry], stop: object) -> UpdateResult:
            self._tell()
            now, new = update
            return self.client.update_entry(new.id, new, old=now, audit=log)

        run = batch.run(
            updates,
            send,
            workers=min(self.settings.workers, len(updates)),
            sent=lambda r: r.attempts > 0,
            refused=lambda r: r.cause in (Cause.AUTH, Cause.NONCE),
            progress=self._tick,
            cancel=self.cancel,
            name="dict-magics-update",
        )
        results = [
            r
            if r is not None
            else UpdateResult(
                "failure",
                new.id,
                new,
                now,
                reason="not sent: stopped first (running it again sends it)",
                attempts=0,
                cause=Cause.NOT_ATTEMPTED,
            )
            for r, (now, new) in zip(run.results, updates, strict=True)
        ]
        self._stop_if(done, run.interrupted, results, bool(run.why))
        return results

    def _settle(
        self, done: Applied, listing: Sequence[Entry], logs: list[AuditLog], verify: bool
    ) -> None:
        """One listing settles what is unknown, each outcome audited in its request's log."""
        unknown = any(r.outcome_unknown for r in (*done.deletes, *done.updates, *done.adds))
        named = done.after is None and any(r.ok for r in done.adds)
        if not (verify or unknown or named):
            return
        try:
            done.after = list(CACHE.fetch(self.client, self.profile).entries)
        except ServiceFailure as exc:
            done.after, done.unlisted = None, str(exc)
            return
        except KeyboardInterrupt:  # what was sent is shown all the same
            done.after, done.interrupted = None, True
            return
        by_id = {e.id: e for e in done.after}
        if any(r.outcome_unknown for r in done.deletes):
            now = settle_deletes(done.deletes, {e.id: e for e in listing}, by_id)
            logs[0].record_all(
                s for r, s in zip(done.deletes, now, strict=True) if r.outcome_unknown
            )
            done.deletes = now
        if any(r.outcome_unknown for r in done.updates):
            settled = settle_updates(done.updates, by_id)
            logs[1].record_all(
                s for r, s in zip(done.updates, settled, strict=True) if r.outcome_unknown
            )
            done.updates = settled
        if any(r.outcome_unknown for r in done.adds):
            done.adds = settle_adds(done.adds, self.before, done.after)

    def _tell(self) -> None:
        if self.sending is not None:
            self.sending()

    def _tick(self, _done: int, _total: int, result: Any) -> None:
        self.done += 1
        self._tell()
        if self.progress is not None:
            self.progress(self.done, self.total, result)

    def _stop_if(
        self, done: Applied, interrupted: bool, results: Sequence[Any], refused: bool = False
    ) -> None:
        """A batch that stopped stops what follows: nothing after it is sent."""
        done.interrupted |= interrupted
        if interrupted or refused or any(r.cause is Cause.NOT_ATTEMPTED for r in results):
            self.cancel.set()
