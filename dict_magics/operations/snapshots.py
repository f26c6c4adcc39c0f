"""Snapshots: the entries about to be deleted or changed, on disk before the first request.

One JSON file in ``<DICT_MAGICS_HOME>/snapshots`` under a new name, written and ``fdatasync``ed
before anything is sent (``localdata.write_new``); the format is DESIGN.md's::

    {"format": "dict-magics-snapshot/2", "taken_at", "profile", "host", "base_url",
     "operation": "purge" | "delete" | "update" | "sync", "added": [terms, ...],
     "entries": [{id, fromLang, fromText, toLang, toText}, ...]}

and optionally ``left`` (the versions a change leaves), ``undoes`` (a restore's own snapshot),
``copies`` and ``listing_age``. Format 1 is still read. The header is line 1, each entry a line;
a file that does not end in ``]}`` (cut short by a crash) is never listed nor restored.
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime, timezone
from json.encoder import encode_basestring as _q
from pathlib import Path
from typing import Any

from .. import localdata
from ..errors import LocalDataError, Remedy, ServiceError, UsageProblem
from ..models import Entry, Snapshot, SnapshotInfo
from ..models.store import Operation
from ..service.http import same_base_url

FORMAT = "dict-magics-snapshot/2"
FORMAT_1 = "dict-magics-snapshot/1"
OPERATIONS = {FORMAT: ("purge", "delete", "update", "sync"), FORMAT_1: ("purge", "delete")}
_HEADER_LIMIT = 64 * 1024
_TAIL = b"\n]}\n"
_UNSAFE = re.compile(r"[^A-Za-z0-9._]+")
_SEQUENCE = re.compile(r"-n([0-9]{1,18})-[0-9a-f]{6}\.json$")
_ENTRY = '{"id": %s, "fromLang": %s, "fromText": %s, "toLang": %s, "toText": %s}'
SEQUENCE_FILE = "snapshot-sequence"


def snapshot_dir() -> Path:
    """The snapshots folder (0700, like the data folder holding it)."""
    return localdata.home("snapshots")


def write_snapshot(
    entries: Iterable[Entry],
    *,
    profile: str,
    host: str,
    base_url: str,
    operation: Operation,
    added: Iterable[Entry] = (),
    left: Iterable[Entry] | None = None,
    undoes: str | Path | None = None,
    copies: dict[str, int] | None = None,
    listing_age: float | None = None,
) -> Path:
    """Keep ``entries`` on disk before they are deleted or changed: written and ``fdatasync``ed
    before the file's path is returned, or ``LocalDataError`` (then nothing may be sent)."""
    if operation not in OPERATIONS[FORMAT]:
        raise ValueError(f"operation must be one of {OPERATIONS[FORMAT]}, not {operation!r}")
    entries = list(entries)
    taken_at = datetime.now(timezone.utc)
    header: dict[str, Any] = {
        "format": FORMAT,
        "taken_at": taken_at.isoformat(timespec="microseconds"),
        "profile": profile,
        "host": host,
        "base_url": base_url,
        "operation": operation,
        "added": [e.to_service(with_id=False) for e in added],
        "left": None if left is None else [e.to_service() for e in left],
        "undoes": None if undoes is None else str(undoes),
        "copies": copies or None,
        "listing_age": None if listing_age is None else round(listing_age, 6),
    }
    header = {k: v for k, v in header.items() if v is not None}
    try:
        folder = snapshot_dir()
        stem = f"{taken_at:%Y%m%dT%H%M%S%fZ}-{_safe(profile)}-{_safe(host)}-{operation}"
        stem += f"-n{_next_sequence():d}"
        for _ in range(8):  # a name taken (by chance, or by a link planted there): another
            path = folder / f"{stem}-{secrets.token_hex(3)}.json"
            try:
                localdata.write_new(path, _serialise(header, entries))
                break
            except FileExistsError:
                continue
        else:
            raise FileExistsError(errno.EEXIST, "no free snapshot name", str(folder))
    except OSError as exc:
        raise _not_saved(exc, operation) from None
    return path


def _not_saved(exc: OSError, operation: str) -> LocalDataError:
    """A disk problem (exit 1); only a delete or a purge can go ahead without a copy."""
    deleting = operation in ("delete", "purge")
    before, nothing = ("deleting", "deleted") if deleting else (f"the {operation}", "sent")
    return LocalDataError(
        f"could not save a snapshot before {before} ({exc.strerror or exc}: "
        f"{exc.filename or 'the data folder'}); nothing was {nothing}. Free some space or "
        "set DICT_MAGICS_HOME.",
        option=Remedy.NO_SNAPSHOT if deleting else None,
    )


def listing_failed(exc: ServiceError, dry_run: bool) -> ServiceError:
    """The error when the listing a snapshot needs could not be had (exit 1); it names going
    ahead without a copy only where that could help (not an outage, not refused credentials)."""
    cause = getattr(exc.cause, "value", exc.cause)
    if dry_run:
        text = f"{exc}; nothing was sent (dry run)."
    else:
        again = "" if cause == "auth" else " Try again."
        text = f"{exc}; so no snapshot could be taken first, and nothing was deleted.{again}"
    helps = not dry_run and cause in ("bad_answer", "too_large", "refused")
    return ServiceError(text, **exc.facts(), option=Remedy.NO_SNAPSHOT if helps else None)


def _next_sequence() -> int:
    """A number above any snapshot's started before here, without a lock or the clock: the
    offset after one byte appended (``O_APPEND``) to ``snapshot-sequence``."""
    path = localdata.home() / SEQUENCE_FILE
    fd = localdata.open_private(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, b".")
        number = os.lseek(fd, 0, os.SEEK_CUR)
        if number == 1:  # a new sequence: above every snapshot already there
            highest = max((i.sequence or 0 for i in list_snapshots()), default=0)
            if highest:
                os.write(fd, b"." * highest)
                number = os.lseek(fd, 0, os.SEEK_CUR)
        return number
    finally:
        os.close(fd)


def _serialise(header: dict[str, Any], entries: list[Entry]) -> bytes:
    """The header and ``"entries": [`` on line 1, one entry per line, then ``]}``; entries
    formatted around the C string encoder (3-4 times faster than a dict each)."""
    head = json.JSONEncoder(ensure_ascii=False).encode(header)[:-1] + ', "entries": ['
    body = ",\n".join(_ENTRY % (_q(str(e.id)), *map(_q, e.terms)) for e in entries)
    return (head + "\n" + body + _TAIL.decode()).encode("utf-8", "backslashreplace")


def _safe(text: str) -> str:
    """A file-name-safe form of a profile or host (``127.0.0.1:8080`` -> ``127.0.0.1_8080``)."""
    return _UNSAFE.sub("_", text).strip("._")[:60] or "_"


def read_snapshot(path: str | Path) -> Snapshot:
    """Read a snapshot back, checking every field; a bad file raises ``UsageProblem`` saying why."""
    path = Path(path).expanduser()
    data = _load_json(path)
    info = _header(path, data)
    raw, age = data.get("copies"), data.get("listing_age")  # malformed: ignored, as if absent
    copies = raw if isinstance(raw, dict) else {}
    if not (isinstance(age, int | float) and not isinstance(age, bool) and 0 <= age < 1e300):
        age = None
    return Snapshot(
        *(info.path, info.taken_at, info.profile, info.host, info.base_url, info.operation),
        _entries(path, data, "entries"),
        copies={str(k): v for k, v in copies.items() if type(v) is int and v > 1},
        added=[] if data["format"] == FORMAT_1 else _entries(path, data, "added"),
        format=data["format"],
        listing_age=None if age is None else float(age),
        left=_entries(path, data, "left") if "left" in data else None,
        undoes=info.undoes,
    )


def _entries(path: Path, data: dict[str, Any], name: str) -> list[Entry]:
    """The entries under ``name`` (``added`` ones have no id), or ``UsageProblem`` naming the
    first bad one."""
    raw = data.get(name, [])
    if not isinstance(raw, list):
        raise _invalid(path, f"{name!r} is not a list")
    found = []
    for number, item in enumerate(raw, start=1):
        try:
            if name == "added" and isinstance(item, dict):
                item = {**item, "id": ""}
            found.append(Entry.from_service(item))
        except ValueError as exc:
            what = "entry" if name == "entries" else name
            raise _invalid(path, f"{what} #{number}: {exc}") from None
    return found


def _load_json(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UsageProblem(f"no snapshot at {path}.", option=Remedy.SNAPSHOTS) from None
    except IsADirectoryError:
        raise UsageProblem(f"{path} is a folder, not a snapshot file.") from None
    except OSError as exc:
        raise UsageProblem(f"cannot read the snapshot {path}: {exc.strerror or exc}.") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        if raw.startswith(b'{"format": "dict-magics-snapshot/') and not raw.endswith(_TAIL):
            raise UsageProblem(
                f"{path} is a snapshot cut short (dict-magics stopped while writing it, so "
                "nothing was deleted after it): it holds no whole list of entries to restore."
            ) from None
        reason = "not UTF-8" if isinstance(exc, UnicodeDecodeError) else "not valid JSON"
        raise UsageProblem(f"{path} is not a dict-magics snapshot ({reason}).") from None
    if not isinstance(data, dict):
        raise UsageProblem(f"{path} is not a dict-magics snapshot (not a JSON object).")
    return data


def _header(path: Path, data: dict[str, Any], count: int = 0) -> SnapshotInfo:
    """The header of a parsed snapshot, checked; ``UsageProblem`` naming the fault."""
    tag = data.get("format")
    if tag not in OPERATIONS:
        if isinstance(tag, str) and tag.startswith("dict-magics-snapshot/"):
            raise UsageProblem(
                f"{path} is a snapshot in format {tag!r}, which this version of dict-magics "
                f"cannot read (it reads {FORMAT_1!r} and {FORMAT!r}): upgrade dict-magics."
            )
        raise UsageProblem(f"{path} is not a dict-magics snapshot (no format {FORMAT!r}).")
    for name in ("taken_at", "profile", "host", "base_url", "operation"):
        if not isinstance(data.get(name), str):
            raise _invalid(path, f"{name!r} is missing or not text")
    if data["operation"] not in OPERATIONS[tag]:
        allowed = ", ".join(map(repr, OPERATIONS[tag]))
        raise _invalid(path, f"operation {data['operation']!r} is not one of {allowed}")
    try:
        taken_at = parse_time(data["taken_at"])
    except ValueError:
        raise _invalid(path, f"taken_at {data['taken_at']!r} is not an ISO-8601 time") from None
    named = _SEQUENCE.search(path.name)
    added, undoes = data.get("added"), data.get("undoes")
    return SnapshotInfo(
        path,
        taken_at,
        data["profile"],
        data["host"],
        data["base_url"],
        data["operation"],
        count,
        sequence=int(named.group(1)) if named else None,
        added=len(added) if isinstance(added, list) else 0,
        undoes=undoes if isinstance(undoes, str) and undoes else None,
    )


def _invalid(path: Path, why: str) -> UsageProblem:
    return UsageProblem(f"{path} is not a valid snapshot: {why}.")


def parse_time(text: str) -> datetime:
    """ISO-8601, ``Z`` accepted (Python 3.10 does not); a time without a zone is taken as UTC."""
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    when = datetime.fromisoformat(text)
    if when.tzinfo is None:
        return when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc)


def list_snapshots(profile: str | None = None, host: str | None = None) -> list[SnapshotInfo]:
    """The snapshots on disk (of one profile and/or host), newest first by the order this
    machine started them; files that are not whole snapshots are left out."""
    paths = [p for p in snapshot_dir().glob("*.json") if not p.name.startswith(".") and p.is_file()]
    found = [info for info in (_info(p, profile, host) for p in paths) if info is not None]
    found.sort(
        key=lambda i: (i.sequence is not None, i.sequence or 0, i.taken_at, i.path.name),
        reverse=True,
    )
    return found


def latest_snapshot(profile: str, host: str, base_url: str | None = None) -> SnapshotInfo | None:
    """The snapshot of the latest change of ``profile`` on ``host`` (of ``base_url``
    first), never a restore's own: a restore run twice undoes the same change twice."""
    found = [i for i in list_snapshots(profile=profile, host=host) if i.undoes is None]
    same = [info for info in found if base_url is None or same_base_url(info.base_url, base_url)]
    return next(iter(same or found), None)


def _info(path: Path, profile: str | None, host: str | None) -> SnapshotInfo | None:
    """The header and entry count of one file of ``profile`` and ``host`` (line 1 and the lines
    after it, as we write them; else the file parsed whole), or ``None``."""
    try:
        with path.open("rb") as handle:
            first = handle.readline(_HEADER_LIMIT)
            if first.endswith(b'"entries": [\n'):
                data = json.loads(first[:-1].decode("utf-8") + "]}")
                if not isinstance(data, dict) or not _wanted(data, profile, host):
                    return None
                count, previous, tail = 0, b"\n", b""
                while chunk := handle.read(1 << 20):
                    count += (previous + chunk).count(b"\n{")
                    previous, tail = chunk[-1:], (tail + chunk)[-len(_TAIL) :]
                if tail == _TAIL:
                    return _header(path, data, count)
        data = _load_json(path)
        info = _header(path, data)
        entries = data.get("entries")
        if not isinstance(entries, list) or not _wanted(data, profile, host):
            return None
        return replace(info, count=len(entries))
    except (UsageProblem, OSError, ValueError, RecursionError):  # a stray file: not listed
        return None


def _wanted(data: dict[str, Any], profile: str | None, host: str | None) -> bool:
    return profile in (None, data.get("profile")) and host in (None, data.get("host"))
