"""Change one entry in place (PUT), its old version kept in a snapshot first.

The entry is looked up in a fresh listing (or, when the ``listing_max_age`` setting allows, this
process's cached one): its old terms go into a format-2 snapshot (``operation: update``) before
the request, so ``restore`` puts them back under the same id. The fields not given are taken from
those terms, so a stale listing would both miss an edit made elsewhere in the snapshot and send
it back over that edit.
Only the fields given change. An answer that was lost is settled by one listing.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import ServiceError, UsageProblem
from ..models import Entry
from ..service.paths import check_id
from ..service.settle import settle_updates
from .add import check_terms
from .connect import connect
from .context import OperationSettings
from .listing import CACHE
from .safeguards import Trail, Warn, take_snapshot

if TYPE_CHECKING:
    from ..models import ChangePreview, NoChange, UpdateResult
    from ..service.client import DictionaryClient

__all__ = ["update"]


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
    """Replace the given fields of entry ``entry_id``. Raises ``UsageProblem`` (nothing sent)
    for a bad id, no change asked for, no such entry, or terms the service would refuse. When
    the entry already reads as asked (a fresh listing says so), nothing is sent and no snapshot
    taken: the answer is a ``NoChange`` (running the same update twice is harmless)."""
    text = check_id(entry_id)
    changes = (from_lang, from_text, to_lang, to_text)
    if all(c is None for c in changes):
        raise UsageProblem(
            "nothing to change: give a new from-text, to-text, from-lang or to-lang. "
            "Nothing was sent."
        )
    with connect(settings, client) as (client, profile):
        old, age = _current(client, profile, text, settings.listing_max_age)
        new = Entry(
            text, *(c if c is not None else o for c, o in zip(changes, old.terms, strict=True))
        )
        check_terms(new)
        if new.terms == old.terms:
            # Nothing to do, judged on a fresh listing (a cached one may be older).
            if age:
                old, age = _listed(client, profile, text), 0.0
            if old.terms == new.terms:
                from ..models import NoChange

                return NoChange("update", client.host, profile, old, [old])
            new = Entry(
                text,
                *(c if c is not None else o for c, o in zip(changes, old.terms, strict=True)),
            )
            check_terms(new)
        if dry_run:
            from ..models import ChangePreview

            return ChangePreview("update", client.host, profile, new, old)
        kept = take_snapshot(
            [old],
            profile=profile,
            host=client.host,
            base_url=client.base_url,
            operation="update",
            listing_age=age,
        )
        with Trail(
            profile=profile, host=client.host, operation="update", snapshot=kept, warn=warn
        ) as trail:
            result = client.update_entry(text, new, old=old)
            CACHE.invalidate(client, profile)
            if result.outcome_unknown:
                try:
                    after = CACHE.fetch(client, profile).by_id()
                except ServiceError:
                    after = None
                if after is not None:
                    (result,) = settle_updates([result], after)
            trail.record(result)
    return replace(result, snapshot=str(kept.path))


def _current(
    client: DictionaryClient, profile: str, text: str, max_age: float | None
) -> tuple[Entry, float]:
    """Entry ``text`` and the age of the listing it comes from: this process's cached listing
    when ``listing_max_age`` allows it and it holds the entry (the user's choice), else a fresh
    one (age 0)."""
    if max_age:
        cached = CACHE.recent(client, profile, [text], max_age)
        if cached is not None:
            listing, age = cached
            return listing.by_id()[text], age
    return _listed(client, profile, text), 0.0


def _listed(client: DictionaryClient, profile: str, text: str) -> Entry:
    """Entry ``text`` in a fresh listing; raises ``UsageProblem`` when there is none,
    ``ServiceError`` when it cannot be listed."""
    try:
        old = CACHE.fetch(client, profile).by_id().get(text)
    except ServiceError as exc:
        raise ServiceError(
            f"{exc}; the entry's old terms could not be kept first, so nothing was sent.",
            cause=exc.cause,
        ) from None
    if old is None:
        raise UsageProblem(f"no entry {text} at {client.host}; nothing was sent.")
    return old
