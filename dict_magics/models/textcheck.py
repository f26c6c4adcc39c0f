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

from .entry import Entry
from .lint import id_order
from .text import COLOUR, MARK, Rendered, bounded, count, entries, escape, shown

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
class CheckReport(Rendered):
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

    def __str__(self) -> str:
        return _report_text(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(_report_text(self, limit=20))  # a notebook shows the first sentences

    def _repr_html_(self) -> str:
        return _report_html(self)


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


# -- how a report shows itself ------------------------------------------------------------------
# Only sentences with a match are listed, each with its entries in the order the service
# considers them; HTML highlights the spans: applied green, past the limit struck through.

_APPLIED = "background:#c6f6d5"
_SKIPPED = "background:#fde2c8;text-decoration:line-through"


def _title(report: CheckReport) -> str:
    applied = sum(len(s.applied) for s in report.sentences)
    skipped = sum(len(s.not_applied) for s in report.sentences)
    where = f" at {report.host}" if report.host else ""
    pair = ""
    if report.from_lang or report.to_lang:
        pair = f" {report.from_lang or '*'}\u2192{report.to_lang or '*'}"
    matched = len(report.matched)
    return shown(
        f"{matched:,} of {count(len(report.sentences), 'sentence')} "
        f"{'matches' if matched == 1 else 'match'} {entries(len(report.entries))} "
        f"(of {report.checked:,}{pair} checked{where}): {applied} applied, {skipped} not "
        f"applied (limit {LIMIT} per sentence)"
    )


def _entry(report: CheckReport, entry_id: str) -> str:
    entry = report.entries.get(entry_id)
    return shown(f"{entry_id}: {entry.describe() if entry is not None else ''}")


def _never(report: CheckReport, limit: int | None = None) -> list[str]:
    never = report.never_applied
    if not never:
        return []
    lines = [f"never applied in this text ({len(never)}): always past the limit"]
    lines += [f"  {MARK['failure']} {_entry(report, i)}" for i in never[:limit]]
    if len(never[:limit]) < len(never):
        lines.append(f"  \u2026 and {len(never) - limit} more never applied")
    return lines


def _report_text(report: CheckReport, limit: int | None = None) -> str:
    """The title, then each sentence with a match (the first ``limit`` when given) and its
    entries; then the entries never applied."""
    lines = [_title(report)]
    matched = [(n, s) for n, s in enumerate(report.sentences, 1) if s.matches]
    for number, sentence in matched[:limit]:
        lines.append(f"  [{number}] {shown(sentence.text)}")
        for m in sentence.matches[:limit]:
            note = "" if m.applied else f"  not applied (limit {LIMIT})"
            mark = MARK["success" if m.applied else "failure"]
            lines.append(f"    {mark} {_entry(report, m.entry_id)}{note}")
        if len(sentence.matches[:limit]) < len(sentence.matches):
            lines.append(f"    \u2026 and {len(sentence.matches) - limit} more entries")
    if len(matched[:limit]) < len(matched):
        lines.append(f"  \u2026 and {len(matched) - limit} more sentences with matches")
    return "\n".join(lines + _never(report, limit))


def highlighted(sentence: Sentence) -> str:
    """The sentence as HTML: applied spans green, spans matched only by entries past the
    limit struck through in orange; each span's title names the entries."""
    text, base = sentence.text, sentence.start
    state = [0] * len(text)
    names: list[list[str]] = [[] for _ in text]
    for match in sentence.matches:
        for i in range(match.start - base, match.end - base):
            state[i] = max(state[i], 2 if match.applied else 1)
            names[i].append(match.entry_id)
    out = []
    i = 0
    while i < len(text):
        j = i + 1
        while j < len(text) and state[j] == state[i] and names[j] == names[i]:
            j += 1
        piece = escape(text[i:j])
        if state[i]:
            style = _APPLIED if state[i] == 2 else _SKIPPED
            title = escape("entries " + ", ".join(names[i]))
            piece = f'<mark style="{style}" title="{title}">{piece}</mark>'
        out.append(piece)
        i = j
    return "".join(out)


def _sentence_html(report: CheckReport, number: int, sentence: Sentence) -> str:
    items = []
    for m in sentence.matches:
        kind = "success" if m.applied else "failure"
        note = "" if m.applied else f" \u2014 not applied (limit {LIMIT})"
        items.append(
            f'<li style="color:{COLOUR["success" if m.applied else "unknown"]}">{MARK[kind]} '
            f"{escape(_entry(report, m.entry_id))}{note}</li>"
        )
    return (
        f"<div><div>[{number}] {highlighted(sentence)}</div>"
        f'<ul style="margin:0 0 0.4em 0">{"".join(items)}</ul></div>'
    )


def _report_html(report: CheckReport) -> str:
    """The title, each sentence with a match (highlighted, then its entries), the entries never
    applied; within a notebook's bounds."""
    matched = [(n, s) for n, s in enumerate(report.sentences, 1) if s.matches]
    parts = bounded(_sentence_html(report, n, s) for n, s in matched)
    if len(parts) < len(matched):
        parts.append(
            f"<div>\u2026 and {len(matched) - len(parts)} more sentences with matches</div>"
        )
    never = _never(report)
    if never:
        items = "".join(f"<li>{escape(line.strip())}</li>" for line in never[1:200])
        parts.append(f"<div><b>{escape(never[0])}</b><ul>{items}</ul></div>")
    return (
        f'<div class="dict-magics-check"><div><b>{escape(_title(report))}</b></div>'
        f"{''.join(parts)}</div>"
    )
