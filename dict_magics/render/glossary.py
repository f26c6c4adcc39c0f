"""A sync plan and its result, as text and as HTML.

The plan is terraform's: counts first, then each change on its own line (``+`` add, ``~``
update with old -> new, ``-`` delete, ``!`` conflict, ``x`` invalid row), the first ``SHOWN`` of
each kind. Terms come from a file or the service: control characters are shown escaped in text,
everything is escaped in HTML.
"""

from __future__ import annotations

from collections.abc import Iterator
from html import escape
from typing import TYPE_CHECKING, Any

from ..errors import Remedy
from .words import (
    COLOUR,
    SYMBOL,
    clean,
    count,
    entries,
    named_ids,
    outcome_box,
    outcome_item,
)

if TYPE_CHECKING:
    from ..models import (
        AddBatch,
        AddResult,
        ChangePreview,
        Entry,
        ExportResult,
        NoChange,
        SyncPlan,
        SyncResult,
    )

_DELETE_MISSING = "ask the sync to delete missing entries"
"""How to ask for the deletions a plan leaves out, when no front end words it."""

__all__ = [
    "add_batch_html",
    "add_batch_text",
    "add_html",
    "add_text",
    "export_html",
    "export_text",
    "no_change_html",
    "no_change_text",
    "plan_html",
    "plan_text",
    "preview_html",
    "preview_text",
    "sync_result_html",
    "sync_result_text",
]

SHOWN = 50
_COLOUR = {
    "+": "#1a7f37",
    "~": "#9a6700",
    "-": "#cf222e",
    "!": "#8250df",
    "x": "#cf222e",
    "?": "#9a6700",
}


def _n(number: int, one: str, many: str | None = None) -> str:
    return count(number, one, many or one + "s")


def _pair(entry: Entry) -> str:
    return f"{entry.from_lang}\u2192{entry.to_lang}"


def _terms(entry: Entry) -> str:
    """``en\u2192de  Friday \u2192 Freitag``: a plan's line for an entry added or deleted."""
    return f"{_pair(entry)}  {entry.from_text} \u2192 {entry.to_text}"


def _headline(plan: SyncPlan) -> str:
    counts = [
        _n(len(plan.adds), "add"),
        _n(len(plan.updates), "update"),
        _n(len(plan.deletes), "delete"),
        f"{plan.unchanged:,} unchanged",
        _n(len(plan.conflicts), "conflict"),
        _n(len(plan.invalid), "invalid row"),
    ]
    where = f" at {plan.host}" if plan.host else ""
    profile = f" (profile {plan.profile})" if plan.profile else ""
    sheet = f", sheet {clean(repr(plan.sheet))}" if plan.sheet else ""
    return f"Sync plan for {clean(plan.path)}{sheet}{where}{profile}: {', '.join(counts)}"


def _lines(plan: SyncPlan) -> Iterator[tuple[str, str, str]]:
    """(mark, where, what) per shown change, kinds in order, ``SHOWN`` of each at most."""
    rows = plan.add_rows or [0] * len(plan.adds)
    for entry, row in list(zip(plan.adds, rows, strict=False))[:SHOWN]:
        yield "+", f"row {row}", _terms(entry)
    yield from _more("+", len(plan.adds), "add")
    for update in plan.updates[:SHOWN]:
        yield (
            "~",
            f"row {update.row}, id {update.id}",
            f"{_pair(update.new)}  {update.new.from_text}: {update.old.to_text} \u2192 "
            f"{update.new.to_text}",
        )
    yield from _more("~", len(plan.updates), "update")
    for entry in plan.deletes[:SHOWN]:
        yield "-", f"id {entry.id}", _terms(entry)
    yield from _more("-", len(plan.deletes), "delete")
    for conflict in plan.conflicts[:SHOWN]:
        first = conflict.entries[0]
        ids = ", ".join(e.id for e in conflict.entries)
        targets = " | ".join(e.to_text for e in conflict.entries)
        yield (
            "!",
            f"row {conflict.row}",
            f"{_pair(first)}  {first.from_text}: {len(conflict.entries)} entries (ids {ids}: "
            f"{targets}) share this source term; left alone",
        )
    yield from _more("!", len(plan.conflicts), "conflict")
    for bad in plan.invalid[:SHOWN]:
        yield "x", f"row {bad.row}", bad.reason
    yield from _more("x", len(plan.invalid), "invalid row")
    for warning in plan.warnings[:SHOWN]:
        yield "?", "", warning
    yield from _more("?", len(plan.warnings), "warning")


def _more(mark: str, total: int, what: str) -> Iterator[tuple[str, str, str]]:
    if total > SHOWN:
        yield mark, "", f"\u2026 and {_n(total - SHOWN, what)} more"


def _footer(plan: SyncPlan) -> list[str]:
    notes = []
    left = len(plan.missing) - len(plan.deletes)
    if left > 0:
        pairs = ", ".join(f"{a}\u2192{b}" for a, b in plan.pairs)
        how = (plan.names or {}).get(Remedy.DELETE_MISSING) or _DELETE_MISSING
        notes.append(
            f"{_n(left, 'entry', 'entries')} of {pairs} not in the file "
            f"{'is' if left == 1 else 'are'} kept; to delete {'it' if left == 1 else 'them'} "
            f"too, {how}"
        )
    if plan.other_sheets:
        how = (plan.names or {}).get(Remedy.SHEET) or "name it as the sheet to read"
        others = ", ".join(repr(name) for name in plan.other_sheets)
        notes.append(f"read sheet {plan.sheet!r}, not {others}; to read another, {how}")
    if plan.invalid:
        notes.append(
            "invalid rows are never sent; applying is refused while any exist unless they "
            "are skipped"
        )
    notes.append("nothing to change" if plan.empty else "this is a plan: nothing was sent")
    return notes


def plan_text(plan: SyncPlan) -> str:
    """The headline, one line per change, then what the plan leaves alone."""
    lines = [_headline(plan)]
    for mark, where, what in _lines(plan):
        lines.append(f"  {mark} {where + ': ' if where else ''}{clean(what)}")
    lines.extend(f"  ({note})" for note in _footer(plan))
    return "\n".join(lines)


def plan_html(plan: SyncPlan) -> str:
    """The same as a coloured table, every value escaped."""
    rows = "".join(
        f'<tr style="color:{_COLOUR[mark]}"><td style="padding:0 0.6em 0 0">{escape(mark)}</td>'
        f'<td style="padding:0 0.8em 0 0;white-space:nowrap">{escape(where)}</td>'
        f"<td>{escape(clean(what))}</td></tr>"
        for mark, where, what in _lines(plan)
    )
    table = f'<table class="dict-magics-table">{rows}</table>' if rows else ""
    notes = "".join(f"<div><i>{escape(n)}</i></div>" for n in _footer(plan))
    return (
        f'<div class="dict-magics-sync-plan"><b>{escape(_headline(plan))}</b>{table}{notes}</div>'
    )


def _kind(result: SyncResult) -> str:
    if result.failed:
        return "failure"
    if result.unknown or (result.verified is not True and result.plan.changes):
        return "unknown" if result.verified is None else "failure"
    return "success"


def _summary(result: SyncResult) -> str:
    plan = result.plan
    if not result.applied:
        return f"not applied: nothing was sent to {plan.host}"
    if not plan.changes:
        return f"nothing to change at {plan.host}: the dictionary already matches {plan.path}"
    done = [
        f"{_ok(result.adds)}/{len(result.adds)} added",
        f"{_ok(result.updates)}/{len(result.updates)} updated",
        f"{_ok(result.deletes)}/{len(result.deletes)} deleted",
    ]
    text = f"sync of {clean(plan.path)} applied at {plan.host}: {', '.join(done)}"
    if result.verified is True:
        text += "; a listing afterwards shows every change"
    elif result.verified is False:
        text += f"; a listing afterwards disagrees ({_n(len(result.mismatches), 'difference')})"
    else:
        text += "; no listing afterwards could verify it"
    return text


def _ok(results: Any) -> int:
    return sum(1 for r in results if r.ok)


def _problems(result: SyncResult) -> Iterator[tuple[str, str]]:
    for r in result.results:
        if r.ok:
            continue
        entry = getattr(r, "entry", None) or getattr(r, "new", None)
        what = entry.describe() if entry is not None else f"entry {getattr(r, 'entry_id', '?')}"
        yield r.outcome, f"{clean(what)} \u2014 {clean(r.reason or r.outcome)}"
    for mismatch in result.mismatches[:SHOWN]:
        yield "failure", clean(mismatch)


def sync_result_text(result: SyncResult) -> str:
    """A summary line, what did not succeed (with reasons), and the snapshot that undoes it."""
    kind = _kind(result)
    lines = [f"{SYMBOL[kind]} {_summary(result)}"]
    lines.extend(f"  {SYMBOL[k]} {what}" for k, what in _problems(result))
    if result.snapshot:
        lines.append(f"  snapshot (restore it to undo): {clean(result.snapshot)}")
    return "\n".join(lines)


def sync_result_html(result: SyncResult) -> str:
    items = "".join(outcome_item(k, what) for k, what in _problems(result))
    if result.snapshot:
        items += f"<li>snapshot (restore it to undo): <code>{escape(result.snapshot)}</code></li>"
    return outcome_box("sync", _kind(result), _summary(result), items)


def export_text(result: ExportResult) -> str:
    return (
        f"\u2713 exported {_n(result.count, 'entry', 'entries')} from {result.host} to "
        f"{clean(str(result.path))} ({result.format})"
    )


def export_html(result: ExportResult) -> str:
    return f'<div class="dict-magics-export">{escape(export_text(result))}</div>'


def add_text(result: AddResult) -> str:
    """One line: what was added (with the new id when a listing found it), or why not."""
    kind = result.outcome
    what = clean(result.entry.describe())
    if kind == "success":
        where = f"entry {clean(result.entry.id)}" if result.entry.id else "an entry (id not found)"
        verified = " (verified by a listing)" if result.verified else ""
        return f"{SYMBOL[kind]} added {where}: {what}{verified}"
    reason = f" \u2014 {clean(result.reason)}" if result.reason else ""
    if kind == "unknown":
        return f"{SYMBOL[kind]} outcome unknown: {what} may or may not have been added{reason}"
    return f"{SYMBOL[kind]} not added: {what}{reason}"


def add_html(result: AddResult) -> str:
    kind = result.outcome
    return (
        f'<div class="dict-magics-result dict-magics-{kind}" '
        f'style="color:{COLOUR[kind]}">{escape(add_text(result))}</div>'
    )


def _batch_summary(batch: AddBatch) -> str:
    """``added 3 entries (1 request)``, or what did not go and why the batch stopped."""
    added, total = len(batch.added), len(batch.results)
    whole = f"added {entries(total)}"
    parts = [f"added {added:,} of {entries(total)}" if added != total else whole]
    if batch.failed:
        parts.append(f"{len(batch.failed):,} not added")
    if batch.unknown:
        parts.append(f"{len(batch.unknown):,} may or may not have been added")
    line = ", ".join(parts) + f" ({count(batch.requests, 'request', 'requests')})"
    if batch.interrupted:
        line += f"; interrupted{': ' + clean(batch.why) if batch.why else ''}"
    return line


def _batch_kind(batch: AddBatch) -> str:
    if batch.ok:
        return "success"
    return "unknown" if batch.unknown and not batch.failed else "failure"


def add_batch_text(batch: AddBatch) -> str:
    """A summary line, the first entries added (with their ids when a listing named them),
    then every addition that failed or may not have happened, a few of each."""
    kind = _batch_kind(batch)
    lines = [f"{SYMBOL[kind]} {_batch_summary(batch)}"]
    for results in ([r for r in batch.results if r.ok], batch.failed, batch.unknown):
        lines.extend(f"  {add_text(r)}" for r in results[:SHOWN])
        if len(results) > SHOWN:
            lines.append(f"    \u2026 and {len(results) - SHOWN:,} more")
    return "\n".join(lines)


def add_batch_html(batch: AddBatch) -> str:
    """The same as HTML: each line marked and coloured by its outcome, every term escaped."""
    items = []
    for results in ([r for r in batch.results if r.ok], batch.failed, batch.unknown):
        items.extend(outcome_item(r.outcome, add_text(r)[2:]) for r in results[:SHOWN])
        if len(results) > SHOWN:
            items.append(f"<li>&hellip; and {len(results) - SHOWN:,} more</li>")
    return outcome_box("add-batch", _batch_kind(batch), _batch_summary(batch), "".join(items))


def preview_text(preview: ChangePreview) -> str:
    """A dry run of an add or an update: what would be sent, and to where."""
    new = clean(preview.new.describe())
    if preview.operation == "update" and preview.old is not None:
        line = (
            f"dry run: would update entry {clean(preview.new.id)} at {preview.host}: "
            f"{clean(preview.old.describe())} \u21d2 {new}"
        )
    else:
        line = f"dry run: would add {new} at {preview.host}"
    twins = [e.id for e in preview.alongside if e.to_text == preview.new.to_text]
    others = [e.id for e in preview.alongside if e.to_text != preview.new.to_text]
    if others:
        has = "has" if len(others) == 1 else "have"
        line += f" ({named_ids(others)} already {has} this source term: it would make a conflict)"
    if twins:
        has = "holds" if len(twins) == 1 else "hold"
        line += f" ({named_ids(twins)} already {has} these terms: it would make a duplicate)"
    return line + "; nothing was sent"


def preview_html(preview: ChangePreview) -> str:
    return f'<div class="dict-magics-dry-run">{escape(preview_text(preview))}</div>'


def no_change_text(result: NoChange) -> str:
    """An add or an update that had nothing to do: which entry already holds the terms."""
    what = clean(result.entry.describe())
    many = len(result.existing) != 1
    if result.operation == "add":
        has = "hold" if many else "holds"
        return (
            f"{SYMBOL['absent']} not added: {named_ids(result.ids)} at {result.host} already "
            f"{has} {what} (another copy would be a duplicate); nothing was sent"
        )
    return (
        f"{SYMBOL['absent']} no change: {named_ids(result.ids)} at {result.host} already "
        f"{'read' if many else 'reads'} {what}; nothing was sent"
    )


def no_change_html(result: NoChange) -> str:
    colour = COLOUR["absent"]
    return (
        f'<div class="dict-magics-result dict-magics-unchanged" style="color:{colour}">'
        f"{escape(no_change_text(result))}</div>"
    )
