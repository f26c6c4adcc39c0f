"""The service's rate limit: every worker of a client pauses at a 429 / 40103 until its
Retry-After, and keeps to a pace learned from them (``service.client.RateLimit``)."""

from __future__ import annotations

import re
import threading
import time

import pytest

from dict_magics.models import Cause
from dict_magics.sandbox import SandboxServer
from dict_magics.service.client import DictionaryClient, RateLimit


def never() -> bool:
    return False


def test_no_pace_and_no_wait_until_the_service_says_429() -> None:
    limit = RateLimit()
    for _ in range(100):
        sent_at = limit.wait(never)
        assert sent_at is not None
        limit.passed(sent_at)
    assert limit.rate is None and limit.waiting() == 0


def test_a_429_pauses_every_worker_until_its_retry_after() -> None:
    heard: list[float] = []
    limit = RateLimit()
    limit.listeners.append(lambda seconds, reason: heard.append(seconds))
    for _ in range(20):
        limit.passed(limit.wait(never))  # type: ignore[arg-type]
    limit.limit(time.monotonic(), 0.3, cap=30)
    limit.limit(time.monotonic(), 0.3, cap=30)  # the same pause: heard once
    assert heard == [0.3] and 0.2 < limit.waiting() <= 0.3
    assert limit.rate == 0.9 * 20  # a tenth under what passed in the second before
    went: list[float] = []
    threads = [threading.Thread(target=lambda: went.append(limit.wait(never))) for _ in range(3)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert min(went) >= started + 0.2  # nobody went during the pause
    assert max(went) - min(went) >= 2 / 20 - 0.01  # then at the pace


def test_a_429_of_a_request_sent_before_the_pace_was_lowered_lowers_it_no_further() -> None:
    limit = RateLimit()
    early = limit.wait(never)
    limit.passed(early)  # type: ignore[arg-type]
    limit.limit(time.monotonic(), 0.0, cap=30)
    pace = limit.rate
    limit.limit(early, 0.0, cap=30)  # type: ignore[arg-type]
    assert limit.rate == pace and limit.limited == 2


def test_the_pace_set_after_a_burst_doubles_with_use_then_grows_additively() -> None:
    limit = RateLimit()
    for _ in range(20):
        limit.passed(limit.wait(never))  # type: ignore[arg-type]
    limit.limit(time.monotonic(), 0.0, cap=30)  # after a burst: 20 passed, the pace 18
    for _ in range(20):  # each answer let through adds 2 requests a second
        limit.passed(time.monotonic())
    assert limit.rate == 18 + 2 * 20
    limit.limit(time.monotonic(), 0.0, cap=30)  # too fast: once per pause, not per refusal
    lowered = limit.rate
    assert lowered is not None and 58 / 2 <= lowered <= max(58 / 2, 0.9 * 40)
    limit.limit(time.monotonic() - 1, 0.0, cap=30)  # sent before it was lowered: in flight
    assert limit.rate == lowered
    limit.passed(time.monotonic())  # from now on one request a second, each second
    assert limit.rate == pytest.approx(lowered + 1 / lowered)
    assert limit.found == lowered  # the pace the refusal set, not the one crept up since


def test_no_pace_is_worth_remembering_while_it_still_doubles_or_was_never_needed() -> None:
    limit = RateLimit()
    for _ in range(20):
        limit.passed(limit.wait(never))  # type: ignore[arg-type]
    assert limit.found is None
    limit.limit(time.monotonic(), 0.0, cap=30)
    limit.passed(time.monotonic())
    assert limit.rate == 18 + 2 and limit.found is None  # the limit is not reached yet
    given = RateLimit(42.0)  # an earlier batch's: kept to, found again only by a refusal
    for _ in range(30):
        given.passed(time.monotonic())
    assert given.found is None and given.most == 30
    given.limit(time.monotonic(), 0.0, cap=30)
    assert given.rate == given.found == 0.9 * 30
    grown = RateLimit(5000.0)  # far above what the service ever let through: not kept so
    for _ in range(25):
        grown.passed(time.monotonic())
    grown.limit(time.monotonic(), 0.0, cap=30)
    assert grown.rate == pytest.approx(2500, abs=1) and grown.found == 25


def test_a_client_refuses_a_pace_no_service_keeps() -> None:
    from dict_magics.errors import DictMagicsError

    for pace in (0, 0.5, -5, float("nan"), float("inf"), 1e9):
        with pytest.raises(DictMagicsError, match=r"pace must be 1\.\.10000 requests a second"):
            DictionaryClient("http://127.0.0.1:9", "ak", "sk", pace=pace)


def test_a_refusal_before_any_request_got_through_at_the_pace_only_pauses() -> None:
    limit = RateLimit()
    for _ in range(10):
        limit.passed(limit.wait(never))  # type: ignore[arg-type]
    limit.limit(time.monotonic(), 0.0, cap=30)
    pace = limit.rate
    limit.limit(limit.wait(never), 0.2, cap=30)  # type: ignore[arg-type]
    assert limit.rate == pace and limit.limited == 2 and limit.waiting() > 0


def test_a_429_without_retry_after_pauses_with_growing_backoff_up_to_the_cap() -> None:
    limit = RateLimit()
    limit.limit(time.monotonic(), None, cap=30)
    assert 0.4 < limit.waiting() <= 0.5
    limit.limit(time.monotonic(), None, cap=30)
    assert 0.9 < limit.waiting() <= 1.0
    limit.limit(time.monotonic(), 3600.0, cap=2)
    assert 1.9 < limit.waiting() <= 2.0


def test_stop_ends_the_wait() -> None:
    limit = RateLimit()
    limit.limit(time.monotonic(), 30.0, cap=30)
    stop = threading.Event()
    threading.Timer(0.1, stop.set).start()
    assert limit.wait(stop.is_set) is None


@pytest.fixture
def limited_sandbox() -> SandboxServer:
    with SandboxServer(200, rate_limit=200, burst=10, retry_after=1) as server:
        yield server


def test_a_429_storm_ends_with_every_entry_deleted_and_few_429s(
    limited_sandbox: SandboxServer,
) -> None:
    heard: list[tuple[float, str]] = []
    paused_at: list[float] = []  # wall clock, as the sandbox logs arrivals

    def waiting(seconds: float, reason: str) -> None:
        paused_at.append(time.time())
        heard.append((seconds, reason))

    client = DictionaryClient(
        limited_sandbox.url, limited_sandbox.access_key, limited_sandbox.secret_key
    )
    batch = client.delete_entries([str(i) for i in range(1, 201)], workers=16, on_wait=waiting)
    assert batch.ok and batch.succeeded == 200 and limited_sandbox.entries == {}
    operations = [r.operation for r in limited_sandbox.requests]
    assert operations.count("delete") == 200  # each id deleted once: no "no such entry"
    rejected = operations.count("rate_limited")
    assert rejected == client.rate_limit.limited
    assert rejected <= 0.1 * len(operations), f"{rejected} of {len(operations)} answered 429"
    assert heard and all(seconds == 1.0 and "rate limit" in r for seconds, r in heard)
    assert client.rate_limit.rate is not None  # a pace learned, kept for the next batch
    # Every worker paused once the client read the first 429 (timed here, not at the sandbox:
    # on a loaded machine reading it can take a while): requests already in flight may land
    # just after, but none is sent during the rest of its Retry-After.
    log = limited_sandbox.requests
    first = paused_at[0]
    assert [r for r in log if first + 0.3 < r.at < first + 0.9] == []


def test_cancel_while_every_worker_waits_out_a_long_retry_after() -> None:
    # The lenient nonce rule: a 40005 answered after the cancel would end as a nonce refusal.
    with SandboxServer(100, rate_limit=50, burst=5, retry_after=30, nonce_rule="unique") as sandbox:
        client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key)
        cancel = threading.Event()
        started = time.monotonic()
        batch = client.delete_entries(
            [str(i) for i in range(1, 101)],
            workers=8,
            cancel=cancel,
            on_wait=lambda seconds, reason: cancel.set(),
        )
        took = time.monotonic() - started
    assert took < 10, "the batch waited out the 30 s pause instead of stopping"
    assert batch.interrupted and not any(r.outcome_unknown for r in batch.results)
    deleted = [r for r in batch.results if r.ok]
    limited = [r for r in batch.results if r.cause is Cause.RATE_LIMITED]
    skipped = [r for r in batch.results if r.cause is Cause.NOT_ATTEMPTED]
    assert len(deleted) + len(limited) + len(skipped) == 100 and limited and skipped
    assert all("not sent again: stopped" in r.reason for r in limited)
    assert all(r.attempts == 0 for r in skipped)
    assert len(sandbox.entries) == 100 - len(deleted)


def test_the_command_line_says_when_it_waits_on_the_services_limit() -> None:
    """A log (stderr not a terminal) gets a line saying why the batch stands still."""
    import os
    import subprocess
    import sys

    with SandboxServer(40, rate_limit=5, burst=2, retry_after=1) as sandbox:
        env = {**os.environ, **sandbox.env()}
        ids = [str(i) for i in range(1, 13)]
        proc = subprocess.run(
            [sys.executable, "-m", "dict_magics", "delete", "-w", "4", "--no-snapshot", *ids],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        left = set(sandbox.entries)
    assert proc.returncode == 0, proc.stderr
    assert "waiting 1 s" in proc.stderr and "rate limit" in proc.stderr
    assert not left & set(ids)


def test_the_text_bar_says_it_is_waiting_until_the_next_result() -> None:
    import io

    from dict_magics.frontends.output import TextProgress
    from dict_magics.models import DeleteResult

    stream = io.StringIO()
    bar = TextProgress(stream)
    bar.start(4, "Deleting 4 entries")
    bar.waiting(1.0, "the service's rate limit")
    assert stream.getvalue().splitlines()[-1].endswith("waiting 1 s: the service's rate limit")
    bar(4, 4, DeleteResult("success", "1"))
    bar.stop()
    assert "waiting" not in stream.getvalue().splitlines()[-1]


def test_a_later_process_keeps_to_the_pace_the_service_allowed_from_its_first_request() -> None:
    """The pace a limited batch found is kept per profile and service: the next process starts
    at it instead of finding the limit again with a burst of refusals and a pause."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    with SandboxServer(140, rate_limit=50, burst=5, retry_after=1, nonce_rule="unique") as sandbox:
        env = {**os.environ, **sandbox.env()}

        def delete(first: int, last: int) -> subprocess.CompletedProcess[str]:
            ids = [str(i) for i in range(first, last + 1)]
            command = [sys.executable, "-m", "dict_magics", "delete", "-w", "8", "--no-snapshot"]
            return subprocess.run(
                command + ids, capture_output=True, text=True, env=env, timeout=120
            )

        def refused() -> int:
            return sum(r.operation == "rate_limited" for r in sandbox.requests)

        first = delete(1, 100)
        refused_first = refused()
        kept = list(Path(env["DICT_MAGICS_HOME"], "paces").iterdir())
        pace = json.loads(kept[0].read_text())["rate"] if kept else None
        command = [sys.executable, "-m", "dict_magics", "status"]
        shown = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
        said = subprocess.run([*command, "--json"], capture_output=True, text=True, env=env)
        second = delete(101, 140)
        refused_second = refused() - refused_first
        left = sandbox.entries
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert refused_first > 0 and len(kept) == 1, "the first batch found no pace to keep"
    assert pace is not None and 1 <= pace <= 50 and json.loads(said.stdout)["pace"] == pace
    assert re.search(
        rf"\n  rate limit: +{pace:g} requests a second, kept for a day\n", shown.stdout
    )
    assert refused_second == 0 and "rate limit" not in second.stderr
    assert left == {}


def test_a_kept_pace_is_one_keys_at_one_service_and_trusted_for_a_day(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dict_magics.models import probe
    from dict_magics.operations.context import client_from
    from dict_magics.profiles.credentials import Credentials

    creds = Credentials("work", "http://127.0.0.1:9", "ak", "sk")
    probe.save_pace("work", creds.base_url, "ak", 37.5)
    with client_from(creds) as client:
        assert client.rate_limit.rate == 37.5
    assert probe.stored_pace("work", "http://127.0.0.1:10", "ak") is None
    assert probe.stored_pace("home", creds.base_url, "ak") is None
    assert probe.stored_pace("work", creds.base_url, "another key") is None
    later = time.time() + probe.PACE_KEPT + 1
    monkeypatch.setattr(time, "time", lambda: later)
    assert probe.stored_pace("work", creds.base_url, "ak") is None


@pytest.mark.parametrize(
    "kept",
    [
        b'{"rate": NaN, "at": 0}',
        b'{"rate": Infinity, "at": 0}',
        b'{"rate": 1e400, "at": 0}',
        b'{"rate": 0, "at": 0}',
        b'{"rate": -5, "at": 0}',
        b'{"rate": 123456, "at": 0}',
        b'{"rate": true, "at": 0}',
        b'{"rate": "90", "at": 0}',
        b'{"rate": 90, "at": 1e400}',
        b'{"rate": 9' + b"9" * 400 + b', "at": 0}',
        b"[" * 100_000 + b"]" * 100_000,
        b"",
        b"{}",
    ],
)
def test_a_pace_file_that_is_not_a_pace_we_wrote_is_ignored(kept: bytes) -> None:
    """Never a pace of 1 a second for a day, nor one no refusal can lower, nor a crash."""
    import os

    from dict_magics.models import probe

    probe.save_pace("work", "http://127.0.0.1:9", "ak", 90.0)
    path = probe._path("paces", "work", "http://127.0.0.1:9", "ak")
    now = str(time.time()).encode()
    path.write_bytes(kept.replace(b'"at": 0', b'"at": ' + now))
    assert probe.stored_pace("work", "http://127.0.0.1:9", "ak") is None
    path.unlink()
    os.mkfifo(path)  # a FIFO in its place: refused, not waited on
    assert probe.stored_pace("work", "http://127.0.0.1:9", "ak") is None


def test_a_pace_kept_too_low_rises_with_what_the_service_let_through() -> None:
    """A batch that starts at a kept pace and is never refused keeps the most it got through
    in one second (a pace learned while another process shared the key is not kept a day)."""
    from dict_magics.models import probe
    from dict_magics.operations.context import OperationSettings, connect

    with SandboxServer(5) as sandbox:
        os_env = sandbox.env()
        with pytest.MonkeyPatch.context() as patch:
            for name, value in {**os_env, "DICT_MAGICS_CLIENT_CACHE": "off"}.items():
                patch.setenv(name, value)  # a new client each time, as a new process has
            probe.save_pace("default", sandbox.url, sandbox.access_key, 20.0)
            with connect(OperationSettings()) as (client, _):
                assert client.rate_limit.rate == 20.0
                for _ in range(20):  # at the kept pace: not enough to keep
                    client.rate_limit.passed(time.monotonic())
            assert probe.stored_pace("default", sandbox.url, sandbox.access_key) == 20.0
            with connect(OperationSettings()) as (client, _):
                for _ in range(40):
                    client.rate_limit.passed(time.monotonic())
            assert probe.stored_pace("default", sandbox.url, sandbox.access_key) == 40.0
