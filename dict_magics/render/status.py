"""Text and HTML of a profile's status: what ``%dict_status`` and ``dict-magics status`` show."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..profiles.status import ProfileStatus

__all__ = ["status_html", "status_text"]


def status_text(status: ProfileStatus) -> str:
    """The status as aligned plain-text lines."""
    rows = status.rows()
    width = max(len(label) for label, _ in rows) + 2
    head = "\u2713" if status.ready else "\u2717"
    lines = [f"{head} dict-magics profile {status.profile!r}"]
    lines += [f"  {label + ':':<{width}}{value}" for label, value in rows[1:]]
    return "\n".join(lines)


def status_html(status: ProfileStatus) -> str:
    """The status as a small table, every value escaped."""
    colour = "#1a7f37" if status.ready else "#cf222e"
    body = "".join(
        f'<tr><th style="text-align:left;padding-right:1em">{escape(label)}</th>'
        f'<td style="text-align:left{";color:#9a6700" if label == "warning" else ""}">'
        f"{escape(value)}</td></tr>"
        for label, value in status.rows()
    )
    return (
        f'<div class="dict-magics-status"><b style="color:{colour}">'
        f"{'&#10003;' if status.ready else '&#10007;'} dict-magics profile "
        f"{escape(repr(status.profile))}</b><table>{body}</table></div>"
    )
