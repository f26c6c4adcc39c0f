"""One rendering of results, shared by the magics, the panel and the command line.

Success, failure and unknown outcomes look different in both text and HTML, so nobody mistakes
"we do not know" for either answer. A batch is a summary line and its failures grouped by cause
(a few examples each), so two thousand refusals read as one line, not two thousand. Everything
that came from outside is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from ..errors import Remedy
from ..models import BatchResult, Cause, DeleteResult, UpdateResult
from .purge import NEUTRAL
from .words import COLOUR, SYMBOL, clean

__all__ = [
    "EXAMPLES",
    "batch_html",
    "batch_text",
    "details",
    "kind_of",
    "result_html",
    "result_text",
]

EXAMPLES = 5
"""Results shown for each group of a batch's failures."""
NAMED = 20
"""Deleted entries a batch names with their terms (the rest are counted)."""
_LABEL = {
    Cause.OK: "not deleted",
    Cause.REFUSED: "refused by the service",
    Cause.AUTH: "credentials refused",
    Cause.NONCE_REUSED: "nonce already used (another process with the same access key?)",
    Cause.BAD_ANSWER: "unreadable answer",
    Cause.TOO_LARGE: "answer too large",
    Cause.REDIRECT: "redirected (not followed)",
    Cause.RATE_LIMITED: "rate-limited",
    Cause.UNAVAILABLE: "service unavailable or unreachable",
    Cause.TIMEOUT: "no answer in time",
    Cause.CONNECTION_LOST: "connection lost",
    Cause.GATEWAY: "a gateway answered",
    Cause.DNS: "host name not found",
    Cause.TLS: "TLS handshake failed",
    Cause.NOT_ATTEMPTED: "not sent",
    Cause.ERROR: "request error",
}


def kind_of(result: DeleteResult) -> str:
    """``success``, ``failure`` or ``unknown``: the three outcomes a reader must tell apart."""
    return result.outcome


def details(result: DeleteResult | UpdateResult) -> str:
    """``HTTP 200, 1 attempt, 0.03 s``: how a request went, for every result's line."""
    parts = [] if result.http_status is None else [f"HTTP {result.http_status}"]
    parts.append(f"{result.attempts} attempt" + ("" if result.attempts == 1 else "s"))
    parts.append(f"{result.elapsed:.2f} s")
    return ", ".join(parts)


def _headline(result: DeleteResult) -> str:
    kind = kind_of(result)
    if kind == "success":
        verified = " (verified by a listing)" if result.verified else ""
        return f"deleted {result.target}{verified}"
    if kind == "unknown":
        return f"outcome unknown for {result.target}: it may or may not have been deleted"
    if kind == "absent":
        return f"{result.target} absent (not in the dictionary)"
    return f"{result.target} not deleted"


def _line(result: DeleteResult) -> str:
    """One line: symbol, what happened, the reason when it did not succeed, and the details
    (terms and reasons from outside with control, escape and bidi characters neutralised)."""
    line = f"{SYMBOL[kind_of(result)]} {clean(_headline(result))}"
    if result.reason and not result.ok:
        line += f" \u2014 {clean(result.reason)}"
    return f"{line} ({details(result)})"


def _kept(
    result: DeleteResult | BatchResult, names: Mapping[str, str] | None
) -> tuple[str, str] | None:
    """Where the snapshot is and what puts the entries back (``names``: the front end's words,
    else the result's own, else neutral), when something may have gone; else ``None``."""
    if result.snapshot is None:
        return None
    if isinstance(result, BatchResult):
        gone = {r.entry_id for r in result.results if r.ok or r.outcome_unknown}
        if not gone:
            return None
        them = "it" if len(gone) == 1 else "them"
    else:
        if not (result.ok or result.outcome_unknown):
            return None
        them = "it" if result.entry_id is not None else "them"
    words = names if names is not None else result.names
    restore = (words or {}).get(Remedy.RESTORE) or NEUTRAL[Remedy.RESTORE]
    return result.snapshot, f"{restore} puts {them} back"


def result_text(result: DeleteResult, names: Mapping[str, str] | None = None) -> str:
    """The result's line, then where the snapshot that holds the entry is and what puts it
    back (``names``: a front end's words for that command)."""
    kept = _kept(result, names)
    if kept is None:
        return _line(result)
    path, undo = kept
    return f"{_line(result)}\n  Snapshot kept at {clean(path)}: {clean(undo)}."


def _line_html(result: DeleteResult) -> str:
    kind = kind_of(result)
    reason = ""
    if result.reason and not result.ok:
        reason = f" &mdash; {escape(result.reason)}"
    return (
        f'<div class="dict-magics-result dict-magics-{kind}" style="color:{COLOUR[kind]}">'
        f"<b>{SYMBOL[kind]} {escape(_headline(result))}</b>{reason}"
        f' <span style="color:#57606a">({escape(details(result))})</span></div>'
    )


def _kept_html(kept: tuple[str, str] | None) -> str:
    if kept is None:
        return ""
    path, undo = kept
    return (
        f'<div class="dict-magics-snapshot" style="color:#57606a">Snapshot kept at '
        f"<code>{escape(clean(path))}</code>: {escape(undo)}.</div>"
    )


def result_html(result: DeleteResult, names: Mapping[str, str] | None = None) -> str:
    """The same as HTML, coloured by outcome, every value escaped."""
    return _line_html(result) + _kept_html(_kept(result, names))


def _summary(batch: BatchResult) -> str:
    total = len(batch.results)
    text = f"deleted {batch.succeeded} of {total} entr{'y' if total == 1 else 'ies'}"
    repeats = total - len({r.entry_id for r in batch.results})
    if repeats:
        text += f" ({repeats} repeated id{'' if repeats == 1 else 's'}, each sent once)"
    if batch.absent:
        text += f"; {batch.absent} absent (not in the dictionary, nothing to delete)"
    if batch.failed:
        text += f"; {batch.failed} not deleted"
        if batch.unknown:
            text += f" ({batch.unknown} with unknown outcome)"
    if batch.interrupted:
        never = sum(1 for r in batch.failures if r.cause is Cause.NOT_ATTEMPTED)
        text += f"; interrupted: {never} never sent" if never else "; interrupted"
    return text


def _groups(batch: BatchResult) -> list[tuple[str, Cause, list[DeleteResult]]]:
    """The failures (each id once) by outcome and cause, largest group first; absent ids last."""
    groups: dict[tuple[str, Cause], list[DeleteResult]] = {}
    seen: set[str | None] = set()
    for result in [*batch.failures, *(r for r in batch.results if r.absent)]:
        if result.absent and result.entry_id in seen:
            continue
        seen.add(result.entry_id)
        groups.setdefault((kind_of(result), result.cause), []).append(result)
    ordered = sorted(groups.items(), key=lambda item: (item[0][0] == "absent", -len(item[1])))
    return [(kind, cause, results) for (kind, cause), results in ordered]


def _group_title(kind: str, cause: Cause, count: int) -> str:
    if kind == "absent":
        return f"{SYMBOL[kind]} {count} absent: not in the dictionary"
    what = "outcome unknown" if kind == "unknown" else "not deleted"
    return f"{SYMBOL[kind]} {count} {what}: {_LABEL.get(cause, cause.value)}"


def batch_text(batch: BatchResult, names: Mapping[str, str] | None = None) -> str:
    """A summary line, then the failures grouped by cause with a few examples each, then where
    the snapshot is and what puts the entries back (``names``: a front end's words)."""
    symbol = SYMBOL["success"] if batch.ok else SYMBOL["failure"]
    lines = [f"{symbol} {_summary(batch)}"]
    deleted = _deleted(batch)
    lines.extend(f"  {SYMBOL['success']} {clean(r.target)}" for r in deleted[:NAMED])
    if len(deleted) > NAMED:
        lines.append(f"    \u2026 and {len(deleted) - NAMED} more deleted")
    for kind, cause, results in _groups(batch):
        lines.append(f"  {_group_title(kind, cause, len(results))}")
        lines.extend(f"    {_line(r)}" for r in results[:EXAMPLES])
        if len(results) > EXAMPLES:
            lines.append(f"    \u2026 and {len(results) - EXAMPLES} more")
    kept = _kept(batch, names)
    if kept is not None:
        lines.append(f"  Snapshot kept at {clean(kept[0])}: {clean(kept[1])}.")
    return "\n".join(lines)


def _deleted(batch: BatchResult) -> list[DeleteResult]:
    """The deletions that happened, each id once, in input order."""
    return list({r.entry_id: r for r in batch.results if r.ok}.values())


def batch_html(batch: BatchResult, names: Mapping[str, str] | None = None) -> str:
    """The summary as HTML, then the same groups and the snapshot, every value escaped."""
    kind = "success" if batch.ok else "failure"
    parts = [
        f'<div class="dict-magics-batch dict-magics-{kind}">'
        f'<b style="color:{COLOUR[kind]}">{SYMBOL[kind]} {escape(_summary(batch))}</b>'
    ]
    deleted = _deleted(batch)
    if deleted:
        items = "".join(f"<li>{escape(r.target)}</li>" for r in deleted[:NAMED])
        if len(deleted) > NAMED:
            items += f"<li>&hellip; and {len(deleted) - NAMED} more deleted</li>"
        parts.append(f'<ul style="margin:0.2em 0">{items}</ul>')
    for group_kind, cause, results in _groups(batch):
        items = "".join(f"<li>{_line_html(r)}</li>" for r in results[:EXAMPLES])
        if len(results) > EXAMPLES:
            items += f"<li>&hellip; and {len(results) - EXAMPLES} more</li>"
        title = escape(_group_title(group_kind, cause, len(results)))
        parts.append(
            f'<div class="dict-magics-group" style="color:{COLOUR[group_kind]}">{title}'
            f'<ul style="margin:0.2em 0">{items}</ul></div>'
        )
    parts.append(_kept_html(_kept(batch, names)))
    parts.append("</div>")
    return "".join(parts)
