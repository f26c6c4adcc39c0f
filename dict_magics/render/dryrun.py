"""What a delete or a purge would do: the terms that would go, and ids that are not there.

A dry run changes nothing, so it is shown in neutral colours, with the entries that would go (up
to a limit) and every id the dictionary does not hold. Where the service has no listing, only
the ids are known: the text says so, and that the deletion could not be undone.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from .words import clean, entries

if TYPE_CHECKING:
    from ..models import DryRunResult

__all__ = ["SHOWN", "dryrun_html", "dryrun_text"]

SHOWN = 20
"""Entries listed by name; the rest are counted."""
_NOTHING_SENT = "dry run: nothing that changes the dictionary was sent"


def _ids(ids: list[str]) -> str:
    shown = ", ".join(repr(clean(i)) for i in ids[:SHOWN])
    return shown + (f", \u2026 ({len(ids):,} in all)" if len(ids) > SHOWN else "")


def _where(result: DryRunResult) -> str:
    return f"at {clean(result.host)} (profile {clean(result.profile)!r})"


def _summary(result: DryRunResult) -> str:
    if result.operation == "purge":
        if not result.listed:
            return (
                f"a purge would delete every entry {_where(result)}; how many is unknown "
                "(the service offers no listing)"
            )
        return f"a purge would delete all {entries(len(result.entries))} {_where(result)}"
    if not result.listed:
        return (
            f"would send a deletion for {len(result.missing):,} "
            f"id{'' if len(result.missing) == 1 else 's'} {_where(result)}; their terms are "
            "unknown (the service offers no listing), so it could not be undone"
        )
    text = f"would delete {entries(len(result.entries))} {_where(result)}"
    if result.missing:
        text += f"; {len(result.missing):,} not in the dictionary"
    if result.listing_age:
        text += (
            f"; terms from this session's listing of {result.listing_age:.1f} s ago (the "
            "listing_max_age setting): an edit made elsewhere since is not shown, and the "
            "snapshot would keep these terms"
        )
    return text


def _lines(result: DryRunResult) -> list[tuple[str, str]]:
    """(kind, text) rows under the summary: entries that would go, then ids that are not there."""
    rows = [("entry", clean(f"{e.id}: {e.describe()}")) for e in result.entries[:SHOWN]]
    if len(result.entries) > SHOWN:
        rows.append(("more", f"\u2026 and {len(result.entries) - SHOWN:,} more"))
    if result.missing:
        label = "ids" if not result.listed else "not in the dictionary (nothing to delete)"
        rows.append(("missing", f"{label}: {_ids(result.missing)}"))
    return rows


def dryrun_text(result: DryRunResult) -> str:
    """A summary line, then the entries that would go and the ids that are not there."""
    lines = [f"{_NOTHING_SENT}: {_summary(result)}"]
    lines.extend(f"  {text}" for _, text in _lines(result))
    return "\n".join(lines)


def dryrun_html(result: DryRunResult) -> str:
    """The same as HTML, every value escaped."""
    items = "".join(
        f'<li class="dict-magics-{kind}">{escape(text)}</li>' for kind, text in _lines(result)
    )
    listing = f'<ul style="margin:0.2em 0">{items}</ul>' if items else ""
    return (
        f'<div class="dict-magics-dryrun" style="color:#57606a">'
        f"<b>{escape(_NOTHING_SENT)}:</b> {escape(_summary(result))}{listing}</div>"
    )
