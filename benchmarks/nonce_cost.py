"""What a nonce costs: the in-process source against the one shared across processes.

``python benchmarks/nonce_cost.py`` prints microseconds per nonce, measured side by side in one
run (interleaved rounds, medians):

- the in-process ``NonceSource``;
- ``SharedNonceSource`` as shipped (a file lock, a read and a write of the state file for every
  nonce, so values increase across processes in the order they are drawn);
- both sources paced at one nonce every 2 ms, as a batch on a real network asks for them;
- two processes drawing from one key at once (the lock contended).

Each round uses a new access key (a new state file) and a new in-process counter; making a new
source's lock counts too. The data folder is a temporary one.
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
PER_ROUND = 1000
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

    def two_processes(n: int) -> float:
        pid = os.fork()
        if pid == 0:  # the other process, drawing from the same key meanwhile
            try:
                _tight(shared(n))
            finally:
                os._exit(0)
        try:
            return _tight(shared(n))
        finally:
            os.waitpid(pid, 0)

    variants: dict[str, Callable[[int], float]] = {
        "in-process NonceSource": lambda n: _tight(signing.NonceSource()),
        "shared, file lock per nonce": lambda n: _tight(shared(n)),
        "shared, two processes at once": two_processes,
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
