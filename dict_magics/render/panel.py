"""The curation panel's words and HTML: rows, counts, confirmations, results, status.

Reads models (and the plain ``SnapshotInfo`` record) only. Terms come from the service, so
every value is escaped in HTML and cleaned of control characters in plain text (a check box's
label is plain text).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING

from ..models import BatchResult, DeleteResult, Entry, PurgePlan, RestoreResult
from ..models.display import view
from . import words
from .purge import purge_html
from .restore import restore_html
from .results import batch_html, result_html
from .words import clean

if TYPE_CHECKING:
    from ..models import LintReport, SnapshotInfo
    from ..models.terms import Problem

__all__ = [
    "CELLS_GRID",
    "CONFIRM_SHOWN",
    "DELETED_SHOWN",
    "ID_WIDTH",
    "LABEL_CHARS",
    "LANG_WIDTH",
    "TABLE_CSS",
    "any_result_html",
    "confirm_add_html",
    "confirm_delete_html",
    "confirm_ids_html",
    "confirm_purge_html",
    "confirm_restore_html",
    "confirm_sync_html",
    "confirm_update_html",
    "count_html",
    "edit_title_html",
    "header_html",
    "history_html",
    "id_label",
    "page_html",
    "pair_label",
    "problem_groups",
    "problem_tooltip",
    "problems_text",
    "row_cells_html",
    "row_label",
    "running_html",
    "snapshot_label",
    "sort_label",
    "status_html",
]

CONFIRM_SHOWN = 200
"""Terms a confirmation lists before "and N more" (the count is always stated)."""
DELETED_SHOWN = 20
"""Deleted entries a batch result names before "and N more"."""
LABEL_CHARS = 160
"""A row's label is clipped here: one long term must not push the check boxes apart."""
ID_CHARS = 24
"""An id is clipped here in its column (the whole id is in confirmations)."""
ID_WIDTH = "9em"
"""The id column: the check box and its label; the header's id button has the same width."""
LANG_WIDTH = "7.5em"
"""The languages column (``zh-CN→zh-TW`` fits)."""
CELLS_GRID = f"display:grid;grid-template-columns:{LANG_WIDTH} 1fr 1fr;column-gap:0.6em"
"""The columns after the id, shared by each row's cells and the header."""
TABLE_CSS = (
    f"<style>.dict-magics-row{{{CELLS_GRID}}}"
    ".dict-magics-row>span{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}"
    ".dict-magics-langs{color:#57606a}</style>"
)
"""The table's style, sent once (in the panel's header) rather than with every row."""
_STATUS_COLOUR = {
    "info": "#57606a",
    "warning": "#9a6700",
    "error": "#cf222e",
    "busy": "#0969da",
}
_BOX = "max-height:12em;overflow:auto;margin:0.2em 0"


def header_html(profile: str, host: str, masked_key: str) -> str:
    """Whose dictionary this is: profile, host and the masked access key."""
    return (
        '<div class="dict-magics-header"><b>Dictionary entries</b> &mdash; '
        f"profile <code>{escape(profile)}</code>, host <code>{escape(host)}</code>, "
        f"access key <code>{escape(masked_key)}</code></div>"
    )


def row_label(entry: Entry) -> str:
    """One entry as a person recognises it, in plain text: terms, languages, then the id."""
    text = clean(f"{entry.describe()} \u00b7 id {entry.id}")
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "\u2026"


def id_label(entry_id: str) -> str:
    """An id in its column: plain text, clipped."""
    text = clean(entry_id)
    return text if len(text) <= ID_CHARS else text[: ID_CHARS - 1] + "\u2026"


def _lang_attr(code: str) -> str:
    """A ``lang`` attribute, so the browser picks the right glyphs (Japanese or Chinese kanji)."""
    return f' lang="{escape(code)}"' if code and code.replace("-", "").isalnum() else ""


def row_cells_html(entry: Entry) -> str:
    """An entry's languages, source and target: one row of the table after the id. Each term
    is escaped, clipped by the browser with an ellipsis, and whole in its tooltip."""
    langs = escape(f"{clean(entry.from_lang)}\u2192{clean(entry.to_lang)}")
    cells = [f'<span class="dict-magics-langs">{langs}</span>']
    for kind, code, text in (
        ("source", entry.from_lang, entry.from_text),
        ("target", entry.to_lang, entry.to_text),
    ):
        shown = escape(clean(text))
        cells.append(
            f'<span class="dict-magics-{kind}"{_lang_attr(code)} title="{shown}">{shown}</span>'
        )
    return f'<div class="dict-magics-row">{"".join(cells)}</div>'


def sort_label(column: str, sorted_by: str | None, descending: bool) -> str:
    """A column's header button: its name, with an arrow when the table is sorted by it."""
    if column != sorted_by:
        return column
    arrow = "\u25bc" if descending else "\u25b2"
    return f"{column} {arrow}"


def pair_label(from_lang: str, to_lang: str, count: int) -> str:
    """A language pair in the filter: ``ja→en (31)``."""
    return f"{clean(from_lang)}\u2192{clean(to_lang)} ({count:,})"


def count_html(total: int, matches: int, first: int, last: int, selected: int, host: str) -> str:
    """How many entries, how many match, which rows are shown (``first``..``last``, counted
    from 1), and how many are selected."""
    if total == 0:
        text = f"no entries at {escape(host)}"
    elif matches == total:
        text = f"{words.entries(total)} at {escape(host)}"
    else:
        text = f"{words.count(matches, 'match', 'matches')} of {words.entries(total)}"
    if matches and (first > 1 or last < matches):
        text += f" &mdash; rows {first:,}\u2013{last:,}"
    text += f" &middot; <b>{selected:,} selected</b>"
    return f'<div class="dict-magics-count">{text}</div>'


def page_html(page: int, pages: int) -> str:
    """Which page of how many (``page`` counted from 0)."""
    return f'<div class="dict-magics-page">page {page + 1:,} of {pages:,}</div>'


def _terms_box(entries: Sequence[Entry]) -> str:
    items = "".join(
        f"<li>{escape(clean(e.describe()))} <span style='color:#57606a'>id "
        f"{escape(clean(e.id))}</span></li>"
        for e in entries[:CONFIRM_SHOWN]
    )
    if len(entries) > CONFIRM_SHOWN:
        items += f"<li>&hellip; and {len(entries) - CONFIRM_SHOWN:,} more</li>"
    return f'<ul class="dict-magics-going" style="{_BOX}">{items}</ul>'


def confirm_delete_html(entries: Sequence[Entry], profile: str, host: str, snapshots: bool) -> str:
    """The confirmation of a deletion of listed entries: how many, where, and their terms."""
    keep = (
        "A snapshot of them is saved first: <b>Undo</b> puts them back."
        if snapshots
        else "Snapshots are off: this cannot be undone."
    )
    return (
        f'<div class="dict-magics-confirm"><b>Delete {words.entries(len(entries))}</b> '
        f"of profile <code>{escape(profile)}</code> on <b>{escape(host)}</b>? {keep}"
        f"{_terms_box(entries)}</div>"
    )


def confirm_ids_html(ids: Sequence[str], profile: str, host: str) -> str:
    """The confirmation of typed ids, where the service has no listing (so no terms)."""
    listed = ", ".join(f"<code>{escape(repr(i))}</code>" for i in ids[:CONFIRM_SHOWN])
    if len(ids) > CONFIRM_SHOWN:
        listed += f" &hellip; and {len(ids) - CONFIRM_SHOWN:,} more"
    return (
        f'<div class="dict-magics-confirm"><b>Delete {words.entries(len(ids))}</b> '
        f"of profile <code>{escape(profile)}</code> on <b>{escape(host)}</b>? This service "
        "offers no listing, so their terms are unknown and no snapshot can be kept: this "
        f'cannot be undone.<div style="{_BOX}">{listed}</div></div>'
    )


def confirm_purge_html(plan: PurgePlan, names: Mapping[str, str] | None = None) -> str:
    """The purge confirmation: the plan (``names``: the panel's words for what it names), and
    what to type to enable Confirm."""
    ask = (
        f" To enable Confirm, type <code>{escape(plan.word)}</code> (or "
        f"<code>{escape(plan.host)}</code>) below."
    )
    return purge_html(plan, names, after=ask)


def edit_title_html(entry: Entry) -> str:
    """The edit form's title: which entry, and that its languages stay."""
    return (
        f"<b>Edit entry <code>{escape(clean(entry.id))}</code></b> "
        f"({escape(clean(entry.from_lang))}\u2192{escape(clean(entry.to_lang))}; "
        "the languages stay)"
    )


def problem_groups(report: LintReport) -> list[tuple[str, tuple[str, ...]]]:
    """Each kind found, with the ids "Select" ticks: for duplicates every copy but the lowest
    id of each group (what can go with nothing lost), else every entry the kind names."""
    groups = []
    for kind in report.by_kind():
        ids = report.duplicate_ids if kind == "duplicate" else report.ids(kind)
        if ids:
            groups.append((kind, tuple(ids)))
    return groups


def problem_tooltip(kind: str) -> str:
    """What a "Select" button of the Problems view ticks."""
    if kind == "duplicate":
        return "Tick every duplicate but the lowest id of each group"
    return f"Tick every entry with a {kind} finding"


def problems_text(problems: Sequence[Problem]) -> str:
    """Why nothing was sent: each problem the vendor's rules find (plain text; escaped where
    shown)."""
    return "Not sent: " + "; ".join(clean(p.message) for p in problems) + "."


def _term(code: str, text: str) -> str:
    return f"<span{_lang_attr(code)}>{escape(clean(text))}</span>"


def confirm_update_html(old: Entry, new: Entry, profile: str, host: str, snapshots: bool) -> str:
    """The confirmation of an edit: each changed term as old → new, and how to undo it."""
    keep = (
        "The entry as it is now is saved in a snapshot first: <b>Undo</b> puts it back."
        if snapshots
        else "Snapshots are off: this cannot be undone."
    )
    rows = ""
    for name, code, before, after in (
        ("source", old.from_lang, old.from_text, new.from_text),
        ("target", old.to_lang, old.to_text, new.to_text),
    ):
        if before != after:
            rows += (
                f'<tr><th style="text-align:left;padding-right:0.8em">{name}</th>'
                f'<td class="dict-magics-old"><del>{_term(code, before)}</del></td>'
                f"<td>&nbsp;\u2192&nbsp;</td>"
                f'<td class="dict-magics-new"><b>{_term(code, after)}</b></td></tr>'
            )
    return (
        f'<div class="dict-magics-confirm"><b>Change entry <code>'
        f"{escape(clean(old.id))}</code></b> of profile <code>{escape(profile)}</code> on "
        f"<b>{escape(host)}</b>? {keep}<table>{rows}</table></div>"
    )


def confirm_add_html(new: Entry, profile: str, host: str, same: Sequence[Entry]) -> str:
    """The confirmation of an add: the four terms, and any entry that already has them."""
    terms = (
        f"{_term(new.from_lang, new.from_text)} \u2192 {_term(new.to_lang, new.to_text)} "
        f"({escape(clean(new.from_lang))}\u2192{escape(clean(new.to_lang))})"
    )
    twin = ""
    if same:
        ids = ", ".join(escape(clean(e.id)) for e in same[:10])
        twin = (
            f'<div style="color:#9a6700">An entry with these terms already exists (id {ids}): '
            "adding makes a duplicate.</div>"
        )
    return (
        f'<div class="dict-magics-confirm"><b>Add</b> {terms} to profile '
        f"<code>{escape(profile)}</code> on <b>{escape(host)}</b>?{twin}</div>"
    )


def confirm_sync_html(plan_html: str, profile: str, host: str, snapshots: bool) -> str:
    """The confirmation of a sync: its plan (already rendered), and how to undo it."""
    keep = (
        "A snapshot of every entry it changes or deletes (and the terms it adds) is saved "
        "first: <b>Undo</b> puts the dictionary back."
        if snapshots
        else "Snapshots are off: this cannot be undone."
    )
    return (
        f'<div class="dict-magics-confirm"><b>Apply this sync</b> to profile '
        f"<code>{escape(profile)}</code> on <b>{escape(host)}</b>? {keep} The dictionary is "
        f"listed again first and the plan made afresh.{plan_html}</div>"
    )


def snapshot_label(info: SnapshotInfo) -> str:
    """A snapshot in the Restore choice: when, what it came from, how many entries."""
    when = info.taken_at.astimezone().strftime("%Y-%m-%d %H:%M:%S")
    return f"{when} \u00b7 {info.operation} \u00b7 {words.entries(info.count)}"


def confirm_restore_html(info: SnapshotInfo, host: str) -> str:
    """The restore confirmation: which snapshot, and what a restore of it does (a deletion's:
    only missing entries are added; an update's or a sync's: the dictionary put back)."""
    if info.operation in ("update", "sync"):
        does = (
            "Entries it changed get their old terms back under their ids, entries it deleted "
            "are added again, and entries it added are removed (kept in a snapshot first)."
        )
    else:
        does = (
            "Only entries whose terms are missing are added; entries already there are left alone."
        )
    return (
        f'<div class="dict-magics-confirm"><b>Restore</b> the snapshot of '
        f"{escape(snapshot_label(info))} to <b>{escape(host)}</b>? {does}"
        f'<div style="color:#57606a">{escape(str(info.path))}</div></div>'
    )


def running_html(what: str) -> str:
    """What is running, with what Cancel does."""
    return (
        f'<div class="dict-magics-running"><b>{escape(what)}</b> &mdash; Cancel stops what has '
        "not been sent yet; requests already sent are waited for.</div>"
    )


def status_html(message: str, kind: str) -> str:
    """One line of status, coloured by kind (``info``, ``warning``, ``error``, ``busy``)."""
    if not message:
        return ""
    return (
        f'<div class="dict-magics-status dict-magics-status-{kind}" '
        f'style="color:{_STATUS_COLOUR[kind]}">{escape(message)}</div>'
    )


def any_result_html(result: object) -> str:
    """Any result, rendered as the magics render it (its registered view); a batch also names
    the terms of the entries it deleted (the magics list only what failed)."""
    if isinstance(result, BatchResult):
        return batch_html(result) + _deleted_html(result)
    if isinstance(result, RestoreResult):
        return restore_html(result)
    if isinstance(result, DeleteResult):
        return result_html(result)
    shown = view(result, "html")
    return shown or f"<pre>{escape(clean(str(result)))}</pre>"


def _deleted_html(batch: BatchResult) -> str:
    gone = list({r.entry_id: r for r in batch.results if r.ok}.values())
    items = "".join(f"<li>\u2713 {escape(clean(r.target))}</li>" for r in gone[:DELETED_SHOWN])
    if len(gone) > DELETED_SHOWN:
        items += f"<li>&hellip; and {len(gone) - DELETED_SHOWN:,} more</li>"
    if not items:
        return ""
    return f'<ul class="dict-magics-deleted" style="color:#1a7f37;{_BOX}">{items}</ul>'


def history_html(items: Sequence[str]) -> str:
    """The recent results (already rendered, newest first) in a collapsed list."""
    if not items:
        return ""
    return (
        f'<details class="dict-magics-history"><summary>Recent results '
        f"({len(items)}, newest first)</summary>"
        f'<ol style="margin:0.2em 0">{"".join(items)}</ol></details>'
    )
