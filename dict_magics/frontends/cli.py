"""The ``dict-magics`` command: the magics' core for terminals and scripts.

Exit codes are part of the contract: 0 when every deletion succeeded, 1 when any failed (the
service or the network said no), 2 for a user's mistake caught before any request (bad id,
missing credentials, purge not confirmed, bad option). ``--json`` prints the result objects for
scripts. Heavy modules (requests, keyring) load only for the commands that need them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..errors import DictMagicsError, UsageProblem
from ..operations.user_input import (
    MAX_RETRIES,
    MAX_WORKERS,
    purge_confirmed,
    purge_question,
    split_ids,
)
from ..profiles.secret import Secret

if TYPE_CHECKING:
    from ..service.client import DictionaryClient
    from ..service.models import BatchResult, DeleteResult

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "batch_json", "main", "result_json"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
PROG = "dict-magics"


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
    """The public fields of a ``BatchResult``, every result in input order."""
    return {
        "results": [result_json(r) for r in batch.results],
        "ok": batch.ok,
        "succeeded": batch.succeeded,
        "failed": batch.failed,
    }


def _emit(args: argparse.Namespace, data: dict[str, Any], text: str) -> None:
    """Print ``data`` as JSON with ``--json``, else ``text``."""
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(text)


# -- shared pieces -------------------------------------------------------------------------


def _profile(args: argparse.Namespace) -> str:
    """The profile named by ``--profile``, else ``$DICT_MAGICS_PROFILE``, else ``default``."""
    from ..profiles.credentials import check_profile, default_profile

    return check_profile(args.profile or default_profile())


def _client(args: argparse.Namespace, *, workers: int = 1) -> DictionaryClient:
    """Credentials (keyring, environment, ``--base-url``) -> a client, as the magics build it."""
    from ..operations.session import make_client

    if not 0 <= args.max_retries <= MAX_RETRIES:
        raise UsageProblem(f"--max-retries must be 0..{MAX_RETRIES}, not {args.max_retries}.")
    client, _ = make_client(
        _profile(args),
        base_url=args.base_url,
        timeout=args.timeout,
        max_retries=args.max_retries,
        workers=workers,
    )
    return client


def _split_ids(values: Sequence[str]) -> list[str]:
    """Ids exactly as ``%dict_delete`` reads them (spaces and/or commas), each checked."""
    return split_ids(" ".join(values))


def _read_ids_file(name: str) -> list[str]:
    try:
        if name == "-":
            return _split_ids([sys.stdin.read()])
        with open(name, encoding="utf-8") as handle:
            return _split_ids([handle.read()])
    except OSError as exc:
        raise UsageProblem(f"cannot read ids from {name!r}: {exc.strerror or exc}.") from None


# -- commands ------------------------------------------------------------------------------


def _ask(prompt: str, *, secret: bool) -> str:
    """Ask on the terminal (prompt on stderr); a secret answer is never echoed."""
    if secret:
        import getpass

        return getpass.getpass(prompt)
    sys.stderr.write(prompt)
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.strip()


def _env_note(profile: str, verb: str) -> str:
    from ..profiles.credentials import env_items

    overridden = env_items(profile)
    if not overridden:
        return ""
    names = ", ".join(sorted(overridden.values()))
    return f"\nNote: {names} {verb} in the environment for profile {profile!r}."


def cmd_login(args: argparse.Namespace) -> int:
    """Store a profile in the keyring, asking for what the options did not give."""
    from ..profiles import credentials
    from ..service.paths import host_of, normalize_base_url

    profile = _profile(args)
    interactive = sys.stdin.isatty()
    credentials.check_backend(profile, "store")  # before anyone types a secret in vain
    base_url = args.base_url
    if not base_url:
        stored = credentials.stored_base_url(profile)
        if interactive:
            shown = f" [{stored}]" if stored else " (https://host[:port])"
            base_url = _ask(f"Base URL{shown}: ", secret=False) or stored
        else:
            base_url = stored
    if not interactive and not (base_url and args.access_key):
        missing = [
            n for n, v in (("--base-url", base_url), ("--access-key", args.access_key)) if not v
        ]
        raise UsageProblem(
            f"stdin is not a terminal, so nothing can be asked: give {' and '.join(missing)} "
            "and pipe the secret key on stdin. Nothing was stored."
        )
    if not base_url:
        raise UsageProblem("no base URL given; nothing was stored.")
    base_url = normalize_base_url(base_url)
    host = host_of(base_url)
    access_key = args.access_key or _ask(f"Access key for {host}: ", secret=True)
    if not access_key.strip():
        raise UsageProblem("no access key given; nothing was stored.")
    if interactive:
        secret_key = Secret(_ask(f"Secret key for {host} (hidden): ", secret=True))
    else:
        secret_key = Secret(sys.stdin.readline().rstrip("\r\n"))
    if not secret_key:
        raise UsageProblem("no secret key given; nothing was stored.")
    saved = credentials.store(profile, base_url, access_key, secret_key)
    backend = credentials.backend_info()
    text = (
        f"Stored profile {saved.profile!r} in the keyring ({backend.name}): base URL "
        f"{saved.base_url}, access key {saved.masked_access_key}, secret key saved (not shown)."
    )
    if backend.warning:
        text += f"\nWarning: {backend.warning}."
    text += _env_note(profile, "override the stored values")
    data = {
        "profile": saved.profile,
        "base_url": saved.base_url,
        "access_key": saved.masked_access_key,
        "keyring_backend": backend.name,
    }
    _emit(args, data, text)
    return EXIT_OK


def cmd_logout(args: argparse.Namespace) -> int:
    """Remove the profile's keyring items."""
    from ..profiles import credentials

    profile = _profile(args)
    removed = credentials.delete_profile(profile)
    if removed:
        text = f"Removed profile {profile!r} from the keyring ({', '.join(removed)})."
    else:
        text = f"Profile {profile!r} had nothing stored in the keyring."
    text += _env_note(profile, "still set")
    _emit(args, {"profile": profile, "removed": removed}, text)
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    """Where requests would go and with which key; sends nothing, never shows the secret."""
    from ..profiles.status import profile_status
    from ..render.status import status_text

    status = profile_status(_profile(args), base_url=args.base_url)
    backend = status.backend
    data = {
        "profile": status.profile,
        "ready": status.ready,
        "base_url": status.base_url,
        "access_key": status.masked_access_key,
        "sources": status.sources,
        "secret_key": status.secret_location,
        "keyring_backend": backend.name if backend else None,
        "keyring_available": backend.available if backend else False,
        "keyring_plaintext": backend.plaintext if backend else False,
        "problem": status.problem,
        "warnings": status.warnings,
    }
    _emit(args, data, status_text(status))
    return EXIT_OK if status.ready else EXIT_USAGE


def cmd_delete(args: argparse.Namespace) -> int:
    """Delete one entry or several; every id is checked before the first request."""
    from ..render import batch_text, result_text

    ids = _split_ids(args.ids)
    if args.file:
        ids += _read_ids_file(args.file)
    if not ids:
        raise UsageProblem("no entry ids given: name them, or use --file. Nothing was sent.")
    if not 1 <= args.workers <= MAX_WORKERS:
        raise UsageProblem(f"--workers must be 1..{MAX_WORKERS}, not {args.workers}.")
    with _client(args, workers=args.workers) as client:
        if len(ids) == 1:
            result = client.delete_entry(ids[0])
            _emit(args, result_json(result), result_text(result))
            return EXIT_OK if result.ok else EXIT_FAILED
        batch = _delete_many(client, ids, args.workers)
    _emit(args, batch_json(batch), batch_text(batch))
    return EXIT_OK if batch.ok else EXIT_FAILED


def _delete_many(client: DictionaryClient, ids: list[str], workers: int) -> BatchResult:
    """A batch, with the shared text progress bar on stderr when stderr is a terminal."""
    from .progress import delete_with_progress

    return delete_with_progress(client, ids, workers, stream=sys.stderr, show=sys.stderr.isatty())


def cmd_purge(args: argparse.Namespace) -> int:
    """Delete every entry, after a typed confirmation or ``--yes``."""
    from ..render import result_text

    profile = _profile(args)
    with _client(args) as client:
        target = f"EVERY entry of the user dictionary of profile {profile!r} at {client.host}"
        if not args.yes:
            if not sys.stdin.isatty():
                raise UsageProblem(
                    f"refusing to delete {target}: stdin is not a terminal, so nobody can type "
                    "the confirmation. Nothing was sent. Re-run with --yes if you mean it."
                )
            if not _confirm_purge(target, client.host):
                raise UsageProblem("purge not confirmed; nothing was sent.")
        result = client.delete_all()
    _emit(args, result_json(result), result_text(result))
    return EXIT_OK if result.ok else EXIT_FAILED


def _confirm_purge(target: str, host: str) -> bool:
    """The same question as ``%dict_purge``: type the purge word or the host name."""
    sys.stderr.write(f"This deletes {target}. It cannot be undone.\n")
    try:
        answer = _ask(purge_question(host), secret=False)
    except EOFError:
        return False
    return purge_confirmed(answer, host)


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
2 usage error (bad id or option, missing credentials, purge not confirmed)."""

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
        "--timeout", type=float, default=15.0, help="seconds per request (default 15)"
    )
    parser.add_argument(
        "--max-retries",
        type=int,
        default=3,
        help="re-sends of a request that surely was not acted on (default 3)",
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
        "-f", "--file", metavar="PATH", help="also read ids from PATH ('-' for stdin)"
    )
    delete.add_argument(
        "-w", "--workers", type=int, default=4, help="parallel requests (default 4)"
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
    """Run one command; returns the exit code (0, 1 or 2)."""
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
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
