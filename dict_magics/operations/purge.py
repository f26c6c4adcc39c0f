"""Delete every entry, after the one confirmation every front end asks for, with a copy kept.

The policy lives here: ``plan`` states the purge as a ``PurgePlan`` (the entries at stake, the
snapshot, the word that confirms); front ends render it and hand back what was typed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from ..errors import ListingUnsupportedError, Remedy, ServiceError, UsageProblem
from ..models.purge import PurgePlan
from ..service.client import RequestInterrupted
from .audit import AuditLog
from .context import CACHE, OperationSettings, Warn, connect, finish, listed_after, say
from .prompts import NOBODY_ASKED, Prompter, ScriptedPrompter, answer, unanswerable
from .settle import settle_purge
from .snapshots import listing_failed, write_snapshot

if TYPE_CHECKING:
    from pathlib import Path

    from ..models import DeleteResult, DryRunResult, Entry, EntryList
    from ..service.client import DictionaryClient


def plan(
    profile: str,
    host: str,
    entries: Iterable[Entry] | None,
    snapshot: str | None = None,
) -> PurgePlan:
    """The purge of ``entries`` (the listing just taken; ``None``: the service cannot list),
    kept at ``snapshot`` (``None``: no copy). A row a listing repeats counts once."""
    count = None if entries is None else len(_unique(entries))
    return PurgePlan(host=host, profile=profile, count=count, snapshot=snapshot)


def _refusal(profile: str, host: str, reason: str) -> str:
    return (
        f"refusing to delete EVERY entry of profile {profile!r} at {host}: a typed "
        f"confirmation is needed, but {reason}. Nothing was deleted."
    )


def purge(
    settings: OperationSettings,
    prompter: Prompter | None = None,
    *,
    yes: bool = False,
    dry_run: bool = False,
    snapshot: bool | None = None,
    client: DictionaryClient | None = None,
    warn: Warn = None,
) -> DeleteResult | DryRunResult:
    """Delete every entry once confirmed (``yes`` skips the question), the listing kept in
    a snapshot first unless ``snapshot`` or the settings say not to."""
    keep = settings.snapshots if snapshot is None else snapshot
    asker = prompter or ScriptedPrompter(reason=NOBODY_ASKED)
    with connect(settings, client) as (client, profile):
        host = client.host
        reason = None if yes or dry_run else unanswerable(asker)
        if reason is not None:
            # Nobody can answer: said before listing, keeping or showing anything.
            raise UsageProblem(_refusal(profile, host, reason), option=Remedy.YES)
        listing = None
        if keep or dry_run or not yes:
            listing = _listing(client, profile, required=keep or dry_run, dry_run=dry_run)
        if dry_run:
            from ..models import DryRunResult

            if listing is None:
                return DryRunResult("purge", host, profile, listed=False)
            return DryRunResult("purge", host, profile, entries=_unique(listing.entries))
        kept = _keep(client, profile, listing) if keep and listing is not None else None
        if not yes:
            stated = plan(
                profile,
                host,
                None if listing is None else listing.entries,
                None if kept is None else str(kept),
            )
            try:
                unasked = partial(_refusal, profile, host)
                typed = answer(asker, stated, stated.question, unasked, Remedy.YES)
                if not stated.accepts(typed):  # the plan's rule, never the front end's
                    raise UsageProblem(
                        f"purge not confirmed: nothing was deleted (profile {profile!r}, {host})."
                    )
            except BaseException:
                # Declined, nobody to ask, or Ctrl-C at the question: nothing was sent, and
                # the plan said the copy goes if the person cancels.
                if kept is not None:
                    kept.unlink(missing_ok=True)
                raise
            if keep:
                # A person took time to answer: list again, as close to the request as can be,
                # and keep what is there now if it changed (entries or their terms).
                fresh = _listing(client, profile, required=True, dry_run=False)
                if fresh is not None and (listing is None or fresh.entries != listing.entries):
                    listing, kept = fresh, _keep(client, profile, fresh)
        result = _send(client, profile, kept, listing, warn)
    return finish(result, settings)


def _unique(entries: Iterable[Entry]) -> list[Entry]:
    """The entries, a row the listing repeats (the same id) once: kept twice in a snapshot, it
    would come back twice."""
    return list({e.id: e for e in entries}.values())


def _listing(
    client: DictionaryClient, profile: str, *, required: bool, dry_run: bool
) -> EntryList | None:
    """The whole dictionary, fresh; ``None`` when it cannot be had and is not ``required``."""
    try:
        return CACHE.fetch(client, profile)
    except ListingUnsupportedError as exc:
        if required and not dry_run:
            raise UsageProblem(
                f"{exc}; so no snapshot of the entries can be taken, and a purge could not be "
                "undone. Nothing was deleted.",
                option=Remedy.NO_SNAPSHOT,
            ) from None
        return None
    except ServiceError as exc:
        if dry_run or required:
            raise listing_failed(exc, dry_run) from None
        return None


def _keep(client: DictionaryClient, profile: str, listing: EntryList) -> Path | None:
    """The listing's entries in a snapshot, on disk before the purge is sent."""
    entries = _unique(listing.entries)
    if not entries:
        return None
    return write_snapshot(
        entries, profile=profile, host=client.host, base_url=client.base_url, operation="purge"
    )


def _send(
    client: DictionaryClient,
    profile: str,
    kept: Path | None,
    listing: EntryList | None,
    warn: Warn,
) -> DeleteResult:
    """The one delete-everything request, audited; then one listing, which settles an unknown
    outcome and shows entries added by someone else meanwhile."""
    listed = None if listing is None else len(_unique(listing.entries))
    path = str(kept) if kept is not None else None

    def described(result: DeleteResult) -> DeleteResult:
        """With its snapshot and how many entries the listing before showed."""
        return replace(result, snapshot=path, purged=listed if result.ok else None)

    with AuditLog(
        profile=profile, host=client.host, operation="purge", snapshot=kept, warn=warn
    ) as audit:
        try:
            result = described(client.delete_all(audit=audit))
        except RequestInterrupted as interrupted:
            CACHE.invalidate(client, profile)
            result = interrupted.result
            raise interrupted.passed_on(described(result) if result.attempts else result) from None
        after = None
        stopped = False
        if listing is not None and (result.ok or result.outcome_unknown):
            now, stopped = listed_after(client, profile)
            after = None if now is None else now.by_id()
        if result.outcome_unknown and listing is not None and after is not None:
            result = described(settle_purge(result, list(listing.entries), after))
            audit.record(result)
        if stopped:  # Ctrl-C during the listing after: audited above, then shown
            CACHE.invalidate(client, profile)
            raise RequestInterrupted(result)
    if result.ok and after:
        say(
            warn,
            f"{len(after):,} entr{'y is' if len(after) == 1 else 'ies are'} listed right after "
            "the purge: added by another client while it ran, and not deleted. Entries added "
            "between the last listing and the purge itself would be gone without a copy; no "
            "listing can show them (the service gives no count).",
        )
    if result.ok and after is None:
        CACHE.emptied(client, profile)
    elif result.outcome_unknown:
        CACHE.invalidate(client, profile)
    return result
