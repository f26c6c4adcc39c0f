"""What every changing operation does around its requests: a snapshot first, an audit line after.

``take_snapshot`` keeps the entries about to go before the first request that could change the
dictionary; if it cannot be written, nothing is sent. ``Trail`` records each request's outcome
in the audit log (batched: see ``audit``); a log that cannot be written is a warning, never a
reason to lose the results of deletions that already happened.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import TYPE_CHECKING

from ..errors import LocalDataError, Remedy, ServiceError
from ..service.batch import HeldCtrlC
from .audit import AuditLog, Operation
from .snapshots import PendingSnapshot, Snapshot, start_snapshot

if TYPE_CHECKING:
    from ..models import AddResult, DeleteResult, Entry

__all__ = [
    "SnapshotUnderWay",
    "Trail",
    "Warn",
    "listing_failed",
    "say",
    "snapshot_soon",
    "take_snapshot",
]

_COPYLESS_HELPS = {"bad_answer", "too_large", "refused"}
"""Listing failures a delete without a copy could get past (the listing alone is broken); an
outage or refused credentials would stop the deletion too, so it is not suggested there."""

Warn = Callable[[str], None] | None
"""Where an operation says something that is not an error (front ends print it)."""


def say(warn: Warn, message: str) -> None:
    """Hand ``message`` to the front end, if it listens."""
    if warn is not None:
        warn(message)


def listing_failed(exc: ServiceError, dry_run: bool) -> ServiceError:
    """The error when the listing a snapshot needs could not be had: always a service failure
    (exit 1), and only where going ahead without a copy could help (a listing the service
    cannot give, not an outage or refused credentials, which would stop the deletion too) does
    it name that way."""
    cause = getattr(exc.cause, "value", exc.cause)
    if dry_run:
        text = f"{exc}; nothing was sent (dry run)."
    else:
        # Refused credentials: the service's words already say to check the keys, and the
        # same keys would be refused again.
        again = "" if cause == "auth" else " Try again."
        text = f"{exc}; so no snapshot could be taken first, and nothing was deleted.{again}"
    return ServiceError(
        text,
        **exc.facts(),
        option=Remedy.NO_SNAPSHOT if not dry_run and cause in _COPYLESS_HELPS else None,
    )


def take_snapshot(
    entries: Iterable[Entry],
    *,
    profile: str,
    host: str,
    base_url: str,
    operation: str,
    added: Iterable[Entry] = (),
    copies: dict[str, int] | None = None,
    listing_age: float | None = None,
) -> Snapshot:
    """Write the snapshot, or raise ``LocalDataError`` (nothing was sent) saying why it could not.

    ``added``: the terms the operation will add (format 2), which a restore removes;
    ``listing_age``: how old the listing the entries' terms come from was, in seconds."""
    return snapshot_soon(
        entries,
        profile=profile,
        host=host,
        base_url=base_url,
        operation=operation,
        overlap=False,
        added=added,
        copies=copies,
        listing_age=listing_age,
    ).result()


class SnapshotUnderWay:
    """A snapshot written, syncing to disk; ``result()`` is it once on disk, or the
    ``LocalDataError`` saying why it could not be kept (then nothing may be sent).

    ``on_disk`` is the same as a plain ``concurrent.futures.Future``, done when the sync
    ends: the client's ``ready``, which the transport waits for before the first byte (data
    handed down, not a hook called back)."""

    def __init__(self, pending: PendingSnapshot, operation: str = "delete") -> None:
        self._snapshot = pending.snapshot
        self._operation = operation
        self.on_disk: Future[Snapshot] = Future()
        syncing = pending.syncing
        if syncing is None:  # not syncing on the sync thread: synced here, now
            try:
                self.on_disk.set_result(pending.result())
            except OSError as exc:
                self.on_disk.set_exception(_not_saved(exc, operation))
        else:
            syncing.add_done_callback(self._synced)

    def _synced(self, syncing: Future[None]) -> None:
        """On the sync thread, as the sync ends: ``on_disk`` done the same way."""
        failed = syncing.exception()
        if failed is None:
            self.on_disk.set_result(self._snapshot)
        elif isinstance(failed, OSError):
            self.on_disk.set_exception(_not_saved(failed, self._operation))
        else:
            self.on_disk.set_exception(failed)

    def result(self) -> Snapshot:
        return self.on_disk.result()


def snapshot_soon(
    entries: Iterable[Entry],
    *,
    profile: str,
    host: str,
    base_url: str,
    operation: str,
    overlap: bool = True,
    added: Iterable[Entry] = (),
    copies: dict[str, int] | None = None,
    listing_age: float | None = None,
) -> SnapshotUnderWay:
    """Write the snapshot now and sync it to disk while the caller goes on (``overlap``):
    the caller passes ``.on_disk`` as the client's ``ready``, so no byte of a deleting request
    goes out before the snapshot is on disk, and the sync overlaps with connecting and signing.
    Raises ``LocalDataError`` at once if it cannot even be written."""
    try:
        pending = start_snapshot(
            entries,
            profile=profile,
            host=host,
            base_url=base_url,
            operation=operation,  # type: ignore[arg-type]
            background=overlap,
            added=added,
            copies=copies,
            listing_age=listing_age,
        )
    except OSError as exc:
        raise _not_saved(exc, operation) from None
    return SnapshotUnderWay(pending, operation)


_SKIPPABLE = ("delete", "purge")
"""The operations a user may run without a snapshot (``--no-snapshot``, ``snapshots`` off); an
update, a sync or an undo always keeps one."""


def _not_saved(exc: OSError, operation: str = "delete") -> LocalDataError:
    """A disk problem, not the user's mistake: exit 1 on the command line, like an outage. Only
    a delete or a purge can go ahead without a copy, so only they name that way."""
    deleting = operation in _SKIPPABLE
    before, nothing = ("deleting", "deleted") if deleting else (f"the {operation}", "sent")
    return LocalDataError(
        f"could not save a snapshot before {before} ({exc.strerror or exc}: "
        f"{exc.filename or 'the data folder'}); nothing was {nothing}. Free some space or "
        "set DICT_MAGICS_HOME.",
        option=Remedy.NO_SNAPSHOT if deleting else None,
    )


class Trail:
    """The audit lines of one operation; use as a context manager around its requests."""

    def __init__(
        self,
        *,
        profile: str,
        host: str,
        operation: Operation,
        snapshot: Snapshot | None,
        warn: Warn = None,
    ) -> None:
        self.profile = profile
        self.host = host
        self.operation = operation
        self.snapshot = snapshot
        self._warn = warn
        self._log = AuditLog()
        self._failed = False
        self._lock = threading.Lock()

    def record(self, result: DeleteResult | AddResult, operation: Operation | None = None) -> None:
        """Note one request's outcome (a result never sent is not a request: skipped)."""
        if result.attempts == 0:
            return
        self._guard(
            lambda: self._log.record(
                result,
                profile=self.profile,
                host=self.host,
                operation=operation or self.operation,
                snapshot=self.snapshot,
            ),
            result,
        )

    def record_all(self, results: Iterable[DeleteResult | AddResult]) -> None:
        """Note the outcomes of requests that have all ended (a bulk batch), in one write."""
        sent = [r for r in results if r.attempts > 0]
        if not sent:
            return
        self._guard(
            lambda: self._log.record_many(
                sent,
                profile=self.profile,
                host=self.host,
                operation=self.operation,
                snapshot=self.snapshot,
            )
        )

    def __enter__(self) -> Trail:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._guard(self._log.flush)

    def _guard(
        self, write: Callable[[], None], result: DeleteResult | AddResult | None = None
    ) -> None:
        """``write()``, with Ctrl-C held back until it is done (the log's lock may be held by
        another process for a while: a Ctrl-C pressed meanwhile must not lose the line of a
        request the service acted on); then the Ctrl-C comes, carrying ``result``."""
        try:
            with HeldCtrlC() as held:
                held.result = result
                write()
        except OSError as exc:
            with self._lock:
                first, self._failed = not self._failed, True
            if first:
                say(
                    self._warn,
                    f"could not write the audit log {self._log.path} ({exc.strerror or exc}); "
                    "the results below are still what happened",
                )
