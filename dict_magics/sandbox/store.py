"""The sandbox's dictionary: entries by id, changed and listed under one lock."""

from __future__ import annotations

import threading
from collections.abc import Iterable

from ..models import Entry
from .seed import id_sort_key, wire_id

__all__ = ["EntryStore"]


class EntryStore:
    """What the sandbox holds. Ids it hands out are never reused, as a database sequence's are:
    a new entry gets one more than the highest numeric id ever held, so a deleted id cannot come
    back as a different entry while a client still remembers it."""

    def __init__(self, entries: Iterable[Entry] = ()) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, Entry] = {}
        self._high = 0
        self.put(entries)

    def __len__(self) -> int:
        return len(self._entries)

    def snapshot(self) -> dict[str, Entry]:
        """A copy: id -> entry."""
        with self._lock:
            return dict(self._entries)

    def get(self, entry_id: str) -> Entry | None:
        with self._lock:
            return self._entries.get(entry_id)

    def put(self, entries: Iterable[Entry]) -> None:
        """Add (or replace) entries under their own ids."""
        with self._lock:
            for entry in entries:
                self._entries[entry.id] = entry
                if isinstance(wire_id(entry.id), int):
                    self._high = max(self._high, int(entry.id))

    def add(self, from_lang: str, from_text: str, to_lang: str, to_text: str) -> Entry:
        """A new entry with a new id (duplicate terms allowed, as the service allows them)."""
        with self._lock:
            self._high += 1
            entry = Entry(str(self._high), from_lang, from_text, to_lang, to_text)
            self._entries[entry.id] = entry
            return entry

    def add_many(self, terms: list[tuple[str, str, str, str]]) -> list[Entry]:
        """New entries with new ids, in order, all at once (a bulk add is all or nothing)."""
        with self._lock:
            added = []
            for item in terms:
                self._high += 1
                entry = Entry(str(self._high), *item)
                self._entries[entry.id] = entry
                added.append(entry)
            return added

    def replace(self, entry_id: str, terms: tuple[str, str, str, str]) -> Entry | None:
        """Put new terms under an existing id (in place); the new entry, or ``None`` when
        there is no such entry."""
        with self._lock:
            if entry_id not in self._entries:
                return None
            entry = self._entries[entry_id] = Entry(entry_id, *terms)
            return entry

    def delete(self, entry_id: str) -> Entry | None:
        """Remove one entry; the entry removed, or ``None`` when there was none."""
        with self._lock:
            return self._entries.pop(entry_id, None)

    def purge(self) -> int:
        """Remove every entry; how many there were."""
        with self._lock:
            count = len(self._entries)
            self._entries.clear()
            return count

    def listing(self) -> list[dict[str, int | str]]:
        """Every entry in the service's JSON shape, in id order (numbers numerically)."""
        with self._lock:
            entries = sorted(self._entries.values(), key=lambda e: id_sort_key(e.id))
        return [{**e.to_service(), "id": wire_id(e.id)} for e in entries]
