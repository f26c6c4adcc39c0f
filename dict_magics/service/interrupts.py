"""Ctrl-C and a request in flight: a mutating request is never cut off half-way.

Only the main thread receives Ctrl-C. ``with HeldCtrlC() as held:`` around one request holds
Ctrl-C back while it runs: the SIGINT handler found is swapped for one that only sets
``held.stop`` (a ``threading.Event`` the request reads as data: a request not sent yet is not
sent), and on leaving the block the handler is put back and the Ctrl-C delivered, once the
request has ended (within its deadline): Python's own handler as ``RequestInterrupted``
carrying the true result (``held.result``), another handler called then (a ``KeyboardInterrupt``
it raises becomes ``RequestInterrupted`` too), the default action taken then. So nothing is left
unknown that need not be, and the request is never handed to another thread or called back.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..models import AddResult, DeleteResult, UpdateResult

__all__ = ["HeldCtrlC", "RequestInterrupted", "wait_through_interrupts"]


class RequestInterrupted(KeyboardInterrupt):
    """Ctrl-C during one request: raised once the request in flight has ended.

    ``result`` is what that request really did (the interrupt never leaves it unknown when an
    answer was on its way), and the message shows it.
    """

    def __init__(self, result: DeleteResult | AddResult | UpdateResult) -> None:
        super().__init__()
        self.result = result

    def __str__(self) -> str:
        return f"interrupted after the request in flight ended: {self.result}"


class HeldCtrlC:
    """Ctrl-C held back around one mutating request on this thread (see the module's text).

    ``stop`` is set at Ctrl-C; the block stores its request's result in ``result``. Off the
    main thread (no Ctrl-C arrives there), and where SIGINT is ignored or handled outside
    Python, nothing is swapped and ``stop`` is never set.
    """

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.result: Any = None
        self._found: Callable[[int, FrameType | None], Any] | int | None = None
        self._frame: FrameType | None = None

    def __enter__(self) -> HeldCtrlC:
        if threading.current_thread() is threading.main_thread():
            found = signal.getsignal(signal.SIGINT)
            if found is not None and found is not signal.SIG_IGN:
                self._found = found
                signal.signal(signal.SIGINT, self._noted)
        return self

    def _noted(self, signum: int, frame: FrameType | None) -> None:
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
        if found is signal.default_int_handler:
            raise RequestInterrupted(self.result)
        if found is signal.SIG_DFL or not callable(found):
            signal.raise_signal(signal.SIGINT)  # the default action, now the request has ended
            return
        try:
            found(signal.SIGINT, self._frame)
        except KeyboardInterrupt:
            raise RequestInterrupted(self.result) from None


def wait_through_interrupts(wait: Callable[[], Any]) -> Any:
    """``wait()``, again after every further Ctrl-C: what is in flight ends within its
    deadline, and leaving before would turn a known outcome into an unknown one."""
    while True:
        try:
            return wait()
        except KeyboardInterrupt:
            continue
