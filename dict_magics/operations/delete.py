"""Delete one entry or several: ids checked, entries looked up and kept, then the requests.

Before the first DELETE the entries about to go are looked up in the (cached) listing and written
to a snapshot, so ``restore`` can put them back; the results name their terms. Every request is
audited. Outcomes left unknown are settled by one listing after the batch. One id gives a
``DeleteResult``, several a ``BatchResult`` in the order given (an id repeated is sent once); a
dry run sends nothing that changes the dictionary and gives a ``DryRunResult``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import ListingUnsupportedError, ServiceError, UsageProblem
from ..service.paths import check_id
from ..service.settle import settle_deletes
from .connect import connect
from .context import OperationSettings, ProgressSink, finish
from .listing import CACHE
from .safeguards import SnapshotUnderWay, Trail, Warn, say, snapshot_soon, take_snapshot

if TYPE_CHECKING:
    from ..models import BatchResult, DeleteResult, DryRunResult, Entry
    from ..service.client import DictionaryClient
    from .snapshots import Snapshot

__all__ = ["count", "delete", "interruption"]


def count(number: int, one: str, many: str) -> str:
    """``1 entry``, ``2 entries``."""
    return f"{number:,} {one if number == 1 else many}"


def delete(
    settings: OperationSettings,
    ids: Iterable[object],
    *,
    progress: ProgressSink | None = None,
    cancel: threading.Event | None = None,
    client: DictionaryClient | None = None,
    dry_run: bool = False,
    snapshot: bool | None = None,
    warn: Warn = None,
) -> DeleteResult | BatchResult | DryRunResult:
    """Delete ``ids`` (with a snapshot of them first unless ``snapshot`` or the settings say
    not to); raises ``DictMagicsError`` (a bad id, no id, no credentials, no snapshot possible)
    before any request, and ``DeletionFailedError`` for a failure only if
    ``settings.raise_on_failure``."""
    checked = [check_id(i) for i in ids]
    if not checked:
        raise UsageProblem("no entry ids given; nothing was sent.")
    keep = settings.snapshots if snapshot is None else snapshot
    unique = list(dict.fromkeys(checked))
    aliases = _numeric_aliases(unique)
    with connect(settings, client) as (client, profile):
        wanted = [*unique, *aliases.values()]
        before = _look_up(client, profile, wanted, dry_run) if keep or dry_run else None
        if dry_run:
            return _dry_run(client.host, profile, unique, before)
        kept: Snapshot | SnapshotUnderWay | None = None
        if keep and before is None:
            say(warn, _cannot_undo(client.host))
        elif keep:
            going = _going(unique, aliases, before)
            if going:
                where = {
                    "profile": profile,
                    "host": client.host,
                    "base_url": client.base_url,
                    "operation": "delete",
                }
                # One request: the snapshot syncs while it connects and is signed, and the
                # client waits for it before the first byte. A batch takes it first.
                one = len(checked) == 1
                kept = snapshot_soon(going, **where) if one else take_snapshot(going, **where)
        known = before if before is not None else CACHE.cached(client, profile, unique)
        run = _Run(client, profile, known, kept, warn)
        result = run.send(checked, settings.workers, progress, cancel)
        result = run.settle(result, before)
    return finish(result, settings)


def _numeric_aliases(ids: list[str]) -> dict[str, str]:
    """``017`` -> ``17``: the entry a server that reads ids as numbers would delete instead."""
    found = {}
    for entry_id in ids:
        if entry_id.isascii() and entry_id.isdigit():
            plain = entry_id.lstrip("0") or "0"
            if plain != entry_id:
                found[entry_id] = plain
    return found


def _going(ids: list[str], aliases: dict[str, str], before: dict[str, Entry]) -> list[Entry]:
    """The entries to keep before deleting ``ids``: each one listed, or else the entry its
    numeric alias names (kept in case the server reads ``017`` as 17), once each."""
    going: dict[str, Entry] = {}
    for entry_id in ids:
        entry = before.get(entry_id) or before.get(aliases.get(entry_id, ""))
        if entry is not None:
            going.setdefault(entry.id, entry)
    return list(going.values())


def _look_up(
    client: DictionaryClient, profile: str, ids: list[str], dry_run: bool
) -> dict[str, Entry] | None:
    """The entries by id from a listing that holds every id asked about (or a fresh one);
    ``None`` when the service has no listing. Any other listing trouble stops here."""
    try:
        return CACHE.lookup(client, profile, ids)
    except ListingUnsupportedError:
        return None
    except ServiceError as exc:
        if dry_run:
            raise ServiceError(f"{exc}; nothing was sent (dry run).", cause=exc.cause) from None
        raise ServiceError(
            f"{exc}; so no snapshot could be taken first, and nothing was deleted. Try again, "
            "or add --no-snapshot to delete without a copy."
        ) from None


def _cannot_undo(host: str) -> str:
    return (
        f"the service at {host} offers no listing, so no snapshot could be taken: this "
        "deletion cannot be undone (--no-snapshot goes ahead without this warning)"
    )


def _dry_run(
    host: str, profile: str, ids: list[str], before: dict[str, Entry] | None
) -> DryRunResult:
    from ..models import DryRunResult

    if before is None:
        return DryRunResult("delete", host, profile, missing=ids, listed=False)
    return DryRunResult(
        "delete",
        host,
        profile,
        entries=[before[i] for i in ids if i in before],
        missing=[i for i in ids if i not in before],
    )


class _Run:
    """One deletion's requests: results named and audited as they come, unknowns settled."""

    def __init__(
        self,
        client: DictionaryClient,
        profile: str,
        known: dict[str, Entry],
        kept: Snapshot | SnapshotUnderWay | None,
        warn: Warn,
    ) -> None:
        self.client = client
        self.profile = profile
        self.known = known
        self._kept = kept
        self.trail = Trail(
            profile=profile,
            host=client.host,
            operation="delete",
            snapshot=None if isinstance(kept, SnapshotUnderWay) else kept,
            warn=warn,
        )

    @property
    def kept(self) -> Snapshot | None:
        """The snapshot, once on disk (raises its ``UsageProblem`` if it could not be)."""
        if isinstance(self._kept, SnapshotUnderWay):
            self._kept = self._kept.result()
            self.trail.snapshot = self._kept
        return self._kept

    def named(self, result: DeleteResult) -> DeleteResult:
        """The result with its entry's terms (when known) and the snapshot that holds it."""
        entry = self.known.get(result.entry_id or "")
        path = str(self.kept.path) if self.kept is not None and entry is not None else None
        if entry is None and path is None:
            return result
        return replace(result, entry=entry, snapshot=path)

    def send(
        self,
        ids: list[str],
        workers: int,
        progress: ProgressSink | None,
        cancel: threading.Event | None,
    ) -> DeleteResult | BatchResult:
        """The requests, audited as each outcome is known (unknown ones once settled)."""
        from ..service.client import RequestInterrupted

        with self.trail:
            if len(ids) == 1:
                ready = self._kept.result if isinstance(self._kept, SnapshotUnderWay) else None
                try:
                    return self.noted(self.client.delete_entry(ids[0], ready=ready))
                except RequestInterrupted as stopped:
                    result = self.named(stopped.result)
                    self.trail.record(result)
                    self._update_cache([result])
                    raise RequestInterrupted(result) from None
            batch = _batch(self.client, ids, workers, _Sink(self, progress), cancel)
            path = str(self.kept.path) if self.kept is not None else None
            return replace(batch, results=[self.named(r) for r in batch.results], snapshot=path)

    def noted(self, result: DeleteResult) -> DeleteResult:
        """``named(result)``, audited now when its outcome is known (else once settled)."""
        result = self.named(result)
        if not result.outcome_unknown:
            self.trail.record(result)
        return result

    def settle(
        self, result: DeleteResult | BatchResult, before: dict[str, Entry] | None
    ) -> DeleteResult | BatchResult:
        """Unknown outcomes decided by one listing (when the service lists), then audited."""
        batch = getattr(result, "results", None)
        originals: list[DeleteResult] = [result] if batch is None else list(batch)  # type: ignore[list-item]
        settled = originals
        if any(r.outcome_unknown for r in originals) and not CACHE.unsupported(
            self.client, self.profile
        ):
            try:
                after = CACHE.fetch(self.client, self.profile).by_id()
            except ServiceError:
                after = None
            if after is not None:
                settled = settle_deletes(originals, before, after)
        with self.trail:
            recorded: set[str | None] = set()
            for original, now in zip(originals, settled, strict=True):
                if original.outcome_unknown and now.entry_id not in recorded:
                    recorded.add(now.entry_id)
                    self.trail.record(now)
        self._update_cache(settled)
        if batch is None:
            return settled[0]
        return replace(result, results=settled)

    def _update_cache(self, results: list[DeleteResult]) -> None:
        if any(r.outcome_unknown for r in results):
            CACHE.invalidate(self.client, self.profile)
            return
        CACHE.deleted(self.client, self.profile, [r.entry_id for r in results if r.ok])


class _Sink:
    """The progress sink the client calls: names and audits each result, then passes it on."""

    def __init__(self, run: _Run, progress: ProgressSink | None) -> None:
        self.run = run
        self.progress = progress

    def start(self, total: int, label: str) -> None:
        if self.progress is not None:
            self.progress.start(total, label)

    def __call__(self, done: int, total: int, result: DeleteResult) -> None:
        result = self.run.noted(result)
        if self.progress is not None:
            self.progress(done, total, result)

    def waiting(self, seconds: float, reason: str) -> None:
        told = getattr(self.progress, "waiting", None)
        if told is not None:
            told(seconds, reason)

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()


def _batch(
    client: DictionaryClient,
    ids: list[str],
    workers: int,
    progress: _Sink,
    cancel: threading.Event | None,
) -> BatchResult:
    total = len(dict.fromkeys(ids))
    progress.start(total, f"Deleting {count(total, 'entry', 'entries')} at {client.host}")
    try:
        return client.delete_entries(
            ids,
            workers=workers,
            progress=progress,
            cancel=cancel,
            on_wait=getattr(progress, "waiting", None),
        )
    finally:
        progress.stop()


def interruption(result: DeleteResult | BatchResult) -> str | None:
    """``interrupted: N not attempted`` for a batch that was stopped, else ``None``."""
    if not getattr(result, "interrupted", False):
        return None
    never_sent = {r.entry_id for r in result.results if r.attempts == 0}
    return f"interrupted: {len(never_sent)} not attempted"
