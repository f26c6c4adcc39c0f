"""What is wrong in a dictionary, found from a listing alone: ``LintReport`` and its findings.
Each rule is one pass; ``overlap`` runs an Aho-Corasick automaton per pair, so it stays linear."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from operator import itemgetter
from typing import Any

from .entry import Entry
from .terms import MAX_TERM_CHARS, hidden_characters, language_problem, term_problem
from .text import Outcomes, count, dataframe, entries

KINDS = (
    "duplicate",
    "conflict",
    "near-duplicate",
    "too-long",
    "bad-language",
    "whitespace",
    "control",
    "overlap",
)
"""Every kind of finding, in the order a report lists them."""

_SHOWN = 3  # other terms a message names before "and N more"
_HOLDERS_NAMED = 10  # terms holding an inner term an overlap finding names (it counts all)

# Unicode's space separators (Zs); tabs and newlines are ``control`` findings.
_ZS = "[ \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]"
_LEAD = re.compile(f"^{_ZS}")
_TRAIL = re.compile(f"{_ZS}\\Z")
_SPACE_TROUBLE = re.compile(f"^{_ZS}|{_ZS}\\Z|{_ZS}{_ZS}")
_DOUBLE_SPACE = re.compile(f"({_ZS}){_ZS}+")


def id_order(entry_id: str) -> tuple[int, int, str]:
    """Sort key of an id: numbers numerically (``"9"`` before ``"10"``), then text. The service
    numbers entries as it adds them, so the lowest id is the oldest entry."""
    if entry_id.isascii() and entry_id.isdigit():
        return (0, int(entry_id), "")
    return (1, 0, entry_id)


def normalize_term(text: str) -> str:
    """``text`` as near-duplicates compare it: NFKC (folding widths), case folded, invisible
    characters dropped, whitespace collapsed and trimmed (full-width ``Invoice`` is ``invoice``)."""
    if text.isascii() and text.isprintable():
        return " ".join(text.casefold().split())
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    folded = text.casefold()
    if folded != text:
        folded = unicodedata.normalize("NFKC", folded)
    if not folded.isprintable():
        folded = "".join(ch for ch in folded if ch.isspace() or not hidden_characters(ch))
    elif " " not in folded:
        return folded  # printable and no space: nothing to trim or collapse
    return " ".join(folded.split())


@dataclass(frozen=True)
class Finding:
    """One problem of a ``kind`` (``KINDS``), its entries (lowest id first; an ``overlap``: the
    inner term's, then up to ten holding it), what is wrong, and a suggested ``fix``."""

    kind: str
    entry_ids: tuple[str, ...]
    message: str
    fix: str

    def to_json(self) -> dict[str, Any]:
        """``{"kind", "entry_ids", "message", "fix"}``, as ``dict-magics lint --json`` prints."""
        return {**asdict(self), "entry_ids": list(self.entry_ids)}


@dataclass(frozen=True)
class LintReport(Outcomes):
    """Every finding in a listing (``total``: entries checked), by kind in ``KINDS`` order;
    ``entries``: those the findings name, by id."""

    findings: list[Finding] = field(default_factory=list)
    total: int = 0
    host: str = ""
    entries: dict[str, Entry] = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        """True when nothing was found."""
        return not self.findings

    @property
    def duplicate_ids(self) -> list[str]:
        """The ids of every duplicate but the lowest of its group: what can go, nothing lost."""
        ids = {
            i
            for f in self.findings
            if f.kind == "duplicate"
            for i in f.entry_ids[1:]
            if i != f.entry_ids[0]  # an id the listing repeats is never offered for deletion
        }
        return sorted(ids, key=id_order)

    def by_kind(self) -> dict[str, list[Finding]]:
        """The findings grouped by kind (only kinds found), in the order of ``KINDS``."""
        groups: dict[str, list[Finding]] = {}
        for finding in self.findings:
            groups.setdefault(finding.kind, []).append(finding)
        return {kind: groups[kind] for kind in KINDS if kind in groups}

    @property
    def counts(self) -> dict[str, int]:
        """How many findings of each kind (every kind, zero included)."""
        groups = self.by_kind()
        return {kind: len(groups.get(kind, ())) for kind in KINDS}

    def ids(self, kind: str | None = None) -> list[str]:
        """Every entry id named by a finding (of ``kind`` when given), each once, lowest first."""
        found = {i for f in self.findings if kind is None or f.kind == kind for i in f.entry_ids}
        return sorted(found, key=id_order)

    def to_json(self) -> dict[str, Any]:
        """The shape ``dict-magics lint --json`` prints."""
        return {
            "findings": [f.to_json() for f in self.findings],
            "counts": self.counts,
            "total": self.total,
            "duplicate_ids": self.duplicate_ids,
        }

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame``, one row per finding (``.explode("entry_ids")``: per entry)."""
        rows = (f.to_json() for f in self.findings)
        return dataframe(rows, ("kind", "entry_ids", "message", "fix"), "LintReport")

    def __len__(self) -> int:
        return len(self.findings)

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.findings)

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}={n}" for k, n in self.counts.items() if n)
        return f"LintReport({len(self.findings)} findings in {self.total} entries: {counts})"

    _css, _pretty = "lint", 10  # a notebook shows the first findings of each kind

    def _kind(self) -> str:
        return "success" if self.ok else "failure"

    def _summary(self) -> str:
        checked = f"{entries(self.total)}{f' at {self.host}' if self.host else ''}"
        if self.ok:
            return f"no problems found in {checked}"
        counts = ", ".join(f"{n:,} {kind}" for kind, n in self.counts.items() if n)
        return f"{count(len(self), 'finding')} in {checked}: {counts}"

    def _items(self) -> list[tuple[Any, ...]]:
        """Each kind's findings with their fixes, then what the duplicates allow."""
        items: list[tuple[Any, ...]] = []
        for kind, found in self.by_kind().items():
            fixes = [("", f"{_ids(f)}: {f.message}", f"fix: {f.fix}") for f in found]
            items.append(("", f"{kind} ({len(found)})", "", fixes))
        if self.duplicate_ids:
            said = f"{entries(len(self.duplicate_ids))} can go with nothing lost"
            items.append(("", f"duplicate_ids: {said}", "each group keeps its lowest id"))
        return items


# -- the analysis ------------------------------------------------------------------------------


def lint_entries(entries: Iterable[Entry], host: str = "") -> LintReport:
    """Every finding of every kind in ``entries`` (a listing, or any entries)."""
    # Sorted by id once: every group below is then built lowest id first, as reports list it.
    ordered = sorted(entries, key=lambda e: id_order(e.id))
    rank = {entry.id: n for n, entry in enumerate(ordered)}
    by_source: dict[tuple[str, str, str], list[Entry]] = defaultdict(list)
    for entry in ordered:
        by_source[(entry.from_lang, entry.from_text, entry.to_lang)].append(entry)
    norms: dict[str, str] = {}
    found = [
        *_duplicates_and_conflicts(by_source),
        *_near_duplicates(by_source, norms),
        *_term_rules(ordered),
        *_overlaps(by_source, norms, rank),
    ]
    kinds = {kind: n for n, kind in enumerate(KINDS)}
    found.sort(key=lambda f: (kinds[f.kind], rank[f.entry_ids[0]]))
    named = {i for f in found for i in f.entry_ids}
    by_id = {e.id: e for e in ordered if e.id in named}
    return LintReport(found, len(ordered), host, by_id)


def _more(names: list[str], total: int | None = None) -> str:
    """The first names, and how many more of ``total`` (default: all of ``names``) there are."""
    total = len(names) if total is None else total
    shown = ", ".join(names[:_SHOWN])
    return shown + (f" and {total - _SHOWN} more" if total > _SHOWN else "")


def _duplicates_and_conflicts(by_source: dict[Any, list[Entry]]) -> Iterator[Finding]:
    """Entries with one source term in one pair: the same target (duplicates), or several."""
    for group in by_source.values():
        if len(group) < 2:
            continue
        targets: dict[str, list[str]] = {}
        for entry in group:
            targets.setdefault(entry.to_text, []).append(entry.id)
        for target, ids in targets.items():
            if len(ids) > 1:
                yield Finding(
                    "duplicate",
                    tuple(ids),
                    f"{len(ids)} entries hold the same terms: "
                    f"{group[0].from_text} \u2192 {target} ({group[0].pair})",
                    f"keep {ids[0]} (the oldest) and delete {_more(ids[1:])}",
                )
        if len(targets) > 1:
            listed = [f"{target!r} ({_more(ids)})" for target, ids in targets.items()]
            yield Finding(
                "conflict",
                tuple(e.id for e in group),
                f"{group[0].from_text!r} ({group[0].pair}) has {len(targets)} targets: "
                + _more(listed),
                "keep the entry with the right target and delete the others: which one "
                "the service applies is not defined",
            )


def _normalized(text: str, norms: dict[str, str]) -> str:
    """``normalize_term``, once per term per lint (near-duplicates and overlaps share it)."""
    key = norms.get(text)
    if key is None:
        key = norms[text] = normalize_term(text)
    return key


def _near_duplicates(by_source: dict[Any, list[Entry]], norms: dict[str, str]) -> Iterator[Finding]:
    groups: dict[tuple[str, str, str], list[list[Entry]]] = defaultdict(list)
    for (from_lang, text, to_lang), group in by_source.items():
        key = _normalized(text, norms)
        if key:
            groups[(from_lang, key, to_lang)].append(group)
    for spellings in groups.values():
        if len(spellings) < 2:
            continue
        spellings.sort(key=lambda group: id_order(group[0].id))
        listed = [f"{g[0].from_text!r} ({_more([e.id for e in g])})" for g in spellings]
        ids = sorted((e.id for g in spellings for e in g), key=id_order)
        yield Finding(
            "near-duplicate",
            tuple(ids),
            f"{len(spellings)} spellings of one source term ({spellings[0][0].pair}) "
            "differ only in width, case or spaces: " + _more(listed),
            "keep one spelling and delete the others, unless each is meant (the service "
            "matches source terms exactly, case included)",
        )


def _space_fix(text: str) -> str:
    return _DOUBLE_SPACE.sub(r"\1", text.strip())


def _suspect(text: str) -> bool:
    """False for a term that surely breaks no rule, as most do (the rules are slow)."""
    if len(text) > MAX_TERM_CHARS or not text.isprintable():
        return True
    if text.isascii():  # the only space separator in ASCII is the space itself
        return text[:1] == " " or text[-1:] == " " or "  " in text
    return _SPACE_TROUBLE.search(text) is not None


def _term_rules(ordered: list[Entry]) -> Iterator[Finding]:
    """too-long, control and whitespace per entry; bad-language once per wrong code."""
    bad_codes: dict[str, dict[str, None]] = defaultdict(dict)  # code -> its entries' ids
    for entry in ordered:
        for code in (entry.from_lang, entry.to_lang):
            if language_problem(code) is not None:  # a set lookup for a good code
                bad_codes[code][entry.id] = None
        yield from _term_findings(entry)
    for code, ids in bad_codes.items():
        hint, valid = "", "a valid code"
        if code.lower() == "zh":
            hint, valid = " (Chinese is zh-CN or zh-TW)", "zh-CN or zh-TW"
        said = f"{code!r} is not a language code the service takes{hint}: {entries(len(ids))}"
        fix = f"add these entries again with {valid} and delete them"
        yield Finding("bad-language", tuple(sorted(ids, key=id_order)), said, fix)


def spacing_findings(entry: Entry) -> list[Finding]:
    """The ``whitespace`` and ``control`` findings of one entry (what a sync warns of)."""
    return [f for f in _term_findings(entry) if f.kind in ("whitespace", "control")]


def _term_findings(entry: Entry) -> Iterator[Finding]:
    """The vendor's term rules (``terms.py``) and stray spaces, for each term of one entry."""
    for name, text in (("fromText", entry.from_text), ("toText", entry.to_text)):
        if _suspect(text):
            yield from _one_term(entry, name, text)


def _one_term(entry: Entry, name: str, text: str) -> Iterator[Finding]:
    ids, where = (entry.id,), entry.pair
    problem = term_problem(text, name)
    if problem is not None and problem.kind == "too-long":
        fix = f"shorten {name} to at most {MAX_TERM_CHARS} characters"
        yield Finding("too-long", ids, f"{problem.message} ({where})", fix)
    hidden = hidden_characters(text)
    if hidden:
        cleaned = _space_fix(
            "".join((" " if ch.isspace() else "") if hidden_characters(ch) else ch for ch in text)
        )
        said = f"{name} {text!r} holds control or invisible characters ({', '.join(hidden)})"
        yield Finding("control", ids, f"{said} ({where})", f"change {name} to {cleaned!r}")
    if not text.strip():
        fix = "delete the entry" if name == "fromText" else "give it a target, or delete it"
        said = f"{name} is empty or only spaces ({where}, id {entry.id})"
        yield Finding("whitespace", ids, said, fix)
        return
    what = [
        word for word, pattern in (("leading", _LEAD), ("trailing", _TRAIL)) if pattern.search(text)
    ]
    if _DOUBLE_SPACE.search(text.strip()):
        what.append("doubled")
    if what:
        said = f"{name} {text!r} has {' and '.join(what)} spaces ({where})"
        yield Finding("whitespace", ids, said, f"change {name} to {_space_fix(text)!r}")


def _overlaps(
    by_source: dict[tuple[str, str, str], list[Entry]], norms: dict[str, str], rank: dict[str, int]
) -> Iterator[Finding]:
    """Source terms inside other source terms of the same pair (covered where applied)."""
    by_pair: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(dict)
    for (from_lang, text, to_lang), group in by_source.items():
        if text:
            ids = by_pair[(from_lang, to_lang)].setdefault(text, [])
            ids += [e.id for e in group]
    for (from_lang, to_lang), terms in by_pair.items():
        if len(terms) < 2:
            continue
        # ``terms`` is in the order of each term's lowest id: holders are listed in that order.
        position = {term: n for n, term in enumerate(terms)}
        for inner, (holding, holders) in _contained(terms, norms).items():
            holders.sort(key=position.__getitem__)
            outer_ids = [i for t in holders for i in terms[t]]
            if len(outer_ids) > len(holders):  # a term with several entries: merge the ids
                outer_ids.sort(key=rank.__getitem__)
            names = [repr(t) for t in holders[:_SHOWN]]
            yield Finding(
                "overlap",
                (*terms[inner], *outer_ids),
                f"{inner!r} ({from_lang}\u2192{to_lang}) occurs inside {holding} other "
                f"source term{'s' if holding != 1 else ''}: {_more(names, holding)}",
                f"where {holders[0]!r} is applied, {inner!r} inside it is covered and not "
                "applied; where the longer term is past the limit of 3, the shorter one may "
                "apply instead: check a sample text, and delete whichever is not wanted",
            )


def _contained(terms: Iterable[str], norms: dict[str, str]) -> dict[str, tuple[int, list[str]]]:
    """For each term inside others: how many others hold it, and up to ``_HOLDERS_NAMED`` of them
    (spelling variants are left to near-duplicates). Terms come longest first, so a chain of
    nested prefixes is scanned once, not pair by pair."""
    import ahocorasick

    automaton = ahocorasick.Automaton()
    groups: dict[str, list[str]] = defaultdict(list)
    for term in terms:
        automaton.add_word(term, term)
        groups[_normalized(term, norms)].append(term)
    automaton.make_automaton()
    variants = {t: set(group) for group in groups.values() if len(group) > 1 for t in group}
    inside: dict[str, tuple[int, list[str]]] = {}
    for chain in _prefix_chains(sorted(automaton.keys(), reverse=True)):
        words, ends = _words_in(automaton, chain[0])
        sizes = [bisect_right(ends, len(term) - 1) for term in chain]  # words each one holds
        held = len(chain)
        for n, word in enumerate(words):
            while sizes[held - 1] <= n:  # the chain's first term holds every word
                held -= 1
            count = held - (chain[held - 1] == word)  # a term of the chain holds itself
            holders = chain[max(0, count - _HOLDERS_NAMED) : count]  # the shortest ones
            if word in variants:
                holders = [t for t in chain[:held] if t not in variants[word]]
                count = len(holders)
            if count:
                before, named = inside.get(word, (0, []))
                room = _HOLDERS_NAMED - len(named)
                named += holders[max(0, len(holders) - room) :] if room > 0 else []
                inside[word] = (before + count, named)
    return inside


def _prefix_chains(descending: list[str]) -> Iterator[list[str]]:
    """Runs of terms each a prefix of the run's first (longest) one."""
    chain: list[str] = []
    for term in descending:
        if chain and not chain[0].startswith(term):
            yield chain
            chain = []
        chain.append(term)
    if chain:
        yield chain


def _words_in(automaton: Any, text: str) -> tuple[list[str], list[int]]:
    """The words found in ``text``, each once, by where they first end; and those ends."""
    matches = list(automaton.iter(text))[::-1]
    first_end = dict(zip(map(itemgetter(1), matches), map(itemgetter(0), matches), strict=True))
    return sorted(first_end, key=first_end.__getitem__), sorted(first_end.values())


def _ids(finding: Finding, shown_ids: int = 8) -> str:
    ids = finding.entry_ids
    listed = ", ".join(ids[:shown_ids])
    return listed + (f" \u2026 ({len(ids)} entries)" if len(ids) > shown_ids else "")
