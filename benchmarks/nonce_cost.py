"""What a nonce costs: the in-process source against the one shared across processes.

``python benchmarks/nonce_cost.py`` prints microseconds per nonce, measured side by side in one
run (interleaved rounds, medians):

- the in-process ``NonceSource``;
- ``SharedNonceSource`` as shipped (a file lock per reserved block);
- the same with a file lock for every nonce (what the blocks save);
- both sources paced at one nonce every 2 ms, as a batch on a real network asks for them.

Each round uses a new access key (a new state file) and a new in-process counter, so no round
starts ahead of the clock; a new source's first block and making its lock count too. The data
folder is a temporary one.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROUNDS = 15
PER_ROUND = 1000  # at most 1,000 ahead of the clock: under the 3 s a source may run ahead
PACED = 50
PACE_S = 0.002


def _tight(take: Callable[[], str]) -> float:
    start = time.perf_counter()
    for _ in range(PER_ROUND):
        take()
    return (time.perf_counter() - start) / PER_ROUND * 1e6


def _paced(take: Callable[[], str]) -> float:
    spent = 0.0
    for _ in range(PACED):
        time.sleep(PACE_S)
        start = time.perf_counter()
        take()
        spent += time.perf_counter() - start
    return spent / PACED * 1e6


def main() -> None:
    os.environ["DICT_MAGICS_HOME"] = tempfile.mkdtemp(prefix="dict-magics-nonce-bench-")
    from dict_magics.service import signing

    def shared(n: int) -> Callable[[], str]:
        return signing.SharedNonceSource(f"AK-bench-{n}", local=signing.NonceSource())

    def lock_every_nonce(n: int) -> float:
        block, window = signing.BLOCK, signing.WINDOW_MS
        signing.BLOCK, signing.WINDOW_MS = 1, 1
        try:
            return _tight(shared(n))
        finally:
            signing.BLOCK, signing.WINDOW_MS = block, window

    variants: dict[str, Callable[[int], float]] = {
        "in-process NonceSource": lambda n: _tight(signing.NonceSource()),
        "shared, file lock per block": lambda n: _tight(shared(n)),
        "shared, file lock per nonce": lock_every_nonce,
        "in-process, one nonce per 2 ms": lambda n: _paced(signing.NonceSource()),
        "shared, one nonce per 2 ms": lambda n: _paced(shared(n)),
    }
    shared(-1)()  # import filelock and create the folder outside the rounds
    figures: dict[str, list[float]] = {name: [] for name in variants}
    for n in range(ROUNDS):
        names = list(variants)
        for name in names[n % len(names) :] + names[: n % len(names)]:
            figures[name].append(variants[name](len(names) * n + names.index(name)))
    base = statistics.median(figures["in-process NonceSource"])
    print(f"microseconds per nonce, median of {ROUNDS} interleaved rounds")
    print(f"({PER_ROUND} nonces a round in a tight loop; paced: {PACED} a round)")
    for name, values in figures.items():
        median = statistics.median(values)
        print(f"  {name:<30} {median:9.2f} us   x{median / base:7.1f}")


if __name__ == "__main__":
    main()
