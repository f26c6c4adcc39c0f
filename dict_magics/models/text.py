"""What every record's rendering shares. Every value from the service, a file or a person goes
through ``shown`` (text) or ``escape`` (HTML) wherever it is shown."""

from __future__ import annotations

import html
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import Remedy

MARK = {"success": "\u2713", "failure": "\u2717", "unknown": "?", "absent": "\u2013"}
COLOUR = {"success": "#1a7f37", "failure": "#cf222e", "unknown": "#9a6700", "absent": "#57606a"}
GREY = COLOUR["absent"]
HTML_ROWS = 200  # a notebook cell is no place for 100,000 rows: HTML stops at this many,
HTML_MAX_BYTES = 150_000  # or at this size


def shown(text: str) -> str:
    """``text`` with every character a terminal would act on (controls such as ESC, CR or CSI,
    bidi overrides, lone surrogates, other unprintables) shown as an escape instead."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def clip(text: str, size: int = 200) -> str:
    """``text`` cut to ``size`` characters, an ellipsis saying so."""
    return text if len(text) <= size else text[:size] + "\u2026"


def escape(text: object) -> str:
    """``text`` for HTML: ``shown`` (a bidi override acts in a notebook too), then escaped;
    a value that renders itself safely says so with ``__html__`` (markupsafe's convention)."""
    if hasattr(text, "__html__"):
        return str(text.__html__())
    return html.escape(shown(str(text)))


def count(number: int, one: str, many: str | None = None) -> str:
    """``1 entry``, ``1,204 entries``: a number with the noun that agrees with it."""
    return f"{number:,} {one if number == 1 else many or one + 's'}"


def entries(number: int) -> str:
    """``count(number, "entry", "entries")``, the noun most records count."""
    return count(number, "entry", "entries")


def named_ids(ids: list[str]) -> str:
    """``entry 4``, ``entries 4 and 5``, ``entries 4, 5 and 6`` (each id shown safely)."""
    safe = [shown(str(i)) for i in ids]
    if len(safe) < 2:
        return f"entry {safe[0]}" if safe else "no entries"
    return f"entries {', '.join(safe[:-1])} and {safe[-1]}"


NEUTRAL = {
    Remedy.RESTORE: "a restore",
    Remedy.NO_SNAPSHOT: "snapshots are off",
    Remedy.DELETE_MISSING: "ask the sync to delete missing entries",
    Remedy.SHEET: "name the sheet to read",
}  # what a record says for a remedy when no front end gave its own words


def remedy(names: Mapping[str, str] | None, which: Remedy) -> str:
    """A front end's words for ``which`` (``names``, by ``errors.Remedy``), else neutral ones."""
    return (names or {}).get(which) or NEUTRAL[which]


def dataframe(rows: Iterable[Any], columns: Sequence[str], what: str, dtype: Any = object) -> Any:
    """A ``pandas.DataFrame`` of ``rows`` (pandas is optional: without it, how to get it)."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(
            f"{what}.to_pandas() needs pandas, which is not installed: pip install pandas."
        ) from None
    return pd.DataFrame(list(rows), columns=list(columns), dtype=dtype)


def _width(text: str) -> int:
    """Columns a terminal gives ``text``: wide characters (金曜日) two, combining marks none."""
    if text.isascii():
        return len(text)
    wide = unicodedata.east_asian_width
    return sum(0 if unicodedata.combining(c) else 2 if wide(c) in "WF" else 1 for c in text)


def text_table(rows: Sequence[Sequence[str]], right: int = -1, cap: int = 40) -> list[str]:
    """``rows`` (safe text, the header first) as aligned columns, one aligned ``right``."""
    widths = [min(cap, max(_width(row[i]) for row in rows)) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        pads = [" " * max(0, w - _width(cell)) for cell, w in zip(row, widths, strict=True)]
        cells = [c + p for c, p in zip(row, pads, strict=True)]
        if right >= 0:
            cells[right] = pads[right] + row[right]
        lines.append("  ".join(cells).rstrip())
    return lines


def html_row(cells: Iterable[object], attrs: str = "") -> str:
    """One ``<tr>`` (``attrs``: trusted attributes) of escaped cells."""
    return f"<tr{attrs}>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>"


def html_table(header: Sequence[str], rows: Sequence[str], caption: str = "") -> str:
    """A plain table of ``html_row`` rows (no header row if ``header`` is empty)."""
    if not rows:
        return ""
    head = "".join(f'<th style="text-align:left">{escape(h)}</th>' for h in header)
    head = f"<thead><tr>{head}</tr></thead>" if header else ""
    title = f'<caption style="text-align:left">{escape(caption)}</caption>' if caption else ""
    return f"<table>{title}{head}<tbody>{''.join(rows)}</tbody></table>"


def bounded(parts: Iterable[str]) -> list[str]:
    """The first ``parts`` a notebook shows: ``HTML_ROWS`` at most, ``HTML_MAX_BYTES`` in all."""
    kept: list[str] = []
    size = 0
    for part in parts:
        size += len(part.encode("utf-8"))
        if len(kept) == HTML_ROWS or size > HTML_MAX_BYTES:
            break
        kept.append(part)
    return kept


class Rendered:
    """A record that shows itself: ``str()`` in a terminal, ``_repr_html_`` in a notebook (by
    default the text in a ``dict-magics-<_css>`` box), and ``_repr_pretty_`` in IPython (the
    first ``_pretty`` rows of ``text``, if set). IPython's printer stops at the first class in
    the MRO that defines ``__repr__`` (a dataclass does): each subclass gets its own copy."""

    __slots__ = ()
    _css = "result"
    _pretty: int | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_repr_pretty_" not in cls.__dict__:
            cls._repr_pretty_ = cls._repr_pretty_  # type: ignore[method-assign]

    def text(self, limit: int | None = None) -> str:
        """The record as text (the first ``limit`` rows, where it has rows)."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.text()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self) if self._pretty is None else self.text(self._pretty))

    def _repr_html_(self) -> str:
        return f'<div class="dict-magics-{self._css}">{escape(str(self))}</div>'


class Outcomes(Rendered):
    """A result told as its summary, marked by its outcome (``_kind``), over an outline of items
    (``_items``: kind, what, note and optionally the items under it; kind ``""``: unmarked),
    then ``_tail`` (trusted HTML)."""

    __slots__ = ()

    def _kind(self) -> str:
        raise NotImplementedError

    def _summary(self) -> str:
        raise NotImplementedError

    def _items(self) -> list[tuple[Any, ...]]:
        return []

    def _tail(self, html: bool) -> str:
        return ""

    def __repr__(self) -> str:
        """The summary (a subclass with big lists declares ``repr=False`` to get it)."""
        return f"{type(self).__name__}({self._summary()!r})"

    def text(self, limit: int | None = None) -> str:
        lines = [f"{MARK[self._kind()]} {shown(self._summary())}", *outline(self._items(), limit)]
        return "\n".join(lines) + self._tail(False)

    def _repr_html_(self) -> str:
        kind, items = self._kind(), _outline_html(self._items())
        listing = f'<ul style="margin:0.2em 0">{items}</ul>' if items else ""
        return (
            f'<div class="dict-magics-{self._css} dict-magics-{kind}">'
            f'<b style="color:{COLOUR[kind]}">{MARK[kind]} {escape(self._summary())}</b>'
            f"{listing}{self._tail(True)}</div>"
        )


def capped(items: list[tuple[Any, ...]], limit: int | None, more: str = "more") -> list[Any]:
    """The first ``limit`` outline items (all if None), then how many ``more`` there are."""
    left = 0 if limit is None else len(items) - limit
    return items[:limit] + [("", f"\u2026 and {left:,} {more}", "")] * (left > 0)


def outline(
    items: list[tuple[Any, ...]], limit: int | None = None, indent: str = "  "
) -> list[str]:
    """The items as lines of text (the first ``limit`` of each level), each level further in."""
    lines = []
    for kind, what, note, *under in capped(items, limit):
        mark = f"{MARK[kind]} " if kind else ""
        lines.append(f"{indent}{mark}{shown(what)}" + (f" \u2014 {shown(note)}" if note else ""))
        lines += outline(under[0], limit, indent + "  ") if under else []
    return lines


def _outline_html(items: list[tuple[Any, ...]]) -> str:
    """The items as HTML list items, each level within a notebook's bounds (``bounded``)."""
    parts = bounded(_item_html(*item) for item in items)
    more = len(items) - len(parts)
    return "".join(parts) + (f"<li>\u2026 and {more:,} more</li>" if more else "")


def _item_html(kind: str, what: Any, note: str, under: list[tuple[Any, ...]] | None = None) -> str:
    said = f"{MARK[kind]} {escape(what)}" if kind else escape(what)
    said += f" &mdash; {escape(note)}" if note else ""
    said += f'<ul style="margin:0.2em 0">{_outline_html(under)}</ul>' if under else ""
    return f'<li style="color:{COLOUR[kind]}">{said}</li>' if kind else f"<li>{said}</li>"
