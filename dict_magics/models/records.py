"""What the service holds and what a request did: entries, and results reported truthfully.

Models are plain data. They show themselves through ``Displayed`` (``display.py``): the views
live in ``render/`` and are looked up at display time, so no model imports ``render``; their
``__repr__`` lists the fields, for debugging.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Literal

from .display import Displayed

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

Outcome = Literal["success", "failure", "unknown"]


class Cause(str, Enum):
    """Why a request ended as it did, for programs (render, retry-failed, grouping).

    ``reason`` says the same in words; nothing should ever parse ``reason``.
    """

    OK = "ok"
    REFUSED = "refused"
    """The service answered ``status: failure`` (no such entry, bad request, ...)."""
    AUTH = "auth"
    """401 / 403: the keys, the signature or the clock."""
    NONCE_REUSED = "nonce_reused"
    """The service saw this nonce already (another process with the same key)."""
    BAD_ANSWER = "bad_answer"
    """An answer we cannot read as the service's JSON (not JSON, no status, HTML, ...)."""
    TOO_LARGE = "too_large"
    REDIRECT = "redirect"
    """A 3xx: never followed, so the credentials went nowhere else."""
    RATE_LIMITED = "rate_limited"
    """429 until the retry budget ran out."""
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


@dataclass(frozen=True)
class Entry:
    """One dictionary entry: a source term the engine always translates to a target term."""

    id: str
    from_lang: str
    from_text: str
    to_lang: str
    to_text: str

    FIELDS = ("id", "fromLang", "fromText", "toLang", "toText")

    @classmethod
    def from_service(cls, data: Any) -> Entry:
        """Build from the service's JSON object; raises ``ValueError`` naming what is wrong."""
        if not isinstance(data, dict):
            raise ValueError(f"an entry must be a JSON object, not {type(data).__name__}")
        missing = [name for name in cls.FIELDS if name not in data]
        if missing:
            raise ValueError(f"an entry lacks {', '.join(missing)}")
        entry_id = data["id"]
        if isinstance(entry_id, bool) or not isinstance(entry_id, int | str):
            raise ValueError(f"an entry id must be a number or text, not {entry_id!r}")
        texts = [data[name] for name in cls.FIELDS[1:]]
        if not all(isinstance(t, str) for t in texts):
            raise ValueError(f"entry {entry_id!r} has a term or language that is not text")
        return cls(str(entry_id), *texts)

    def to_service(self, *, with_id: bool = True) -> dict[str, str]:
        """The service's field names (``POST`` takes them without ``id``)."""
        data = {
            "fromLang": self.from_lang,
            "fromText": self.from_text,
            "toLang": self.to_lang,
            "toText": self.to_text,
        }
        return {"id": self.id, **data} if with_id else data

    @property
    def terms(self) -> tuple[str, str, str, str]:
        """What makes two entries the same entry, whatever their ids."""
        return (self.from_lang, self.from_text, self.to_lang, self.to_text)

    def matches(
        self, match: str | None = None, from_lang: str | None = None, to_lang: str | None = None
    ) -> bool:
        """True when ``match`` is in either term (case-insensitive) and the languages agree."""
        if from_lang and self.from_lang.casefold() != from_lang.casefold():
            return False
        if to_lang and self.to_lang.casefold() != to_lang.casefold():
            return False
        if match:
            needle = match.casefold()
            return needle in self.from_text.casefold() or needle in self.to_text.casefold()
        return True

    def describe(self) -> str:
        """``金曜日 → FRI (ja→en)``: the entry as a person recognises it."""
        return f"{self.from_text} \u2192 {self.to_text} ({self.from_lang}\u2192{self.to_lang})"


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
        """Write the entries as UTF-8 CSV with the service's column names; returns the path."""
        path = Path(path)
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(Entry.FIELDS)
            writer.writerows([e.id, *e.terms] for e in self.entries)
        return path

    def __repr__(self) -> str:
        return f"EntryList({len(self.entries)} entries, host={self.host!r})"


@dataclass(frozen=True)
class DeleteResult(Displayed):
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

    @property
    def ok(self) -> bool:
        """True only when the deletion is known to have happened."""
        return self.status == "success"

    @property
    def outcome(self) -> Outcome:
        """``success``, ``failure`` or ``unknown``: the three outcomes a reader must tell apart."""
        if self.outcome_unknown:
            return "unknown"
        return self.status

    @property
    def target(self) -> str:
        """What was deleted, in words: the id (with its terms when known), or every entry."""
        if self.entry_id is None:
            return "every entry"
        if self.entry is not None:
            return f"{self.entry_id}: {self.entry.describe()}"
        return f"entry {self.entry_id!r}"


@dataclass(frozen=True)
class AddResult(Displayed):
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

    @property
    def ok(self) -> bool:
        """True only when the entry is known to have been added."""
        return self.status == "success"

    @property
    def outcome(self) -> Outcome:
        """``success``, ``failure`` or ``unknown``."""
        return "unknown" if self.outcome_unknown else self.status


@dataclass(frozen=True)
class AddBatch:
    """What ``add_entries`` did: one ``AddResult`` per entry, in the order given.

    ``settled`` holds the positions whose answer was lost and that a listing then decided;
    ``requests`` counts the bulk requests sent (and the settling listing); ``interrupted`` is
    set when Ctrl-C or a cancel stopped the batch (``why`` says what stopped it, if anything).
    """

    results: list[AddResult] = field(default_factory=list)
    interrupted: bool = False
    why: str = ""
    requests: int = 0
    settled: tuple[int, ...] = ()

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
class UpdateResult(Displayed):
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

    @property
    def ok(self) -> bool:
        """True only when the entry is known to hold the new terms."""
        return self.status == "success"

    @property
    def outcome(self) -> Outcome:
        """``success``, ``failure`` or ``unknown``."""
        return "unknown" if self.outcome_unknown else self.status


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

    @property
    def succeeded(self) -> int:
        """How many deletions are known to have happened."""
        return sum(1 for r in self.results if r.ok)

    @property
    def failed(self) -> int:
        """How many did not succeed (failures and unknown outcomes alike)."""
        return len(self.results) - self.succeeded

    @property
    def unknown(self) -> int:
        """How many may or may not have happened (no answer after sending)."""
        return sum(1 for r in self.results if r.outcome_unknown)

    @property
    def ok(self) -> bool:
        """True when every deletion succeeded (and there was at least one)."""
        return bool(self.results) and self.failed == 0

    @property
    def failures(self) -> list[DeleteResult]:
        """The results that did not succeed, in input order, each id once."""
        seen: set[str | None] = set()
        out = []
        for r in self.results:
            if not r.ok and r.entry_id not in seen:
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

    @property
    def ok(self) -> bool:
        """True when nothing failed and nothing is left unknown."""
        return not self.failed and not self.unknown
