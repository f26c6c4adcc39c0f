"""Which entries the service would apply to a text, offline: the ``Matcher`` that plays the
limit (per segment and language pair the 3 earliest matches, at one position the longer term
first, then the lower id; a match inside an applied term is covered), and the ``CheckReport``
it gives. ``impact`` uses the same matcher. The rule as users read it: docs/lint-and-check.md.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from itertools import groupby
from typing import Any, Literal, NamedTuple

from ..errors import UsageProblem
from .entry import Entry
from .lint import id_order
from .text import Outcomes, count, entries, escape

LIMIT = 3  # entries the service applies per unit, the earliest matches
UNITS = ("element", "request", "sentence")

_END = re.compile("[\u3002\uff01\uff1f]|[.!?](?=\\s|\\Z)")  # U+3002 U+FF01 U+FF1F
_LINE = re.compile("\r\n|\r|\n")
_DOTTED_I = str.maketrans({"\u0130": "i", "\u0131": "i"})


def fold(text: str) -> str:
    """``text`` with each character case-folded, one character for one (offsets stay), as
    ``re.IGNORECASE`` does: ẞ is ß, not ss; the Turkish ı and İ are i."""  # noqa: RUF002
    folded = text.casefold()
    if len(folded) != len(text):  # a character folds to several (ß, ẞ, İ): one by one
        one = (next((f for f in (c.casefold(), c.lower()) if len(f) == 1), c) for c in text)
        folded = "".join(one)
    return folded.translate(_DOTTED_I)


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` (``\\n``, ``\\r\\n`` or ``\\r`` ends one), as a file reads them."""
    return _LINE.split(text)


def split_sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text``: one ends after each 。！？ and after . ! ?
    before whitespace or the end of the text."""  # noqa: RUF002
    ends = [mark.end() for mark in _END.finditer(text)]
    return [(a, b) for a, b in zip([0, *ends], [*ends, len(text)], strict=True) if a < b]


def check_unit(unit: str) -> str:
    """``unit`` when it is one the rule knows, else ``UsageProblem`` naming them."""
    if unit not in UNITS:
        raise UsageProblem(f"the limit's unit must be one of {', '.join(UNITS)}, not {unit!r}.")
    return unit


class Match(NamedTuple):
    """One entry in one segment: where it counts (offsets in its element) and what became of
    it: ``applied``, ``limit`` or ``inside`` (``by`` an applied term, at every occurrence)."""

    entry: Entry
    start: int
    end: int
    status: Literal["applied", "limit", "inside"] = "applied"
    by: Entry | None = None

    @property
    def applied(self) -> bool:
        return self.status == "applied"


@dataclass(frozen=True)
class Segment:
    """An element, or a sentence of one (``start`` in the element), with its matches in order."""

    text: str
    element: int = 0
    start: int = 0
    matches: tuple[Match, ...] = ()

    @property
    def applied(self) -> list[str]:
        return [m.entry.id for m in self.matches if m.applied]

    @property
    def not_applied(self) -> list[str]:
        return [m.entry.id for m in self.matches if not m.applied]

    @property
    def applied_entries(self) -> list[Entry]:
        return [m.entry for m in self.matches if m.applied]

    def to_json(self) -> dict[str, Any]:
        """``{"text", "applied", "not_applied"}``, as ``check --json`` lists each segment."""
        return {"text": self.text.strip(), "applied": self.applied, "not_applied": self.not_applied}


class Engine(NamedTuple):
    """The engine's ``translation`` of one element and which matching entries it applied."""

    translation: str
    applied: list[str]
    not_applied: list[str]


class Matcher:
    """Entries ready to be matched: one Aho-Corasick automaton over their source terms."""

    def __init__(self, entries: Iterable[Entry], *, case_sensitive: bool = True) -> None:
        import ahocorasick

        self.case_sensitive = case_sensitive
        terms: dict[str, list[tuple[int, Entry, tuple[str, str]]]] = {}
        for rank, entry in enumerate(sorted(entries, key=lambda e: id_order(e.id))):
            if entry.from_text:
                pair = (entry.from_lang, entry.to_lang)
                terms.setdefault(self.key(entry.from_text), []).append((rank, entry, pair))
        self._automaton = ahocorasick.Automaton(ahocorasick.STORE_ANY)
        for term, held in terms.items():  # each term's entries, with their rank by id
            self._automaton.add_word(term, (len(term), held))
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
        keys = [self.key(t) for t in texts] if len(self._automaton) else None
        out = []
        for group in groups:
            applied: dict[tuple[str, str], set[int]] = {}  # one allowance per pair and unit
            for i, start, end in group:
                if unit == "sentence" and not texts[i][start:end].strip():
                    continue
                matches = self._play(keys[i], start, end, applied) if keys else ()
                out.append(Segment(texts[i][start:end], i, start, matches))
        return out

    def _play(
        self, key: str, start: int, end: int, applied: dict[tuple[str, str], set[int]]
    ) -> tuple[Match, ...]:
        """The matches of one segment of one element, ``applied`` the unit's allowances."""
        found = [
            (last + 1 - length, -length, rank, entry, pair)
            for last, (length, held) in self._automaton.iter(key, start, end)
            for rank, entry, pair in held
        ]
        found.sort()  # (start, -length, rank) is unique: entries are never compared
        decided: dict[int, Match] = {}
        inside: dict[int, Match] = {}
        cover: dict[tuple[str, str], tuple[int, Entry]] = {}  # how far applied terms reach
        for at, minus, rank, entry, pair in found:
            reach, by = cover.get(pair, (0, None))
            if at < reach:  # already translated as part of an applied term
                if rank not in decided and rank not in inside:
                    inside[rank] = Match(entry, at, at - minus, "inside", by)
                continue
            taken = applied.get(pair)
            if taken is None:
                taken = applied[pair] = set()
            if rank in taken or (rank not in decided and len(taken) < LIMIT):
                taken.add(rank)
                cover[pair] = (at - minus, entry)  # starts are sorted: it reaches further
                if rank not in decided:
                    decided[rank] = Match(entry, at, at - minus)
            elif rank not in decided:
                decided[rank] = Match(entry, at, at - minus, "limit")
        # Both in the service's order; at one position a decided entry outranks a covered one.
        matches = [*decided.values(), *(m for r, m in inside.items() if r not in decided)]
        return tuple(sorted(matches, key=lambda m: (m.start, m.start - m.end)))


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
    """Play the limit of ``entries`` on ``texts`` (a string: each non-blank line an element)."""
    elements = [t for t in split_lines(texts) if t.strip()] if isinstance(texts, str) else [*texts]
    chosen = [
        e for e in entries if from_lang in (None, e.from_lang) and to_lang in (None, e.to_lang)
    ]
    segments = Matcher(chosen, case_sensitive=case_sensitive).segments(elements, unit)
    matched = {m.entry.id: m.entry for s in segments for m in s.matches}
    asked = (from_lang, to_lang, case_sensitive, elements)
    return CheckReport(segments, unit, matched, len(chosen), host, *asked)


@dataclass(frozen=True)
class CheckReport(Outcomes):
    """Each segment with the entries that match it; ``checked``: how many were matched against."""

    segments: list[Segment] = field(default_factory=list)
    unit: str = "element"
    entries: dict[str, Entry] = field(default_factory=dict, repr=False)
    checked: int = 0
    host: str = ""
    from_lang: str | None = None
    to_lang: str | None = None
    case_sensitive: bool = True
    elements: list[str] = field(default_factory=list, repr=False)
    engine: list[Engine] | None = None  # with --translate: the engine's answer per element

    @property
    def matched(self) -> list[Segment]:
        return [s for s in self.segments if s.matches]

    def with_engine(self, translations: Sequence[str], entries: Iterable[Entry]) -> CheckReport:
        """This report with the engine's ``translations`` of its elements, judged on ``entries``."""
        pair = [e for e in entries if (e.from_lang, e.to_lang) == (self.from_lang, self.to_lang)]
        found = Matcher(pair, case_sensitive=False).segments(self.elements)
        engine, matched = [], dict(self.entries)
        for segment, translation in zip(found, translations, strict=True):
            out: dict[bool, list[str]] = {True: [], False: []}
            for m in segment.matches:
                to_text = m.entry.to_text
                applied = bool(to_text) and to_text in translation and to_text not in segment.text
                out[applied].append(m.entry.id)
                matched.setdefault(m.entry.id, m.entry)
            engine.append(Engine(translation, sorted(out[True], key=id_order), out[False]))
        return replace(self, engine=engine, entries=matched)

    def predicted(self) -> list[list[str]]:
        """The ids the prediction applies to each element, lowest first."""
        ids: list[set[str]] = [set() for _ in self.elements]
        for segment in self.segments:
            ids[segment.element].update(segment.applied)
        return [sorted(found, key=id_order) for found in ids]

    @property
    def disagreements(self) -> list[dict[str, Any]]:
        """The elements (``index`` from 0) where the engine applied others than predicted."""
        pairs = zip(self.predicted(), self.engine or [], strict=False)
        return [
            {"index": i, "predicted": ids, "engine": e.applied}
            for i, (ids, e) in enumerate(pairs)
            if ids != e.applied
        ]

    def outcomes(self) -> dict[str, list[str]]:
        """Matched ids by outcome (each once), lowest first: ``applied``, ``some``, ``never``."""
        seen: dict[str, set[bool]] = {}
        for segment in self.segments:
            for m in segment.matches:
                seen.setdefault(m.entry.id, set()).add(m.applied)
        out: dict[str, list[str]] = {"applied": [], "some": [], "never": []}
        for entry_id in sorted(seen, key=id_order):
            kinds = seen[entry_id]
            kind = "some" if len(kinds) == 2 else "applied" if True in kinds else "never"
            out[kind].append(entry_id)
        return out

    @property
    def never_applied(self) -> list[str]:
        return self.outcomes()["never"]

    def to_json(self) -> dict[str, Any]:
        """``check --json``: DESIGN's shape (each segment under ``sentences``, any unit)."""
        sentences, first = [s.to_json() for s in self.segments], set()
        for shape, segment in zip(sentences, self.segments, strict=True):
            if self.engine is not None and segment.element not in first:
                first.add(segment.element)
                shape["engine"] = self.engine[segment.element]._asdict()
        extra = {} if self.engine is None else {"disagreements": self.disagreements}
        return {
            "unit": self.unit,
            "case_sensitive": self.case_sensitive,
            "sentences": sentences,
            "never_applied": self.never_applied,
            "entries": [e.to_service() for e in self.entries.values()],
            "checked": self.checked,
            **extra,
        }

    def __repr__(self) -> str:
        counts = ", ".join(f"{len(v)} {k}" for k, v in self.outcomes().items())
        return f"CheckReport({len(self.segments)} per {self.unit}, {counts})"

    _css, _pretty = "check", 20  # a notebook shows the first segments

    def _kind(self) -> str:
        return "absent"  # a prediction: nothing was changed

    def _summary(self) -> str:
        where = f" at {self.host}" if self.host else ""
        langs = self.from_lang or self.to_lang
        pair = f" {self.from_lang or '*'}\u2192{self.to_lang or '*'}" * bool(langs)
        noun, matched = _noun(self), len(self.matched)
        words = ("applied", f"applied in some {noun}s only", "never applied")
        found = zip(self.outcomes().values(), words, strict=True)
        parts = ", ".join(f"{len(ids)} {w}" for ids, w in found if ids) or "none applied"
        return (
            f"{matched:,} of {count(len(self.segments), noun)} "
            f"{'matches' if matched == 1 else 'match'} {entries(len(self.entries))} "
            f"(of {self.checked:,}{pair} checked{where}): {parts} (limit {LIMIT} per {self.unit})"
        )

    def _items(self) -> list[tuple[Any, ...]]:
        """The segments with a match (each with its entries), the entries never applied, and
        with ``--translate`` what the engine and the prediction applied per element."""
        items: list[tuple[Any, ...]] = [
            ("", f"{_noun(self)}s with a match", "", [_segment(self, *n) for n in _numbered(self)])
        ]
        never = [("failure", _entry(self.entries[i]), "") for i in self.never_applied]
        items += [("", f"never applied in these texts ({len(never)})", "", never)] * bool(never)
        if self.engine is not None:
            items.append(_engine(self))
        return items


def _noun(report: CheckReport) -> str:
    return "sentence" if report.unit == "sentence" else "element"


def _numbered(report: CheckReport) -> list[tuple[str, Segment]]:
    """The segments with a match, labelled ``[2]`` (or ``[2.3]``: sentence 3 of element 2)."""
    out, seen = [], Counter[int]()
    for segment in report.segments:
        seen[segment.element] += 1
        number = f".{seen[segment.element]}" if report.unit == "sentence" else ""
        if segment.matches:
            out.append((f"[{segment.element + 1}{number}]", segment))
    return out


class _Highlighted(str):
    """A segment's label and text; in HTML (``__html__``), its matches highlighted."""

    html = ""

    def __html__(self) -> str:
        return self.html


def _segment(report: CheckReport, label: str, segment: Segment) -> tuple[Any, ...]:
    """``[2] text`` over ``✓ 4: クマ → Teddy (ja→en)``, each entry not applied saying why."""
    what = _Highlighted(f"{label} {segment.text.strip()}")
    what.html = f"{label} {highlighted(segment)}"
    under = []
    for m in segment.matches:
        why = ""
        if m.status == "limit":
            why = f"not applied (limit {LIMIT} per {report.unit})"
        elif m.by is not None:
            why = f"not applied (covered by entry {m.by.id}: {m.by.from_text})"
        under.append(("success" if m.applied else "failure", _entry(m.entry), why))
    return ("", what, "", under)


def _engine(report: CheckReport) -> tuple[Any, ...]:
    """Per element, what the engine and the prediction applied (and who alone applied what)."""
    predicted, engine, differ = report.predicted(), report.engine or [], len(report.disagreements)
    said = []
    for i, (ids, answer) in enumerate(zip(predicted, engine, strict=False)):
        if answer.applied or ids:
            only = sorted(set(answer.applied) ^ set(ids), key=id_order)
            who = [("", f"{_who(e, answer)} only: {_entry(report.entries[e])}", "") for e in only]
            note = f"engine applied {_ids(answer.applied)}; predicted {_ids(ids)}"
            kind = "success" if answer.applied == ids else "failure"
            said.append((kind, f"[{i + 1}] {answer.translation}", note, who))
    head = f"the engine's translations: {differ} of {count(len(engine), 'element')} "
    return ("", f"{head}differ{'s' * (differ == 1)} from the prediction", "", said)


def _who(entry_id: str, answer: Engine) -> str:
    return "the engine" if entry_id in answer.applied else "predicted"


def _entry(entry: Entry) -> str:
    return f"{entry.id}: {entry.describe()}"


def _ids(ids: list[str]) -> str:
    return ", ".join(ids) or "none"


_APPLIED = "background:#c6f6d5"
_SKIPPED = "background:#fde2c8;text-decoration:line-through"


def highlighted(segment: Segment) -> str:
    """The segment as HTML: applied spans green, the others struck through."""
    text, base = segment.text, segment.start
    marks: list[tuple[int, tuple[str, ...]]] = [(0, ())] * len(text)
    for m in segment.matches:
        for i in range(m.start - base, m.end - base):
            marks[i] = (max(marks[i][0], 2 if m.applied else 1), (*marks[i][1], m.entry.id))
    out, at = [], 0
    for (state, names), run in groupby(marks):
        size = len(list(run))
        piece, at = escape(text[at : at + size]), at + size
        if state:
            style, title = _APPLIED if state == 2 else _SKIPPED, escape(", ".join(names))
            piece = f'<mark style="{style}" title="entries {title}">{piece}</mark>'
        out.append(piece)
    return "".join(out)
