"""Settling outcomes left unknown: one listing after the requests says what really happened.

One rule for every change (``decide``): the listings' difference, counted as multisets, goes in
input order to the requests whose outcome is unknown, so twins stay apart. A request that timed
out stays unknown when the listing shows no effect yet: a slow service may still act on it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import ServiceError
from ..models import Cause
from ..settings import BULK_CHUNK

if TYPE_CHECKING:
    from ..models import AddBatch, AddResult, DeleteResult, Entry, UpdateResult
    from ..service.client import DictionaryClient


_R = TypeVar("_R", "AddResult", "DeleteResult", "UpdateResult")

Claim = tuple[Hashable, int]
"""``(key, change)``: what a request would have done had it been acted on (+1 / -1)."""


def decide(
    claims: Sequence[Claim | None],
    before: Iterable[Hashable],
    after: Iterable[Hashable],
    known: Iterable[Claim] = (),
) -> list[bool | None]:
    """For each claim ``(key, +1 | -1)``: whether the listings (multisets of keys) show it
    happened, beyond the ``known`` changes; ``None`` for no claim."""
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


def _settled(
    result: _R,
    verdict: bool | None,
    seen: str,
    unseen: str,
    late: str | None = "list again before retrying",
) -> _R:
    """``result`` as the listing decided it (``None``: as it was). A timed-out request the
    listing shows no effect of stays unknown (``late`` says what to do) unless ``late`` is
    ``None``: a slow service may still act on it after the listing."""
    if verdict is None or not result.outcome_unknown:
        return result
    lost = f"the answer was lost ({result.cause.value.replace('_', ' ')})"
    if verdict:
        why = f"verified by listing: {lost}, and a listing afterwards {seen}"
        return replace(result, status="success", outcome_unknown=False, verified=True, reason=why)
    if late is not None and result.cause is Cause.TIMEOUT:
        why = f"{lost}, and a listing right after shows no effect yet; the service may still "
        return replace(result, reason=f"{why}act on it (it did not answer in time), so {late}")
    return replace(result, status="failure", outcome_unknown=False, reason=f"{lost}{unseen}")


def settle_deletes(
    results: Sequence[DeleteResult],
    before: Mapping[str, Entry] | None,
    after: Mapping[str, Entry],
) -> list[DeleteResult]:
    """``results`` with each unknown deletion decided by the listing ``after`` the requests.
    ``before``: the listing the entries were looked up in (``None``: there was none, each is
    taken to have been there); an entry neither holds was never there to delete."""
    unknown = [r.outcome_unknown and r.entry_id is not None for r in results]
    claims = [(r.entry_id, -1) if u else None for r, u in zip(results, unknown, strict=True)]
    listed = before if before is not None else {*after, *(r.entry_id for r in results)} - {None}
    known = [(r.entry_id, -1) for r, u in zip(results, unknown, strict=True) if r.ok and not u]
    settled = []
    for result, verdict in zip(results, decide(claims, listed, after, known), strict=True):
        if verdict is False and result.entry_id not in after:
            never = "; no such entry: neither the listing before the request nor the one after "
            settled.append(_settled(result, False, "", never + "holds it", late=None))
        else:
            still = ", and a listing afterwards still holds the entry: it was not deleted, so "
            gone = "no longer holds the entry"
            settled.append(_settled(result, verdict, gone, still + "it is safe to retry"))
    return settled


def settle_purge(
    result: DeleteResult, before: Sequence[Entry], after: Mapping[str, Entry]
) -> DeleteResult:
    """An unknown purge: an empty listing afterwards is a success; every entry still there is a
    failure (safe to retry); anything in between stays unknown."""
    if not result.outcome_unknown:
        return result
    if not after:
        return _settled(result, True, "is empty", "")
    ids = [e.id for e in before]
    if before and not any(decide([(i, -1) for i in ids], ids, after)):
        still = ", and a listing afterwards still holds every entry: nothing was deleted, so it "
        return _settled(result, False, "", still + "is safe to retry")
    return replace(
        result,
        reason=f"{result.reason}; a listing afterwards still holds {len(after)} entries, some "
        "of which may have been added since",
    )


def settle_adds(
    results: Sequence[AddResult],
    before: Sequence[Entry],
    after: Sequence[Entry],
) -> list[AddResult]:
    """Each unknown addition decided by how many entries with its terms the listing ``after``
    holds, beyond those listed ``before`` and those known to have been added (counted, so two
    unknown additions of one entry and one new listed are one success and one failure)."""
    claims = [(r.entry.terms, 1) if r.outcome_unknown else None for r in results]
    known = [(r.entry.terms, 1) for r in results if r.ok and not r.outcome_unknown]
    verdicts = decide(claims, (e.terms for e in before), (e.terms for e in after), known)
    unseen = ", and a listing afterwards does not hold the entry: it was not added, so adding it "
    unseen += "again is safe"
    late = "list again before adding it again (or it may be added twice)"
    return [
        _settled(r, v, "holds the entry", unseen, late)
        for r, v in zip(results, verdicts, strict=True)
    ]


def settle_updates(
    results: Sequence[UpdateResult], after: Mapping[str, Entry]
) -> list[UpdateResult]:
    """Each unknown update decided by the listing ``after``: its id with the new terms is a
    success, with the old ones a failure; gone or other terms stay unknown."""
    settled = []
    unseen = ", and a listing afterwards still holds the old terms: it was not changed, so it "
    unseen += "is safe to retry"
    for result in results:
        now = after.get(result.entry_id)
        old = result.old.terms if result.old is not None else None
        verdict = None if now is None else {result.new.terms: True, old: False}.get(now.terms)
        settled.append(_settled(result, verdict, "holds the new terms", unseen))
    return settled


def name_added(
    added: Sequence[Entry], before: Sequence[Entry], after: Sequence[Entry] | None
) -> list[Entry]:
    """``added`` each with its new id where the listing ``after`` tells it unambiguously
    (as many new entries with its terms as copies added); else an empty id, never an old one."""
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
    """``client.add_entries``, then one listing settles the entries whose bulk answer was
    lost (a chunk acts on all its entries or none: one shown only in part stays unknown)."""
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
