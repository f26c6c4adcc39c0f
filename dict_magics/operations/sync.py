"""Make the dictionary match a glossary file: the plan first (nothing sent), then apply.

A row matches the entry with its ``fromLang``, ``fromText`` and ``toLang`` (DESIGN, "Sync
matching"): another ``toText`` is an update (PUT, id kept), no match an add; entries the file
lacks are deleted only when asked. Several entries of one source are a conflict, left alone.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import OperationFailedError, UsageProblem
from ..formats import parse_pair, read_glossary
from ..models import DeleteResult
from ..models.glossary import (
    Conflict,
    Glossary,
    GlossaryRow,
    InvalidRow,
    PlannedUpdate,
    SyncPlan,
    SyncResult,
)
from ..models.lint import spacing_findings
from ..models.terms import entry_problems, language_problem
from ..models.text import entries as counted
from .apply import ApplyChanges
from .context import OperationSettings, ProgressSink, Warn, connect, say
from .listing import CACHE
from .prompts import Prompter, confirm, named

if TYPE_CHECKING:
    from ..models import Entry
    from ..service.client import DictionaryClient


Key = tuple[str, str, str]


def plan_sync(settings: OperationSettings, path: str | Path, **options: Any) -> SyncPlan:
    """What a sync of ``path`` would change, from the file and one listing; sends nothing
    else (``UsageProblem`` for a file it will not read, ``ServiceError`` with no listing)."""
    plan = sync(settings, path, **options)
    assert isinstance(plan, SyncPlan)
    return plan


def validate_rows(
    rows: Iterable[GlossaryRow], held: Mapping[Key, Sequence[Entry]]
) -> tuple[list[GlossaryRow], list[InvalidRow]]:
    """(rows to sync, invalid rows): the service's term rules, and one source with two
    targets in the file (which one is meant cannot be told) unless ``held`` (the dictionary's
    entries by source) holds exactly those. Identical rows are kept once."""
    valid: list[GlossaryRow] = []
    invalid: list[InvalidRow] = []
    by_source: dict[Key, list[GlossaryRow]] = {}
    for row in rows:
        problems = entry_problems(*row.terms)
        listed = held.get(row.source, ())
        if problems and not any(e.to_text == row.to_text for e in listed):
            invalid.append(InvalidRow(row.row, "; ".join(p.message for p in problems)))
            continue  # (a row that is exactly a listed entry asks nothing: an export of it)
        by_source.setdefault(row.source, []).append(row)
    for same in by_source.values():
        targets = {r.to_text for r in same}
        listed = held.get(same[0].source, ())  # the same targets: an export of a conflict
        mirrored = Counter(r.to_text for r in same) == Counter(e.to_text for e in listed)
        if len(targets) == 1 or mirrored:
            valid.append(same[0])
            continue
        first, listed_targets = same[0], ", ".join(f"{r.to_text!r} (row {r.row})" for r in same)
        why = (
            f"{first.from_text!r} ({first.from_lang}\u2192{first.to_lang}) has {len(targets)} "
            f"targets in the file: {listed_targets}"
        )
        invalid += [InvalidRow(row.row, why) for row in same]
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
    index: dict[Key, list[Entry]] = {}
    for entry in entries:
        index.setdefault((entry.from_lang, entry.from_text, entry.to_lang), []).append(entry)
    valid, invalid = validate_rows(glossary.rows, index)
    invalid = sorted([*invalid, *glossary.unreadable], key=lambda r: r.row)
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
    # Every source term the file names, valid or not, is not "missing": in the row's pair, or
    # in any pair when the row's languages (or which term is the source) cannot be read.
    named: set[Key] = set()
    anywhere = {term for bad in glossary.unreadable for term in bad.terms}
    pairs: dict[tuple[str, str], None] = {}
    for row in glossary.rows:
        if language_problem(row.from_lang) is None and language_problem(row.to_lang) is None:
            named.add(row.source)
            pairs.setdefault((row.from_lang, row.to_lang))
        else:
            anywhere.add(row.from_text)
    if pair is not None:
        pairs.setdefault(pair)
    missing = [
        e
        for e in entries
        if (e.from_lang, e.to_lang) in pairs
        and e.terms[:3] not in named
        and e.from_text not in anywhere
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
        listing=tuple(entries),
        sheet=glossary.sheet,
        other_sheets=glossary.other_sheets,
        warnings=[  # what lint would report right after, in the terms sent
            f"row {row}: {finding.message}; {finding.fix}"
            for row, entry in [
                *zip(add_rows, adds, strict=True),
                *((u.row, u.new) for u in updates),
            ]
            for finding in spacing_findings(entry)
        ],
    )


def sync(
    settings: OperationSettings,
    path: str | Path,
    *,
    apply: bool = False,
    delete_missing: bool = False,
    pair: str | None = None,
    format: str | None = None,
    sheet: str | None = None,
    skip_invalid: bool = False,
    yes: bool = False,
    prompter: Prompter | None = None,
    progress: ProgressSink | None = None,
    cancel: threading.Event | None = None,
    client: DictionaryClient | None = None,
    warn: Warn = None,
) -> SyncPlan | SyncResult:
    """The plan (``apply`` false: one listing, nothing else sent) or the plan applied:
    refused while invalid rows exist unless ``skip_invalid``, asked before deleting unless
    ``yes``; then a snapshot, deletions, PUTs, bulk adds, and one listing that verifies."""
    glossary = read_glossary(path, format=format, pair=pair, sheet=sheet)
    with connect(settings, client) as (client, profile):
        before = list(CACHE.fetch(client, profile).entries)
        plan = make_plan(
            glossary,
            before,
            host=client.host,
            profile=profile,
            delete_missing=delete_missing,
            pair=parse_pair(pair),
        )
        if not apply:
            return plan
        if plan.invalid and not skip_invalid:
            bad = plan.invalid
            shown = "; ".join(f"row {row.row}: {row.reason}" for row in bad[:3])
            more = f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""
            raise UsageProblem(
                f"{plan.path} has {len(bad)} invalid row{'s' * (len(bad) != 1)}: {shown}{more}. "
                "Fix them; nothing was sent.",
                option="skip_invalid",
            )
        if plan.empty:
            return SyncResult(plan, verified=True)
        if plan.updates:
            client.check_update()  # no PUT there (as `probe` found): refused before anything
        if plan.deletes and not yes:  # deleting what the file lacks: once someone types yes
            n = counted(len(plan.deletes))
            confirm(
                prompter,
                f"This sync deletes {n} at {plan.host} (profile {profile!r}) that {plan.path} "
                f"lacks: {named(plan.deletes)}. A snapshot is kept first.",
                "apply the sync",
                refusing=f"delete {n} at {plan.host}",
                declined=f"Cancelled \u2014 sync not confirmed: nothing was sent ({plan.host}).",
            )
            before = list(CACHE.fetch(client, profile).entries)  # a person took time to answer
        live = {e.id: e for e in before}
        run = ApplyChanges(client, profile, settings, progress=progress, cancel=cancel, warn=warn)
        done = run.run(
            [live[e.id] for e in plan.deletes if e.id in live],
            [(live.get(u.id, u.old), u.new) for u in plan.updates],
            plan.adds,
            before,
            doing="Syncing",
            verify=True,
        )
        if done.unlisted:
            say(warn, f"no listing after the sync could verify it ({done.unlisted})")
        kept = str(done.snapshot)
        gone = "the listing just before does not hold it: nothing was sent"
        absent = [
            DeleteResult(
                "failure", e.id, reason=gone, attempts=0, absent=True, snapshot=kept, entry=e
            )
            for e in plan.deletes
            if e.id not in live
        ]
        deletes = absent + done.deletes  # checked against the listing afterwards
        found = None if done.after is None else _mismatches(before, done.after, done, deletes)
        result = SyncResult(
            plan,
            done.adds,
            done.updates,
            deletes,
            snapshot=kept,
            verified=None if found is None else not found,
            mismatches=found or [],
            interrupted=done.interrupted,
        )
    if settings.raise_on_failure and not result.ok:
        raise OperationFailedError(result)
    return result


def _mismatches(
    before: list[Entry], after: list[Entry], done: ApplyChanges, deletes: list[DeleteResult]
) -> list[str]:
    """What the service reported done that the listing afterwards does not show, in words."""
    found: list[str] = []
    gained = Counter(e.terms for e in after)
    gained.subtract(Counter(e.terms for e in before))
    for added in done.adds:
        if not added.ok:
            continue
        if gained[added.entry.terms] > 0:
            gained[added.entry.terms] -= 1
        else:
            found.append(f"added {added.entry.describe()}, but the listing does not hold it")
    by_id = {e.id: e for e in after}
    for updated in done.updates:
        now = by_id.get(updated.entry_id)
        if updated.ok and (now is None or now.terms != updated.new.terms):
            shown = "no such entry" if now is None else now.describe()
            found.append(f"updated entry {updated.entry_id}, but the listing shows {shown}")
    for deleted in deletes:
        if deleted.ok and deleted.entry_id in by_id:
            found.append(f"deleted entry {deleted.entry_id}, but the listing still holds it")
    return found
