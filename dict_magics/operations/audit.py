"""The audit log, written ahead: a line before each change leaves, a line with its outcome after.

``<DICT_MAGICS_HOME>/audit.jsonl`` (0600), DESIGN's fields. ``outcome: sending`` is written in
one ``write`` (``O_APPEND``) before a request's first attempt; the outcome line follows with the
same ``request`` key (a later one wins). A process killed at any point leaves a line for every
request the service may have received; ``read_audit`` reads one with no outcome as unknown.
"""

from __future__ import annotations

import itertools
import json
import os
import secrets
import time
from collections.abc import Iterable, Iterator, Sequence
from json.encoder import encode_basestring as _q
from pathlib import Path
from typing import Any

from .. import localdata
from ..models import AuditLine, AuditTable, Entry
from .context import Warn
from .snapshots import parse_time

FILENAME = "audit.jsonl"
OPERATIONS = ("delete", "purge", "add", "update")
OUTCOMES = ("success", "failure", "unknown", "absent")
ENDED = (
    "no outcome was noted: the process ended while this request was in flight; a listing "
    "shows whether the service acted on it"
)
_BLOCK = 64 * 1024


def audit_path() -> Path:
    """Where the audit log is (its folder created 0700 if missing)."""
    return localdata.home() / FILENAME


class AuditLog:
    """The audit lines of one operation, handed to the client as ``audit=`` inside a ``with``.
    ``entries`` (by id) name a DELETE's terms. A log that cannot be written is one warning,
    never a reason to lose the results of what was done."""

    def __init__(
        self,
        *,
        profile: str,
        host: str,
        operation: str,
        snapshot: str | Path | None = None,
        entries: dict[str, Entry] | None = None,
        warn: Warn = None,
    ) -> None:
        if operation not in OPERATIONS:
            raise ValueError(f"operation must be one of {OPERATIONS}, not {operation!r}")
        self.profile, self.host, self.operation = profile, host, operation
        self.snapshot = snapshot
        self.entries = entries or {}
        self.path: Path | None = None
        self._warn = warn
        self._fd: int | None = None
        self._failed = self._torn = False
        self._prefix = secrets.token_hex(4)
        self._count = itertools.count(1)
        self._keys: dict[Any, str] = {}
        self._head = (  # the fields every line shares, encoded once
            f', "profile": {_q(profile)}, "host": {_q(host)}, '
            f'"operation": {_q(operation)}, "entry_id": '
        )
        shown = "null" if snapshot is None else _q(str(snapshot))
        self._tail = f', "snapshot": {shown}, "request": '

    def __enter__(self) -> AuditLog:
        """Open the log, a torn last line (a crash mid-write) ended first. Another process
        still writing may look torn here: that costs an empty line, which readers skip."""
        try:
            self.path = audit_path()
            self._fd = localdata.open_private(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
            size = os.fstat(self._fd).st_size
            self._torn = bool(size) and os.pread(self._fd, 1, size - 1) != b"\n"
        except OSError as exc:
            self._warn_once(exc)
        return self

    def __exit__(self, *exc_info: object) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def sending(self, method: str, entry_id: str | None, entries: Sequence[Entry] = ()) -> str:
        """Before a request's first attempt: its line(s), on disk when this returns."""
        key = f"{self._prefix}-{next(self._count)}"
        if len(entries) < 2:  # one entry: its key is the request's
            items = [(key, entries[0] if entries else self.entries.get(entry_id or ""))]
        else:
            items = [(f"{key}.{number}", entry) for number, entry in enumerate(entries)]
        for item_key, entry in items:
            self._keys[_subject(entry_id, entry)] = item_key
        self._write([self._line(item_key, entry_id, entry) for item_key, entry in items])
        return key

    def ended(self, key: str, results: Sequence[Any]) -> None:
        """A request's outcome, paired with its ``sending`` line by ``key``."""
        keys = [key] if len(results) == 1 else [f"{key}.{i}" for i in range(len(results))]
        self._write([self._outcome(k, r) for k, r in zip(keys, results, strict=True)])

    def record(self, result: Any) -> None:
        self.record_all([result])

    def record_all(self, results: Iterable[Any]) -> None:
        """Outcomes known later (a listing settled them); a result never sent is skipped."""
        lines = []
        for result in results:
            if result.attempts or getattr(result, "absent", False):
                subject = _subject(getattr(result, "entry_id", None), _entry(result))
                key = self._keys.get(subject) or f"{self._prefix}-{next(self._count)}"
                lines.append(self._outcome(key, result))
        self._write(lines)

    def _outcome(self, key: str, result: Any) -> str:
        entry_id = getattr(result, "entry_id", None)
        return self._line(key, entry_id, _entry(result) or self.entries.get(entry_id or ""), result)

    def _line(self, key: str, entry_id: str | None, entry: Entry | None, result: Any = None) -> str:
        """One JSON line in DESIGN's field order (no ``result``: ``sending``), made around the
        C string encoder (a dict encoded per line costs several times as much)."""
        terms = "null" if entry is None else _ENTRY % tuple(map(_q, entry.terms))
        status = None if result is None else result.http_status
        reason = None if result is None else result.reason
        return (
            f'{{"time": "{_now()}"{self._head}{"null" if entry_id is None else _q(entry_id)}, '
            f'"entry": {terms}, "outcome": "{"sending" if result is None else result.outcome}", '
            f'"http_status": {"null" if status is None else int(status)}, '
            f'"attempts": {0 if result is None else int(result.attempts)}, '
            f'"reason": {"null" if reason is None else _q(reason)}{self._tail}"{key}"}}\n'
        )

    def _write(self, lines: list[str]) -> None:
        """One ``write`` (a lone surrogate goes as its JSON escape); after a write that failed
        part-way (a full disk), the next starts on a line of its own."""
        if not lines or self._fd is None:
            return
        view = memoryview(
            (("\n" if self._torn else "") + "".join(lines)).encode("utf-8", "backslashreplace")
        )
        self._torn = False
        try:
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError as exc:
            self._torn = True
            self._warn_once(exc)
        except BaseException:
            self._torn = True
            raise

    def _warn_once(self, exc: OSError) -> None:
        if not self._failed and self._warn is not None:
            self._warn(
                f"could not write the audit log {self.path} ({exc.strerror or exc}); "
                "the results below are still what happened"
            )
        self._failed = True


_ENTRY = '{"fromLang": %s, "fromText": %s, "toLang": %s, "toText": %s}'
_second = [-1, ""]


def _now() -> str:
    """The time in ISO 8601 UTC with milliseconds (the seconds formatted once a second)."""
    now = time.time()
    whole = int(now)
    if whole != _second[0]:
        _second[:] = [whole, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))]
    return f"{_second[1]}.{int((now - whole) * 1000):03d}+00:00"


def _entry(result: Any) -> Entry | None:
    """The terms a result names (an update: its new terms)."""
    return getattr(result, "entry", None) or getattr(result, "new", None)


def _subject(entry_id: str | None, entry: Entry | None) -> Any:
    return entry_id if entry_id is not None else (entry.terms if entry is not None else None)


def read_audit(n: int = 20) -> AuditTable:
    """The last ``n`` requests, oldest first, read backwards from the end of the file: each
    once, with its latest outcome (unknown when none was noted)."""
    found = AuditTable()
    if n <= 0:
        return found
    seen: set[str] = set()
    try:
        handle = audit_path().open("rb")
    except FileNotFoundError:
        return found
    with handle:
        for raw in _lines_backwards(handle):
            try:
                data = json.loads(raw.decode("utf-8"))
            except (ValueError, RecursionError):
                data = None
            key = data.get("request") if isinstance(data, dict) else None
            if isinstance(key, str):
                if key in seen:
                    continue
                seen.add(key)
                if data.get("outcome") == "sending":
                    data = {**data, "outcome": "unknown", "reason": ENDED}
            line = _from_json(data)
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
        parts = (handle.read(step) + carry).split(b"\n")
        carry = parts[0]
        for part in reversed(parts[1:]):
            if part.strip():
                yield part
    if carry.strip():
        yield carry


def _from_json(data: Any) -> AuditLine | None:
    """One line read back, checked field by field; ``None`` for a line that is not ours."""
    try:
        entry_id = data["entry_id"]
        if not (
            all(isinstance(data[k], str) for k in ("profile", "host", "time"))
            and all(data[k] is None or isinstance(data[k], str) for k in ("reason", "snapshot"))
            and data["operation"] in OPERATIONS
            and data["outcome"] in OUTCOMES
            and type(data["attempts"]) is int
            and (data["http_status"] is None or type(data["http_status"]) is int)
            and (entry_id is None or type(entry_id) in (int, str))
        ):
            return None
        entry_id = None if entry_id is None else str(entry_id)
        entry = None
        if data["entry"] is not None:
            terms = {k: data["entry"][k] for k in Entry.FIELDS[1:]}
            entry = Entry.from_service({"id": entry_id or "", **terms})
        fields = ("outcome", "http_status", "attempts", "reason", "snapshot")
        return AuditLine(
            parse_time(data["time"]),
            data["profile"],
            data["host"],
            data["operation"],
            entry_id,
            entry,
            *(data[k] for k in fields),
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
