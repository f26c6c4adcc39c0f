"""The curation panel's words and HTML: rows, counts, confirmations, results, status.

Reads models (and the plain ``SnapshotInfo`` record) only. Terms come from the service, so
every value is escaped in HTML and cleaned of control characters in plain text (a check box's
label is plain text).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from ..models import BatchResult, DeleteResult, Entry, RestoreResult
from . import words
from .restore import restore_html
from .results import batch_html, result_html
from .words import clean

if TYPE_CHECKING:
    from ..models import SnapshotInfo

__all__ = [
    "CONFIRM_SHOWN",
    "DELETED_SHOWN",
    "LABEL_CHARS",
    "any_result_html",
    "confirm_delete_html",
    "confirm_ids_html",
    "confirm_purge_html",
    "confirm_restore_html",
    "count_html",
    "header_html",
    "history_html",
    "pair_label",
    "row_label",
    "running_html",
    "snapshot_label",
    "status_html",
]

CONFIRM_SHOWN = 200
"""Terms a confirmation lists before "and N more" (the count is always stated)."""
DELETED_SHOWN = 20
"""Deleted entries a batch result names before "and N more"."""
LABEL_CHARS = 160
"""A row's label is clipped here: one long term must not push the check boxes apart."""
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


def pair_label(from_lang: str, to_lang: str, count: int) -> str:
    """A language pair in the filter: ``ja→en (31)``."""
    return f"{clean(from_lang)}\u2192{clean(to_lang)} ({count:,})"


def count_html(total: int, matches: int, shown: int, selected: int, host: str) -> str:
    """How many entries, how many match, how many are shown, and how many are selected."""
    if total == 0:
        text = f"no entries at {escape(host)}"
    elif matches == total:
        text = f"{words.entries(total)} at {escape(host)}"
    else:
        text = f"{words.count(matches, 'match', 'matches')} of {words.entries(total)}"
    if shown < matches:
        text += f" &mdash; showing the first {shown:,}: refine the search to see the others"
    text += f" &middot; <b>{selected:,} selected</b>"
    return f'<div class="dict-magics-count">{text}</div>'


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


def confirm_purge_html(
    count: int | None, profile: str, host: str, word: str, snapshot_dir: Path | None
) -> str:
    """The purge confirmation: how many entries (as last listed), where a snapshot goes, and
    what to type. ``snapshot_dir`` is ``None`` when no snapshot will be kept."""
    how_many = "EVERY entry" if count is None else f"all {words.entries(count)}"
    if snapshot_dir is None:
        keep = "No snapshot is kept (snapshots are off): this cannot be undone."
    else:
        keep = (
            f"A snapshot of every entry is saved in <code>{escape(str(snapshot_dir))}</code> "
            "first: <b>Restore</b> puts them back."
        )
    return (
        f'<div class="dict-magics-confirm"><b>Delete {how_many}</b> of profile '
        f"<code>{escape(profile)}</code> on <b>{escape(host)}</b>? {keep} To enable Confirm, "
        f"type <code>{escape(word)}</code> (or <code>{escape(host)}</code>) below.</div>"
    )


def snapshot_label(info: SnapshotInfo) -> str:
    """A snapshot in the Restore choice: when, what it came from, how many entries."""
    when = info.taken_at.astimezone().strftime("%Y-%m-%d %H:%M:%S")
    return f"{when} \u00b7 {info.operation} \u00b7 {words.entries(info.count)}"


def confirm_restore_html(info: SnapshotInfo, host: str) -> str:
    """The restore confirmation: which snapshot, and that only missing entries are added."""
    return (
        f'<div class="dict-magics-confirm"><b>Restore</b> the snapshot of '
        f"{escape(snapshot_label(info))} to <b>{escape(host)}</b>? Only entries whose terms "
        "are missing are added; entries already there are left alone."
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


def any_result_html(result: DeleteResult | BatchResult | RestoreResult) -> str:
    """A deletion, a batch or a restore, rendered as the magics render it; a batch also names
    the terms of the entries it deleted (the magics list only what failed)."""
    if isinstance(result, BatchResult):
        return batch_html(result) + _deleted_html(result)
    if isinstance(result, RestoreResult):
        return restore_html(result)
    return result_html(result)


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
