"""What an update did: the entry's id, its old terms (when known) and its new ones.

Success, failure and unknown look different, as for deletions; every term came from a person or
the service, so the text view neutralises control characters and the HTML view escapes all.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from .results import details
from .words import COLOUR, SYMBOL, clean

if TYPE_CHECKING:
    from ..models import Entry, UpdateResult

__all__ = ["update_html", "update_text"]


def _terms(entry: Entry) -> str:
    return clean(entry.describe())


def _headline(result: UpdateResult) -> str:
    kind = result.outcome
    change = f"{_terms(result.old)} \u21d2 " if result.old is not None else ""
    change += _terms(result.new)
    if kind == "success":
        verified = " (verified by a listing)" if result.verified else ""
        return f"updated entry {clean(result.entry_id)}: {change}{verified}"
    if kind == "unknown":
        return (
            f"outcome unknown for entry {clean(result.entry_id)}: it may or may not now read "
            f"{_terms(result.new)}"
        )
    return f"entry {clean(result.entry_id)} not updated ({change})"


def update_text(result: UpdateResult) -> str:
    """One line: symbol, old \u21d2 new, the reason when it did not succeed, and the details."""
    line = f"{SYMBOL[result.outcome]} {_headline(result)}"
    if result.reason and not result.ok:
        line += f" \u2014 {clean(result.reason)}"
    return f"{line} ({details(result)})"


def update_html(result: UpdateResult) -> str:
    """The same line as HTML, coloured by outcome, every value escaped."""
    kind = result.outcome
    reason = f" &mdash; {escape(result.reason)}" if result.reason and not result.ok else ""
    return (
        f'<div class="dict-magics-result dict-magics-{kind}" style="color:{COLOUR[kind]}">'
        f"<b>{SYMBOL[kind]} {escape(_headline(result))}</b>{reason}"
        f' <span style="color:#57606a">({escape(details(result))})</span></div>'
    )
