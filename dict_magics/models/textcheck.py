"""Which entries the service would apply to a text: the ``Matcher`` that plays the rule, and
the ``CheckReport`` it gives. ``check`` and ``impact`` both use the matcher: one rule, once.

The rule (DESIGN, "Check"), played offline on a listing:

- The texts are cut into **segments** by ``unit``: ``element`` (one line of a text, one item
  of a list), ``sentence`` (an element cut after each 。！？ and after . ! ? before whitespace
  or the end; the space after an end starts the next sentence), or ``request`` (the elements
  stay whole but share one allowance).
- An entry **matches** where its ``fromText`` occurs. ``case_sensitive=False`` compares each
  character's case fold (``str.casefold``, else ``str.lower`` where that alone stays one
  character, so ẞ is ß but not ss; the Turkish ı and İ fold to i), as ``re.IGNORECASE`` does.
- Per segment (per request: across its elements) and language pair, matches are taken earliest
  first, at one position the longer term first, then the lower id (the service does not
  document its tie-break). The first 3 entries are **applied**, and every later occurrence of
  them too; a further entry is **not applied (limit 3)**. A match inside (or across) a term
  already applied is no match there: the text was already translated.
"""  # noqa: RUF002 (the full-width marks are meant)

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import UsageProblem
from .entry import Entry
from .lint import id_order
from .text import COLOUR, MARK, Rendered, bounded, count, entries, escape, shown

LIMIT = 3
"""Entries the service applies per unit (the earliest matches)."""
UNITS = ("element", "request", "sentence")
Status = Literal["applied", "limit", "inside"]

_END = re.compile("[\u3002\uff01\uff1f]|[.!?](?=\\s|\\Z)")  # U+3002 U+FF01 U+FF1F
_LINE = re.compile("\r\n|\r|\n")
_DOTTED_I = str.maketrans({"\u0130": "i", "\u0131": "i"})


def fold(text: str) -> str:
    """``text`` with each character case-folded, one character for one (offsets stay)."""
    folded = text.casefold()
    if len(folded) != len(text):  # a character folds to several (ß, ẞ, İ): one by one
        folded = "".join(map(_fold_one, text))
    return folded.translate(_DOTTED_I)


def _fold_one(char: str) -> str:
    for folded in (char.casefold(), char.lower()):
        if len(folded) == 1:
            return folded
    return char


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` (``\\n``, ``\\r\\n`` or ``\\r`` ends one), as a file reads them."""
    return _LINE.split(text)


def split_sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text``: one ends after each 。！？ and after . ! ?
    before whitespace or the end of the text."""  # noqa: RUF002
    spans, start = [], 0
    for mark in _END.finditer(text):
        spans.append((start, mark.end()))
        start = mark.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def check_unit(unit: str) -> str:
    """``unit`` when it is one the rule knows, else ``UsageProblem`` naming them."""
    if unit not in UNITS:
        raise UsageProblem(f"the limit's unit must be one of {', '.join(UNITS)}, not {unit!r}.")
    return unit


@dataclass(frozen=True)
class Match:
    """One entry in one segment: where it counts (offsets in its element) and what became of
    it: ``applied``, ``limit`` (past the limit) or ``inside`` (``by``, an applied longer term,
    covers every occurrence of it)."""

    entry: Entry
    start: int
    end: int
    status: Status = "applied"
    by: Entry | None = None

    @property
    def entry_id(self) -> str:
        return self.entry.id

    @property
    def applied(self) -> bool:
        return self.status == "applied"


@dataclass(frozen=True)
class Segment:
    """One segment of the texts checked (an element, or a sentence of one): its text, which
    element it is in (0-based) and where, and its matches in the order the service takes them."""

    text: str
    element: int = 0
    start: int = 0
    matches: tuple[Match, ...] = ()

    @property
    def applied(self) -> list[str]:
        """Ids of the entries applied here, in the order they are taken."""
        return [m.entry.id for m in self.matches if m.applied]

    @property
    def not_applied(self) -> list[str]:
        """Ids of the entries that match here but are not applied (limit, or inside another)."""
        return [m.entry.id for m in self.matches if not m.applied]

    @property
    def applied_entries(self) -> list[Entry]:
        return [m.entry for m in self.matches if m.applied]

    def to_json(self) -> dict[str, Any]:
        """``{"text", "applied", "not_applied"}``, as ``check --json`` lists each segment."""
        return {"text": self.text.strip(), "applied": self.applied, "not_applied": self.not_applied}


class _Allowance:
    """One unit's state for one language pair: the entries applied (by rank) and, per
    element, how far the applied terms reach (and which one reaches furthest)."""

    __slots__ = ("applied", "cover")

    def __init__(self) -> None:
        self.applied: set[int] = set()
        self.cover: dict[int, tuple[int, Entry | None]] = {}


class Matcher:
    """Entries ready to be matched: one Aho-Corasick automaton over their source terms, so the
    cost grows with the text and its matches, not with text x entries."""

    def __init__(self, entries: Iterable[Entry], *, case_sensitive: bool = True) -> None:
        import ahocorasick

        self.case_sensitive = case_sensitive
        self.terms: dict[str, list[tuple[int, Entry]]] = {}
        """Each (folded) source term's entries with their rank (by id, lowest first)."""
        ranked = sorted(entries, key=lambda e: id_order(e.id))
        for rank, entry in enumerate(ranked):
            if entry.from_text:
                self.terms.setdefault(self.key(entry.from_text), []).append((rank, entry))
        self._automaton = ahocorasick.Automaton(ahocorasick.STORE_LENGTH)
        for term in self.terms:
            self._automaton.add_word(term)
        if self.terms:
            self._automaton.make_automaton()

    def key(self, text: str) -> str:
        """``text`` as it is compared: itself, or folded when case does not count."""
        return text if self.case_sensitive else fold(text)

    def segments(self, texts: Sequence[str], unit: str = "element") -> list[Segment]:
        """Each segment of ``texts`` under ``unit`` with its matches."""
        if check_unit(unit) == "sentence":
            groups = [[(i, a, b)] for i, t in enumerate(texts) for a, b in split_sentences(t)]
        else:
            whole = [(i, 0, len(t)) for i, t in enumerate(texts)]
            groups = [whole] if unit == "request" else [[span] for span in whole]
        keys = [self.key(t) for t in texts] if self.terms else list(texts)
        out = []
        for group in groups:
            state: dict[tuple[str, str], _Allowance] = {}
            for i, start, end in group:
                if unit == "sentence" and not texts[i][start:end].strip():
                    continue
                matches = self._play(keys[i], i, start, end, state)
                out.append(Segment(texts[i][start:end], i, start, matches))
        return out

    def _play(
        self, key: str, index: int, start: int, end: int, state: dict[Any, _Allowance]
    ) -> tuple[Match, ...]:
        """The matches of one segment, ``state`` carrying each pair's allowance."""
        if not self.terms:
            return ()
        found = [
            (last + 1 - length, -length, rank, entry)
            for last, length in self._automaton.iter(key, start, end)
            for rank, entry in self.terms[key[last + 1 - length : last + 1]]
        ]
        found.sort(key=lambda row: row[:3])
        decided: dict[int, Match] = {}
        inside: dict[int, Match] = {}
        for at, minus, rank, entry in found:
            allowance = state.setdefault((entry.from_lang, entry.to_lang), _Allowance())
            reach, by = allowance.cover.get(index, (0, None))
            if at < reach:  # already translated as part of an applied term
                if rank not in decided:
                    inside.setdefault(rank, Match(entry, at, at - minus, "inside", by))
                continue
            if rank in allowance.applied or (
                rank not in decided and len(allowance.applied) < LIMIT
            ):
                allowance.applied.add(rank)
                allowance.cover[index] = (at - minus, entry)  # starts are sorted: it reaches on
                decided.setdefault(rank, Match(entry, at, at - minus))
            else:
                decided.setdefault(rank, Match(entry, at, at - minus, "limit"))
        kept = [*decided.items(), *((r, m) for r, m in inside.items() if r not in decided)]
        kept.sort(key=lambda item: (item[1].start, item[1].start - item[1].end, item[0]))
        return tuple(m for _, m in kept)


def check_text(
    entries: Iterable[Entry],
    texts: str | Sequence[str],
    *,
    unit: str = "element",
    case_sensitive: bool = True,
    from_lang: str | None = None,
    to_lang: str | None = None,
    host: str = "",
) -> CheckReport:
    """Play the limit of ``entries`` (those of ``from_lang`` / ``to_lang`` when given, exactly
    as the service spells them) on ``texts``: a string (each non-blank line an element) or a
    list of strings (each an element)."""
    elements = [t for t in split_lines(texts) if t.strip()] if isinstance(texts, str) else texts
    chosen = [
        e
        for e in entries
        if (from_lang is None or e.from_lang == from_lang)
        and (to_lang is None or e.to_lang == to_lang)
    ]
    segments = Matcher(chosen, case_sensitive=case_sensitive).segments(list(elements), unit)
    matched = {m.entry.id: m.entry for s in segments for m in s.matches}
    return CheckReport(
        segments, unit, matched, len(chosen), host, from_lang, to_lang, case_sensitive
    )


@dataclass(frozen=True)
class CheckReport(Rendered):
    """Each segment of the texts checked with the entries that match it, applied or not.

    ``entries`` holds every entry that matched, by id; ``checked`` is how many entries were
    matched against. An entry is *applied* (wherever it matches), *applied in some segments
    only*, or *never applied*: the three add up to ``len(entries)``.
    """

    segments: list[Segment] = field(default_factory=list)
    unit: str = "element"
    entries: dict[str, Entry] = field(default_factory=dict, repr=False)
    checked: int = 0
    host: str = ""
    from_lang: str | None = None
    to_lang: str | None = None
    case_sensitive: bool = True

    @property
    def matched(self) -> list[Segment]:
        """The segments that at least one entry matches."""
        return [s for s in self.segments if s.matches]

    def outcomes(self) -> dict[str, list[str]]:
        """Matched entry ids by outcome: ``applied`` (wherever they match), ``some`` (applied
        in some segments, not in others) and ``never``; lowest id first."""
        seen: dict[str, set[bool]] = {}
        for segment in self.segments:
            for m in segment.matches:
                seen.setdefault(m.entry.id, set()).add(m.applied)
        out: dict[str, list[str]] = {"applied": [], "some": [], "never": []}
        for entry_id in sorted(seen, key=id_order):
            kinds = seen[entry_id]
            out["some" if len(kinds) == 2 else "applied" if True in kinds else "never"].append(
                entry_id
            )
        return out

    @property
    def never_applied(self) -> list[str]:
        """Entries that match in the texts but are applied in no segment, lowest id first."""
        return self.outcomes()["never"]

    def to_json(self) -> dict[str, Any]:
        """What ``check --json`` prints: the ``unit``, each segment under ``sentences`` (the
        contract's name, whatever the unit), ``never_applied``, the matched ``entries`` (the
        service's field names) and the ``checked`` count."""
        return {
            "unit": self.unit,
            "case_sensitive": self.case_sensitive,
            "sentences": [s.to_json() for s in self.segments],
            "never_applied": self.never_applied,
            "entries": [e.to_service() for e in self.entries.values()],
            "checked": self.checked,
        }

    def __iter__(self) -> Iterator[Segment]:
        return iter(self.segments)

    def __len__(self) -> int:
        return len(self.segments)

    def __repr__(self) -> str:
        counts = ", ".join(f"{len(v)} {k}" for k, v in self.outcomes().items())
        return (
            f"CheckReport({count(len(self.segments), 'segment')} per {self.unit}, "
            f"{self.checked} entries checked: {counts})"
        )

    def __str__(self) -> str:
        return _report_text(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(_report_text(self, limit=20))  # a notebook shows the first segments

    def _repr_html_(self) -> str:
        return _report_html(self)


# -- how a report shows itself ------------------------------------------------------------------
# Only segments with a match are listed, each with its entries in the order the service takes
# them; HTML highlights the spans: applied green, not applied struck through.

_APPLIED = "background:#c6f6d5"
_SKIPPED = "background:#fde2c8;text-decoration:line-through"


def _noun(report: CheckReport) -> str:
    return "sentence" if report.unit == "sentence" else "element"


def _title(report: CheckReport) -> str:
    where = f" at {report.host}" if report.host else ""
    pair = ""
    if report.from_lang or report.to_lang:
        pair = f" {report.from_lang or '*'}\u2192{report.to_lang or '*'}"
    noun = _noun(report)
    matched = len(report.matched)
    found = report.outcomes()
    words = {
        "applied": "applied",
        "some": f"applied in some {noun}s only",
        "never": "never applied",
    }
    parts = [f"{len(found[k])} {words[k]}" for k in words if found[k]] or ["none applied"]
    return shown(
        f"{matched:,} of {count(len(report.segments), noun)} "
        f"{'matches' if matched == 1 else 'match'} {entries(len(report.entries))} "
        f"(of {report.checked:,}{pair} checked{where}): {', '.join(parts)} "
        f"(limit {LIMIT} per {report.unit})"
    )


def _label(report: CheckReport, number: int, segment: Segment) -> str:
    if report.unit != "sentence":
        return f"[{segment.element + 1}]"
    return f"[{segment.element + 1}.{number}]"


def _numbered(report: CheckReport) -> list[tuple[str, Segment]]:
    """The segments with a match, each with its label (``[2]``, sentence 3 of element 2
    ``[2.3]``)."""
    out, last, number = [], -1, 0
    for segment in report.segments:
        number = number + 1 if segment.element == last else 1
        last = segment.element
        if segment.matches:
            out.append((_label(report, number, segment), segment))
    return out


def _note(report: CheckReport, match: Match) -> str:
    if match.status == "limit":
        return f"not applied (limit {LIMIT} per {report.unit})"
    if match.status == "inside" and match.by is not None:
        return f"not applied (covered by entry {match.by.id}: {match.by.from_text})"
    return ""


def _entry(report: CheckReport, entry_id: str) -> str:
    entry = report.entries.get(entry_id)
    return shown(f"{entry_id}: {entry.describe() if entry is not None else ''}")


def _never(report: CheckReport, limit: int | None = None) -> list[str]:
    never = report.never_applied
    if not never:
        return []
    lines = [f"never applied in these texts ({len(never)})"]
    lines += [f"  {MARK['failure']} {_entry(report, i)}" for i in never[:limit]]
    if len(never[:limit]) < len(never):
        lines.append(f"  \u2026 and {len(never) - limit} more never applied")
    return lines


def _report_text(report: CheckReport, limit: int | None = None) -> str:
    """The title, then each segment with a match (the first ``limit`` when given) and its
    entries; then the entries never applied."""
    lines = [_title(report)]
    numbered = _numbered(report)
    for label, segment in numbered[:limit]:
        lines.append(f"  {label} {shown(segment.text.strip())}")
        for m in segment.matches[:limit]:
            note = _note(report, m)
            mark = MARK["success" if m.applied else "failure"]
            lines.append(f"    {mark} {_entry(report, m.entry.id)}{'  ' + note if note else ''}")
        if len(segment.matches[:limit]) < len(segment.matches):
            lines.append(f"    \u2026 and {len(segment.matches) - limit} more entries")
    if len(numbered[:limit]) < len(numbered):
        lines.append(f"  \u2026 and {len(numbered) - limit} more {_noun(report)}s with matches")
    return "\n".join(lines + [shown(line) for line in _never(report, limit)])


def highlighted(segment: Segment) -> str:
    """The segment as HTML: applied spans green, spans matched only by entries not applied
    struck through in orange; each span's title names the entries."""
    text, base = segment.text, segment.start
    state = [0] * len(text)
    names: list[list[str]] = [[] for _ in text]
    for match in segment.matches:
        for i in range(match.start - base, match.end - base):
            state[i] = max(state[i], 2 if match.applied else 1)
            names[i].append(match.entry.id)
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


def _segment_html(report: CheckReport, label: str, segment: Segment) -> str:
    items = []
    for m in segment.matches:
        kind = "success" if m.applied else "failure"
        note = f" \u2014 {escape(_note(report, m))}" if _note(report, m) else ""
        items.append(
            f'<li style="color:{COLOUR["success" if m.applied else "unknown"]}">{MARK[kind]} '
            f"{escape(_entry(report, m.entry.id))}{note}</li>"
        )
    return (
        f"<div><div>{label} {highlighted(segment)}</div>"
        f'<ul style="margin:0 0 0.4em 0">{"".join(items)}</ul></div>'
    )


def _report_html(report: CheckReport) -> str:
    """The title, each segment with a match (highlighted, then its entries), the entries never
    applied; within a notebook's bounds."""
    numbered = _numbered(report)
    parts = bounded(_segment_html(report, label, s) for label, s in numbered)
    if len(parts) < len(numbered):
        more = len(numbered) - len(parts)
        parts.append(f"<div>\u2026 and {more} more {_noun(report)}s with matches</div>")
    never = _never(report)
    if never:
        items = "".join(f"<li>{escape(line.strip())}</li>" for line in never[1:200])
        parts.append(f"<div><b>{escape(never[0])}</b><ul>{items}</ul></div>")
    return (
        f'<div class="dict-magics-check"><div><b>{escape(_title(report))}</b></div>'
        f"{''.join(parts)}</div>"
    )
