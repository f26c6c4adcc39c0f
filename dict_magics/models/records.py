"""What the service holds and what a request did: entries, and results reported truthfully.

Models are plain data. They show themselves through ``Displayed`` (``display.py``): the views
live in ``render/`` and are looked up at display time, so no model imports ``render``; their
``__repr__`` lists the fields, for debugging.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .display import Displayed
from .entry import Entry

if TYPE_CHECKING:
    from .lint import LintReport
    from .textcheck import CheckReport

__all__ = [
    "AddBatch",
    "AddResult",
    "BatchResult",
    "Cause",
    "DeleteResult",
    "DryRunResult",
    "Entry",
    "EntryList",
    "Outcome",
    "RestoreResult",
    "UpdateResult",
]

Outcome = Literal["success", "failure", "unknown", "absent"]


class Cause(str, Enum):
    """Why a request ended as it did, for programs (render, retry-failed, grouping).

    ``reason`` says the same in words; nothing should ever parse ``reason``.
    """

    OK = "ok"
    REFUSED = "refused"
    """The service answered ``status: failure`` (no such entry, bad request, ...)."""
    AUTH = "auth"
    """401 / 403, or 40001 / 40002 / 40003 / 40006: the keys, the signature, the token or the
    clock."""
    NONCE = "nonce"
    """The service refused the nonce: 40005 (too small) after every fresh try, or 40008 (too
    big: the clock or the nonce state file)."""
    INVALID = "invalid"
    """40200 / 40201 / 40202: the request's data (terms, languages, fields) is the caller's
    problem; sending it again would not help."""
    NONCE_REUSED = "nonce_reused"
    """The service saw this nonce already (another process with the same key)."""
    BAD_ANSWER = "bad_answer"
    """An answer we cannot read as the service's JSON (not JSON, no status, HTML, ...)."""
    TOO_LARGE = "too_large"
    REDIRECT = "redirect"
    """A 3xx: never followed, so the credentials went nowhere else."""
    RATE_LIMITED = "rate_limited"
    """429 or 40103 until the rate-limit patience ran out."""
    UNAVAILABLE = "unavailable"
    """503 / connection refused / connect timeout until the retry budget ran out."""
    TIMEOUT = "timeout"
    """No whole answer within the deadline after the request was sent."""
    CONNECTION_LOST = "connection_lost"
    """The connection broke after the request may have been sent."""
    GATEWAY = "gateway"
    """502 / 504: a gateway answered; the service behind it may have acted."""
    DNS = "dns"
    TLS = "tls"
    NOT_ATTEMPTED = "not_attempted"
    """Cancelled (Ctrl-C, Cancel, or a batch stopped after repeated auth failures)."""
    ERROR = "error"
    """Anything else the network layer raised."""


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'")


def csv_cell(text: str) -> str:
    """``text`` as a spreadsheet must not read it as a formula: a leading ``'`` before ``= + -
    @``, a tab or a carriage return; and before a leading ``'`` too, so that a reader that
    drops one ``'`` before those (``formats.base.unguard``) gets every term back exactly."""
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


@dataclass(frozen=True)
class EntryList(Displayed):
    """A listing of the dictionary (or part of it), in the service's order."""

    entries: list[Entry] = field(default_factory=list)
    host: str = ""

    @property
    def ids(self) -> list[str]:
        """The ids, ready for ``%dict_delete {listing.ids}``."""
        return [e.id for e in self.entries]

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    def __getitem__(self, index: int) -> Entry:
        return self.entries[index]

    def by_id(self) -> dict[str, Entry]:
        """Entries keyed by id (the last wins if the service repeats an id)."""
        return {e.id: e for e in self.entries}

    def filter(
        self, match: str | None = None, from_lang: str | None = None, to_lang: str | None = None
    ) -> EntryList:
        """The entries whose terms contain ``match`` and whose languages are the ones given."""
        kept = [e for e in self.entries if e.matches(match, from_lang, to_lang)]
        return EntryList(kept, self.host)

    def lint(self) -> LintReport:
        """Every problem the entries hold (duplicates, conflicts, near-duplicates, over-long
        terms, bad language codes, stray spaces, control characters, overlaps); offline."""
        from .lint import lint_entries

        return lint_entries(self.entries, self.host)

    def check(
        self, text: str, *, from_lang: str | None = None, to_lang: str | None = None
    ) -> CheckReport:
        """Which entries would apply to each sentence of ``text`` under the service's
        3-per-sentence rule (of one language pair when given); offline, nothing is sent."""
        from .textcheck import check_text

        return check_text(self.entries, text, from_lang=from_lang, to_lang=to_lang, host=self.host)

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` with the service's column names (pandas is optional)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "EntryList.to_pandas() needs pandas, which is not installed: "
                "pip install pandas (or use .entries, .ids or .to_csv())."
            ) from None
        return pd.DataFrame(
            [e.to_service() for e in self.entries], columns=list(Entry.FIELDS), dtype=object
        )

    def to_csv(self, path: str | Path) -> Path:
        """Write the entries as CSV with the service's column names; returns the path.

        UTF-8 with a byte order mark (Excel then reads Japanese as such, not as mojibake); a
        cell starting with ``= + - @``, a tab or a carriage return gets a leading ``'``, so no
        spreadsheet reads a term as a formula (OWASP CSV injection); a lone surrogate, which
        UTF-8 cannot hold, is written as its escape (``\\ud800``)."""
        path = Path(path)
        with path.open("w", encoding="utf-8-sig", errors="backslashreplace", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(Entry.FIELDS)
            writer.writerows([csv_cell(c) for c in (e.id, *e.terms)] for e in self.entries)
        return path

    def __repr__(self) -> str:
        return f"EntryList({len(self.entries)} entries, host={self.host!r})"


class _Answered:
    """What every one-request result reads from ``status`` and ``outcome_unknown`` (one rule
    for deletions, additions and updates)."""

    __slots__ = ()
    status: Literal["success", "failure"]
    outcome_unknown: bool

    @property
    def ok(self) -> bool:
        """True only when the change is known to have happened (the service said so, or a
        listing showed it)."""
        return self.status == "success"

    @property
    def outcome(self) -> Outcome:
        """``success``, ``failure`` or ``unknown``."""
        return "unknown" if self.outcome_unknown else self.status


@dataclass(frozen=True)
class DeleteResult(_Answered, Displayed):
    """The outcome of one request: one entry, or the purge (``entry_id is None``).

    ``outcome`` is ``success`` only when the service said so (or a listing proved the entry
    gone: ``verified``), ``failure`` only when the service certainly did not act, and
    ``unknown`` otherwise (``outcome_unknown``). ``status`` keeps version 1's two values.
    """

    status: Literal["success", "failure"]
    entry_id: str | None
    http_status: int | None = None
    reason: str | None = None
    outcome_unknown: bool = False
    attempts: int = 1
    elapsed: float = 0.0
    entry: Entry | None = None
    verified: bool = False
    cause: Cause = Cause.OK
    snapshot: str | None = None
    """The snapshot file that holds the entry as it was before the request (undo reads it)."""
    purged: int | None = None
    """For a purge that succeeded: how many entries the listing just before showed (all of
    them in the snapshot). The service gives no count of what it deleted."""
    absent: bool = False
    """The entry was not there: a listing just before did not hold it (then nothing was sent),
    and the service, if asked, did not delete anything either. Not a failure: what a delete
    wants is true (a script re-run after a partial run meets these)."""
    code: int | None = None
    """The vendor's error code of the last answer, when it sent one (``40006``...)."""
    vendor_message: str | None = None
    """The vendor's words with ``code`` (printable, bounded; escape them where shown)."""
    names: Mapping[str, str] | None = field(default=None, repr=False, compare=False)
    """The words of the front end that shows it for what it names (its restore command, by
    ``errors.Remedy``), set by that front end; ``None``: neutral words."""

    @property
    def done(self) -> bool:
        """True when the entry is known to be gone: deleted now, or absent already."""
        return self.ok or self.absent

    @property
    def outcome(self) -> Outcome:
        """``success``, ``failure``, ``unknown`` or ``absent``: what a reader must tell apart."""
        if self.outcome_unknown:
            return "unknown"
        if self.absent:
            return "absent"
        return self.status

    @property
    def target(self) -> str:
        """What was deleted, in words: the id (with its terms when known), or every entry."""
        if self.entry_id is None:
            if self.purged is None:
                return "every entry"
            shown = f"{self.purged:,} entr{'y' if self.purged == 1 else 'ies'}"
            return f"every entry ({shown} listed just before{', kept' if self.snapshot else ''})"
        if self.entry is not None:
            return f"{self.entry_id}: {self.entry.describe()}"
        return f"entry {self.entry_id!r}"


@dataclass(frozen=True)
class AddResult(_Answered, Displayed):
    """The outcome of one POST that adds ``entry`` (the service does not return the new id).

    ``unknown`` means the request may have reached the service; a listing settles it, and such
    a request is never re-sent blindly.
    """

    status: Literal["success", "failure"]
    entry: Entry
    http_status: int | None = None
    reason: str | None = None
    outcome_unknown: bool = False
    attempts: int = 1
    elapsed: float = 0.0
    verified: bool = False
    cause: Cause = Cause.OK
    code: int | None = None
    """The vendor's error code of the last answer, when it sent one."""
    vendor_message: str | None = None
    """The vendor's words with ``code`` (printable, bounded; escape them where shown)."""


@dataclass(frozen=True)
class AddBatch(Displayed):
    """What ``add_entries`` did: one ``AddResult`` per entry, in the order given; shown as a
    summary with the additions that failed or may not have happened (``render``).

    ``settled`` holds the positions whose answer was lost and that a listing then decided;
    ``requests`` counts the bulk requests sent (and the settling listing); ``interrupted`` is
    set when Ctrl-C or a cancel stopped the batch (``why`` says what stopped it, if anything).
    ``after`` is the settling listing, when one was taken (it names the new ids).
    """

    results: list[AddResult] = field(default_factory=list)
    interrupted: bool = False
    why: str = ""
    requests: int = 0
    settled: tuple[int, ...] = ()
    after: list[Entry] | None = field(default=None, repr=False, compare=False)

    @property
    def added(self) -> list[Entry]:
        """The entries known to have been added."""
        return [r.entry for r in self.results if r.ok]

    @property
    def failed(self) -> list[AddResult]:
        """The additions that certainly did not happen."""
        return [r for r in self.results if r.outcome == "failure"]

    @property
    def unknown(self) -> list[AddResult]:
        """The additions that may or may not have happened."""
        return [r for r in self.results if r.outcome_unknown]

    @property
    def ok(self) -> bool:
        """True when every entry is known to have been added."""
        return all(r.ok for r in self.results)

    def __len__(self) -> int:
        return len(self.results)

    def __repr__(self) -> str:
        return (
            f"AddBatch({len(self.added)} added, {len(self.failed)} failed, "
            f"{len(self.unknown)} unknown of {len(self.results)}; {self.requests} requests"
            f"{', interrupted' if self.interrupted else ''})"
        )


@dataclass(frozen=True)
class UpdateResult(_Answered, Displayed):
    """The outcome of one PUT that replaces entry ``entry_id``'s terms with ``new``'s.

    ``old`` is the entry as it was (from a listing), when known. ``outcome`` follows the usual
    rule: ``success`` only when the service said so (or a listing shows the new terms:
    ``verified``), ``failure`` only when it certainly did not act, ``unknown`` otherwise. A PUT
    does the same however often it is sent, so it is retried like a DELETE.
    """

    status: Literal["success", "failure"]
    entry_id: str
    new: Entry
    old: Entry | None = None
    http_status: int | None = None
    reason: str | None = None
    outcome_unknown: bool = False
    attempts: int = 1
    elapsed: float = 0.0
    verified: bool = False
    cause: Cause = Cause.OK
    snapshot: str | None = None
    """The snapshot file that holds the entry as it was before the request (undo reads it)."""
    code: int | None = None
    """The vendor's error code of the last answer, when it sent one."""
    vendor_message: str | None = None
    """The vendor's words with ``code`` (printable, bounded; escape them where shown)."""


@dataclass(frozen=True)
class BatchResult(Displayed):
    """The outcomes of several deletions, in the order the ids were given.

    ``interrupted`` is set when Ctrl-C (or a cancel) stopped the batch: requests already sent
    were waited for and are reported as they ended; ids never sent are ``not_attempted``.
    """

    results: list[DeleteResult] = field(default_factory=list)
    interrupted: bool = False
    snapshot: str | None = None
    """The snapshot file that holds the entries as they were before the batch (undo reads it)."""
    names: Mapping[str, str] | None = field(default=None, repr=False, compare=False)
    """The words of the front end that shows it for what it names (as ``DeleteResult.names``)."""

    @property
    def succeeded(self) -> int:
        """How many deletions are known to have happened."""
        return sum(1 for r in self.results if r.ok)

    @property
    def failed(self) -> int:
        """How many did not succeed (failures and unknown outcomes alike; absent ones aside)."""
        return len(self.results) - self.succeeded - self.absent

    @property
    def absent(self) -> int:
        """How many ids were not in the dictionary (nothing to delete: not failures)."""
        return sum(1 for r in self.results if r.absent)

    @property
    def unknown(self) -> int:
        """How many may or may not have happened (no answer after sending)."""
        return sum(1 for r in self.results if r.outcome_unknown)

    @property
    def ok(self) -> bool:
        """True when every deletion succeeded or found its entry absent (at least one id)."""
        return bool(self.results) and self.failed == 0

    @property
    def done(self) -> bool:
        """The same as ``ok`` (one name for one result and a batch)."""
        return self.ok

    @property
    def failures(self) -> list[DeleteResult]:
        """The results that did not succeed (absent ones aside), in input order, each id once."""
        seen: set[str | None] = set()
        out = []
        for r in self.results:
            if not r.done and r.entry_id not in seen:
                seen.add(r.entry_id)
                out.append(r)
        return out

    def failures_by_cause(self) -> dict[Cause, list[DeleteResult]]:
        """The failures grouped by machine-readable cause, largest group first."""
        groups: dict[Cause, list[DeleteResult]] = {}
        for r in self.failures:
            groups.setdefault(r.cause, []).append(r)
        order = Counter({c: len(rs) for c, rs in groups.items()})
        return {c: groups[c] for c, _ in order.most_common()}

    def __len__(self) -> int:
        return len(self.results)


@dataclass(frozen=True)
class DryRunResult(Displayed):
    """What a delete or purge would do, with nothing sent that changes the dictionary.

    ``entries`` would go (terms from a listing); ``missing`` are ids the listing does not hold;
    ``listed`` is False when the service offers no listing (then only the ids are known).
    """

    operation: Literal["delete", "purge"]
    host: str
    profile: str
    entries: list[Entry] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    listed: bool = True
    listing_age: float | None = None
    """Seconds old the listing the terms come from (0 or ``None``: listed afresh; more when the
    ``listing_max_age`` setting let this process's cached listing stand in)."""

    @property
    def ok(self) -> bool:
        """A dry run itself always succeeds; nothing was changed."""
        return True


@dataclass(frozen=True)
class RestoreResult(Displayed):
    """What a restore did: entries added, entries already there, entries that did not go back.

    Undoing an update or a sync (a format-2 snapshot) also puts changed entries back under their
    ids (``put_back``: the terms restored) and removes what the operation added (``removed``).
    """

    added: list[Entry] = field(default_factory=list)
    skipped: list[Entry] = field(default_factory=list)
    failed: list[tuple[Entry, str]] = field(default_factory=list)
    unknown: list[Entry] = field(default_factory=list)
    dry_run: bool = False
    put_back: list[Entry] = field(default_factory=list)
    removed: list[Entry] = field(default_factory=list)
    listing_age: float | None = None
    """From a delete's snapshot: how many seconds before the delete its terms were listed
    (more than 0 only where the ``listing_max_age`` setting let a cached listing stand in)."""

    @property
    def ok(self) -> bool:
        """True when nothing failed and nothing is left unknown."""
        return not self.failed and not self.unknown
