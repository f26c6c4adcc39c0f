"""Put back what a snapshot holds and the dictionary lacks: the undo of a delete or a purge.

The dictionary is listed first and only entries whose four terms are missing are added (as many
times as the snapshot holds them beyond those listed), so a restore run twice adds nothing the
second time. Additions run on ``workers`` threads, each audited. The service does not return a
new entry's id, so an addition whose answer was lost is never sent again blindly: one listing
after the batch settles it. A snapshot taken on another host or profile is restored only once
the person confirms (or ``yes``).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ListingUnsupportedError, OperationFailedError, ServiceError, UsageProblem
from .connect import connect
from .context import OperationSettings, ProgressSink
from .delete import count
from .listing import CACHE
from .prompts import NoAnswer, Prompter, ScriptedPrompter
from .safeguards import Trail, Warn
from .settle import settle_adds
from .snapshots import Snapshot, latest_snapshot, read_snapshot
from .undo import UNDONE, undo_changes

if TYPE_CHECKING:
    from ..models import AddResult, Entry, RestoreResult
    from ..service.client import DictionaryClient

__all__ = ["missing_entries", "restore"]

CONFIRM_WORD = "yes"


def restore(
    settings: OperationSettings,
    source: str | Path | None = None,
    *,
    prompter: Prompter | None = None,
    progress: ProgressSink | None = None,
    dry_run: bool = False,
    yes: bool = False,
    cancel: threading.Event | None = None,
    client: DictionaryClient | None = None,
    warn: Warn = None,
) -> RestoreResult:
    """Add the entries of snapshot ``source`` (default: the latest of this profile and host)
    that the dictionary lacks.

    Raises ``DictMagicsError`` before any addition (no snapshot, an unreadable one, no listing
    to compare with, another host's snapshot not confirmed), and ``OperationFailedError`` when
    an entry did not go back only if ``settings.raise_on_failure``.
    """
    from ..models import RestoreResult

    with connect(settings, client) as (client, profile):
        snapshot = _snapshot(source, profile, client.host)
        if not dry_run and not yes:
            _confirm_elsewhere(prompter, snapshot, profile, client.host)
        if snapshot.operation in UNDONE:  # format 2: put changed entries back, remove added
            result = undo_changes(
                settings,
                client,
                profile,
                snapshot,
                prompter=prompter,
                progress=progress,
                dry_run=dry_run,
                yes=yes,
                cancel=cancel,
                warn=warn,
            )
            if settings.raise_on_failure and not result.ok:
                raise OperationFailedError(result)
            return result
        before = _listing(client, profile, dry_run)
        wanted, skipped = missing_entries(snapshot.entries, before)
        if dry_run or not wanted:
            return RestoreResult(added=wanted if dry_run else [], skipped=skipped, dry_run=dry_run)
        with Trail(
            profile=profile, host=client.host, operation="add", snapshot=snapshot, warn=warn
        ) as trail:
            results = _Adder(client, settings.workers, progress, cancel, trail).run(wanted)
            results = _settle(client, profile, before, results, trail)
    result = RestoreResult(
        added=[r.entry for r in results if r.ok],
        skipped=skipped,
        failed=[(r.entry, r.reason or "not added") for r in results if r.outcome == "failure"],
        unknown=[r.entry for r in results if r.outcome_unknown],
    )
    if settings.raise_on_failure and not result.ok:
        raise OperationFailedError(result)
    return result


def missing_entries(
    snapshot: Sequence[Entry], listing: Sequence[Entry]
) -> tuple[list[Entry], list[Entry]]:
    """(to add, already present): an entry is present while the listing holds as many entries
    with its four terms as the snapshot has met so far."""
    present = Counter(e.terms for e in listing)
    wanted, skipped = [], []
    for entry in snapshot:
        if present[entry.terms] > 0:
            present[entry.terms] -= 1
            skipped.append(entry)
        else:
            wanted.append(entry)
    return wanted, skipped


def _snapshot(source: str | Path | None, profile: str, host: str) -> Snapshot:
    if source is not None and str(source).strip():
        return read_snapshot(str(source).strip())
    latest = latest_snapshot(profile, host)
    if latest is None:
        raise UsageProblem(
            f"no snapshot of profile {profile!r} at {host} yet (one is taken before every "
            "delete and purge); %dict_snapshots (or `dict-magics snapshots`) lists the others. "
            "Nothing was sent."
        )
    return read_snapshot(latest.path)


def _confirm_elsewhere(
    prompter: Prompter | None, snapshot: Snapshot, profile: str, host: str
) -> None:
    """A snapshot of another host or profile goes back only once someone types yes."""
    if (snapshot.host, snapshot.profile) == (host, profile):
        return
    warning = (
        f"The snapshot {snapshot.path} was taken on {snapshot.host} (profile "
        f"{snapshot.profile!r}); this adds its missing entries to {host} (profile {profile!r})."
    )
    question = f"Type {CONFIRM_WORD} to restore it there, anything else cancels: "
    asker = prompter or ScriptedPrompter(reason="nobody was asked (no prompter was given)")
    try:
        answer = asker.confirm(warning, question)
    except NoAnswer as exc:
        raise UsageProblem(
            f"refusing to restore a snapshot of {snapshot.host} (profile {snapshot.profile!r}) "
            f"to {host} (profile {profile!r}) without a confirmation, but {exc.reason}. "
            "Nothing was sent. Re-run with -y (--yes) if you mean it."
        ) from None
    if answer.strip().lower() != CONFIRM_WORD:
        raise UsageProblem(f"restore not confirmed: nothing was added ({host}).")


def _listing(client: DictionaryClient, profile: str, dry_run: bool) -> list[Entry]:
    """What the dictionary holds now; without it a restore cannot know what is missing."""
    try:
        return list(CACHE.fetch(client, profile).entries)
    except ListingUnsupportedError as exc:
        raise UsageProblem(
            f"{exc}; a restore adds only what is missing, and cannot tell what is without a "
            "listing, so nothing was added."
        ) from None
    except ServiceError as exc:
        tail = "nothing was sent (dry run)" if dry_run else "nothing was added; try again"
        raise ServiceError(
            f"{exc}; {tail}.", cause=exc.cause, http_status=exc.http_status
        ) from None


class _Adder:
    """The additions on ``workers`` threads, at most that many in flight; Ctrl-C or ``cancel``
    sends nothing new and waits for those in flight."""

    def __init__(
        self,
        client: DictionaryClient,
        workers: int,
        progress: ProgressSink | None,
        cancel: threading.Event | None,
        trail: Trail,
    ) -> None:
        self.client = client
        self.workers = workers
        self.progress = progress
        self.cancel = cancel or threading.Event()
        self.trail = trail
        self.why = "cancelled"

    def run(self, entries: list[Entry]) -> list[AddResult]:
        total = len(entries)
        results: list[AddResult | None] = [None] * total
        if self.progress is not None:
            label = f"Restoring {count(total, 'entry', 'entries')} at {self.client.host}"
            self.progress.start(total, label)
        pool = ThreadPoolExecutor(min(self.workers, total), thread_name_prefix="dict-magics-add")
        try:
            self._feed(pool, entries, results)
        finally:
            pool.shutdown(wait=True)
            if self.progress is not None:
                self.progress.stop()
        return [
            r if r is not None else self._not_sent(e) for r, e in zip(results, entries, strict=True)
        ]

    def _feed(
        self, pool: ThreadPoolExecutor, entries: list[Entry], results: list[AddResult | None]
    ) -> None:
        pending: dict[Future[AddResult], int] = {}
        upcoming = iter(range(len(entries)))
        done = 0
        while True:
            while len(pending) < self.workers and not self.cancel.is_set():
                index = next(upcoming, None)
                if index is None:
                    break
                pending[pool.submit(self.client.add_entry, entries[index])] = index
            if not pending:
                return
            try:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            except KeyboardInterrupt:
                self.why = "interrupted"
                self.cancel.set()
                continue
            for future in finished:
                result = future.result()
                results[pending.pop(future)] = result
                done += 1
                if not result.outcome_unknown:
                    self.trail.record(result)
                if self.progress is not None:
                    self.progress(done, len(entries), result)  # type: ignore[arg-type]

    def _not_sent(self, entry: Entry) -> AddResult:
        from ..models import AddResult, Cause

        return AddResult(
            "failure",
            entry,
            reason=f"not sent: the restore was {self.why} first (running it again adds it)",
            attempts=0,
            cause=Cause.NOT_ATTEMPTED,
        )


def _settle(
    client: DictionaryClient,
    profile: str,
    before: list[Entry],
    results: list[AddResult],
    trail: Trail,
) -> list[AddResult]:
    """Unknown additions decided by one listing, then audited; the cached listing is renewed
    (new ids are unknown otherwise)."""
    unknown = [r for r in results if r.outcome_unknown]
    settled = results
    if unknown:
        try:
            after = list(CACHE.fetch(client, profile).entries)
        except ServiceError:
            after = None
        if after is not None:
            settled = settle_adds(results, before, after)
        for original, now in zip(results, settled, strict=True):
            if original.outcome_unknown:
                trail.record(now)
    if not unknown or any(r.outcome_unknown for r in settled):
        CACHE.invalidate(client, profile)
    return settled
