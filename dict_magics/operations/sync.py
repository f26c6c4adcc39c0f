"""Make the dictionary match a glossary file: the plan first (nothing sent), then apply.

Matching (DESIGN, "Sync matching"): a file row matches the dictionary entry with the same
``fromLang``, ``fromText`` and ``toLang``: the same ``toText`` is unchanged, another is an
update (PUT, the id kept). No match is an add. Entries of the file's language pairs whose source
term the file lacks are deleted only when asked (``delete_missing``). Several entries with one
source term are a conflict: reported, left alone. A row the service would refuse (empty or too
long, bad language code, control characters) or that gives one source term two targets is
invalid, listed by row number, and never sent; identical rows count once.

``plan_sync`` is one listing and pure computation (``make_plan``: dictionaries keyed by the
source term, linear in rows + entries). ``apply_sync`` takes a fresh plan, keeps a format-2
snapshot (entries as they were, terms it adds), sends bulk adds, PUTs and deletes, then one
listing verifies everything the plan asked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..formats import read_glossary
from ..models.glossary import (
    Conflict,
    Glossary,
    GlossaryRow,
    InvalidRow,
    PlannedUpdate,
    SyncPlan,
)
from ..models.terms import entry_problems, language_problem
from .connect import connect
from .context import OperationSettings
from .listing import CACHE

if TYPE_CHECKING:
    from ..models import Entry
    from ..service.client import DictionaryClient

__all__ = ["make_plan", "plan_sync", "validate_rows"]

Key = tuple[str, str, str]


def plan_sync(
    settings: OperationSettings,
    path: str | Path,
    *,
    format: str | None = None,
    pair: str | None = None,
    delete_missing: bool = False,
    client: DictionaryClient | None = None,
) -> SyncPlan:
    """What a sync of ``path`` would change, from the file and one listing; sends nothing else.

    Raises ``UsageProblem`` for a file it will not read (before any request) and
    ``ServiceError`` when the dictionary cannot be listed.
    """
    glossary = read_glossary(path, format=format, pair=pair)
    with connect(settings, client) as (client, profile):
        listing = CACHE.fetch(client, profile)
        return make_plan(
            glossary,
            listing.entries,
            host=client.host,
            profile=profile,
            delete_missing=delete_missing,
            pair=_pair(pair),
        )


def _pair(pair: str | tuple[str, str] | None) -> tuple[str, str] | None:
    if pair is None or isinstance(pair, tuple):
        return pair
    from ..formats import parse_pair

    return parse_pair(pair)


def validate_rows(rows: Iterable[GlossaryRow]) -> tuple[list[GlossaryRow], list[InvalidRow]]:
    """(rows to sync, invalid rows): the service's term rules (``models.terms``), and one
    source term with two targets in the file (every such row is invalid: which one is meant
    cannot be told). Identical rows are kept once."""
    valid: list[GlossaryRow] = []
    invalid: list[InvalidRow] = []
    by_source: dict[Key, list[GlossaryRow]] = {}
    for row in rows:
        problems = entry_problems(*row.terms)
        if problems:
            invalid.append(InvalidRow(row.row, "; ".join(p.message for p in problems)))
            continue
        by_source.setdefault(row.source, []).append(row)
    for same in by_source.values():
        targets = {r.to_text for r in same}
        if len(targets) == 1:
            valid.append(same[0])
            continue
        listed = ", ".join(f"{r.to_text!r} (row {r.row})" for r in same)
        first = same[0]
        for row in same:
            invalid.append(
                InvalidRow(
                    row.row,
                    f"{first.from_text!r} ({first.from_lang}\u2192{first.to_lang}) has "
                    f"{len(targets)} targets in the file: {listed}",
                )
            )
    valid.sort(key=lambda r: r.row)
    invalid.sort(key=lambda r: r.row)
    return valid, invalid


def make_plan(
    glossary: Glossary,
    entries: Sequence[Entry],
    *,
    host: str = "",
    profile: str = "",
    delete_missing: bool = False,
    pair: tuple[str, str] | None = None,
) -> SyncPlan:
    """The plan for ``glossary`` against the listed ``entries`` (pure: sends nothing)."""
    valid, invalid = validate_rows(glossary.rows)
    invalid = sorted([*invalid, *glossary.unreadable], key=lambda r: r.row)
    index: dict[Key, list[Entry]] = {}
    for entry in entries:
        index.setdefault((entry.from_lang, entry.from_text, entry.to_lang), []).append(entry)
    adds: list[Entry] = []
    add_rows: list[int] = []
    updates: list[PlannedUpdate] = []
    conflicts: list[Conflict] = []
    unchanged = 0
    for row in valid:
        found = index.get(row.source)
        if not found:
            adds.append(row.to_entry())
            add_rows.append(row.row)
        elif len(found) > 1:
            conflicts.append(Conflict(list(found), row.row))
        elif found[0].to_text == row.to_text:
            unchanged += 1
        else:
            old = found[0]
            updates.append(PlannedUpdate(old.id, old, row.to_entry(old.id), row.row))
    # Every source term the file names (valid or not) is not "missing": an invalid row never
    # turns its entry into a deletion.
    named = {row.source for row in glossary.rows}
    pairs = dict.fromkeys(
        (row.from_lang, row.to_lang)
        for row in glossary.rows
        if language_problem(row.from_lang) is None and language_problem(row.to_lang) is None
    )
    if pair is not None:
        pairs.setdefault(pair)
    missing = [
        e
        for e in entries
        if (e.from_lang, e.to_lang) in pairs and (e.from_lang, e.from_text, e.to_lang) not in named
    ]
    return SyncPlan(
        path=str(glossary.path),
        host=host,
        profile=profile,
        adds=adds,
        add_rows=add_rows,
        updates=updates,
        deletes=list(missing) if delete_missing else [],
        unchanged=unchanged,
        conflicts=conflicts,
        invalid=invalid,
        missing=missing,
        pairs=list(pairs),
        delete_missing=delete_missing,
    )
