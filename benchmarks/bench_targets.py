"""[0] Issue 30's figures, each measured side by side in this run, printed as one table first.

Every ratio compares dict-magics with the least hand-written code doing the same work against
the same sandbox process, in interleaved rounds (medians). ``main`` is the ratio measured on
main (version 3) when the issue was filed; ``today`` is this run's.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from benchlib import (
    RESULTS,
    Mode,
    SandboxSpec,
    environ,
    hand_headers,
    median,
    ratio_line,
    rotations,
    sandbox_process,
    section,
)

PREFIX = "/api/v1/dictionary/"
FIGURES = {
    "bulk": ("%dict_delete -w 8, 400 ids, 20 ms RTT / hand-signed threads, 8 workers", 1.10, 1.59),
    "call": ("one %dict_delete --no-snapshot, loopback / hand-signed Session DELETE", 1.25, 1.94),
    "cell": (
        "%dict_delete cell (listing, snapshot), TLS + 20 ms / hand GET+DELETE cell",
        1.10,
        1.11,
    ),
    "load_ext": ("%load_ext dict_magics / InteractiveShell.instance()", 0.10, 0.134),
    "rate_limit": ("600 ids, 16 workers, service at 100 req/s / n / rate: first batch", 1.3, 2.39),
    "rate_limit_kept": ("the same: next batch, at the pace the first kept", 1.3, 2.39),
    "nonce_rule": ("vendor nonce rule, 400 ids / the same, nonce_rule=unique", 1.10, 1.04),
}


def bench_targets(mode: Mode) -> None:
    section("[0] issue 30: each figure against its target (ratios measured side by side)")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.display_formatter.active_types = shell.display_formatter.format_types
    if "dict_magics" not in shell.extension_manager.loaded:
        shell.run_line_magic("load_ext", "dict_magics")
    quick = mode.bulk_ids < 400  # a smoke run: every figure, small sizes
    ratios: dict[str, float] = {}
    with environ({"DICT_MAGICS_HOME": tempfile.mkdtemp(prefix="dict-magics-targets-")}):
        ratios["bulk"] = _bulk(shell, 50 if quick else 400, 1 if quick else 2)
        ratios["call"] = _cells(shell, SandboxSpec(400), "%dict_delete --no-snapshot {}", quick)
        ratios["cell"] = _cells(
            shell, SandboxSpec(400, tls=True, rtt=0.02), "%dict_delete {}", quick
        )
    if "load_ext" not in RESULTS:
        from run import bench_load_ext

        with contextlib.redirect_stdout(io.StringIO()):  # its own section prints it in full
            bench_load_ext(mode)
    ratios["load_ext"] = RESULTS["load_ext"]["ratio_instance"]
    ratios["rate_limit"], ratios["rate_limit_kept"] = _rate_limit(mode)
    ratios["nonce_rule"] = _nonce_rule(mode)
    print(f"\n  {'figure':76s} {'target':>7s} {'main':>6s} {'today':>6s}")
    for key, (label, target, main) in FIGURES.items():
        value = ratios[key]
        verdict = "PASS" if value <= target else "MISS"
        print(f"  {label:76s} {target:7.2f} {main:6.2f} {value:6.2f}  {verdict}")
    for key, value in ratios.items():
        print(ratio_line(f"targets_{key}", value, FIGURES[key][1]))
    RESULTS["targets"] = {k: {"ratio": v, "target": FIGURES[k][1]} for k, v in ratios.items()}


def _bulk(shell: Any, n: int, rounds: int) -> float:
    """``%dict_delete -w 8`` of ``n`` ids (listing, snapshot, audit) against 8 hand-signed
    threads, each with its own Session, on a sandbox answering in 20 ms."""
    import requests

    spec = SandboxSpec(n * 2 * (rounds + 1) + 10, latency=0.02, max_log=10)
    times: dict[str, list[float]] = {"magic": [], "hand": []}
    with sandbox_process(spec) as sandbox, environ(sandbox.env()):
        first = iter(range(1, spec.entries, n)).__next__
        sessions: dict[int, requests.Session] = {}

        def hand_one(entry_id: int) -> None:
            import threading

            session = sessions.setdefault(threading.get_ident(), requests.Session())
            path = PREFIX + str(entry_id)
            for _ in range(25):  # a nonce overtaken on another connection (40005): sign again
                headers = hand_headers(path, sandbox.access_key, sandbox.secret_key)
                answer = session.delete(sandbox.url + path, headers=headers).json()
                if answer.get("data", {}).get("code") != 40005:
                    break
            if answer["status"] != "success":
                raise RuntimeError(f"the hand-signed delete failed: {answer}")

        def hand() -> None:
            start = first()
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(hand_one, range(start, start + n)))

        def magic() -> None:
            start = first()
            cell = f"%dict_delete -w 8 {' '.join(map(str, range(start, start + n)))}"
            outcome = shell.run_cell(cell)
            if not outcome.success or not outcome.result.ok:
                raise RuntimeError(f"the magic failed: {outcome.error_in_exec}")

        from IPython.utils.capture import capture_output

        with capture_output():
            for order in rotations(["magic", "hand"], rounds + 1):
                for name in order:
                    started = time.perf_counter()
                    (magic if name == "magic" else hand)()
                    times[name].append(time.perf_counter() - started)
    times = {k: v[1:] if len(v) > 1 else v for k, v in times.items()}  # the first: warm-up
    print(f"  bulk: magic {median(times['magic']):.3f} s, hand {median(times['hand']):.3f} s")
    return median(times["magic"]) / median(times["hand"])


def _cells(shell: Any, spec: SandboxSpec, template: str, quick: bool) -> float:
    """One cell per delete: ``template`` against the least hand-written cell doing the same
    (a DELETE; with a snapshot, a GET of the listing and the DELETE) on one reused Session."""
    import requests

    calls, rounds = (6, 2) if quick else (30, 5)
    snapshot = "--no-snapshot" not in template
    spec = replace(spec, entries=calls * 2 * (rounds + 1) + 10)
    times: dict[str, list[float]] = {"magic": [], "hand": []}
    inside: dict[str, list[float]] = {"magic": [], "hand": []}  # in the call, not IPython's
    with sandbox_process(spec) as sandbox, environ(sandbox.env()), _timed_calls(shell) as spent:
        session = requests.Session()
        if spec.tls:
            session.verify = sandbox.ca_path
        next_id = iter(range(1, spec.entries)).__next__

        @_timed(spent)
        def hand(entry_id: int) -> None:
            if snapshot:
                path = PREFIX.rstrip("/")
                headers = hand_headers(path, sandbox.access_key, sandbox.secret_key)
                session.get(sandbox.url + path, headers=headers).json()
            path = PREFIX + str(entry_id)
            headers = hand_headers(path, sandbox.access_key, sandbox.secret_key)
            if session.delete(sandbox.url + path, headers=headers).json()["status"] != "success":
                raise RuntimeError("the hand-signed delete failed")

        shell.user_ns["_hand_delete"] = hand
        cells = {"magic": template, "hand": "_hand_delete({})"}
        from IPython.utils.capture import capture_output

        with capture_output():
            for order in rotations(["magic", "hand"], rounds + 1):
                for name in order:
                    spent[0] = 0.0
                    started = time.perf_counter()
                    for _ in range(calls):
                        outcome = shell.run_cell(cells[name].format(next_id()))
                        if not outcome.success:
                            raise RuntimeError(f"cell failed: {outcome.error_in_exec}")
                    times[name].append((time.perf_counter() - started) / calls)
                    inside[name].append(spent[0] / calls)
        session.close()
    times = {k: v[1:] for k, v in times.items()}
    where = "TLS + 20 ms" if spec.tls else "loopback"
    print(f"  {where}: {template.format('ID')} against the hand cell, per cell:")
    for name in times:
        cell, call = median(times[name]) * 1e3, median(inside[name][1:]) * 1e3
        print(f"    {name:5s} {cell:6.2f} ms = the call {call:6.2f} + IPython {cell - call:.2f}")
    return median([m / h for m, h in zip(times["magic"], times["hand"], strict=True)])


@contextlib.contextmanager
def _timed_calls(shell: Any) -> Any:
    """``spent[0]``: seconds inside ``run_line_magic`` (and whatever ``_timed(spent)`` wraps):
    the rest of a cell's time is IPython's (reading, compiling, showing what it returns)."""
    spent = [0.0]
    original = shell.run_line_magic
    shell.run_line_magic = _timed(spent)(original)
    try:
        yield spent
    finally:
        shell.run_line_magic = original


def _timed(spent: list[float]) -> Any:
    def wrap(function: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - started

        return timed

    return wrap


def _rate_limit(mode: Mode) -> tuple[float, float]:
    """600 ids on 16 workers against a sandbox allowing 100 requests a second (bursts of 10,
    ``Retry-After: 1``), twice against one service: time / (n / rate) of the first batch, which
    finds the limit, and of the next, which starts at the pace the first kept."""
    from bench_ratelimit import RATE, kept_pace

    n = mode.limited_ids
    pairs = [kept_pace(n) for _ in range(max(1, mode.limited_rounds))]
    for label, runs in (("first", [p[0] for p in pairs]), ("next", [p[1] for p in pairs])):
        pauses = [r["pauses"] for r in runs]
        print(
            f"  rate limit, {label} batch: {median([r['seconds'] for r in runs]):.2f} s for {n} "
            f"ids (n / rate {n / RATE:.2f} s); 429s {median([r['limited'] for r in runs])}, "
            f"pauses {min(pauses)}-{max(pauses)}"
        )
    return tuple(median([p[k]["seconds"] / (n / RATE) for p in pairs]) for k in (0, 1))  # type: ignore[return-value]


def _nonce_rule(mode: Mode) -> float:
    """``dict-magics delete`` of 400 ids (default workers) against the vendor's nonce rule,
    then the lenient one, interleaved; the 40005 re-sends counted by the sandbox."""
    from bench_nonce_rule import _run

    n = mode.bulk_ids
    ids = [str(i) for i in range(1, n + 1)]
    runs: dict[str, list[dict[str, Any]]] = {"increasing": [], "unique": []}
    for order in rotations(list(runs), max(2, mode.bulk_rounds)):
        for rule in order:
            runs[rule].append(_run(rule, n, 0.0, [ids]))
    resent = [r["retries"] for r in runs["increasing"]]
    print(f"  nonce rule: {n} ids, 40005 re-sends {min(resent)}-{max(resent)}")
    return median([r["time"] for r in runs["increasing"]]) / median(
        [r["time"] for r in runs["unique"]]
    )
