"""[9] The vendor's nonce rule: the same deletions against ``nonce_rule="increasing"`` (each
nonce greater than the key's last accepted one, 40005 otherwise) and ``"unique"`` (the old
lenient sandbox), side by side in one run.

Batches through the ``dict-magics delete`` command, as a user runs them: 400 ids with the
default settings, 400 ids with ``-w 16``, two processes x 300 ids at once on one key (all on
loopback, where the sandbox's threads reorder requests most), and 400 ids with ``-w 8`` behind
a 20 ms round trip (a delay proxy). Each
run gets a fresh sandbox process (the log holds every request). Reported per batch: the time
ratio increasing / unique (median over interleaved rounds), entries left and non-zero exits
(target 0), and the extra requests the strict rule cost (40005 answers, each re-sent at once).
"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import Any

from benchlib import (
    RESULTS,
    WORK,
    Mode,
    SandboxSpec,
    child_env,
    median,
    ratio_line,
    rotations,
    sandbox_process,
    section,
)

RULES = ("increasing", "unique")
TIME_TARGET = 1.3


def _batches(n: int) -> dict[str, tuple[int, float, list[list[str]]]]:
    """Each batch: the entries to seed, the round trip, and the argument lists of the
    processes run at once."""
    half = max(1, n * 3 // 4)
    ids = [str(i) for i in range(1, n + 1)]
    first, second = (
        [str(i) for i in range(1, half + 1)],
        [str(i) for i in range(half + 1, 2 * half + 1)],
    )
    return {
        f"{n} ids, default workers": (n, 0.0, [ids]),
        f"{n} ids, -w 16": (n, 0.0, [["-w", "16", *ids]]),
        f"2 processes x {half} ids": (2 * half, 0.0, [first, second]),
        f"{n} ids, -w 8, 20 ms round trip": (n, 0.02, [["-w", "8", *ids]]),
    }


def _run(rule: str, entries: int, rtt: float, args: list[list[str]]) -> dict[str, Any]:
    spec = SandboxSpec(entries, rtt=rtt, max_log=100_000, nonce_rule=rule)
    with sandbox_process(spec) as sandbox:
        # A data folder of the benchmark's own: snapshots, audit and the nonce state.
        env = child_env(**sandbox.env(), DICT_MAGICS_HOME=str(WORK / "nonce-rule-home"))
        started = time.perf_counter()
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "dict_magics", "delete", "--json", *a],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for a in args
        ]
        codes = [p.wait(timeout=600) for p in procs]
        elapsed = time.perf_counter() - started
        stats = sandbox.stats()
    return {
        "time": elapsed,
        "exits": sum(1 for c in codes if c != 0),
        "left": stats["left"],
        "retries": stats["codes"].get("40005", 0),
        "requests": sum(stats["operations"].values()),
    }


def bench_nonce_rule(mode: Mode) -> None:
    n = mode.bulk_ids
    rounds = max(1, mode.bulk_rounds)
    section("9. the vendor's nonce rule: increasing vs unique (dict-magics delete)")
    for name, (entries, rtt, args) in _batches(n).items():
        runs: dict[str, list[dict[str, Any]]] = {rule: [] for rule in RULES}
        for order in rotations(list(RULES), rounds):
            for rule in order:
                runs[rule].append(_run(rule, entries, rtt, args))
        strict, lenient = runs["increasing"], runs["unique"]
        ratio = median([r["time"] for r in strict]) / median([r["time"] for r in lenient])
        print(ratio_line(f"{name}: time increasing / unique", ratio, TIME_TARGET))
        left = max(r["left"] for r in strict)
        exits = sum(r["exits"] for r in strict)
        retries = [r["retries"] for r in strict]
        requests = [r["requests"] for r in strict]
        print(
            f"    strict: entries left (worst) {left}, non-zero exits {exits}, 40005 re-sends "
            f"{min(retries)}-{max(retries)} of {min(requests)}-{max(requests)} requests; "
            f"s: {median([r['time'] for r in strict]):.2f} vs "
            f"{median([r['time'] for r in lenient]):.2f}"
        )
        RESULTS[f"nonce_rule {name}"] = {
            "ratio": ratio,
            "left": left,
            "exits": exits,
            "retries": retries,
            "requests": requests,
        }
