"""How the magics and the command line word a setting an error names (``exc.option``).

Lower layers name the setting neutrally (``skip_invalid``); both front ends spell these flags
the same way, so one table serves them.
"""

from __future__ import annotations

__all__ = ["with_hint"]

HINTS = {
    "skip_invalid": "add --skip-invalid to apply the valid rows only",
    "yes": "add -y (--yes) if you mean it",
}


def with_hint(exc: BaseException) -> str:
    """The error's message, and the flag that gets past it when it names one."""
    hint = HINTS.get(getattr(exc, "option", None) or "")
    return f"{exc} ({hint})" if hint else str(exc)
