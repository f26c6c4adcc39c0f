"""The service's rate limit: one gate per client that pauses every worker and learns a pace.

The gate's arithmetic is checked with a hand-driven clock (no sleeping); its effect against the
sandbox's real token bucket (429 + Retry-After, nothing acted on), over loopback HTTP.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from dict_magics.models import Cause
from dict_magics.sandbox import SandboxServer
from dict_magics.service import ratelimit
from dict_magics.service.client import DictionaryClient
from dict_magics.service.ratelimit import RateGate, Ticket


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def no_wait() -> bool:
    return True


def one_look() -> Callable[[], bool]:
    """A ``stop`` that lets ``acquire`` look once (and wait at most one short slice)."""
    looks = iter([False])
    return lambda: next(looks, True)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def gate(clock: Clock) -> RateGate:
    return RateGate(clock=clock)


def pass_many(gate: RateGate, clock: Clock, count: int, rate: float) -> None:
    """``count`` requests sent and answered at ``rate`` a second, each let through."""
    for _ in range(count):
        ticket = gate.acquire(one_look())
        assert ticket is not None
        gate.passed(ticket)
        clock.now += 1 / rate


def grow(gate: RateGate, clock: Clock) -> float:
    """Send at the gate's own pace, every answer passing, until the rate changes."""
    rate = gate.rate
    assert rate is not None
    for _ in range(1000):
        pass_many(gate, clock, 1, rate)
        if gate.rate != rate:
            return gate.rate  # type: ignore[return-value]
    raise AssertionError(f"the rate stayed at {rate}")


# -- the gate's arithmetic ------------------------------------------------------------------------


def test_no_pace_and_no_wait_until_the_service_says_429(gate: RateGate, clock: Clock) -> None:
    tickets = [gate.acquire(no_wait) for _ in range(100)]
    assert all(t is not None for t in tickets)
    assert gate.rate is None and gate.waiting() == 0 and gate.stats.sent == 100


def test_an_isolated_429_pauses_every_worker_but_sets_no_pace(gate: RateGate, clock: Clock) -> None:
    ticket = gate.acquire(no_wait)
    assert ticket is not None
    gate.limited(ticket, 2.0)
    assert gate.waiting() == 2.0 and gate.rate is None
    assert [gate.acquire(no_wait) for _ in range(3)] == [None, None, None]
    clock.now += 2.0
    assert gate.acquire(no_wait) is not None


def test_the_first_429_paces_at_what_passed_in_the_second_before(
    gate: RateGate, clock: Clock
) -> None:
    pass_many(gate, clock, 10, rate=1000)
    late = gate.acquire(no_wait)
    assert late is not None
    gate.limited(late, 1.0)
    assert gate.rate == 10.0 and gate.waiting() == pytest.approx(1.0)
    assert gate.acquire(no_wait) is None  # everyone waits out the Retry-After
    clock.now += 1.0
    first = gate.acquire(one_look())
    assert first is not None
    assert gate.acquire(one_look()) is None  # the next one's turn is 1/10 s later
    clock.now += 0.1
    assert gate.acquire(one_look()) is not None


def test_answers_to_requests_sent_before_a_429_do_not_count_twice(
    gate: RateGate, clock: Clock
) -> None:
    pass_many(gate, clock, 10, rate=1000)
    in_flight = [gate.acquire(no_wait) for _ in range(5)]
    gate.limited(in_flight[0], 1.0)  # type: ignore[arg-type]
    for ticket in in_flight[1:]:
        gate.limited(ticket, 1.0)  # type: ignore[arg-type]
    assert gate.rate == 10.0 and gate.stats.limited == 5 and gate.stats.pauses == 1


def test_slow_start_grows_until_a_429_then_steps_and_backs_off(
    gate: RateGate, clock: Clock
) -> None:
    pass_many(gate, clock, 10, rate=1000)
    gate.limited(gate.acquire(no_wait), 1.0)  # type: ignore[arg-type]
    clock.now += 1.0
    rates = [grow(gate, clock) for _ in range(4)]  # a success window at each rate
    assert rates == [20.0, 40.0, 80.0, 160.0]
    clock.now += 0.1
    gate.limited(gate.acquire(one_look()), 1.0)  # type: ignore[arg-type]
    proven = gate.rate
    # Never above the last rate that held, nor below the one before it.
    assert proven is not None and 40.0 <= proven <= 80.0
    clock.now += 1.0
    assert grow(gate, clock) == pytest.approx(proven * (1 + ratelimit.STEP))  # additive now
    assert grow(gate, clock) == pytest.approx(proven * (1 + 2 * ratelimit.STEP))
    before = gate.rate
    clock.now += 0.1
    gate.limited(gate.acquire(one_look()), 1.0)  # type: ignore[arg-type]
    assert gate.rate == pytest.approx(before * ratelimit.BETA)


def test_an_idle_spell_does_not_grow_the_pace(gate: RateGate, clock: Clock) -> None:
    pass_many(gate, clock, 10, rate=1000)
    gate.limited(gate.acquire(no_wait), 1.0)  # type: ignore[arg-type]
    clock.now += 1.0
    pass_many(gate, clock, 10, rate=0.5)  # a cell now and then: far below the pace
    assert gate.rate == 10.0


def test_a_429_without_retry_after_pauses_with_growing_backoff(clock: Clock) -> None:
    gate = RateGate(backoff=0.5, max_backoff=1.5, clock=clock)
    waits = []
    for _ in range(4):
        gate.limited(Ticket(epoch=99, sent_at=clock.now), None)
        waits.append(gate.waiting())
        clock.now += gate.waiting()
    assert waits == [0.5, 1.0, 1.5, 1.5]


def test_listeners_hear_every_pause_while_they_listen(gate: RateGate, clock: Clock) -> None:
    heard: list[tuple[float, str]] = []
    with gate.listen(lambda seconds, reason: heard.append((seconds, reason))):
        gate.limited(gate.acquire(no_wait), 3.0)  # type: ignore[arg-type]
        gate.limited(Ticket(0, clock.now), 3.0)  # the same pause: not announced again
        clock.now += 5
        gate.limited(gate.acquire(no_wait), 2.0)  # type: ignore[arg-type]
    clock.now += 5
    gate.limited(gate.acquire(no_wait), 1.0)  # type: ignore[arg-type]
    assert heard == [(3.0, ratelimit.REASON), (2.0, ratelimit.REASON)]
    assert "rate limit" in ratelimit.REASON


# -- against the sandbox's real rate limit --------------------------------------------------------


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
        limited_sandbox.url, limited_sandbox.access_key, limited_sandbox.secret_key, workers=16
    )
    batch = client.delete_entries([str(i) for i in range(1, 201)], workers=16, on_wait=waiting)
    assert batch.ok and batch.succeeded == 200 and limited_sandbox.entries == {}
    operations = [r.operation for r in limited_sandbox.requests]
    assert operations.count("delete") == 200  # each id deleted once: no "no such entry"
    rejected = operations.count("rate_limited")
    assert rejected == client.rate_limit.stats.limited
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
    with SandboxServer(100, rate_limit=50, burst=5, retry_after=30) as sandbox:
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
