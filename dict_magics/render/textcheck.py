"""A ``CheckReport`` as text (each matching sentence, its entries applied or not) and as HTML
with the matched spans highlighted.

The text and the terms come from the user and the service: text shows control characters, ESC
and bidi marks as escapes (``clean``); HTML escapes every piece it places between its own marks.
Only sentences with a match are listed; a notebook gets the first ``PRETTY_SENTENCES`` of them
as text, and the HTML stays within a fixed size.
"""

from __future__ import annotations

from html import escape

from ..models import CheckReport
from ..models.textcheck import LIMIT, Match, Sentence
from .entries import HTML_MAX_BYTES, HTML_ROWS
from .words import COLOUR, SYMBOL, clean, count, entries

__all__ = ["PRETTY_SENTENCES", "check_html", "check_pretty", "check_text"]

PRETTY_SENTENCES = 20
_APPLIED = "background:#c6f6d5"
_SKIPPED = "background:#fde2c8;text-decoration:line-through"


def _title(report: CheckReport) -> str:
    applied = sum(len(s.applied) for s in report.sentences)
    skipped = sum(len(s.not_applied) for s in report.sentences)
    where = f" at {clean(report.host)}" if report.host else ""
    pair = ""
    if report.from_lang or report.to_lang:
        pair = f" {clean(report.from_lang or '*')}\u2192{clean(report.to_lang or '*')}"
    return (
        f"{len(report.matched):,} of {count(len(report.sentences), 'sentence', 'sentences')} "
        f"{'matches' if len(report.matched) == 1 else 'match'} "
        f"{entries(len(report.entries))} (of {report.checked:,}{pair} "
        f"checked{where}): {applied} applied, {skipped} not applied (limit {LIMIT} per sentence)"
    )


def _describe(report: CheckReport, entry_id: str) -> str:
    entry = report.entries.get(entry_id)
    return clean(entry.describe()) if entry is not None else ""


def _never(report: CheckReport, limit: int | None = None) -> list[str]:
    never = report.never_applied
    if not never:
        return []
    shown = never if limit is None else never[:limit]
    lines = [f"never applied in this text ({len(never)}): always past the limit"]
    lines += [f"  {SYMBOL['failure']} {clean(i)}: {_describe(report, i)}" for i in shown]
    if len(shown) < len(never):
        lines.append(f"  \u2026 and {len(never) - len(shown)} more never applied")
    return lines


def _match_line(report: CheckReport, match: Match) -> str:
    mark = SYMBOL["success" if match.applied else "failure"]
    note = "" if match.applied else f"  not applied (limit {LIMIT})"
    return f"    {mark} {clean(match.entry_id)}: {_describe(report, match.entry_id)}{note}"


def check_text(report: CheckReport, limit: int | None = None) -> str:
    """The title, then each sentence with a match (the first ``limit`` when given) and its
    entries in the order the service considers them; then the entries never applied."""
    lines = [_title(report)]
    total = len(report.matched)
    shown = 0
    for number, sentence in enumerate(report.sentences, 1):
        if not sentence.matches:
            continue
        if limit is not None and shown >= limit:
            break
        shown += 1
        lines.append(f"  [{number}] {clean(sentence.text)}")
        matches = sentence.matches if limit is None else sentence.matches[:limit]
        lines += [_match_line(report, m) for m in matches]
        if len(matches) < len(sentence.matches):
            lines.append(f"    \u2026 and {len(sentence.matches) - len(matches)} more entries")
    if shown < total:
        lines.append(f"  \u2026 and {total - shown} more sentences with matches")
    return "\n".join(lines + _never(report, limit))


def check_pretty(report: CheckReport) -> str:
    """What a notebook prints: the first sentences with matches."""
    return check_text(report, PRETTY_SENTENCES)


def highlighted(sentence: Sentence) -> str:
    """The sentence as HTML: applied spans green, spans matched only by entries past the
    limit struck through in orange; each span's title names the entries."""
    text, base = sentence.text, sentence.start
    state = [0] * len(text)
    names: list[list[str]] = [[] for _ in text]
    for match in sentence.matches:
        for i in range(match.start - base, match.end - base):
            state[i] = max(state[i], 2 if match.applied else 1)
            names[i].append(match.entry_id)
    out = []
    i = 0
    while i < len(text):
        j = i + 1
        while j < len(text) and state[j] == state[i] and names[j] == names[i]:
            j += 1
        piece = escape(clean(text[i:j]))
        if state[i]:
            style = _APPLIED if state[i] == 2 else _SKIPPED
            title = escape(clean("entries " + ", ".join(names[i])))
            piece = f'<mark style="{style}" title="{title}">{piece}</mark>'
        out.append(piece)
        i = j
    return "".join(out)


def _sentence_html(report: CheckReport, number: int, sentence: Sentence) -> str:
    items = []
    for match in sentence.matches:
        mark = SYMBOL["success" if match.applied else "failure"]
        note = "" if match.applied else f" \u2014 not applied (limit {LIMIT})"
        colour = COLOUR["success" if match.applied else "unknown"]
        items.append(
            f'<li style="color:{colour}">{mark} {escape(match.entry_id)}: '
            f"{escape(_describe(report, match.entry_id))}{note}</li>"
        )
    return (
        f"<div><div>[{number}] {highlighted(sentence)}</div>"
        f'<ul style="margin:0 0 0.4em 0">{"".join(items)}</ul></div>'
    )


def check_html(report: CheckReport) -> str:
    """The title, each sentence with a match (highlighted, then its entries), the entries never
    applied; within ``HTML_ROWS`` sentences and ``HTML_MAX_BYTES``."""
    parts: list[str] = []
    size = 0
    matched = report.matched
    shown = 0
    for number, sentence in enumerate(report.sentences, 1):
        if not sentence.matches:
            continue
        if shown >= HTML_ROWS:
            break
        part = _sentence_html(report, number, sentence)
        size += len(part.encode("utf-8"))
        if size > HTML_MAX_BYTES:
            break
        parts.append(part)
        shown += 1
    if shown < len(matched):
        parts.append(f"<div>\u2026 and {len(matched) - shown} more sentences with matches</div>")
    never = _never(report)
    if never:
        parts.append(
            f"<div><b>{escape(never[0])}</b><ul>"
            + "".join(f"<li>{escape(line.strip())}</li>" for line in never[1:HTML_ROWS])
            + "</ul></div>"
        )
    return (
        f'<div class="dict-magics-check"><div><b>{escape(_title(report))}</b></div>'
        f"{''.join(parts)}</div>"
    )
