"""The panel's HTML and labels; every value from the service or a file is escaped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..models.purge import purge_text
from ..models.text import GREY, count, entries, escape
from ..models.text import shown as clean

if TYPE_CHECKING:
    from ..models import Entry, Impact, PurgePlan, SnapshotInfo

CONFIRM_SHOWN = 200  # terms a confirmation lists before "and N more" (it states the count)
ID_CHARS = 24  # an id is clipped here in its column (confirmations show it whole)
ID_WIDTH = "9em"
LANG_WIDTH = "7.5em"  # zh-CN→zh-TW fits
TABLE_CSS = (
    f"<style>.dict-magics-row{{display:grid;grid-template-columns:{LANG_WIDTH} 1fr 1fr;"
    "column-gap:0.6em}.dict-magics-row>span{overflow:hidden;text-overflow:ellipsis;"
    "white-space:nowrap}.dict-magics-langs{color:#57606a}</style>"
)
"""The table's style, sent once rather than with every row."""
COLOURS = {"info": GREY, "warning": "#9a6700", "error": "#cf222e", "busy": "#0969da"}
BOX = "max-height:12em;overflow:auto;margin:0.2em 0"
NO_UNDO = "Snapshots are off: this cannot be undone."


def id_label(entry_id: str) -> str:
    """An id in its column: plain text, clipped."""
    text = clean(entry_id)
    return text if len(text) <= ID_CHARS else text[: ID_CHARS - 1] + "\u2026"


def pair(from_lang: str, to_lang: str) -> str:
    """``ja→en``, in plain text."""
    return f"{clean(from_lang)}\u2192{clean(to_lang)}"


def term(code: str, text: str, css: str = "") -> str:
    """A term, marked with its language so the browser picks the right glyphs (Japanese or
    Chinese kanji); with a ``css`` class, clipped by the browser and whole in its tooltip."""
    lang = f' lang="{escape(code)}"' if code.replace("-", "").isalnum() else ""
    shown = escape(text)
    tip = f' class="dict-magics-{css}" title="{shown}"' if css else ""
    return f"<span{tip}{lang}>{shown}</span>"


def row_cells_html(entry: Entry) -> str:
    """An entry's languages, source and target: its row after the id."""
    langs = escape(pair(entry.from_lang, entry.to_lang))
    source = term(entry.from_lang, entry.from_text, "source")
    target = term(entry.to_lang, entry.to_text, "target")
    langs = f'<span class="dict-magics-langs">{langs}</span>'
    return f'<div class="dict-magics-row">{langs}{source}{target}</div>'


def count_html(total: int, matches: int, first: int, last: int, selected: int, host: str) -> str:
    """How many entries, how many match, which rows show (from 1), how many are selected."""
    if total == 0:
        text = f"no entries at {escape(host)}"
    elif matches == total:
        text = f"{entries(total)} at {escape(host)}"
    else:
        text = f"{count(matches, 'match', 'matches')} of {entries(total)}"
    if matches and (first > 1 or last < matches):
        text += f" &mdash; rows {first:,}\u2013{last:,}"
    return f'<div class="dict-magics-count">{text} &middot; <b>{selected:,} selected</b></div>'


def confirm(asked: str, where: str, host: str, rest: str) -> str:
    """A confirmation: ``asked`` (HTML) ``where`` (``of profile P``) on HOST? ``rest``."""
    return (
        f'<div class="dict-magics-confirm">{asked} {where} on <b>{escape(host)}</b>? {rest}</div>'
    )


def confirm_delete_html(
    going: Sequence[Entry], ids: Sequence[str], profile: str, host: str, snapshots: bool
) -> str:
    """A deletion: how many, where, and their terms (``going``); or, where the service has no
    listing, the typed ``ids`` (no terms, no snapshot)."""
    asked = f"<b>Delete {entries(len(ids))}</b>"
    where = f"of profile <code>{escape(profile)}</code>"
    more = f"&hellip; and {len(ids) - CONFIRM_SHOWN:,} more" if len(ids) > CONFIRM_SHOWN else ""
    if not going:
        listed = ", ".join(f"<code>{escape(repr(i))}</code>" for i in ids[:CONFIRM_SHOWN])
        said = (
            "This service offers no listing, so their terms are unknown and no snapshot can be "
            f'kept: this cannot be undone.<div style="{BOX}">{listed} {more}</div>'
        )
        return confirm(asked, where, host, said)
    items = "".join(
        f"<li>{escape(e.describe())} <span style='color:{GREY}'>id {escape(e.id)}</span></li>"
        for e in going[:CONFIRM_SHOWN]
    )
    keep = "A snapshot of them is saved first: <b>Undo</b> puts them back."
    items += f"<li>{more}</li>" if more else ""
    going_html = f'<ul class="dict-magics-going" style="{BOX}">{items}</ul>'
    return confirm(asked, where, host, (keep if snapshots else NO_UNDO) + going_html)


def confirm_purge_html(plan: PurgePlan, names: Mapping[str, str]) -> str:
    """The purge plan as every front end words it (``names``: the panel's words for what puts
    the entries back), and what to type to enable Confirm."""
    word, host = escape(plan.word), escape(plan.host)
    return (
        f'<div class="dict-magics-confirm">{escape(purge_text(plan, names))} To enable Confirm, '
        f"type <code>{word}</code> (or <code>{host}</code>) below.</div>"
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
    asked = f"<b>Change entry <code>{escape(old.id)}</code></b>"
    where = f"of profile <code>{escape(profile)}</code>"
    return confirm(asked, where, host, f"{keep if snapshots else NO_UNDO}<table>{rows}</table>")


def confirm_add_html(new: Entry, profile: str, host: str, same: Sequence[Entry]) -> str:
    """An add: the four terms, and any entry that already has them."""
    twin = ""
    if same:
        ids = ", ".join(escape(e.id) for e in same[:10])
        twin = (
            f'<div style="color:#9a6700">An entry with these terms already exists (id {ids}): '
            "adding makes a duplicate.</div>"
        )
    terms = f"{term(new.from_lang, new.from_text)} \u2192 {term(new.to_lang, new.to_text)}"
    langs = escape(pair(new.from_lang, new.to_lang))
    return confirm(
        f"<b>Add</b> {terms} ({langs})", f"to profile <code>{escape(profile)}</code>", host, twin
    )


def confirm_sync_html(plan_html: str, profile: str, host: str, snapshots: bool) -> str:
    """A sync: its plan (already rendered), and how to undo it."""
    keep = (
        "A snapshot of every entry it changes or deletes (and the terms it adds) is saved "
        "first: <b>Undo</b> puts the dictionary back."
    )
    again = " The dictionary is listed again first and the plan made afresh."
    to = f"to profile <code>{escape(profile)}</code>"
    return confirm(
        "<b>Apply this sync</b>", to, host, (keep if snapshots else NO_UNDO) + again + plan_html
    )


def impact_html(impact: Impact) -> str:
    """A change's impact on the corpus: "changes N of M sample lines", the lines a click away."""
    lines = count(impact.lines, "sample line")
    return (
        f'<details class="dict-magics-panel-impact"><summary>changes {len(impact.changed):,} of '
        f"{lines}</summary>{impact._repr_html_()}</details>"
    )


def snapshot_label(info: SnapshotInfo) -> str:
    """A snapshot in the Restore choice: when, what it came from, how many entries."""
    when = info.taken_at.astimezone().strftime("%Y-%m-%d %H:%M:%S")
    what = "undo (restoring it undoes that undo)" if info.undoes else info.operation
    return f"{when} \u00b7 {what} \u00b7 {entries(info.count)}"


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
    path = f'<div style="color:{GREY}">{escape(str(info.path))}</div>'
    return confirm(
        "<b>Restore</b>", f"the snapshot of {escape(snapshot_label(info))}", host, does + path
    )


def status_html(message: str, kind: str) -> str:
    """One line of status, coloured by kind (``info``, ``warning``, ``error``, ``busy``)."""
    if not message:
        return ""
    css = f"dict-magics-status dict-magics-status-{kind}"
    return f'<div class="{css}" style="color:{COLOURS[kind]}">{escape(message)}</div>'
