"""A glossary file as read (rows with their row numbers), the sync plan made from it and what
applying it did, and how each shows itself."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import Remedy
from .impact import ImpactMixin, after_change
from .records import AddResult, Cause, DeleteResult, Entry
from .text import (
    COLOUR,
    MARK,
    Outcomes,
    Rendered,
    count,
    dataframe,
    entries,
    escape,
    html_row,
    html_table,
    named_ids,
    remedy,
    shown,
)


@dataclass(frozen=True)
class GlossaryRow:
    """One row of a glossary file, with the id column if any and its ``row`` (1: a header)."""

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
    """A glossary file's rows in file order, those that could not be read as terms (a TBX
    concept with two terms in one language...), and an .xlsx's sheet read and its others."""

    path: Path
    format: str
    rows: list[GlossaryRow] = field(default_factory=list)
    unreadable: list[InvalidRow] = field(default_factory=list)
    sheet: str | None = None
    other_sheets: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[GlossaryRow]:
        return iter(self.rows)


@dataclass(frozen=True)
class ChangePreview(ImpactMixin):
    """What an add or an update would send (a dry run). ``old``: the entry as listed (an
    update); ``alongside``: listed entries with the same source term and pair."""

    operation: str
    host: str
    profile: str
    new: Entry
    old: Entry | None = None
    alongside: list[Entry] = field(default_factory=list)

    _css = "dry-run"

    def _summary(self) -> str:
        new = self.new.describe()
        if self.operation == "update" and self.old is not None:
            line = (
                f"dry run: would update entry {self.new.id} at {self.host}: "
                f"{self.old.describe()} \u21d2 {new}"
            )
        else:
            line = f"dry run: would add {new} at {self.host}"
        makes = {False: "this source term: a conflict", True: "these terms: a duplicate"}
        for twin in (False, True):
            ids = [e.id for e in self.alongside if (e.to_text == self.new.to_text) is twin]
            holds = "holds" if len(ids) == 1 else "hold"
            line += f" ({named_ids(ids)} already {holds} {makes[twin]})" * bool(ids)
        return line + "; nothing was sent"

    def _after(self, before: list[Entry]) -> list[Entry]:
        if self.old is not None:
            return after_change(before, updates=[self.new])
        return after_change(before, adds=[self.new])


@dataclass(frozen=True)
class NoChange(Rendered):
    """An add or an update with nothing to do: ``entry`` (with its id) already holds the terms,
    so nothing was sent (exit 0); ``existing``: every such entry; ``asked``: an update's id."""

    operation: str
    host: str
    profile: str
    entry: Entry
    existing: list[Entry] = field(default_factory=list)
    asked: str = ""

    @property
    def ok(self) -> bool:
        return True

    @property
    def ids(self) -> list[str]:
        return [e.id for e in self.existing]

    _css = "unchanged"

    def __str__(self) -> str:
        many = len(self.existing) != 1
        where = f"{named_ids(self.ids)} at {self.host} already"
        if self.operation == "add" or self.asked not in ("", self.entry.id):
            verb = "added" if self.operation == "add" else f"updated (entry {self.asked})"
            what = f"not {verb}: {where} {'hold' if many else 'holds'} {self.entry.describe()}"
            what += " (another copy would be a duplicate)"
        else:
            what = f"no change: {where} {'read' if many else 'reads'} {self.entry.describe()}"
        return shown(f"{MARK['absent']} {what}; nothing was sent")


@dataclass(frozen=True)
class ExportResult(Rendered):
    """A glossary file written from the dictionary: where, in which format, how many entries."""

    path: Path
    format: str
    count: int
    host: str = ""

    _css = "export"

    def __str__(self) -> str:
        return shown(
            f"\u2713 exported {entries(self.count)} from {self.host} to {self.path} ({self.format})"
        )


@dataclass(frozen=True)
class InvalidRow:
    """A file row the service would refuse, or that contradicts another row; never sent."""

    row: int
    reason: str
    terms: tuple[str, ...] = ()  # a sync deletes no entry with one of these source terms


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
class SyncPlan(ImpactMixin):
    """What a sync would change, from a file and one listing. ``missing``: the entries of the
    file's pairs the file lacks (``deletes`` when asked); ``warnings``: what lint would report;
    ``names``: a front end's words for the remedies it names (by ``errors.Remedy``)."""

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
    other_sheets: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    names: Mapping[str, str] | None = field(default=None, repr=False, compare=False)

    @property
    def changes(self) -> int:
        """How many requests' worth of change apply would make."""
        return len(self.adds) + len(self.updates) + len(self.deletes)

    @property
    def empty(self) -> bool:
        return self.changes == 0

    @property
    def ok(self) -> bool:
        """No row is invalid (apply would not refuse)."""
        return not self.invalid

    def counts(self) -> dict[str, int]:
        named = ("adds", "updates", "deletes", "unchanged", "conflicts", "invalid")
        return {n: self.unchanged if n == "unchanged" else len(getattr(self, n)) for n in named}

    def to_pandas(self) -> Any:
        """One row per planned change, conflict and invalid row."""
        columns = ("action", "row", *Entry.FIELDS, "oldToText", "reason")
        return dataframe(_plan_rows(self), columns, "SyncPlan")

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}={v}" for k, v in self.counts().items())
        return f"SyncPlan({self.path!r}, host={self.host!r}, {counts})"

    def __str__(self) -> str:
        lines = [_headline(self)]
        lines += [f"  {m} {w + ': ' if w else ''}{what}" for m, w, what in _changes(self)]
        lines += [f"  ({shown(note)})" for note in _notes(self)]
        return "\n".join(lines) + self._tail(False)

    def _repr_html_(self) -> str:
        rows = [html_row(c, f' style="color:{_MARK_COLOUR[c[0]]}"') for c in _changes(self)]
        notes = "".join(f"<div><i>{escape(n)}</i></div>" for n in _notes(self))
        return (
            f'<div class="dict-magics-sync-plan"><b>{escape(_headline(self))}</b>'
            f"{html_table((), rows)}{notes}</div>{self._tail(True)}"
        )

    def _after(self, before: list[Entry]) -> list[Entry]:
        updates = [u.new for u in self.updates]
        return after_change(before, adds=self.adds, updates=updates, deletes=self.deletes)


def _plan_rows(plan: SyncPlan) -> list[dict[str, Any]]:
    shared = "several entries share this source term"
    add_rows: list[int | None] = [*plan.add_rows] or [None] * len(plan.adds)
    found: list[tuple[str, int | None, Entry | None, str, str]] = [
        *(("add", n, e, "", "") for e, n in zip(plan.adds, add_rows, strict=False)),
        *(("update", u.row, u.new, u.old.to_text, "") for u in plan.updates),
        *(("delete", None, e, "", "") for e in plan.deletes),
        *(("conflict", c.row, e, "", shared) for c in plan.conflicts for e in c.entries),
        *(("invalid", bad.row, None, "", bad.reason) for bad in plan.invalid),
    ]
    blank = dict.fromkeys(Entry.FIELDS, "")
    return [
        {"action": action, "row": row, **(entry.to_service() if entry else blank)}
        | {"id": (entry and entry.id) or None, "oldToText": old or None, "reason": why or None}
        for action, row, entry, old, why in found
    ]


@dataclass(frozen=True, repr=False)
class SyncResult(Outcomes):
    """What applying a plan did: each request's result (``updates``: ``UpdateResult``), the
    snapshot, and whether a listing afterwards proved it (``verified``; ``None``: no listing)
    or showed what was not asked for (``mismatches``)."""

    plan: SyncPlan
    adds: list[AddResult] = field(default_factory=list)
    updates: Sequence[Any] = field(default_factory=list)
    deletes: list[DeleteResult] = field(default_factory=list)
    snapshot: str | None = None
    verified: bool | None = None
    mismatches: list[str] = field(default_factory=list)
    applied: bool = True
    interrupted: bool = False  # Ctrl-C or a cancel: the rest was not sent
    _css = "sync"

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
        """Every change succeeded and a listing afterwards proved it (or nothing was to do)."""
        proved = self.verified is True or not self.plan.changes
        return self.failed == 0 and self.unknown == 0 and proved and not self.interrupted

    def _tail(self, html: bool) -> str:
        return self.plan._tail(html)

    def _kind(self) -> str:
        if self.failed:
            return "failure"
        if self.unknown or (self.verified is not True and self.plan.changes):
            return "unknown" if self.verified is None else "failure"
        return "success"

    def _summary(self) -> str:
        plan = self.plan
        if not self.applied:
            return f"not applied: nothing was sent to {plan.host}"
        if not plan.changes:
            return f"nothing to change at {plan.host}: the dictionary already matches {plan.path}"
        kinds = (
            (self.adds, plan.adds, "added", "add"),
            (self.updates, plan.updates, "updated", "update"),
            (self.deletes, plan.deletes, "deleted", "deletion"),
        )
        done = ", ".join(
            f"{sum(r.ok for r in rs)}/{len(planned)} {verb}" for rs, planned, verb, _ in kinds
        )
        how = "interrupted" if self.interrupted else "applied"
        text = f"sync of {plan.path} {how} at {plan.host}: {done}"
        left = [
            (len(p) - sum(r.cause is not Cause.NOT_ATTEMPTED for r in rs), n)
            for rs, p, _, n in kinds
        ]
        unsent = ", ".join(count(number, noun) for number, noun in left if number)
        text += f"; not sent: {unsent}" if unsent else ""
        if self.verified is True:
            text += "; a listing afterwards shows every change"
        elif self.verified is False:
            differ = count(len(self.mismatches), "difference")
            text += f"; a listing afterwards disagrees ({differ})"
        else:
            text += "; no listing afterwards could verify it"
        # True: what was done is unchanged in a new plan, what was not is planned again.
        return text + "; the same sync run again finishes it" * self.interrupted

    def _items(self) -> list[tuple[str, str, str]]:
        sent = [r for r in self.results if r.cause is not Cause.NOT_ATTEMPTED]
        items = [r.item(details=False) for r in sent if not r.ok]
        items += [("failure", mismatch, "") for mismatch in self.mismatches[:_SHOWN]]
        if self.snapshot:
            items.append(("", f"snapshot (restore it to undo): {self.snapshot}", ""))
        return items


# -- how plans and results show themselves ------------------------------------------------------
# A plan reads like terraform's: counts first, then one line per change (``+`` add, ``~`` update
# old -> new, ``-`` delete, ``!`` conflict, ``x`` invalid row), the first ``_SHOWN`` of each.

_SHOWN = 50
_MARK_COLOUR = {"+": COLOUR["success"], "~": COLOUR["unknown"], "-": COLOUR["failure"]}
_MARK_COLOUR |= {"!": "#8250df", "x": COLOUR["failure"], "?": COLOUR["unknown"]}


def _terms(entry: Entry) -> str:
    return f"{entry.pair}  {entry.from_text} \u2192 {entry.to_text}"


def _update(u: PlannedUpdate) -> str:
    return f"{u.new.pair}  {u.new.from_text}: {u.old.to_text} \u2192 {u.new.to_text}"


def _conflict(c: Conflict) -> str:
    first, ids, targets = c.entries[0], [e.id for e in c.entries], [e.to_text for e in c.entries]
    return (
        f"{first.pair}  {first.from_text}: {len(ids)} entries (ids {', '.join(ids)}: "
        f"{' | '.join(targets)}) share this source term; left alone"
    )


def _headline(plan: SyncPlan) -> str:
    nouns = ("add", "update", "delete", "unchanged", "conflict", "invalid row")
    numbers = zip(plan.counts().values(), nouns, strict=True)
    counts = [count(n, w, w if w == "unchanged" else None) for n, w in numbers]
    where = f" at {plan.host}" if plan.host else ""
    profile = f" (profile {plan.profile})" if plan.profile else ""
    sheet = f", sheet {plan.sheet!r}" if plan.sheet else ""
    return shown(f"Sync plan for {plan.path}{sheet}{where}{profile}: {', '.join(counts)}")


def _changes(plan: SyncPlan) -> Iterator[tuple[str, str, str]]:
    """(mark, where, what) per change shown, kinds in order, ``_SHOWN`` of each at most."""
    rows = plan.add_rows or [0] * len(plan.adds)
    kinds: list[tuple[str, str, list[tuple[str, str]]]] = [
        ("+", "add", [(f"row {r}", _terms(e)) for e, r in zip(plan.adds, rows, strict=False)]),
        ("~", "update", [(f"row {u.row}, id {u.id}", _update(u)) for u in plan.updates]),
        ("-", "delete", [(f"id {e.id}", _terms(e)) for e in plan.deletes]),
        ("!", "conflict", [(f"row {c.row}", _conflict(c)) for c in plan.conflicts]),
        ("x", "invalid row", [(f"row {bad.row}", bad.reason) for bad in plan.invalid]),
        ("?", "warning", [("", warning) for warning in plan.warnings]),
    ]
    for mark, what, lines in kinds:
        for where, change in lines[:_SHOWN]:
            yield mark, shown(where), shown(change)
        if len(lines) > _SHOWN:
            yield mark, "", f"\u2026 and {count(len(lines) - _SHOWN, what)} more"


def _notes(plan: SyncPlan) -> list[str]:
    notes = []
    left = len(plan.missing) - len(plan.deletes)
    if left > 0:
        pairs = ", ".join(f"{a}\u2192{b}" for a, b in plan.pairs)
        how = remedy(plan.names, Remedy.DELETE_MISSING)
        are, them = ("is", "it") if left == 1 else ("are", "them")
        notes.append(
            f"{entries(left)} of {pairs} not in the file {are} kept; to delete {them} too, {how}"
        )
    if plan.other_sheets:
        others = ", ".join(repr(name) for name in plan.other_sheets)
        how = remedy(plan.names, Remedy.SHEET)
        notes.append(f"read sheet {plan.sheet!r}, not {others}; to read another, {how}")
    if plan.invalid:
        notes.append(
            "invalid rows are never sent; applying is refused while any exist unless they "
            "are skipped"
        )
    notes.append("nothing to change" if plan.empty else "this is a plan: nothing was sent")
    return notes
