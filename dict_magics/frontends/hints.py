"""Each front end's words for what would help: the commands, flags and buttons it has.

Lower layers name what helps neutrally (``errors.Remedy``, as ``exc.option`` on an error or
``.option`` on a ``Notice`` warning) and never write ``%dict_restore`` or ``--no-snapshot``;
a plan (``PurgePlan``) names its remedy the same way. Here each front end says it its own way:
the magics ``%dict_restore``, the command line ``dict-magics restore``, the panel its Undo.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import Remedy

__all__ = ["CLI", "MAGIC", "PANEL", "Words"]

_YES = "Add -y (--yes) if you mean it."
_OVERWRITE = "Choose another name, or add --force to replace it."
_SKIP_INVALID = "Or add --skip-invalid to apply the valid rows only."
_PAIR = "Give --pair FROM:TO, e.g. --pair en:de."
_FORMAT = "Rename it, or give --format (csv, tsv, xlsx or tbx)."
_QUIET = "(--no-snapshot goes ahead without this warning.)"
_DELETE_MISSING = "run the sync again with --delete-missing"
_SHEET = "Name the sheet to read with --sheet NAME."


@dataclass(frozen=True)
class Words:
    """One front end's words: ``names`` for a remedy named inside a sentence (a plan's
    warning), ``hints`` for the sentence that follows an error or warning naming it
    (``{profile}`` is filled in)."""

    names: Mapping[str, str]
    hints: Mapping[str, str]

    def hint(self, option: str | None, profile: str | None = None) -> str | None:
        """The sentence for ``option``, or ``None`` when this front end has nothing for it."""
        template = self.hints.get(option or "")
        if template is None:
            return None
        return template.format(profile=profile or "default")

    def worded(self, said: BaseException | str) -> str:
        """An error's or warning's text, followed by this front end's hint when it names one."""
        text = str(said)
        hint = self.hint(getattr(said, "option", None), getattr(said, "profile", None))
        if not hint:
            return text
        text = text.rstrip()
        return f"{text} {hint}" if text.endswith((".", "!", "?")) else f"{text}. {hint}"

    def text(self, shown: Any) -> str:
        """What a prompter shows before a question: a plan in these words, else the text."""
        from ..models.purge import PurgePlan

        if isinstance(shown, PurgePlan):
            from ..render.purge import purge_text

            return purge_text(shown, self.names)
        return self.worded(shown)


MAGIC = Words(
    names={
        Remedy.RESTORE: "%dict_restore",
        Remedy.NO_SNAPSHOT: "--no-snapshot or %config DictMagics.snapshots = False",
        Remedy.DELETE_MISSING: _DELETE_MISSING,
        Remedy.SHEET: "name it with --sheet NAME",
    },
    hints={
        Remedy.LOGIN: "To log in: %dict_login -p {profile}",
        Remedy.RELOGIN: "Run %dict_logout -p {profile}, then %dict_login -p {profile} again.",
        Remedy.RESTORE: "%dict_restore puts them back.",
        Remedy.SNAPSHOTS: "%dict_snapshots lists every snapshot kept.",
        Remedy.PURGE: "Use %dict_purge if you mean to delete every entry.",
        Remedy.NO_SNAPSHOT: (
            "With --no-snapshot (or %config DictMagics.snapshots = False) it goes ahead "
            "without a copy."
        ),
        Remedy.QUIET_NO_COPY: _QUIET,
        Remedy.WORKERS: "Set -w/--workers (or %config DictMagics.workers) within that range.",
        Remedy.MAX_RETRIES: "Set %config DictMagics.max_retries within that range.",
        Remedy.TIMEOUT: "Set %config DictMagics.timeout to a number of seconds.",
        Remedy.PAIR: _PAIR,
        Remedy.FORMAT: _FORMAT,
        Remedy.YES: _YES,
        Remedy.OVERWRITE: _OVERWRITE,
        Remedy.SKIP_INVALID: _SKIP_INVALID,
        Remedy.SHEET: _SHEET,
    },
)
"""The magics' words: the ``%dict_*`` magics, their flags and ``%config DictMagics``."""

CLI = Words(
    names={
        Remedy.RESTORE: "`dict-magics restore`",
        Remedy.NO_SNAPSHOT: "--no-snapshot",
        Remedy.DELETE_MISSING: _DELETE_MISSING,
        Remedy.SHEET: "name it with --sheet NAME",
    },
    hints={
        Remedy.LOGIN: "To log in: `dict-magics login --profile {profile}`.",
        Remedy.RELOGIN: "Run `dict-magics logout --profile {profile}` and log in again.",
        Remedy.RESTORE: "`dict-magics restore` puts them back.",
        Remedy.SNAPSHOTS: "`dict-magics snapshots` lists every snapshot kept.",
        Remedy.PURGE: "Use `dict-magics purge` if you mean to delete every entry.",
        Remedy.NO_SNAPSHOT: "With --no-snapshot it goes ahead without a copy.",
        Remedy.QUIET_NO_COPY: _QUIET,
        Remedy.WORKERS: "Give -w/--workers a number within that range.",
        Remedy.MAX_RETRIES: "Give --max-retries a number within that range.",
        Remedy.TIMEOUT: "Give --timeout a number of seconds.",
        Remedy.PAIR: _PAIR,
        Remedy.FORMAT: _FORMAT,
        Remedy.YES: _YES,
        Remedy.OVERWRITE: _OVERWRITE,
        Remedy.SKIP_INVALID: _SKIP_INVALID,
        Remedy.SHEET: _SHEET,
    },
)
"""The command line's words: ``dict-magics <subcommand>`` and its flags."""

PANEL = Words(
    names={
        Remedy.RESTORE: "Undo",
        Remedy.NO_SNAPSHOT: "snapshots are off",
        Remedy.DELETE_MISSING: (
            "plan again with \u201calso delete entries of the file's language pairs that it "
            "lacks\u201d ticked"
        ),
        Remedy.SHEET: "save the workbook with that sheet selected and plan again",
    },
    hints={
        Remedy.LOGIN: "To log in: %dict_login -p {profile} in a cell, then a new panel.",
        Remedy.RELOGIN: ("Run %dict_logout -p {profile}, then %dict_login -p {profile} in a cell."),
        Remedy.RESTORE: "Undo (or Restore\u2026) puts them back.",
        Remedy.SNAPSHOTS: "The Snapshot list beside Restore\u2026 holds every snapshot kept.",
        Remedy.PURGE: "Use Delete all\u2026 if you mean to delete every entry.",
        Remedy.NO_SNAPSHOT: (
            "With %config DictMagics.snapshots = False (then a new panel) it goes ahead "
            "without a copy."
        ),
        Remedy.WORKERS: "Set %config DictMagics.workers within that range.",
        Remedy.MAX_RETRIES: "Set %config DictMagics.max_retries within that range.",
        Remedy.TIMEOUT: "Set %config DictMagics.timeout to a number of seconds.",
        Remedy.PAIR: "Fill in Pair, e.g. en:de.",
        Remedy.FORMAT: "Rename it to end in .csv, .tsv, .xlsx or .tbx.",
        Remedy.SKIP_INVALID: 'Or tick "skip invalid rows" to apply the valid rows only.',
        Remedy.SHEET: "Save the workbook with the sheet to read selected, and plan again.",
        Remedy.QUIET_NO_COPY: (
            "(%config DictMagics.snapshots = False, then a new panel, goes ahead without this "
            "warning.)"
        ),
    },
)
"""The panel's words: its buttons, and the magics for what it has no button for."""
