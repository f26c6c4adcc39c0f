"""Delete every entry, after the one confirmation every front end asks for.

The policy lives here and nowhere else: the warning names the profile and host at stake, and
only the exact word ``delete-all`` or the exact host (surrounding spaces aside) counts as yes.
The magics, the command line and the panel all ask through it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import UsageProblem
from ..settings import PURGE_WORD
from . import session
from .context import OperationSettings, finish
from .prompts import NoAnswer, Prompter

if TYPE_CHECKING:
    from ..service.client import DictionaryClient
    from ..service.models import DeleteResult

__all__ = ["confirm_purge", "purge", "purge_confirmed", "purge_question", "purge_warning"]


def purge_warning(profile: str, host: str) -> str:
    """What is at stake, said before the question."""
    return (
        f"This deletes EVERY entry of the user dictionary of profile {profile!r} at {host} "
        "(how many is unknown: the service cannot count them). It cannot be undone."
    )


def purge_question(host: str) -> str:
    """The prompt that asks for the confirmation."""
    return f"Type {PURGE_WORD} (or {host}) to confirm, anything else cancels: "


def purge_confirmed(answer: str, host: str) -> bool:
    """A purge goes ahead only on the exact word, or the exact host it will hit."""
    return answer.strip() in (PURGE_WORD, host)


def confirm_purge(prompter: Prompter, profile: str, host: str) -> None:
    """Ask; return only when the answer confirms, else raise ``UsageProblem`` (nothing sent)."""
    try:
        answer = prompter.confirm(purge_warning(profile, host), purge_question(host))
    except NoAnswer as exc:
        raise UsageProblem(
            f"refusing to delete EVERY entry of profile {profile!r} at {host}: a typed "
            f"confirmation is needed, but {exc.reason}. Nothing was sent. "
            "Re-run with --yes if you mean it."
        ) from None
    if not purge_confirmed(answer, host):
        raise UsageProblem(
            f"purge not confirmed: nothing was deleted (profile {profile!r}, {host})."
        )


def purge(
    settings: OperationSettings,
    prompter: Prompter,
    *,
    yes: bool = False,
    client: DictionaryClient | None = None,
) -> DeleteResult:
    """Delete every entry once confirmed (``yes`` skips the question, for scripts).

    Raises ``DictMagicsError`` (no credentials, not confirmed, nobody to ask) before any
    request, and ``DeletionFailedError`` for a failure only if ``settings.raise_on_failure``.
    """
    with session.connect(settings, client) as (client, profile):
        if not yes:
            confirm_purge(prompter, profile, client.host)
        result = client.delete_all()
    return finish(result, settings)
