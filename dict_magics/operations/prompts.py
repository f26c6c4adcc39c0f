"""How an operation asks the person in front of it, whatever the front end: a ``Prompter``
raises ``NoAnswer`` when nobody can answer (no stdin, a headless run), and the operation turns
that into one message that says what to do instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from ..errors import Remedy, UsageProblem

NOBODY_ASKED = "nobody was asked (no prompter was given)"
CONFIRM_WORD = "yes"
"""What a person types to let a sync's deletions, an undo's removals or a restore elsewhere go
ahead."""


class NoAnswer(Exception):
    """Nobody can answer this front end's prompts; ``reason`` says why, in words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Prompter(Protocol):
    """Questions an operation may ask; each raises ``NoAnswer`` when nobody can answer."""

    def ask(self, question: str) -> str:
        """An answer that may be shown as it is typed (a base URL)."""

    def ask_secret(self, question: str) -> str:
        """An answer that is never echoed (a key)."""

    def confirm(self, warning: object, question: str) -> str:
        """Show what is at stake, ask, and return what was typed: the operation judges it.
        ``warning`` is text, or a plan (a model) the front end renders in its own words."""


def confirm(
    prompter: Prompter | None, warning: str, action: str, *, refusing: str, declined: str
) -> None:
    """Show ``warning``, ask "Type yes to ``action``" and return only when ``yes`` was typed;
    else ``UsageProblem``: "refusing to ``refusing`` without a confirmation" when nobody can
    answer (``--yes`` skips the question), ``declined`` for any other answer."""
    question = f"Type {CONFIRM_WORD} to {action}, anything else cancels: "

    def unasked(why: str) -> str:
        return f"refusing to {refusing} without a confirmation, but {why}. Nothing was sent."

    if answer(prompter, warning, question, unasked, Remedy.YES).strip().lower() != CONFIRM_WORD:
        raise UsageProblem(declined)


def answer(
    prompter: Prompter | None,
    warning: object,
    question: str,
    unasked: Callable[[str], str],
    option: str | None,
) -> str:
    """What was typed at ``question`` after ``warning`` (text, or a plan the front end
    renders); ``UsageProblem(unasked(why))`` when nobody can answer."""
    asker = prompter or ScriptedPrompter(reason=NOBODY_ASKED)
    try:
        return asker.confirm(warning, question)
    except NoAnswer as exc:
        raise UsageProblem(unasked(exc.reason), option=option) from None


def named(entries: Sequence[Any], limit: int = 5) -> str:
    """The first ``limit`` entries as ``id (terms)``, and how many more, for a warning that
    says what a change would touch."""
    shown = ", ".join(f"{e.id} ({e.describe()})" for e in entries[:limit])
    more = f" and {len(entries) - limit} more" if len(entries) > limit else ""
    return f"{shown}{more}"


def unanswerable(prompter: object) -> str | None:
    """Why ``prompter`` can certainly not answer (said before anything is prepared or shown),
    or ``None``. A prompter may tell by an ``unanswerable()`` method; most cannot know."""
    check = getattr(prompter, "unanswerable", None)
    return check() if callable(check) else None


class ScriptedPrompter:
    """Answers given in advance, in order (the panel's typed word, a script, a test);
    ``NoAnswer(reason)`` once they run out. ``asked`` records every question and warning."""

    def __init__(self, answers: Iterable[str] = (), *, reason: str = "no answer was given"):
        self.answers = list(answers)
        self.reason = reason
        self.asked: list[tuple[str, str]] = []

    def _next(self, kind: str, question: str) -> str:
        self.asked.append((kind, question))
        if not self.answers:
            raise NoAnswer(self.reason)
        return self.answers.pop(0)

    def ask(self, question: str) -> str:
        return self._next("ask", question)

    def ask_secret(self, question: str) -> str:
        return self._next("ask_secret", question)

    def confirm(self, warning: object, question: str) -> str:
        self.asked.append(("warning", str(warning)))
        return self._next("confirm", question)

    def unanswerable(self) -> str | None:
        """The reason, once no answer is left."""
        return None if self.answers else self.reason
