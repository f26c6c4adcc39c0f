"""The words and marks every view shares: outcome symbols and colours, counted nouns, and
text made safe for a terminal. One place, so a change of wording is made once."""

from __future__ import annotations

__all__ = ["COLOUR", "SYMBOL", "clean", "count", "entries"]

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
