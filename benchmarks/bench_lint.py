"""[8] Lint of a large dictionary and the 3-per-sentence check of a long text, each beside plain
pure-Python ways of doing the same, measured in the same run (``python benchmarks/run.py --only
lint``).

- **lint**: ``EntryList.lint()`` on ``mode.lint_entries`` entries (the sandbox's realistic terms
  in nine language pairs, with duplicates, conflicts, width variants, stray spaces and bad
  codes mixed in); beside it, on a smaller slice, the naive way (every pair of entries
  compared), whose quadratic cost is then extrapolated to the full size; and the overlap step
  (source terms inside others) with the automaton against a pure-Python substring set.
- **nested prefixes** (issue 34, item 13): ``EntryList.lint()`` on ``mode.lint_entries`` source
  terms in chains of nested prefixes (each term the one before it and one more character, up
  to 255), once with varied characters and once with one character repeated (its worst case:
  every shorter term of the chain occurs many times inside each longer one).
- **check**: ``EntryList.check(text)`` of a text of ``mode.check_chars`` characters against
  ``mode.check_entries`` entries, beside (a) every sentence x every entry with ``str.find``,
  (b) one compiled regular-expression alternation, longest first (fast, but it finds no term
  inside another: the matches it misses are counted), (c) pure Python: each position of each
  sentence looked up in a set per term length.

Every variant must agree with ``EntryList.check`` (or say by how much it does not).
"""

from __future__ import annotations

import gc
import random
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

from benchlib import RESULTS, Mode, median, ratio_line, rotations, section

LINT_TARGET_S = 2.0
CHECK_TARGET_S = 1.0


# -- data --------------------------------------------------------------------------------------


def lint_entries(n: int, seed: int = 7) -> list[Any]:
    """``n`` entries: the sandbox's generated terms, about 4 % of them problems."""
    from dict_magics.models import Entry
    from dict_magics.sandbox.store import generated_entry

    rng = random.Random(seed)
    base = n - n // 25
    entries = [generated_entry(str(i)) for i in range(1, base + 1)]
    next_id = base + 1
    while len(entries) < n:
        e = entries[rng.randrange(base)]
        kind = rng.randrange(5)
        if kind == 0:  # a duplicate
            new = Entry(str(next_id), *e.terms)
        elif kind == 1:  # a conflict
            new = Entry(str(next_id), e.from_lang, e.from_text, e.to_lang, e.to_text + " (alt)")
        elif kind == 2:  # a width / case variant
            wide = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in e.from_text)
            new = Entry(str(next_id), e.from_lang, wide.upper(), e.to_lang, e.to_text)
        elif kind == 3:  # a trailing space
            new = Entry(str(next_id), e.from_lang, e.from_text + " ", e.to_lang, e.to_text)
        else:  # a control character
            new = Entry(str(next_id), e.from_lang, e.from_text + "\u200b", e.to_lang, e.to_text)
        entries.append(new)
        next_id += 1
    return entries


def check_data(entries_n: int, chars: int, seed: int = 11) -> tuple[list[Any], str]:
    """``entries_n`` generated entries and a text of at least ``chars`` characters whose
    sentences hold 2 to 7 of their source terms each, in the entries' languages."""
    from dict_magics.sandbox.store import generated_entry

    rng = random.Random(seed)
    entries = [generated_entry(str(i)) for i in range(1, entries_n + 1)]
    by_lang: dict[str, list[str]] = {}
    for e in entries:
        by_lang.setdefault(e.from_lang, []).append(e.from_text)
    langs = sorted(by_lang)
    parts: list[str] = []
    size = 0
    while size < chars:
        lang = rng.choice(langs)
        terms = [rng.choice(by_lang[lang]) for _ in range(rng.randint(2, 7))]
        if lang in ("ja", "zh"):
            sentence = "と".join(terms) + "について確認しました。"
        else:
            sentence = "Please check " + ", ".join(terms) + " and reply today."
        sentence += "\n" if rng.random() < 0.2 else " "
        parts.append(sentence)
        size += len(sentence)
    return entries, "".join(parts)


# -- plain ways of doing the same ------------------------------------------------------------


def nested_prefixes(n: int, repeated: bool = False, seed: int = 5) -> list[Any]:
    """``n`` en->de entries in chains of nested prefixes, 50 to 255 terms deep: ``ab``,
    ``abc``, ``abcd``... (``repeated``: ``x``, ``xx``, ``xxx``..., one character per chain)."""
    from dict_magics.models import Entry

    rng = random.Random(seed)
    out: list[Any] = []
    seen: set[str] = set()
    letter = 0x4E00
    while len(out) < n:
        letter += 1
        term = chr(letter) if repeated else "".join(rng.choice("abcdefghij") for _ in range(6))
        for _ in range(rng.randint(50, 255 - len(term))):
            if term not in seen:
                seen.add(term)
                out.append(Entry(str(len(out) + 1), "en", term, "de", "x"))
            term += chr(letter) if repeated else rng.choice("abcdefghij ")
            if len(out) == n:
                break
    return out


def naive_lint(entries: list[Any]) -> int:
    """Every pair of entries compared, as a first version would: duplicate, conflict,
    near-duplicate, overlap. Returns how many pairs were flagged."""
    from dict_magics.models.lint import normalize_term

    flagged = 0
    n = len(entries)
    for i in range(n):
        a = entries[i]
        for j in range(i + 1, n):
            b = entries[j]
            if a.from_lang != b.from_lang or a.to_lang != b.to_lang:
                continue
            if a.from_text == b.from_text:
                flagged += 1  # duplicate or conflict
            elif normalize_term(a.from_text) == normalize_term(b.from_text):
                flagged += 1
            elif a.from_text in b.from_text or b.from_text in a.from_text:
                flagged += 1
    return flagged


def contained_pure(terms: dict[str, list[str]]) -> dict[str, list[str]]:
    """The overlap step without the automaton: every substring of every term looked up."""
    from dict_magics.models.lint import normalize_term

    lengths = sorted({len(t) for t in terms})
    inside: dict[str, list[str]] = {}
    for term in terms:
        seen = set()
        for length in lengths:
            if length >= len(term):
                break
            for i in range(len(term) - length + 1):
                piece = term[i : i + length]
                if piece in terms and piece not in seen:
                    seen.add(piece)
                    if normalize_term(piece) != normalize_term(term):
                        inside.setdefault(piece, []).append(term)
    return inside


def _sentences(text: str) -> Iterator[str]:
    """The sentences ``check(text, unit="sentence")`` plays the rule on: each non-blank
    line's, blank ones left out."""
    from dict_magics.models.textcheck import split_lines, split_sentences

    for line in split_lines(text):
        if line.strip():
            yield from (line[a:b] for a, b in split_sentences(line) if line[a:b].strip())


def _ranked(entries: list[Any]) -> dict[str, list[tuple[int, Any]]]:
    from dict_magics.models.lint import id_order

    by_term: dict[str, list[tuple[int, Any]]] = {}
    for rank, e in enumerate(sorted(entries, key=lambda e: id_order(e.id))):
        by_term.setdefault(e.from_text, []).append((rank, e))
    return by_term


def _applied(found: list[tuple[int, int, int, Any]]) -> list[str]:
    """The rule on every occurrence ``(start, -length, rank, entry)``: earliest first, the
    first 3 entries per pair applied, a match inside an applied term skipped."""
    from dict_magics.models.textcheck import LIMIT

    found.sort(key=lambda row: row[:3])
    taken: dict[tuple[str, str], list[str]] = {}
    reach: dict[tuple[str, str], int] = {}
    applied = []
    for at, minus, _, e in found:
        pair = (e.from_lang, e.to_lang)
        ids = taken.setdefault(pair, [])
        if at >= reach.get(pair, 0) and (e.id in ids or len(ids) < LIMIT):
            if e.id not in ids:
                ids.append(e.id)
                applied.append(e.id)
            reach[pair] = at - minus
    return applied


def check_naive(entries: list[Any], text: str) -> list[list[str]]:
    """Every sentence x every entry, ``str.find`` for each occurrence."""
    by_term = _ranked(entries)
    out = []
    for sentence in _sentences(text):
        found = []
        for term, held in by_term.items():
            at = sentence.find(term)
            while at >= 0:
                found += [(at, -len(term), rank, e) for rank, e in held]
                at = sentence.find(term, at + 1)
        out.append(_applied(found))
    return out


def check_regex(entries: list[Any], text: str) -> tuple[list[list[str]], int]:
    """One alternation, longest first, ``finditer`` per sentence (no match inside another)."""
    by_term = _ranked(entries)
    pattern = re.compile("|".join(re.escape(t) for t in sorted(by_term, key=len, reverse=True)))
    out, matches = [], 0
    for sentence in _sentences(text):
        found = [
            (m.start(), -len(m.group()), rank, e)
            for m in pattern.finditer(sentence)
            for rank, e in by_term[m.group()]
        ]
        matches += len({row[3] for row in found})
        out.append(_applied(found))
    return out, matches


def check_buckets(entries: list[Any], text: str) -> list[list[str]]:
    """Pure Python without a quadratic scan: each position, each term length, a set lookup."""
    by_term = _ranked(entries)
    lengths = sorted({len(t) for t in by_term})
    out = []
    for sentence in _sentences(text):
        found = []
        for i in range(len(sentence)):
            for length in lengths:
                if i + length > len(sentence):
                    break
                piece = sentence[i : i + length]
                if piece in by_term:
                    found += [(i, -length, rank, e) for rank, e in by_term[piece]]
        out.append(_applied(found))
    return out


# -- the section -----------------------------------------------------------------------------


def _time(
    variants: dict[str, Callable[[], Any]], rounds: int, once: set[str]
) -> dict[str, list[float]]:
    """Interleaved rounds; the variants in ``once`` (too slow to repeat) run in round 1 only."""
    times: dict[str, list[float]] = {name: [] for name in variants}
    for number, order in enumerate(rotations(list(variants), rounds)):
        for name in order:
            if name in once and number:
                continue
            gc.collect()
            started = time.perf_counter()
            variants[name]()
            times[name].append(time.perf_counter() - started)
    return times


def _duration(seconds: float) -> str:
    return f"{seconds / 60:,.0f} min" if seconds >= 120 else f"{seconds:,.1f} s"


def _agree(ours: dict[str, tuple[int, list[str]]], pure: dict[str, list[str]]) -> bool:
    """Whether the automaton's counts match the substring sets', naming only real holders."""
    return {inner: count for inner, (count, _) in ours.items()} == {
        inner: len(outers) for inner, outers in pure.items()
    } and all(set(named) <= set(pure[inner]) for inner, (_, named) in ours.items())


def long_phrases(count: int, seed: int = 3) -> list[Any]:
    """``count`` en->de entries with long source phrases (20 to 255 characters): the lengths a
    glossary of clauses brings, which the pure-Python ways pay for once per distinct length."""
    from dict_magics.models import Entry

    rng = random.Random(seed)
    words = "terms conditions delivery payment warranty liability clause party notice".split()
    out = []
    for i in range(count):
        size = rng.randint(20, 255)
        phrase = ""
        while len(phrase) < size:
            phrase += rng.choice(words) + " "
        out.append(Entry(f"L{i}", "en", phrase[:size].strip(), "de", "x"))
    return out


def bench_lint(mode: Mode) -> None:
    from dict_magics.models import EntryList
    from dict_magics.models.lint import _contained

    n, small = mode.lint_entries, mode.lint_naive_entries
    section(
        f"[8] lint of {n:,} entries; check of {mode.check_chars:,} chars vs "
        f"{mode.check_entries:,} entries"
    )
    entries = lint_entries(n)
    listing = EntryList(entries)
    sliced = EntryList(entries[:: max(1, n // small)][:small])
    report = listing.lint()
    print(f"  {n:,} entries: {len(report.findings):,} findings, {report.counts}")
    terms: dict[str, list[str]] = {}
    for e in entries:
        if (e.from_lang, e.to_lang) == ("ja", "en"):
            terms.setdefault(e.from_text, []).append(e.id)
    if not _agree(_contained(terms, {}), contained_pure(terms)):
        raise RuntimeError("the automaton and the substring sets disagree on overlaps")
    variants = {
        "ours": listing.lint,
        "ours_small": sliced.lint,
        "naive_small": lambda: naive_lint(sliced.entries),
        "overlap_automaton": lambda: _contained(terms, {}),
        "overlap_pure": lambda: contained_pure(terms),
    }
    times = _time(variants, mode.lint_rounds, once={"naive_small"})
    t = {k: median(v) for k, v in times.items()}
    scale = (n / len(sliced)) ** 2
    print(f"  {mode.lint_rounds} interleaved rounds (medians; the naive scan once)")
    print(f"  EntryList.lint(), {n:,} entries:          {t['ours']:8.3f} s")
    print(f"  EntryList.lint(), {len(sliced):,} entries:           {t['ours_small']:8.3f} s")
    print(
        f"  naive pairwise, {len(sliced):,} entries:             {t['naive_small']:8.3f} s "
        f"(x{scale:,.0f} for {n:,}: about {_duration(t['naive_small'] * scale)})"
    )
    print(
        f"  overlap step, {len(terms):,} ja->en terms: automaton {t['overlap_automaton']:.3f} s,"
        f" pure-Python substring sets {t['overlap_pure']:.3f} s"
    )
    print(ratio_line(f"lint_{n}_seconds/{LINT_TARGET_S:g}s", t["ours"] / LINT_TARGET_S, 1.0))
    print(ratio_line(f"lint_naive/ours_at_{len(sliced)}", t["naive_small"] / t["ours_small"]))
    print(ratio_line("overlap_pure/automaton", t["overlap_pure"] / t["overlap_automaton"]))
    RESULTS["lint"] = {
        "entries": n,
        "findings": len(report.findings),
        "seconds": t,
        "naive_entries": len(sliced),
        "naive_extrapolated_seconds": t["naive_small"] * scale,
    }
    _bench_nested(mode)
    _bench_check(mode)


def _bench_nested(mode: Mode) -> None:
    """One run each (the old code took minutes on the repeated chains)."""
    from dict_magics.models import EntryList

    n = mode.lint_entries
    for repeated in (False, True):
        listing = EntryList(nested_prefixes(n, repeated))
        gc.collect()
        started = time.perf_counter()
        report = listing.lint()
        took = time.perf_counter() - started
        what = "one repeated character" if repeated else "varied characters"
        overlaps = report.counts["overlap"]
        ids = sum(len(f.entry_ids) for f in report.findings)
        print(
            f"  nested prefixes ({what}), {n:,} entries: lint {took:.2f} s, "
            f"{overlaps:,} overlap findings naming {ids:,} ids"
        )
        name = "repeated" if repeated else "varied"
        print(
            ratio_line(f"lint_nested_{name}_{n}_seconds/{LINT_TARGET_S:g}s", took / LINT_TARGET_S)
        )
        RESULTS[f"lint_nested_{name}"] = {"entries": n, "seconds": took, "ids": ids}


def _bench_check(mode: Mode) -> None:
    from dict_magics.models import EntryList
    from dict_magics.models.lint import _contained

    entries, text = check_data(mode.check_entries, mode.check_chars)
    listing = EntryList(entries)
    report = listing.check(text, unit="sentence")
    ours = [s.applied for s in report.segments]
    matches = sum(len(s.matches) for s in report.segments)
    size = len(text.encode("utf-8"))
    print(
        f"  text: {len(text):,} characters ({size / 1024:,.0f} KiB UTF-8), "
        f"{len(report.segments):,} sentences, {matches:,} matches, "
        f"{sum(len(s.not_applied) for s in report.segments):,} not applied"
    )
    if check_buckets(entries, text) != ours:
        raise RuntimeError("the pure-Python matcher disagrees with EntryList.check")
    longer = entries + long_phrases(len(entries) // 50)
    long_listing = EntryList(longer)
    long_terms = {e.from_text: [e.id] for e in longer if (e.from_lang, e.to_lang) == ("en", "de")}
    naive_result: list[Any] = []
    regex_result: list[Any] = []
    variants = {
        "ours": lambda: listing.check(text, unit="sentence"),
        "naive": lambda: naive_result.append(check_naive(entries, text)),
        "regex": lambda: regex_result.append(check_regex(entries, text)),
        "buckets": lambda: check_buckets(entries, text),
        "ours_long": lambda: long_listing.check(text, unit="sentence"),
        "buckets_long": lambda: check_buckets(longer, text),
        "overlap_automaton_long": lambda: _contained(long_terms, {}),
        "overlap_pure_long": lambda: contained_pure(long_terms),
    }
    times = _time(variants, mode.check_rounds, once={"naive"})
    if naive_result[0] != ours:
        raise RuntimeError("the naive matcher disagrees with EntryList.check")
    regex_applied, regex_matches = regex_result[0]
    differ = sum(a != b for a, b in zip(regex_applied, ours, strict=True))
    t = {k: median(v) for k, v in times.items()}
    print(f"  {mode.check_rounds} interleaved rounds (medians; the naive scan once)")
    print(f"  EntryList.check (Aho-Corasick):        {t['ours']:8.3f} s")
    print(f"  naive: sentences x entries, str.find:  {t['naive']:8.3f} s")
    print(
        f"  one regex alternation:                 {t['regex']:8.3f} s "
        f"(finds {regex_matches:,} of {matches:,} matches; {differ:,} sentences differ)"
    )
    print(f"  pure Python, set per term length:      {t['buckets']:8.3f} s")
    lengths = len({len(e.from_text) for e in longer})
    print(
        f"  with {len(longer) - len(entries):,} long phrases added ({lengths} distinct term "
        f"lengths): ours {t['ours_long']:.3f} s, pure Python {t['buckets_long']:.3f} s; "
        f"overlap step on {len(long_terms):,} en->de terms: automaton "
        f"{t['overlap_automaton_long']:.3f} s, substring sets {t['overlap_pure_long']:.3f} s"
    )
    print(
        ratio_line(
            f"check_{mode.check_chars}_seconds/{CHECK_TARGET_S:g}s", t["ours"] / CHECK_TARGET_S, 1.0
        )
    )
    print(ratio_line("check_naive/ours", t["naive"] / t["ours"]))
    print(ratio_line("check_regex/ours", t["regex"] / t["ours"]))
    print(ratio_line("check_pure_python/ours", t["buckets"] / t["ours"]))
    print(ratio_line("check_long_pure_python/ours", t["buckets_long"] / t["ours_long"]))
    print(
        ratio_line(
            "overlap_long_pure/automaton",
            t["overlap_pure_long"] / t["overlap_automaton_long"],
        )
    )
    RESULTS["check"] = {
        "entries": mode.check_entries,
        "chars": len(text),
        "bytes": size,
        "sentences": len(report.segments),
        "matches": matches,
        "regex_matches": regex_matches,
        "regex_sentences_differ": differ,
        "seconds": t,
    }
