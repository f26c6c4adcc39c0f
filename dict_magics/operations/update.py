"""Change one entry in place (PUT), its old version kept in a snapshot first (with the new terms
as what it ``left``, so a restore can tell a later edit). An answer that was lost is settled by
one listing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import ServiceError, UsageProblem
from ..models import Entry
from ..models.entry import check_id
from ..service.client import RequestInterrupted
from .add import check_terms
from .audit import AuditLog
from .context import CACHE, OperationSettings, Warn, connect, listed_after
from .settle import settle_updates
from .snapshots import write_snapshot

if TYPE_CHECKING:
    from ..models import ChangePreview, NoChange, UpdateResult
    from ..service.client import DictionaryClient


def update(
    settings: OperationSettings,
    entry_id: object,
    *,
    from_lang: str | None = None,
    from_text: str | None = None,
    to_lang: str | None = None,
    to_text: str | None = None,
    dry_run: bool = False,
    client: DictionaryClient | None = None,
    warn: Warn = None,
) -> UpdateResult | ChangePreview | NoChange:
    """Replace the given fields of entry ``entry_id`` (``UsageProblem`` with nothing sent for
    a bad id, no change, no such entry, refused terms). When an entry already reads as asked,
    nothing is sent: a ``NoChange`` names it (an update run twice is harmless)."""
    text = check_id(entry_id)
    changes = (from_lang, from_text, to_lang, to_text)
    if all(c is None for c in changes):
        raise UsageProblem(
            "nothing to change: give a new from-text, to-text, from-lang or to-lang. "
            "Nothing was sent."
        )
    with connect(settings, client) as (client, profile):
        if not dry_run:
            client.check_update()  # no PUT there (as `probe` found): refused before anything
        # A fresh listing, never the cache: the fields not named are sent as listed, and the
        # snapshot must hold the entry as it is now (not what a cached copy says).
        try:
            listing = CACHE.fetch(client, profile)
        except ServiceError as exc:
            raise ServiceError(
                f"{exc}; the entry's old terms could not be kept first, so nothing was sent.",
                cause=exc.cause,
            ) from None
        old = listing.by_id().get(text)
        if old is None:
            raise UsageProblem(
                f"entry {text} is not in the dictionary at {client.host}: there is nothing to "
                "update; nothing was sent."
            )
        new = Entry(
            text, *(c if c is not None else o for c, o in zip(changes, old.terms, strict=True))
        )
        check_terms(new)
        twins = sorted(
            (e for e in listing.entries if e.terms == new.terms), key=lambda e: e.id != text
        )
        if twins:
            from ..models import NoChange

            return NoChange("update", client.host, profile, twins[0], twins, asked=text)
        if dry_run:
            from ..models import ChangePreview

            return ChangePreview("update", client.host, profile, new, old, listing=listing.entries)
        kept = write_snapshot(
            [old],
            profile=profile,
            host=client.host,
            base_url=client.base_url,
            operation="update",
            left=[new],
        )
        with AuditLog(
            profile=profile, host=client.host, operation="update", snapshot=kept, warn=warn
        ) as trail:
            try:
                result = client.update_entry(text, new, old=old, audit=trail)
            except RequestInterrupted as interrupted:  # the answer came: audited, then passed on
                CACHE.invalidate(client, profile)
                trail.record(interrupted.result)
                shown = replace(interrupted.result, snapshot=str(kept))
                raise interrupted.passed_on(shown) from None
            CACHE.invalidate(client, profile)
            stopped = False
            if result.outcome_unknown:
                after, stopped = listed_after(client, profile)
                if after is not None:
                    (result,) = settle_updates([result], after.by_id())
            trail.record(result)
            if stopped:  # Ctrl-C during the listing after: audited above, shown by the caller
                raise RequestInterrupted(replace(result, snapshot=str(kept)))
    return replace(result, snapshot=str(kept))
