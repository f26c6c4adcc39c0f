"""What every operation is given: its settings, and where a batch reports its progress.

``OperationSettings`` is built by each front end from its own configuration (``%config
DictMagics``, command-line options, the panel's arguments) and checked here, once, against the
bounds in ``dict_magics.settings``. Standard library only: the magics import it at load.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from ..errors import DeletionFailedError, UsageProblem
from ..settings import (
    MAX_RETRIES,
    MAX_WORKERS,
    MIN_RETRIES,
    MIN_WORKERS,
    RETRIES,
    TIMEOUT,
    WORKERS,
    span,
)

if TYPE_CHECKING:
    from ..models import BatchResult, DeleteResult

__all__ = ["OperationSettings", "ProgressSink", "finish"]

R = TypeVar("R", "DeleteResult", "BatchResult")


@dataclass(frozen=True)
class OperationSettings:
    """Where requests go and how they are sent; refused with ``UsageProblem`` when out of bounds.

    ``profile`` and ``base_url`` left empty mean: the default profile, and that profile's own
    base URL. The messages name the options as both the magics and the command line spell them.
    """

    profile: str | None = None
    base_url: str | None = None
    timeout: float = TIMEOUT
    max_retries: int = RETRIES
    workers: int = WORKERS
    raise_on_failure: bool = False
    snapshots: bool = True
    """Keep the entries about to be deleted in a snapshot file before the first deletion."""

    def __post_init__(self) -> None:
        if not _is_int(self.workers) or not MIN_WORKERS <= self.workers <= MAX_WORKERS:
            raise UsageProblem(
                f"-w/--workers must be {span(MIN_WORKERS, MAX_WORKERS)}, not {self.workers!r}."
            )
        if not _is_int(self.max_retries) or not MIN_RETRIES <= self.max_retries <= MAX_RETRIES:
            raise UsageProblem(
                f"--max-retries must be {span(MIN_RETRIES, MAX_RETRIES)}, not {self.max_retries!r}."
            )
        if not timeout_ok(self.timeout):
            raise UsageProblem(f"--timeout must be > 0 seconds, not {self.timeout!r}.")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def timeout_ok(value: object) -> bool:
    """A timeout is a finite number of seconds above zero."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


class ProgressSink(Protocol):
    """Where a batch reports itself; the front end decides what that looks like.

    ``start`` comes before the first request, ``sink(done, total, result)`` after each result
    (from the client's worker threads, one call at a time), ``stop`` after the last, always.
    """

    def start(self, total: int, label: str) -> None: ...

    def __call__(self, done: int, total: int, result: DeleteResult) -> None: ...

    def stop(self) -> None: ...

    # Optional: ``waiting(seconds, reason)``, called (from a worker thread) when every worker
    # pauses for the service's rate limit, so the display can say why nothing moves.


def finish(result: R, settings: OperationSettings) -> R:
    """The result, or ``DeletionFailedError`` for one that failed when the settings ask for it."""
    if settings.raise_on_failure and not getattr(result, "done", result.ok):
        raise DeletionFailedError(result)
    return result
