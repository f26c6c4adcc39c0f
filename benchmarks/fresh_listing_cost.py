"""What a fresh listing before every delete costs (issue 22, item 6), and the purge's window.

A snapshot must hold the service's terms at the moment of the delete, so a delete lists the
dictionary afresh instead of trusting a listing cached for up to 60 s. This measures, side by
side in interleaved rounds against the sandbox on loopback (medians, ms per one-id delete):

- ``delete``: a one-id delete as shipped (fresh listing, snapshot, DELETE);
- ``listing``: the listing alone (what was saved per delete while the cache was fresh);
- ``no snapshot``: the DELETE alone (``snapshot=False``), for scale;

for dictionaries of several sizes, then the purge window: from the last listing's answer to the
purge request reaching the service (the sandbox logs when it handled it).

Run ``python benchmarks/fresh_listing_cost.py`` (``--quick`` for fewer rounds).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dict_magics.operations.context import OperationSettings
from dict_magics.operations.delete import delete
from dict_magics.operations.listing import CACHE
from dict_magics.operations.purge import purge
from dict_magics.sandbox import SandboxServer
from dict_magics.service.client import DictionaryClient


def _per_delete(size: int, rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {"delete": [], "listing": [], "no snapshot": []}
    with SandboxServer(size + rounds * 3) as box:
        client = DictionaryClient(box.url, box.access_key, box.secret_key)
        settings = OperationSettings()
        next_id = iter(range(1, size + rounds * 3 + 1))
        try:
            for _ in range(rounds):
                start = time.perf_counter()
                assert delete(settings, [str(next(next_id))], client=client).ok
                times["delete"].append(time.perf_counter() - start)
                start = time.perf_counter()
                CACHE.fetch(client, "default")
                times["listing"].append(time.perf_counter() - start)
                start = time.perf_counter()
                assert delete(settings, [str(next(next_id))], client=client, snapshot=False).ok
                times["no snapshot"].append(time.perf_counter() - start)
        finally:
            client.close()
    return {k: statistics.median(v) * 1000 for k, v in times.items()}


def _purge_window(size: int, rounds: int) -> float:
    """Median ms from the last listing's answer to the sandbox handling the purge request."""
    windows = []
    for _ in range(rounds):
        with SandboxServer(size) as box:
            for name, value in box.env().items():
                os.environ[name] = value
            purge(OperationSettings(), yes=True)
            listed = next(r.at for r in box.requests if r.method == "GET")
            purged = next(r.at for r in box.requests if r.operation == "purge")
            windows.append(purged - listed)
    return statistics.median(windows) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    rounds = 5 if args.quick else 15
    os.environ["DICT_MAGICS_HOME"] = tempfile.mkdtemp(prefix="dict-magics-bench-")
    print("one-id delete, ms (median); ratio = delete / (delete - listing)")
    print(f"{'entries':>8} {'delete':>8} {'listing':>8} {'no snap':>8}  ratio")
    for size in (100, 1_000, 10_000):
        m = _per_delete(size, rounds)
        cached = max(m["delete"] - m["listing"], 1e-6)
        print(
            f"{size:>8,} {m['delete']:>8.2f} {m['listing']:>8.2f} {m['no snapshot']:>8.2f}  "
            f"ratio fresh/cached = {m['delete'] / cached:.2f}"
        )
    for size in (100, 10_000):
        window = _purge_window(size, max(3, rounds // 3))
        print(f"purge window, {size:,} entries: {window:.1f} ms (last listing answered -> purge)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
