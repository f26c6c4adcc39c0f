"""A secret key that stays a ``str`` everywhere it is used but never shows itself.

Tracebacks in verbose mode, debuggers and ``repr()`` of containers print local variables and
their values; wrapping a secret as soon as it is read (from a prompt, the keyring or the
environment) keeps it out of all of them.
"""

from __future__ import annotations

__all__ = ["Secret", "mask"]


class Secret(str):
    """A ``str`` whose ``repr`` is ``<secret hidden>``; its value is used as usual."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<secret hidden>"


def mask(value: str | None) -> str:
    """Enough of an access key to recognise it, never enough to use it."""
    if not value:
        return "(none)"
    if len(value) <= 8:
        return "*" * len(value)
    return f"{value[:4]}\u2026{value[-2:]}"
