"""Snapshots: the entries about to be deleted or changed, kept on disk before the first request.

A snapshot is one JSON file in ``<DICT_MAGICS_HOME>/snapshots``, created under its own new name,
written and ``fdatasync``ed before the first request goes (``localdata.write_new``).
A crash mid-write can leave a short file; it does not end as we write (``]}`` on a line of its
own) or does not parse, so it is never listed and never restored: whole snapshots only.
The format is the contract in DESIGN.md ("Undo for every change")::

    {"format": "dict-magics-snapshot/2", "taken_at": ISO-8601 UTC, "profile", "host",
     "base_url", "operation": "purge" | "delete" | "update" | "sync",
     "added": [{fromLang, fromText, toLang, toText}, ...],
     "entries": [{id, fromLang, fromText, toLang, toText}, ...]}

``entries`` are the entries as they were before being deleted or changed; ``added`` the terms
of the entries the operation adds (a restore removes them). Version 1 (``.../1``: no
``added``, operations purge and delete only) is still read. Plus, only when a deleted entry had
twins (the same four terms under other ids), ``"copies": {id: n}``: how many entries with its
terms the dictionary held, so a restore puts back one of two twins while the other is still
there. Plus, for a delete, ``"listing_age"``: seconds between the listing the entries' terms
come from and the snapshot (0: listed afresh just before; more only with the ``listing_max_age``
setting, when an edit made elsewhere within that time is not in the snapshot).

We write the header (``added`` included) on the first line and one entry per line, so listing
many large snapshots reads each header line and counts lines instead of parsing every entry.
Any other layout of the
same JSON (a file edited by hand, pretty-printed) is read too, by parsing it whole.
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
from typing import Any, BinaryIO

from .. import localdata
from ..errors import LocalDataError, Remedy, ServiceError, UsageProblem
from ..models import Entry, Snapshot, SnapshotInfo
from ..models.store import Operation
from ..service.http import same_base_url

__all__ = [
    "FORMAT",
    "Snapshot",
    "SnapshotInfo",
    "latest_snapshot",
    "list_snapshots",
    "listing_failed",
    "read_snapshot",
    "save_snapshot",
    "snapshot_dir",
    "write_snapshot",
]

FORMAT = "dict-magics-snapshot/2"
FORMAT_1 = "dict-magics-snapshot/1"
READABLE = (FORMAT_1, FORMAT)
OPERATIONS = ("purge", "delete", "update", "sync")
OPERATIONS_1 = ("purge", "delete")
HEADER_FIELDS = ("format", "taken_at", "profile", "host", "base_url", "operation")
_HEADER_LIMIT = 64 * 1024
_TAIL = b"\n]}\n"
_UNSAFE = re.compile(r"[^A-Za-z0-9._]+")
_ENTRY = '{"id": %s, "fromLang": %s, "fromText": %s, "toLang": %s, "toText": %s}'
_TERMS = ("fromLang", "fromText", "toLang", "toText")


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
    copies: dict[str, int] | None = None,
    listing_age: float | None = None,
) -> Snapshot:
    """Keep ``entries`` on disk before they are deleted or changed (and the terms ``added``
    will add): written and ``fdatasync``ed before this returns, or ``LocalDataError`` (then
    nothing may be sent). ``copies``: how many entries shared a kept entry's terms;
    ``listing_age``: how old the listing the terms come from was, in seconds."""
    entries, added = list(entries), list(added)
    age = None if listing_age is None else round(listing_age, 6)
    path, taken_at = save_snapshot(
        entries,
        profile=profile,
        host=host,
        base_url=base_url,
        operation=operation,
        added=added,
        copies=copies,
        listing_age=age,
    )
    return Snapshot(
        path,
        taken_at,
        profile,
        host,
        base_url,
        operation,
        entries,
        dict(copies or {}),
        added,
        FORMAT,
        age,
    )


def save_snapshot(
    entries: list[Entry],
    *,
    profile: str,
    host: str,
    base_url: str,
    operation: str,
    added: Iterable[Entry] = (),
    copies: dict[str, int] | None = None,
    listing_age: float | None = None,
) -> tuple[Path, datetime]:
    """``write_snapshot``'s work: the file's path and time (what a delete needs)."""
    if operation not in OPERATIONS:
        raise ValueError(f"operation must be one of {OPERATIONS}, not {operation!r}")
    taken_at = datetime.now(timezone.utc)
    header: dict[str, Any] = {
        "format": FORMAT,
        "taken_at": taken_at.isoformat(timespec="microseconds"),
        "profile": profile,
        "host": host,
        "base_url": base_url,
        "operation": operation,
        "added": [e.to_service(with_id=False) for e in added],
    }
    if copies:
        header["copies"] = copies
    if listing_age is not None:
        header["listing_age"] = round(listing_age, 6)
    data = _serialise(header, entries)
    try:
        folder = snapshot_dir()
        stem = f"{taken_at:%Y%m%dT%H%M%S%fZ}-{_safe(profile)}-{_safe(host)}-{operation}"
        stem += f"-n{_next_sequence():d}"
        for _ in range(8):  # a name taken (by chance, or by a link planted there): another
            path = folder / f"{stem}-{secrets.token_hex(3)}.json"
            try:
                return localdata.write_new(path, data), taken_at
            except FileExistsError:
                continue
        raise FileExistsError(errno.EEXIST, "no free snapshot name", str(folder))
    except OSError as exc:
        raise _not_saved(exc, operation) from None


_SKIPPABLE = ("delete", "purge")
"""What a user may run without a snapshot; an update, a sync or an undo always keeps one."""
_COPYLESS_HELPS = {"bad_answer", "too_large", "refused"}
"""Listing failures a delete without a copy could get past (an outage or refused credentials
would stop the deletion too)."""


def _not_saved(exc: OSError, operation: str) -> LocalDataError:
    """A disk problem (exit 1); only a delete or a purge can go ahead without a copy."""
    deleting = operation in _SKIPPABLE
    before, nothing = ("deleting", "deleted") if deleting else (f"the {operation}", "sent")
    return LocalDataError(
        f"could not save a snapshot before {before} ({exc.strerror or exc}: "
        f"{exc.filename or 'the data folder'}); nothing was {nothing}. Free some space or "
        "set DICT_MAGICS_HOME.",
        option=Remedy.NO_SNAPSHOT if deleting else None,
    )


def listing_failed(exc: ServiceError, dry_run: bool) -> ServiceError:
    """The error when the listing a snapshot needs could not be had (exit 1); it names going
    ahead without a copy only where that could help."""
    cause = getattr(exc.cause, "value", exc.cause)
    if dry_run:
        text = f"{exc}; nothing was sent (dry run)."
    else:
        again = "" if cause == "auth" else " Try again."
        text = f"{exc}; so no snapshot could be taken first, and nothing was deleted.{again}"
    return ServiceError(
        text,
        **exc.facts(),
        option=Remedy.NO_SNAPSHOT if not dry_run and cause in _COPYLESS_HELPS else None,
    )


SEQUENCE_FILE = "snapshot-sequence"
_SEQUENCE = re.compile(r"-n([0-9]{1,18})-[0-9a-f]{6}\.json$")


def _next_sequence() -> int:
    """A number larger than any snapshot's started before in this data folder (it goes in the
    file's name, ``...-n42-xxxxxx.json``).

    One byte appended to ``<DICT_MAGICS_HOME>/snapshot-sequence``: an ``O_APPEND`` write places
    itself at the end
    of the file atomically, so the descriptor's offset after it is unique and increasing across
    threads and processes, without a lock and without trusting the clock. A sequence file that
    went missing is started again above the highest sequence of the snapshots there."""
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
    """The header and ``"entries": [`` on line 1, then one entry per line, then ``]}``.

    JSON escapes every newline inside a string, so each entry stays on its line. Entries are
    formatted around the C string encoder: 3-4 times faster than encoding a dict per entry.
    """
    head = json.JSONEncoder(ensure_ascii=False).encode(header)[:-1] + ', "entries": ['
    body = ",\n".join(
        _ENTRY % (_q(str(e.id)), _q(e.from_lang), _q(e.from_text), _q(e.to_lang), _q(e.to_text))
        for e in entries
    )
    # A lone surrogate (JSON allows "\\ud800") cannot be UTF-8: written as that JSON escape.
    return (head + "\n" + body + _TAIL.decode()).encode("utf-8", "backslashreplace")


def _safe(text: str) -> str:
    """A file-name-safe form of a profile or host (``127.0.0.1:8080`` -> ``127.0.0.1_8080``)."""
    return _UNSAFE.sub("_", text).strip("._")[:60] or "_"


def read_snapshot(path: str | Path) -> Snapshot:
    """Read a snapshot back, checking every field; a bad file raises ``UsageProblem`` saying why."""
    path = Path(path).expanduser()
    data = _load_json(path)
    info = _header(path, data, count=0)
    raw = data.get("entries")
    if not isinstance(raw, list):
        raise UsageProblem(f"{path} is not a valid snapshot: 'entries' is not a list.")
    entries = []
    for number, item in enumerate(raw, start=1):
        try:
            entries.append(Entry.from_service(item))
        except ValueError as exc:
            raise UsageProblem(f"{path} is not a valid snapshot: entry #{number}: {exc}.") from None
    return Snapshot(
        info.path,
        info.taken_at,
        info.profile,
        info.host,
        info.base_url,
        info.operation,
        entries,
        _copies(data.get("copies")),
        _added(path, data),
        data["format"],
        _age(data.get("listing_age")),
    )


def _added(path: Path, data: dict[str, Any]) -> list[Entry]:
    """The terms a version-2 snapshot says its operation added (none in version 1)."""
    raw = data.get("added", [])
    if data["format"] == FORMAT_1:
        return []
    if not isinstance(raw, list):
        raise UsageProblem(f"{path} is not a valid snapshot: 'added' is not a list.")
    added = []
    for number, item in enumerate(raw, start=1):
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in _TERMS):
            raise UsageProblem(
                f"{path} is not a valid snapshot: added #{number} lacks one of the four terms."
            )
        added.append(Entry("", *(item[k] for k in _TERMS)))
    return added


def _age(raw: Any) -> float | None:
    """The optional ``listing_age`` header (seconds between the listing the entries' terms come
    from and the snapshot); anything malformed is ignored, as for an older snapshot."""
    if isinstance(raw, int | float) and not isinstance(raw, bool) and 0 <= raw < float("inf"):
        return float(raw)
    return None


def _copies(raw: Any) -> dict[str, int]:
    """The optional ``copies`` header (entry id -> how many entries with its four terms the
    dictionary held when the snapshot was taken); anything malformed is ignored (a restore then
    counts as version 1 did)."""
    if not isinstance(raw, dict):
        return {}
    return {
        str(k): v
        for k, v in raw.items()
        if isinstance(v, int) and not isinstance(v, bool) and v > 1
    }


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


def _header(path: Path, data: dict[str, Any], *, count: int) -> SnapshotInfo:
    """Check the header fields of a parsed snapshot; raises ``UsageProblem`` naming the fault."""
    tag = data.get("format")
    if tag not in READABLE:
        if isinstance(tag, str) and tag.startswith("dict-magics-snapshot/"):
            raise UsageProblem(
                f"{path} is a snapshot in format {tag!r}, which this version of dict-magics "
                f"cannot read (it reads {' and '.join(map(repr, READABLE))}): upgrade "
                "dict-magics."
            )
        raise UsageProblem(f"{path} is not a dict-magics snapshot (no format {FORMAT!r}).")
    for name in HEADER_FIELDS[1:]:
        if not isinstance(data.get(name), str):
            raise UsageProblem(f"{path} is not a valid snapshot: {name!r} is missing or not text.")
    allowed = OPERATIONS if tag == FORMAT else OPERATIONS_1
    if data["operation"] not in allowed:
        raise UsageProblem(
            f"{path} is not a valid snapshot: operation {data['operation']!r} is not one of "
            f"{', '.join(repr(o) for o in allowed)}."
        )
    try:
        taken_at = _parse_time(data["taken_at"])
    except ValueError:
        raise UsageProblem(
            f"{path} is not a valid snapshot: taken_at {data['taken_at']!r} is not an ISO-8601 "
            "time."
        ) from None
    named = _SEQUENCE.search(path.name)
    sequence = int(named.group(1)) if named else None
    added = len(data["added"]) if isinstance(data.get("added"), list) else 0
    return SnapshotInfo(
        path,
        taken_at,
        data["profile"],
        data["host"],
        data["base_url"],
        data["operation"],
        count,
        sequence,
        added,
    )


def _parse_time(text: str) -> datetime:
    """ISO-8601, ``Z`` accepted (Python 3.10 does not); a time without a zone is taken as UTC."""
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    when = datetime.fromisoformat(text)
    if when.tzinfo is None:
        return when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc)


def list_snapshots(profile: str | None = None, host: str | None = None) -> list[SnapshotInfo]:
    """The snapshots on disk, newest first, optionally of one profile and/or host.

    Files that are not snapshots are left out (a listing should not fail because of one stray
    file); temporary files of a write in progress or interrupted are never considered.
    """
    found = []
    for path in snapshot_dir().glob("*.json"):
        if path.name.startswith(".") or not path.is_file():
            continue
        info = _info(path, profile, host)
        if info is not None:
            found.append(info)
    # Newest first by the order they were started on this machine, not by their clock time: a
    # snapshot taken while the clock was ahead must not hide a later one. Older snapshots (no
    # sequence) come after, by time.
    found.sort(
        key=lambda i: (i.sequence is not None, i.sequence or 0, i.taken_at, i.path.name),
        reverse=True,
    )
    return found


def latest_snapshot(profile: str, host: str, base_url: str | None = None) -> SnapshotInfo | None:
    """The newest snapshot of ``profile`` on ``host`` (of ``base_url`` first: two API prefixes
    on one host are two dictionaries), or ``None`` when there is none."""
    found = list_snapshots(profile=profile, host=host)
    same = [info for info in found if base_url is None or same_base_url(info.base_url, base_url)]
    return (same or found or [None])[0]


def _info(path: Path, profile: str | None, host: str | None) -> SnapshotInfo | None:
    """The header and entry count of one file, or ``None`` if it is not a wanted snapshot."""
    try:
        with path.open("rb") as handle:
            info = _first_line_header(path, handle)
            if info is not None:
                if not _wanted(info, profile, host):
                    return None
                count = _count_entries(handle)
                if count is not None:
                    return replace(info, count=count)
        data = _load_json(path)
        info = _header(path, data, count=0)
    except (UsageProblem, OSError, ValueError, RecursionError):  # a stray file: not listed
        return None
    entries = data.get("entries")
    if not isinstance(entries, list) or not _wanted(info, profile, host):
        return None
    return replace(info, count=len(entries))


def _wanted(info: SnapshotInfo, profile: str | None, host: str | None) -> bool:
    return (profile is None or info.profile == profile) and (host is None or info.host == host)


def _first_line_header(path: Path, handle: BinaryIO) -> SnapshotInfo | None:
    """The header, when line 1 is the header as we write it (``None`` for any other layout)."""
    first = handle.readline(_HEADER_LIMIT)
    if not first.endswith(b'"entries": [\n'):
        return None
    try:
        data = json.loads(first[:-1].decode("utf-8") + "]}")
    except (ValueError, RecursionError):  # RecursionError: a stray file nested very deep
        return None
    if not isinstance(data, dict):
        return None
    return _header(path, data, count=0)


def _count_entries(handle: BinaryIO) -> int | None:
    """Entries after the header line: one per line, so count line starts, in 1 MiB chunks.

    ``None`` when the file does not end as we write it (then it is parsed whole instead).
    """
    count, previous, tail = 0, b"\n", b""
    while chunk := handle.read(1 << 20):
        count += (previous + chunk).count(b"\n{")
        previous = chunk[-1:]
        tail = (tail + chunk)[-len(_TAIL) :]
    return count if tail == _TAIL else None
