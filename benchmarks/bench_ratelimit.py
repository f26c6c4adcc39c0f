"""[6] Deleting many ids from a rate-limited service: the client's gate against a naive pool.

The sandbox allows 100 requests a second in bursts of 10 and answers the rest 429 with
``Retry-After: 1`` (not acted on). ``DictionaryClient.delete_entries`` on 16 workers is measured
against the limit ``n / rate`` and against what a naive thread pool does (plain requests, 16
threads, a 429 retried after its ``Retry-After``, at most 3 retries). Each run gets a fresh
sandbox process, so each starts with a full bucket; the sandbox's own log counts the 429s and
the entries left.

``kept``: two batches through ``operations.delete`` against one service (a fresh sandbox on
the same port, a fresh client each, as two processes would be): the first finds the limit, the
second starts at the pace the first kept in the data folder. Both are timed.
"""

from __future__ import annotations

import inspect
import socket
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from benchlib import (
    RESULTS,
    WORK,
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

RATE = 100.0
BURST = 10
RETRY_AFTER = 1
WORKERS = 16
NAIVE_RETRIES = 3
TIME_TARGET = 2.0
SHARE_TARGET = 0.05


def bench_rate_limit(mode: Mode) -> None:
    n = mode.limited_ids
    section(
        f"[6] rate limit: {n} ids on {WORKERS} workers, sandbox at {RATE:g}/s "
        f"(burst {BURST}, 429 + Retry-After: {RETRY_AFTER})"
    )
    runs: dict[str, list[dict[str, Any]]] = {"client": [], "naive": [], "first": [], "kept": []}
    for order in rotations(["client", "naive", "kept"], mode.limited_rounds):
        for variant in order:
            if variant == "kept":
                first, kept = kept_pace(n)
                runs["first"].append(first)
                runs["kept"].append(kept)
            else:
                runs[variant].append(_run(variant, n))
    limit = n / RATE
    print(f"  {mode.limited_rounds} interleaved round(s), a fresh sandbox each; limit n/rate")
    RESULTS["rate_limit"] = {"limit": limit}
    labels = {
        "client": "DictionaryClient.delete_entries",
        "naive": "naive pool",
        "first": "delete, first batch",
        "kept": "delete, next batch (pace kept)",
    }
    for variant, label in labels.items():
        rows = runs[variant]
        took = median([r["seconds"] for r in rows])
        share = median([r["limited"] / r["requests"] for r in rows])
        left = max(r["left"] for r in rows)
        print(
            f"  {label:32s} {took:6.2f} s  (limit {limit:.2f} s); 429s {share:6.1%} of requests; "
            f"entries left {left}; worst {max(r['seconds'] for r in rows):.2f} s"
        )
        targets = (TIME_TARGET, SHARE_TARGET) if variant != "naive" else (None, None)
        ratio = median([r["seconds"] / limit for r in rows])
        print(ratio_line(f"{variant}_time/limit", ratio, targets[0]))
        print(ratio_line(f"{variant}_429_share", max(share, 1e-6), targets[1]))
        RESULTS["rate_limit"][variant] = {
            "seconds": took,
            "ratio": ratio,
            "share_429": share,
            "left": left,
            "runs": rows,
        }


def kept_pace(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two batches of ``n`` ids against one service, in one fresh data folder: the first finds
    the limit, the second starts at the pace the first kept."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with environ({"DICT_MAGICS_HOME": tempfile.mkdtemp(prefix="pace-", dir=WORK)}):
        return _run("kept", n, port), _run("kept", n, port)


def _run(variant: str, n: int, port: int = 0) -> dict[str, Any]:
    # The lenient nonce rule: this section compares rate-limit handling; the naive pool's
    # hand-signed threads would also lose requests to the vendor's nonce rule (section 9).
    spec = SandboxSpec(
        n,
        rate_limit=RATE,
        burst=BURST,
        retry_after=RETRY_AFTER,
        max_log=10 * n,
        nonce_rule="unique",
        port=port,
    )
    ids = [str(i) for i in range(1, n + 1)]
    run = {"client": _client, "naive": _naive, "kept": _kept}[variant]
    with sandbox_process(spec) as sandbox:
        started = time.perf_counter()
        pauses = run(sandbox, ids)
        seconds = time.perf_counter() - started
        stats = sandbox.stats()
    operations = stats["operations"]
    return {
        "seconds": seconds,
        "requests": sum(operations.values()),
        "limited": operations.get("rate_limited", 0),
        "deleted": operations.get("delete", 0),
        "left": stats["left"],
        "pauses": pauses,
    }


def _client(sandbox: Any, ids: list[str]) -> int:
    from dict_magics.service.client import DictionaryClient

    waits: list[float] = []
    with DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key) as client:
        # A client from before the rate-limit gate (an A/B run on an older tree) has no on_wait.
        options = {}
        if "on_wait" in inspect.signature(client.delete_entries).parameters:
            options["on_wait"] = lambda seconds, reason: waits.append(seconds)
        batch = client.delete_entries(ids, workers=WORKERS, **options)
    if batch.succeeded != len(ids) and options:
        raise RuntimeError(f"{batch.failed} of {len(ids)} deletions failed under the rate limit")
    return len(waits)


def _kept(sandbox: Any, ids: list[str]) -> int:
    """``operations.delete`` with a client of its own (as a new process has): it starts at the
    pace kept in the data folder, if one is."""
    from dict_magics.operations.context import OperationSettings
    from dict_magics.operations.delete import delete

    waits: list[float] = []

    class Pauses:
        def start(self, total: int, title: str) -> None: ...
        def __call__(self, done: int, total: int, result: Any) -> None: ...
        def stop(self) -> None: ...
        def waiting(self, seconds: float, reason: str) -> None:
            waits.append(seconds)

    with environ({**sandbox.env(), "DICT_MAGICS_CLIENT_CACHE": "off"}):
        settings = OperationSettings(workers=WORKERS, snapshots=False)
        batch = delete(settings, ids, progress=Pauses())
    if batch.succeeded != len(ids):  # type: ignore[union-attr]
        raise RuntimeError(f"{batch.failed} of {len(ids)} deletions failed under the rate limit")
    return len(waits)


def _naive(sandbox: Any, ids: list[str]) -> int:
    """A thread pool a user might write: one Session per thread, Retry-After honoured."""
    import threading

    import requests

    from dict_magics.service.http import API_PREFIX

    local = threading.local()

    def delete(entry_id: str) -> bool:
        session = getattr(local, "session", None) or requests.Session()
        local.session = session
        path = API_PREFIX + entry_id
        for _ in range(1 + NAIVE_RETRIES):
            headers = hand_headers(path, sandbox.access_key, sandbox.secret_key)
            answer = session.delete(sandbox.url + path, headers=headers)
            if answer.status_code != 429:
                return answer.json().get("status") == "success"
            time.sleep(float(answer.headers.get("Retry-After", "1")))
        return False

    with ThreadPoolExecutor(WORKERS) as pool:
        list(pool.map(delete, ids))
    return 0
