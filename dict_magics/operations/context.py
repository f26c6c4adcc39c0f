"""What every operation is given: its settings, the ids as typed, and where a batch reports.

``OperationSettings`` is built by each front end from its own configuration (``%config
DictMagics``, command-line options, the panel's arguments) and checked here, once, against the
bounds in ``dict_magics.settings``. Ids typed on a line, as arguments or in a file (one id a
line) are read here too (``split_args``, ``ids_from_text``...), so an id list means the same
thing wherever it is typed, each id checked once (``models.entry.check_id``). Standard library
only: the magics import it at load.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from ..errors import DeletionFailedError, InvalidIdError, Remedy, UsageProblem
from ..models.entry import check_id
from ..settings import (
    AUTH,
    BULK_CHUNK,
    LISTING_MAX_AGE,
    MAX_BULK_CHUNK,
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

__all__ = [
    "AUTH_ENV",
    "ID_SEPARATORS",
    "LISTING_MAX_AGE_ENV",
    "OperationSettings",
    "ProgressSink",
    "Warn",
    "auth_mode",
    "finish",
    "ids_from_bytes",
    "ids_from_text",
    "listing_max_age",
    "say",
    "split_args",
    "split_ids",
]

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
    auth: str | None = None
    """``signature`` (every request signed) or ``token`` (one token request, then Bearer);
    ``None``: ``$DICT_MAGICS_AUTH``, else ``signature``."""
    chunk_size: int = BULK_CHUNK
    """Entries per bulk addition request (restore, sync)."""
    listing_max_age: float | None = None
    """Seconds a delete's snapshot may take its terms from this process's cached listing
    (``0``: always list afresh first); ``None``: ``$DICT_MAGICS_LISTING_MAX_AGE``, else 0."""

    def __post_init__(self) -> None:
        if not _is_int(self.workers) or not MIN_WORKERS <= self.workers <= MAX_WORKERS:
            raise UsageProblem(
                f"workers must be {span(MIN_WORKERS, MAX_WORKERS)}, not {self.workers!r}.",
                option=Remedy.WORKERS,
            )
        if not _is_int(self.max_retries) or not MIN_RETRIES <= self.max_retries <= MAX_RETRIES:
            raise UsageProblem(
                f"max retries must be {span(MIN_RETRIES, MAX_RETRIES)}, not {self.max_retries!r}.",
                option=Remedy.MAX_RETRIES,
            )
        object.__setattr__(self, "auth", auth_mode(self.auth))
        if not _is_int(self.chunk_size) or not 1 <= self.chunk_size <= MAX_BULK_CHUNK:
            raise UsageProblem(
                f"the chunk size must be {span(1, MAX_BULK_CHUNK)}, not {self.chunk_size!r}.",
                option="chunk_size",
            )
        if not timeout_ok(self.timeout):
            raise UsageProblem(
                f"the timeout must be > 0 seconds, not {self.timeout!r}.", option=Remedy.TIMEOUT
            )
        object.__setattr__(self, "listing_max_age", listing_max_age(self.listing_max_age))


AUTH_ENV = "DICT_MAGICS_AUTH"


def auth_mode(value: str | None = None) -> str:
    """The auth mode asked for: ``value``, else ``$DICT_MAGICS_AUTH``, else the default;
    ``UsageProblem`` for anything but ``signature`` or ``token``."""
    chosen = (value or os.environ.get(AUTH_ENV, "") or AUTH).strip().lower()
    if chosen not in ("signature", "token"):
        shown = repr(value) if value else f"${AUTH_ENV}={os.environ.get(AUTH_ENV)!r}"
        raise UsageProblem(f"auth must be 'signature' or 'token', not {shown}.", option="auth")
    return chosen


LISTING_MAX_AGE_ENV = "DICT_MAGICS_LISTING_MAX_AGE"


def listing_max_age(value: float | None = None) -> float:
    """The listing age asked for: ``value``, else ``$DICT_MAGICS_LISTING_MAX_AGE``, else 0;
    ``UsageProblem`` for anything but a finite number of seconds >= 0."""
    if value is None:
        raw = os.environ.get(LISTING_MAX_AGE_ENV, "").strip()
        if not raw:
            return LISTING_MAX_AGE
        try:
            chosen = float(raw)
        except ValueError:
            chosen = math.nan
        shown = f"${LISTING_MAX_AGE_ENV}={raw!r}"
    else:
        chosen, shown = value, repr(value)
    if not age_ok(chosen):
        raise UsageProblem(
            f"listing_max_age must be a number of seconds >= 0 (0: list afresh before every "
            f"snapshot), not {shown}.",
            option="listing_max_age",
        )
    return float(chosen)


def age_ok(value: object) -> bool:
    """A listing age is a finite number of seconds, 0 or more."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


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


Warn = Callable[[str], None] | None
"""Where an operation says something that is not an error (front ends print it)."""


def say(warn: Warn, message: str) -> None:
    """Hand ``message`` to the front end, if it listens."""
    if warn is not None:
        warn(message)


def finish(result: R, settings: OperationSettings) -> R:
    """The result, or ``DeletionFailedError`` for one that failed when the settings ask for it."""
    if settings.raise_on_failure and not getattr(result, "done", result.ok):
        raise DeletionFailedError(result)
    return result


# -- ids as people type them --------------------------------------------------------------------

ID_SEPARATORS = re.compile(r"[\s,]+")
COMMENT = re.compile(r"(?:^|\s)#.*")
BOM = "\ufeff"


def split_ids(text: str) -> list[str]:
    """The ids in ``text``, in order, each checked; raises ``InvalidIdError`` for a bad one."""
    return [check_id(part) for part in ID_SEPARATORS.split(text) if part]


def split_args(values: Sequence[str], *, check: bool = True) -> list[str]:
    """The ids in each argument; an empty argument (``""``) is refused, since whoever typed it
    meant an id and would otherwise see it silently dropped. ``check=False``: split only (the
    caller puts values back first, then checks)."""
    for value in values:
        if not value.strip():
            raise InvalidIdError(
                f"the argument {value!r} is not an entry id: an entry id cannot be empty; "
                "nothing was sent."
            )
    if not check:
        return [part for value in values for part in ID_SEPARATORS.split(value) if part]
    return [i for value in values for i in split_ids(value)]


def ids_from_text(text: str) -> list[str]:
    """The ids in a file: one a line (spaces or commas also separate, as when typed); blank
    lines, ``#`` comments (at the start of a line or after a space) and a leading BOM skipped."""
    text = text.removeprefix(BOM)
    return [i for line in text.splitlines() for i in split_ids(COMMENT.sub("", line))]


def ids_from_bytes(data: bytes, source: str) -> list[str]:
    """``ids_from_text`` of UTF-8 ``data``; other bytes are a ``UsageProblem`` naming ``source``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 1].hex()
        line = data[: exc.start].count(b"\n") + 1
        raise UsageProblem(
            f"cannot read ids from {source}: it is not UTF-8 text (byte 0x{bad} on line {line}). "
            "Nothing was sent."
        ) from None
    return ids_from_text(text)
