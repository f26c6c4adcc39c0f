"""Undo a change from its snapshot: put back what it deleted or changed, remove what it added.

Each entry is compared as it was (``entries``), as the change left it (``left``) and as a
listing shows it now: still as left is put back, changed since is asked about. Deleted entries
come back by their four terms, counted, so a restore run twice adds nothing the second time.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import (
    ListingUnsupportedError,
    OperationFailedError,
    Remedy,
    ServiceError,
    UsageProblem,
)
from ..models import Cause, RestoreResult
from ..models.terms import entry_problems
from ..models.text import entries as counted
from ..models.text import shown
from ..service.http import same_base_url
from .apply import ApplyChanges
from .context import OperationSettings, ProgressSink, Warn, connect
from .listing import CACHE
from .locks import RestoreLock
from .prompts import CONFIRM_WORD, Prompter, answer, confirm, named
from .settle import name_added
from .snapshots import Snapshot, latest_snapshot, read_snapshot

if TYPE_CHECKING:
    from ..models import Entry
    from ..service.client import DictionaryClient


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
    """Undo the change snapshot ``source`` kept (default: this profile and host's latest);
    ``DictMagicsError`` before any change, ``OperationFailedError`` if ``raise_on_failure``."""
    with connect(settings, client) as (client, profile):
        named = source is not None and bool(str(source).strip())
        latest = None if named else latest_snapshot(profile, client.host, client.base_url)
        if not named and latest is None:
            raise UsageProblem(
                f"no snapshot of profile {profile!r} at {client.host} yet (one is taken before "
                "every delete and purge). Nothing was sent.",
                option=Remedy.SNAPSHOTS,
            )
        snapshot = read_snapshot(latest.path if latest else str(source).strip())
        if dry_run:
            return plan_restore(snapshot, _listing(client, profile, True)).result(snapshot, True)
        _confirm_elsewhere(prompter, snapshot, profile, client, yes=yes, named=named)
        # One restore at a time per profile and host (threads and processes), its listing taken
        # once an earlier one's additions have landed: nothing is ever added twice.
        with RestoreLock(profile, client.host, client.timeout, warn) as lock:
            listing = _listing(client, profile, False)
            plan = plan_restore(snapshot, listing)
            if not yes:
                plan = _ask(prompter, plan, snapshot, client.host, profile)
            run = ApplyChanges(
                client,
                profile,
                settings,
                progress=progress,
                sending=lock.sending,
                cancel=cancel,
                warn=warn,
            )
            result = _send(run, plan, snapshot, listing)
    if settings.raise_on_failure and not result.ok:
        raise OperationFailedError(result)
    return result


@dataclass
class RestorePlan:
    """What a restore does against one listing: ``put_back`` (now, old) pairs, ``readd`` the
    entries gone, ``remove`` what the change added, ``skipped`` what is as it was, ``changed``
    (what it would put back, or the terms the change added; as it is now, ``None``: gone)."""

    put_back: list[tuple[Entry, Entry]] = field(default_factory=list)
    readd: list[Entry] = field(default_factory=list)
    remove: list[Entry] = field(default_factory=list)
    skipped: list[Entry] = field(default_factory=list)
    changed: list[tuple[Entry, Entry | None]] = field(default_factory=list)

    def result(self, snapshot: Snapshot, dry_run: bool) -> RestoreResult:
        """What a dry run says; otherwise what stands before the requests say the rest."""
        return RestoreResult(
            added=self.readd if dry_run else [],
            skipped=self.skipped,
            dry_run=dry_run,
            put_back=[old for _, old in self.put_back] if dry_run else [],
            removed=self.remove if dry_run else [],
            listing_age=snapshot.listing_age,
            changed=self.changed,
            now={now.id: now for now, _ in self.put_back},
        )


def plan_restore(snapshot: Snapshot, listing: Sequence[Entry]) -> RestorePlan:
    """The three-way comparison of ``snapshot`` with ``listing`` (pure: sends nothing)."""
    plan = RestorePlan()
    by_id = {e.id: e for e in listing}
    left = {e.id: e for e in snapshot.left or ()}
    legacy = snapshot.left is None and snapshot.operation in ("update", "sync")  # no ``left``
    gone = []
    for old in snapshot.entries:
        was_left = left.get(old.id)  # a deleted entry's id means nothing any more: its terms do
        now = by_id.get(old.id) if was_left or legacy else None
        if now is None:
            (plan.changed.append((old, None)) if was_left else gone.append(old))
        elif now.terms == old.terms:
            plan.skipped.append(old)
        elif was_left is None or now.terms == was_left.terms:
            plan.put_back.append((now, old))  # (legacy: as version 3 did)
        else:
            plan.changed.append((old, now))
    plan.readd, present = missing_entries(gone, listing, snapshot.copies)
    plan.skipped += present
    kept = {e.id for e in snapshot.entries}
    pool: dict[tuple[str, ...], list[Entry]] = {}
    for entry in listing:
        if entry.id not in kept:
            pool.setdefault(entry.terms, []).append(entry)
    for added in snapshot.added:
        found = pool.get(added.terms)
        if found:
            plan.remove.append(found.pop())  # the newest of its terms goes first
        else:
            plan.changed.append((added, None))
    return plan


def missing_entries(
    snapshot: Sequence[Entry], listing: Sequence[Entry], copies: Mapping[str, int] | None = None
) -> tuple[list[Entry], list[Entry]]:
    """(to add, already present), counted by four terms: the dictionary should hold
    as many of each as when the snapshot was taken (more where ``copies`` says twins stayed)."""
    copies = copies or {}
    held = Counter(e.terms for e in snapshot)
    had = Counter(held)
    for entry in snapshot:
        had[entry.terms] = max(had[entry.terms], copies.get(entry.id, 0))
    present = Counter(e.terms for e in listing)
    left = {t: max(0, min(held[t], present[t] - (had[t] - held[t]))) for t in held}
    wanted, there = [], []
    for entry in snapshot:
        if left[entry.terms] > 0:
            left[entry.terms] -= 1
            there.append(entry)
        else:
            wanted.append(entry)
    return wanted, there


def _ask(
    prompter: Prompter | None, plan: RestorePlan, snapshot: Snapshot, host: str, profile: str
) -> RestorePlan:
    """Removing what the change added goes ahead once confirmed; entries changed since are put
    back only when the person says so (anything else leaves them as they are)."""
    what = "restore" if snapshot.undoes else snapshot.operation
    if plan.remove:
        n = counted(len(plan.remove))
        confirm(
            prompter,
            f"Undoing this {what} removes {n} it added at {host} (profile {profile!r}): "
            f"{named(plan.remove)}. They are kept in a snapshot first.",
            "undo it",
            refusing=f"remove {n} at {host}",
            declined=f"Cancelled \u2014 undo not confirmed: nothing was sent ({host}).",
        )
    asked = [(back, now) for back, now in plan.changed if back.id]
    if not asked:
        return plan
    listed = "; ".join(
        f"entry {back.id}: now {now.describe() if now else 'deleted'} / will put back "
        f"{back.describe()}"
        for back, now in asked[:5]
    )
    warning = (
        f"Since the {what}, someone changed {counted(len(asked))} it touched at {host} (profile "
        f"{profile!r}): {shown(listed)}{' ...' * (len(asked) > 5)}. What they read now is kept in "
        "a snapshot first."
    )
    question = f"Type {CONFIRM_WORD} to put these back too, anything else leaves them as they are: "
    reply = answer(
        prompter,
        warning,
        question,
        lambda why: (
            f"refusing to overwrite {counted(len(asked))} changed since the {what} at {host} "
            f"without a confirmation, but {why}; yes leaves them as they are and puts back the "
            "rest. Nothing was sent."
        ),
        Remedy.YES,
    )
    if reply.strip().lower() != CONFIRM_WORD:
        return plan
    plan.put_back += [(now, back) for back, now in asked if now is not None]
    plan.readd += [back for back, now in asked if now is None]
    plan.changed = [(back, now) for back, now in plan.changed if not back.id]
    return plan


def _send(
    run: ApplyChanges, plan: RestorePlan, snapshot: Snapshot, listing: list[Entry]
) -> RestoreResult:
    """Its own snapshot first, then what the plan sends; an entry the service would refuse is
    not sent."""
    result = plan.result(snapshot, False)
    refused: dict[Entry, str] = {}
    for entry in [old for _, old in plan.put_back] + plan.readd:
        if problems := entry_problems(*entry.terms):
            why = "; ".join(p.message for p in problems)
            refused[entry] = f"not sent: the service would refuse it ({why})"
    failed = list(refused.items())
    put_back = [(now, old) for now, old in plan.put_back if old not in refused]
    readd = [e for e in plan.readd if e not in refused]
    if not (put_back or readd or plan.remove):
        return replace(result, failed=failed)
    if put_back:
        run.client.check_update()
    done = run.run(plan.remove, put_back, readd, listing, doing="Restoring", undoes=snapshot.path)
    sent = (*done.deletes, *done.updates, *done.adds)
    return replace(
        result,
        added=name_added([r.entry for r in done.adds if r.ok], listing, done.after),
        failed=failed + [(_entry(r), _stopped(r)) for r in sent if r.outcome == "failure"],
        unknown=[_entry(r) for r in sent if r.outcome_unknown],
        put_back=[r.new for r in done.updates if r.ok],
        removed=[_entry(r) for r in done.deletes if r.done],
        now={now.id: now for now, _ in put_back},
        snapshot=str(done.snapshot),
    )


def _entry(result: Any) -> Entry:
    """The entry a result is about (a PUT's: the version it puts back)."""
    return getattr(result, "entry", None) or result.new


def _stopped(result: Any) -> str:
    if result.cause is Cause.NOT_ATTEMPTED:
        return "not sent: the restore was stopped first (running it again puts it back)"
    return result.reason or "not put back"


def _confirm_elsewhere(
    prompter: Prompter | None,
    snapshot: Snapshot,
    profile: str,
    client: DictionaryClient,
    *,
    yes: bool,
    named: bool,
) -> None:
    """A snapshot of another host, API prefix or profile goes back only once someone types
    yes (its host and profile are text from a file: shown, never acted on by a terminal).
    ``yes`` confirms a named file, never the default's fall-back to another API prefix."""
    host, base_url = client.host, client.base_url
    same_prefix = same_base_url(snapshot.base_url, base_url)
    if yes and not named and not same_prefix:
        raise UsageProblem(
            f"no snapshot of {base_url} yet; the latest of this host, "
            f"{shown(str(snapshot.path))}, was taken on {shown(snapshot.base_url)}, another API "
            "prefix (another dictionary). Name it to restore it here. Nothing was sent.",
            option=Remedy.SNAPSHOTS,
        )
    if yes or ((snapshot.host, snapshot.profile) == (host, profile) and same_prefix):
        return
    if snapshot.host == host and not same_prefix:  # name the prefixes apart
        host, there = base_url, shown(snapshot.base_url)
    else:
        there = shown(snapshot.host)
    theirs = shown(snapshot.profile)
    confirm(
        prompter,
        f"The snapshot {shown(str(snapshot.path))} was taken on {there} (profile "
        f"{theirs!r}); this adds its missing entries to {host} (profile {profile!r}).",
        "restore it there",
        refusing=f"restore a snapshot of {there} (profile {theirs!r}) to {host} (profile "
        f"{profile!r})",
        declined=f"restore not confirmed: nothing was added ({host}).",
    )


def _listing(client: DictionaryClient, profile: str, dry_run: bool) -> list[Entry]:
    """What the dictionary holds now, listed afresh; without it nothing can be compared."""
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
