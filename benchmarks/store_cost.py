"""What keeping "nothing lost" costs: the audit log per result, and a large snapshot.

Run ``python benchmarks/store_cost.py`` (about 30 s) or ``--quick``. Everything is measured in
one run, side by side, in interleaved rounds, reported as medians (the machines are small and
shared, so absolute times drift; compare the columns of one run).

1. Audit recording per result, for a batch of deletions:
   - ``none``: building the results only (what a batch does with no audit at all);
   - ``per line + fsync``: every result written and fsynced on its own;
   - ``per line``: every result written on its own, no fsync;
   - ``batched + fsync``: ``AuditLog`` as shipped (one write and one fsync per flush);
   - ``batched``: the same without the fsync.
2. A 100,000-entry snapshot: ``write_snapshot`` (serialise, write, fsync, rename), its size,
   then what listing it costs (header line + line count) against reading it back whole.

Data goes to a temporary ``DICT_MAGICS_HOME`` under ``--dir`` (default: the system's temporary
folder; pass a folder on the disk you care about, fsync costs differ by file system).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dict_magics.models import DeleteResult, Entry


def _results(n: int) -> list[DeleteResult]:
    return [
        DeleteResult(
            "success",
            str(i),
            200,
            entry=Entry(str(i), "ja", f"金曜日{i}", "en", f"FRI{i}"),
            elapsed=0.01,
        )
        for i in range(n)
    ]


def _audit_variants(home: Path) -> dict[str, Callable[[int], None]]:
    from dict_magics.operations.audit import AuditLog

    log_path = home / "bench-audit.jsonl"

    def none(n: int) -> None:
        _results(n)

    def run(flush_every: int, fsync: bool) -> Callable[[int], None]:
        def variant(n: int) -> None:
            with AuditLog(log_path, flush_every=flush_every, flush_after=60.0, fsync=fsync) as log:
                for result in _results(n):
                    log.record(result, profile="default", host="api.example", operation="delete")

        return variant

    return {
        "none": none,
        "per line + fsync": run(1, True),
        "per line": run(1, False),
        "batched + fsync": run(200, True),
        "batched": run(200, False),
    }


def audit_section(home: Path, results: int, rounds: int) -> None:
    variants = _audit_variants(home)
    times: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    for round_no in range(rounds):
        order = names[round_no % len(names) :] + names[: round_no % len(names)]
        for name in order:
            started = time.perf_counter()
            variants[name](results)
            times[name].append((time.perf_counter() - started) / results)
    base = statistics.median(times["none"])
    print(f"\n1. audit recording, {results} results per batch, {rounds} rounds (median)")
    print(f"   {'variant':<18} {'us/result':>10} {'extra us':>9} {'x batched+fsync':>16}")
    shipped = statistics.median(times["batched + fsync"]) - base
    for name in names:
        per = statistics.median(times[name])
        extra = per - base
        ratio = "" if name == "none" else f"{extra / shipped:16.1f}"
        print(f"   {name:<18} {per * 1e6:10.1f} {extra * 1e6:9.1f} {ratio}")
    lines = sum(1 for _ in (home / "bench-audit.jsonl").open("rb"))
    print(f"   ({lines} lines written in all; a client-side request costs about 350 us of CPU)")


def snapshot_section(entries: int, rounds: int) -> None:
    from dict_magics.operations import snapshots

    data = [Entry(str(i), "ja", f"金曜日の用語{i}", "en", f"Friday {i}") for i in range(entries)]
    writes, encodes, lists, reads = [], [], [], []
    size = 0
    for _ in range(rounds):
        started = time.perf_counter()
        snap = snapshots.write_snapshot(
            data,
            profile="default",
            host="api.example",
            base_url="https://api.example",
            operation="purge",
        )
        writes.append(time.perf_counter() - started)
        started = time.perf_counter()
        snapshots._serialise({"format": snapshots.FORMAT}, data)
        encodes.append(time.perf_counter() - started)
        size = snap.path.stat().st_size
        started = time.perf_counter()
        (info,) = snapshots.list_snapshots()
        lists.append(time.perf_counter() - started)
        assert info.count == entries, info
        started = time.perf_counter()
        back = snapshots.read_snapshot(snap.path)
        reads.append(time.perf_counter() - started)
        assert len(back.entries) == entries
        snap.path.unlink()
    write = statistics.median(writes)
    print(f"\n2. snapshot of {entries:,} entries, {rounds} rounds (median)")
    print(
        f"   write_snapshot      {write * 1e3:8.1f} ms  ({write / entries * 1e6:.2f} us/entry, "
        f"{size / 1e6:.1f} MB, {size / entries:.0f} B/entry)"
    )
    encode = statistics.median(encodes)
    print(f"   of which encoding   {encode * 1e3:8.1f} ms  (the rest: write, fsync, rename)")
    print(f"   list_snapshots      {statistics.median(lists) * 1e3:8.1f} ms  (header + line count)")
    print(f"   read_snapshot       {statistics.median(reads) * 1e3:8.1f} ms  (parse and check all)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    parser.add_argument("--dir", type=Path, default=None, help="where to put the data")
    args = parser.parse_args(argv)
    results, rounds, entries, snap_rounds = (
        (200, 3, 10_000, 2) if args.quick else (1000, 9, 100_000, 5)
    )
    work = Path(tempfile.mkdtemp(prefix="dict-magics-store-", dir=args.dir))
    os.environ["DICT_MAGICS_HOME"] = str(work / "home")
    try:
        import dict_magics

        print(f"dict_magics from {Path(dict_magics.__file__).parent}; data in {work}")
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load}")
        audit_section(work, results, rounds)
        snapshot_section(entries, snap_rounds)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
