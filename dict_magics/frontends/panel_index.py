"""The panel's search over a listing: every key casefolded once, so a keystroke only scans.

A listing of 10,000 entries is searched on every keystroke, so the work per keystroke is one
substring test per entry of the chosen language pair against keys built when the listing
arrived, and a search that extends the previous one (typing on) scans only the previous
matches. Sorting by a column ranks every entry once per column (the first time that column is
asked for); a sort then orders the matches by an integer each. Standard library only; no
widgets.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..models import Entry

__all__ = ["ALL_PAIRS", "COLUMNS", "EntryIndex", "Pair"]

Pair = tuple[str, str]
COLUMNS = ("id", "languages", "source", "target")
"""The table's columns, in the order shown; each can be sorted by."""
ALL_PAIRS = "all"
_SEP = "\x1f"
"""Joins the two terms of a key; a needle holding it is tested against each term alone."""


class EntryIndex:
    """Entries in the service's order, searchable by a text in either term and a language pair.

    ``search`` returns positions in ``entries``, in order. Matching is what
    ``Entry.matches`` does (casefolded substring), with surrounding spaces of the text ignored.
    """

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.entries = list(entries)
        self._sources = [e.from_text.casefold() for e in self.entries]
        self._targets = [e.to_text.casefold() for e in self.entries]
        self._keys = [f"{s}{_SEP}{t}" for s, t in zip(self._sources, self._targets, strict=True)]
        self._by_pair: dict[Pair, list[int]] = {}
        for position, entry in enumerate(self.entries):
            self._by_pair.setdefault((entry.from_lang, entry.to_lang), []).append(position)
        self._last: tuple[str, Pair | str, list[int]] | None = None
        self._ranks: dict[str, list[int]] = {}

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def pairs(self) -> list[tuple[Pair, int]]:
        """Each language pair present, with how many entries it has, sorted by the pair."""
        return sorted((pair, len(found)) for pair, found in self._by_pair.items())

    def search(self, text: str = "", pair: Pair | str = ALL_PAIRS) -> list[int]:
        """Positions of the entries of ``pair`` (``ALL_PAIRS``: any) whose terms hold ``text``."""
        needle = text.strip().casefold()
        if pair == ALL_PAIRS:
            pool: Sequence[int] = range(len(self.entries))
        else:
            pool = self._by_pair.get(pair, [])  # type: ignore[call-overload]
        last = self._last
        if needle and last is not None and last[1] == pair and needle.startswith(last[0]):
            pool = last[2]  # typing on: only what matched the shorter text can match
        if not needle:
            found = list(pool)
        elif _SEP in needle:
            sources, targets = self._sources, self._targets
            found = [i for i in pool if needle in sources[i] or needle in targets[i]]
        else:
            keys = self._keys
            found = [i for i in pool if needle in keys[i]]
        self._last = (needle, pair, found)
        return found

    def order(self, found: Sequence[int], column: str, descending: bool = False) -> list[int]:
        """``found`` (positions) sorted by ``column``; ties keep the service's order."""
        ranks = self._ranks.get(column)
        if ranks is None:
            ranks = self._ranks[column] = self._rank(column)
        return sorted(found, key=ranks.__getitem__, reverse=descending)

    def _rank(self, column: str) -> list[int]:
        """Each entry's place when every entry is sorted by ``column``."""
        entries = self.entries
        if column == "id":
            keys: list[tuple[object, ...]] = [_id_key(e.id) for e in entries]
        elif column == "languages":
            keys = [
                (e.from_lang, e.to_lang, s) for e, s in zip(entries, self._sources, strict=True)
            ]
        elif column == "source":
            keys = [(s, t) for s, t in zip(self._sources, self._targets, strict=True)]
        elif column == "target":
            keys = [(t, s) for s, t in zip(self._sources, self._targets, strict=True)]
        else:
            raise ValueError(f"column must be one of {COLUMNS}, not {column!r}")
        ranks = [0] * len(entries)
        for rank, position in enumerate(sorted(range(len(entries)), key=keys.__getitem__)):
            ranks[position] = rank
        return ranks


def _id_key(entry_id: str) -> tuple[int, int, str]:
    """Numeric ids in number order, before any other id (in text order)."""
    if entry_id.isascii() and entry_id.isdigit():
        return (0, int(entry_id), entry_id)
    return (1, 0, entry_id)
