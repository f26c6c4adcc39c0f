"""What a purge will do, decided before anyone is asked: the plan every front end shows.

``operations/purge.py`` builds it from the listing just taken (how many entries go, whether a
snapshot keeps them and where, the word that confirms); the magics, the command line and the
panel only render it (``render/purge.py``, in their own words for the commands it names) and
hand the typed answer to ``accepts``. terraform's plan/apply: the change is shown before it is
made, and the rule for "yes" is stated once.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import Remedy
from ..settings import PURGE_WORD
from .display import Displayed

__all__ = ["PurgePlan"]


@dataclass(frozen=True)
class PurgePlan(Displayed):
    """Every entry of ``profile`` at ``host`` is about to go.

    ``count``: the entries the listing just taken holds (a row it repeats counted once), or
    ``None`` when the service cannot list them. ``snapshot``: where the copy is kept (the file,
    or before it is written the folder it goes in), ``None`` when none is. ``word``: what a
    person types to confirm (the exact host counts too, surrounding spaces aside).
    """

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
        """What the warning points at: the restore that undoes it, the setting that chose no
        copy (entries there, no snapshot), or nothing (nothing listed, or no listing at all)."""
        if self.undoable:
            return Remedy.RESTORE
        if self.count:
            return Remedy.NO_SNAPSHOT
        return None

    @property
    def question(self) -> str:
        """The prompt that asks for the confirmation."""
        return f"Type {self.word} (or {self.host}) to confirm, anything else cancels: "

    def accepts(self, answer: str) -> bool:
        """A purge goes ahead only on the exact word, or the exact host it will hit (never on
        an empty answer, whatever the plan holds)."""
        typed = answer.strip()
        return bool(typed) and typed in (self.word, self.host)

    def __repr__(self) -> str:
        return (
            f"PurgePlan(host={self.host!r}, profile={self.profile!r}, count={self.count!r}, "
            f"snapshot={self.snapshot!r})"
        )
