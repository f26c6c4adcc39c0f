"""What the panel is about to do or can undo: plain records shared by its modules.

``Armed`` is what Confirm will do, ``Undo`` what the Undo button puts back, ``SyncRequest`` an
uploaded glossary file and its options. ``show`` hides or shows a widget (one message, and only
when it changes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import ipywidgets as widgets

if TYPE_CHECKING:
    from ..models import Entry, PurgePlan, SnapshotInfo

__all__ = ["Armed", "SyncRequest", "Undo", "show"]


def show(widget: widgets.Widget, visible: bool) -> None:
    display = "" if visible else "none"
    if widget.layout.display != display:
        widget.layout.display = display


@dataclass(frozen=True)
class Armed:
    """What Confirm will do: ``delete`` ids, ``purge`` everything, ``restore`` a snapshot,
    ``update`` entry ``old`` to ``new``, ``add`` entry ``new``, or ``sync`` a file."""

    kind: Literal["delete", "purge", "restore", "update", "add", "sync"]
    ids: tuple[str, ...] = ()
    snapshot: SnapshotInfo | None = None
    old: Entry | None = None
    new: Entry | None = None
    sync: SyncRequest | None = None
    plan: PurgePlan | None = None
    """The purge's plan (what it deletes, the word that confirms), for ``purge``."""
    duplicate: bool = False
    """An add whose confirmation named an entry with the same terms: the copy is meant."""


@dataclass(frozen=True)
class SyncRequest:
    """A glossary file the user uploaded (saved under ``path``) and how to sync it."""

    path: str
    name: str
    pair: str | None
    delete_missing: bool
    skip_invalid: bool
    changes: int


@dataclass(frozen=True)
class Undo:
    """The snapshot the last change left, and what it took, for the Undo button: a restore of
    it re-adds what a deletion took, and puts an edited entry's old terms back under its id."""

    snapshot: str
    what: str
