"""The panel's HTML and labels: header, table rows, counts, confirmations, status, results.

Terms come from the service or a file, so every value is escaped in HTML and cleaned of
control characters in plain text (a check box's label is plain text).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING

from ..errors import Remedy
from ..models.text import shown as clean

if TYPE_CHECKING:
    from ..models import Entry, PurgePlan, SnapshotInfo

CONFIRM_SHOWN = 200
"""Terms a confirmation lists before "and N more" (the count is always stated)."""
ID_CHARS = 24
"""An id is clipped here in its column (the whole id is in confirmations)."""
ID_WIDTH = "9em"
"""The id column (the check box and its label) and the header's id button."""
LANG_WIDTH = "7.5em"
"""The languages column (``zh-CN→zh-TW`` fits)."""
TABLE_CSS = (
    "<style>.dict-magics-row{display:grid;"
    f"grid-template-columns:{LANG_WIDTH} 1fr 1fr;column-gap:0.6em}}"
    ".dict-magics-row>span{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}"
    ".dict-magics-langs{color:#57606a}</style>"
)
"""The table's style, sent once (in the header) rather than with every row."""
GREY = "#57606a"
STATUS_COLOURS = {"info": GREY, "warning": "#9a6700", "error": "#cf222e", "busy": "#0969da"}
BOX = "max-height:12em;overflow:auto;margin:0.2em 0"
NO_UNDO = "Snapshots are off: this cannot be undone."


def entries(number: int) -> str:
    """``1 entry``, ``1,204 entries``."""
    return f"{number:,} {'entry' if number == 1 else 'entries'}"


def header_html(profile: str, host: str, masked_key: str) -> str:
    return (
        '<div class="dict-magics-header"><b>Dictionary entries</b> &mdash; '
        f"profile <code>{escape(profile)}</code>, host <code>{escape(host)}</code>, "
        f"access key <code>{escape(masked_key)}</code></div>"
    )


def id_label(entry_id: str) -> str:
    """An id in its column: plain text, clipped."""
    text = clean(entry_id)
    return text if len(text) <= ID_CHARS else text[: ID_CHARS - 1] + "\u2026"


def _lang(code: str) -> str:
    """A ``lang`` attribute, so the browser picks the right glyphs (Japanese or Chinese kanji)."""
    return f' lang="{escape(code)}"' if code.replace("-", "").isalnum() else ""


def term(code: str, text: str) -> str:
    return f"<span{_lang(code)}>{escape(clean(text))}</span>"


def pair(from_lang: str, to_lang: str) -> str:
    return escape(f"{clean(from_lang)}\u2192{clean(to_lang)}")


def row_cells_html(entry: Entry) -> str:
    """An entry's languages, source and target: a row after the id. Each term is clipped by
    the browser with an ellipsis, and whole in its tooltip."""
    cells = [f'<span class="dict-magics-langs">{pair(entry.from_lang, entry.to_lang)}</span>']
    for kind, code, text in (
        ("source", entry.from_lang, entry.from_text),
        ("target", entry.to_lang, entry.to_text),
    ):
        shown = escape(clean(text))
        cells.append(
            f'<span class="dict-magics-{kind}"{_lang(code)} title="{shown}">{shown}</span>'
        )
    return f'<div class="dict-magics-row">{"".join(cells)}</div>'


def sort_label(column: str, sorted_by: str | None, descending: bool) -> str:
    """A column's header button: its name, with an arrow when the table is sorted by it."""
    if column != sorted_by:
        return column
    return f"{column} \u25bc" if descending else f"{column} \u25b2"


def count_html(total: int, matches: int, first: int, last: int, selected: int, host: str) -> str:
    """How many entries, how many match, which rows show (from 1), how many are selected."""
    if total == 0:
        text = f"no entries at {escape(host)}"
    elif matches == total:
        text = f"{entries(total)} at {escape(host)}"
    else:
        text = f"{matches:,} match{'' if matches == 1 else 'es'} of {entries(total)}"
    if matches and (first > 1 or last < matches):
        text += f" &mdash; rows {first:,}\u2013{last:,}"
    return f'<div class="dict-magics-count">{text} &middot; <b>{selected:,} selected</b></div>'


def _confirm(asked: str, profile: str, host: str, rest: str) -> str:
    """``asked`` (HTML, ending in "of" or "to") profile P on HOST? ``rest``"""
    return (
        f'<div class="dict-magics-confirm">{asked} profile <code>{escape(profile)}</code> '
        f"on <b>{escape(host)}</b>? {rest}</div>"
    )


def confirm_delete_html(going: Sequence[Entry], profile: str, host: str, snapshots: bool) -> str:
    """A deletion of listed entries: how many, where, and their terms."""
    items = "".join(
        f"<li>{escape(clean(e.describe()))} <span style='color:{GREY}'>id "
        f"{escape(clean(e.id))}</span></li>"
        for e in going[:CONFIRM_SHOWN]
    )
    if len(going) > CONFIRM_SHOWN:
        items += f"<li>&hellip; and {len(going) - CONFIRM_SHOWN:,} more</li>"
    keep = "A snapshot of them is saved first: <b>Undo</b> puts them back."
    return _confirm(
        f"<b>Delete {entries(len(going))}</b> of",
        profile,
        host,
        f'{keep if snapshots else NO_UNDO}<ul class="dict-magics-going" style="{BOX}">{items}</ul>',
    )


def confirm_ids_html(ids: Sequence[str], profile: str, host: str) -> str:
    """Typed ids, where the service has no listing (so no terms, no snapshot)."""
    listed = ", ".join(f"<code>{escape(repr(i))}</code>" for i in ids[:CONFIRM_SHOWN])
    if len(ids) > CONFIRM_SHOWN:
        listed += f" &hellip; and {len(ids) - CONFIRM_SHOWN:,} more"
    return _confirm(
        f"<b>Delete {entries(len(ids))}</b> of",
        profile,
        host,
        "This service offers no listing, so their terms are unknown and no snapshot can be "
        f'kept: this cannot be undone.<div style="{BOX}">{listed}</div>',
    )


def confirm_purge_html(plan: PurgePlan, names: Mapping[str, str]) -> str:
    """The purge: how many go, where the copy is kept (``names``: the panel's words for what
    puts them back), and what to type to enable Confirm."""
    if plan.count is None:
        how_many = "EVERY entry"
    elif plan.count == 0:
        how_many = "every entry (the listing shows none)"
    else:
        how_many = f"all {entries(plan.count)}"
    if plan.snapshot is not None:
        keep = (
            f"A snapshot is kept at <code>{escape(plan.snapshot)}</code> (removed if you "
            f"cancel; {escape(names[Remedy.RESTORE])} puts them back)."
        )
    elif plan.count is None:
        keep = "How many is unknown: the dictionary could not be listed. This cannot be undone."
    elif plan.count == 0:
        keep = "There is nothing to keep in a snapshot."
    else:
        keep = f"No snapshot is kept ({escape(names[Remedy.NO_SNAPSHOT])}): this cannot be undone."
    ask = (
        f" To enable Confirm, type <code>{escape(plan.word)}</code> (or "
        f"<code>{escape(plan.host)}</code>) below."
    )
    return _confirm(f"<b>Delete {how_many}</b> of", plan.profile, plan.host, keep + ask)


def edit_title_html(entry: Entry) -> str:
    return (
        f"<b>Edit entry <code>{escape(clean(entry.id))}</code></b> "
        f"({pair(entry.from_lang, entry.to_lang)}; the languages stay)"
    )


def confirm_update_html(old: Entry, new: Entry, profile: str, host: str, snapshots: bool) -> str:
    """An edit: each changed term as old → new, and how to undo it."""
    rows = ""
    for name, code, before, after in (
        ("source", old.from_lang, old.from_text, new.from_text),
        ("target", old.to_lang, old.to_text, new.to_text),
    ):
        if before != after:
            rows += (
                f'<tr><th style="text-align:left;padding-right:0.8em">{name}</th>'
                f'<td class="dict-magics-old"><del>{term(code, before)}</del></td>'
                f"<td>&nbsp;\u2192&nbsp;</td>"
                f'<td class="dict-magics-new"><b>{term(code, after)}</b></td></tr>'
            )
    keep = "The entry as it is now is saved in a snapshot first: <b>Undo</b> puts it back."
    action = f"<b>Change entry <code>{escape(clean(old.id))}</code></b> of"
    return _confirm(action, profile, host, f"{keep if snapshots else NO_UNDO}<table>{rows}</table>")


def confirm_add_html(new: Entry, profile: str, host: str, same: Sequence[Entry]) -> str:
    """An add: the four terms, and any entry that already has them."""
    twin = ""
    if same:
        ids = ", ".join(escape(clean(e.id)) for e in same[:10])
        twin = (
            f'<div style="color:#9a6700">An entry with these terms already exists (id {ids}): '
            "adding makes a duplicate.</div>"
        )
    terms = (
        f"{term(new.from_lang, new.from_text)} \u2192 {term(new.to_lang, new.to_text)} "
        f"({pair(new.from_lang, new.to_lang)})"
    )
    return _confirm(f"<b>Add</b> {terms} to", profile, host, twin)


def confirm_sync_html(plan_html: str, profile: str, host: str, snapshots: bool) -> str:
    """A sync: its plan (already rendered), and how to undo it."""
    keep = (
        "A snapshot of every entry it changes or deletes (and the terms it adds) is saved "
        "first: <b>Undo</b> puts the dictionary back."
    )
    return _confirm(
        "<b>Apply this sync</b> to",
        profile,
        host,
        f"{keep if snapshots else NO_UNDO} The dictionary is listed again first and the plan "
        f"made afresh.{plan_html}",
    )


def snapshot_label(info: SnapshotInfo) -> str:
    """A snapshot in the Restore choice: when, what it came from, how many entries."""
    when = info.taken_at.astimezone().strftime("%Y-%m-%d %H:%M:%S")
    return f"{when} \u00b7 {info.operation} \u00b7 {entries(info.count)}"


def confirm_restore_html(info: SnapshotInfo, host: str) -> str:
    """Which snapshot, and what a restore of it does (a deletion's: only missing entries are
    added; an update's or a sync's: the dictionary put back)."""
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
        f'<div style="color:{GREY}">{escape(str(info.path))}</div></div>'
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
        f'style="color:{STATUS_COLOURS[kind]}">{escape(message)}</div>'
    )


def result_html(result: object) -> str:
    """A result as the magics show it (it renders itself)."""
    shown = getattr(result, "_repr_html_", lambda: None)()
    return shown or f"<pre>{escape(clean(str(result)))}</pre>"


def history_html(items: Sequence[str]) -> str:
    """The recent results (already rendered, newest first), collapsed."""
    if not items:
        return ""
    return (
        f'<details class="dict-magics-history"><summary>Recent results '
        f"({len(items)}, newest first)</summary>"
        f'<ol style="margin:0.2em 0">{"".join(items)}</ol></details>'
    )
