"""dict-magics benchmarks: ratios measured side by side in one run, never absolute promises.

Run ``python benchmarks/run.py`` (about 8 minutes) or ``python benchmarks/run.py --quick`` (a
smoke run, well under a minute). Every figure is a ratio of two things measured in the same run,
in interleaved rounds, reported as a median: the machines this runs on are small and shared, so
absolute times drift while ratios measured side by side stay meaningful.

1. ``%load_ext dict_magics`` against IPython's own shell start-up, in fresh processes, plus
   which modules the extension imported (none of requests, urllib3, ipywidgets, keyring).
2. ``%dict_delete`` per call, in a real InteractiveShell with its display computed and captured,
   against hand-signed ``requests.Session().delete`` calls to the same sandbox.
3. ``DictionaryClient.delete_entries`` on 400 ids against a sandbox answering in 20 ms, at 1, 4,
   8 and 16 workers, against the limit ``ids x latency / workers``; then the client's peak
   memory (tracemalloc, in its own process) as the id count grows.
4. The same bulk run through the ``dict-magics delete`` command, as a subprocess.
5. One ``%dict_delete`` per cell over TLS behind a 20 ms delay proxy, and on loopback, with the
   client kept between cells and without (the behaviour before), against a hand-signed loop on
   one reused ``requests.Session`` (``bench_network.py``).
6. 600 ids on 16 workers against a sandbox rate-limited to 100 requests a second: time against
   ``n / rate`` and the share of 429s, beside a naive thread pool (``bench_ratelimit.py``).
7. Listing 100,000 entries against ``requests.get`` + ``json.loads``; memory per entry; HTML
   size (``bench_listing.py``).
8. ``EntryList.lint()`` of 100,000 entries and ``EntryList.check`` of a 100,000-character text
   against 10,000 entries, beside naive and other pure-Python ways (``bench_lint.py``).
9. ``dict-magics delete`` of 400 ids (default workers, ``-w 16``, ``-w 8`` behind a 20 ms round
   trip) and two processes x 300 ids at once against the vendor's nonce rule and the old
   lenient one (``bench_nonce_rule.py``).
11. ``%dict_sync``: the plan of a 10,000-row glossary file beyond its listing, and 1,000 adds
    + 100 updates applied against a hand-written loop (``bench_glossary.py``).
12. ``plan.impact(corpus)``: a 1,000-row sync plan on a 10,000-line corpus against 10,000
    entries, beside ``check`` run twice over the corpus; memory (``bench_impact.py``).

The sandbox always runs in a process of its own, so its work and memory never count as the
client's. Internal ``_child-*`` sub-commands are those helper processes.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_bulk_restore import bench_bulk_restore, child_restore, child_token_delete
from bench_glossary import bench_glossary
from bench_impact import bench_impact
from bench_lint import bench_lint
from bench_listing import bench_listing, child_listing_memory
from bench_network import bench_network
from bench_nonce_rule import bench_nonce_rule
from bench_ratelimit import bench_rate_limit
from bench_targets import bench_targets
from bench_undo import bench_undo, child_undo, child_window
from benchlib import (
    FULL,
    QUICK,
    RESULTS,
    WORK,
    Mode,
    child_env,
    child_sandbox,
    environ,
    hand_headers,
    median,
    ratio_line,
    rotations,
    run_child,
    sandbox_process,
    section,
)

HEAVY = ("requests", "urllib3", "ipywidgets", "keyring")
LOAD_EXT_TARGET = 0.10
PER_DELETE_TARGET = 1.15
BULK_TARGET = 1.3
BULK_LATENCY = 0.02


# -- helper processes ------------------------------------------------------------------------


def child_load_ext(extension: str) -> None:
    """Time an InteractiveShell's creation, then ``%load_ext <extension>`` in it."""
    t0 = time.perf_counter()
    from IPython.core.interactiveshell import InteractiveShell

    t1, c1 = time.perf_counter(), time.process_time()
    shell = InteractiveShell.instance()
    t2, c2 = time.perf_counter(), time.process_time()
    before = set(sys.modules)
    shell.run_line_magic("load_ext", extension)
    t3, c3 = time.perf_counter(), time.process_time()
    new = sorted(set(sys.modules) - before)
    print(
        json.dumps(
            {
                "import": t1 - t0,
                "instance": t2 - t1,
                "shell": t2 - t0,
                "load_ext": t3 - t2,
                "instance_cpu": c2 - c1,
                "load_ext_cpu": c3 - c2,
                "new_modules": new,
                "magics": "dict_delete" in shell.magics_manager.magics["line"],
            }
        )
    )


def child_memory(count: int) -> None:
    """Peak traced memory of one ``delete_entries`` call on ``count`` ids (client side only)."""
    import tracemalloc

    from dict_magics.service.client import DictionaryClient

    url = os.environ["DICT_MAGICS_BASE_URL"]
    access_key = os.environ["DICT_MAGICS_ACCESS_KEY"]
    secret_key = os.environ["DICT_MAGICS_SECRET_KEY"]
    ids = [str(i) for i in range(1, count + 1)]  # the caller's input: not counted
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    started = time.perf_counter()
    client = DictionaryClient(url, access_key, secret_key)
    batch = client.delete_entries(ids, workers=8)
    elapsed = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1] - base
    succeeded = batch.succeeded
    client.close()
    del client
    gc.collect()
    with_results = tracemalloc.get_traced_memory()[0] - base
    del batch
    gc.collect()
    leftover = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    print(
        json.dumps(
            {
                "count": count,
                "succeeded": succeeded,
                "peak": peak,
                "results": with_results - leftover,
                "leftover": leftover,
                "elapsed": elapsed,
            }
        )
    )


# -- 1. %load_ext against shell start-up -------------------------------------------------------


EMPTY_EXTENSION = """\
\"\"\"No magics: the floor of IPython's own %load_ext.\"\"\"


def load_ipython_extension(ipython):
    pass
"""


def bench_load_ext(mode: Mode) -> None:
    section("[1] %load_ext dict_magics vs IPython shell start-up (fresh processes)")
    ext_dir = WORK / "empty_ext"
    ext_dir.mkdir(exist_ok=True)
    (ext_dir / "bench_empty_extension.py").write_text(EMPTY_EXTENSION, encoding="utf-8")
    path = os.pathsep.join(p for p in (str(ext_dir), os.environ.get("PYTHONPATH", "")) if p)
    env = child_env(PYTHONPATH=path)
    extensions = ["dict_magics", "bench_empty_extension"]
    for extension in extensions * 2:  # warm the bytecode cache and the IPython directory
        run_child("_child-load_ext", extension, env=env)
    runs: dict[str, list[dict[str, Any]]] = {e: [] for e in extensions}
    for order in rotations(extensions, mode.load_ext_runs):
        for extension in order:
            runs[extension].append(run_child("_child-load_ext", extension, env=env))
    ours, empty = runs["dict_magics"], runs["bench_empty_extension"]
    if not all(r["magics"] for r in ours):
        raise RuntimeError("%load_ext dict_magics did not register %dict_delete")
    shell = median([r["shell"] for r in ours])
    instance = median([r["instance"] for r in ours])
    load = median([r["load_ext"] for r in ours])
    floor = median([r["load_ext"] for r in empty])
    ratio = median([r["load_ext"] / r["shell"] for r in ours])
    ratio_instance = median([r["load_ext"] / r["instance"] for r in ours])
    ratio_floor = median([r["load_ext"] / r["shell"] for r in empty])
    ratio_cpu = median([r["load_ext_cpu"] / r["instance_cpu"] for r in ours])
    cpu = median([r["load_ext_cpu"] for r in ours])
    floor_cpu = median([r["load_ext_cpu"] for r in empty])
    new = ours[-1]["new_modules"]
    heavy = sorted({m.split(".")[0] for m in new if m.split(".")[0] in HEAVY})
    floor_modules = set(empty[-1]["new_modules"]) - {"bench_empty_extension"}
    ours_only = [m for m in new if m not in floor_modules]
    print(f"  {len(ours)} fresh processes per extension, interleaved, each timing both (medians)")
    for label, seconds in (
        ("shell start-up (import IPython + InteractiveShell.instance())", shell),
        ("  of which InteractiveShell.instance() alone", instance),
        ("%load_ext dict_magics", load),
        ("%load_ext of an empty extension (IPython's own floor)", floor),
    ):
        print(f"  {label + ':':63s} {seconds * 1e3:7.2f} ms")
    print(ratio_line("load_ext/instance", ratio_instance, LOAD_EXT_TARGET))
    print(
        f"  CPU time alone (less exposed to a busy machine): %load_ext {cpu * 1e3:.2f} ms "
        f"(an empty extension {floor_cpu * 1e3:.2f} ms)"
    )
    print(ratio_line("load_ext_cpu/instance_cpu", ratio_cpu))
    print(ratio_line("load_ext/shell_startup", ratio))
    print(ratio_line("empty_extension_load_ext/shell_startup", ratio_floor))
    print(f"  modules %load_ext dict_magics imported: {len(new)}")
    print(f"    also imported by an empty extension: {', '.join(sorted(floor_modules)) or 'none'}")
    print(f"    imported for dict_magics: {', '.join(ours_only)}")
    print(f"  heavy modules imported ({', '.join(HEAVY)}): {', '.join(heavy) or 'none'}")
    print(f"  heavy-import check: {'MISS' if heavy else 'PASS'}")
    RESULTS["load_ext"] = {
        "shell_ms": shell * 1e3,
        "instance_ms": instance * 1e3,
        "load_ext_ms": load * 1e3,
        "empty_extension_ms": floor * 1e3,
        "ratio": ratio,
        "ratio_instance": ratio_instance,
        "ratio_instance_cpu": ratio_cpu,
        "ratio_empty_extension": ratio_floor,
        "new_modules": new,
        "heavy": heavy,
    }


# -- 2. per-delete cost ------------------------------------------------------------------------


def bench_per_delete(mode: Mode) -> None:
    section("[2] per delete: %dict_delete vs hand-signed requests.Session().delete")
    import requests
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.display import display
    from IPython.utils.capture import capture_output

    from dict_magics.service.client import DictionaryClient
    from dict_magics.service.http import API_PREFIX

    calls = mode.delete_calls
    names = ["hand", "magic", "line_magic", "client", "hand_reused", "cell_magic", "cell_hand"]
    total = calls * len(names) * (mode.delete_rounds + 1) + 10
    with sandbox_process(total) as sandbox, environ(sandbox.env()):
        shell = InteractiveShell.instance()
        # Compute every mime type of a result, as a notebook front end asks for.
        shell.display_formatter.active_types = shell.display_formatter.format_types
        shell.run_line_magic("load_ext", "dict_magics")
        next_id = iter(range(1, total + 1)).__next__
        url, access_key, secret_key = sandbox.url, sandbox.access_key, sandbox.secret_key

        def signed_headers(path: str) -> dict[str, str]:
            return hand_headers(path, access_key, secret_key)

        def checked(answer: dict[str, Any]) -> dict[str, Any]:
            if answer.get("status") != "success":
                raise RuntimeError(f"hand-signed delete failed: {answer}")
            return answer

        def hand_delete(entry_id: int) -> dict[str, Any]:
            path = API_PREFIX + str(entry_id)
            with requests.Session() as session:
                return checked(session.delete(url + path, headers=signed_headers(path)).json())

        reused = requests.Session()

        def run_hand() -> None:
            for _ in range(calls):
                hand_delete(next_id())

        def run_hand_reused() -> None:
            for _ in range(calls):
                path = API_PREFIX + str(next_id())
                checked(reused.delete(url + path, headers=signed_headers(path)).json())

        def run_client() -> None:
            for _ in range(calls):
                with DictionaryClient(url, access_key, secret_key) as client:
                    if not client.delete_entry(next_id()).ok:
                        raise RuntimeError("client delete failed")

        def run_magic(show: bool) -> Callable[[], None]:
            def run() -> None:
                for _ in range(calls):
                    result = shell.run_line_magic("dict_delete", str(next_id()))
                    if not result.ok:
                        raise RuntimeError(f"%dict_delete failed: {result!r}")
                    if show:
                        display(result)

            return run

        def run_cells(template: str) -> Callable[[], None]:
            def run() -> None:
                for _ in range(calls):
                    outcome = shell.run_cell(template.format(next_id()), store_history=True)
                    if not outcome.success or not getattr(outcome.result, "ok", True):
                        raise RuntimeError(f"cell failed: {outcome.error_in_exec}")

            return run

        shell.user_ns["hand_delete"] = hand_delete
        variants: dict[str, Callable[[], None]] = {
            "hand": run_hand,
            "magic": run_magic(show=True),
            "line_magic": run_magic(show=False),
            "client": run_client,
            "hand_reused": run_hand_reused,
            "cell_magic": run_cells("%dict_delete {}"),
            "cell_hand": run_cells("hand_delete({})"),
        }
        times: dict[str, list[float]] = {n: [] for n in names}
        with capture_output() as captured:
            for run in variants.values():  # a warm-up round, not counted
                run()
            for order in rotations(names, mode.delete_rounds):
                for name in order:
                    started = time.perf_counter()
                    variants[name]()
                    times[name].append((time.perf_counter() - started) / calls)
        reused.close()
    shown = captured.stdout + "".join(str(o.data) for o in captured.outputs)
    if "dict-magics-success" not in shown or "deleted " not in shown:
        raise RuntimeError("the results were not rendered as text and HTML")

    def per_round(a: str, b: str) -> float:
        return median([x / y for x, y in zip(times[a], times[b], strict=True)])

    labels = {
        "hand": "hand-signed: new requests.Session() per call",
        "magic": "%dict_delete ID in a loop, result displayed (text+HTML)",
        "line_magic": "%dict_delete ID in a loop, not displayed",
        "client": "DictionaryClient(...).delete_entry, new client per call",
        "hand_reused": "hand-signed: one Session reused (kept-alive connection)",
        "cell_magic": "one cell per delete: %dict_delete ID",
        "cell_hand": "one cell per delete: hand_delete(ID)",
    }
    print(f"  {mode.delete_rounds} interleaved rounds x {calls} deletes per variant (medians)")
    for name in names:
        print(f"  {labels[name]:58s} {median(times[name]) * 1e3:7.3f} ms")
    figures = {
        "magic/hand": per_round("magic", "hand"),
        "cell_magic/cell_hand": per_round("cell_magic", "cell_hand"),
        "line_magic/hand": per_round("line_magic", "hand"),
        "client/hand": per_round("client", "hand"),
        "magic/hand_reused": per_round("magic", "hand_reused"),
        "cell_magic/hand": per_round("cell_magic", "hand"),
    }
    targets = {"magic/hand": PER_DELETE_TARGET, "cell_magic/cell_hand": PER_DELETE_TARGET}
    for name, value in figures.items():
        print(ratio_line(name, value, targets.get(name)))
    print("  (cell_magic/hand puts IPython's own per-cell cost on one side only)")
    RESULTS["per_delete"] = {
        "ms": {n: median(times[n]) * 1e3 for n in names},
        "ratios": figures,
    }


# -- 3. bulk throughput and memory -------------------------------------------------------------


def bench_bulk(mode: Mode) -> None:
    section(f"[3] bulk: delete_entries on {mode.bulk_ids} ids, sandbox answering in 20 ms")
    from dict_magics.service.client import DictionaryClient

    workers = [1, 4, 8, 16]
    names = [str(w) for w in workers]
    n = mode.bulk_ids
    total = n * len(workers) * mode.bulk_rounds
    times: dict[str, list[float]] = {name: [] for name in names}
    with sandbox_process(total, BULK_LATENCY) as sandbox:
        first = 1
        for order in rotations(names, mode.bulk_rounds):
            for name in order:
                w = int(name)
                ids = [str(i) for i in range(first, first + n)]
                first += n
                started = time.perf_counter()
                with DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key) as c:
                    batch = c.delete_entries(ids, workers=w)
                times[name].append(time.perf_counter() - started)
                if batch.succeeded != n:
                    raise RuntimeError(f"{batch.failed} of {n} deletions failed at {w} workers")
    print(f"  {mode.bulk_rounds} interleaved round(s); limit = ids x latency / workers")
    RESULTS["bulk"] = {}
    for w, name in zip(workers, names, strict=True):
        limit = n * BULK_LATENCY / w
        took = median(times[name])
        ratio = median([t / limit for t in times[name]])
        worst = max(times[name])
        print(f"  {w:2d} workers: {took:7.3f} s, worst {worst:7.3f} s  (limit {limit:6.3f} s)")
        print(ratio_line(f"bulk_{w}_workers/limit", ratio, BULK_TARGET if w == 8 else None))
        RESULTS["bulk"][name] = {"seconds": took, "worst": worst, "limit": limit, "ratio": ratio}


def bench_memory(mode: Mode) -> None:
    sizes = mode.memory_sizes
    section(f"[3b] client peak memory as ids grow ({', '.join(f'{s:,}' for s in sizes)})")
    rows = []
    for count in sizes:
        with sandbox_process(count) as sandbox:
            row = run_child("_child-memory", str(count), env=child_env(**sandbox.env()))
        if row["succeeded"] != count:
            raise RuntimeError(f"{count - row['succeeded']} of {count} deletions failed")
        rows.append(row)
    print("  tracemalloc in the client's own process (sandbox in another), 8 workers;")
    print("  overhead = peak - the BatchResult still held after the call; B = bytes")
    print("       ids   peak B/id   results B/id   overhead B/id    overhead   leftover")
    for row in rows:
        c = row["count"]
        overhead = row["peak"] - row["results"]
        print(
            f"  {c:8,d}   {row['peak'] / c:9.1f}   {row['results'] / c:12.1f}   "
            f"{overhead / c:13.1f}   {overhead / 1024:6.0f} KiB   {row['leftover'] / 1024:4.0f} KiB"
        )
    first, last = rows[0], rows[-1]
    n1, n2 = first["count"], last["count"]
    o1, o2 = first["peak"] - first["results"], last["peak"] - last["results"]
    slope = (o2 - o1) / (n2 - n1)
    fixed = o1 - slope * n1
    print(
        f"  overhead beyond the results = {fixed / 1024:.0f} KiB fixed + {slope:.1f} B per id "
        "(the batch's own id list, dedupe and result maps, freed on return)"
    )
    growth = (last["peak"] / n2) / (first["peak"] / n1)
    print(ratio_line(f"peak_bytes_per_id_{n2}/{n1}", growth, 1.1))
    for row in rows:
        row["overhead_fixed"], row["overhead_per_id"] = fixed, slope
    RESULTS["memory"] = rows


# -- 4. the command line -----------------------------------------------------------------------


def bench_cli(mode: Mode) -> None:
    n = mode.bulk_ids
    section(f"[4] command line: dict-magics delete ({n} ids) --workers 8, sandbox at 20 ms")
    command = _cli_command()
    limit = n * BULK_LATENCY / 8
    walls: list[float] = []
    startups: list[float] = []
    with sandbox_process(n * mode.cli_runs + mode.cli_runs + 1, BULK_LATENCY) as sandbox:
        env = child_env(**sandbox.env())
        first = 1
        for _ in range(mode.cli_runs):
            ids = [str(i) for i in range(first, first + n)]
            first += n
            walls.append(_run_cli(command, ids, env, n))
            # One id: process start-up, imports and one 20 ms request.
            startups.append(_run_cli(command, [str(first)], env, 1) - BULK_LATENCY)
            first += 1
    wall = median(walls)
    startup = median(startups)
    print(f"  {mode.cli_runs} runs (medians); command: {' '.join(Path(command[0]).parts[-1:])} ...")
    print(f"  wall time, process start included:   {wall:7.3f} s  (limit {limit:.3f} s)")
    print(f"  start-up + imports (1-id run - 20 ms): {startup:7.3f} s")
    ratio = median([w / limit for w in walls])
    print(ratio_line("cli_8_workers/limit", ratio, BULK_TARGET))
    print(ratio_line("cli_8_workers_minus_startup/limit", (wall - startup) / limit))
    RESULTS["cli"] = {"seconds": wall, "startup": startup, "limit": limit, "ratio": ratio}


def _cli_command() -> list[str]:
    script = Path(sys.executable).with_name("dict-magics")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "dict_magics"]


def _run_cli(command: list[str], ids: list[str], env: dict[str, str], n: int) -> float:
    started = time.perf_counter()
    proc = subprocess.run(
        [*command, "delete", *ids, "--workers", "8"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    took = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"dict-magics delete exited {proc.returncode}: {proc.stderr[-500:]}")
    return took


# -- main --------------------------------------------------------------------------------------


def header(mode_name: str) -> None:
    import IPython
    import requests

    import dict_magics

    print(f"dict-magics benchmarks ({mode_name} run)")
    print(f"  package: {Path(dict_magics.__file__).parent}")
    print(
        f"  python {platform.python_version()}, IPython {IPython.__version__}, "
        f"requests {requests.__version__}, {platform.platform()}"
    )
    print(f"  cpus: {os.cpu_count()}, load average: {_load()}")


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


SECTIONS: dict[str, Callable[[Mode], None]] = {
    "targets": bench_targets,
    "load_ext": bench_load_ext,
    "per_delete": bench_per_delete,
    "bulk": bench_bulk,
    "memory": bench_memory,
    "cli": bench_cli,
    "network": bench_network,
    "rate_limit": bench_rate_limit,
    "listing": bench_listing,
    "lint": bench_lint,
    "nonce_rule": bench_nonce_rule,
    "bulk_restore": bench_bulk_restore,
    "glossary": bench_glossary,
    "impact": bench_impact,
    "undo": bench_undo,
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0].startswith("_child-"):
        return _child(argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run with small sizes")
    parser.add_argument("--only", choices=list(SECTIONS), action="append", help="run a section")
    parser.add_argument("--json", metavar="PATH", help="also write every figure to PATH")
    args = parser.parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)
    os.environ["IPYTHONDIR"] = str(WORK / "ipython")  # never touch the user's ~/.ipython
    mode = QUICK if args.quick else FULL
    header("quick" if args.quick else "full")
    started = time.perf_counter()
    for name, bench in SECTIONS.items():
        if args.only and name not in args.only:
            continue
        bench(mode)
    print(f"\ndone in {time.perf_counter() - started:.0f} s; load average now {_load()}")
    if args.json:
        RESULTS["mode"] = "quick" if args.quick else "full"
        Path(args.json).write_text(json.dumps(RESULTS, indent=2), encoding="utf-8")
    return 0


def _child(argv: list[str]) -> int:
    kind, rest = argv[0], argv[1:]
    if kind == "_child-sandbox":
        child_sandbox(rest[0])
    elif kind == "_child-listing-memory":
        child_listing_memory(int(rest[0]))
    elif kind == "_child-restore":
        child_restore(rest[0])
    elif kind == "_child-token-delete":
        child_token_delete(rest[0])
    elif kind == "_child-undo":
        child_undo(rest[0])
    elif kind == "_child-window":
        child_window(rest[0])
    elif kind == "_child-load_ext":
        child_load_ext(rest[0])
    elif kind == "_child-memory":
        child_memory(int(rest[0]))
    else:
        raise SystemExit(f"unknown helper {kind}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
