"""A ``LintReport`` as text (grouped by kind, each finding with its fix) and as an HTML table.

Messages quote terms from the service: text shows control characters, ESC and bidi marks as
escapes (``clean``), HTML escapes everything. A notebook cell gets the first findings of each
kind only (``pretty``), and the HTML stays within a fixed size whatever the report holds.
"""

from __future__ import annotations

from html import escape

from ..models import LintReport
from ..models.lint import Finding
from .entries import HTML_MAX_BYTES, HTML_ROWS
from .words import COLOUR, SYMBOL, clean, count, entries

__all__ = ["PRETTY_PER_KIND", "lint_html", "lint_pretty", "lint_text"]

PRETTY_PER_KIND = 10
"""Findings of each kind a notebook shows as text (``str(report)`` has them all)."""
_IDS_SHOWN = 8


def _ids(ids: tuple[str, ...]) -> str:
    shown = ", ".join(clean(i) for i in ids[:_IDS_SHOWN])
    return shown + (f" \u2026 ({len(ids)} entries)" if len(ids) > _IDS_SHOWN else "")


def _title(report: LintReport) -> str:
    where = f" at {clean(report.host)}" if report.host else ""
    checked = f"{entries(report.total)}{where}"
    if report.ok:
        return f"{SYMBOL['success']} no problems found in {checked}"
    counts = ", ".join(f"{n:,} {kind}" for kind, n in report.counts.items() if n)
    found = count(len(report.findings), "finding", "findings")
    return f"{SYMBOL['failure']} {found} in {checked}: {counts}"


def _finding_lines(finding: Finding) -> list[str]:
    return [
        f"  \u2022 {_ids(finding.entry_ids)}: {clean(finding.message)}",
        f"      fix: {clean(finding.fix)}",
    ]


def lint_text(report: LintReport, per_kind: int | None = None) -> str:
    """A title with the counts, then each kind's findings (the first ``per_kind`` when given),
    and the ids a duplicate cleanup would delete."""
    lines = [_title(report)]
    for kind, findings in report.by_kind().items():
        lines.append(f"{kind} ({len(findings)})")
        shown = findings if per_kind is None else findings[:per_kind]
        for finding in shown:
            lines += _finding_lines(finding)
        if len(shown) < len(findings):
            lines.append(f"  \u2026 and {len(findings) - len(shown)} more {kind} findings")
    duplicates = report.duplicate_ids
    if duplicates:
        lines.append(
            f"duplicate_ids: {entries(len(duplicates))} can go with nothing lost "
            "(each group keeps its lowest id)"
        )
    return "\n".join(lines)


def lint_pretty(report: LintReport) -> str:
    """What a notebook prints: the first findings of each kind."""
    return lint_text(report, per_kind=PRETTY_PER_KIND)


_CELL = 'style="padding:0 0.8em 0 0;vertical-align:top;text-align:left"'


def lint_html(report: LintReport) -> str:
    """The title, then one table row per finding (kind, entries, problem, fix), within
    ``HTML_ROWS`` rows and ``HTML_MAX_BYTES``."""
    rows: list[str] = []
    size = 0
    for finding in report.findings[:HTML_ROWS]:
        cells = (finding.kind, _ids(finding.entry_ids), clean(finding.message), clean(finding.fix))
        row = "<tr>" + "".join(f"<td {_CELL}>{escape(c)}</td>" for c in cells) + "</tr>"
        size += len(row.encode("utf-8"))
        if size > HTML_MAX_BYTES:
            break
        rows.append(row)
    head = "".join(f"<th {_CELL}>{h}</th>" for h in ("kind", "entries", "problem", "fix"))
    table = ""
    if rows:
        table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    more = ""
    if len(rows) < len(report.findings):
        rest = len(report.findings) - len(rows)
        more = f"<div>\u2026 and {rest} more (report.findings has them all)</div>"
    colour = COLOUR["success" if report.ok else "failure"]
    return (
        f'<div class="dict-magics-lint"><div style="color:{colour}"><b>'
        f"{escape(_title(report))}</b></div>{table}{more}</div>"
    )
