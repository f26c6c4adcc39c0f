"""What a change to the dictionary does to a user's own texts (``Impact`` on a corpus), played
by ``check``'s ``Matcher`` on the lines holding a source term the change touches."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import UsageProblem
from .entry import Entry
from .text import Outcomes, clip, count, dataframe, shown
from .textcheck import LIMIT, Match, Matcher, Segment, check_unit, split_lines

MAX_CORPUS_BYTES = 64 * 1024 * 1024  # as glossary files: a corpus is a sample


def read_corpus(path: str | Path) -> list[str]:
    """The lines of the corpus at ``path``; ``UsageProblem`` if it cannot be read."""
    path = Path(path).expanduser()
    try:
        if path.stat().st_size > MAX_CORPUS_BYTES:
            raise UsageProblem(f"{path} is over {MAX_CORPUS_BYTES >> 20} MiB: keep a sample.")
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageProblem(f"cannot read the corpus {path}: {exc.strerror or exc}.") from None
    try:
        lines = split_lines(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise UsageProblem(f"{path} is not UTF-8 text: line {line} is not.") from None
    return lines[:-1] if lines[-1] == "" else lines


@dataclass(frozen=True)
class ChangedLine:
    """A corpus line (counted from 1) whose applied entries change, and why, in words."""

    line: int
    text: str
    before: tuple[Entry, ...]
    after: tuple[Entry, ...]
    reasons: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Entries in the service's field names, ``id`` when known (not yet for an add)."""
        before = [e.to_service(with_id=bool(e.id)) for e in self.before]
        after = [e.to_service(with_id=bool(e.id)) for e in self.after]
        return {"line": self.line, "text": self.text, "before": before, "after": after}


@dataclass(frozen=True)
class Impact(Outcomes):
    """Per changed line of a corpus, the entries applied before and after a change."""

    lines: int
    changed: list[ChangedLine] = field(default_factory=list)
    unit: str = "element"
    _pretty = 20

    def to_json(self) -> dict[str, Any]:
        """DESIGN's ``"impact"`` shape."""
        return {"lines": self.lines, "changed": [c.to_json() for c in self.changed]}

    def rows(self) -> list[tuple[int, str, str, str, str]]:
        return [
            (c.line, c.text, _terms(c.before), _terms(c.after), "; ".join(c.reasons))
            for c in self.changed
        ]

    def to_pandas(self) -> Any:
        """One row per changed line."""
        headings = ("line", "text", "before", "after", "why")
        return dataframe(self.rows(), headings, "Impact", dtype=None)

    _css = "impact"

    def _kind(self) -> str:
        return "absent"  # a measure: nothing was sent

    def _summary(self) -> str:
        changed, same = len(self.changed), self.lines - len(self.changed)
        return (
            f"impact on {count(self.lines, 'sample line')} (limit {LIMIT} per {self.unit}): "
            f"{count(changed, 'line')} {'changes' if changed == 1 else 'change'}, "
            f"{same:,} {'does' if same == 1 else 'do'} not"
        )

    def _items(self) -> list[tuple[Any, ...]]:
        """Each changed line: the entries applied before and after, and why they differ."""
        items: list[tuple[Any, ...]] = []
        for c in self.changed:
            before, after = _terms(c.before) or "(none)", _terms(c.after) or "(none)"
            under = [("", f"before: {before}", ""), ("", f"after:  {after}", "")]
            under += [("", why, "") for why in c.reasons]
            items.append(("", f"line {c.line}: {clip(c.text, 120)}", "", under))
        return items

    def text(self, limit: int | None = 50) -> str:
        return super().text(limit)


def impact(
    before: Iterable[Entry],
    after: Iterable[Entry],
    corpus: str | Path | Sequence[str],
    *,
    unit: str = "element",
    case_sensitive: bool = True,
) -> Impact:
    """The impact on ``corpus`` (a path, or its lines) of ``before`` becoming ``after``."""
    import ahocorasick

    lines = read_corpus(corpus) if isinstance(corpus, str | Path) else list(corpus)
    cut = "sentence" if check_unit(unit) == "sentence" else "element"
    before, after = list(before), list(after)
    old = Matcher(before, case_sensitive=case_sensitive)
    new = Matcher(after, case_sensitive=case_sensitive)
    finder = ahocorasick.Automaton(ahocorasick.STORE_LENGTH)
    for term in _touched(before, after):
        finder.add_word(old.key(term))
    changed = []
    if len(finder):
        finder.make_automaton()
        gone = {e.id for e in before} - {e.id for e in after}
        for number, line in enumerate(lines, 1):
            if next(finder.iter(old.key(line)), None) is None:
                continue
            was, now = old.segments([line], cut), new.segments([line], cut)
            if [s.applied_entries for s in was] != [s.applied_entries for s in now]:
                why = [r for w, n in zip(was, now, strict=True) for r in _why(w, n, gone)]
                changed.append(ChangedLine(number, line, _applied(was), _applied(now), tuple(why)))
    return Impact(len(lines), changed, unit)


def after_change(
    listing: Iterable[Entry],
    *,
    adds: Iterable[Entry] = (),
    updates: Iterable[Entry] = (),
    deletes: Iterable[Entry] = (),
) -> list[Entry]:
    """The listing once ``updates``, ``deletes`` and ``adds`` (no id yet, last) are made."""
    new, gone = {e.id: e for e in updates}, {e.id for e in deletes}
    kept = [new.get(e.id, e) for e in listing if e.id not in gone]
    return kept + [replace(e, id="") for e in adds]


@dataclass(frozen=True)
class ImpactMixin(Outcomes):
    """A change not yet made (a sync plan, a dry run) holding the listing it was made from, so
    its impact sends nothing (``_after``: what the listing becomes); ``corpus_impact``: shown
    after it. Nothing happened yet: its outcome is ``absent``."""

    listing: Sequence[Entry] | None = field(default=None, repr=False, compare=False, kw_only=True)
    corpus_impact: Impact | None = field(default=None, repr=False, compare=False, kw_only=True)

    @property
    def ok(self) -> bool:
        return True

    def _held(self) -> Sequence[Entry] | None:
        return self.listing

    def _after(self, before: list[Entry]) -> list[Entry]:
        raise NotImplementedError

    def impact(
        self,
        corpus: str | Path | Sequence[str],
        *,
        unit: str = "element",
        case_sensitive: bool = True,
        listing: Sequence[Entry] | None = None,
    ) -> Impact:
        """Per line of ``corpus``, the entries applied before and after; nothing is sent."""
        held = self._held() if listing is None else listing
        if held is None:
            name = type(self).__name__
            raise UsageProblem(f"this {name} holds no listing to measure from: pass listing=.")
        before = list(held)
        return impact(before, self._after(before), corpus, unit=unit, case_sensitive=case_sensitive)

    def with_impact(self, corpus: str | Path | Sequence[str], **how: Any) -> Any:
        """This record with its impact on ``corpus`` shown after it (``--corpus``)."""
        return replace(self, corpus_impact=self.impact(corpus, **how))

    def _kind(self) -> str:
        return "absent"

    def _tail(self, html: bool) -> str:
        """The impact on the corpus, shown after the record (trusted HTML when ``html``)."""
        if self.corpus_impact is None:
            return ""
        return self.corpus_impact._repr_html_() if html else f"\n{self.corpus_impact}"


def _touched(before: list[Entry], after: list[Entry]) -> set[str]:
    """The source terms of the entries the change adds, deletes or changes (old and new)."""
    was, now = {e.id: e for e in before}, {e.id: e for e in after if e.id}
    terms = {e.from_text for e in before if now.get(e.id) != e}
    return {t for t in terms | {e.from_text for e in after if was.get(e.id) != e} if t}


def _applied(segments: list[Segment]) -> tuple[Entry, ...]:
    return tuple(e for s in segments for e in s.applied_entries)


def _why(was: Segment, now: Segment, gone: set[str]) -> list[str]:
    """In words, what changed for each entry of one segment (by id; by terms when new)."""
    before = {m.entry.id or m.entry.terms: m for m in was.matches}
    after = {m.entry.id or m.entry.terms: m for m in now.matches}
    out = []
    for m in now.matches:
        old = before.get(m.entry.id or m.entry.terms)
        if old is not None and old.applied and m.applied and old.entry != m.entry:
            change = f"{old.entry.to_text} \u2192 {m.entry.to_text}"
            out.append(f"~ {_named(m.entry)}: target changed: {change}")
        elif m.applied and (old is None or not old.applied):
            why = "back under the limit" if old is not None else "its source term changed"
            why = "no longer covered by another term" if old is not None and old.by else why
            out.append(
                f"+ {_named(m.entry)}: newly applied ({why if m.entry.id else 'a new entry'})"
            )
    for m in was.matches:
        new = after.get(m.entry.id or m.entry.terms)
        if m.applied and (new is None or not new.applied):
            why = _lost(m, new, now, before, gone)
            out.append(f"- {_named(m.entry)}: no longer applied ({why})")
    return [shown(line) for line in out]


def _lost(m: Match, new: Match | None, now: Segment, before: dict, gone: set[str]) -> str:
    """Why an entry applied before is not applied after."""
    if m.entry.id in gone:
        return "deleted"
    if new is None:
        return "its source term changed"
    if new.by is not None:
        return f"covered by {_terms([new.by])}"
    pushers = [  # applied now, earlier in its pair, and not applied before
        a.entry
        for a in now.matches
        if a.applied
        and (a.entry.from_lang, a.entry.to_lang) == (m.entry.from_lang, m.entry.to_lang)
        and (a.start, a.start - a.end) <= (new.start, new.start - new.end)
        and not getattr(before.get(a.entry.id or a.entry.terms), "applied", False)
    ]
    return f"pushed past the limit by {_terms(pushers)}"


def _named(entry: Entry) -> str:
    return f"{entry.describe()}, entry {entry.id}" if entry.id else entry.describe()


def _terms(entries: Sequence[Entry]) -> str:
    return ", ".join(f"{e.from_text} \u2192 {e.to_text}" for e in entries)
