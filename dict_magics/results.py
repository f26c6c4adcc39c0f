"""Result objects: what a deletion did, reported truthfully and rendered by ``render``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["BatchResult", "DeleteResult"]


@dataclass(frozen=True)
class DeleteResult:
    """The outcome of one request: one entry, or the purge (``entry_id is None``).

    ``outcome_unknown`` is set when the request may have reached the service but no answer came
    back: the entry may or may not be gone, and we say so rather than guess.
    """

    status: Literal["success", "failure"]
    entry_id: str | None
    http_status: int | None = None
    reason: str | None = None
    outcome_unknown: bool = False
    attempts: int = 1
    elapsed: float = 0.0

    @property
    def ok(self) -> bool:
        """True only when the service answered ``status == "success"``."""
        return self.status == "success"

    @property
    def target(self) -> str:
        """What was deleted, in words: the id, or every entry."""
        return "every entry" if self.entry_id is None else f"entry {self.entry_id!r}"

    def __repr__(self) -> str:
        from .render import result_text

        return result_text(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(repr(self))

    def _repr_html_(self) -> str:
        from .render import result_html

        return result_html(self)


@dataclass(frozen=True)
class BatchResult:
    """The outcomes of several deletions, in the order the ids were given."""

    results: list[DeleteResult] = field(default_factory=list)

    @property
    def succeeded(self) -> int:
        """How many deletions the service confirmed."""
        return sum(1 for r in self.results if r.ok)

    @property
    def failed(self) -> int:
        """How many did not succeed (failures and unknown outcomes alike)."""
        return len(self.results) - self.succeeded

    @property
    def unknown(self) -> int:
        """How many may or may not have happened (no answer after sending)."""
        return sum(1 for r in self.results if r.outcome_unknown)

    @property
    def ok(self) -> bool:
        """True when every deletion succeeded (and there was at least one)."""
        return bool(self.results) and self.failed == 0

    @property
    def failures(self) -> list[DeleteResult]:
        """The results that did not succeed, in input order."""
        return [r for r in self.results if not r.ok]

    def __len__(self) -> int:
        return len(self.results)

    def __repr__(self) -> str:
        from .render import batch_text

        return batch_text(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(repr(self))

    def _repr_html_(self) -> str:
        from .render import batch_html

        return batch_html(self)
