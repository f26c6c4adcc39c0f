"""Text from outside (a service, a file) made safe to show on a terminal."""

from __future__ import annotations

__all__ = ["shown"]


def shown(text: str) -> str:
    """``text`` with every character a terminal would act on shown as an escape instead: control
    characters (ESC, so no colour, OSC title or cursor sequence; CR; C1 such as CSI U+009B),
    format characters (bidi overrides such as U+202E), lone surrogates and other unprintables."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)
