"""Ctrl-C and a request in flight: a mutating request is never cut off half-way.

Only the main thread receives Ctrl-C. ``guarded(run)`` runs one request there with Ctrl-C only
noted (when Python's own handler is installed), or on a helper thread while the main thread
waits through further interrupts; either way the request ends (within its deadline) and then
``RequestInterrupted`` carries its true result, so nothing is left unknown that need not be.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..workers import helper

if TYPE_CHECKING:
    from .models import AddResult, DeleteResult

__all__ = ["RequestInterrupted", "guarded", "never", "wait_through_interrupts"]


class RequestInterrupted(KeyboardInterrupt):
    """Ctrl-C during one request: raised once the request in flight has ended.

    ``result`` is what that request really did (the interrupt never leaves it unknown when an
    answer was on its way), and the message shows it.
    """

    def __init__(self, result: DeleteResult | AddResult) -> None:
        super().__init__()
        self.result = result

    def __str__(self) -> str:
        return f"interrupted after the request in flight ended: {self.result}"


def guarded(run: Callable[[Callable[[], bool]], Any]) -> Any:
    """Run one mutating request so that Ctrl-C (which only the main thread receives) cannot
    cut it off half-way: on the main thread, with Ctrl-C held back while it runs (when
    Python's own handler is installed), else on a helper thread."""
    if threading.current_thread() is not threading.main_thread():
        return run(never)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        return _holding_ctrl_c(run)
    stopped = threading.Event()
    future = helper("request").submit(run, stopped.is_set)  # one request at a time
    try:
        return future.result()
    except KeyboardInterrupt:
        stopped.set()
    result = wait_through_interrupts(future.result)
    raise RequestInterrupted(result)


def _holding_ctrl_c(run: Callable[[Callable[[], bool]], Any]) -> Any:
    """``run(stop)`` on the main thread with Ctrl-C only noted (``stop()`` turns true), then
    ``RequestInterrupted`` with its result. No thread hand-off: a request per cell costs less."""
    pressed = threading.Event()
    signal.signal(signal.SIGINT, lambda signum, frame: pressed.set())
    try:
        result = run(pressed.is_set)
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if pressed.is_set():
        raise RequestInterrupted(result)
    return result


def never() -> bool:
    """A ``stop`` that never asks to stop (off the main thread, Ctrl-C cannot arrive)."""
    return False


def wait_through_interrupts(wait: Callable[[], Any]) -> Any:
    """``wait()``, again after every further Ctrl-C: what is in flight ends within its
    deadline, and leaving before would turn a known outcome into an unknown one."""
    while True:
        try:
            return wait()
        except KeyboardInterrupt:
            continue
