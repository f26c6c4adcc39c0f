"""What a purge will do, decided before anyone is asked: the plan every front end shows, with
the one rule for the typed "yes" (``accepts``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import Remedy
from ..settings import PURGE_WORD
from .text import Rendered, entries, remedy, shown


@dataclass(frozen=True)
class PurgePlan(Rendered):
    """Every entry of ``profile`` at ``host`` is about to go: ``count`` listed (``None``: no
    listing), kept at ``snapshot`` if any; ``word``: what to type (or the host)."""

    host: str
    profile: str
    count: int | None
    snapshot: str | None = None
    word: str = PURGE_WORD

    @property
    def undoable(self) -> bool:
        """A snapshot keeps what goes, so a restore puts it back."""
        return self.snapshot is not None

    @property
    def remedy(self) -> Remedy | None:
        """What the warning points at: the restore that undoes it, or the no-snapshot setting."""
        return Remedy.RESTORE if self.undoable else Remedy.NO_SNAPSHOT if self.count else None

    @property
    def question(self) -> str:
        return f"Type {self.word} (or {self.host}) to confirm, anything else cancels: "

    def accepts(self, answer: str) -> bool:
        """Only the exact word, or the exact host it will hit (never an empty answer)."""
        typed = answer.strip()
        return bool(typed) and typed in (self.word, self.host)

    _css = "confirm"

    def __str__(self) -> str:
        return purge_text(self)


def purge_text(plan: PurgePlan, names: Mapping[str, str] | None = None) -> str:
    """How many entries go, where, and whether a snapshot keeps them, in ``names``' words."""
    host, profile = shown(plan.host), shown(plan.profile)
    if plan.count is None:
        return (
            f"This deletes EVERY entry of the user dictionary of profile {profile!r} at {host} "
            "(how many is unknown: the dictionary could not be listed). It cannot be undone."
        )
    what = f"This deletes all {entries(plan.count)}"
    if plan.count == 0:
        what = "The listing shows no entries, yet this sends the delete-everything request"
    text = f"{what} on {host} (profile {profile!r}); "
    if plan.snapshot is not None:  # said before the question: the file goes if one cancels
        return text + (
            f"a snapshot is kept at {shown(plan.snapshot)} (removed if you cancel; "
            f"{remedy(names, Remedy.RESTORE)} puts them back)."
        )
    if plan.count == 0:
        return text + "there is nothing to keep in a snapshot."
    return text + (
        f"no snapshot is kept ({remedy(names, Remedy.NO_SNAPSHOT)}), so it cannot be undone."
    )
