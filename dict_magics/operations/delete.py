"""Delete one entry or several: ids checked, entries looked up and kept, then the requests.

Before the first DELETE the entries about to go are looked up in a fresh listing (or, when the
``listing_max_age`` setting allows, this process's cached one) and written to a snapshot, so
``restore`` can put them back; the results name their terms. Every request is
audited. Outcomes left unknown are settled by one listing after the batch. One id gives a
``DeleteResult``, several a ``BatchResult`` in the order given (an id repeated is sent once); a
dry run sends nothing that changes the dictionary and gives a ``DryRunResult``.
"""

from __future__ import annotations

import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..errors import ListingUnsupportedError, Notice, Remedy, ServiceError, UsageProblem
from ..service.paths import check_id, readings
from ..service.settle import settle_deletes
from .connect import connect
from .context import OperationSettings, ProgressSink, finish
from .listing import CACHE, listed_after
from .safeguards import (
    SnapshotUnderWay,
    Trail,
    Warn,
    listing_failed,
    say,
    snapshot_soon,
    take_snapshot,
)

if TYPE_CHECKING:
    from ..models import BatchResult, DeleteResult, DryRunResult, Entry, EntryList
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
    with connect(settings, client) as (client, profile):
        listing, age = None, None
        if keep or dry_run:
            listing, age = _listing(client, profile, unique, dry_run, settings.listing_max_age)
        before = listing.by_id() if listing is not None else None
        plan = _plan(unique, listing) if listing is not None else None
        if dry_run:
            return _dry_run(client.host, profile, unique, before, age)
        kept: Snapshot | SnapshotUnderWay | None = None
        absent = plan.absent if keep and plan is not None else []
        sent = [i for i in checked if i not in set(absent)]
        if keep and plan is None:
            say(warn, _cannot_undo(client.host))
        elif keep and plan is not None:
            if plan.going:
                where = {
                    "profile": profile,
                    "host": client.host,
                    "base_url": client.base_url,
                    "operation": "delete",
                    "copies": plan.copies,
                    "listing_age": age,
                }
                # One request: the snapshot syncs while it connects and is signed, and the
                # client waits for it before the first byte. A batch takes it first.
                soon = snapshot_soon if len(sent) == 1 else take_snapshot
                kept = soon(plan.going, **where)
        known = before if before is not None else CACHE.cached(client, profile, unique)
        run = _Run(client, profile, known, kept, warn)
        result = run.send(sent, settings.workers, progress, cancel) if sent else None
        if result is not None:
            result = run.settle(result, before)
        path = str(run.kept.path) if run.kept is not None else None
        result = _with_absent(checked, result, absent, before, path)
    return finish(result, settings)


@dataclass
class _Plan:
    """What a delete keeps and sends, read from a fresh listing."""

    going: list[Entry]
    """The entries to keep first: every listed entry some reading of an id names."""
    absent: list[str]
    """Ids no reading of which names a listed entry: not sent (nothing of ours to delete, and
    nothing that could be kept first)."""
    copies: dict[str, int]
    """For an entry kept whose four terms the listing holds more than once: how many times
    (so a restore puts back one of two twins even while the other is still there)."""


def _plan(ids: list[str], listing: EntryList) -> _Plan:
    """Each id, and whatever a careless server could read it as (``017``, ``17.json``,
    fullwidth digits, ``17;v=1``, ``x/../17``, ``%31%37``, ``17.``, ``17/``...: the readings of
    ``service.paths.readings``, then leading zeros dropped and case folded), matched against the
    listing: every listed entry an id may name is kept in the snapshot."""
    by_id = listing.by_id()
    folded: dict[str, list[str]] | None = None
    going: dict[str, Entry] = {}
    absent = []
    for entry_id in ids:
        named = [entry_id] if entry_id in by_id else []
        for reading in _aliases(entry_id):
            if reading in by_id:
                named.append(reading)
            else:
                if folded is None:
                    folded = {}
                    for listed in by_id:
                        folded.setdefault(listed.casefold(), []).append(listed)
                named.extend(folded.get(reading.casefold(), []))
        if not named:
            absent.append(entry_id)
        for listed in named:
            going.setdefault(listed, by_id[listed])
    counts = Counter(e.terms for e in by_id.values())  # a row the listing repeats counts once
    copies = {e.id: counts[e.terms] for e in going.values() if counts[e.terms] > 1}
    return _Plan(list(going.values()), absent, copies)


def _aliases(entry_id: str) -> set[str]:
    """The other ids a server might take ``entry_id`` for."""
    found = readings(entry_id)
    for reading in list(found):
        stripped = reading.strip()
        if stripped.isdigit():
            number = unicodedata.normalize("NFKC", stripped)
            if number.isascii():
                found.add(number.lstrip("0") or "0")
    found.discard(entry_id)
    return found


def _listing(
    client: DictionaryClient, profile: str, ids: list[str], dry_run: bool, max_age: float | None
) -> tuple[EntryList | None, float | None]:
    """The listing the snapshot (or the dry run) takes its terms from, and its age in seconds:
    this process's cached one when ``listing_max_age`` allows it and it holds every id (the
    user's choice: an edit made elsewhere since is not in it), else a fresh one (age 0)."""
    if max_age:
        cached = CACHE.recent(client, profile, ids, max_age)
        if cached is not None:
            return cached
    listing = _fresh_listing(client, profile, dry_run)
    return listing, (0.0 if listing is not None else None)


def _fresh_listing(client: DictionaryClient, profile: str, dry_run: bool) -> EntryList | None:
    """The dictionary now (never the cache: a snapshot must hold the terms the service has at
    the moment of the delete, not those of a listing up to a minute old); ``None`` when the
    service has no listing (a 404 or 405, remembered for a minute). Any other listing trouble
    stops here."""
    if CACHE.unsupported(client, profile):
        return None
    try:
        return CACHE.fetch(client, profile)
    except ListingUnsupportedError:
        return None
    except ServiceError as exc:
        raise listing_failed(exc, dry_run) from None


def _with_absent(
    ids: list[str],
    result: DeleteResult | BatchResult | None,
    absent: list[str],
    before: dict[str, Entry] | None,
    snapshot: str | None,
) -> DeleteResult | BatchResult:
    """The results in the order given, with the ids not sent (absent) in their places, and a
    refused DELETE of an id no listing held marked absent too."""
    from ..models import BatchResult, Cause, DeleteResult

    sent = [] if result is None else list(getattr(result, "results", [result]))
    if before is not None:
        sent = [_absent_if_unlisted(r, before) for r in sent]
    if not absent:
        if isinstance(result, BatchResult):
            return replace(result, results=sent)
        return sent[0]
    note = (
        "the listing taken just before holds neither it nor any entry a server could read it "
        "as: nothing was sent (nothing to delete; no copy could be kept of an entry the listing "
        "does not show)"
    )
    made = {
        i: DeleteResult("failure", i, reason=note, attempts=0, cause=Cause.OK, absent=True)
        for i in absent
    }
    by_id = {r.entry_id: r for r in sent}
    results = [made[i] if i in made else by_id[i] for i in ids]
    if len(ids) == 1:
        return results[0]
    interrupted = bool(getattr(result, "interrupted", False))
    return BatchResult(results=results, interrupted=interrupted, snapshot=snapshot)


def _absent_if_unlisted(result: DeleteResult, before: dict[str, Entry]) -> DeleteResult:
    """A DELETE the service refused (it did not act) of an id the listing did not hold."""
    from ..models import Cause

    if (
        result.outcome == "failure"
        and result.cause is Cause.REFUSED
        and result.entry_id is not None
        and result.entry_id not in before
    ):
        return replace(result, absent=True)
    return result


def _cannot_undo(host: str) -> Notice:
    return Notice(
        f"the service at {host} offers no listing, so no snapshot could be taken: this "
        "deletion cannot be undone",
        option=Remedy.QUIET_NO_COPY,
    )


def _dry_run(
    host: str,
    profile: str,
    ids: list[str],
    before: dict[str, Entry] | None,
    age: float | None,
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
        listing_age=age,
        listing=tuple(before.values()),
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
        self.noted_ids: set[str | None] = set()
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
        # Every id sent while a snapshot was kept names a listed entry (or what a server may
        # read it as): the snapshot holds it.
        path = str(self.kept.path) if self.kept is not None else None
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
                ready = self._kept.on_disk if isinstance(self._kept, SnapshotUnderWay) else None
                try:
                    return self.noted(self.client.delete_entry(ids[0], ready=ready))
                except RequestInterrupted as stopped:
                    # Not sent: nothing to name a snapshot for (its sync may never end).
                    sent = stopped.result.attempts > 0
                    result = self.named(stopped.result) if sent else stopped.result
                    self.trail.record(result)
                    self._update_cache([result])
                    raise stopped.passed_on(result) from None
            batch = _batch(self.client, ids, workers, _Sink(self, progress), cancel)
            # Requests in flight when Ctrl-C came were waited for, but their results may never
            # have reached the progress sink: audited here, each id once.
            for result in {r.entry_id: r for r in batch.results}.values():
                if result.entry_id not in self.noted_ids:
                    self.noted(result)
            path = str(self.kept.path) if self.kept is not None else None
            return replace(batch, results=[self.named(r) for r in batch.results], snapshot=path)

    def noted(self, result: DeleteResult) -> DeleteResult:
        """``named(result)``, audited now when its outcome is known (else once settled)."""
        result = self.named(result)
        self.noted_ids.add(result.entry_id)
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
        stopped = False
        if any(r.outcome_unknown for r in originals) and not CACHE.unsupported(
            self.client, self.profile
        ):
            listing, stopped = listed_after(self.client, self.profile)
            if listing is not None:
                settled = settle_deletes(originals, before, listing.by_id())
        with self.trail:
            recorded: set[str | None] = set()
            for original, now in zip(originals, settled, strict=True):
                if original.outcome_unknown and now.entry_id not in recorded:
                    recorded.add(now.entry_id)
                    self.trail.record(now)
        self._update_cache(settled)
        final = settled[0] if batch is None else replace(result, results=settled)
        if stopped:  # Ctrl-C during the listing: the unknowns audited as such, then shown
            from ..service.client import RequestInterrupted

            raise RequestInterrupted(final)  # type: ignore[arg-type]
        return final

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
