"""[5] One ``%dict_delete`` per cell over a real-ish network, the client kept between cells or not.

A user types one delete per cell. Each cell used to build a new client, so over TLS every cell
paid a new TCP connection and TLS handshake. Here the same cells run with the client cache on
(``operations/connect.py``, the default) and off (``DICT_MAGICS_CLIENT_CACHE=off``: the behaviour
before it), against a hand-signed loop on one reused ``requests.Session`` (the floor: a kept-alive
connection and no IPython at all), and against the same hand-signed call typed one per cell.
With default settings each ``%dict_delete`` first lists the dictionary afresh, writes a snapshot
of the entry and then an audit line; with ``listing_max_age = 60`` (issue 22, item 6: the user's
choice) the snapshot's terms come from this session's cached listing, kept current by its own
deletes, so a loop of cells lists about once a minute; ``--no-snapshot`` cells show what the
client alone costs.
Two networks: the TLS sandbox behind the delay proxy (20 ms round trip; its throw-away CA
trusted through ``REQUESTS_CA_BUNDLE``), and plain HTTP on loopback.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
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

CELL_TARGET = 1.10
AGE_ENV = "DICT_MAGICS_LISTING_MAX_AGE"
RTT = 0.02
NETWORKS = {
    "tls_rtt20": ("TLS sandbox behind the delay proxy, 20 ms round trip", True, RTT),
    "loopback": ("plain HTTP sandbox on loopback", False, 0.0),
}
LABELS = {
    "cell_magic": "one cell per delete: %dict_delete ID (client kept)",
    "cell_magic_max_age": "one cell per delete: %dict_delete ID, listing_max_age=60",
    "cell_magic_no_snapshot": "one cell per delete: %dict_delete --no-snapshot ID (kept)",
    "cell_magic_before": "one cell per delete: %dict_delete ID (cache off: before)",
    "hand_loop": "hand-signed loop on one reused requests.Session",
    "cell_hand": "one cell per delete: hand-signed on one reused Session",
}


def bench_network(mode: Mode) -> None:
    section("[5] %dict_delete per cell over TLS + 20 ms RTT and on loopback, client kept or not")
    from IPython.core.interactiveshell import InteractiveShell

    from dict_magics.operations import context as clients

    shell = InteractiveShell.instance()
    shell.display_formatter.active_types = shell.display_formatter.format_types
    if "dict_magics" not in shell.extension_manager.loaded:
        shell.run_line_magic("load_ext", "dict_magics")
    home = Path(tempfile.mkdtemp(prefix="dict-magics-bench-home-"))
    print(f"  {mode.network_rounds} interleaved rounds x {mode.network_calls} deletes per variant")
    RESULTS["network"] = {}
    with environ({"DICT_MAGICS_HOME": str(home), clients.CACHE_ENV: "on"}):
        wired = True
        for name, (title, tls, rtt) in NETWORKS.items():
            RESULTS["network"][name] = _one_network(shell, mode, name, title, tls, rtt)
            wired = wired and RESULTS["network"][name].pop("client_kept")
    snapshots = list(home.glob("snapshots/*.json"))
    audit = home / "audit.jsonl"
    lines = len(audit.read_text(encoding="utf-8").splitlines()) if audit.exists() else 0
    print(f"  the operations keep the client between cells: {'yes' if wired else 'NO'}")
    print(
        f"  default settings; local data written by the cells: {len(snapshots)} snapshot(s), "
        f"{lines} audit line(s)"
        + ("" if snapshots or lines else " (%dict_delete takes no snapshot here yet)")
    )
    RESULTS["network"]["client_kept"] = wired
    RESULTS["network"]["snapshots"] = len(snapshots)
    RESULTS["network"]["audit_lines"] = lines


def _one_network(
    shell: Any, mode: Mode, name: str, title: str, tls: bool, rtt: float
) -> dict[str, Any]:
    import requests

    from dict_magics.operations import context as clients
    from dict_magics.service.http import API_PREFIX

    calls = mode.network_calls
    names = list(LABELS)
    total = calls * len(names) * (mode.network_rounds + 1) + 10
    spec = SandboxSpec(total, tls=tls, rtt=rtt)
    print(f"  -- {title}")
    with sandbox_process(spec) as sandbox, environ(sandbox.env()):
        next_id = iter(range(1, total + 1)).__next__
        url, access_key, secret_key = sandbox.url, sandbox.access_key, sandbox.secret_key
        reused = requests.Session()

        def hand_reused(entry_id: int) -> dict[str, Any]:
            path = API_PREFIX + str(entry_id)
            headers = hand_headers(path, access_key, secret_key)
            answer = reused.delete(url + path, headers=headers).json()
            if answer.get("status") != "success":
                raise RuntimeError(f"hand-signed delete failed: {answer}")
            return answer

        def hand_loop() -> None:
            for _ in range(calls):
                hand_reused(next_id())

        def cells(template: str, cache: str, max_age: str = "") -> Callable[[], None]:
            def run() -> None:
                with environ({clients.CACHE_ENV: cache, AGE_ENV: max_age}):
                    for _ in range(calls):
                        outcome = shell.run_cell(template.format(next_id()), store_history=True)
                        if not outcome.success or not getattr(outcome.result, "ok", True):
                            raise RuntimeError(f"cell failed: {outcome.error_in_exec}")

            return run

        shell.user_ns["hand_reused"] = hand_reused
        variants: dict[str, Callable[[], None]] = {
            "cell_magic": cells("%dict_delete {}", "on"),
            "cell_magic_max_age": cells("%dict_delete {}", "on", "60"),
            "cell_magic_no_snapshot": cells("%dict_delete --no-snapshot {}", "on"),
            "cell_magic_before": cells("%dict_delete {}", "off"),
            "hand_loop": hand_loop,
            "cell_hand": cells("hand_reused({})", "on"),
        }
        times = _timed(variants, names, mode.network_rounds, calls)
        reused.close()
        kept = bool(clients.CLIENTS.kept())
        clients.close_all()

    def per_round(a: str, b: str) -> float:
        return median([x / y for x, y in zip(times[a], times[b], strict=True)])

    for variant in names:
        print(f"    {LABELS[variant]:58s} {median(times[variant]) * 1e3:7.3f} ms")
    figures = {
        "cell_magic/hand_loop": per_round("cell_magic", "hand_loop"),
        "cell_magic_max_age/hand_loop": per_round("cell_magic_max_age", "hand_loop"),
        "cell_magic_no_snapshot/hand_loop": per_round("cell_magic_no_snapshot", "hand_loop"),
        "cell_magic_no_snapshot/cell_hand": per_round("cell_magic_no_snapshot", "cell_hand"),
        "cell_magic_before/hand_loop": per_round("cell_magic_before", "hand_loop"),
        "cell_magic/cell_hand": per_round("cell_magic", "cell_hand"),
        "cell_magic_max_age/cell_hand": per_round("cell_magic_max_age", "cell_hand"),
        "cell_magic_before/cell_magic": per_round("cell_magic_before", "cell_magic"),
    }
    base = "hand_loop" if rtt else "cell_hand"
    targeted = {f"{v}/{base}" for v in ("cell_magic", "cell_magic_max_age")}
    for figure, value in figures.items():
        target = CELL_TARGET if figure in targeted else None
        print(ratio_line(f"{name}_{figure}", value, target))
    side = {
        "default (lists afresh)": "cell_magic",
        "listing_max_age=60": "cell_magic_max_age",
        "--no-snapshot": "cell_magic_no_snapshot",
    }
    print(
        f"    per cell against {base}, side by side: "
        + ", ".join(f"{k} {per_round(v, base):.2f}x" for k, v in side.items())
    )
    if not rtt:
        print("    (on loopback a request costs less than IPython's own ~1 ms per cell, so the")
        print("     target compares cell with cell; cell_magic/hand_loop shows IPython's share)")
    return {
        "ms": {v: median(times[v]) * 1e3 for v in names},
        "ratios": figures,
        "client_kept": kept,
    }


def _timed(
    variants: dict[str, Callable[[], None]], names: list[str], rounds: int, calls: int
) -> dict[str, list[float]]:
    """Per-delete seconds of each variant in each round, after a warm-up round, output captured."""
    from IPython.utils.capture import capture_output

    times: dict[str, list[float]] = {n: [] for n in names}
    with capture_output():
        for run in variants.values():
            run()
        for order in rotations(names, rounds):
            for variant in order:
                started = time.perf_counter()
                variants[variant]()
                times[variant].append((time.perf_counter() - started) / calls)
    return times
