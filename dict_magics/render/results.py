"""One rendering of results, shared by the magics, the panel and the command line.

Success, failure and unknown outcomes look different in both text and HTML, so nobody mistakes
"we do not know" for either answer. Everything that came from outside is escaped.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..service.models import BatchResult, DeleteResult

__all__ = ["batch_html", "batch_text", "kind_of", "result_html", "result_text"]

_SYMBOL = {"success": "\u2713", "failure": "\u2717", "unknown": "?"}
_COLOUR = {"success": "#1a7f37", "failure": "#cf222e", "unknown": "#9a6700"}


def kind_of(result: DeleteResult) -> str:
    """``success``, ``failure`` or ``unknown``: the three outcomes a reader must tell apart."""
    if result.outcome_unknown:
        return "unknown"
    return "success" if result.ok else "failure"


def _details(result: DeleteResult) -> str:
    parts = []
    if result.http_status is not None and f"HTTP {result.http_status}" not in (result.reason or ""):
        parts.append(f"HTTP {result.http_status}")
    parts.append(f"{result.attempts} attempt" + ("" if result.attempts == 1 else "s"))
    parts.append(f"{result.elapsed:.2f} s")
    return ", ".join(parts)


def _headline(result: DeleteResult) -> str:
    kind = kind_of(result)
    if kind == "success":
        return f"deleted {result.target}"
    if kind == "unknown":
        return f"outcome unknown for {result.target}: it may or may not have been deleted"
    return f"{result.target} not deleted"


def result_text(result: DeleteResult) -> str:
    """One line: symbol, what happened, the reason when it did not succeed, and the details."""
    line = f"{_SYMBOL[kind_of(result)]} {_headline(result)}"
    if result.reason and not result.ok:
        line += f" \u2014 {result.reason}"
    return f"{line} ({_details(result)})"


def result_html(result: DeleteResult) -> str:
    """The same line as HTML, coloured by outcome, every value escaped."""
    kind = kind_of(result)
    reason = ""
    if result.reason and not result.ok:
        reason = f" &mdash; {escape(result.reason)}"
    return (
        f'<div class="dict-magics-result dict-magics-{kind}" style="color:{_COLOUR[kind]}">'
        f"<b>{_SYMBOL[kind]} {escape(_headline(result))}</b>{reason}"
        f' <span style="color:#57606a">({escape(_details(result))})</span></div>'
    )


def _summary(batch: BatchResult) -> str:
    total = len(batch.results)
    text = f"deleted {batch.succeeded} of {total} entr{'y' if total == 1 else 'ies'}"
    repeats = total - len({r.entry_id for r in batch.results})
    if repeats:
        text += f" ({repeats} repeated id{'' if repeats == 1 else 's'}, each sent once)"
    if batch.failed:
        text += f"; {batch.failed} not deleted"
        if batch.unknown:
            text += f" ({batch.unknown} with unknown outcome)"
    return text


def batch_text(batch: BatchResult) -> str:
    """A summary line, then every result that did not succeed, each with its reason."""
    symbol = _SYMBOL["success"] if batch.ok else _SYMBOL["failure"]
    lines = [f"{symbol} {_summary(batch)}"]
    lines.extend(f"  {result_text(r)}" for r in batch.failures)
    return "\n".join(lines)


def batch_html(batch: BatchResult) -> str:
    """The summary as HTML, with every failure listed and escaped."""
    kind = "success" if batch.ok else "failure"
    items = "".join(f"<li>{result_html(r)}</li>" for r in batch.failures)
    listing = f'<ul style="margin:0.2em 0">{items}</ul>' if items else ""
    return (
        f'<div class="dict-magics-batch dict-magics-{kind}">'
        f'<b style="color:{_COLOUR[kind]}">{_SYMBOL[kind]} {escape(_summary(batch))}</b>'
        f"{listing}</div>"
    )
