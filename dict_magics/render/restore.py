"""What a restore did (or, in a dry run, would do): added, already present, failed, unknown.

Failures and unknown outcomes are listed in full, each with its reason; entries added are
listed up to a limit, since a restore after a purge can put back thousands.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING

from .words import SYMBOL, clean, entries, outcome_box, outcome_item

if TYPE_CHECKING:
    from ..models import Entry, RestoreResult

__all__ = ["restore_html", "restore_text"]

SHOWN = 20
_UNKNOWN = (
    "outcome unknown: it may or may not have been added "
    "(run the restore again: it adds only what is missing)"
)


def _kind(result: RestoreResult) -> str:
    if result.failed:
        return "failure"
    return "unknown" if result.unknown else "success"


def _summary(result: RestoreResult) -> str:
    added, skipped = len(result.added), len(result.skipped)
    changed = len(result.put_back) + len(result.removed)
    total = added + skipped + len(result.failed) + len(result.unknown) + changed
    if total == 0:
        return "nothing to restore: the snapshot holds no entries"
    if result.dry_run:
        text = f"would add {entries(added)}"
    elif result.ok:
        text = f"restored {entries(added)}"
    else:
        text = f"restored {added + changed} of {entries(total - skipped)}"
    if changed:  # the undo of an update or a sync
        put, add, remove = (
            ("would put back", "would re-add", "would remove")
            if result.dry_run
            else ("put back", "re-added", "removed")
        )
        # Only what happens: an update's undo removes nothing, a sync's may put nothing back.
        parts = [f"{put} {entries(len(result.put_back))} under their ids"] * bool(result.put_back)
        if added:
            parts.append(f"{add} {entries(added)}")
        if result.removed:
            parts.append(f"{remove} {entries(len(result.removed))} the change had added")
        text = ("undo: " if result.ok or result.dry_run else f"{text}; ") + ", ".join(parts)
    if skipped:
        text += f"; {skipped} already present (skipped)"
    if result.failed:
        text += f"; {len(result.failed)} not restored"
    if result.unknown:
        text += f"; {len(result.unknown)} with unknown outcome"
    if result.listing_age:
        text += (
            f"; terms as listed {result.listing_age:.1f} s before the delete (the "
            "listing_max_age setting: an edit made elsewhere in between is not in them)"
        )
    if result.dry_run:
        text += " (dry run: nothing that changes the dictionary was sent)"
    return text


def _items(result: RestoreResult) -> list[tuple[str, str, str]]:
    """(kind, entry in words, note) for every failure and unknown, then the first entries added."""
    items = [("failure", clean(e.describe()), clean(reason)) for e, reason in result.failed]
    items += [("unknown", clean(e.describe()), _UNKNOWN) for e in result.unknown]
    verb = "would add" if result.dry_run else "added"
    items += [
        ("success", f"{verb} {_new_id(e, result.dry_run)}{clean(e.describe())}", "")
        for e in result.added[:SHOWN]
    ]
    verb = "would put back" if result.dry_run else "put back"
    items += [
        ("success", f"{verb} entry {clean(e.id)}: {clean(e.describe())}", "")
        for e in result.put_back[:SHOWN]
    ]
    verb = "would remove" if result.dry_run else "removed"
    items += [
        ("success", f"{verb} entry {clean(e.id)}: {clean(e.describe())}", "")
        for e in result.removed[:SHOWN]
    ]
    return items


def _new_id(entry: Entry, dry_run: bool) -> str:
    """``entry 326: `` for an entry added under a known new id (a dry run has none yet)."""
    return "" if dry_run or not entry.id else f"entry {clean(entry.id)}: "


def _more(added: Sequence[Entry]) -> int:
    return max(0, len(added) - SHOWN)


def restore_text(result: RestoreResult) -> str:
    """A summary line, then what did not go back (with reasons) and what did."""
    lines = [f"{SYMBOL[_kind(result)]} {_summary(result)}"]
    for kind, what, note in _items(result):
        lines.append(f"  {SYMBOL[kind]} {what}" + (f" \u2014 {note}" if note else ""))
    if _more(result.added):
        lines.append(f"  ... and {entries(_more(result.added))} more")
    return "\n".join(lines)


def restore_html(result: RestoreResult) -> str:
    """The same as HTML, coloured by outcome, every value escaped."""
    items = "".join(outcome_item(k, what, note) for k, what, note in _items(result))
    if _more(result.added):
        items += f"<li>... and {escape(entries(_more(result.added)))} more</li>"
    return outcome_box("restore", _kind(result), _summary(result), items)
