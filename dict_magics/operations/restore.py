"""Put back what a snapshot holds and the dictionary lacks: the undo of a delete or a purge.

The dictionary is listed first and only entries whose four terms are missing are added (as many
times as the snapshot holds them beyond those listed), so a restore run twice adds nothing the
second time. Additions go in bulk chunks (``DictionaryClient.add_entries``) on ``workers``
threads, each entry audited. The service does not return a new entry's id, so a chunk whose
answer was lost is never sent again blindly: one listing after the batch settles it. A
snapshot taken on another host or profile is restored only once
the person confirms (or ``yes``).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import (
    ListingUnsupportedError,
    OperationFailedError,
    Remedy,
    ServiceError,
    UsageProblem,
)
from ..models.text import shown
from ..service.http import same_base_url
from .audit import AuditLog
from .context import OperationSettings, ProgressSink, Warn, connect
from .delete import count
from .listing import CACHE
from .locks import RestoreLock
from .prompts import Prompter, confirm
from .settle import add_and_settle, name_added
from .snapshots import Snapshot, latest_snapshot, read_snapshot
from .undo import UNDONE, listing_after, split_present, undo_changes

if TYPE_CHECKING:
    from ..models import AddResult, Entry, RestoreResult
    from ..service.client import DictionaryClient

__all__ = ["missing_entries", "restore"]


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
        snapshot = _snapshot(source, profile, client.host, client.base_url)
        if not dry_run and yes and not _named(source):
            _refuse_other_prefix(snapshot, client.base_url)
        if not dry_run and not yes:
            _confirm_elsewhere(prompter, snapshot, profile, client.host, client.base_url)
        if snapshot.operation in UNDONE:  # format 2: put changed entries back, remove added
            return _undo(
                settings, client, profile, snapshot, prompter, progress, dry_run, yes, cancel, warn
            )
        age = snapshot.listing_age
        if dry_run:
            before = _listing(client, profile, dry_run)
            wanted, skipped = missing_entries(snapshot.entries, before, snapshot.copies)
            return RestoreResult(added=wanted, skipped=skipped, dry_run=True, listing_age=age)
        # One restore at a time per profile and host (threads and processes): the listing that
        # decides what is missing is taken under the lock, after any earlier restore's
        # additions have landed, so two restores at once never add anything twice.
        with RestoreLock(profile, client.host, client.timeout, warn) as lock:
            before = _listing(client, profile, dry_run)
            wanted, skipped = missing_entries(snapshot.entries, before, snapshot.copies)
            wanted, refused = _sendable(wanted)
            if not wanted:
                return RestoreResult(skipped=skipped, failed=refused, listing_age=age)
            with AuditLog(
                profile=profile, host=client.host, operation="add", snapshot=snapshot, warn=warn
            ) as trail:
                results, after = _add(
                    client, profile, settings, wanted, before, progress, cancel, trail, lock
                )
            added = [r.entry for r in results if r.ok]
            if added and after is None:
                after = listing_after(client, profile)
    result = RestoreResult(
        added=name_added(added, before, after),
        skipped=skipped,
        failed=refused
        + [(r.entry, r.reason or "not added") for r in results if r.outcome == "failure"],
        unknown=[r.entry for r in results if r.outcome_unknown],
        listing_age=age,
    )
    if settings.raise_on_failure and not result.ok:
        raise OperationFailedError(result)
    return result


def _undo(
    settings: OperationSettings,
    client: DictionaryClient,
    profile: str,
    snapshot: Snapshot,
    prompter: Prompter | None,
    progress: ProgressSink | None,
    dry_run: bool,
    yes: bool,
    cancel: threading.Event | None,
    warn: Warn,
) -> RestoreResult:
    """The undo of an update or a sync, under the same lock as any restore (not a dry run)."""

    def run() -> RestoreResult:
        return undo_changes(
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

    if dry_run:
        result = run()
    else:
        with RestoreLock(profile, client.host, client.timeout, warn):
            result = run()
    if settings.raise_on_failure and not result.ok:
        raise OperationFailedError(result)
    return result


def missing_entries(
    snapshot: Sequence[Entry],
    listing: Sequence[Entry],
    copies: Mapping[str, int] | None = None,
) -> tuple[list[Entry], list[Entry]]:
    """(to add, already present), counting copies.

    For each set of four terms, the dictionary should hold as many entries as it did when the
    snapshot was taken: the snapshot's own entries with those terms, or more where ``copies``
    says the dictionary held twins the delete left in place. What the listing holds counts
    toward that; the rest is added, never more than the snapshot holds."""
    copies = copies or {}
    held = Counter(e.terms for e in snapshot)
    had = Counter(held)
    for entry in snapshot:
        had[entry.terms] = max(had[entry.terms], copies.get(entry.id, 0))
    present = Counter(e.terms for e in listing)
    # How many of the snapshot's entries of each terms are there already.
    there = {t: max(0, min(held[t], present[t] - (had[t] - held[t]))) for t in held}
    return split_present(snapshot, there)


def _sendable(entries: list[Entry]) -> tuple[list[Entry], list[tuple[Entry, str]]]:
    """(entries that can be sent, (entry, why not) for the others): a term holding a lone
    surrogate (a listing may carry ``"\\ud800"``) is not text; no request can carry it as
    UTF-8, and the service's rules refuse it."""
    ok, refused = [], []
    for entry in entries:
        bad = [f"U+{ord(ch):04X}" for t in entry.terms for ch in t if 0xD800 <= ord(ch) <= 0xDFFF]
        if bad:
            refused.append(
                (
                    entry,
                    f"not sent: its terms hold a lone surrogate ({', '.join(dict.fromkeys(bad))}), "
                    "which is not text and cannot be sent as UTF-8; the snapshot keeps it as the "
                    "escape \\u" + bad[0][2:].lower() + ": add it again by hand without it",
                )
            )
        else:
            ok.append(entry)
    return ok, refused


def _named(source: str | Path | None) -> bool:
    """Whether the person named the snapshot (else the default: this prefix's latest)."""
    return source is not None and bool(str(source).strip())


def _refuse_other_prefix(snapshot: Snapshot, base_url: str) -> None:
    """The default falls back to another API prefix's snapshot (same host and profile) only
    for someone to confirm: ``yes`` confirmed no file, so it is refused, naming the file."""
    if same_base_url(snapshot.base_url, base_url):
        return
    raise UsageProblem(
        f"no snapshot of {base_url} yet; the latest of this host, {shown(str(snapshot.path))}, "
        f"was taken on {shown(snapshot.base_url)}, another API prefix (another dictionary). "
        "Name it to restore it here. Nothing was sent.",
        option=Remedy.SNAPSHOTS,
    )


def _snapshot(source: str | Path | None, profile: str, host: str, base_url: str) -> Snapshot:
    if _named(source):
        return read_snapshot(str(source).strip())
    latest = latest_snapshot(profile, host, base_url)
    if latest is None:
        raise UsageProblem(
            f"no snapshot of profile {profile!r} at {host} yet (one is taken before every "
            "delete and purge). Nothing was sent.",
            option=Remedy.SNAPSHOTS,
        )
    return read_snapshot(latest.path)


def _confirm_elsewhere(
    prompter: Prompter | None, snapshot: Snapshot, profile: str, host: str, base_url: str
) -> None:
    """A snapshot of another host, API prefix or profile goes back only once someone types
    yes."""
    same_prefix = same_base_url(snapshot.base_url, base_url)
    if (snapshot.host, snapshot.profile) == (host, profile) and same_prefix:
        return
    if snapshot.host == host and not same_prefix:  # name the prefixes apart
        host = base_url
        there = shown(snapshot.base_url)
    else:
        there = shown(snapshot.host)
    # The snapshot's host and profile are text from a file: shown, never acted on by a terminal.
    theirs = shown(snapshot.profile)
    warning = (
        f"The snapshot {shown(str(snapshot.path))} was taken on {there} (profile "
        f"{theirs!r}); this adds its missing entries to {host} (profile {profile!r})."
    )
    confirm(
        prompter,
        warning,
        "restore it there",
        unasked=lambda why: (
            f"refusing to restore a snapshot of {there} (profile {theirs!r}) "
            f"to {host} (profile {profile!r}) without a confirmation, but {why}. "
            "Nothing was sent."
        ),
        declined=f"restore not confirmed: nothing was added ({host}).",
        option=Remedy.YES,
    )


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


def _add(
    client: DictionaryClient,
    profile: str,
    settings: OperationSettings,
    wanted: list[Entry],
    before: list[Entry],
    progress: ProgressSink | None,
    cancel: threading.Event | None,
    trail: AuditLog,
    lock: RestoreLock | None = None,
) -> tuple[list[AddResult], list[Entry] | None]:
    """The additions in bulk chunks on ``settings.workers`` threads (``add_entries``), each
    audited as its chunk's answer comes; a chunk whose answer was lost is never sent again,
    and is audited once the client's one listing has settled it (returned with the results,
    when taken). Ctrl-C or ``cancel`` sends nothing new and waits for the chunks in flight."""
    from dataclasses import replace

    from ..models import AddResult, Cause
    from ..models.terms import entry_problems

    # What the service would refuse is not sent (a bulk request is all or nothing): each such
    # entry is reported as not added, and the rest go back.
    refused: dict[int, AddResult] = {}
    for index, entry in enumerate(wanted):
        problems = entry_problems(*entry.terms)
        if problems:
            why = "; ".join(p.message for p in problems)
            reason = f"not sent: the service would refuse it ({why})"
            refused[index] = AddResult(
                "failure", entry, reason=reason, attempts=0, cause=Cause.INVALID
            )
    sendable = [e for i, e in enumerate(wanted) if i not in refused]

    def report(done: int, total: int, result: AddResult) -> None:
        if lock is not None:
            lock.sending()  # chunks still going: a re-run after this process dies waits
        if not result.outcome_unknown:
            trail.record(result)
        if progress is not None:
            progress(done, total, result)  # type: ignore[arg-type]

    if progress is not None:
        label = f"Restoring {count(len(sendable), 'entry', 'entries')} at {client.host}"
        progress.start(len(sendable), label)
    if lock is not None:
        lock.sending()  # a re-run after this process dies waits for these answers
    try:
        batch = add_and_settle(
            client,
            sendable,
            chunk_size=settings.chunk_size,
            workers=settings.workers,
            progress=report,
            cancel=cancel,
            on_wait=getattr(progress, "waiting", None),
            before=before,
        )
    finally:
        if progress is not None:
            progress.stop()
        CACHE.invalidate(client, profile)  # new ids, unknown to the cached listing
    for index in batch.settled:
        trail.record(batch.results[index])
    for result in batch.results:
        if result.outcome_unknown and result.attempts:
            trail.record(result)  # the listing could not settle it: audited as unknown
    why = "interrupted" if batch.why == "interrupted" else "cancelled"
    sent = iter(
        replace(r, reason=f"not sent: the restore was {why} first (running it again adds it)")
        if r.cause is Cause.NOT_ATTEMPTED and batch.why in ("interrupted", "cancelled", "")
        else r
        for r in batch.results
    )
    return [refused[i] if i in refused else next(sent) for i in range(len(wanted))], batch.after
