"""The panel's table of entries: one page of rows, made as needed and reused for whatever shows.

A row is a check box labelled with the entry's id (the first column, and what a screen reader
names the box by) beside one HTML cell holding the other columns (languages, source, target)
on a grid whose widths the header's sort buttons share (the grid's style is sent once, in
``render.panel.TABLE_CSS``, not with every row). Two widgets per row (and a box), not
one per cell: each message to the browser costs (in a kernel about 0.15 ms to build, sign and
send) and each widget is kept by the kernel and the browser (and saved in the notebook).

A row keeps the entry it was last labelled with: showing other entries reorders the rows of
entries already labelled (one message for the new order) and relabels, two messages each, only
rows for entries no row holds, taking the rows hidden longest first. Sorting, paging back and
typing on then relabel little. Selection is kept by entry id, apart from the rows, so it survives
searching, sorting and paging.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import ipywidgets as widgets
from ipywidgets.widgets.widget_bool import CheckboxStyle
from ipywidgets.widgets.widget_string import HTMLStyle

from ..models import Entry
from ..render.panel import ID_WIDTH, id_label, row_cells_html

__all__ = ["EntryRows"]


class EntryRows(widgets.VBox):
    """At most ``page`` rows (``pool``, made as needed); ``selected`` holds the ticked ids, in
    tick order.

    ``on_change`` is called after the user ticks or unticks a row. ``draw`` and the selection
    methods may be called from any thread; ``lock`` serialises them with the ticks.
    """

    def __init__(
        self,
        page: int,
        on_change: Callable[[], None],
        lock: threading.RLock,
        **kwargs: Any,
    ) -> None:
        self.page = page
        self.lock = lock
        self.selected: dict[str, None] = {}
        self._on_change = on_change
        # One layout and one style for every row's parts: each would otherwise be a widget.
        self._box_layout = widgets.Layout(width=ID_WIDTH, flex="0 0 auto")
        self._cells_layout = widgets.Layout(flex="1 1 auto", width="auto")
        self._row_layout = widgets.Layout(width="100%", align_items="center", flex="0 0 auto")
        self._box_style = CheckboxStyle()
        self._cells_style = HTMLStyle()
        self.pool: list[widgets.HBox] = []
        self.boxes: list[widgets.Checkbox] = []
        self.cells: list[widgets.HTML] = []
        self._holds: list[Entry | None] = []
        self._slot_of: dict[Entry, int] = {}
        self._recent: OrderedDict[int, None] = OrderedDict()
        """Slots, least recently shown first: the next to be relabelled."""
        self._order: list[int] = []
        """The slots shown, in order."""
        super().__init__([], **kwargs)

    @property
    def shown(self) -> list[tuple[Entry, widgets.Checkbox]]:
        """The entries shown, in order, each with its check box."""
        with self.lock:
            found = []
            for slot in self._order:
                entry = self._holds[slot]
                if entry is not None:
                    found.append((entry, self.boxes[slot]))
            return found

    def draw(self, entries: Sequence[Entry]) -> None:
        """Show the first ``page`` of ``entries``, ticked where selected."""
        shown = entries[: self.page]
        with self.lock:
            held = {self._slot_of[e] for e in shown if e in self._slot_of}
            hidden = (slot for slot in list(self._recent) if slot not in held)
            order: list[int] = []
            taken: set[int] = set()
            for entry in shown:
                slot = self._slot_of.get(entry)
                if slot is None or slot in taken:  # not held, or a repeat of an entry shown
                    slot = self._relabel(entry, next(hidden, None))
                else:
                    self.boxes[slot].value = entry.id in self.selected
                taken.add(slot)
                order.append(slot)
            for slot in order:
                self._recent.move_to_end(slot)
            self._order = order
            children = tuple(self.pool[slot] for slot in order)
            if self.children != children:
                self.children = children

    def _relabel(self, entry: Entry, slot: int | None) -> int:
        """Label row ``slot`` (a new row when ``None``) with ``entry``."""
        if slot is None:
            slot = len(self.pool)
            box = widgets.Checkbox(indent=False, layout=self._box_layout, style=self._box_style)
            box.observe(self._ticked(slot), names="value")
            cells = widgets.HTML(layout=self._cells_layout, style=self._cells_style)
            self.boxes.append(box)
            self.cells.append(cells)
            self.pool.append(widgets.HBox([box, cells], layout=self._row_layout))
            self._holds.append(None)
            self._recent[slot] = None
        old = self._holds[slot]
        if old is not None and self._slot_of.get(old) == slot:
            del self._slot_of[old]
        self._holds[slot] = entry
        self._slot_of.setdefault(entry, slot)
        box = self.boxes[slot]
        with box.hold_sync():
            box.description = id_label(entry.id)
            box.value = entry.id in self.selected
        self.cells[slot].value = row_cells_html(entry)
        return slot

    def close(self) -> None:
        """Close every row of the pool (shown or not), their parts, shared layouts and style."""
        parts: list[Any] = [
            *getattr(self, "boxes", ()),
            *getattr(self, "cells", ()),
            *getattr(self, "pool", ()),
        ]
        for name in ("_box_layout", "_cells_layout", "_row_layout", "_box_style", "_cells_style"):
            parts.append(getattr(self, name, None))
        for part in parts:
            if part is not None:
                part.close()
        super().close()

    def select(self, ids: Iterable[str]) -> None:
        """Add ``ids`` to the selection and tick the rows showing them."""
        with self.lock:
            self.selected.update(dict.fromkeys(ids))
            self._sync()

    def clear(self) -> None:
        """Untick everything."""
        with self.lock:
            self.selected.clear()
            self._sync()

    def keep_only(self, present: Iterable[str]) -> None:
        """Forget selected ids that are no longer in the dictionary."""
        with self.lock:
            still = set(present)
            self.selected = {i: None for i in self.selected if i in still}
            self._sync()

    def _sync(self) -> None:
        """Tick the rows shown as the selection says (hidden ones are set when shown)."""
        for slot in self._order:
            entry = self._holds[slot]
            if entry is not None:
                self.boxes[slot].value = entry.id in self.selected

    def _ticked(self, slot: int) -> Callable[[dict[str, Any]], None]:
        def observer(change: dict[str, Any]) -> None:
            with self.lock:
                entry = self._holds[slot]
                if entry is None or change["new"] == (entry.id in self.selected):
                    return  # set by us, or nothing to change
                if change["new"]:
                    self.selected[entry.id] = None
                else:
                    self.selected.pop(entry.id, None)
            self._on_change()

        return observer
