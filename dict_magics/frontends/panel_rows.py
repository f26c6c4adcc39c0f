"""The panel's list of entries: check boxes made as needed and reused for whatever matches.

Each message to the browser costs (in a kernel about 0.15 ms to build, sign and send) and each
box is a widget the kernel and the browser keep (and a notebook saves), so a redraw sends as few
messages as it can and the pool never holds more boxes than a page shows at once. A box keeps
the entry it was last labelled with: showing other matches reorders the boxes of entries already
labelled (one message for the new order) and relabels, one message each, only boxes for entries
no box holds, taking the boxes hidden longest first. Typing on (which narrows the matches) and
going back (which shows hidden boxes again) then relabel little. Selection is kept by entry id,
apart from the boxes, so it survives searching.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import ipywidgets as widgets
from ipywidgets.widgets.widget_bool import CheckboxStyle

from ..models import Entry
from ..render.panel import row_label

__all__ = ["EntryRows"]


class EntryRows(widgets.VBox):
    """At most ``page`` rows of check boxes (``pool``, made as needed); ``selected`` holds the
    ticked ids, in tick order.

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
        # One layout and one style for every box: each would otherwise be a widget of its own.
        self._row_layout = widgets.Layout(width="auto")
        self._row_style = CheckboxStyle()
        self.pool: list[widgets.Checkbox] = []
        self._holds: list[Entry | None] = []
        self._slot_of: dict[Entry, int] = {}
        self._recent: OrderedDict[int, None] = OrderedDict()
        """Slots, least recently shown first: the next to be relabelled."""
        self._order: list[int] = []
        """The slots shown, in order."""
        super().__init__([], **kwargs)

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
                    self.pool[slot].value = entry.id in self.selected
                taken.add(slot)
                order.append(slot)
            for slot in order:
                self._recent.move_to_end(slot)
            self._order = order
            children = tuple(self.pool[slot] for slot in order)
            if self.children != children:
                self.children = children

    def _relabel(self, entry: Entry, slot: int | None) -> int:
        """Label box ``slot`` (a new box when ``None``) with ``entry``."""
        if slot is None:
            slot = len(self.pool)
            box = widgets.Checkbox(indent=False, layout=self._row_layout, style=self._row_style)
            box.observe(self._ticked(slot), names="value")
            self.pool.append(box)
            self._holds.append(None)
            self._recent[slot] = None
        old = self._holds[slot]
        if old is not None and self._slot_of.get(old) == slot:
            del self._slot_of[old]
        self._holds[slot] = entry
        self._slot_of.setdefault(entry, slot)
        box = self.pool[slot]
        with box.hold_sync():
            box.description = row_label(entry)
            box.value = entry.id in self.selected
        return slot

    def close(self) -> None:
        """Close every box of the pool (shown or not), their shared layout and style."""
        for box in [*getattr(self, "pool", ()), getattr(self, "_row_layout", None)]:
            if box is not None:
                box.close()
        if hasattr(self, "_row_style"):
            self._row_style.close()
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
        """Tick the boxes shown as the selection says (hidden ones are set when shown)."""
        for slot in self._order:
            entry = self._holds[slot]
            if entry is not None:
                self.pool[slot].value = entry.id in self.selected

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
