"""What a change to the dictionary does to a user's own texts: ``Impact`` on a corpus.

A corpus is a UTF-8 file of sample texts, one element per line. Its impact is, per line, the
entries applied before and after the change, under the limit's unit (``check``'s own
``Matcher``, so ``check`` on the corpus after the change gives the impact's "after"). Each line
is a text of its own: under ``request`` a line is its own request.

Only a line holding a source term the change touches (an added, deleted or changed entry's,
old or new) can change: one automaton over those terms finds them, and only they are matched
again. Lines that do not change are counted, not listed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import UsageProblem
from .entry import Entry
from .text import Rendered, bounded, count, escape, shown
from .textcheck import LIMIT, Matcher, Segment, check_unit, split_lines

MAX_CORPUS_BYTES = 64 * 1024 * 1024
"""A corpus larger than this is refused (as glossary files are)."""
SHOWN = 50  # changed lines a text view lists


def read_corpus(path: str | Path) -> list[str]:
    """The lines of the corpus at ``path`` (a byte-order mark dropped). Raises
    ``UsageProblem`` for a missing, too large or not UTF-8 file, naming the line."""
    path = Path(path).expanduser()
    try:
        if path.stat().st_size > MAX_CORPUS_BYTES:
            raise UsageProblem(
                f"{path} is larger than {MAX_CORPUS_BYTES // 2**20} MiB; a corpus holds sample "
                "texts: keep a sample."
            )
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageProblem(f"cannot read the corpus {path}: {exc.strerror or exc}.") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise UsageProblem(f"{path} is not UTF-8 text: line {line} is not.") from None
    lines = split_lines(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


_WORDS = {
    "new": "newly applied (a new entry)",
    "back": "newly applied (back under the limit)",
    "freed": "newly applied (no longer covered by a longer term)",
    "matches": "newly applied (its source term changed)",
    "deleted": "no longer applied (deleted)",
    "pushed": "no longer applied (pushed past the limit by {by})",
    "covered": "no longer applied (covered by {by})",
    "unmatched": "no longer applied (its source term changed)",
    "target": "target changed: {old} \u2192 {new}",
}


@dataclass(frozen=True)
class Reason:
    """Why one entry's place in one line changed: ``kind`` is ``new``, ``back`` (under the
    limit again), ``freed`` (no longer covered by a longer term), ``matches`` (its source term
    changed), ``deleted``, ``pushed`` (past the limit, ``by`` the earlier matches now applied),
    ``covered`` (``by`` a longer term), ``unmatched`` or ``target`` (``old`` → ``entry``)."""

    kind: str
    entry: Entry
    by: tuple[Entry, ...] = ()
    old: Entry | None = None

    def __str__(self) -> str:
        old = self.old.to_text if self.old is not None else ""
        words = _WORDS[self.kind].format(by=_list(self.by), old=old, new=self.entry.to_text)
        mark = "+" if words.startswith("newly") else "~" if self.kind == "target" else "-"
        return shown(f"{mark} {_named(self.entry)}: {words}")


@dataclass(frozen=True)
class ChangedLine:
    """A corpus line whose applied entries change: ``line`` counts from 1."""

    line: int
    text: str
    before: tuple[Entry, ...]
    after: tuple[Entry, ...]
    reasons: tuple[Reason, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "text": self.text,
            "before": [_entry_json(e) for e in self.before],
            "after": [_entry_json(e) for e in self.after],
        }


@dataclass(frozen=True)
class Impact(Rendered):
    """Per line of a corpus, the entries applied before and after a change (only the lines
    that change are listed; ``lines`` counts them all)."""

    lines: int
    changed: list[ChangedLine] = field(default_factory=list)
    unit: str = "element"
    case_sensitive: bool = True

    def to_json(self) -> dict[str, Any]:
        """DESIGN's ``"impact"``: ``{"lines", "changed": [{"line", "text", "before",
        "after"}]}``, entries in the service's field names (``id`` when known)."""
        return {"lines": self.lines, "changed": [c.to_json() for c in self.changed]}

    def to_pandas(self) -> Any:
        """One row per changed line: ``line``, ``text``, ``before``, ``after``, ``why``."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "Impact.to_pandas() needs pandas, which is not installed: pip install pandas "
                "(or use .changed or .to_json())."
            ) from None
        rows = [
            (c.line, c.text, _list(c.before), _list(c.after), "; ".join(map(str, c.reasons)))
            for c in self.changed
        ]
        return pd.DataFrame(rows, columns=["line", "text", "before", "after", "why"])

    def _title(self) -> str:
        changed, same = len(self.changed), self.lines - len(self.changed)
        return (
            f"impact on {count(self.lines, 'sample line')} (limit {LIMIT} per {self.unit}): "
            f"{count(changed, 'line')} {'changes' if changed == 1 else 'change'}, "
            f"{same:,} {'does' if same == 1 else 'do'} not"
        )

    def text(self, limit: int | None = SHOWN) -> str:
        """The title, then each changed line (the first ``limit``): before, after, why."""
        lines = [self._title()]
        for c in self.changed[:limit]:
            lines.append(f"  line {c.line}: {shown(_clip(c.text))}")
            lines.append(f"    before: {shown(_list(c.before)) or '(none)'}")
            lines.append(f"    after:  {shown(_list(c.after)) or '(none)'}")
            lines += [f"    {reason}" for reason in c.reasons]
        if len(self.changed[:limit]) < len(self.changed):
            lines.append(f"  \u2026 and {len(self.changed) - limit} more changed lines")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.text(limit=20))

    def _repr_html_(self) -> str:
        rows = bounded(
            f"<tr><td>{c.line}</td><td>{escape(_clip(c.text))}</td>"
            f"<td>{escape(_list(c.before))}</td><td>{escape(_list(c.after))}</td>"
            f"<td>{'<br>'.join(escape(r) for r in c.reasons)}</td></tr>"
            for c in self.changed
        )
        more = len(self.changed) - len(rows)
        tail = f"<div>\u2026 and {more} more changed lines</div>" if more else ""
        head = "".join(f"<th>{h}</th>" for h in ("line", "text", "before", "after", "why"))
        table = f"<table><tr>{head}</tr>{''.join(rows)}</table>" if rows else ""
        return f'<div class="dict-magics-impact"><b>{escape(self._title())}</b>{table}{tail}</div>'


def impact(
    before: Iterable[Entry],
    after: Iterable[Entry],
    corpus: str | Path | Sequence[str],
    *,
    unit: str = "element",
    case_sensitive: bool = True,
) -> Impact:
    """The impact on ``corpus`` (a path, or its lines) of the listing ``before`` becoming
    ``after`` (new entries without an id rank after every listed one, in their order)."""
    import ahocorasick

    lines = read_corpus(corpus) if isinstance(corpus, str | Path) else list(corpus)
    segmenting = "sentence" if check_unit(unit) == "sentence" else "element"
    before, after = list(before), list(after)
    old, new = (
        Matcher(before, case_sensitive=case_sensitive),
        Matcher(after, case_sensitive=case_sensitive),
    )
    touched = _touched(before, after)
    finder = ahocorasick.Automaton(ahocorasick.STORE_LENGTH)
    for term in {old.key(t) for t in touched if t}:
        finder.add_word(term)
    changed = []
    if len(finder):
        finder.make_automaton()
        deleted = {e.id for e in before} - {e.id for e in after}
        for number, line in enumerate(lines, 1):
            if next(finder.iter(old.key(line)), None) is None:
                continue
            was, now = old.segments([line], segmenting), new.segments([line], segmenting)
            if [s.applied_entries for s in was] != [s.applied_entries for s in now]:
                reasons = [r for b, a in zip(was, now, strict=True) for r in _why(b, a, deleted)]
                changed.append(
                    ChangedLine(number, line, _applied(was), _applied(now), tuple(reasons))
                )
    return Impact(len(lines), changed, unit, case_sensitive)


def after_change(
    listing: Iterable[Entry],
    *,
    adds: Iterable[Entry] = (),
    updates: Iterable[Entry] = (),
    deletes: Iterable[Entry] = (),
) -> list[Entry]:
    """The listing once ``updates`` (new terms under their ids), ``deletes`` and ``adds`` (no
    id yet, after every listed entry) are made."""
    new = {e.id: e for e in updates}
    gone = {e.id for e in deletes}
    kept = [new.get(e.id, e) for e in listing if e.id not in gone]
    return kept + [replace(e, id="") for e in adds]


class ImpactMixin:
    """A change not yet made (a sync plan, a dry run) that can show what it would do to the
    user's texts. It holds the listing it was made from (``listing``), so measuring sends
    nothing; a subclass says what the listing becomes (``_after``)."""

    __slots__ = ()
    listing: Sequence[Entry] | None

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
        """Per line of ``corpus`` (a path, or its lines), the entries applied before and after
        the change; nothing is sent. ``listing``: the one to measure from instead of the
        record's own."""
        held = self._held() if listing is None else listing
        if held is None:
            raise UsageProblem(
                f"this {type(self).__name__} holds no listing to measure from: pass listing=."
            )
        before = list(held)
        after = self._after(before)
        return impact(before, after, corpus, unit=unit, case_sensitive=case_sensitive)


def _touched(before: list[Entry], after: list[Entry]) -> set[str]:
    """The source terms of the entries the change adds, deletes or changes (old and new)."""
    was = {e.id: e for e in before}
    now = {e.id: e for e in after if e.id}
    terms = {e.from_text for e in before if now.get(e.id) != e}
    return terms | {e.from_text for e in after if not e.id or was.get(e.id) != e}


def _applied(segments: list[Segment]) -> tuple[Entry, ...]:
    return tuple(e for s in segments for e in s.applied_entries)


def _why(was: Segment, now: Segment, deleted: set[str]) -> list[Reason]:
    """What changed for each entry in one segment, matched by id (by terms when new)."""

    def key(entry: Entry) -> Any:
        return entry.id or entry.terms

    before = {key(m.entry): m for m in was.matches}
    after = {key(m.entry): m for m in now.matches}
    reasons = []
    for m in now.matches:
        old = before.get(key(m.entry))
        if not m.applied or (old is not None and old.applied and old.entry == m.entry):
            continue
        if old is not None and old.applied:
            reasons.append(Reason("target", m.entry, old=old.entry))
        else:
            kind = {"limit": "back", "inside": "freed"}.get(old.status if old else "", "matches")
            reasons.append(Reason("new" if not m.entry.id else kind, m.entry))
    for m in was.matches:
        new = after.get(key(m.entry))
        if not m.applied or (new is not None and new.applied):
            continue
        if m.entry.id in deleted:
            reasons.append(Reason("deleted", m.entry))
        elif new is None:
            reasons.append(Reason("unmatched", m.entry))
        elif new.status == "inside":
            reasons.append(Reason("covered", m.entry, (new.by,) if new.by else ()))
        else:
            pair = (m.entry.from_lang, m.entry.to_lang)
            by = [
                a.entry
                for a in now.matches
                if a.applied
                and (a.entry.from_lang, a.entry.to_lang) == pair
                and (a.start, a.start - a.end) <= (new.start, new.start - new.end)
                and not getattr(before.get(key(a.entry)), "applied", False)
            ]
            reasons.append(Reason("pushed", m.entry, tuple(by)))
    return reasons


def _named(entry: Entry) -> str:
    return f"{entry.describe()}, entry {entry.id}" if entry.id else entry.describe()


def _entry_json(entry: Entry) -> dict[str, str]:
    return entry.to_service(with_id=bool(entry.id))


def _list(entries: Sequence[Entry]) -> str:
    return ", ".join(f"{e.from_text} \u2192 {e.to_text}" for e in entries)


def _clip(text: str, size: int = 120) -> str:
    return text if len(text) <= size else text[:size] + "\u2026"
