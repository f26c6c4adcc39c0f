"""Undo an update or a sync from its format-2 snapshot: the dictionary put back as it was.

The snapshot holds each entry as it was before it was changed or deleted, and the terms of
the entries the operation added. Against one listing: an entry listed under its id with other
terms is put back (PUT, same id); an entry no longer listed is added again (bulk; counted, so
two identical entries in the snapshot and one present add one); an entry the operation added
and still listed is removed (the existing delete machinery, itself with a snapshot first, so
the undo can be undone). Removing asks first, listing what goes, unless ``yes``.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import ServiceError, ServiceFailure
from ..service.client import RequestInterrupted
from .audit import AuditLog
from .context import OperationSettings, ProgressSink, Warn
from .delete import count
from .listing import CACHE
from .prompts import Prompter, confirm, named
from .settle import add_and_settle, name_added

if TYPE_CHECKING:
    from ..models import AddResult, Entry, RestoreResult, UpdateResult
    from ..service.client import DictionaryClient
    from .snapshots import Snapshot

__all__ = ["UNDONE", "plan_undo", "undo_changes"]

UNDONE = ("update", "sync")
"""The snapshot operations this module undoes (delete and purge: ``restore`` re-adds)."""


def _missing(entries: Sequence[Entry], listing: Sequence[Entry]) -> tuple[list[Entry], list[Entry]]:
    """(to add, already present), counting copies: two identical entries kept and one listed
    add one."""
    return split_present(entries, Counter(e.terms for e in listing))


def split_present(
    entries: Sequence[Entry], present: Mapping[tuple[str, ...], int]
) -> tuple[list[Entry], list[Entry]]:
    """(to add, already there), in order: each entry is there while ``present`` still counts
    an entry with its terms (one count used per entry, so twins are told apart)."""
    left = Counter(present)
    wanted, there = [], []
    for entry in entries:
        if left[entry.terms] > 0:
            left[entry.terms] -= 1
            there.append(entry)
        else:
            wanted.append(entry)
    return wanted, there


def plan_undo(
    snapshot: Snapshot, listing: Sequence[Entry]
) -> tuple[list[tuple[Entry, Entry]], list[Entry], list[Entry], list[Entry]]:
    """(put back as (now, old), re-add, remove, already as they were) for ``listing``."""
    by_id = {e.id: e for e in listing}
    put_back: list[tuple[Entry, Entry]] = []
    skipped: list[Entry] = []
    gone: list[Entry] = []
    for old in snapshot.entries:
        now = by_id.get(old.id)
        if now is None:
            gone.append(old)
        elif now.terms == old.terms:
            skipped.append(old)
        else:
            put_back.append((now, old))
    readd, present = _missing(gone, listing)
    kept = {e.id for e in snapshot.entries}
    pool: dict[tuple[str, str, str, str], list[Entry]] = {}
    for entry in listing:
        if entry.id not in kept:
            pool.setdefault(entry.terms, []).append(entry)
    remove = []
    for added in snapshot.added:
        found = pool.get(added.terms)
        if found:
            remove.append(found.pop())  # the newest of its terms goes first
    return put_back, readd, remove, skipped + present


def undo_changes(
    settings: OperationSettings,
    client: DictionaryClient,
    profile: str,
    snapshot: Snapshot,
    *,
    prompter: Prompter | None = None,
    progress: ProgressSink | None = None,
    dry_run: bool = False,
    yes: bool = False,
    cancel: threading.Event | None = None,
    warn: Warn = None,
) -> RestoreResult:
    """Put the dictionary back as ``snapshot`` (operation update or sync) found it."""
    from ..models import RestoreResult

    try:
        listing = list(CACHE.fetch(client, profile).entries)
    except ServiceError as exc:
        raise ServiceError(
            f"{exc}; an undo needs a listing to know what changed since, so nothing was sent.",
            cause=exc.cause,
        ) from None
    put_back, readd, remove, skipped = plan_undo(snapshot, listing)
    if dry_run:
        return RestoreResult(
            added=readd,
            skipped=skipped,
            dry_run=True,
            put_back=[old for _, old in put_back],
            removed=remove,
        )
    if remove and not yes:
        _confirm(prompter, remove, client.host, profile, snapshot.operation)
    cancel = cancel or threading.Event()
    updates = _put_back(client, profile, snapshot, put_back, warn, cancel)
    adds, after = _readd(
        client, profile, snapshot, readd, listing, settings, progress, warn, cancel
    )
    added = [r.entry for r in adds if r.ok]
    if added and after is None:
        after = listing_after(client, profile)
    removed, failed_removals = _remove(settings, client, remove, warn, cancel)
    failed: list[tuple[Entry, str]] = []
    unknown: list[Entry] = []
    for result in updates:
        old = snapshot_entry(result)
        if result.outcome == "failure":
            failed.append((old, result.reason or "not put back"))
        elif result.outcome_unknown:
            unknown.append(old)
    for result in adds:
        if result.outcome == "failure":
            failed.append((result.entry, result.reason or "not added"))
        elif result.outcome_unknown:
            unknown.append(result.entry)
    for entry, reason, is_unknown in failed_removals:
        (unknown.append(entry) if is_unknown else failed.append((entry, reason)))
    return RestoreResult(
        added=name_added(added, listing, after),
        skipped=skipped,
        failed=failed,
        unknown=unknown,
        put_back=[snapshot_entry(r) for r in updates if r.ok],
        removed=removed,
    )


def snapshot_entry(result: UpdateResult) -> Entry:
    """The entry as the snapshot kept it (what an undo PUTs)."""
    return result.new


def _confirm(
    prompter: Prompter | None, remove: list[Entry], host: str, profile: str, operation: str
) -> None:
    warning = (
        f"Undoing this {operation} removes {len(remove)} entr{'y' if len(remove) == 1 else 'ies'} "
        f"it added at {host} (profile {profile!r}): {named(remove)}. They are kept in a snapshot "
        "first."
    )
    confirm(
        prompter,
        warning,
        "undo it",
        unasked=lambda why: (
            f"refusing to remove {len(remove)} entr{'y' if len(remove) == 1 else 'ies'} "
            f"at {host} without a "
            f"confirmation, but {why}. Nothing was sent."
        ),
        declined=f"Cancelled \u2014 undo not confirmed: nothing was sent ({host}).",
        option="yes",
    )


def _trail(client: DictionaryClient, profile: str, operation: str, snapshot: Snapshot, warn: Warn):
    return AuditLog(
        profile=profile,
        host=client.host,
        operation=operation,  # type: ignore[arg-type]
        snapshot=snapshot,
        warn=warn,
    )


def _put_back(
    client: DictionaryClient,
    profile: str,
    snapshot: Snapshot,
    pairs: list[tuple[Entry, Entry]],
    warn: Warn,
    cancel: threading.Event,
) -> list[UpdateResult]:
    """PUT each old version back under its id; lost answers settled by one listing."""
    from .settle import settle_updates

    results: list[UpdateResult] = []
    with _trail(client, profile, "update", snapshot, warn) as trail:
        for now, old in pairs:
            if cancel.is_set():
                break
            try:
                result = client.update_entry(old.id, old, old=now)
            except RequestInterrupted as stopped:  # the answer came: audited before it goes on
                CACHE.invalidate(client, profile)
                trail.record(stopped.result)
                raise stopped.passed_on(stopped.result) from None
            if not result.outcome_unknown:
                trail.record(result)
            results.append(result)
        if results:
            CACHE.invalidate(client, profile)
        if any(r.outcome_unknown for r in results):
            try:
                after = CACHE.fetch(client, profile).by_id()
            except ServiceError:
                after = None
            if after is not None:
                settled = settle_updates(results, after)
                for before, now_ in zip(results, settled, strict=True):
                    if before.outcome_unknown:
                        trail.record(now_)
                results = settled
    return results


def _readd(
    client: DictionaryClient,
    profile: str,
    snapshot: Snapshot,
    entries: list[Entry],
    listing: list[Entry],
    settings: OperationSettings,
    progress: ProgressSink | None,
    warn: Warn,
    cancel: threading.Event,
) -> tuple[list[AddResult], list[Entry] | None]:
    """Bulk adds of the entries gone since (the client settles lost chunks; its listing comes
    back with the results, when taken)."""
    if not entries or cancel.is_set():
        return [], None
    if progress is not None:
        progress.start(
            len(entries), f"Restoring {count(len(entries), 'entry', 'entries')} at {client.host}"
        )
    try:
        batch = add_and_settle(
            client,
            [replace(e, id="") for e in entries],
            chunk_size=settings.chunk_size,
            workers=settings.workers,
            progress=progress,  # type: ignore[arg-type]
            cancel=cancel,
            before=listing,
        )
    finally:
        CACHE.invalidate(client, profile)
        if progress is not None:
            progress.stop()
    results = [replace(r, entry=e) for r, e in zip(batch.results, entries, strict=True)]
    with _trail(client, profile, "add", snapshot, warn) as trail:
        trail.record_all(results)
    return results, batch.after


def listing_after(client: DictionaryClient, profile: str) -> list[Entry] | None:
    """One listing after additions, to name the new ids (the service answers with none);
    ``None`` when it cannot be had (the additions stand, their ids stay unknown)."""
    try:
        return list(CACHE.fetch(client, profile).entries)
    except ServiceFailure:
        return None


def _remove(
    settings: OperationSettings,
    client: DictionaryClient,
    entries: list[Entry],
    warn: Warn,
    cancel: threading.Event,
) -> tuple[list[Entry], list[tuple[Entry, str, bool]]]:
    """Delete what the operation added, with the delete machinery (its own snapshot first)."""
    if not entries or cancel.is_set():
        return [], []
    from .delete import delete

    result = delete(
        replace(settings, raise_on_failure=False, snapshots=True),
        [e.id for e in entries],
        client=client,
        cancel=cancel,
        warn=warn,
    )
    by_id = {e.id: e for e in entries}
    removed, problems = [], []
    for r in getattr(result, "results", [result]):
        entry = by_id[r.entry_id]
        if getattr(r, "done", r.ok):  # deleted now, or already gone
            removed.append(entry)
        else:
            problems.append((entry, r.reason or "not removed", r.outcome_unknown))
    return removed, problems
