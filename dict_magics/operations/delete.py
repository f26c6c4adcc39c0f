"""Delete one entry or several: ids checked, entries looked up and kept, then the requests.

The entries about to go are looked up in a listing and written to a snapshot before the first
DELETE; an id the listing lacks is not sent. Outcomes left unknown are settled by one listing.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import ListingUnsupportedError, Notice, Remedy, ServiceError, UsageProblem
from ..models.entry import check_id
from ..models.text import entries
from ..service.client import RequestInterrupted
from .audit import AuditLog
from .context import (
    CACHE,
    OperationSettings,
    ProgressSink,
    Warn,
    connect,
    finish,
    listed_after,
    say,
)
from .settle import settle_deletes
from .snapshots import listing_failed, write_snapshot

if TYPE_CHECKING:
    from pathlib import Path

    from ..models import BatchResult, DeleteResult, DryRunResult, Entry, EntryList
    from ..service.client import DictionaryClient


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
    not to); ``DictMagicsError`` before any request, ``DeletionFailedError`` for a failure only
    if ``settings.raise_on_failure``."""
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
        if dry_run:
            from ..models import DryRunResult

            if before is None:
                return DryRunResult("delete", client.host, profile, missing=unique, listed=False)
            return DryRunResult(
                "delete",
                client.host,
                profile,
                entries=[before[i] for i in unique if i in before],
                missing=[i for i in unique if i not in before],
                listing_age=age,
                listing=tuple(before.values()),
            )
        absent = [i for i in unique if i not in before] if keep and before is not None else []
        sent = [i for i in checked if i not in set(absent)]
        kept: Path | None = None
        if keep and before is None:
            unkept = (
                f"the service at {client.host} offers no listing, so no snapshot could be taken"
            )
            say(
                warn,
                Notice(f"{unkept}: this deletion cannot be undone", option=Remedy.QUIET_NO_COPY),
            )
        elif keep and sent:
            going = [before[i] for i in dict.fromkeys(sent)]  # type: ignore[index]
            counts = Counter(e.terms for e in before.values())  # type: ignore[union-attr]
            kept = write_snapshot(
                going,
                profile=profile,
                host=client.host,
                base_url=client.base_url,
                operation="delete",
                copies={e.id: counts[e.terms] for e in going if counts[e.terms] > 1},
                listing_age=age,
            )
        cached = CACHE.recent(client, profile) if before is None else None
        known = before or (cached[0].by_id() if cached else {})
        path = None if kept is None else str(kept)

        def named(result: DeleteResult) -> DeleteResult:
            """The result with its entry's terms (when known) and the snapshot that holds it."""
            entry = known.get(result.entry_id or "")
            if entry is None and path is None:
                return result
            return replace(result, entry=entry, snapshot=path)

        with AuditLog(
            profile=profile,
            host=client.host,
            operation="delete",
            snapshot=kept,
            entries=known,
            warn=warn,
        ) as audit:
            results, interrupted = _send(
                client, profile, sent, named, audit, settings, progress, cancel
            )
            results, stopped = _settle(client, profile, results, before, audit)
        result = _in_order(checked, results, absent, path, interrupted)
    if stopped:  # Ctrl-C during the listing after: what was sent is audited, then shown
        raise RequestInterrupted(result)
    return finish(result, settings)


def _listing(
    client: DictionaryClient, profile: str, ids: list[str], dry_run: bool, max_age: float | None
) -> tuple[EntryList | None, float | None]:
    """The listing the snapshot (or the dry run) takes its terms from, and its age: the cached
    one when ``listing_max_age`` allows it and it holds every id, else a fresh one (age 0);
    ``None`` when the service has no listing (remembered for a minute)."""
    if max_age:
        cached = CACHE.recent(client, profile, ids, max_age)
        if cached is not None:
            return cached
    if CACHE.unsupported(client, profile):
        return None, None
    try:
        return CACHE.fetch(client, profile), 0.0
    except ListingUnsupportedError:
        return None, None
    except ServiceError as exc:
        raise listing_failed(exc, dry_run) from None


def _in_order(
    ids: list[str],
    sent: list[DeleteResult],
    absent: list[str],
    snapshot: str | None,
    interrupted: bool,
) -> DeleteResult | BatchResult:
    """The results in the order given, the ids not sent (not listed) in their places."""
    from ..models import BatchResult, Cause, DeleteResult

    if absent:
        note = (
            "the listing taken just before does not hold it: nothing was sent (nothing to "
            "delete; no copy could be kept of an entry the listing does not show)"
        )
        made = {
            i: DeleteResult("failure", i, reason=note, attempts=0, cause=Cause.ABSENT, absent=True)
            for i in absent
        }
        by_id = {r.entry_id: r for r in sent}
        sent = [made[i] if i in made else by_id[i] for i in ids]
    if len(ids) == 1:
        return sent[0]
    return BatchResult(results=sent, interrupted=interrupted, snapshot=snapshot)


def _send(
    client: DictionaryClient,
    profile: str,
    ids: list[str],
    named: Callable[[DeleteResult], DeleteResult],
    audit: AuditLog,
    settings: OperationSettings,
    progress: ProgressSink | None,
    cancel: threading.Event | None,
) -> tuple[list[DeleteResult], bool]:
    """The results of deleting ``ids`` (in their order), and whether the batch was
    interrupted; Ctrl-C during one request is passed on once its result is cached."""
    if not ids:
        return [], False
    if len(ids) == 1:
        try:
            return [named(client.delete_entry(ids[0], audit=audit))], False
        except RequestInterrupted as stopped:
            result = named(stopped.result)
            _update_cache(client, profile, [result])
            raise stopped.passed_on(result) from None
    if progress is not None:
        progress.start(len(set(ids)), f"Deleting {entries(len(set(ids)))} at {client.host}")

    def report(done: int, total: int, result: DeleteResult) -> None:
        if progress is not None:
            progress(done, total, named(result))

    try:
        batch = client.delete_entries(
            ids,
            workers=settings.workers,
            progress=report,
            cancel=cancel,
            on_wait=getattr(progress, "waiting", None),
            audit=audit,
        )
    finally:
        if progress is not None:
            progress.stop()
    return [named(r) for r in batch.results], batch.interrupted


def _settle(
    client: DictionaryClient,
    profile: str,
    results: list[DeleteResult],
    before: dict[str, Entry] | None,
    audit: AuditLog,
) -> tuple[list[DeleteResult], bool]:
    """Unknown outcomes decided by one listing (when the service lists), then audited; and
    whether Ctrl-C ended the wait for that listing."""
    stopped = False
    if not results:
        return results, False
    unknown = {r.entry_id for r in results if r.outcome_unknown}
    if unknown and not CACHE.unsupported(client, profile):
        listing, stopped = listed_after(client, profile)
        if listing is not None:
            results = settle_deletes(results, before, listing.by_id())
            audit.record_all({r.entry_id: r for r in results if r.entry_id in unknown}.values())
    _update_cache(client, profile, results)
    return results, stopped


def _update_cache(client: DictionaryClient, profile: str, results: list[DeleteResult]) -> None:
    if any(r.outcome_unknown for r in results):
        CACHE.invalidate(client, profile)
    else:
        CACHE.deleted(client, profile, [r.entry_id for r in results if r.ok and r.entry_id])


def interruption(result: DeleteResult | BatchResult) -> str | None:
    """``interrupted: N not attempted`` for a batch that was stopped, else ``None``."""
    from ..models import BatchResult

    if not isinstance(result, BatchResult) or not result.interrupted:
        return None
    never_sent = {r.entry_id for r in result.results if r.attempts == 0}
    return f"interrupted: {len(never_sent)} not attempted"
