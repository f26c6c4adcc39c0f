"""Which entries the service would apply to each sentence of a text: ``CheckReport``.

The service applies at most 3 entries per sentence, the earliest matches first. This module
plays that rule on a listing, offline (``listing.check(text)``), with no translation request:

- **Sentences** end after ``。`` or the full-width ``!`` and ``?`` (a run of them counts as one
  end), after ``.``, ``!`` or ``?`` (or a run of them) followed by whitespace or the end of the
  text, and at every newline. A sentence keeps its end mark; spaces around it are not part of it.
- An entry **matches** a sentence where its ``fromText`` occurs in it, exactly (case-sensitive);
  terms inside other terms match too (``取締役`` inside ``代表取締役``).
- Its **position** is its first occurrence. Per sentence and language pair (a translation uses
  one pair), the three earliest are **applied**, the rest are **not applied (limit 3)**. Ties at
  one position: the longer term first (as term matchers usually prefer the longest match), then
  the lower id (the older entry). The service does not document its own tie-break.

Matching runs one Aho-Corasick automaton (``pyahocorasick``) over the text, so the cost grows
with the text plus the matches, not with text x entries (``benchmarks/bench_lint.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .display import Displayed
from .entry import Entry
from .lint import id_order

__all__ = ["LIMIT", "CheckReport", "Match", "Sentence", "check_text", "split_sentences"]

LIMIT = 3
"""Entries the service applies per sentence (the earliest matches)."""

_END = re.compile("[\u3002\uff01\uff1f]+|[.!?]+(?=\\s|\\Z)|\n")  # U+3002 U+FF01 U+FF1F


def split_sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text`` (``text[start:end]``), trimmed of spaces,
    empty ones left out."""
    spans = []
    start = 0
    for mark in _END.finditer(text):
        spans.append((start, mark.end() if mark.group() != "\n" else mark.start()))
        start = mark.end()
    spans.append((start, len(text)))
    trimmed = []
    for begin, end in spans:
        piece = text[begin:end]
        stripped = piece.strip()
        if stripped:
            begin += len(piece) - len(piece.lstrip())
            trimmed.append((begin, begin + len(stripped)))
    return trimmed


@dataclass(frozen=True)
class Match:
    """One entry matching one sentence: where it first occurs (offsets in the whole text),
    and whether it is among the sentence's first three of its language pair."""

    entry_id: str
    start: int
    end: int
    applied: bool


@dataclass(frozen=True)
class Sentence:
    """One sentence (``text`` starts at ``start`` in the whole text) and its matches, in the
    order the service would consider them."""

    text: str
    start: int
    matches: tuple[Match, ...] = ()

    @property
    def applied(self) -> list[str]:
        """Ids of the entries applied to this sentence, in order of first occurrence."""
        return [m.entry_id for m in self.matches if m.applied]

    @property
    def not_applied(self) -> list[str]:
        """Ids of the entries that match but are past the limit, in order of first occurrence."""
        return [m.entry_id for m in self.matches if not m.applied]

    def to_json(self) -> dict[str, Any]:
        """``{"text", "applied", "not_applied"}`` as ``dict-magics check --json`` prints."""
        return {"text": self.text, "applied": self.applied, "not_applied": self.not_applied}


@dataclass(frozen=True)
class CheckReport(Displayed):
    """Each sentence of ``text`` with the entries that match it, applied or not (limit 3).

    ``never_applied`` names the entries that match somewhere in the text but are never among
    a sentence's first three: in this text they do nothing. ``entries`` holds every entry that
    matched, by id; ``checked`` is how many entries were matched against.
    """

    text: str
    sentences: list[Sentence] = field(default_factory=list)
    entries: dict[str, Entry] = field(default_factory=dict, repr=False)
    checked: int = 0
    host: str = ""
    from_lang: str | None = None
    to_lang: str | None = None

    @property
    def matched(self) -> list[Sentence]:
        """The sentences that at least one entry matches."""
        return [s for s in self.sentences if s.matches]

    @property
    def applied_ids(self) -> list[str]:
        """Every entry applied somewhere, each once, in order of first application."""
        return list(dict.fromkeys(i for s in self.sentences for i in s.applied))

    @property
    def never_applied(self) -> list[str]:
        """Entries that match in the text but are applied in no sentence, lowest id first."""
        applied = set(self.applied_ids)
        return sorted((i for i in self.entries if i not in applied), key=id_order)

    @property
    def limited(self) -> list[Sentence]:
        """The sentences where the limit left a matching entry out."""
        return [s for s in self.sentences if s.not_applied]

    def to_json(self) -> dict[str, Any]:
        """The shape ``dict-magics check --json`` prints: ``sentences`` and ``never_applied``,
        plus every matched ``entries`` (the service's field names) and the ``checked`` count."""
        return {
            "sentences": [s.to_json() for s in self.sentences],
            "never_applied": self.never_applied,
            "entries": [e.to_service() for e in self.entries.values()],
            "checked": self.checked,
        }

    def __iter__(self) -> Iterator[Sentence]:
        return iter(self.sentences)

    def __len__(self) -> int:
        return len(self.sentences)

    def __repr__(self) -> str:
        applied = sum(len(s.applied) for s in self.sentences)
        skipped = sum(len(s.not_applied) for s in self.sentences)
        return (
            f"CheckReport({len(self.sentences)} sentences, {self.checked} entries checked, "
            f"{applied} applied, {skipped} not applied, {len(self.never_applied)} never applied)"
        )


def check_text(
    entries: Iterable[Entry],
    text: str,
    *,
    from_lang: str | None = None,
    to_lang: str | None = None,
    host: str = "",
) -> CheckReport:
    """Play the 3-per-sentence rule of ``entries`` (those of ``from_lang`` / ``to_lang`` when
    given, exactly as the service spells them) on ``text``."""
    import ahocorasick

    chosen = [
        e
        for e in entries
        if (from_lang is None or e.from_lang == from_lang)
        and (to_lang is None or e.to_lang == to_lang)
    ]
    by_term: dict[str, list[Entry]] = {}
    for entry in sorted(chosen, key=lambda e: id_order(e.id)):
        if entry.from_text:
            by_term.setdefault(entry.from_text, []).append(entry)
    automaton = ahocorasick.Automaton(ahocorasick.STORE_LENGTH)
    for term in by_term:
        automaton.add_word(term)
    sentences = []
    matched: dict[str, Entry] = {}
    usable = bool(by_term)
    if usable:
        automaton.make_automaton()
    for start, end in split_sentences(text):
        if not usable:
            sentences.append(Sentence(text[start:end], start))
            continue
        first: dict[str, int] = {}
        for last, length in automaton.iter(text, start, end):
            at = last - length + 1
            if at >= start:
                term = text[at : last + 1]
                if term not in first:
                    first[term] = at
        ranked = sorted(
            (
                (at, -len(term), id_order(entry.id), entry)
                for term, at in first.items()
                for entry in by_term[term]
            ),
            key=lambda row: row[:3],
        )
        per_pair: dict[tuple[str, str], int] = {}
        matches = []
        for at, minus_length, _, entry in ranked:
            pair = (entry.from_lang, entry.to_lang)
            taken = per_pair.get(pair, 0)
            per_pair[pair] = taken + 1
            matches.append(Match(entry.id, at, at - minus_length, taken < LIMIT))
            matched[entry.id] = entry
        sentences.append(Sentence(text[start:end], start, tuple(matches)))
    return CheckReport(text, sentences, matched, len(chosen), host, from_lang, to_lang)
