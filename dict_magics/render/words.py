"""The words and marks every view shares: outcome symbols and colours, counted nouns, and
text made safe for a terminal. One place, so a change of wording is made once."""

from __future__ import annotations

from html import escape

from ..models.text import named_ids

__all__ = [
    "COLOUR",
    "SYMBOL",
    "clean",
    "count",
    "entries",
    "named_ids",
    "outcome_box",
    "outcome_item",
]

SYMBOL = {"success": "\u2713", "failure": "\u2717", "unknown": "?", "absent": "\u2013"}
"""The mark of each outcome, in text and HTML alike."""
COLOUR = {"success": "#1a7f37", "failure": "#cf222e", "unknown": "#9a6700", "absent": "#57606a"}
"""The colour of each outcome in HTML."""


def count(number: int, one: str, many: str) -> str:
    """``1 entry``, ``1,204 entries``: a number with the noun that agrees with it."""
    return f"{number:,} {one if number == 1 else many}"


def entries(number: int) -> str:
    """``count(number, "entry", "entries")``, the noun most views count."""
    return count(number, "entry", "entries")


def clean(text: str) -> str:
    """``text`` with control characters (newlines, ESC, bidi overrides, ...) shown as escapes,
    for a terminal."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def outcome_item(kind: str, what: str, note: str | None = None) -> str:
    """One ``<li>`` of a result's list: its outcome's mark and colour, ``what`` (and ``note``)
    escaped."""
    tail = f" &mdash; {escape(note)}" if note else ""
    return f'<li style="color:{COLOUR[kind]}">{SYMBOL[kind]} {escape(what)}{tail}</li>'


def outcome_box(name: str, kind: str, summary: str, items: str) -> str:
    """A result as HTML: its summary, marked and coloured by ``kind``, over the ``<li>`` items
    (none: no list); ``name`` is the CSS class of the kind of result."""
    listing = f'<ul style="margin:0.2em 0">{items}</ul>' if items else ""
    return (
        f'<div class="dict-magics-{name} dict-magics-{kind}">'
        f'<b style="color:{COLOUR[kind]}">{SYMBOL[kind]} {escape(summary)}</b>'
        f"{listing}</div>"
    )
