"""The audit log: one JSON line per request that can change the dictionary, after its outcome.

``<DICT_MAGICS_HOME>/audit.jsonl`` (0600) gets, per delete, purge, add or update request::

    {"time", "profile", "host", "operation", "entry_id", "entry", "outcome", "http_status",
     "attempts", "reason", "snapshot"}

Each line is appended as its result arrives (``flush_every=1``, the default): one ``write`` on
an ``O_APPEND`` descriptor holding an exclusive ``flock`` on the log itself (``filelock``'s lock
file where there is no ``fcntl``), so threads and processes appending at once never interleave
or tear each other's lines, and a process that dies (SIGKILL, SIGTERM, a crash of Python) loses
no line of a request whose result it had: the line is in the kernel's page cache, which only a
machine crash can lose. A write that fails part-way (a full disk) is cut back to where it began
under the same lock, and its lines stay pending for the next flush: written once, never torn.

The log is not fsynced (``fsync=True`` asks for one fsync per flush). ``benchmarks/store_cost.py``
measured, per result on top of building it: about 12 us batched, 16 us batched with one fsync
per flush, about 15-20 us written line by line with ``flock`` on the log's own descriptor (the
default now: about 5 us more than batching, against about 350 us of client CPU per request) and
390 us line by line with fsync (3.6 ms with other jobs using the disk). The log is a record; what
keeps the data safe is the snapshot, which is fsynced before the first DELETE.

``read_audit(n)`` reads the last ``n`` lines backwards from the end of the file, so a long log
is never read whole; a torn or garbled line is skipped and counted.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import localdata
from ..models import AddResult, AuditLine, AuditLines, DeleteResult, Entry
from ..models.store import AuditOperation as Operation

if TYPE_CHECKING:
    from .snapshots import Snapshot

__all__ = ["AuditLine", "AuditLines", "AuditLog", "audit_path", "read_audit"]

FILENAME = "audit.jsonl"
OPERATIONS = ("delete", "purge", "add", "update")
OUTCOMES = ("success", "failure", "unknown", "absent")
TERMS = ("fromLang", "fromText", "toLang", "toText")
_BLOCK = 64 * 1024
_JSON = json.JSONEncoder(ensure_ascii=False)  # dumps() with options builds one per call


def audit_path() -> Path:
    """Where the audit log is (its folder created 0700 if missing)."""
    return localdata.home() / FILENAME


class AuditLog:
    """Appends audit lines for one run of an operation; safe to share between threads.

    Use it as a context manager (or call ``flush``) so that the last lines are written::

        with AuditLog() as log:
            for result in results:
                log.record(result, profile="default", host="api.example", operation="delete")
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        flush_every: int = 1,
        flush_after: float = 0.5,
        fsync: bool = False,
    ) -> None:
        # Nothing is made on disk yet: each flush makes (or tightens) the data folder first.
        self.path = Path(path) if path is not None else localdata.location(FILENAME)
        self._in_home = path is None
        self.flush_every = max(1, flush_every)
        self.flush_after = flush_after
        self.fsync = fsync
        self._pending: list[str] = []
        self._since = 0.0
        self._lock = threading.Lock()

    def record(
        self,
        result: DeleteResult | AddResult,
        *,
        profile: str,
        host: str,
        operation: Operation,
        snapshot: str | Path | Snapshot | None = None,
    ) -> None:
        """Note one request's outcome; written with the next flush (soon, see the class)."""
        line = audit_line(
            result, profile=profile, host=host, operation=operation, snapshot=snapshot
        )
        with self._lock:
            if not self._pending:
                self._since = time.monotonic()
            self._pending.append(line)
            due = (
                len(self._pending) >= self.flush_every
                or time.monotonic() - self._since >= self.flush_after
            )
            if due:
                self._flush_locked()

    def record_many(
        self,
        results: Iterable[DeleteResult | AddResult],
        *,
        profile: str,
        host: str,
        operation: Operation,
        snapshot: str | Path | Snapshot | None = None,
    ) -> None:
        """Note a whole batch and write it at once."""
        lines = [
            audit_line(r, profile=profile, host=host, operation=operation, snapshot=snapshot)
            for r in results
        ]
        with self._lock:
            self._pending.extend(lines)
            self._flush_locked()

    def flush(self) -> None:
        """Append every line noted so far (one write, under the file lock)."""
        with self._lock:
            self._flush_locked()

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.flush()

    def _flush_locked(self) -> None:
        if not self._pending:
            return
        # A lone surrogate cannot be UTF-8: written as its JSON escape (the line stays valid).
        data = "".join(self._pending).encode("utf-8", "backslashreplace")
        _append(self.path, data, fsync=self.fsync, in_home=self._in_home)
        self._pending.clear()


def audit_line(
    result: DeleteResult | AddResult,
    *,
    profile: str,
    host: str,
    operation: Operation,
    snapshot: str | Path | Snapshot | None = None,
) -> str:
    """The JSON line (with its newline) for one result, in DESIGN's field order."""
    if operation not in OPERATIONS:
        raise ValueError(f"operation must be one of {OPERATIONS}, not {operation!r}")
    # An update records its new terms under its id; an add has no id (the service picks it).
    entry = getattr(result, "entry", None) or getattr(result, "new", None)
    entry_id = getattr(result, "entry_id", None)
    if snapshot is not None and not isinstance(snapshot, str | Path):
        snapshot = snapshot.path
    record = {
        "time": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
        "profile": profile,
        "host": host,
        "operation": operation,
        "entry_id": entry_id,
        "entry": entry.to_service(with_id=False) if entry is not None else None,
        "outcome": result.outcome,
        "http_status": result.http_status,
        "attempts": result.attempts,
        "reason": result.reason,
        "snapshot": str(snapshot) if snapshot is not None else None,
    }
    return _JSON.encode(record) + "\n"


def _append(path: Path, data: bytes, *, fsync: bool, in_home: bool = False) -> None:
    """One ``O_APPEND`` write of whole lines under an exclusive lock; a torn last line (a
    crash) is ended first.

    A symbolic link in the log's place is refused (``OSError``), never written through."""
    if in_home:
        localdata.home()  # the data folder made, or tightened, if it needs to be (one stat)
    fd = localdata.open_private(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        with _exclusive(fd, path):
            size = os.fstat(fd).st_size
            if size and _last_byte(fd, size) != b"\n":
                data = b"\n" + data
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(fd, view) :]
            except BaseException:
                # Part of it may be there (a full disk): cut it off, so that the lines, still
                # pending, are written once and whole by the next flush.
                _cut_back(fd, size)
                raise
            if fsync:
                os.fsync(fd)
    finally:
        os.close(fd)


def _cut_back(fd: int, size: int) -> None:
    try:
        os.ftruncate(fd, size)
    except OSError:
        pass  # then a reader skips the torn tail, and the next flush starts a new line


@contextmanager
def _exclusive(fd: int, path: Path) -> Iterator[None]:
    """Hold the log's lock: ``flock`` on its own descriptor (every writer, thread or process,
    opens its own, so they queue), or ``filelock``'s lock file beside it where there is no
    ``fcntl``. Closing the descriptor releases the ``flock``."""
    try:
        import fcntl
    except ImportError:  # Windows
        from filelock import FileLock

        with FileLock(f"{path}.lock", mode=0o600):
            yield
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
    yield


def _last_byte(fd: int, size: int) -> bytes:
    os.lseek(fd, size - 1, os.SEEK_SET)  # for this read: O_APPEND writes go to the end anyway
    return os.read(fd, 1)


def read_audit(n: int = 20, path: str | Path | None = None) -> AuditLines:
    """The last ``n`` readable lines, oldest first, read backwards from the end of the file."""
    path = Path(path) if path is not None else audit_path()
    found = AuditLines()
    if n <= 0:
        return found
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return found
    with handle:
        for raw in _lines_backwards(handle):
            line = parse_line(raw)
            if line is None:
                found.skipped += 1
                continue
            found.append(line)
            if len(found) == n:
                break
    found.reverse()
    return found


def _lines_backwards(handle: Any) -> Iterator[bytes]:
    """The file's non-empty lines, last first, reading 64 KiB blocks from the end."""
    position = handle.seek(0, os.SEEK_END)
    carry = b""
    while position > 0:
        step = min(_BLOCK, position)
        position -= step
        handle.seek(position)
        block = handle.read(step) + carry
        parts = block.split(b"\n")
        carry = parts[0]
        for part in reversed(parts[1:]):
            if part.strip():
                yield part
    if carry.strip():
        yield carry


def parse_line(raw: bytes) -> AuditLine | None:
    """An ``AuditLine`` from one line of the log, or ``None`` if it is torn or not one."""
    try:
        data = json.loads(raw.decode("utf-8"))
        return _from_json(data)
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None


def _from_json(data: Any) -> AuditLine | None:
    if not isinstance(data, dict):
        return None
    texts = ("profile", "host")
    optional_texts = ("reason", "snapshot")
    if (
        not all(isinstance(data[k], str) for k in texts)
        or not all(data[k] is None or isinstance(data[k], str) for k in optional_texts)
        or data["operation"] not in OPERATIONS
        or data["outcome"] not in OUTCOMES
        or not _is_int(data["attempts"])
        or not (data["http_status"] is None or _is_int(data["http_status"]))
        or not isinstance(data["time"], str)
    ):
        return None
    entry_id = data["entry_id"]
    if entry_id is not None and (isinstance(entry_id, bool) or not isinstance(entry_id, int | str)):
        return None
    entry_id = None if entry_id is None else str(entry_id)
    entry = None
    if data["entry"] is not None:
        entry = Entry.from_service({"id": entry_id or "", **{k: data["entry"][k] for k in TERMS}})
    when = datetime.fromisoformat(data["time"].replace("Z", "+00:00"))
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return AuditLine(
        when,
        data["profile"],
        data["host"],
        data["operation"],
        entry_id,
        entry,
        data["outcome"],
        data["http_status"],
        data["attempts"],
        data["reason"],
        data["snapshot"],
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
