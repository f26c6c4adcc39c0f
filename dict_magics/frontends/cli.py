"""The ``dict-magics`` command: the magics' core for terminals and scripts.

Exit codes are part of the contract: 0 when every deletion succeeded, 1 when any failed (the
service or the network said no), 2 for a user's mistake caught before any request (bad id,
missing credentials, purge not confirmed, bad option). ``--json`` prints the result objects for
scripts; after Ctrl-C a batch prints what it did and exits 130. Heavy modules (requests, keyring)
load only for the commands that need them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, Any

from .. import __version__
from .. import settings as limits
from ..errors import DictMagicsError, UsageProblem
from ..operations.context import OperationSettings
from ..operations.prompts import NoAnswer, Prompter, ScriptedPrompter
from ..operations.user_input import ids_from_bytes, split_args
from ..profiles.secret import Secret

if TYPE_CHECKING:
    from ..service.models import BatchResult, DeleteResult

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "batch_json",
    "main",
    "result_json",
]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
PROG = "dict-magics"
SETTINGS = ("profile", "base_url", "timeout", "max_retries", "workers")
# The id checks name the magic too; here only the command that exists here is named.
_PURGE_HINT = re.compile(r"%dict_purge(?: \(or `dict-magics purge`\))?")


# -- JSON shapes for scripts --------------------------------------------------------------


def result_json(result: DeleteResult) -> dict[str, Any]:
    """The public fields of a ``DeleteResult``, as the contract names them."""
    return {
        "status": result.status,
        "ok": result.ok,
        "entry_id": result.entry_id,
        "http_status": result.http_status,
        "reason": result.reason,
        "outcome_unknown": result.outcome_unknown,
        "attempts": result.attempts,
        "elapsed": round(result.elapsed, 6),
    }


def batch_json(batch: BatchResult) -> dict[str, Any]:
    """The public fields of a ``BatchResult``, every result in input order; ``interrupted``
    appears (true) only for a batch that Ctrl-C stopped."""
    data = {
        "results": [result_json(r) for r in batch.results],
        "ok": batch.ok,
        "succeeded": batch.succeeded,
        "failed": batch.failed,
    }
    if batch.interrupted:
        data["interrupted"] = True
    return data


def _emit(args: argparse.Namespace, data: dict[str, Any], text: str) -> None:
    """Print ``data`` as JSON with ``--json``, else ``text``."""
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(text)


# -- settings and input ----------------------------------------------------------------------


def _settings(args: argparse.Namespace) -> OperationSettings:
    """The options this command has, on top of the defaults in ``dict_magics.settings``."""
    given = vars(args)
    return OperationSettings(**{name: given[name] for name in SETTINGS if name in given})


def _is_terminal(stream: IO[str] | None) -> bool:
    """True for a terminal; a closed stream (``<&-``, ``2>&-``) is none."""
    return stream is not None and stream.isatty()


def _stdin_bytes(what: str) -> bytes:
    """All of stdin, for ``what``; a closed stdin is a usage problem, not a traceback."""
    if sys.stdin is None:
        raise UsageProblem(f"cannot read {what} from stdin: it is closed. Nothing was sent.")
    return sys.stdin.buffer.read()


def _stdin_line(what: str) -> str:
    """The first line of stdin (UTF-8), without its line ending."""
    if sys.stdin is None:
        raise UsageProblem(f"cannot read {what} from stdin: it is closed. Nothing was stored.")
    try:
        return sys.stdin.buffer.readline().decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError:
        raise UsageProblem(f"{what} on stdin is not UTF-8 text. Nothing was stored.") from None


def _read_ids_file(name: str) -> list[str]:
    """The ids in file ``name`` (``-``: stdin), one a line."""
    if name == "-":
        return ids_from_bytes(_stdin_bytes("ids"), "stdin")
    try:
        with open(name, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise UsageProblem(f"cannot read ids from {name!r}: {exc.strerror or exc}.") from None
    return ids_from_bytes(data, repr(name))


class _Terminal:
    """The command line's ``Prompter`` on a terminal: prompts on stderr, keys never echoed."""

    def ask(self, question: str) -> str:
        sys.stderr.write(question)
        sys.stderr.flush()
        line = sys.stdin.readline()
        if not line:
            raise NoAnswer("stdin was closed")
        return line.rstrip("\r\n")

    def ask_secret(self, question: str) -> str:
        import getpass

        try:
            return getpass.getpass(question)
        except EOFError:
            raise NoAnswer("stdin was closed") from None

    def confirm(self, warning: str, question: str) -> str:
        sys.stderr.write(warning + "\n")
        return self.ask(question)


def _prompter(hint: str = "") -> Prompter:
    """Questions on the terminal; where stdin is none, a prompter saying why (and ``hint``)."""
    if _is_terminal(sys.stdin):
        return _Terminal()
    state = "closed" if sys.stdin is None else "not a terminal"
    return ScriptedPrompter(reason=f"stdin is {state}{hint}")


# -- commands ------------------------------------------------------------------------------


def cmd_login(args: argparse.Namespace) -> int:
    """Store a profile in the keyring, asking for what the options did not give."""
    from ..operations.login import login

    settings = _settings(args)
    secret = None
    if not _is_terminal(sys.stdin):
        secret = Secret(_stdin_line("the secret key"))
    hint = ": give --base-url and --access-key, and pipe the secret key on stdin"
    done = login(
        settings,
        _prompter(hint),
        base_url=args.base_url,
        access_key=args.access_key,
        secret_key=secret,
    )
    data = {
        "profile": done.profile,
        "base_url": done.base_url,
        "access_key": done.masked_access_key,
        "keyring_backend": done.backend,
    }
    _emit(args, data, "\n".join(done.lines))
    return EXIT_OK


def cmd_logout(args: argparse.Namespace) -> int:
    """Remove the profile's keyring items."""
    from ..operations.login import logout

    done = logout(_settings(args))
    _emit(args, {"profile": done.profile, "removed": list(done.removed)}, "\n".join(done.lines))
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    """Where requests would go and with which key; sends nothing, never shows the secret."""
    from ..operations.status import status
    from ..render.status import status_text

    found = status(_settings(args))
    backend = found.backend
    data = {
        "profile": found.profile,
        "ready": found.ready,
        "base_url": found.base_url,
        "access_key": found.masked_access_key,
        "sources": found.sources,
        "secret_key": found.secret_location,
        "keyring_backend": backend.name if backend else None,
        "keyring_available": backend.available if backend else False,
        "keyring_plaintext": backend.plaintext if backend else False,
        "problem": found.problem,
        "warnings": found.warnings,
    }
    _emit(args, data, status_text(found))
    return EXIT_OK if found.ready else EXIT_USAGE


def cmd_delete(args: argparse.Namespace) -> int:
    """Delete one entry or several; every id is checked before the first request."""
    from ..operations.delete import delete, interruption
    from ..render import batch_text, result_text
    from ..service.models import BatchResult
    from .progress import BarSink

    ids = split_args(args.ids)
    if args.file:
        ids += _read_ids_file(args.file)
    if not ids:
        raise UsageProblem("no entry ids given: name them, or use --file. Nothing was sent.")
    bar = BarSink(stream=sys.stderr) if _is_terminal(sys.stderr) else None
    result = delete(_settings(args), ids, progress=bar)
    if isinstance(result, BatchResult):
        _emit(args, batch_json(result), batch_text(result))
    else:
        _emit(args, result_json(result), result_text(result))
    note = interruption(result)
    if note:
        print(f"{PROG}: {note}", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_OK if result.ok else EXIT_FAILED


def cmd_purge(args: argparse.Namespace) -> int:
    """Delete every entry, after a typed confirmation or ``--yes``."""
    from ..operations.purge import purge
    from ..render import result_text

    result = purge(_settings(args), _prompter(), yes=args.yes)
    _emit(args, result_json(result), result_text(result))
    return EXIT_OK if result.ok else EXIT_FAILED


def cmd_sandbox(argv: list[str]) -> int:
    """Serve the sandbox (``python -m dict_magics.sandbox``) with the remaining arguments."""
    from ..sandbox import main as sandbox_main

    try:
        return sandbox_main(argv, prog="dict-magics sandbox")
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or EXIT_OK
        return EXIT_USAGE


def cmd_demo(args: argparse.Namespace) -> int:
    """Run the quickstart notebook headlessly against an embedded sandbox."""
    from ..demo import run_demo

    return run_demo(args.output)


# -- parser ---------------------------------------------------------------------------------

DESCRIPTION = """\
Delete user-dictionary entries of the translation service with signed requests, using the
same credentials (OS keyring profiles, or DICT_MAGICS_* environment variables) as the
%dict_* magics.

exit codes: 0 every deletion succeeded; 1 a deletion failed (service or network);
2 usage error (bad id or option, missing credentials, purge not confirmed);
130 interrupted by Ctrl-C (a batch prints what it did first)."""

EPILOG = """\
environment: DICT_MAGICS_BASE_URL, DICT_MAGICS_ACCESS_KEY, DICT_MAGICS_SECRET_KEY override the
keyring for the profile named by DICT_MAGICS_PROFILE (default "default").

examples:
  dict-magics login --base-url https://api.example.com
  dict-magics delete 42
  dict-magics delete 1 2 3,4 --json
  dict-magics delete --file ids.txt --workers 8
  dict-magics purge
  dict-magics sandbox             (a local stand-in service to try things on)
  dict-magics demo                (run the quickstart notebook against it)"""

LOGIN_HELP = """\
Store a profile (base URL, access key, secret key) in the OS keyring. What the options do not
give is asked for on the terminal; the secret key is never an option and never echoed. When
stdin is not a terminal, --base-url and --access-key are required and the secret key is read
from the first line of stdin (e.g. `printf %s "$SECRET" | dict-magics login ...`)."""


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
        help="print machine-readable JSON on stdout (errors stay on stderr)",
    )


def _network(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base-url", help="use this base URL instead of the profile's")
    parser.add_argument(
        "--timeout",
        type=float,
        default=limits.TIMEOUT,
        help=f"seconds per request (default {limits.TIMEOUT:g})",
    )
    parser.add_argument(
        "--max-retries",
        type=int,
        default=limits.RETRIES,
        help="re-sends of a request that surely was not acted on "
        f"({limits.span(limits.MIN_RETRIES, limits.MAX_RETRIES)}, default {limits.RETRIES})",
    )


def build_parser() -> argparse.ArgumentParser:
    """The whole command line, with ``--help`` on every command."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    _common(parser, top=True)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, summary: str, func: Callable[..., int], **kw: Any) -> Any:
        sub = commands.add_parser(
            name,
            help=summary,
            description=kw.pop("description", summary),
            formatter_class=argparse.RawDescriptionHelpFormatter,
            allow_abbrev=False,
            **kw,
        )
        sub.set_defaults(func=func)
        return sub

    login = add("login", "store a profile in the keyring", cmd_login, description=LOGIN_HELP)
    _common(login, top=False)
    login.add_argument("--base-url", help="service base URL (https; http only for loopback)")
    login.add_argument("--access-key", help="access key (not secret; the secret key is asked)")

    logout = add("logout", "remove a profile from the keyring", cmd_logout)
    _common(logout, top=False)

    status = add(
        "status",
        "show profile, base URL, masked access key and keyring backend (never the secret)",
        cmd_status,
        description="Show where requests would go and with which credentials; sends nothing. "
        "Exit code 2 when credentials are incomplete.",
    )
    _common(status, top=False)
    status.add_argument("--base-url", help="use this base URL instead of the profile's")

    delete = add(
        "delete",
        "delete one or several entries",
        cmd_delete,
        description="Delete entries by id. Ids may be separated by spaces or commas; every id is "
        "checked before the first request. With several ids, a progress bar is shown on stderr "
        "when it is a terminal, then a summary listing every failure with its reason.",
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
        "-w",
        "--workers",
        type=int,
        default=limits.WORKERS,
        help="parallel requests "
        f"({limits.span(limits.MIN_WORKERS, limits.MAX_WORKERS)}, default {limits.WORKERS})",
    )
    _network(delete)

    purge = add(
        "purge",
        "delete EVERY entry (asks for a typed confirmation)",
        cmd_purge,
        description="Delete every entry of the profile's account. On a terminal you must type a "
        "confirmation naming the profile and host; when stdin is not a terminal the purge is "
        "refused (exit 2, nothing sent) unless --yes is given.",
    )
    _common(purge, top=False)
    purge.add_argument(
        "-y", "--yes", action="store_true", help="do not ask: delete every entry at once"
    )
    _network(purge)

    add(
        "sandbox",
        "serve a local stand-in for the service on 127.0.0.1 (options: sandbox --help)",
        cmd_sandbox,
        add_help=False,
    )

    demo = add(
        "demo",
        "run the quickstart notebook headlessly against an embedded sandbox",
        cmd_demo,
        description="Start a sandbox, execute the quickstart notebook against it with this "
        "Python's ipykernel, print each step and check the sandbox did what the notebook says. "
        "Exit 0 only if every step did. Needs: pip install 'dict-magics[demo]'.",
    )
    demo.add_argument(
        "-o",
        "--output",
        default="dict-magics-demo.ipynb",
        help="where to write the executed notebook (default ./dict-magics-demo.ipynb)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code (0, 1 or 2; 130 after Ctrl-C)."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if args.command == "sandbox":
        return cmd_sandbox(extra)
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command == "demo" and (args.json or args.profile):
        parser.error("demo takes neither --json nor --profile: it runs on its own sandbox")
    try:
        return args.func(args)
    except DictMagicsError as exc:
        print(f"{PROG}: error: {_PURGE_HINT.sub('`dict-magics purge`', str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    raise SystemExit(main())
