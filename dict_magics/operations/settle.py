"""Settling outcomes left unknown: one listing after the requests says what really happened.

A request whose answer was lost may or may not have been acted on. The listing taken after the
batch decides: for a deletion, an entry no longer listed is gone (a success, ``verified``) and an
entry still listed was not deleted (a failure that is safe to retry); for an addition, the terms
now listed beyond those there before were added. Outcomes the listing cannot decide stay unknown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..models import AddResult, Cause, DeleteResult, Entry

__all__ = ["settle_adds", "settle_deletes", "settle_purge"]


def _lost(cause: Cause) -> str:
    return f"the answer was lost ({cause.value.replace('_', ' ')})"


def settle_deletes(
    results: Sequence[DeleteResult],
    before: Mapping[str, Entry] | None,
    after: Mapping[str, Entry],
) -> list[DeleteResult]:
    """``results`` with each unknown deletion decided by the listing ``after`` the requests.

    ``before`` is the listing the entries were looked up in (``None`` when there was none): an
    entry it did not hold was never there, so its absence afterwards proves nothing was deleted.
    """
    settled = []
    for result in results:
        entry_id = result.entry_id
        if not result.outcome_unknown or entry_id is None:
            settled.append(result)
        elif entry_id in after:
            settled.append(
                replace(
                    result,
                    status="failure",
                    outcome_unknown=False,
                    reason=f"{_lost(result.cause)}, and a listing afterwards still holds the "
                    "entry: it was not deleted, so it is safe to retry",
                )
            )
        elif before is not None and entry_id not in before:
            settled.append(
                replace(
                    result,
                    status="failure",
                    outcome_unknown=False,
                    reason=f"{_lost(result.cause)}; no such entry: neither the listing before "
                    "the request nor the one after holds it",
                )
            )
        else:
            settled.append(
                replace(
                    result,
                    status="success",
                    outcome_unknown=False,
                    verified=True,
                    reason=f"verified by listing: {_lost(result.cause)}, and a listing "
                    "afterwards no longer holds the entry",
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
    if not after:
        return replace(
            result,
            status="success",
            outcome_unknown=False,
            verified=True,
            reason=f"verified by listing: {_lost(result.cause)}, and a listing afterwards is empty",
        )
    if before and all(e.id in after for e in before):
        return replace(
            result,
            status="failure",
            outcome_unknown=False,
            reason=f"{_lost(result.cause)}, and a listing afterwards still holds every entry: "
            "nothing was deleted, so it is safe to retry",
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
) -> list[AddResult]:
    """Each unknown addition decided by how many entries with its terms the listing ``after``
    holds, beyond those listed ``before`` and those known to have been added."""
    gained = Counter(e.terms for e in after)
    gained.subtract(Counter(e.terms for e in before))
    gained.subtract(Counter(r.entry.terms for r in results if r.ok))
    settled = []
    for result in results:
        if not result.outcome_unknown:
            settled.append(result)
            continue
        terms = result.entry.terms
        if gained[terms] > 0:
            gained[terms] -= 1
            settled.append(
                replace(
                    result,
                    status="success",
                    outcome_unknown=False,
                    verified=True,
                    reason=f"verified by listing: {_lost(result.cause)}, and a listing "
                    "afterwards holds the entry",
                )
            )
        else:
            settled.append(
                replace(
                    result,
                    status="failure",
                    outcome_unknown=False,
                    reason=f"{_lost(result.cause)}, and a listing afterwards does not hold the "
                    "entry: it was not added, so running the restore again is safe",
                )
            )
    return settled
