"""The ``dict-magics`` command: the magics' core for terminals and scripts.

Exit codes are part of the contract: 0 when everything succeeded, 1 when something failed or its
outcome is unknown (or the service cannot give a listing), 2 for a user's mistake caught before
any request (bad id, missing credentials, purge not confirmed, bad option), 130 after Ctrl-C (a
batch prints what it did first). ``--json`` prints one JSON document of a stable shape (errors
too), ``--jsonl`` one line per result as it arrives. The commands are in ``cli_commands``; this
module is the parser and the one place errors become exit codes.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from .. import settings as limits
from ..errors import DictMagicsError, exit_code
from . import cli_commands as commands
from .cli_commands import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, PROG
from .cli_output import Output, batch_json
from .cli_progress import PROGRESS_EVERY
from .hints import CLI

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "build_parser", "main"]

DESCRIPTION = """\
List, add, update, sync, export, lint, check, delete and restore user-dictionary entries of the
translation service with signed requests, using the same credentials (OS keyring profiles, or
DICT_MAGICS_* environment variables) and the same snapshots and audit log as the %dict_* magics.

exit codes: 0 everything succeeded (an id already absent counts: nothing to delete); 1 something
failed or its outcome is unknown (service or network), or the service cannot give a listing;
2 usage error (bad id or option, missing credentials, purge not confirmed), nothing sent;
130 interrupted by Ctrl-C, 143 by SIGTERM, 129 by SIGHUP (a batch prints what it did first)."""

EPILOG = """\
environment: DICT_MAGICS_BASE_URL, DICT_MAGICS_ACCESS_KEY, DICT_MAGICS_SECRET_KEY override the
keyring for the profile named by DICT_MAGICS_PROFILE (default "default"); DICT_MAGICS_HOME is
where snapshots and the audit log are kept.

examples:
  dict-magics login --base-url https://api.example.com
  dict-magics status --check
  dict-magics list --match friday
  dict-magics delete 42 43 --json > result.json
  dict-magics delete --retry-failed result.json
  dict-magics restore
  dict-magics export glossary.csv && dict-magics sync glossary.csv --apply
  dict-magics lint --json
  dict-magics check sample.txt
  dict-magics sandbox             (a local stand-in service to try things on)
  dict-magics demo                (run the quickstart notebook against it)"""

LOGIN_HELP = """\
Store a profile (base URL, access key, secret key) in the OS keyring. What the options do not
give is asked for on the terminal; the secret key is never an option and never echoed. When
stdin is not a terminal, --base-url and --access-key are required and the secret key is read
from the first line of stdin (e.g. `printf %s "$SECRET" | dict-magics login ...`)."""

EXAMPLES = {
    "login": [
        "dict-magics login --base-url https://api.example.com",
        'printf %s "$SECRET" | dict-magics login -p ci --base-url https://api.example.com '
        "--access-key AK123",
    ],
    "logout": ["dict-magics logout", "dict-magics logout --profile work"],
    "status": [
        "dict-magics status",
        "dict-magics status --check          (one read-only request: do the keys work?)",
        "dict-magics status -p work --json",
    ],
    "profiles": ["dict-magics profiles", "dict-magics profiles --json"],
    "list": [
        "dict-magics list --match friday",
        "dict-magics list --from-lang ja --to-lang en --csv > entries.csv",
        "dict-magics list --json | jq -r '.entries[].id'",
    ],
    "delete": [
        "dict-magics delete 42 43,44",
        "dict-magics delete --file ids.txt --jsonl > results.jsonl",
        "dict-magics delete --retry-failed results.jsonl",
    ],
    "purge": [
        "dict-magics purge --dry-run",
        "dict-magics purge                   (asks you to type delete-all)",
        "dict-magics purge --yes --json      (scripts: no question)",
    ],
    "restore": [
        "dict-magics restore --dry-run",
        "dict-magics restore",
        "dict-magics restore ~/.local/share/dict-magics/snapshots/FILE.json --yes",
    ],
    "lint": [
        "dict-magics lint",
        'dict-magics lint --json | jq -r \'.findings[] | select(.kind == "duplicate") '
        "| .entry_ids[1:][]'",
    ],
    "check": [
        "dict-magics check sample.txt",
        "dict-magics check --from-lang ja --to-lang en - < mail.txt",
        "dict-magics check sample.txt --json | jq '.never_applied'",
    ],
    "snapshots": ["dict-magics snapshots", "dict-magics snapshots -p work --json"],
    "add": [
        "dict-magics add en Friday de Freitag",
        'dict-magics add ja "金曜日" en Friday --dry-run',
        "dict-magics add en invoice de Rechnung --json | jq .id",
    ],
    "update": [
        "dict-magics update 17 --to-text Freitag",
        'dict-magics update 17 --from-text "purchase order" --dry-run',
        "dict-magics restore                 (puts entry 17 back as it was)",
    ],
    "sync": [
        "dict-magics sync glossary.csv                  (the plan only: nothing is sent)",
        "dict-magics sync glossary.csv --apply",
        "dict-magics sync terms.xlsx --pair en:de --delete-missing --apply --yes --json",
        "dict-magics restore                             (undoes the last sync)",
    ],
    "export": [
        "dict-magics export glossary.csv",
        "dict-magics export terms.xlsx -p work",
        "dict-magics export backup.tbx --json",
        "dict-magics export glossary.csv --force         (replaces the file)",
    ],
    "log": ["dict-magics log", "dict-magics log -n 100 --json"],
    "demo": ["dict-magics demo", "dict-magics demo -o /tmp/demo.ipynb"],
}


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors also reach a program that reads only stdout."""

    def __init__(self, *args: Any, output: Output | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.output = output or Output()

    def error(self, message: str) -> NoReturn:
        self.output.error(message, EXIT_USAGE)
        super().error(message)


def _examples(name: str) -> str:
    return "examples:\n" + "\n".join(f"  {line}" for line in EXAMPLES[name])


def _common(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """--profile and --json, accepted before or after the command."""
    default: Any = None if top else argparse.SUPPRESS
    parser.add_argument(
        "-p",
        "--profile",
        default=default,
        help="credential profile (default: $DICT_MAGICS_PROFILE or 'default')",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        default=False if top else argparse.SUPPRESS,
        help='print one JSON document on stdout (an error too: {"error", "exit"})',
    )


def _network(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base-url", help="use this base URL instead of the profile's")
    parser.add_argument(
        "--auth",
        choices=("signature", "token"),
        default=None,
        help="sign every request, or get one token and send it as Bearer "
        "(default: $DICT_MAGICS_AUTH, else signature)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=limits.TIMEOUT,
        help=f"seconds each attempt may take: to connect, then from sending to the whole "
        f"answer (default {limits.TIMEOUT:g})",
    )
    parser.add_argument(
        "--max-retries",
        type=int,
        default=limits.RETRIES,
        help="re-sends of a request that surely was not acted on "
        f"({limits.span(limits.MIN_RETRIES, limits.MAX_RETRIES)}, default {limits.RETRIES})",
    )


def _workers(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-w",
        "--workers",
        type=int,
        default=limits.WORKERS,
        help="parallel requests "
        f"({limits.span(limits.MIN_WORKERS, limits.MAX_WORKERS)}, default {limits.WORKERS})",
    )


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not {text!r}")
    return value


def _progress_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no progress on stderr (results still print)"
    )
    parser.add_argument(
        "--progress-every",
        type=_positive,
        default=PROGRESS_EVERY,
        metavar="SECONDS",
        help="when stderr is not a terminal, a progress line every SECONDS "
        f"(default {PROGRESS_EVERY:g}); a terminal gets a redrawn bar instead",
    )


def _changes(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="list what would go (with the terms, from one listing) and send nothing that "
        "changes the dictionary",
    )
    parser.add_argument(
        "--no-snapshot",
        action="store_true",
        help="do not keep a snapshot first (a purge needs this where the service has no "
        "listing); what is deleted then cannot be restored",
    )


def build_parser(output: Output | None = None) -> argparse.ArgumentParser:
    """The whole command line, with ``--help`` on every command."""
    output = output or Output()
    parser = _Parser(
        prog=PROG,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
        output=output,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {limits.VERSION}")
    _common(parser, top=True)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, summary: str, func: Callable[..., int], **kw: Any) -> Any:
        sub = subparsers.add_parser(
            name,
            help=summary,
            description=kw.pop("description", summary),
            epilog=_examples(name) if name in EXAMPLES else None,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            allow_abbrev=False,
            output=output,
            **kw,
        )
        sub.set_defaults(func=func)
        return sub

    login = add(
        "login", "store a profile in the keyring", commands.cmd_login, description=LOGIN_HELP
    )
    _common(login, top=False)
    login.add_argument("--base-url", help="service base URL (https; http only for loopback)")
    login.add_argument("--access-key", help="access key (not secret; the secret key is asked)")

    logout = add("logout", "remove a profile from the keyring", commands.cmd_logout)
    _common(logout, top=False)

    status = add(
        "status",
        "show profile, base URL, masked access key and keyring backend (never the secret)",
        commands.cmd_status,
        description="Show where requests would go and with which credentials; sends nothing "
        "unless --check is given. Exit code 2 when credentials are incomplete; with --check, "
        "0 when the credentials work and 1 when they are refused or cannot be checked.",
    )
    _common(status, top=False)
    status.add_argument(
        "--check",
        action="store_true",
        help="send one read-only request (the listing) to prove the credentials work",
    )
    _network(status)

    profiles = add(
        "profiles",
        "list the profiles stored in the keyring (never a secret)",
        commands.cmd_profiles,
        description="List the profiles stored in the keyring: name, base URL and masked access "
        "key. Profile names are recorded by login/logout in a non-secret keyring item "
        "(dict-magics / profiles), since most keyrings cannot list their items. Exit code 0, "
        "also with none stored or no keyring on this system (then none can be).",
    )
    profiles.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print one JSON document on stdout",
    )

    listing = add(
        "list",
        "list the dictionary's entries, filtered",
        commands.cmd_list,
        description="List the entries (id and the four terms) with one read-only request. "
        "Exit code 1 when the service offers no listing or cannot give it.",
    )
    _common(listing, top=False)
    listing.add_argument(
        "--match", metavar="TEXT", help="entries whose terms contain TEXT (any case)"
    )
    listing.add_argument("--from-lang", metavar="L", help="only entries from language L")
    listing.add_argument("--to-lang", metavar="L", help="only entries to language L")
    listing.add_argument(
        "--csv",
        action="store_true",
        help="print CSV (id,fromLang,fromText,toLang,toText) instead of a table; with a "
        "UTF-8 BOM only when stdout is a new file (> out.csv, for Excel), none into a pipe or >>",
    )
    _network(listing)

    delete = add(
        "delete",
        "delete one or several entries (a snapshot of them first)",
        commands.cmd_delete,
        description="Delete entries by id. Ids may be separated by spaces or commas; every id is "
        "checked before the first request, and the entries about to go are saved in a snapshot "
        "first (`dict-magics restore` puts them back). Progress goes to stderr: a redrawn bar "
        "on a terminal, a line every few seconds otherwise. The summary lists every failure "
        "with its reason.",
    )
    _common(delete, top=False)
    delete.add_argument("ids", nargs="*", metavar="ID", help="entry ids")
    delete.add_argument(
        "-f",
        "--file",
        metavar="PATH",
        help="also read ids from PATH ('-' for stdin), UTF-8, one id a line; blank lines "
        "and # comments are skipped",
    )
    delete.add_argument(
        "--retry-failed",
        metavar="RESULTS",
        help="also delete the ids a saved --json or --jsonl result of delete did not surely "
        "delete (outcome failure or unknown)",
    )
    delete.add_argument(
        "--jsonl",
        action="store_true",
        help='print one JSON line per result as it arrives, then a {"summary": ...} line',
    )
    _workers(delete)
    _changes(delete)
    _progress_options(delete)
    _network(delete)

    purge = add(
        "purge",
        "delete EVERY entry (asks for a typed confirmation; a snapshot of all first)",
        commands.cmd_purge,
        description="Delete every entry of the profile's account, after saving them all in a "
        "snapshot. On a terminal you must type a confirmation naming the profile and host; when "
        "stdin is not a terminal the purge is refused (exit 2, nothing sent) unless --yes is "
        "given. Where the service has no listing, a purge needs --no-snapshot.",
    )
    _common(purge, top=False)
    purge.add_argument(
        "-y", "--yes", action="store_true", help="do not ask: delete every entry at once"
    )
    _changes(purge)
    _network(purge)

    restore = add(
        "restore",
        "put back what a snapshot holds and the service lacks",
        commands.cmd_restore,
        description="Add back the entries of a snapshot whose four terms the service does not "
        "hold (running it twice adds nothing the second time). SNAPSHOT defaults to the latest "
        "snapshot of this profile and host; one from another profile or host needs a "
        "confirmation, or --yes.",
    )
    _common(restore, top=False)
    restore.add_argument("snapshot", nargs="?", metavar="SNAPSHOT", help="a snapshot file")
    restore.add_argument(
        "--dry-run", action="store_true", help="show what would be added; add nothing"
    )
    restore.add_argument(
        "-y", "--yes", action="store_true", help="do not ask about a snapshot of another host"
    )
    _workers(restore)
    _progress_options(restore)
    _network(restore)

    add_cmd = add(
        "add",
        "add one entry (terms checked first; the result names the new id)",
        commands.cmd_add,
        description="Add one entry. The terms are checked before anything is sent (at most 255 "
        "characters, no control characters, language codes the service takes: zh-CN or zh-TW "
        "for Chinese). The service returns no id: one listing afterwards finds it and settles "
        "an answer that was lost (the request is never sent twice). An entry with the same "
        "four terms already there is not added again (exit 0, nothing sent).",
    )
    _common(add_cmd, top=False)
    add_cmd.add_argument("from_lang", metavar="FROM_LANG", help="source language (e.g. en)")
    add_cmd.add_argument("from_text", metavar="FROM_TEXT", help="source term")
    add_cmd.add_argument("to_lang", metavar="TO_LANG", help="target language")
    add_cmd.add_argument("to_text", metavar="TO_TEXT", help="target term")
    add_cmd.add_argument("--dry-run", action="store_true", help="show it; send nothing")
    _network(add_cmd)

    update = add(
        "update",
        "change one entry in place (its old terms kept in a snapshot first)",
        commands.cmd_update,
        description="Replace the given fields of one entry with a PUT (the id stays). Its old "
        "terms are saved in a snapshot first: `dict-magics restore` puts them back under the "
        "same id. An entry that already reads as asked is left alone (exit 0, nothing sent).",
    )
    _common(update, top=False)
    update.add_argument("id", metavar="ID", help="the entry to change")
    update.add_argument("--from-text", metavar="T", help="new source term")
    update.add_argument("--to-text", metavar="T", help="new target term")
    update.add_argument("--from-lang", metavar="L", help="new source language")
    update.add_argument("--to-lang", metavar="L", help="new target language")
    update.add_argument("--dry-run", action="store_true", help="show old and new; send nothing")
    _network(update)

    sync_cmd = add(
        "sync",
        "make the dictionary match a glossary file (the plan only, unless --apply)",
        commands.cmd_sync,
        description="Compare a glossary file (.csv, .tsv, .xlsx, .tbx; columns fromLang, "
        "fromText, toLang, toText and optionally id, or source, target with --pair) with the "
        "dictionary and show the plan: adds, updates (old -> new), deletes, unchanged, "
        "conflicts, invalid rows by row number. Nothing is sent but one listing unless --apply: "
        "then a snapshot is kept first (`dict-magics restore` undoes the sync), adds go in bulk "
        "chunks, updates as PUTs, deletions (only with --delete-missing, after a confirmation "
        "or --yes), and one listing verifies. Exit 0 for a plan; after --apply, 0 only when "
        "every change succeeded and was verified.",
    )
    _common(sync_cmd, top=False)
    sync_cmd.add_argument("file", metavar="FILE", help="the glossary file")
    sync_cmd.add_argument("--apply", action="store_true", help="make the changes")
    sync_cmd.add_argument(
        "--delete-missing",
        action="store_true",
        help="delete entries of the file's language pairs that the file lacks",
    )
    sync_cmd.add_argument("--pair", metavar="FROM:TO", help="languages of a source,target file")
    sync_cmd.add_argument("--format", choices=("csv", "tsv", "xlsx", "tbx"), help="file format")
    sync_cmd.add_argument(
        "--sheet", metavar="NAME", help="the .xlsx sheet (default: the active one)"
    )
    sync_cmd.add_argument(
        "--skip-invalid", action="store_true", help="apply the valid rows, skip invalid ones"
    )
    sync_cmd.add_argument(
        "-y", "--yes", action="store_true", help="delete without asking (with --apply)"
    )
    _workers(sync_cmd)
    _progress_options(sync_cmd)
    _network(sync_cmd)

    export_cmd = add(
        "export",
        "write the dictionary to a glossary file (.csv, .tsv, .xlsx, .tbx)",
        commands.cmd_export,
        description="List the dictionary and write it to FILE (refused if it exists, unless "
        "--force). A .csv "
        "opens right in Excel (UTF-8 with a BOM) and no cell is read as a formula; `sync` of "
        "the unedited file plans no change. .xlsx needs: pip install 'dict-magics[xlsx]'.",
    )
    _common(export_cmd, top=False)
    export_cmd.add_argument("file", metavar="FILE", help="where to write (a new file)")
    export_cmd.add_argument(
        "--force", action="store_true", help="replace FILE if it exists (else: refused, exit 2)"
    )
    export_cmd.add_argument("--format", choices=("csv", "tsv", "xlsx", "tbx"), help="file format")
    _network(export_cmd)
    lint = add(
        "lint",
        "find problems in the dictionary (duplicates, conflicts, ...), with a fix for each",
        commands.cmd_lint,
        description="List the dictionary once (read-only) and report every problem: duplicate, "
        "conflict (one source, several targets), near-duplicate (equal after width, case and "
        "space folding), too-long, bad-language, whitespace, control, overlap (a source term "
        "inside another of the same pair). Exit code 0 whatever is found; 1 when the service "
        "cannot give a listing.",
    )
    _common(lint, top=False)
    _network(lint)

    check = add(
        "check",
        "show which entries apply to each sentence of a text (3 per sentence)",
        commands.cmd_check,
        description="Play the service's rule on a text, with one listing and no translation "
        "request: per sentence, the entries whose source term occurs in it, the earliest three "
        "(per language pair) applied and the rest not applied; then the entries that match but "
        "are never applied. Sentences end at \u3002 \uff01 \uff1f, at . ! ? before a space or "
        "the end, and at line ends.",
    )
    _common(check, top=False)
    check.add_argument("file", metavar="FILE", help="a UTF-8 text file ('-' for stdin)")
    check.add_argument("--from-lang", metavar="L", help="only entries from language L")
    check.add_argument("--to-lang", metavar="L", help="only entries to language L")
    _network(check)

    snapshots = add(
        "snapshots",
        "list the snapshots kept on this machine",
        commands.cmd_snapshots,
        description="List the snapshot files, newest first (only one profile's with -p).",
    )
    _common(snapshots, top=False)

    log = add(
        "log",
        "show the last lines of the audit log",
        commands.cmd_log,
        description="Show the last requests that could change the dictionary, with outcomes.",
    )
    _common(log, top=False)
    log.add_argument("-n", type=int, default=20, help="how many lines (default 20)")

    add(
        "sandbox",
        "serve a local stand-in for the service on 127.0.0.1 (options: sandbox --help)",
        commands.cmd_sandbox,
        add_help=False,
    )

    demo = add(
        "demo",
        "run the quickstart notebook headlessly against an embedded sandbox",
        commands.cmd_demo,
        description="Start a sandbox, execute the quickstart notebook against it with this "
        "Python's ipykernel, print each step and check the sandbox did what the notebook says. "
        "Exit 0 only if every step did. Needs: pip install 'dict-magics[demo]'.",
    )
    demo.add_argument(
        "-o",
        "--output",
        dest="output_notebook",
        default="dict-magics-demo.ipynb",
        help="where to write the executed notebook (default ./dict-magics-demo.ipynb)",
    )
    return parser


def _mode(argv: Sequence[str]) -> str:
    """``json`` / ``jsonl`` when asked for anywhere before ``--`` (so parse errors are JSON too)."""
    options = list(argv[: argv.index("--")] if "--" in argv else argv)
    if "--jsonl" in options:
        return "jsonl"
    return "json" if "--json" in options else "text"


def _fail(output: Output, message: str, code: int) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    output.error(message, code)
    return code


def _interrupted(output: Output, exc: KeyboardInterrupt) -> int:
    """Ctrl-C during one request: show how that request ended (it was waited for), exit 130."""
    from ..models import AddResult, BatchResult, DeleteResult, UpdateResult
    from .cli_output import add_json, update_json

    result = getattr(exc, "result", None)
    if isinstance(result, DeleteResult | BatchResult):
        output.show(batch_json(result), str(result))
    elif isinstance(result, AddResult):
        output.show(add_json(result), str(result))
    elif isinstance(result, UpdateResult):
        output.show(update_json(result), str(result))
    else:
        output.error("interrupted", EXIT_INTERRUPTED)
    print(f"{PROG}: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (0, 1 or 2; 130 after Ctrl-C)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    output = Output(_mode(argv))  # type: ignore[arg-type]
    parser = build_parser(output)
    args, extra = parser.parse_known_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        output.error("no command given", EXIT_USAGE)
        return EXIT_USAGE
    if args.command == "sandbox":
        return commands.cmd_sandbox(extra)
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command == "demo" and (args.json or args.profile):
        parser.error("demo takes neither --json nor --profile: it runs on its own sandbox")
    if args.json and getattr(args, "jsonl", False):
        parser.error("--json and --jsonl cannot be used together")
    if getattr(args, "csv", False) and args.json:
        parser.error("--json and --csv cannot be used together")
    args.output = output
    stopped: list[int] = []
    previous = _stop_on_termination(stopped)
    try:
        code = args.func(args)
    except DictMagicsError as exc:
        code = _fail(output, CLI.worded(exc), exit_code(exc))
    except KeyboardInterrupt as exc:
        code = _interrupted(output, exc)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 128 + stopped[0] if stopped else code


def _stop_on_termination(stopped: list[int]) -> dict[int, Any]:
    """SIGTERM and SIGHUP stop a command as Ctrl-C does: nothing new is sent, requests in flight
    are waited for (at most one deadline) and audited, what was done is printed; the exit code
    is then 128 + the signal's number. Killed outright instead, the process would lose the
    results (and audit lines) of requests the service had received."""

    def like_ctrl_c(signum: int, frame: Any) -> None:
        stopped.append(signum)
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            # The Ctrl-C handler in force (a request's, or Python's), told which signal it is:
            # a request's honours it even where Ctrl-C itself is ignored (a background job).
            handler(signum, frame)
        else:
            raise KeyboardInterrupt

    previous: dict[int, Any] = {}
    for name in ("SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is None:
            continue
        try:
            previous[signum] = signal.signal(signum, like_ctrl_c)
        except ValueError:  # not the main thread: leave the signals alone
            break
    return previous


if __name__ == "__main__":
    raise SystemExit(main())
