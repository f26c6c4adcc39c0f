"""Every command, declared once: the magics, the command line and docs/reference.md come from here.

In a help text a command between backticks (```restore```) is spelled as each front end spells
it; ``Hints`` words an ``errors.Remedy`` for each front end."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .. import settings as limits

__all__ = ["CLI", "COMMANDS", "MAGIC", "PANEL", "Arg", "Command", "Hints", "markdown", "spelled"]

PROG = "dict-magics"
SNAPSHOTS_SHOWN = 20


@dataclass(frozen=True)
class Arg:
    """One argument: flags (or a positional name), help, argparse keywords; ``only``: "magic"
    or "cli" when one front end lacks it."""

    flags: tuple[str, ...]
    help: str
    only: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def in_front(self, front: str) -> bool:
        return self.only in (None, front)


def arg(*flags: str, help: str, only: str | None = None, **options: Any) -> Arg:
    return Arg(flags, help, only, options)


@dataclass(frozen=True)
class Command:
    """One command as both front ends have it (``only``: "magic" or "cli" for one of them)."""

    name: str
    summary: str
    help: str
    args: tuple[Arg, ...] = ()
    examples: tuple[str, ...] = ()
    exits: str = ""
    json: str = ""
    only: str | None = None
    run: Callable[[argparse.Namespace, Context], Any] | None = None
    """Calls the operation with the parsed arguments; ``None``: each front end has its own."""

    @property
    def title(self) -> str:
        """The summary as the first sentence of the command's help."""
        return f"{self.summary[0].upper()}{self.summary[1:]}."

    def description(self, front: str) -> str:
        """The title and help (on the command line, the exit codes too) as ``front`` spells
        them, filled for a terminal."""
        import textwrap

        exits = f"exit codes: {self.exits}." if self.exits and front == "cli" else ""
        paragraphs = (self.title, spelled(self.help, front), exits)
        return "\n\n".join(textwrap.fill(p, 88) for p in paragraphs if p)

    def examples_for(self, front: str) -> str:
        """The examples of ``front``, one an indented line (a magic's name one: ``%dict_``)."""
        mine = [line for line in self.examples if ("%dict_" in line) == (front == "magic")]
        return "".join(f"\n  {line}" for line in mine)

    def add_arguments(self, parser: argparse.ArgumentParser, front: str) -> None:
        """The arguments ``front`` has, their help as it spells it; on the command line
        ``--profile`` and ``--json`` may come before the command too."""
        for a in self.args:
            if a.in_front(front):
                options = dict(a.options)
                if front == "cli" and a.flags[-1] in ("--profile", "--json"):
                    options["default"] = argparse.SUPPRESS
                words = spelled(a.help, front).replace("%", "%%")  # argparse formats help
                parser.add_argument(*a.flags, help=words, **options)


@dataclass(frozen=True)
class Context:
    """What a front end hands a command's ``run``: its settings, how it asks questions, shows
    progress and says warnings, and the corpus it has configured (``--corpus`` overrides)."""

    settings: Any
    prompter: Any = None
    progress: Any = None
    warn: Callable[[str], None] | None = None
    corpus: str | None = None


CORPUS_ENV = "DICT_MAGICS_CORPUS"


def limit_unit(settings: Any) -> str:
    """The unit the limit of 3 counts by when ``--unit`` is not given, for ``check`` and for an
    impact: what ``probe --translate`` found for the profile's service, else one element (a
    line), as the vendor's worked example shows."""
    from ..operations.probe import kept

    found = kept(settings)
    return found.limit_unit if found is not None and found.limit_unit else "element"


def configured_corpus(configured: str | None = None) -> str | None:
    """The corpus a front end uses without ``--corpus``: its setting, else $DICT_MAGICS_CORPUS."""
    return configured or os.environ.get(CORPUS_ENV) or None


def _corpus(a: argparse.Namespace, c: Context, applies: bool) -> list[str] | None:
    """The corpus lines, read before anything is sent. ``--corpus`` where no impact can be shown
    (a change that is not a dry run) is refused; a configured corpus is then not used."""
    from ..errors import UsageProblem
    from ..models.impact import read_corpus

    if a.corpus and not applies:
        raise UsageProblem(
            "--corpus shows what a change would do to your texts before it is made: add "
            "--dry-run. Nothing was sent."
        )
    path = (a.corpus or configured_corpus(c.corpus)) if applies else None
    return read_corpus(path) if path else None


def _measured(result: Any, lines: list[str] | None, c: Context) -> Any:
    """``result`` holding its impact on ``lines`` (a sync's after it is applied: its plan's).
    A change with nothing to do has none; without a listing, a warning says it is unavailable."""
    from ..errors import UsageProblem
    from ..models import SyncResult
    from ..models.impact import ImpactMixin

    if lines is not None and isinstance(result, SyncResult):
        return replace(result, plan=_measured(result.plan, lines, c))
    if lines is None or not isinstance(result, ImpactMixin):
        return result
    try:
        return result.with_impact(lines, unit=limit_unit(c.settings))
    except UsageProblem:  # a dry run that holds no listing: the service offers none
        if c.warn is not None:
            c.warn("impact unavailable: the service offers no listing to measure it against.")
        return result


def _given(a: argparse.Namespace, *names: str) -> dict[str, Any]:
    return {name: getattr(a, name) for name in names}


def _list(a: argparse.Namespace, c: Context) -> Any:
    from ..operations.listing import list_entries

    return list_entries(c.settings, **_given(a, "match", "from_lang", "to_lang"))


def _delete(a: argparse.Namespace, c: Context) -> Any:
    from ..operations.delete import delete

    lines = _corpus(a, c, a.dry_run)
    result = delete(c.settings, a.ids, progress=c.progress, dry_run=a.dry_run, warn=c.warn)
    return _measured(result, lines, c)


def _purge(a: argparse.Namespace, c: Context) -> Any:
    from ..operations.purge import purge

    return purge(c.settings, c.prompter, yes=a.yes, dry_run=a.dry_run, warn=c.warn)


def _restore(a: argparse.Namespace, c: Context) -> Any:
    from ..operations.restore import restore

    asks = {"prompter": c.prompter, "progress": c.progress, "warn": c.warn}
    return restore(c.settings, a.snapshot, dry_run=a.dry_run, yes=a.yes, **asks)


def _add(a: argparse.Namespace, c: Context) -> Any:
    from ..operations.add import add

    lines = _corpus(a, c, a.dry_run)
    terms = (a.from_lang, a.from_text, a.to_lang, a.to_text)
    return _measured(add(c.settings, *terms, dry_run=a.dry_run, warn=c.warn), lines, c)


def _update(a: argparse.Namespace, c: Context) -> Any:
    from ..operations.update import update

    lines = _corpus(a, c, a.dry_run)
    terms = _given(a, "from_lang", "from_text", "to_lang", "to_text", "dry_run")
    return _measured(update(c.settings, a.id, **terms, warn=c.warn), lines, c)


def _sync(a: argparse.Namespace, c: Context) -> Any:
    from ..operations.sync import sync

    if a.apply and a.dry_run:
        from ..errors import UsageProblem

        raise UsageProblem("--apply and --dry-run contradict each other: nothing was sent.")
    lines = _corpus(a, c, True)
    given = _given(a, "apply", "delete_missing", "pair", "format", "sheet", "skip_invalid", "yes")
    asks = {"prompter": c.prompter, "progress": c.progress, "warn": c.warn}
    return _measured(sync(c.settings, a.file, **given, **asks), lines, c)


def _export(a: argparse.Namespace, c: Context) -> Any:
    from ..operations.export import export

    return export(c.settings, a.file, format=a.format, overwrite=a.force)


def _lint(a: argparse.Namespace, c: Context) -> Any:
    from ..operations.lint import lint

    return lint(c.settings)


def _check(a: argparse.Namespace, c: Context) -> Any:
    from ..operations.probe import kept
    from ..operations.textcheck import check_text

    found = kept(c.settings)
    unit = a.unit or (found is not None and found.limit_unit) or "element"
    case = found is None or found.case_sensitive is not False
    given = _given(a, "from_lang", "to_lang", "translate", "field_id", "contract_id", "yes")
    return check_text(
        c.settings, a.text, unit=unit, case_sensitive=case, prompter=c.prompter, **given
    )


def _probe(a: argparse.Namespace, c: Context) -> Any:
    from ..operations.probe import probe

    return probe(c.settings, translate=a.translate, yes=a.yes, prompter=c.prompter, warn=c.warn)


def _snapshots(a: argparse.Namespace, c: Context) -> Any:
    from ..operations.history import snapshots

    return snapshots(profile=a.profile)


def _log(a: argparse.Namespace, c: Context) -> Any:
    from ..operations.history import audit

    return audit(a.n)


def positive_seconds(text: str) -> float:
    """``--progress-every``: a number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not {text!r}")
    return value


def workers(what: str) -> Arg:
    span = limits.span(limits.MIN_WORKERS, limits.MAX_WORKERS)
    return arg("-w", "--workers", type=int, help=f"{what} ({span}; default {limits.WORKERS})")


# fmt: off
FORMATS = ("csv", "tsv", "xlsx", "tbx")
UNITS = ("element", "request", "sentence")  # as models.textcheck.UNITS (not imported: heavy)
PROFILE = arg("-p", "--profile", help="credential profile (default: the current one)")
JSON = arg("--json", only="cli", action="store_true", help="print one JSON document on stdout")
FORMAT = arg("--format", choices=FORMATS, help="file format (default: from the file's name)")
FROM_LANG = arg("--from-lang", metavar="L", help="only entries from language L (e.g. ja)")
TO_LANG = arg("--to-lang", metavar="L", help="only entries into language L (e.g. en)")
_CORPUS = ("sample texts (UTF-8, one element a line): show which lines the change changes, "
           "before \u2192 after (a change needs --dry-run; default: {})")
CORPUS = (
    arg("--corpus", only="magic", metavar="FILE",
        help=_CORPUS.format("%config DictMagics.corpus, else $DICT_MAGICS_CORPUS")),
    arg("--corpus", only="cli", metavar="FILE", help=_CORPUS.format("$DICT_MAGICS_CORPUS")),
)
NO_SNAPSHOT = arg("--no-snapshot", action="store_true",
                  help="keep no snapshot first (what goes then cannot be restored)")
NETWORK = (
    arg("--base-url", only="cli", metavar="URL", help="use this base URL instead of the profile's"),
    arg("--auth", only="cli", choices=("signature", "token"),
        help="sign every request, or send one token as Bearer (default: $DICT_MAGICS_AUTH, "
        "else signature)"),
    arg("--timeout", only="cli", type=float, metavar="SECONDS",
        help=f"seconds to connect, and for each answer (default {limits.TIMEOUT:g})"),
    arg("--max-retries", only="cli", type=int, metavar="N",
        help="re-sends of a request that surely was not acted on "
        f"({limits.span(limits.MIN_RETRIES, limits.MAX_RETRIES)}, default {limits.RETRIES})"),
)
PROGRESS = (
    arg("-q", "--quiet", only="cli", action="store_true", help="no progress on stderr"),
    arg("--progress-every", only="cli", type=positive_seconds, default=5.0, metavar="SECONDS",
        help="where stderr is no terminal, a progress line every SECONDS (default 5)"),
)
_ENTRY = '{"id", "fromLang", "fromText", "toLang", "toText"}'
_BATCH = (
    '{"results": [{"status", "ok", "outcome", "entry_id", "entry", "http_status", "reason", '
    '"cause", "code", "vendor_message", "outcome_unknown", "verified", "attempts", "elapsed", '
    '"snapshot"}], "ok", "succeeded", "failed", "unknown", "deleted", "absent", "interrupted", '
    '"snapshot", "warnings"}'
)
_DRY = '{"dry_run": true, "ok", "operation", "host", "profile", "listed", "entries", "missing"}'
_CHANGE = '"http_status", "reason", "cause", "verified", "attempts"'
_IMPACT = ('with a corpus, also "impact": {"lines", "changed": [{"line", "text", "before": '
           f'[{_ENTRY}], "after"}}]}}')
_PREVIEW = '{"dry_run": true, "ok", "operation", "host", "profile", "old", "new", "alongside"}'

_COMMANDS = (
    Command(
        "login", "store a profile (base URL, access key, secret key) in the OS keyring",
        "What the options do not give is asked for. The secret key is never an option: it is "
        "typed at a hidden prompt; where stdin is not a terminal, the secret key is read from the "
        "first line of stdin.",
        (
            arg("-p", "--profile", help="profile to store (default: the current one)"),
            arg("--base-url", metavar="URL",
                help="service base URL (https; plain http only for loopback)"),
            arg("--access-key", metavar="KEY", help="access key (asked for when not given)"),
            arg("--check", only="magic", action=argparse.BooleanOptionalAction,
                help="check the keys with one listing (--no-check: neither ask nor check; "
                "default: ask)"),
            JSON,
        ),
        ("%dict_login", "%dict_login -p work --base-url https://api.example.com",
         "%dict_login -p work --no-check", f"{PROG} login --base-url https://api.example.com",
         f'printf %s "$SECRET" | {PROG} login -p ci --base-url https://x.example --access-key AK1'),
        json='{"profile", "base_url", "access_key" (masked), "keyring_backend"}',
    ),
    Command(
        "logout", "remove a profile (base URL, access key, secret key) from the OS keyring",
        "Nothing is sent.",
        (arg("-p", "--profile", help="profile to remove (default: the current one)"), JSON),
        ("%dict_logout", "%dict_logout -p work", f"{PROG} logout", f"{PROG} logout -p work"),
        json='{"profile", "removed": [item]}',
    ),
    Command(
        "status", "show where requests would go and with which credentials (never the secret)",
        "The profile, base URL, masked access key and where the secret key is kept (keyring "
        "backend or environment variable). Sends nothing, unless --check.",
        (
            arg("-p", "--profile", help="profile to describe (default: the current one)"),
            arg("--check", only="cli", action="store_true",
                help="send one read-only request (the listing) to prove the credentials work"),
            JSON, *NETWORK,
        ),
        ("%dict_status", "%dict_status -p work", f"{PROG} status --check",
         f"{PROG} status -p work --json"),
        exits="2 when the credentials are incomplete; with --check, 0 when they work, 1 when "
        "they are refused or cannot be checked",
        json='{"profile", "ready", "base_url", "access_key", "sources", "secret_key", '
        '"keyring_backend", "keyring_available", "keyring_plaintext", "problem", "warnings", '
        '"probe", "pace", "check": {"works", "message", "http_status", "entries"}}',
    ),
    Command(
        "profiles", "list the profiles stored in the keyring (never a secret)",
        "Name, base URL and masked access key of each profile `login` stored. Exit code 0, also "
        "with none stored or no keyring at all.",
        (JSON,),
        (f"{PROG} profiles", f"{PROG} profiles --json"),
        json='{"profiles": [{"name", "base_url", "access_key", "complete", "missing", '
        '"default"}], "keyring_backend", "keyring_available"}',
        only="cli",
    ),
    Command(
        "list", "list the dictionary's entries, filtered",
        "One read-only request; --match looks in both terms, ignoring case. In a notebook the "
        "EntryList feeds the other magics and pandas: {found.ids}, found.to_pandas().",
        (
            PROFILE,
            arg("--match", metavar="TEXT", help="only entries whose terms contain TEXT"),
            FROM_LANG, TO_LANG,
            arg("--csv", only="cli", action="store_true",
                help="print CSV (id,fromLang,fromText,toLang,toText); with a UTF-8 BOM only "
                "into a new file (> out.csv, for Excel)"),
            JSON, *NETWORK,
        ),
        ("%dict_list", "%dict_list --from-lang ja --to-lang en",
         "found = %dict_list --match invoice", f"{PROG} list --match friday",
         f"{PROG} list --from-lang ja --to-lang en --csv > entries.csv",
         f"{PROG} list --json | jq -r '.entries[].id'"),
        exits="1 when the service offers no listing or cannot give it",
        json=f'{{"entries": [{_ENTRY}], "total"}}',
        run=_list,
    ),
    Command(
        "delete", "delete one entry or several (a snapshot of them first)",
        "Every id is checked before the first request. The entries are kept in a snapshot first "
        "(`restore` puts them back). An id not in the dictionary is absent: nothing to do, no "
        "failure. In a notebook a list, {found.ids} or a pandas column {df['id']} gives the ids.",
        (
            PROFILE,
            arg("ids", nargs="*", metavar="ID",
                help="entry ids, separated by spaces and/or commas (in a magic, {expr} and "
                "$name expand, and a collection expands to its ids)"),
            arg("-f", "--file", only="cli", metavar="PATH",
                help="also read ids from PATH ('-' for stdin), one a line; blank lines and "
                "# comments are skipped"),
            arg("--retry-failed", only="cli", metavar="RESULTS",
                help="also delete the ids a saved --json or --jsonl result did not surely "
                "delete (outcome failure or unknown)"),
            JSON,
            arg("--jsonl", only="cli", action="store_true",
                help='one JSON line per result as it arrives, then a {"summary": ...} line'),
            workers("requests in flight"),
            arg("--dry-run", action="store_true",
                help="show what would be deleted (terms, ids not there); only lists"),
            NO_SNAPSHOT, *CORPUS, *PROGRESS, *NETWORK,
        ),
        ("%dict_delete 17", "%dict_delete 17 18,19 --dry-run --corpus texts.txt",
         "%dict_delete {found.ids}",
         f"{PROG} delete 42 43,44", f"{PROG} delete --file ids.txt --jsonl > results.jsonl",
         f"{PROG} delete --retry-failed results.jsonl"),
        exits="0 when every id is deleted or absent (not in the dictionary: nothing sent); 1 "
        "when a deletion failed or its outcome is unknown",
        json=f'{_BATCH}; --jsonl: one result a line, then {{"summary": {{...}}}}; '
        f"--dry-run: {_DRY}, {_IMPACT}",
        run=_delete,
    ),
    Command(
        "purge", "delete EVERY entry (after a typed confirmation; a snapshot of all first)",
        "Keeps every entry in a snapshot (`restore` puts them back), then asks you to type "
        "delete-all (or the host name); anything else cancels. Where nobody can answer it needs "
        "--yes; where the service has no listing, --no-snapshot.",
        (
            PROFILE,
            arg("-y", "--yes", action="store_true", help="do not ask: delete every entry at once"),
            arg("--dry-run", action="store_true",
                help="show how many entries (and which) would go; only lists"),
            NO_SNAPSHOT, JSON, *NETWORK,
        ),
        ("%dict_purge --dry-run", "%dict_purge", "%dict_purge -y", f"{PROG} purge --dry-run",
         f"{PROG} purge                   (asks you to type delete-all)",
         f"{PROG} purge --yes --json      (scripts: no question)"),
        exits="2 when not confirmed (nothing sent); 1 when it failed or its outcome is unknown",
        json=f"{_BATCH} (one result, entry_id null); --dry-run: {_DRY}",
        run=_purge,
    ),
    Command(
        "restore", "undo the change a snapshot kept (default: the latest change here)",
        "Adds back what the change deleted (only what is missing: a second run changes nothing), "
        "puts back each entry it changed, and removes what it added (after a question, or "
        "--yes). An entry changed since is asked about (--yes leaves it), as is a snapshot of "
        "another host or profile. A restore keeps its own snapshot: restoring that undoes it.",
        (
            PROFILE,
            workers("additions in flight"),
            arg("--dry-run", action="store_true", help="show what would be added; add nothing"),
            arg("-y", "--yes", action="store_true",
                help="ask nothing: remove what the change added, leave entries changed since "
                "as they are, restore a snapshot of another host or profile"),
            arg("snapshot", nargs="?", metavar="SNAPSHOT",
                help="a snapshot file (default: the latest of this profile and host; "
                "`snapshots` lists them)"),
            JSON, *PROGRESS, *NETWORK,
        ),
        ("%dict_restore --dry-run", "%dict_restore", '%dict_restore "{kept[0].path}"',
         f"{PROG} restore --dry-run",
         f"{PROG} restore ~/.local/share/dict-magics/snapshots/FILE.json --yes"),
        exits="1 when an addition failed or its outcome is unknown",
        json='{"ok", "dry_run", "added", "skipped", "failed": [{"entry", "reason"}], '
        '"unknown", "put_back", "removed", "changed": [{"entry", "now"}], "snapshot", "warnings"}',
        run=_restore,
    ),
    Command(
        "snapshots", "list the snapshots kept on this machine, newest first",
        "One is taken before every delete, purge, update and sync. Nothing is sent.",
        (
            arg("-p", "--profile", help="only the snapshots of this profile (default: all)"),
            arg("-n", "--limit", only="magic", type=int, default=SNAPSHOTS_SHOWN,
                help=f"at most this many (default {SNAPSHOTS_SHOWN}; 0: all)"),
            JSON,
        ),
        ("%dict_snapshots", "%dict_snapshots -p work", "kept = %dict_snapshots",
         f"{PROG} snapshots", f"{PROG} snapshots -p work --json"),
        json='{"snapshots": [{"path", "taken_at", "profile", "host", "base_url", "operation", '
        '"count", "added"}]}',
        run=_snapshots,
    ),
    Command(
        "log", "show the last requests that could change the dictionary (the audit log)",
        "Each line: when, profile, host, operation, outcome, and the entry's terms. Nothing is "
        "sent.",
        (arg("-n", type=int, default=20, help="how many of the last requests (default 20)"), JSON),
        ("%dict_log", "%dict_log -n 100", f"{PROG} log", f"{PROG} log -n 100 --json"),
        json='{"lines": [{"time", "profile", "host", "operation", "entry_id", "entry", '
        '"outcome", "http_status", "attempts", "reason", "snapshot"}], "skipped"}',
        run=_log,
    ),
    Command(
        "add", "add one entry (terms checked first; the result names the new id)",
        "Nothing is sent unless the terms pass the vendor's rules (not empty, at most 255 "
        "characters, known language codes). One listing afterwards finds the new id. An entry "
        "with the same four terms already there is not added again (nothing sent, exit 0).",
        (
            PROFILE,
            arg("from_lang", metavar="FROM_LANG", help="source language code (e.g. en, zh-CN)"),
            arg("from_text", metavar="FROM_TEXT", help="source term (quote it if it has spaces)"),
            arg("to_lang", metavar="TO_LANG", help="target language code"),
            arg("to_text", metavar="TO_TEXT", help="target term (quote it if it has spaces)"),
            arg("--dry-run", action="store_true", help="show what would be added; send nothing"),
            *CORPUS, JSON, *NETWORK,
        ),
        ("%dict_add en Friday de Freitag",
         "%dict_add ja 金曜日 en Friday --dry-run --corpus texts.txt",
         'added = %dict_add en "purchase order" de Bestellung',
         f"{PROG} add en Friday de Freitag", f"{PROG} add en invoice de Rechnung --json"),
        exits="1 when the addition failed or its outcome is unknown",
        json=f'{{"operation": "add", "ok", "outcome", "entry", "id", {_CHANGE}, "warnings"}}; '
        f"--dry-run: {_PREVIEW}, {_IMPACT}",
        run=_add,
    ),
    Command(
        "update", "change one entry in place (its old terms kept in a snapshot first)",
        "Replaces the given fields with a PUT; the id stays and `restore` puts the old terms "
        "back. An entry that already reads as asked, or terms another entry holds, are left "
        "alone (nothing sent, exit 0).",
        (
            PROFILE,
            arg("--from-text", metavar="T", help="new source term"),
            arg("--to-text", metavar="T", help="new target term"),
            arg("--from-lang", metavar="L", help="new source language"),
            arg("--to-lang", metavar="L", help="new target language"),
            arg("--dry-run", action="store_true", help="show old and new terms; send nothing"),
            *CORPUS,
            arg("id", metavar="ID", help="the entry to change"),
            JSON, *NETWORK,
        ),
        ("%dict_update 17 --to-text Freitag",
         '%dict_update 17 --from-text "purchase order" --dry-run --corpus texts.txt',
         f"{PROG} update 17 --to-text Freitag",
         f'{PROG} update 17 --from-text "purchase order" --dry-run'),
        exits="2 when the entry is not in the dictionary (nothing to update: nothing sent); 1 "
        "when the update failed or its outcome is unknown",
        json=f'{{"operation": "update", "ok", "outcome", "id", "old", "new", {_CHANGE}, '
        f'"snapshot", "warnings"}}; --dry-run: {_PREVIEW}, {_IMPACT}',
        run=_update,
    ),
    Command(
        "sync", "make the dictionary match a glossary file (the plan only, unless --apply)",
        "A row matches the entry with the same fromLang, fromText and toLang: the same toText "
        "is unchanged, another an update, no match an add. Entries of the file's pairs that it "
        "lacks go only with --delete-missing; conflicts are left alone; invalid rows are refused "
        "unless --skip-invalid. Applying keeps a snapshot first (`restore` undoes it) and ends "
        "with one listing that verifies every change.",
        (
            PROFILE,
            arg("--apply", action="store_true", help="make the changes (else: the plan only)"),
            arg("--dry-run", action="store_true",
                help="the plan only, as without --apply (for habit's sake)"),
            arg("--delete-missing", action="store_true",
                help="also delete entries of the file's language pairs that the file lacks"),
            arg("--pair", metavar="FROM:TO", help="languages of a two-column (source, target) "
                "file"),
            FORMAT,
            arg("--sheet", metavar="NAME",
                help="the .xlsx sheet to read (default: the one it opens at)"),
            arg("--skip-invalid", action="store_true", help="apply the valid rows, skip the rest"),
            arg("-y", "--yes", action="store_true", help="delete without asking (with --apply)"),
            workers("requests in flight"),
            arg("file", metavar="FILE", help="the glossary file (.csv, .tsv, .xlsx, .tbx)"),
            *CORPUS, JSON, *PROGRESS, *NETWORK,
        ),
        ("plan = %dict_sync glossary.csv --corpus texts.txt", "%dict_sync glossary.csv --apply",
         "%dict_sync terms.xlsx --pair en:de --delete-missing --apply",
         f"{PROG} sync glossary.csv               (the plan only: nothing is sent)",
         f"{PROG} sync terms.xlsx --pair en:de --delete-missing --apply --yes --json"),
        exits="0 for a plan; after --apply, 0 only when every change succeeded and was verified",
        json='{"applied", "ok", "path", "host", "profile", "adds", "updates": [{"id", "old", '
        '"new", "row"}], "deletes", "unchanged", "conflicts", "invalid": [{"row", "reason"}], '
        '"sheet", "other_sheets", "missing", "counts", "verified", "snapshot", "results", '
        '"warnings"}, '
        f"{_IMPACT}",
        run=_sync,
    ),
    Command(
        "export", "write the dictionary to a glossary file (.csv, .tsv, .xlsx, .tbx)",
        "Columns id, fromLang, fromText, toLang, toText; a .csv opens right in Excel and no cell "
        "is read as a formula. .xlsx needs pip install 'dict-magics[xlsx]'.",
        (
            PROFILE,
            FORMAT,
            arg("--force", action="store_true", help="replace FILE if it exists"),
            arg("file", metavar="FILE", help="where to write (a new file, unless --force)"),
            JSON, *NETWORK,
        ),
        ("%dict_export glossary.csv", "%dict_export terms.xlsx --force",
         "%dict_export backup.tbx -p work", f"{PROG} export glossary.csv",
         f"{PROG} export backup.tbx --json"),
        json='{"ok", "path", "format", "count", "host"}',
        run=_export,
    ),
    Command(
        "lint", "find problems in the dictionary, with a fix for each",
        "One read-only listing. Kinds: duplicate, conflict, near-duplicate, too-long, "
        "bad-language, whitespace, control, overlap. In a notebook found.lint() checks any "
        "listing offline.",
        (PROFILE, arg("--json", action="store_true", help="print the report as JSON"), *NETWORK),
        ("%dict_lint", "report = %dict_lint -p work", "%dict_lint --json", f"{PROG} lint",
         f"{PROG} lint --json | jq -r '.findings[] | select(.kind == \"duplicate\")'"),
        exits="0 whatever is found; 1 when the service cannot give a listing",
        json='{"findings": [{"kind", "entry_ids", "message", "fix"}], "counts": {kind: n}, '
        '"total", "duplicate_ids"}',
        run=_lint,
    ),
    Command(
        "check", "show which entries apply to each element of a text (at most 3 per element)",
        "Plays the service's rule on one listing (no translation request without --translate). "
        "Per element (a line) and language pair, the earliest three entries whose source term "
        "occurs in it apply, the rest do not (limit 3). In a notebook a %%dict_check cell checks "
        "one element per line (options on its first line).",
        (
            PROFILE, FROM_LANG, TO_LANG,
            arg("--unit", choices=UNITS,
                help="what the limit of 3 counts per: a line (element, the default), all the "
                "lines together (request), or each sentence"),
            arg("--translate", action="store_true",
                help="also send the elements to the translation engine (billed: asked first "
                "unless --yes) and show what it applied beside the prediction; needs --from-lang "
                "and --to-lang"),
            arg("--field-id", default="1", metavar="ID",
                help="with --translate: the engine's field (default 1, the real-time engine)"),
            arg("--contract-id", metavar="ID",
                help="with --translate: the contract to use (may be left out with one contract)"),
            arg("-y", "--yes", action="store_true", help="with --translate: send without asking"),
            arg("text", only="magic", nargs="+", metavar="TEXT",
                help="the text, as typed after the options (no quotes needed): one element"),
            arg("file", only="cli", metavar="FILE",
                help="a UTF-8 text file ('-' for stdin), one element a line"),
            JSON, *NETWORK,
        ),
        ("%dict_check 会議の請求書と見積書と納品書と契約書を送ります。",
         "result = %dict_check --unit request {sample}",
         "%dict_check --translate --from-lang ja --to-lang en 猫と犬とウサギとクマ。",
         f"{PROG} check sample.txt",
         f"{PROG} check --unit sentence --from-lang ja --to-lang en - < mail.txt",
         f"{PROG} check --translate --yes --from-lang ja --to-lang en --json sample.txt"),
        json='{"unit", "case_sensitive", "sentences": [{"text", "applied": [id], "not_applied": '
        '[id], "engine": {"translation", "applied": [id], "not_applied": [id]} (with '
        f'--translate, on each element\'s first item)}}], "never_applied": [id], "entries": '
        f'[{_ENTRY}], "checked", "disagreements": [{{"index", "predicted": [id], "engine": '
        '[id]}] (with --translate)} (one item of "sentences" per element, request line or '
        "sentence, whatever the unit)",
        run=_check,
    ),
    Command(
        "probe", "ask the service which rules it follows, changing nothing that was there",
        "Run it first against a new account or service. It adds, changes and deletes marker "
        "entries of its own, and the dictionary ends with exactly the entries it began with; "
        "stopped early, it names the markers it leaves. What it finds is kept for the profile: "
        "`check`, `add` and `update` follow it, and `status` shows it.",
        (
            PROFILE,
            arg("--translate", action="store_true",
                help="also ask the engine (billed: asked first unless --yes) the limit's unit "
                "and whether matching minds case"),
            arg("-y", "--yes", action="store_true", help="with --translate: send without asking"),
            arg("--json", action="store_true", help="print the findings as JSON"),
            *NETWORK,
        ),
        ("%dict_probe", "%dict_probe --translate", "%dict_probe --translate --yes --json",
         f"{PROG} probe", f"{PROG} probe --translate --yes --json"),
        exits="0 when the dictionary ended as it began; 1 when a request failed or it did not; "
        "130 after Ctrl-C (the markers left are named either way)",
        json='{"listing": "data.entries" | "entries", "ids": "integer" | "string", "nonce_rule": '
        '"increasing" | "unique" | "none", "errors": "coded" | "plain", "bulk", "update", '
        '"token", "limit_unit": "element" | "request" | "sentence" | null, "case_sensitive": '
        'bool | null, "unchanged", "requests"} (stopped early, also "stopped" and "left": '
        f"[{_ENTRY}])",
        run=_probe,
    ),
    Command(
        "panel", "show the confirm-then-delete widget panel",
        "Delete and Delete all only arm a confirmation that names what goes and where; a purge "
        "also needs delete-all (or the host name) typed. Requests run in the background.",
        (PROFILE,), ("%dict_panel", "%dict_panel -p work"), only="magic",
    ),
    Command(
        "sandbox", "serve a local stand-in for the service on 127.0.0.1 (see sandbox --help)",
        "The service as the vendor documents it, on loopback, to try things on.",
        examples=(f"{PROG} sandbox",), only="cli",
    ),
    Command(
        "demo", "run the quickstart notebook headlessly against an embedded sandbox",
        "Starts a sandbox and runs the quickstart notebook shipped in the package against it "
        "with this Python's ipykernel and a private data folder, printing each step and "
        "checking it did what the notebook says. Needs pip install 'dict-magics[demo]'.",
        (
            arg("-o", "--output", dest="output_notebook", default="dict-magics-demo.ipynb",
                help="where to write the executed notebook (default ./dict-magics-demo.ipynb)"),
            arg("--force", action="store_true", help="replace the output notebook if it exists"),
        ),
        (f"{PROG} demo", f"{PROG} demo -o /tmp/demo.ipynb --force"),
        exits="0 only if every step did what the notebook says; 2 when a requirement is "
        "missing or the output notebook exists",
        only="cli",
    ),
)
# fmt: on
COMMANDS: dict[str, Command] = {c.name: c for c in _COMMANDS}

EXIT_CODES = {
    0: "what was asked for holds: done, or nothing to do (an id to delete that is not in the "
    "dictionary is absent)",
    1: "something failed or its outcome is unknown, or the service cannot give a listing",
    2: "usage error (bad id or option, an id to update that is not in the dictionary, missing "
    "credentials, purge not confirmed): nothing sent",
    130: "interrupted by Ctrl-C (a batch prints what it did first)",
    143: "stopped by SIGTERM, as by Ctrl-C",
    129: "stopped by SIGHUP, as by Ctrl-C",
}


def spelled(text: str, front: str) -> str:
    """``text`` with each command between backticks (```restore```, ```login -p x```) as
    ``front`` spells it: ``%dict_restore`` (magic), ```dict-magics restore``` (cli), a link
    (markdown)."""

    def one(match: re.Match[str]) -> str:
        name, rest = match.groups()
        if name not in COMMANDS:
            return match.group(0)
        if front == "magic":
            return f"%dict_{name}{rest}"
        return f"[`{name}{rest}`](#{name})" if front == "markdown" else f"`{PROG} {name}{rest}`"

    return re.sub(r"`(\w+)([^`]*)`", one, text)


# -- what helps, in each front end's words ---------------------------------------------------


@dataclass(frozen=True)
class Hints:
    """One front end's words for an ``errors.Remedy``: ``names`` inside a sentence (a result's
    or a plan's), ``hints`` as the sentence after an error or warning (``{profile}`` filled)."""

    names: Mapping[str, str]
    hints: Mapping[str, str]

    def message(self, said: BaseException | str) -> str:
        """An error's or warning's text, followed by this front end's hint for its remedy; safe
        for a terminal (a path or term in it may hold ESC or a bidi override: ``shown``)."""
        from ..models.text import shown

        text = "\n".join(shown(line) for line in str(said).split("\n"))
        hint = self.hints.get(getattr(said, "option", None) or "")
        if hint is None:
            return text
        hint = hint.format(profile=getattr(said, "profile", None) or "default")
        text = text.rstrip()
        return f"{text} {hint}" if text.endswith((".", "!", "?")) else f"{text}. {hint}"

    def named(self, result: Any) -> Any:
        """``result`` naming what it names (the restore that undoes it, the flag that asks for
        more) in these words, when it names anything."""
        return replace(result, names=self.names) if hasattr(result, "names") else result

    def text(self, shown: Any) -> str:
        """What a prompter shows before a question: a purge plan in these words, else text."""
        from ..models.purge import PurgePlan

        if isinstance(shown, PurgePlan):
            from ..models.purge import purge_text

            return purge_text(shown, self.names)
        return self.message(shown)


class TextPrompter:
    """A front end's ``Prompter``: what is at stake printed in ``hints``' words (on stderr with
    ``to_stderr``), answers read by ``read`` (default ``input``), keys by ``getpass``; ``closed``
    (no stdin) is a ``NoAnswer`` saying ``nobody``; ``unanswerable`` tells before asking."""

    def __init__(
        self,
        hints: Hints,
        read: Callable[[str], str] | None = None,
        *,
        to_stderr: bool = False,
        nobody: str = "stdin was closed",
        closed: tuple[type[BaseException], ...] = (EOFError,),
        unanswerable: Callable[[], str | None] = lambda: None,
    ) -> None:
        self.hints, self.read, self.to_stderr = hints, read, to_stderr
        self.nobody, self.closed, self.unanswerable = nobody, closed, unanswerable

    def ask(self, question: str) -> str:
        return self._answer(self.read or input, question)  # input as it is now (patched in tests)

    def ask_secret(self, question: str) -> str:
        import getpass

        return self._answer(getpass.getpass, question)

    def confirm(self, warning: object, question: str) -> str:
        import sys

        print(self.hints.text(warning), file=sys.stderr if self.to_stderr else sys.stdout)
        return self.ask(question)

    def _answer(self, read: Callable[[str], str], question: str) -> str:
        from ..operations.prompts import NoAnswer

        try:
            return read(question)
        except self.closed:
            raise NoAnswer(self.nobody) from None


def _spelled(front: str, *tables: Mapping[str, str]) -> dict[str, str]:
    return {key: spelled(text, front) for table in tables for key, text in table.items()}


_NAMES = {
    "delete": "`delete`",
    "list": "`list`",
    "find_marker": "`list --match`",
    "restore": "`restore`",
    "no_snapshot": "--no-snapshot",
    "delete_missing": "run the sync again with --delete-missing",
    "sheet": "name it with --sheet NAME",
}
_HINTS = {
    "login": "To log in: `login -p {profile}`. To try dict-magics without an account: `demo` "
    "(the quickstart notebook against a local sandbox), or `sandbox` (a local service).",
    "relogin": "Run `logout -p {profile}`, then `login -p {profile}` again.",
    "restore": "`restore` puts them back.",
    "snapshots": "`snapshots` lists every snapshot kept.",
    "purge": "Use `purge` if you mean to delete every entry.",
    "no_snapshot": "With --no-snapshot it goes ahead without a copy.",
    "quiet_no_copy": "(--no-snapshot goes ahead without this warning.)",
    "workers": "Give -w/--workers a number within that range.",
    "max_retries": "Give --max-retries a number within that range.",
    "timeout": "Give --timeout a number of seconds.",
    "pair": "Give --pair FROM:TO, e.g. --pair en:de.",
    "format": "Rename it, or give --format (csv, tsv, xlsx or tbx).",
    "yes": "Add -y (--yes) if you mean it.",
    "overwrite": "Choose another name, or add --force to replace it.",
    "skip_invalid": "Or add --skip-invalid to apply the valid rows only.",
    "sheet": "Name the sheet to read with --sheet NAME.",
}
_SETTINGS = {  # a notebook sets these with %config, not with a flag
    "workers": "Set %config DictMagics.workers within that range.",
    "max_retries": "Set %config DictMagics.max_retries within that range.",
    "timeout": "Set %config DictMagics.timeout to a number of seconds.",
}
_OFF = "%config DictMagics.snapshots = False"
_TRY = "from dict_magics.sandbox import use_sandbox; use_sandbox() in a cell (a local sandbox)"

CLI = Hints(_spelled("cli", _NAMES), _spelled("cli", _HINTS))
MAGIC = Hints(
    _spelled("magic", _NAMES, {"no_snapshot": f"--no-snapshot or {_OFF}"}),
    _spelled(
        "magic",
        _HINTS,
        _SETTINGS,
        {
            "workers": "Set -w/--workers (or %config DictMagics.workers) within that range.",
            "login": "To log in: %dict_login -p {profile}. To try it without an account: "
            f"{_TRY}.",
            "no_snapshot": f"With --no-snapshot (or {_OFF}) it goes ahead without a copy.",
        },
    ),
)
PANEL = Hints(
    {
        "restore": "Undo",
        "no_snapshot": "snapshots are off",
        "delete_missing": "plan again with \u201calso delete entries of the file's language "
        "pairs that it lacks\u201d ticked",
        "sheet": "save the workbook with that sheet selected and plan again",
    },
    {
        **_SETTINGS,
        "login": "To log in: %dict_login -p {profile} in a cell, then a new panel. To try it "
        f"without an account: {_TRY}, then a new panel.",
        "relogin": "Run %dict_logout -p {profile}, then %dict_login -p {profile} in a cell.",
        "restore": "Undo (or Restore\u2026) puts them back.",
        "snapshots": "The Snapshot list beside Restore\u2026 holds every snapshot kept.",
        "purge": "Use Delete all\u2026 if you mean to delete every entry.",
        "no_snapshot": f"With {_OFF} (then a new panel) it goes ahead without a copy.",
        "quiet_no_copy": f"({_OFF}, then a new panel, goes ahead without this warning.)",
        "pair": "Fill in Pair, e.g. en:de.",
        "format": "Rename it to end in .csv, .tsv, .xlsx or .tbx.",
        "skip_invalid": 'Or tick "skip invalid rows" to apply the valid rows only.',
        "sheet": "Save the workbook with the sheet to read selected, and plan again.",
    },
)


# -- the reference ---------------------------------------------------------------------------


def _usage(a: Arg) -> str:
    """``-w N``, ``--workers N`` for the reference (``ID`` for a positional)."""
    options = a.options
    if not a.flags[0].startswith("-"):
        return f"`{options.get('metavar', a.flags[0])}`"
    value = options.get("metavar") or a.flags[-1].lstrip("-").upper().replace("-", "_")
    if "choices" in options:
        value = "{" + ",".join(options["choices"]) + "}"
    if options.get("action") in ("store_true", argparse.BooleanOptionalAction):
        value = ""
    return ", ".join(f"`{flag} {value}`".replace(" `", "`") for flag in a.flags)


def markdown() -> str:
    """docs/reference.md: every command, its arguments, exit codes and ``--json`` shape."""
    codes = "; ".join(f"**{code}** {meaning}" for code, meaning in EXIT_CODES.items())
    out = [
        "# Command reference",
        "",
        "<!-- Generated from dict_magics/frontends/commands.py by "
        "`python -m dict_magics.frontends.commands --markdown`: edit the table, not this. -->",
        "",
        "Each command is a magic (`%dict_NAME`, after `%load_ext dict_magics`) and a subcommand "
        f"of the `{PROG}` command line, unless marked. In a magic, `{{expr}}` and `$name` expand "
        "as in any IPython line magic, and what has no flag there is set with "
        "`%config DictMagics` (`%config DictMagics` lists the settings).",
        "",
        f"Exit codes of the command line: {codes}. With `--json`, an error is printed on stdout "
        'too, as `{"error", "exit"}`.',
    ]
    for c in _COMMANDS:
        forms = [f"`%dict_{c.name}`"] if c.only != "cli" else []
        forms += [f"`{PROG} {c.name}`"] if c.only != "magic" else []
        out += ["", f"## {c.name}", "", " \u00b7 ".join(forms) + f": {c.summary}.", ""]
        out.append(spelled(c.help, "markdown"))
        if c.args:
            out += ["", "| argument | in | help |", "|---|---|---|"]
            for a in c.args:
                where = {"magic": "magic", "cli": "CLI"}.get(a.only or "", "both")
                words = spelled(a.help, "markdown").replace("|", "\\|")
                out.append(f"| {_usage(a)} | {where} | {words} |")
        if c.exits:
            out += ["", f"Exit codes: {c.exits}."]
        if c.json:
            out += ["", f"`--json`: `{c.json}`"]
        out += ["", "```", *c.examples, "```"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    import sys

    if sys.argv[1:] != ["--markdown"]:
        raise SystemExit("usage: python -m dict_magics.frontends.commands --markdown")
    sys.stdout.write(markdown())
