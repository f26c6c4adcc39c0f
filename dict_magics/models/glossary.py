"""A glossary file as read: rows with their row numbers, and the sync plan made from them.

``formats`` reads a file into ``GlossaryRow`` values (row numbers as a spreadsheet counts them,
so messages point at the right line); ``operations/sync.py`` compares them with a listing and
gives a ``SyncPlan`` (terraform's plan: what apply would do, nothing sent); apply gives a
``SyncResult``. Plain data: the views are in ``render/glossary.py``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .display import Displayed
from .records import AddResult, DeleteResult, Entry

__all__ = [
    "ChangePreview",
    "Conflict",
    "ExportResult",
    "Glossary",
    "GlossaryRow",
    "InvalidRow",
    "NoChange",
    "PlannedUpdate",
    "SyncPlan",
    "SyncResult",
]


@dataclass(frozen=True)
class GlossaryRow:
    """One row of a glossary file: the four terms, the id column when the file has one, and
    where it was (``row``: 1 is the header of a table; a TBX counts its concept entries)."""

    row: int
    from_lang: str
    from_text: str
    to_lang: str
    to_text: str
    id: str | None = None

    @property
    def terms(self) -> tuple[str, str, str, str]:
        return (self.from_lang, self.from_text, self.to_lang, self.to_text)

    @property
    def source(self) -> tuple[str, str, str]:
        """What a row is matched on: ``fromLang``, ``fromText``, ``toLang``."""
        return (self.from_lang, self.from_text, self.to_lang)

    def to_entry(self, entry_id: str = "") -> Entry:
        """The entry this row asks for (``id`` empty: the service picks it)."""
        return Entry(entry_id, *self.terms)


@dataclass(frozen=True)
class Glossary:
    """What a glossary file holds: its rows in file order, the format it was read as, and the
    rows that could not be read as terms (a TBX concept with two terms in one language...)."""

    path: Path
    format: str
    rows: list[GlossaryRow] = field(default_factory=list)
    unreadable: list[InvalidRow] = field(default_factory=list)
    sheet: str | None = None
    """The sheet read (an .xlsx)."""
    other_sheets: list[str] = field(default_factory=list)
    """The workbook's other visible sheets, not read."""

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[GlossaryRow]:
        return iter(self.rows)


@dataclass(frozen=True)
class ChangePreview(Displayed):
    """What an add or an update would send (a dry run): nothing was sent that changes anything.

    ``old`` is the entry as listed (an update), ``None`` for an add; ``alongside`` are listed
    entries with the same source term and pair (an add would make them a conflict).
    """

    operation: str
    host: str
    profile: str
    new: Entry
    old: Entry | None = None
    alongside: list[Entry] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return True


@dataclass(frozen=True)
class NoChange(Displayed):
    """An add or an update with nothing to do: the dictionary already holds the terms asked
    for, so nothing was sent (running the same command again is harmless, exit 0).

    ``entry`` is the listed entry that already holds the terms asked for, with its id (so
    ``result.entry.id`` reads as after an add or update that was sent); ``existing`` every such
    entry (an update: that one; an add: every copy, in the listing's order).
    """

    operation: str
    host: str
    profile: str
    entry: Entry
    existing: list[Entry] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return True

    @property
    def ids(self) -> list[str]:
        """The ids of the entries that already hold the terms."""
        return [e.id for e in self.existing]


@dataclass(frozen=True)
class ExportResult(Displayed):
    """A glossary file written from the dictionary: where, in which format, how many entries."""

    path: Path
    format: str
    count: int
    host: str = ""


@dataclass(frozen=True)
class InvalidRow:
    """A file row the service would refuse, or that contradicts another row; never sent."""

    row: int
    reason: str
    terms: tuple[str, ...] = ()
    """What a row that is not four terms holds (a TBX concept with three languages): a sync
    deletes no entry whose source term is one of these, in any pair."""


@dataclass(frozen=True)
class Conflict:
    """Several dictionary entries share one source term and pair: a sync leaves them alone."""

    entries: list[Entry]
    row: int


@dataclass(frozen=True)
class PlannedUpdate:
    """An entry whose target term differs from the file's: PUT ``new`` under ``id``."""

    id: str
    old: Entry
    new: Entry
    row: int


@dataclass(frozen=True)
class SyncPlan(Displayed):
    """What a sync would change, computed from a file and one listing; nothing sent.

    ``adds`` have no id yet; ``missing`` are the dictionary entries of the file's language
    pairs that the file lacks: ``deletes`` holds them only when deletion was asked for.
    """

    path: str
    host: str
    profile: str
    adds: list[Entry] = field(default_factory=list)
    add_rows: list[int] = field(default_factory=list)
    updates: list[PlannedUpdate] = field(default_factory=list)
    deletes: list[Entry] = field(default_factory=list)
    unchanged: int = 0
    conflicts: list[Conflict] = field(default_factory=list)
    invalid: list[InvalidRow] = field(default_factory=list)
    missing: list[Entry] = field(default_factory=list)
    pairs: list[tuple[str, str]] = field(default_factory=list)
    delete_missing: bool = False
    sheet: str | None = None
    """The sheet of an .xlsx the plan was made from."""
    other_sheets: list[str] = field(default_factory=list)
    """The workbook's other visible sheets, not read."""
    warnings: list[str] = field(default_factory=list)
    """What the changes would send that lint would then report (stray spaces), by row."""
    names: Mapping[str, str] | None = field(default=None, repr=False, compare=False)
    """The words of the front end that shows it for what it names (by ``errors.Remedy``: how
    to ask for the deletions it leaves out), set by that front end; ``None``: neutral words."""

    @property
    def changes(self) -> int:
        """How many requests' worth of change apply would make (adds, updates, deletes)."""
        return len(self.adds) + len(self.updates) + len(self.deletes)

    @property
    def empty(self) -> bool:
        """True when apply would change nothing."""
        return self.changes == 0

    @property
    def ok(self) -> bool:
        """A plan is a preview; it is 'ok' when no row is invalid (apply would not refuse)."""
        return not self.invalid

    def counts(self) -> dict[str, int]:
        return {
            "adds": len(self.adds),
            "updates": len(self.updates),
            "deletes": len(self.deletes),
            "unchanged": self.unchanged,
            "conflicts": len(self.conflicts),
            "invalid": len(self.invalid),
        }

    def to_pandas(self) -> Any:
        """One row per planned change, conflict and invalid row: ``action``, ``row``, ``id``,
        the four terms (the new ones for an update), ``oldToText`` and ``reason``."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "SyncPlan.to_pandas() needs pandas, which is not installed: pip install pandas "
                "(or use .adds, .updates, .deletes)."
            ) from None
        return pd.DataFrame(plan_rows(self), columns=list(PLAN_COLUMNS), dtype=object)

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}={v}" for k, v in self.counts().items())
        return f"SyncPlan({self.path!r}, host={self.host!r}, {counts})"


PLAN_COLUMNS = (
    "action",
    "row",
    "id",
    "fromLang",
    "fromText",
    "toLang",
    "toText",
    "oldToText",
    "reason",
)


def plan_rows(plan: SyncPlan) -> list[dict[str, Any]]:
    """The plan as table rows (``to_pandas`` and the CSV-minded)."""
    rows: list[dict[str, Any]] = []

    def put(action: str, row: int | None, entry: Entry | None, old: str = "", why: str = ""):
        terms = entry.to_service() if entry is not None else dict.fromkeys(Entry.FIELDS, "")
        rows.append(
            {"action": action, "row": row, **terms, "oldToText": old or None, "reason": why or None}
        )

    for entry, row in zip(plan.adds, plan.add_rows or [None] * len(plan.adds), strict=False):
        put("add", row, entry)
    for update in plan.updates:
        put("update", update.row, update.new, update.old.to_text)
    for entry in plan.deletes:
        put("delete", None, entry)
    for conflict in plan.conflicts:
        for entry in conflict.entries:
            put("conflict", conflict.row, entry, why="several entries share this source term")
    for bad in plan.invalid:
        put("invalid", bad.row, None, why=bad.reason)
    for row in rows:
        if row["id"] == "":
            row["id"] = None
    return rows


@dataclass(frozen=True)
class SyncResult(Displayed):
    """What applying a plan did: each request's result, the snapshot kept first, and what the
    one listing afterwards proved (``verified``: ``True`` when the dictionary holds exactly
    what the plan asked for, ``False`` when it does not, ``None`` when it could not be listed).
    """

    plan: SyncPlan
    adds: list[AddResult] = field(default_factory=list)
    updates: Sequence[Any] = field(default_factory=list)
    """``UpdateResult`` values (old and new entry), in plan order."""
    deletes: list[DeleteResult] = field(default_factory=list)
    snapshot: str | None = None
    verified: bool | None = None
    mismatches: list[str] = field(default_factory=list)
    """What the listing afterwards showed that the plan did not ask for, in words."""
    applied: bool = True

    @property
    def results(self) -> list[Any]:
        return [*self.adds, *self.updates, *self.deletes]

    @property
    def succeeded(self) -> int:
        return sum(1 for r in self.results if r.ok)

    @property
    def failed(self) -> int:
        return sum(1 for r in self.results if r.outcome == "failure")

    @property
    def unknown(self) -> int:
        return sum(1 for r in self.results if r.outcome == "unknown")

    @property
    def ok(self) -> bool:
        """Every request succeeded and the listing afterwards agreed (or nothing was to do)."""
        return self.failed == 0 and self.unknown == 0 and self.verified is not False

    def __repr__(self) -> str:
        return (
            f"SyncResult(applied={self.applied}, adds={len(self.adds)}, "
            f"updates={len(self.updates)}, deletes={len(self.deletes)}, "
            f"succeeded={self.succeeded}, failed={self.failed}, unknown={self.unknown}, "
            f"verified={self.verified}, snapshot={self.snapshot!r})"
        )
