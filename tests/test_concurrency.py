"""One client shared by many threads, and batches stopped half-way: every entry deleted once,
and every request reported as it really ended."""

from __future__ import annotations

import signal
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from dict_magics.models import Cause, Entry
from dict_magics.sandbox import SandboxServer
from dict_magics.service.client import DictionaryClient, RequestInterrupted


def test_eight_threads_times_a_hundred_deletes_through_one_client() -> None:
    with SandboxServer(800) as sandbox:
        client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key)
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

    # Under the vendor's rule a request overtaken by a larger nonce on another connection is
    # refused (40005, not acted on) and sent again at once: the only extra requests allowed.
    refused = [r for r in log if r.code == 40005]
    taken = [r for r in log if r.code != 40005]
    assert len(results) == 800 and all(r.ok for r in results)
    assert sum(r.attempts for r in results) == len(log) == 800 + len(refused)
    assert sandbox.entries == {}
    assert all(r.operation == "delete" and r.http_status == 200 for r in taken)
    nonces = [r.headers["nonce"] for r in log]
    assert len(set(nonces)) == len(log)
    assert Counter(r.entry_id for r in taken) == Counter(str(i) for i in range(1, 801))


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
    refused = sum(1 for r in log if r.code == 40005)  # overtaken on another connection
    assert len({r.headers["nonce"] for r in log}) == len(log) == 420 + refused


# -- Ctrl-C: requests in flight are waited for and reported as they ended --------------------


@contextmanager
def ctrl_c_after(seconds: float) -> Iterator[threading.Event]:
    """Deliver a real SIGINT to the main thread after ``seconds``, as a terminal's Ctrl-C does."""
    fired = threading.Event()

    def press() -> None:
        fired.set()
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    timer = threading.Timer(seconds, press)
    timer.start()
    try:
        yield fired
    except RequestInterrupted:
        raise
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C escaped the client instead of being handled")
    finally:
        timer.cancel()
        timer.join()


def test_ctrl_c_during_a_batch_waits_for_the_requests_in_flight() -> None:
    with SandboxServer(50) as sandbox:
        # The service deletes at once and answers a second later: a Ctrl-C in between must not
        # turn those deletions into "unknown", let alone "not deleted".
        sandbox.inject("hang", count=4, delay=1.0)
        client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key)
        with ctrl_c_after(0.3) as fired:
            batch = client.delete_entries([str(i) for i in range(1, 51)], workers=4)
        log = sandbox.requests
        left = sandbox.entries
    assert fired.is_set() and batch.interrupted
    sent = [r for r in batch.results if r.attempts > 0]
    assert len(sent) == 4 and all(r.ok and r.http_status == 200 for r in sent)
    assert all(r.elapsed >= 0.9 for r in sent)  # each waited for its answer
    never = [r for r in batch.results if r.attempts == 0]
    assert len(never) == 46 and all(r.cause is Cause.NOT_ATTEMPTED for r in never)
    assert all("interrupted (Ctrl-C)" in r.reason for r in never)
    taken = [r for r in log if r.code != 40005]  # a refused nonce is re-sent at once
    assert sorted(r.entry_id for r in taken) == sorted(r.entry_id for r in sent)
    assert set(left) == {r.entry_id for r in never}
    assert "interrupted: 46 never sent" in str(batch)


def test_ctrl_c_during_a_batch_reports_a_request_past_its_deadline_as_unknown() -> None:
    with SandboxServer(10) as sandbox:
        sandbox.inject("hang", count=1, delay=3.0)
        client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key, timeout=1)
        with ctrl_c_after(0.3):
            batch = client.delete_entries([str(i) for i in range(1, 11)], workers=1)
    [sent] = [r for r in batch.results if r.attempts > 0]
    assert sent.outcome == "unknown" and sent.cause is Cause.TIMEOUT
    assert 1 <= sent.elapsed < 2 and batch.interrupted
    assert "1" not in sandbox.entries  # it was deleted: "unknown" was the honest answer


def test_ctrl_c_during_one_delete_waits_then_raises_with_the_true_result() -> None:
    with SandboxServer(10) as sandbox:
        sandbox.inject("hang", delay=1.0)
        client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key)
        with ctrl_c_after(0.3) as fired, pytest.raises(RequestInterrupted) as caught:
            client.delete_entry("7")
    assert fired.is_set() and isinstance(caught.value, KeyboardInterrupt)
    result = caught.value.result
    assert result.ok and result.entry_id == "7" and result.elapsed >= 0.9
    assert "7" not in sandbox.entries
    assert "deleted entry '7'" in str(caught.value)


def test_ctrl_c_during_an_addition_waits_for_its_answer() -> None:
    with SandboxServer(0) as sandbox:
        sandbox.inject("hang", delay=1.0, method="POST")
        client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key)
        with ctrl_c_after(0.3), pytest.raises(RequestInterrupted) as caught:
            client.add_entry(Entry("", "ja", "金曜日", "en", "FRI"))
        terms = sandbox.terms
    assert caught.value.result.ok and terms == [("ja", "金曜日", "en", "FRI")]


def test_a_cancel_from_another_thread_stops_a_batch() -> None:
    # The panel's Cancel button: the batch returns, interrupted, once the request in flight ends.
    with SandboxServer(30) as sandbox:
        sandbox.inject("hang", count=2, delay=0.6)
        client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key)
        cancel = threading.Event()
        timer = threading.Timer(0.2, cancel.set)
        timer.start()
        batch = client.delete_entries([str(i) for i in range(1, 31)], workers=2, cancel=cancel)
        timer.join()
    assert batch.interrupted and batch.succeeded == 2
    assert sum(r.cause is Cause.NOT_ATTEMPTED for r in batch.results) == 28
    assert len(sandbox.entries) == 28
