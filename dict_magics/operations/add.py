"""Add one entry: terms checked, one POST, then one listing names the new id (the service does
not return it) and settles a lost answer, so the request is never sent twice. An entry whose
four terms are already listed is not added again (``NoChange``) unless ``duplicate``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import InvalidEntryError
from ..models import Entry
from ..models.terms import entry_problems
from ..models.text import named_ids
from ..service.client import RequestInterrupted
from .audit import AuditLog
from .context import CACHE, OperationSettings, Warn, connect, listed_after, say
from .settle import name_added, settle_adds

if TYPE_CHECKING:
    from ..models import AddResult, ChangePreview, NoChange
    from ..service.client import DictionaryClient


def check_terms(entry: Entry) -> None:
    """``InvalidEntryError`` (one line, nothing sent) when the service would refuse ``entry``."""
    problems = entry_problems(*entry.terms)
    if problems:
        why = "; ".join(p.message for p in problems)
        raise InvalidEntryError(f"{why}. Nothing was sent.")


def add(
    settings: OperationSettings,
    from_lang: str,
    from_text: str,
    to_lang: str,
    to_text: str,
    *,
    dry_run: bool = False,
    duplicate: bool = False,
    client: DictionaryClient | None = None,
    warn: Warn = None,
) -> AddResult | ChangePreview | NoChange:
    """Add the entry ``from_text`` (``from_lang``) -> ``to_text`` (``to_lang``); the result's
    ``entry.id`` is the new id when a listing shows it. An entry with the same four terms is
    not sent again (a ``NoChange`` names it) unless ``duplicate`` (a person confirmed it)."""
    entry = Entry("", from_lang, from_text, to_lang, to_text)
    check_terms(entry)
    with connect(settings, client) as (client, profile):
        before = list(CACHE.fetch(client, profile).entries)
        alongside = [e for e in before if e.terms[:3] == entry.terms[:3]]  # the same source
        twins = [e for e in alongside if e.to_text == to_text]
        if twins and not duplicate:
            from ..models import NoChange

            return NoChange("add", client.host, profile, twins[0], twins)
        if dry_run:
            from ..models import ChangePreview

            return ChangePreview(
                "add", client.host, profile, entry, None, alongside, listing=before
            )
        others = [e.id for e in alongside if e.to_text != to_text]
        pair = f"{from_text!r} ({from_lang}\u2192{to_lang})"
        for ids, verb, what, makes in (
            (
                others,
                "translate",
                f"{pair} to another term",
                "conflict (an update changes an entry in place)",
            ),
            ([e.id for e in twins], "hold", "these four terms", "duplicate"),
        ):
            if ids:
                verb += "s" if len(ids) == 1 else ""
                say(
                    warn, f"{named_ids(ids)} already {verb} {what}; adding this one makes a {makes}"
                )
        with AuditLog(
            profile=profile, host=client.host, operation="add", snapshot=None, warn=warn
        ) as trail:
            try:
                result = client.add_entry(entry, audit=trail)
            except RequestInterrupted as interrupted:  # the answer came: audited, then passed on
                CACHE.invalidate(client, profile)
                trail.record(interrupted.result)
                raise interrupted.passed_on(interrupted.result) from None
            CACHE.invalidate(client, profile)
            listing, stopped = listed_after(client, profile)
            if listing is not None:
                after = list(listing.entries)
                if result.outcome_unknown:
                    (result,) = settle_adds([result], before, after)
                if result.ok:  # its new id, when exactly one new entry has its terms
                    result = replace(result, entry=name_added([result.entry], before, after)[0])
            trail.record(result)
            if stopped:  # Ctrl-C during the listing after: audited above, shown by the caller
                raise RequestInterrupted(result)
    return result
