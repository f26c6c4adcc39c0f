"""The one batch engine: deletes, bulk-add chunks and updates on worker threads.

At most ``workers`` requests are in flight, so Ctrl-C, a cancel or refused credentials stop the
batch right after them: what was sent is waited for, items never sent come back as ``None``.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

AUTH_STOP_AFTER = 3
"""A batch whose answers refuse the credentials this many times in a row sends nothing more."""


@dataclass
class BatchRun(Generic[R]):
    """``results[i]`` for ``items[i]`` (``None``: never sent); ``why`` the batch stopped early."""

    results: list[R | None]
    why: str = ""

    @property
    def interrupted(self) -> bool:
        return self.why in ("interrupted", "cancelled")


def run(
    items: Sequence[T],
    send: Callable[[T, Callable[[], bool]], R],
    *,
    workers: int,
    sent: Callable[[R], bool],
    refused: Callable[[R], str | bool],
    progress: Callable[[int, int, R], None] | None = None,
    cancel: threading.Event | None = None,
    name: str = "dict-magics-batch",
) -> BatchRun[R]:
    """Send every item with ``send(item, stop)`` on ``workers`` threads; ``stop()`` turns
    true once the batch stops, as after ``AUTH_STOP_AFTER`` answers in a row that ``refused``.
    An exception from ``send`` (a bug) is raised once the requests in flight have ended."""
    cancel = cancel or threading.Event()
    halt = threading.Event()
    why: list[str] = []
    errors: list[BaseException] = []
    results: list[R | None] = [None] * len(items)
    done: queue.SimpleQueue[int | None] = queue.SimpleQueue()

    def stopped() -> bool:
        return halt.is_set() or cancel.is_set()

    def stop(reason: str) -> None:
        if not halt.is_set():
            why.append(reason)
            halt.set()

    def work(index: int) -> None:
        finished = None  # the index of a result that was sent
        try:
            if not stopped():
                result = send(items[index], stopped)
                if sent(result):
                    results[index], finished = result, index
        except BaseException as exc:  # a bug: raised on the caller's thread
            errors.append(exc)
        done.put(finished)

    total, submitted, received, reported, refusals = len(items), 0, 0, 0, 0
    pool = ThreadPoolExecutor(max(1, min(workers, total)), thread_name_prefix=name)
    try:
        while True:
            while submitted - received < workers and submitted < total and not stopped():
                pool.submit(work, submitted)
                submitted += 1
            if received == submitted:
                break
            index = done.get()
            received += 1
            if errors:
                stop("error")
            if index is None:
                continue
            result = results[index]
            refusal = refused(result)  # type: ignore[arg-type]
            refusals = refusals + 1 if refusal else 0
            if refusals == AUTH_STOP_AFTER:
                stop("auth" if refusal is True else str(refusal))
            reported += 1
            if progress is not None and not halt.is_set():
                progress(reported, total, result)  # type: ignore[arg-type]
    except KeyboardInterrupt:
        stop("interrupted")
    except BaseException:
        stop("error")
        raise
    finally:
        while True:  # what is in flight ends within its timeouts, whatever Ctrl-C says
            try:
                pool.shutdown(wait=True, cancel_futures=True)
                break
            except KeyboardInterrupt:
                stop("interrupted")
    if errors:
        raise errors[0]
    return BatchRun(results, why[0] if why else ("cancelled" if cancel.is_set() else ""))
