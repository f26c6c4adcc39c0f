"""One batch engine for every request of a batch: deletes, bulk-add chunks and updates.

``run(items, send, ...)`` keeps at most ``workers`` requests in flight on a thread pool and
hands out the next item only when a worker is free, so a cancel, a Ctrl-C or refused
credentials stop the batch right after the requests in flight: nothing new starts, what was
sent is waited for (each request ends within its deadline) and reported as it ended, and items
never sent come back as ``None`` (the caller words them "not attempted"). Results are in input
order; ``progress(done, total, result)`` is called on the calling thread after each one. The
rate gate is the client's: every ``send`` passes it, and ``stop()`` ends a wait at the gate.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from .interrupts import wait_through_interrupts

__all__ = ["AUTH_STOP_AFTER", "STOP_REASONS", "BatchRun", "run"]

T = TypeVar("T")
R = TypeVar("R")

AUTH_STOP_AFTER = 3
"""A batch whose first this many answers all refuse the credentials sends nothing more."""
STOP_REASONS = ("interrupted", "cancelled", "auth", "error")
"""Why a batch ended early (``BatchRun.why``); empty when it ran to the end."""


@dataclass
class BatchRun(Generic[R]):
    """What a batch did: ``results[i]`` for ``items[i]`` (``None``: never sent), and ``why`` it
    stopped early (one of ``STOP_REASONS``, or empty)."""

    results: list[R | None]
    why: str = ""

    @property
    def interrupted(self) -> bool:
        """Stopped by Ctrl-C or a cancel (not by refused credentials or an error)."""
        return self.why in ("interrupted", "cancelled")


@dataclass
class _State:
    halt: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    started: int = 0
    finished: int = 0
    errors: list[BaseException] = field(default_factory=list)
    why: str = ""
    done: queue.SimpleQueue = field(default_factory=queue.SimpleQueue)

    def stop(self, why: str) -> None:
        with self.lock:
            if not self.halt.is_set():
                self.why = why
                self.halt.set()


def run(
    items: Sequence[T],
    send: Callable[[T, Callable[[], bool]], R],
    *,
    workers: int,
    sent: Callable[[R], bool],
    refused: Callable[[R], bool],
    progress: Callable[[int, int, R], None] | None = None,
    cancel: threading.Event | None = None,
    name: str = "dict-magics-batch",
) -> BatchRun[R]:
    """Send every item with ``send(item, stop)`` on ``workers`` threads.

    ``stop()`` turns true once the batch stops (Ctrl-C, ``cancel``, refused credentials): a
    ``send`` that has not sent yet returns a result for which ``sent(result)`` is false, and
    that item is reported as never sent. ``refused(result)`` says a result's answer refused the
    credentials: when the first ``AUTH_STOP_AFTER`` answers all do, nothing more is sent.
    An exception raised by ``send`` (a bug) stops the batch and is raised here once every
    request in flight has ended.
    """
    cancel = cancel or threading.Event()
    state = _State()
    results: list[R | None] = [None] * len(items)

    def stopped() -> bool:
        return state.halt.is_set() or cancel.is_set()

    def work(index: int) -> None:
        with state.lock:
            if stopped():
                state.done.put(None)
                return
            state.started += 1
        try:
            result = send(items[index], stopped)
        except BaseException as exc:  # a bug: re-raised on the caller's thread
            with state.lock:
                state.errors.append(exc)
                state.finished += 1
            state.done.put(None)
            return
        went = sent(result)  # else stopped before sending (e.g. at the rate gate)
        with state.lock:
            if went:
                results[index] = result
            state.finished += 1
        state.done.put(index if went else None)

    pool = ThreadPoolExecutor(max(1, min(workers, len(items))), thread_name_prefix=name)
    try:
        _feed(pool, work, results, workers, progress, refused, state, stopped)
    except KeyboardInterrupt:
        state.stop("interrupted")
    except BaseException:
        state.stop("error")
        raise
    finally:
        wait_through_interrupts(lambda: _finish(pool, state))
    if state.errors:
        raise state.errors[0]
    why = state.why or ("cancelled" if cancel.is_set() else "")
    return BatchRun(results, why)


def _feed(
    pool: ThreadPoolExecutor,
    work: Callable[[int], None],
    results: list[R | None],
    workers: int,
    progress: Callable[[int, int, R], None] | None,
    refused: Callable[[R], bool],
    state: _State,
    stopped: Callable[[], bool],
) -> None:
    """Keep ``workers`` requests going, and report each result as it comes back.

    Handing out one item per free worker (rather than queueing them all) is what lets a
    cancel, a Ctrl-C or refused credentials stop the batch after the requests in flight.
    """
    total = len(results)
    pending = iter(range(total))
    submitted = received = reported = 0
    refusals: list[bool] = []
    while True:
        while submitted - received < workers and not stopped():
            index = next(pending, None)
            if index is None:
                break
            pool.submit(work, index)
            submitted += 1
        if received == submitted:
            return
        index = state.done.get()
        received += 1
        if state.errors:
            state.stop("error")
        if index is None:
            continue
        result = results[index]
        if result is None:
            continue
        if len(refusals) < AUTH_STOP_AFTER:
            refusals.append(refused(result))
            if len(refusals) == AUTH_STOP_AFTER and all(refusals):
                state.stop("auth")
        reported += 1
        if progress is not None and not state.halt.is_set():
            progress(reported, total, result)


def _finish(pool: ThreadPoolExecutor, state: _State) -> None:
    """Drop what was never started, then wait until every request that was started has
    ended (each within its deadline)."""
    pool.shutdown(wait=False, cancel_futures=True)
    while True:
        with state.lock:
            if state.finished >= state.started:
                return
        state.done.get()
