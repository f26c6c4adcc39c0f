"""How requests run under Ctrl-C: one held back while it runs, or a batch on worker threads.

One request (``HeldCtrlC``): only the main thread receives Ctrl-C. ``with HeldCtrlC() as held:``
around one mutating request holds Ctrl-C back while it runs: the SIGINT handler found is
swapped for one that only sets ``held.stop`` (a ``threading.Event`` the request reads as data:
a request not sent yet is not sent), and on leaving the block the handler is put back and the
Ctrl-C delivered, once the request has ended (within its deadline): Python's own handler as
``RequestInterrupted`` carrying the true result (``held.result``), another handler called then
(a ``KeyboardInterrupt`` it raises becomes ``RequestInterrupted`` too; anything else it raises
rides in ``RequestInterrupted.then``, raised once the caller has noted the result). Under the
default action (``SIG_DFL``) it is ``RequestInterrupted`` as well: not a death before the caller
has noted (and audited) what the request did; left uncaught, it then ends the program. Where
Ctrl-C is ignored (``SIG_IGN``, a background job), it stays ignored, but another signal a front
end passes on as Ctrl-C (its SIGTERM, with its own number) is held back the same way. So
nothing is left unknown that need not be, and the request is never handed to another thread or
called back.

A batch: one engine for every request of a batch: deletes, bulk-add chunks and updates.

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
import signal
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from ..models import AddResult, DeleteResult, UpdateResult

__all__ = [
    "AUTH_STOP_AFTER",
    "STOP_REASONS",
    "BatchRun",
    "HeldCtrlC",
    "RequestInterrupted",
    "run",
]

T = TypeVar("T")
R = TypeVar("R")

# -- one request ----------------------------------------------------------------------------------


class RequestInterrupted(KeyboardInterrupt):
    """Ctrl-C during one request: raised once the request in flight has ended.

    ``result`` is what that request really did (the interrupt never leaves it unknown when an
    answer was on its way), and the message shows it.
    """

    def __init__(
        self,
        result: DeleteResult | AddResult | UpdateResult,
        then: BaseException | None = None,
    ) -> None:
        super().__init__()
        self.result = result
        self.then = then
        """What a front end's own SIGINT handler raised (``SystemExit``, say), held until the
        caller has noted the result."""

    def passed_on(self, result: DeleteResult | AddResult | UpdateResult) -> BaseException:
        """What to raise once ``result`` (this one, named) is noted and audited: the handler's
        own exception, else ``RequestInterrupted(result)``."""
        return self.then if self.then is not None else RequestInterrupted(result)

    def __str__(self) -> str:
        return f"interrupted after the request in flight ended: {self.result}"


class HeldCtrlC:
    """Ctrl-C held back around one mutating request on this thread (see the module's text).

    ``stop`` is set at Ctrl-C; the block stores its request's result in ``result``. Off the
    main thread (no Ctrl-C arrives there), and where SIGINT is handled outside Python, nothing
    is swapped and ``stop`` is never set. Where SIGINT is ignored, a real one still is; only a
    front end passing another signal on as Ctrl-C sets ``stop``.
    """

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.result: Any = None
        self._found: Callable[[int, FrameType | None], Any] | int | None = None
        self._ignoring = False
        self._frame: FrameType | None = None

    def __enter__(self) -> HeldCtrlC:
        if threading.current_thread() is threading.main_thread():
            found = signal.getsignal(signal.SIGINT)
            if found is not None:
                self._found = found
                self._ignoring = found is signal.SIG_IGN
                signal.signal(signal.SIGINT, self._noted)
        return self

    def _noted(self, signum: int, frame: FrameType | None) -> None:
        if self._ignoring and signum == signal.SIGINT:
            return  # Ctrl-C is ignored here, as it was before the request
        if not self.stop.is_set():
            self._frame = frame
        self.stop.set()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        found, self._found = self._found, None
        if found is None:
            return
        signal.signal(signal.SIGINT, found)
        if kind is not None or not self.stop.is_set():
            return  # an exception of the request's own goes out as it is
        if found is signal.default_int_handler or not callable(found):
            # SIG_DFL too: dying here would lose the result (and its audit line) of a request
            # the service may have acted on; uncaught, this ends the program once it is noted.
            # SIG_IGN: only a signal passed on as Ctrl-C set ``stop``.
            raise self._interrupted()
        try:
            found(signal.SIGINT, self._frame)
        except KeyboardInterrupt:
            raise self._interrupted() from None
        except BaseException as exc:  # SystemExit, say: once the caller has noted the result
            if self.result is None:
                raise
            raise RequestInterrupted(self.result, then=exc) from None

    def _interrupted(self) -> KeyboardInterrupt:
        """``RequestInterrupted`` with the block's result; a plain ``KeyboardInterrupt`` for a
        block without one (an audit line being written)."""
        return KeyboardInterrupt() if self.result is None else RequestInterrupted(self.result)


# -- a batch --------------------------------------------------------------------------------------

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
        while True:  # again after every further Ctrl-C: what is in flight ends in its deadline
            try:
                _finish(pool, state)
                break
            except KeyboardInterrupt:
                continue
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
