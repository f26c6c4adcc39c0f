"""Text from outside (a service, a file) made safe to show on a terminal, and ids named in
words that agree with their number."""

from __future__ import annotations

__all__ = ["named_ids", "shown"]


def shown(text: str) -> str:
    """``text`` with every character a terminal would act on shown as an escape instead: control
    characters (ESC, so no colour, OSC title or cursor sequence; CR; C1 such as CSI U+009B),
    format characters (bidi overrides such as U+202E), lone surrogates and other unprintables."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def named_ids(ids: list[str], one: str = "entry", many: str = "entries") -> str:
    """``entry 4``, ``entries 4 and 5``, ``entries 4, 5 and 6``: ids after the noun that agrees
    with their number (each id shown safely). Operations word warnings with it (they may not
    import ``render``); views use it through ``render.words``."""
    shown_ids = [shown(str(i)) for i in ids]
    if len(shown_ids) == 1:
        return f"{one} {shown_ids[0]}"
    if len(shown_ids) == 0:
        return f"no {many}"
    return f"{many} {', '.join(shown_ids[:-1])} and {shown_ids[-1]}"
