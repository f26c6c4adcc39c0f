"""The panel's table: a search index over the listing (keys folded once: a keystroke scans
10,000 entries), and one page of reusable rows (each widget costs a browser message)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import ipywidgets as widgets
from ipywidgets.widgets.widget_bool import CheckboxStyle
from ipywidgets.widgets.widget_string import HTMLStyle

from ..models import Entry
from ..models.lint import id_order
from .panel_html import ID_WIDTH, id_label, row_cells_html

Pair = tuple[str, str]
COLUMNS = ("id", "languages", "source", "target")  # in the order shown; each sorts
ALL_PAIRS = "all"
SEPARATOR = "\x1f"
"""Joins the two terms of a key; a search holding it is tested against each term alone."""


class EntryIndex:
    """Entries in the service's order, found by a text in either term and a language pair; a
    search that extends the last one scans only the last matches."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.entries = list(entries)
        self.sources = [e.from_text.casefold() for e in self.entries]
        self.targets = [e.to_text.casefold() for e in self.entries]
        self.keys = [s + SEPARATOR + t for s, t in zip(self.sources, self.targets, strict=True)]
        self.by_pair: dict[Pair, list[int]] = {}
        for position, entry in enumerate(self.entries):
            self.by_pair.setdefault((entry.from_lang, entry.to_lang), []).append(position)
        self.last: tuple[str, Pair | str, list[int]] | None = None
        self.ranks: dict[str, list[int]] = {}

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def pairs(self) -> list[tuple[Pair, int]]:
        """Each language pair present, with how many entries it has, sorted by the pair."""
        return sorted((pair, len(found)) for pair, found in self.by_pair.items())

    def search(self, text: str = "", pair: Pair | str = ALL_PAIRS) -> list[int]:
        """Positions of the entries of ``pair`` (``ALL_PAIRS``: any) whose terms hold ``text``."""
        needle = text.strip().casefold()
        pool: Sequence[int] = range(len(self.entries))
        if pair != ALL_PAIRS:
            pool = self.by_pair.get(pair, [])  # type: ignore[arg-type]
        last = self.last
        if needle and last is not None and last[1] == pair and needle.startswith(last[0]):
            pool = last[2]
        if not needle:
            found = list(pool)
        elif SEPARATOR in needle:
            sources, targets = self.sources, self.targets
            found = [i for i in pool if needle in sources[i] or needle in targets[i]]
        else:
            keys = self.keys
            found = [i for i in pool if needle in keys[i]]
        self.last = (needle, pair, found)
        return found

    def order(self, found: Sequence[int], column: str, descending: bool = False) -> list[int]:
        """``found`` (positions) sorted by ``column``; ties keep the service's order. Each
        entry's place by a column is worked out once per listing."""
        if column not in self.ranks:
            entries, sources, targets = self.entries, self.sources, self.targets
            keys: dict[str, Callable[[int], Any]] = {
                "id": lambda i: id_order(entries[i].id),
                "languages": lambda i: (entries[i].from_lang, entries[i].to_lang, sources[i]),
                "source": lambda i: (sources[i], targets[i]),
                "target": lambda i: (targets[i], sources[i]),
            }
            if column not in keys:
                raise ValueError(f"column must be one of {COLUMNS}, not {column!r}")
            ranks = [0] * len(entries)
            for rank, position in enumerate(sorted(range(len(entries)), key=keys[column])):
                ranks[position] = rank
            self.ranks[column] = ranks
        return sorted(found, key=self.ranks[column].__getitem__, reverse=descending)


class Row(widgets.HBox):
    """A row of the table: a check box labelled with the id, and one HTML cell for the rest."""

    entry: Entry | None = None


class EntryRows(widgets.VBox):
    """One page of rows; ``selected`` holds the ticked ids in tick order (it survives searching,
    sorting and paging). A redraw reuses rows already showing an entry."""

    children: tuple[Row, ...]

    def __init__(
        self, page: int, on_change: Callable[[], None], lock: threading.RLock, **kwargs: Any
    ) -> None:
        self.page, self.on_change, self.lock = page, on_change, lock
        self.selected: dict[str, None] = {}
        self.pool: list[Row] = []  # every row made, the one shown longest ago first
        # One layout and style for every row: each would otherwise be a widget of its own.
        self.shared = [
            widgets.Layout(width=ID_WIDTH, flex="0 0 auto"),
            CheckboxStyle(),
            widgets.Layout(flex="1 1 auto", width="auto"),
            HTMLStyle(),
            widgets.Layout(width="100%", align_items="center", flex="0 0 auto"),
        ]
        super().__init__([], **kwargs)

    @property
    def shown(self) -> list[tuple[Entry, widgets.Checkbox]]:
        """The entries shown, in order, each with its check box."""
        with self.lock:
            return [(row.entry, row.children[0]) for row in self.children if row.entry]

    def draw(self, entries: Sequence[Entry]) -> None:
        """Show the first ``page`` of ``entries``, ticked where selected."""
        shown = entries[: self.page]
        with self.lock:
            holder = {row.entry: row for row in self.pool}
            wanted = set(shown)
            free = [r for r in self.pool if r.entry not in wanted or holder[r.entry] is not r]
            rows: list[Row] = []
            for entry in shown:
                row = holder.pop(entry, None)
                if row is None:
                    row = free.pop(0) if free else self._new_row()
                    row.entry = entry  # first: the tick set below is then not the user's
                    box, cells = row.children
                    with box.hold_sync():
                        box.description = id_label(entry.id)
                        box.value = entry.id in self.selected
                    cells.value = row_cells_html(entry)
                else:
                    row.children[0].value = entry.id in self.selected
                rows.append(row)
            drawn = set(map(id, rows))
            self.pool = [row for row in self.pool if id(row) not in drawn] + rows
            if self.children != tuple(rows):
                self.children = tuple(rows)

    def _new_row(self) -> Row:
        box_layout, box_style, cells_layout, cells_style, row_layout = self.shared
        box = widgets.Checkbox(indent=False, layout=box_layout, style=box_style)
        row = Row([box, widgets.HTML(layout=cells_layout, style=cells_style)], layout=row_layout)
        box.observe(functools.partial(self._ticked, row), names="value")
        return row

    def _ticked(self, row: Row, change: dict[str, Any]) -> None:
        with self.lock:
            entry = row.entry
            if entry is None or change["new"] == (entry.id in self.selected):
                return  # set by a redraw
            if change["new"]:
                self.selected[entry.id] = None
            else:
                self.selected.pop(entry.id, None)
        self.on_change()

    def select(self, ids: Iterable[str]) -> None:
        """Tick exactly ``ids``, in this order."""
        with self.lock:
            self.selected = dict.fromkeys(ids)
            for entry, box in self.shown:
                box.value = entry.id in self.selected

    def close(self) -> None:
        """Close every row made (shown or not), its parts, and the shared layouts."""
        for row in getattr(self, "pool", ()):
            for part in (*row.children, row):
                part.close()
        for part in getattr(self, "shared", ()):
            part.close()
        super().close()
