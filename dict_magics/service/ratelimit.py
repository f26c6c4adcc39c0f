"""One gate per client that every request passes before it is sent: the service's rate limit,
learned from its answers and kept to by every worker together.

A service over its rate limit answers 429 with ``Retry-After``. Workers that each back off on
their own keep hammering it: while one waits, the others draw more 429s. Here a 429 pauses
*every* worker until ``Retry-After`` has passed, and the gate learns a sending rate (AIMD on the
rate). It starts unpaced. The first 429 sets the rate to what passed in the second before, and
the rate then grows by ``GROWTH`` per success window (slow start) until the next 429, which sets
it to what the answers so far prove the service takes (``_proven``). From then on it grows by a
small fixed step per success window and shrinks by ``BETA`` at each 429. Every request waits for
its turn at that rate (a pacer with no burst), so the service sees an even flow just under its
limit instead of bursts and pauses. No I/O here: the client calls ``acquire`` before each
attempt, then ``passed`` or ``limited`` with what the service answered.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["RATE_LIMIT_PATIENCE", "GateStats", "RateGate", "Ticket", "WaitListener"]

RATE_LIMIT_PATIENCE = 300.0
"""Seconds a request answered 429 keeps being sent again (a 429 is never acted on): patience
for the service's limit, where other failures get ``max_retries``."""
MIN_RATE = 1.0
"""The slowest pace (requests a second) the gate ever keeps to."""
WINDOW = 0.25
"""A success window: this many seconds' worth of answers at the current rate."""
GROWTH = 2.0
"""The slow start's increase per success window."""
BETA = 0.9
"""The share of the rate kept after a 429 once the gate is past its slow start."""
STEP = 0.0125
"""The additive increase per success window (5 % a second), as a share of the rate the slow
start ended on: slow, because every 429 costs every worker a whole ``Retry-After``."""
REASON = "the service's rate limit"
_SLICE = 0.05
"""The longest sleep between two looks at ``stop()``."""

WaitListener = Callable[[float, str], None]
"""``on_wait(seconds, reason)``: every worker now waits ``seconds`` for ``reason``."""


@dataclass(frozen=True)
class Ticket:
    """A request's turn: which rate period it was sent in (429s of requests sent before the
    last decrease do not decrease the rate again), and when."""

    epoch: int
    sent_at: float


@dataclass(frozen=True)
class GateStats:
    """What the gate has seen: requests let through, answers that passed the limit, 429s,
    pauses (each a wait of every worker), and the rate it keeps to (``None``: unpaced)."""

    sent: int
    passed: int
    limited: int
    pauses: int
    rate: float | None


class RateGate:
    """The shared gate of one client's workers; thread-safe. ``on_wait(seconds, reason)`` is
    called (from the worker that met the 429) at every pause; ``listen`` adds one for a while.
    ``backoff`` and ``max_backoff`` time a pause when a 429 names no ``Retry-After``."""

    def __init__(
        self,
        *,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        on_wait: WaitListener | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._backoff, self._max_backoff = backoff, max_backoff
        self._clock = clock
        self._lock = threading.Lock()
        self._turn = threading.Condition(self._lock)
        self._head = False
        self._rate: float | None = None
        self._slow_start = True
        self._step = 0.0
        self._last = float("-inf")  # when the last paced request was let through
        self._paused_until = 0.0
        self._epoch = 0
        self._streak = 0  # 429 pauses without a Retry-After since an answer last passed
        self._window_start = 0.0
        self._window_passed = 0
        self._rate_since = 0.0  # when the rate last changed
        self._levels: list[tuple[float, float]] = []  # the slow start's (rate, since)
        self._burst = 0  # answers to requests sent unpaced that passed: the burst, at most
        self._recent: deque[float] = deque()  # when answers passed, over the last second
        self._listeners: list[WaitListener] = [on_wait] if on_wait is not None else []
        self._sent = self._passed = self._limited = self._pauses = 0

    def __repr__(self) -> str:
        rate = "unpaced" if self._rate is None else f"{self._rate:.1f}/s"
        return f"RateGate({rate}, {self._limited} limited)"

    # -- what front ends may read ------------------------------------------------------------

    @property
    def rate(self) -> float | None:
        """The requests a second the gate keeps to; ``None`` until the service first says 429."""
        return self._rate

    def waiting(self) -> float:
        """Seconds every worker still waits for the service's limit (0: not paused)."""
        return max(0.0, self._paused_until - self._clock())

    @property
    def stats(self) -> GateStats:
        with self._lock:
            return GateStats(self._sent, self._passed, self._limited, self._pauses, self._rate)

    @contextmanager
    def listen(self, listener: WaitListener | None) -> Iterator[None]:
        """Call ``listener(seconds, reason)`` (from a worker thread) at each pause while the
        block runs: how a batch's progress display learns that it is waiting on the service."""
        if listener is None:
            yield
            return
        with self._lock:
            self._listeners.append(listener)
        try:
            yield
        finally:
            with self._lock:
                self._listeners.remove(listener)

    # -- the client's side -------------------------------------------------------------------

    def acquire(self, stop: Callable[[], bool]) -> Ticket | None:
        """Wait for this request's turn; ``None`` if ``stop()`` turned true first (then nothing
        may be sent). Free while no 429 has been seen.

        One waiter at a time (the head) sleeps until the next send time; the others wait for
        their turn, so a send wakes one thread, not every worker. ``stop`` must be cheap: it is
        asked with the gate's lock held.
        """
        with self._turn:
            if self._rate is None and self._paused_until <= self._clock():
                self._sent += 1
                return Ticket(self._epoch, self._clock())
            while True:
                if stop():
                    return None
                now = self._clock()
                if self._head:
                    self._turn.wait(_SLICE)
                    continue
                slot = self._slot()
                if slot <= now:
                    interval = 0.0 if self._rate is None else 1.0 / self._rate
                    # On schedule, or (after an idle spell) from now: no burst to catch up.
                    self._last = slot if now - slot < interval else now
                    self._sent += 1
                    self._turn.notify()  # the next waiter becomes the head
                    return Ticket(self._epoch, now)
                self._head = True
                try:
                    self._turn.wait(min(_SLICE, slot - now))
                finally:
                    self._head = False

    def _slot(self) -> float:
        """When the next request may go (the lock is held): after the pause, and one interval
        of the current rate after the last one sent."""
        slot = self._paused_until
        if self._rate is not None:
            slot = max(slot, self._last + 1.0 / self._rate)
        return slot

    def passed(self, ticket: Ticket) -> None:
        """The service answered, and not 429: the limit let the request through."""
        with self._lock:
            now = self._clock()
            self._passed += 1
            self._streak = 0
            if ticket.epoch == 0:
                self._burst += 1
            self._recent.append(now)
            while self._recent[0] < now - 1.0:
                self._recent.popleft()
            if self._rate is None or ticket.epoch != self._epoch:
                return  # unpaced, or sent before the last 429: says nothing of this rate
            self._window_passed += 1
            elapsed = now - self._window_start
            if self._window_passed < max(2.0, self._rate * WINDOW) or elapsed < WINDOW:
                return
            if self._window_passed / elapsed >= self._rate / 2:
                # The rate was used (not an idle spell between cells): it may grow.
                self._rate = self._rate * GROWTH if self._slow_start else self._rate + self._step
                self._rate_since = now
                if self._slow_start:
                    self._levels.append((self._rate, now))
            self._window_start, self._window_passed = now, 0

    def limited(self, ticket: Ticket, retry_after: float | None) -> None:
        """The service answered 429: pause every worker, and slow down once per rate period."""
        with self._lock:
            now = self._clock()
            self._limited += 1
            if retry_after is None:
                self._streak += 1
                retry_after = min(self._max_backoff, self._backoff * 2 ** (self._streak - 1))
            until = now + retry_after
            new_pause = until > self._paused_until + _SLICE
            self._paused_until = max(self._paused_until, until)
            if ticket.epoch == self._epoch:
                self._epoch += 1
                self._decrease(ticket, now)
            if not new_pause:
                return
            self._pauses += 1
            listeners = list(self._listeners)
        for listener in listeners:
            listener(retry_after, REASON)

    def _decrease(self, ticket: Ticket, now: float) -> None:
        """The multiplicative decrease (the lock is held)."""
        rate = self._rate
        if rate is None:
            recent = sum(1 for t in self._recent if t >= now - 1.0)
            if not recent:
                return  # nothing passed lately: an isolated 429, not our pace; pause only
            self._rate = max(MIN_RATE, float(recent))  # what passed in the second before
            self._levels = [(self._rate, self._paused_until)]
        elif self._slow_start and len(self._levels) < 2:
            # Not grown yet: the first guess was too high (or the service's bucket had not
            # refilled). Guess lower and keep probing.
            self._rate = max(MIN_RATE, rate / GROWTH)
            self._levels = [(self._rate, self._paused_until)]
        elif self._slow_start:
            self._slow_start = False
            self._rate = max(MIN_RATE, self._proven(ticket))
            self._step = STEP * self._rate
        else:
            self._rate = max(MIN_RATE, BETA * rate)
        self._rate_since = self._window_start = self._paused_until
        self._window_passed = 0

    def _proven(self, ticket: Ticket) -> float:
        """The most the slow start's answers prove the service takes, read as a token bucket
        with at most ``burst`` tokens: a rate ``r`` kept up for ``t`` seconds draws a 429 only
        past ``t = burst / (r - limit)``, so ``limit >= r - burst / t`` for the level that drew
        the 429 (it lasted until ``ticket`` was sent) and for the one before (it held). Never
        above the rate before the one that drew the 429: a burst may have hidden an excess."""
        levels = [(r, since) for r, since in self._levels if since <= ticket.sent_at]
        if len(levels) < 2:  # sent before the first growth
            return self._levels[0][0] / GROWTH
        (held, held_since), (drew, drew_since) = levels[-2], levels[-1]
        burst = max(1, self._burst)
        bounds = [held / GROWTH]  # the level before, which held too
        bounds.append(drew - burst / max(ticket.sent_at - drew_since, 1e-3))
        bounds.append(held - burst / max(drew_since - held_since, 1e-3))
        return min(held, max(bounds))
