"""What ``dict-magics`` prints for scripts: one JSON shape per kind of result, whatever its size.

A deletion is always ``{"results": [...], "ok", "succeeded", "failed", ...}``, for one id as
for many, and a purge is the same with one result, so a script never has to guess. Fields keep
the contract's names (``DESIGN.md``); entries keep the service's (``fromLang`` ...). Errors go
to stdout as ``{"error": ..., "exit": N}`` when JSON was asked for (the one-line message still
goes to stderr). ``--jsonl`` writes one compact object a line, each flushed as it is written.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ..models import (
        AddResult,
        AuditLine,
        BatchResult,
        ChangePreview,
        DeleteResult,
        DryRunResult,
        Entry,
        EntryList,
        ExportResult,
        NoChange,
        RestoreResult,
        SnapshotInfo,
        SyncPlan,
        SyncResult,
        UpdateResult,
    )

__all__ = [
    "Output",
    "add_json",
    "audit_json",
    "batch_json",
    "dryrun_json",
    "dumps",
    "entry_json",
    "export_json",
    "listing_json",
    "no_change_json",
    "preview_json",
    "restore_json",
    "result_json",
    "snapshot_json",
    "summary_json",
    "sync_json",
    "update_json",
]

Mode = Literal["text", "json", "jsonl"]


def entry_json(entry: Entry | None) -> dict[str, str] | None:
    """An entry in the service's field names (``id``, ``fromLang``, ...), or ``None``."""
    return entry.to_service() if entry is not None else None


def result_json(result: DeleteResult) -> dict[str, Any]:
    """The public fields of a ``DeleteResult``, as the contract names them. ``ok`` is true for
    an absent id too (nothing to delete is no failure, as the batch's ``ok`` says); ``status``
    keeps version 1's two values, so it stays ``failure`` there: the service deleted nothing."""
    return {
        "status": result.status,
        "ok": result.done,
        "outcome": result.outcome,
        "entry_id": result.entry_id,
        "entry": entry_json(result.entry),
        "http_status": result.http_status,
        "reason": result.reason,
        "cause": result.cause.value,
        "code": result.code,
        "vendor_message": result.vendor_message,
        "outcome_unknown": result.outcome_unknown,
        "verified": result.verified,
        "attempts": result.attempts,
        "elapsed": round(result.elapsed, 6),
        "snapshot": result.snapshot,
    }


def _counts(results: list[DeleteResult]) -> dict[str, Any]:
    succeeded = sum(1 for r in results if r.ok)
    absent = sum(1 for r in results if r.absent)
    return {
        "ok": bool(results) and succeeded + absent == len(results),
        "succeeded": succeeded,
        "failed": len(results) - succeeded - absent,
        "unknown": sum(1 for r in results if r.outcome_unknown),
    }


def batch_json(
    result: DeleteResult | BatchResult, warnings: list[str] | None = None
) -> dict[str, Any]:
    """One shape for one id, several ids and the purge: every result in input order, the
    counts, the snapshot that holds what was deleted, and ``interrupted`` after Ctrl-C."""
    results = list(getattr(result, "results", [result]))
    data: dict[str, Any] = {"results": [result_json(r) for r in results], **_counts(results)}
    # Entries deleted: a purge's one request deletes every entry (as many as were listed just
    # before); a delete's requests one each (an id repeated counts once).
    purge = results[0] if len(results) == 1 and results[0].entry_id is None else None
    if purge is not None:
        data["deleted"] = purge.purged if purge.ok else 0
    else:
        data["deleted"] = len({r.entry_id for r in results if r.ok})
    data["absent"] = len({r.entry_id for r in results if r.absent})
    data["interrupted"] = bool(getattr(result, "interrupted", False))
    data["snapshot"] = result.snapshot
    data["warnings"] = list(warnings or [])
    return data


def summary_json(
    result: DeleteResult | BatchResult, warnings: list[str] | None = None
) -> dict[str, Any]:
    """The last line of ``--jsonl``: the counts of ``batch_json`` without the results."""
    data = batch_json(result, warnings)
    data["total"] = len(data.pop("results"))
    return {"summary": data}


def _dry_run(result: DryRunResult | ChangePreview) -> dict[str, Any]:
    """The head every dry run's JSON starts with: nothing was changed, what, where, who."""
    return {
        "dry_run": True,
        "ok": True,
        "operation": result.operation,
        "host": result.host,
        "profile": result.profile,
    }


def dryrun_json(result: DryRunResult) -> dict[str, Any]:
    """What a delete or purge would do; nothing was changed."""
    return {
        **_dry_run(result),
        "listed": result.listed,
        "entries": [entry_json(e) for e in result.entries],
        "missing": list(result.missing),
    }


def restore_json(result: RestoreResult) -> dict[str, Any]:
    """What a restore added, found already there, could not add, or cannot tell."""
    return {
        "ok": result.ok,
        "dry_run": result.dry_run,
        "added": [_entry(e) for e in result.added],  # id only when a listing named it
        "skipped": [entry_json(e) for e in result.skipped],
        "failed": [{"entry": entry_json(e), "reason": why} for e, why in result.failed],
        "unknown": [entry_json(e) for e in result.unknown],
        "put_back": [entry_json(e) for e in result.put_back],
        "removed": [entry_json(e) for e in result.removed],
    }


def _entry(entry: Entry) -> dict[str, str]:
    """An entry in the service's names, ``id`` only when known (an add has none yet)."""
    return entry.to_service(with_id=bool(entry.id))


def add_json(result: AddResult) -> dict[str, Any]:
    """One addition: the outcome, and the entry with its new id when a listing found it."""
    return {
        "operation": "add",
        "ok": result.ok,
        "outcome": result.outcome,
        "entry": _entry(result.entry),
        "id": result.entry.id or None,
        "http_status": result.http_status,
        "reason": result.reason,
        "cause": result.cause.value,
        "verified": result.verified,
        "attempts": result.attempts,
    }


def update_json(result: UpdateResult) -> dict[str, Any]:
    """One update: the outcome, the id, the entry before and after."""
    return {
        "operation": "update",
        "ok": result.ok,
        "outcome": result.outcome,
        "id": result.entry_id,
        "old": _entry(result.old) if result.old is not None else None,
        "new": _entry(result.new),
        "http_status": result.http_status,
        "reason": result.reason,
        "cause": result.cause.value,
        "verified": result.verified,
        "attempts": result.attempts,
        "snapshot": result.snapshot,
    }


def no_change_json(result: NoChange) -> dict[str, Any]:
    """An add or update with nothing to do, in that command's own shape (``ok`` true, outcome
    ``unchanged``, no request: ``attempts`` 0), naming the entries that already hold the terms."""
    first = result.entry
    common = {
        "operation": result.operation,
        "ok": True,
        "outcome": "unchanged",
        "changed": False,
        "ids": result.ids,
        "http_status": None,
        "reason": None,
        "cause": None,
        "verified": True,
        "attempts": 0,
    }
    if result.operation == "add":
        return {**common, "entry": _entry(first), "id": first.id or None}
    return {**common, "id": first.id, "old": _entry(first), "new": _entry(first), "snapshot": None}


def preview_json(preview: ChangePreview) -> dict[str, Any]:
    """A dry run of an add or an update."""
    return {
        **_dry_run(preview),
        "old": _entry(preview.old) if preview.old is not None else None,
        "new": _entry(preview.new),
        "alongside": [_entry(e) for e in preview.alongside],
    }


def sync_json(result: SyncPlan | SyncResult) -> dict[str, Any]:
    """DESIGN's sync shape, for a plan (``applied`` false) and for a plan applied."""
    applied = hasattr(result, "plan")
    plan: SyncPlan = result.plan if applied else result  # type: ignore[union-attr,assignment]
    data: dict[str, Any] = {
        "applied": applied and bool(getattr(result, "applied", False)),
        "ok": result.ok,
        "path": plan.path,
        "host": plan.host,
        "profile": plan.profile,
        "adds": [_entry(e) for e in plan.adds],
        "updates": [
            {"id": u.id, "old": _entry(u.old), "new": _entry(u.new), "row": u.row}
            for u in plan.updates
        ],
        "deletes": [_entry(e) for e in plan.deletes],
        "unchanged": plan.unchanged,
        "conflicts": [
            {"entries": [_entry(e) for e in c.entries], "row": c.row} for c in plan.conflicts
        ],
        "invalid": [{"row": bad.row, "reason": bad.reason} for bad in plan.invalid],
        "sheet": plan.sheet,
        "other_sheets": list(plan.other_sheets),
        "warnings": list(plan.warnings),
        "missing": len(plan.missing),
        "counts": plan.counts(),
        "verified": None,
        "snapshot": None,
        "results": [],
    }
    if applied:
        data["verified"] = result.verified  # type: ignore[union-attr]
        data["snapshot"] = result.snapshot  # type: ignore[union-attr]
        data["mismatches"] = list(result.mismatches)  # type: ignore[union-attr]
        data["results"] = (
            [add_json(r) for r in result.adds]  # type: ignore[union-attr]
            + [update_json(r) for r in result.updates]  # type: ignore[union-attr]
            + [{**result_json(r), "operation": "delete"} for r in result.deletes]  # type: ignore[union-attr]
        )
    return data


def export_json(result: ExportResult) -> dict[str, Any]:
    return {
        "ok": True,
        "path": str(result.path),
        "format": result.format,
        "count": result.count,
        "host": result.host,
    }


def listing_json(listing: EntryList) -> dict[str, Any]:
    """``{"entries": [...], "total": n}`` in the service's own field names."""
    return {"entries": [entry_json(e) for e in listing], "total": len(listing)}


def snapshot_json(info: SnapshotInfo) -> dict[str, Any]:
    """One snapshot file as ``dict-magics snapshots --json`` lists it."""
    return {
        "path": str(info.path),
        "taken_at": info.taken_at.isoformat(),
        "profile": info.profile,
        "host": info.host,
        "base_url": info.base_url,
        "operation": info.operation,
        "count": info.count,
    }


def audit_json(line: AuditLine) -> dict[str, Any]:
    """One audit line in the audit file's own field names."""
    return {
        "time": line.time.isoformat(),
        "profile": line.profile,
        "host": line.host,
        "operation": line.operation,
        "entry_id": line.entry_id,
        "entry": line.entry.to_service(with_id=False) if line.entry is not None else None,
        "outcome": line.outcome,
        "http_status": line.http_status,
        "attempts": line.attempts,
        "reason": line.reason,
        "snapshot": line.snapshot,
    }


class Output:
    """Where a command's answer goes: text, one JSON document, or JSON lines as they come."""

    def __init__(self, mode: Mode = "text") -> None:
        self.mode = mode
        self._lock = threading.Lock()

    @property
    def machine(self) -> bool:
        """True when a program reads stdout (``--json`` or ``--jsonl``)."""
        return self.mode != "text"

    def show(self, data: dict[str, Any], text: str) -> None:
        """``data`` as JSON (a document, or one line) when asked for, else ``text``."""
        if self.mode == "json":
            self._write(dumps(data, indent=2))
        elif self.mode == "jsonl":
            self.line(data)
        else:
            self._write(text)

    def line(self, data: dict[str, Any]) -> None:
        """One compact JSON line, flushed at once (safe from the client's worker threads)."""
        self._write(dumps(data, separators=(",", ":")))

    def error(self, message: str, code: int) -> None:
        """The error as JSON on stdout, for a program that reads only stdout."""
        if self.machine:
            data = {"error": message, "exit": code}
            if self.mode == "json":
                self._write(dumps(data, indent=2))
            else:
                self.line(data)

    def _write(self, text: str) -> None:
        # A term may hold a lone surrogate (JSON allows "\ud800"; UTF-8 cannot encode it): it is
        # written as that escape, which inside a JSON string means the same, and never crashes
        # the output of a delete that already happened.
        text = _LONE_SURROGATE.sub(_escaped, text)
        with self._lock:
            try:
                sys.stdout.write(text + "\n")
                sys.stdout.flush()
            except BrokenPipeError:
                _quiet_stdout()


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _quiet_stdout() -> None:
    """A reader that went away (``| head``) is not an error: drop the rest of our output."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def dumps(data: dict[str, Any], **layout: Any) -> str:
    """JSON keeping readable non-ASCII text as is (Japanese stays Japanese), with every
    character a terminal would act on or hide (controls, C1, DEL, bidi overrides, zero-width
    and other format characters, line separators) or UTF-8 cannot write (a lone surrogate, which
    a service's listing can send as ``\\ud800``) as a ``\\u`` escape: the same text to any JSON
    reader, and safe to print."""
    text = json.dumps(data, ensure_ascii=False, **layout)
    return _UNSAFE_RUN.sub(_escape_run, text)


_UNSAFE_RUN = re.compile("[^\n\x20-\x7e]+")
"""Runs of characters outside printable ASCII (and the layout's newlines): the only places an
unsafe one can be. Outside JSON strings there are none, so an escape is always inside one."""
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})


def _escape_run(match: re.Match[str]) -> str:
    run = match.group()
    if run.isprintable():
        return run
    import unicodedata

    return "".join(
        _json_escape(ch) if unicodedata.category(ch) in _UNSAFE_CATEGORIES else ch for ch in run
    )


def _json_escape(ch: str) -> str:
    """``ch`` as JSON's ``\\uXXXX`` (a surrogate pair beyond the first plane)."""
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
