"""Settling outcomes left unknown: one listing after the requests says what really happened.

A request whose answer was lost may or may not have been acted on. The listing taken after the
requests decides, by one rule for every kind of change (``decide``): count what the listing
holds per key as a multiset, subtract what the listing before held and what is known to have
changed, and give the difference out, in input order, to the requests whose outcome is unknown.
A deletion claims one key fewer (its id), an addition one more (its four terms: two identical
entries are two claims), an update one more of its id with the new terms. Counting, rather than
asking "is it there", is what keeps twins apart: two unknown additions of the same terms and one
new entry listed are one success and one failure. Outcomes the listing cannot decide stay
unknown, and so does a request that timed out when the listing shows no effect of it: the
service may still act on it after the listing (a slow service), so that proves nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import ServiceError
from ..settings import BULK_CHUNK

if TYPE_CHECKING:
    from ..models import AddBatch, AddResult, Cause, DeleteResult, Entry, UpdateResult
    from ..service.client import DictionaryClient

__all__ = [
    "add_and_settle",
    "decide",
    "name_added",
    "settle_adds",
    "settle_deletes",
    "settle_purge",
    "settle_updates",
]

_R = TypeVar("_R", "AddResult", "DeleteResult", "UpdateResult")

Claim = tuple[Hashable, int]
"""``(key, change)``: what a request would have done had it been acted on (+1 / -1)."""


def decide(
    claims: Sequence[Claim | None],
    before: Iterable[Hashable],
    after: Iterable[Hashable],
    known: Iterable[Claim] = (),
) -> list[bool | None]:
    """For each claim: ``True`` when the listings show it happened, ``False`` when they show it
    did not, ``None`` for no claim (an outcome already known).

    ``before`` and ``after`` are the keys listed before and after the requests (a multiset:
    repeat a key for each entry), ``known`` the changes known to have happened meanwhile.
    """
    change = Counter(list(after))  # keys: a mapping counts each of its keys once
    change.subtract(Counter(list(before)))
    for key, delta in known:
        change[key] -= delta
    decided: list[bool | None] = []
    for claim in claims:
        if claim is None:
            decided.append(None)
            continue
        key, delta = claim
        if change[key] * delta > 0:  # the listing shows a change this way still unclaimed
            change[key] -= delta
            decided.append(True)
        else:
            decided.append(False)
    return decided


def _lost(cause: Cause) -> str:
    return f"the answer was lost ({cause.value.replace('_', ' ')})"


def _happened(result: _R, why: str) -> _R:
    """``result`` decided a success by a listing: ``why`` follows "verified by listing: "."""
    return replace(
        result,
        status="success",
        outcome_unknown=False,
        verified=True,
        reason=f"verified by listing: {_lost(result.cause)}, and a listing afterwards {why}",
    )


def _not_happened(result: _R, why: str) -> _R:
    """``result`` decided a failure by a listing: ``why`` follows the lost answer's cause."""
    return replace(
        result,
        status="failure",
        outcome_unknown=False,
        reason=f"{_lost(result.cause)}{why}",
    )


def _not_seen(result: _R, why: str, late: str) -> _R:
    """``result`` when the listing shows no effect of it: a failure (``why``), except after a
    timeout. Then the service had the request and had not answered when we stopped waiting: a
    slow one may still act on it after this listing, so the outcome stays unknown (``late``
    says what to do: list again before sending it again)."""
    if getattr(result.cause, "value", result.cause) != "timeout":
        return _not_happened(result, why)
    return replace(
        result,
        reason=f"{_lost(result.cause)}, and a listing right after shows no effect yet; the "
        f"service may still act on it (it did not answer in time), so {late}",
    )


def settle_deletes(
    results: Sequence[DeleteResult],
    before: Mapping[str, Entry] | None,
    after: Mapping[str, Entry],
) -> list[DeleteResult]:
    """``results`` with each unknown deletion decided by the listing ``after`` the requests.

    ``before`` is the listing the entries were looked up in (``None`` when there was none, then
    each entry is taken to have been there): an entry it did not hold was never there, so its
    absence afterwards proves nothing was deleted.
    """
    unknown = [r.outcome_unknown and r.entry_id is not None for r in results]
    claims = [(r.entry_id, -1) if u else None for r, u in zip(results, unknown, strict=True)]
    if before is None:
        listed_before: Iterable[Hashable] = [r.entry_id for r in results if r.entry_id]
        listed_before = set(listed_before) | set(after)
    else:
        listed_before = before
    known = [(r.entry_id, -1) for r, u in zip(results, unknown, strict=True) if r.ok and not u]
    settled = []
    verdicts = decide(claims, listed_before, after, known)
    for result, verdict in zip(results, verdicts, strict=True):
        if verdict is None:
            settled.append(result)
        elif verdict:
            settled.append(_happened(result, "no longer holds the entry"))
        elif result.entry_id in after:
            settled.append(
                _not_seen(
                    result,
                    ", and a listing afterwards still holds the entry: it was not deleted, "
                    "so it is safe to retry",
                    "list again before retrying",
                )
            )
        else:
            settled.append(
                _not_happened(
                    result,
                    "; no such entry: neither the listing before the request nor the one "
                    "after holds it",
                )
            )
    return settled


def settle_purge(
    result: DeleteResult, before: Sequence[Entry], after: Mapping[str, Entry]
) -> DeleteResult:
    """An unknown purge: an empty listing afterwards is a success; every entry still there is a
    failure (safe to retry); anything in between stays unknown."""
    if not result.outcome_unknown:
        return result
    gone = decide([(e.id, -1) for e in before], [e.id for e in before], after)
    if not after:
        return _happened(result, "is empty")
    if before and not any(gone):
        return _not_seen(
            result,
            ", and a listing afterwards still holds every entry: nothing was deleted, so it "
            "is safe to retry",
            "list again before retrying",
        )
    return replace(
        result,
        reason=f"{result.reason}; a listing afterwards still holds {len(after)} entries, some "
        "of which may have been added since",
    )


def settle_adds(
    results: Sequence[AddResult],
    before: Sequence[Entry],
    after: Sequence[Entry],
    *,
    again: str = "adding it again is safe",
) -> list[AddResult]:
    """Each unknown addition decided by how many entries with its terms the listing ``after``
    holds, beyond those listed ``before`` and those known to have been added. ``again`` says
    what to do about an addition that did not happen."""
    claims = [(r.entry.terms, 1) if r.outcome_unknown else None for r in results]
    known = [(r.entry.terms, 1) for r in results if r.ok and not r.outcome_unknown]
    verdicts = decide(claims, (e.terms for e in before), (e.terms for e in after), known)
    settled = []
    for result, verdict in zip(results, verdicts, strict=True):
        if verdict is None:
            settled.append(result)
        elif verdict:
            settled.append(_happened(result, "holds the entry"))
        else:
            settled.append(
                _not_seen(
                    result,
                    f", and a listing afterwards does not hold the entry: it was not added, "
                    f"so {again}",
                    "list again before adding it again (or it may be added twice)",
                )
            )
    return settled


def settle_updates(
    results: Sequence[UpdateResult], after: Mapping[str, Entry]
) -> list[UpdateResult]:
    """Each unknown update decided by the listing ``after``: the entry listed with the new terms
    under its id is a success; with its old terms, a failure (safe to retry). An entry no longer
    listed, or listed with other terms, stays unknown (someone else changed it). One id holds
    one entry, so there is nothing to count here, unlike ``decide``."""
    settled = []
    for result in results:
        now = after.get(result.entry_id) if result.outcome_unknown else None
        if now is None:
            settled.append(result)
            continue
        applied = now.terms == result.new.terms
        if applied:
            settled.append(_happened(result, "holds the new terms"))
        elif result.old is not None and now.terms == result.old.terms:
            settled.append(
                _not_seen(
                    result,
                    ", and a listing afterwards still holds the old terms: it was not changed, "
                    "so it is safe to retry",
                    "list again before retrying",
                )
            )
        else:
            settled.append(result)
    return settled


def name_added(
    added: Sequence[Entry], before: Sequence[Entry], after: Sequence[Entry] | None
) -> list[Entry]:
    """``added`` (entries the service accepted; it answers with no id) each with its new id,
    where the listing ``after`` tells it unambiguously: the entries with its four terms listed
    ``after`` under ids not listed ``before`` number exactly the copies added (identical copies
    are interchangeable). Otherwise (or with no listing) the id is empty, never an old one."""
    old_ids = {e.id for e in before}
    fresh: dict[tuple[str, str, str, str], list[str]] = {}
    for entry in after or ():
        if entry.id not in old_ids:
            fresh.setdefault(entry.terms, []).append(entry.id)
    wanted = Counter(e.terms for e in added)
    named = []
    for entry in added:
        ids = fresh.get(entry.terms, [])
        new_id = ids.pop(0) if after is not None and len(ids) == wanted[entry.terms] else ""
        if new_id:
            wanted[entry.terms] -= 1
        named.append(replace(entry, id=new_id))
    return named


def add_and_settle(
    client: DictionaryClient,
    entries: Sequence[Entry],
    *,
    before: Iterable[Entry] | None = None,
    chunk_size: int = BULK_CHUNK,
    **options: Any,
) -> AddBatch:
    """``client.add_entries``, then one listing settles the entries whose bulk answer was lost,
    against ``before`` (the listing the caller has) or one taken first. A bulk request acts on
    all its entries or on none: when a listing shows some of a lost chunk and not others, the
    ones it shows may be someone else's and stay unknown."""
    from ..service.client import check_entries

    check_entries(list(entries))  # before the listing: nothing is sent for a bad entry
    known = list(before) if before is not None else _listing_or_none(client)
    batch = client.add_entries(entries, chunk_size=chunk_size, **options)
    lost = tuple(i for i, r in enumerate(batch.results) if r.outcome_unknown)
    after = _listing_or_none(client) if lost and known is not None else None
    if after is None:
        return batch
    settled = settle_adds(batch.results, known, after)  # type: ignore[arg-type]
    results = _whole_chunks(settled, chunk_size, lost)
    return replace(batch, results=results, requests=batch.requests + 1, settled=lost, after=after)


def _whole_chunks(results: list[AddResult], size: int, lost: tuple[int, ...]) -> list[AddResult]:
    """A lost chunk a listing shows only in part: the entries it shows stay unknown."""
    results = list(results)
    for start in range(0, len(results), size):
        span = [i for i in range(start, min(start + size, len(results))) if i in lost]
        seen = [results[i] for i in span]
        if any(r.ok for r in seen) and any(not r.ok and not r.outcome_unknown for r in seen):
            for i in span:
                if results[i].ok:
                    results[i] = replace(
                        results[i],
                        status="failure",
                        outcome_unknown=True,
                        verified=False,
                        reason="the answer to its bulk request was lost, and a listing "
                        "afterwards holds this entry but not others sent with it: the request "
                        "may not have acted, and this entry may be someone else's; not sent "
                        "again (a restore adds only what is missing)",
                    )
    return results


def _listing_or_none(client: DictionaryClient) -> list[Entry] | None:
    try:
        return list(client.list_entries())
    except ServiceError:
        return None
