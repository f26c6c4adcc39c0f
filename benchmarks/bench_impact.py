"""[12] Impact of a sync plan on a corpus, beside recomputing ``check`` twice (``python
benchmarks/run.py --only impact``).

Data: ``n`` generated entries (the sandbox's realistic terms, nine language pairs), a corpus of
``n`` lines each holding 1 to 6 of their source terms (a third of the lines two sentences), and
a plan of ``rows`` changes: 40 % adds (half of them longer terms holding a listed one, half
new terms), 40 % target updates, 20 % deletes.

- **ours**: ``plan.impact(corpus)``: one automaton over the terms the plan touches finds the
  lines that can change; only those are matched again, before and after.
- **naive**: ``EntryList.check`` of the whole corpus against the listing before and against the
  listing after, then the lines compared.

Both must list the same lines. Memory: the tracemalloc peak of each, in a round of its own.
"""

from __future__ import annotations

import functools
import gc
import random
import time
import tracemalloc
from typing import Any

from benchlib import QUICK, RESULTS, Mode, median, ratio_line, rotations, section

TARGET_S = 1.0


def impact_data(n: int, rows: int, nested: bool = False, seed: int = 5) -> tuple[Any, list[str]]:
    """A ``SyncPlan`` over ``n`` entries (holding its listing) and an ``n``-line corpus. The
    sandbox's terms, numbered ``会議 007`` (each holds one shorter term: ``会議``) or, ``nested``,
    as the sandbox numbers them (``会議 2`` is inside ``会議 23``: about 10 matches a line)."""
    from dict_magics.models import Entry, PlannedUpdate, SyncPlan
    from dict_magics.sandbox.store import BASE_TERMS

    rng = random.Random(seed)
    entries = []
    for i in range(1, n + 1):
        lap, slot = divmod(i - 1, len(BASE_TERMS))
        from_lang, from_text, to_lang, to_text = BASE_TERMS[slot]
        suffix = (f" {lap + 1}" if nested else f" {lap:03d}") if lap else ""
        entries.append(Entry(str(i), from_lang, from_text + suffix, to_lang, to_text + suffix))
    by_pair: dict[tuple[str, str], list[Entry]] = {}
    for e in entries:
        by_pair.setdefault((e.from_lang, e.to_lang), []).append(e)
    pairs = sorted(by_pair)
    lines = []
    for _ in range(n):
        held = by_pair[rng.choice(pairs)]
        terms = [rng.choice(held).from_text for _ in range(rng.randint(1, 6))]
        cut = rng.randint(1, len(terms)) if rng.random() < 0.33 else len(terms)
        lines.append(" ".join(terms[:cut]) + ". " + " ".join(terms[cut:]))
    changed = rng.sample(entries, rows * 3 // 5)
    adds = []
    for i in range(rows * 2 // 5):
        e = rng.choice(entries)
        term = f"{e.from_text} plus" if i % 2 else f"new term {i}"
        adds.append(Entry("", e.from_lang, term, e.to_lang, f"added {i}"))
    updates = [
        PlannedUpdate(e.id, e, Entry(e.id, *e.terms[:3], e.to_text + " (new)"), 0)
        for e in changed[: rows * 2 // 5]
    ]
    deletes = changed[rows * 2 // 5 :]
    plan = SyncPlan("plan.csv", "bench", "default", adds, [], updates, deletes, listing=entries)
    return plan, lines


def naive_impact(plan: Any, lines: list[str]) -> list[int]:
    """``check`` of every line against the listing before and after: the lines that differ."""
    from dict_magics.models import EntryList
    from dict_magics.models.impact import after_change

    listing = list(plan.listing)
    updates = [u.new for u in plan.updates]
    changed = after_change(listing, adds=plan.adds, updates=updates, deletes=plan.deletes)
    before, after = EntryList(listing).check(lines), EntryList(changed).check(lines)
    was = [[] for _ in lines]
    now = [[] for _ in lines]
    for report, into in ((before, was), (after, now)):
        for segment in report.segments:
            into[segment.element] += segment.applied_entries
    return [n for n, (a, b) in enumerate(zip(was, now, strict=True), 1) if a != b]


def _peak(work: Any) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _rounds(variants: dict[str, Any], rounds: int) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) seconds of each variant over interleaved rounds."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for order in rotations(list(variants), rounds):
        for name in order:
            gc.collect()
            wall, cpu = time.perf_counter(), time.process_time()
            variants[name]()
            times[name].append((time.perf_counter() - wall, time.process_time() - cpu))
    return {k: (median([w for w, _ in v]), median([c for _, c in v])) for k, v in times.items()}


def bench_impact(mode: Mode) -> None:
    n, rows, rounds = (1_000, 100, 2) if mode is QUICK else (10_000, 1_000, 5)
    section(f"[12] impact: a {rows:,}-row sync plan on a {n:,}-line corpus, {n:,} entries")
    figures: dict[str, Any] = {"entries": n, "lines": n, "rows": rows}
    for nested in (False, True):
        plan, lines = impact_data(n, rows, nested)
        result = plan.impact(lines)
        if [c.line for c in result.changed] != naive_impact(plan, lines):
            raise RuntimeError("the impact and check run twice disagree on the lines that change")
        variants = {
            "ours": functools.partial(plan.impact, lines),
            "naive": functools.partial(naive_impact, plan, lines),
        }
        if not nested:
            variants["sentence"] = functools.partial(plan.impact, lines, unit="sentence")
        t = _rounds(variants, rounds if not nested else max(2, rounds // 2))
        data = "nested terms (about 10 matches a line)" if nested else "terms nested once"
        print(f"  {data}: {len(result.changed):,} lines change")
        for name, words in (("ours", "plan.impact(corpus)"), ("naive", "check twice, every line")):
            print(f"    {words:<24} wall {t[name][0]:6.3f} s, CPU {t[name][1]:6.3f} s")
        print(
            ratio_line(
                f"impact{'_nested' if nested else ''}_naive/ours", t["naive"][0] / t["ours"][0]
            )
        )
        figures["nested" if nested else "seconds"] = {
            k: {"wall": w, "cpu": c} for k, (w, c) in t.items()
        }
        if not nested:
            peak = {name: _peak(variants[name]) for name in ("ours", "naive")}
            print(
                f"    sentence unit: wall {t['sentence'][0]:.3f} s; tracemalloc peak: ours "
                f"{peak['ours'] / 2**20:.1f} MiB, naive {peak['naive'] / 2**20:.1f} MiB"
            )
            print(
                ratio_line(
                    f"impact_{rows}_rows_{n}_lines/{TARGET_S:g}s", t["ours"][0] / TARGET_S, 1.0
                )
            )
            print(ratio_line("impact_peak_naive/ours", peak["naive"] / peak["ours"]))
            figures.update(changed=len(result.changed), peak_bytes=peak)
    RESULTS["impact"] = figures
