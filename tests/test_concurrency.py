"""One client shared by many threads: unique nonces, no replays, every entry deleted once."""

from __future__ import annotations

import threading
from collections import Counter

from dict_magics.sandbox import SandboxServer
from dict_magics.service.client import DictionaryClient


def test_eight_threads_times_a_hundred_deletes_through_one_client() -> None:
    with SandboxServer(800) as sandbox:
        client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key, workers=8)
        results: list = []
        lock = threading.Lock()
        start = threading.Barrier(8)

        def work(offset: int) -> None:
            start.wait()
            mine = [client.delete_entry(str(offset * 100 + i)) for i in range(1, 101)]
            with lock:
                results.extend(mine)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        log = sandbox.requests

    assert len(results) == 800 and all(r.ok and r.attempts == 1 for r in results)
    assert sandbox.entries == {}
    assert all(r.operation == "delete" and r.http_status == 200 for r in log)
    nonces = [r.headers["nonce"] for r in log]
    assert len(set(nonces)) == 800
    assert Counter(r.entry_id for r in log) == Counter(str(i) for i in range(1, 801))


def test_batch_on_sixteen_workers_with_retries_deletes_each_once() -> None:
    with SandboxServer(400) as sandbox:
        sandbox.fail_next(20, 503, retry_after=0)
        # 20 retries: even an id that met every one of the 20 faults still gets through.
        client = DictionaryClient(
            sandbox.url, sandbox.access_key, sandbox.secret_key, backoff=0.01, max_retries=20
        )
        batch = client.delete_entries([str(i) for i in range(1, 401)], workers=16)
        log = sandbox.requests
    assert batch.ok and batch.succeeded == 400 and sandbox.entries == {}
    applied = Counter(r.entry_id for r in log if r.outcome == "success")
    assert set(applied.values()) == {1} and len(applied) == 400
    assert sum(1 for r in log if r.http_status is None) == 20  # the injected 503s
    assert len({r.headers["nonce"] for r in log}) == len(log) == 420
