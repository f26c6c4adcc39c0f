"""Text and HTML of a ``PurgePlan``: the warning said before the purge question.

The plan names what helps neutrally (``Remedy``); ``names`` gives a front end's words for it
(``%dict_restore``, ``dict-magics restore``, the panel's Undo). Without them the words are
neutral, so ``str(plan)`` reads right outside any front end. Host, profile and path are
escaped in HTML and cleaned of control characters in text.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from ..errors import Remedy
from ..models.purge import PurgePlan
from . import words
from .words import clean

__all__ = ["NEUTRAL", "purge_html", "purge_text"]

NEUTRAL: Mapping[str, str] = {
    Remedy.RESTORE: "a restore",
    Remedy.NO_SNAPSHOT: "snapshots are off",
}
"""The words for a plan's remedies when no front end gives its own."""


def _name(names: Mapping[str, str] | None, remedy: Remedy) -> str:
    return (names or {}).get(remedy) or NEUTRAL[remedy]


def purge_text(plan: PurgePlan, names: Mapping[str, str] | None = None) -> str:
    """How many entries go, where, and whether a snapshot keeps them (one paragraph)."""
    host, profile = clean(plan.host), clean(plan.profile)
    if plan.count is None:
        return (
            f"This deletes EVERY entry of the user dictionary of profile {profile!r} at {host} "
            "(how many is unknown: the dictionary could not be listed). It cannot be undone."
        )
    what = f"This deletes all {words.entries(plan.count)}"
    if plan.count == 0:
        what = "The listing shows no entries, yet this sends the delete-everything request"
    text = f"{what} on {host} (profile {profile!r}); "
    if plan.snapshot is not None:
        # Said before the question: the file is removed again if the person cancels.
        restore = _name(names, Remedy.RESTORE)
        return text + (
            f"a snapshot is kept at {clean(plan.snapshot)} (removed if you cancel; {restore} "
            "puts them back)."
        )
    if plan.count == 0:
        return text + "there is nothing to keep in a snapshot."
    return (
        text + f"no snapshot is kept ({_name(names, Remedy.NO_SNAPSHOT)}), so it cannot be undone."
    )


def purge_html(plan: PurgePlan, names: Mapping[str, str] | None = None, after: str = "") -> str:
    """The same as ``purge_text``, for a notebook or the panel (every value escaped);
    ``after``: HTML the caller adds inside the box (the panel's "type ... below")."""
    host, profile = escape(plan.host), escape(plan.profile)
    if plan.count is None:
        how_many = "EVERY entry"
    elif plan.count == 0:
        how_many = "every entry (the listing shows none)"
    else:
        how_many = f"all {words.entries(plan.count)}"
    if plan.snapshot is not None:
        keep = (
            f"A snapshot is kept at <code>{escape(plan.snapshot)}</code> (removed if you "
            f"cancel; {escape(_name(names, Remedy.RESTORE))} puts them back)."
        )
    elif plan.count is None:
        keep = "How many is unknown: the dictionary could not be listed. This cannot be undone."
    elif plan.count == 0:
        keep = "There is nothing to keep in a snapshot."
    else:
        keep = (
            f"No snapshot is kept ({escape(_name(names, Remedy.NO_SNAPSHOT))}): this cannot "
            "be undone."
        )
    return (
        f'<div class="dict-magics-confirm"><b>Delete {how_many}</b> of profile '
        f"<code>{profile}</code> on <b>{host}</b>? {keep}{after}</div>"
    )
