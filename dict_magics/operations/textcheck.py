"""Which entries apply to each element of a text: one listing, the limit played locally; with
``translate`` the engine's answer (billed: asked first) is set beside the prediction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import Remedy, UsageProblem
from ..models.textcheck import check_unit, split_lines
from .context import OperationSettings, connect
from .listing import CACHE, check_language_filter
from .prompts import Prompter, confirm, unanswerable

if TYPE_CHECKING:
    from ..models import CheckReport
    from ..service.client import DictionaryClient


def check_text(
    settings: OperationSettings,
    text: str | Sequence[str],
    *,
    from_lang: str | None = None,
    to_lang: str | None = None,
    unit: str = "element",
    case_sensitive: bool = True,
    translate: bool = False,
    field_id: str = "1",
    contract_id: str | None = None,
    yes: bool = False,
    prompter: Prompter | None = None,
    client: DictionaryClient | None = None,
) -> CheckReport:
    """``EntryList.check`` of ``text`` (a string: its lines; a list: its items) on the
    listing; with ``translate``, also what the engine applied to each element. A text it cannot
    check or translate is a ``UsageProblem`` before any request."""
    from ..service.client import check_translatable

    check_unit(unit)
    texts = [text] if isinstance(text, str) else list(text)
    if not all(isinstance(t, str) for t in texts) or not any(t.strip() for t in texts):
        raise UsageProblem("no text to check: give a sentence or more.")
    if translate:
        if not (from_lang and to_lang):
            raise UsageProblem(
                "a translation needs both languages: name the one to translate from and the one "
                "to translate into. Nothing was sent."
            )
        elements = [t for t in split_lines(text) if t.strip()] if isinstance(text, str) else texts
        check_translatable(elements)
    with connect(settings, client) as (client, profile):
        listing = CACHE.current(client, profile)
        check_language_filter(listing, from_lang, to_lang)
        pair = {"from_lang": from_lang or None, "to_lang": to_lang or None}
        report = listing.check(text, unit=unit, case_sensitive=case_sensitive, **pair)
        if not translate:
            return report
        if not yes:
            count = len(report.elements)
            what = f"{count} element{'s' * (count != 1)} ({from_lang}\u2192{to_lang})"
            confirm_billed(prompter, what, client.host)
        translations = client.translate(
            report.elements,
            str(from_lang),
            str(to_lang),
            field_id=field_id,
            contract_id=contract_id,
        )
    return report.with_engine(translations, listing.entries)


def confirm_billed(prompter: Prompter | None, what: str, host: str) -> None:
    """Translation is billed: it goes ahead only once someone types yes (``--yes`` skips this);
    a front end that cannot ask says so before showing anything."""
    why = unanswerable(prompter)
    if why:
        raise UsageProblem(
            f"translation is billed, so it is asked first, but {why}. Nothing was sent.",
            option=Remedy.YES,
        )
    confirm(
        prompter,
        f"This sends {what} to the translation engine at {host}, which bills the translation.",
        "send it",
        refusing=f"send {what} to the translation engine",
        declined="Cancelled \u2014 nothing was sent.",
    )
