"""The ``dict-magics`` command, built from ``commands.COMMANDS``; each command returns its exit
code (0 holds, 1 failed or unknown, 2 usage, 130 Ctrl-C, 128 + signal). Heavy imports stay
inside the commands."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import IO, Any, NoReturn

from .. import settings as limits
from ..errors import DictMagicsError, UsageProblem, exit_code
from ..operations.context import OperationSettings, split_args
from ..operations.prompts import Prompter, ScriptedPrompter
from . import output as shapes
from .commands import CLI, COMMANDS, EXIT_CODES, PROG, TextPrompter
from .output import Output

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "build_parser", "main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
SETTINGS = ("profile", "base_url", "timeout", "max_retries", "workers", "auth")
OUTCOMES = ("success", "failure", "unknown", "absent")

DESCRIPTION = (
    "List, add, update, sync, export, lint, check, delete and restore user-dictionary entries "
    "of the translation service, with the same credentials (OS keyring profiles, or "
    "DICT_MAGICS_* environment variables), snapshots and audit log as the %dict_* magics."
)
EPILOG = """\
environment: DICT_MAGICS_BASE_URL, DICT_MAGICS_ACCESS_KEY, DICT_MAGICS_SECRET_KEY override the
keyring for the profile named by DICT_MAGICS_PROFILE (default "default"); DICT_MAGICS_HOME is
where snapshots and the audit log are kept; DICT_MAGICS_CORPUS is the sample texts --corpus
reads when not given. Reference: docs/reference.md."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors also reach a program that reads only stdout."""

    def __init__(self, *args: Any, output: Output, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.output = output

    def error(self, message: str) -> NoReturn:
        self.output.error(message, EXIT_USAGE)
        super().error(message)


def build_parser(output: Output | None = None) -> argparse.ArgumentParser:
    """The whole command line, from the commands table, with ``--help`` on every command."""
    output = output or Output()
    parser = _Parser(
        prog=PROG,
        description=textwrap.fill(DESCRIPTION, 88)
        + "\n\nexit codes:\n"
        + "".join(f"  {code} {meaning}\n" for code, meaning in EXIT_CODES.items())
        + '  with --json, an error is printed on stdout too, as {"error", "exit"}',
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
        output=output,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {limits.VERSION}")
    parser.add_argument("-p", "--profile", help="credential profile (also after the command)")
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS.values():
        if command.only == "magic":
            continue
        examples = command.examples_for("cli")
        sub = subparsers.add_parser(
            command.name,
            help=command.summary,
            description=command.description("cli"),
            epilog=f"examples:{examples}" if examples else None,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            allow_abbrev=False,
            add_help=command.name != "sandbox",  # its own parser answers --help
            output=output,
        )
        sub.set_defaults(func=HANDLERS.get(command.name, cmd_any))
        command.add_arguments(sub, "cli")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns its exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    options = argv[: argv.index("--")] if "--" in argv else argv
    mode = "jsonl" if "--jsonl" in options else "json" if "--json" in options else "text"
    output = Output(mode)  # parse errors are JSON too
    parser = build_parser(output)
    args, extra = parser.parse_known_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        output.error("no command given", EXIT_USAGE)
        return EXIT_USAGE
    if args.command == "sandbox":
        return cmd_sandbox(extra)
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
        print(f"{PROG}: error: {CLI.message(exc)}", file=sys.stderr)
        output.error(CLI.message(exc), exit_code(exc))
        code = exit_code(exc)
    except KeyboardInterrupt as exc:
        code = _interrupted(output, exc)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 128 + stopped[0] if stopped else code


def _interrupted(output: Output, exc: KeyboardInterrupt) -> int:
    """Ctrl-C during one request: show how that request ended (it was waited for), exit 130."""
    result = getattr(exc, "result", None)
    if result is None:
        output.error("interrupted", EXIT_INTERRUPTED)
    else:
        output.show(shapes.to_json(result, []), str(result))
    print(f"{PROG}: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def _stop_on_termination(stopped: list[int]) -> dict[int, Any]:
    """SIGTERM and SIGHUP stop a command as Ctrl-C does (requests in flight are waited for and
    audited, what was done is printed), then exit 128 + the signal."""

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


# -- what the command reads ----------------------------------------------------------------


def _settings(args: argparse.Namespace) -> OperationSettings:
    """The options this command was given, on top of the defaults in ``dict_magics.settings``."""
    given = vars(args)
    chosen = {name: given[name] for name in SETTINGS if given.get(name) is not None}
    if "no_snapshot" in given:
        chosen["snapshots"] = not given["no_snapshot"]
    return OperationSettings(**chosen)


def _is_terminal(stream: IO[str] | None) -> bool:
    """True for a terminal; a closed stream (``<&-``, ``2>&-``) is none."""
    return stream is not None and stream.isatty()


def _read(name: str, what: str) -> bytes:
    """The bytes of file ``name`` (``-``: stdin); a problem is a usage error."""
    if name != "-":
        try:
            with open(name, "rb") as handle:
                return handle.read()
        except OSError as exc:
            raise UsageProblem(
                f"cannot read {what} from {name!r}: {exc.strerror or exc}."
            ) from None
    if sys.stdin is None:
        raise UsageProblem(f"cannot read {what} from stdin: it is closed. Nothing was sent.")
    return sys.stdin.buffer.read()


def _read_line(question: str) -> str:
    """A line of stdin, the question on stderr (stdout may be a result's JSON)."""
    sys.stderr.write(question)
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\r\n")


def prompter(hint: str = "") -> Prompter:
    """Questions on the terminal; where stdin is none, a prompter saying why (and ``hint``)."""
    if _is_terminal(sys.stdin):
        return TextPrompter(CLI, _read_line, to_stderr=True)
    state = "closed" if sys.stdin is None else "not a terminal"
    return ScriptedPrompter(reason=f"stdin is {state}{hint}")


def _progress(args: argparse.Namespace) -> Any:
    """A redrawn bar on a terminal, a line every few seconds in a log, nothing with --quiet."""
    if args.quiet or sys.stderr is None:
        return None
    return shapes.TextProgress(sys.stderr, args.progress_every)


def ids_to_retry(name: str) -> list[str]:
    """The ids a saved ``delete --json`` (or ``--jsonl``) result did not surely delete, judged by
    ``outcome`` (or version 1's ``ok``); anything else is refused before anything is sent."""
    where = "stdin" if name == "-" else repr(name)

    def refused(why: str) -> UsageProblem:
        return UsageProblem(
            f"--retry-failed: {where} is not a saved `{PROG} delete --json` result: {why}. "
            "Nothing was sent."
        )

    try:
        text = _read(name, "a saved result").decode("utf-8-sig")
    except UnicodeDecodeError:
        raise refused("it is not UTF-8 text") from None
    try:
        documents = [json.loads(text)]
    except ValueError:  # --jsonl: one result a line, then the summary
        documents = []
        for number, line in enumerate(text.splitlines(), 1):
            try:
                documents += [json.loads(line)] if line.strip() else []
            except ValueError:
                raise refused(f"line {number} is not JSON") from None
        if not documents:
            raise refused("it is empty") from None
    results = []
    for data in documents:
        if not isinstance(data, dict):
            raise refused("it is not a JSON object")
        if "error" in data:
            raise refused("it records an error, not results")
        if "entry_id" in data:
            results.append(data)  # a --jsonl line, or one result as version 1 printed it
        elif isinstance(data.get("results"), list):
            results += data["results"]
        elif "summary" not in data:
            raise refused("it has no 'results' list")
    final: dict[str, bool] = {}
    for index, item in enumerate(results, 1):
        entry_id = item.get("entry_id") if isinstance(item, dict) else None
        if isinstance(item, dict) and "entry_id" in item and entry_id is None:
            raise refused(f"it is the result of a purge; run `{PROG} purge` again")
        if not isinstance(entry_id, str) or not entry_id:
            raise refused(f"result {index} has no 'entry_id'")
        # A refusal saying the entry does not exist (404, refused: saved before "absent"
        # existed) can never succeed either.
        gone = item.get("http_status") == 404 and item.get("cause") == "refused"
        outcome, ok = item.get("outcome"), item.get("ok")
        if outcome is None and not isinstance(ok, bool):
            raise refused(f"result {index} has neither 'outcome' nor 'ok'")
        if outcome is not None and outcome not in OUTCOMES:
            raise refused(f"result {index} has an unknown outcome {outcome!r}")
        done = outcome in ("success", "absent") if outcome is not None else ok
        final[entry_id] = bool(done or gone)  # in a --jsonl stream, the last line is final
    return [entry_id for entry_id, done in final.items() if not done]


# -- credentials ---------------------------------------------------------------------------


def cmd_login(args: argparse.Namespace) -> int:
    from ..models.secret import Secret
    from ..operations.login import login

    secret = None
    if not _is_terminal(sys.stdin):
        if sys.stdin is None:
            raise UsageProblem(
                "cannot read the secret key from stdin: it is closed. Nothing was stored."
            )
        try:
            secret = Secret(sys.stdin.buffer.readline().decode("utf-8").rstrip("\r\n"))
        except UnicodeDecodeError:
            raise UsageProblem(
                "the secret key on stdin is not UTF-8 text. Nothing was stored."
            ) from None
    done = login(
        _settings(args),
        prompter(": give --base-url and --access-key, and pipe the secret key on stdin"),
        base_url=args.base_url,
        access_key=args.access_key,
        secret_key=secret,
    )
    data = {**shapes.pick(done, "profile", "base_url"), "access_key": done.masked_access_key}
    args.output.show({**data, "keyring_backend": done.backend}, "\n".join(done.lines))
    return EXIT_OK


def cmd_logout(args: argparse.Namespace) -> int:
    from ..operations.login import logout

    done = logout(_settings(args))
    args.output.show(
        {"profile": done.profile, "removed": list(done.removed)}, "\n".join(done.lines)
    )
    return EXIT_OK


def cmd_profiles(args: argparse.Namespace) -> int:
    from ..profiles import credentials

    info = credentials.backend_info()
    if not info.available:
        # No keyring: nothing can be stored, so none is; an empty list, not an error (exit 0).
        args.output.show(
            {"profiles": [], "keyring_backend": info.name, "keyring_available": False},
            "No keyring on this system: no stored profiles. To store profiles, install and "
            f"unlock a keyring (e.g. gnome-keyring), then `{PROG} login`; without one, a "
            "single set of credentials can come from DICT_MAGICS_ACCESS_KEY / "
            "DICT_MAGICS_SECRET_KEY / DICT_MAGICS_BASE_URL.",
        )
        return EXIT_OK
    found = credentials.stored_profiles()
    fields = ("name", "base_url", "masked_access_key", "complete", "missing", "default")
    listed = [{f.replace("masked_", ""): getattr(p, f) for f in fields} for p in found]
    data = {"profiles": listed, "keyring_backend": info.name, "keyring_available": True}
    if not found:
        text = f"No profile is stored in the keyring ({info.name}): run `{PROG} login`."
    else:
        rows = [f"{len(found)} stored profile{'s' if len(found) != 1 else ''} ({info.name}):"]
        width = max(len(p.name) for p in found)
        for p in found:
            line = f"{'*' if p.default else ' '} {p.name:<{width}}  {p.base_url or '(no base URL)'}"
            line += f"  access key {p.masked_access_key or '(none)'}"
            if not p.complete:
                line += f"  (incomplete: no {', '.join(p.missing)})"
            rows.append(line)
        text = "\n".join([*rows, "* the profile used when none is named"])
    args.output.show(data, text)
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    from ..operations.status import status

    settings = _settings(args)
    found = status(settings).worded(CLI.message)
    backend = found.backend
    data: dict[str, Any] = {
        **shapes.pick(found, "profile", "ready", "base_url"),
        "access_key": found.masked_access_key,
        **shapes.pick(found, "sources"),
        "secret_key": found.secret_location,
        "keyring_backend": backend.name if backend else None,
        "keyring_available": backend.available if backend else False,
        "keyring_plaintext": backend.plaintext if backend else False,
        **shapes.pick(found, "problem", "warnings"),
        "probe": found.probe and {**found.probe.to_json(), "date": found.probe.date},
        "pace": found.pace,
    }
    text = str(found)
    code = EXIT_OK if found.ready else EXIT_USAGE
    if args.check and found.ready:
        from ..operations.check import check_credentials

        check = check_credentials(settings)
        data["check"] = shapes.pick(check, "works", "message", "http_status")
        if check.entries is not None:
            data["check"]["entries"] = check.entries
        symbol = "?" if check.works is None else "\u2713" if check.works else "\u2717"
        # The first mark is the check's: the status's own (settings complete) claims no success.
        text = f"{symbol} {text.partition(' ')[2]}\n{symbol} {check.message}"
        code = EXIT_OK if check.works else EXIT_FAILED
    args.output.show(data, text)
    return code


# -- the dictionary ----------------------------------------------------------------------


def _run(
    args: argparse.Namespace, said: list[str] | None = None, **context: Any
) -> tuple[Any, list[str]]:
    """Call the command's operation (``commands.COMMANDS[name].run``); its result, and the
    warnings it said (into ``said`` as they come: a caller stopped by Ctrl-C keeps them)."""
    from .commands import Context

    said = [] if said is None else said

    def warn(message: str) -> None:
        said.append(CLI.message(message))
        print(f"{PROG}: warning: {said[-1]}", file=sys.stderr, flush=True)

    context.setdefault("prompter", prompter())
    if "progress" not in context and "quiet" in args:
        context["progress"] = _progress(args)
    run = COMMANDS[args.command].run
    assert run is not None  # only a command with an operation gets here
    return run(args, Context(_settings(args), warn=warn, **context)), said


def cmd_any(args: argparse.Namespace) -> int:
    """A command that shows its operation's result: JSON or text; exit 0 only when it
    succeeded, or when it changed nothing (a plan, a dry run, nothing to change)."""
    return _show(args, *_run(args))


def _show(args: argparse.Namespace, result: Any, said: list[str]) -> int:
    """The result as JSON or text, and its exit code (``_code``)."""
    args.output.show(shapes.to_json(result, said), str(CLI.named(result)))
    return _code(result)


def _code(result: Any) -> int:
    """130 after Ctrl-C (said on stderr; the result says what was done and what was not); 1
    when a change failed or its outcome is unknown (an absent id is no failure); else 0 (a
    plan, a dry run, a listing, a report)."""
    from .. import models as m
    from ..operations.delete import interruption

    if getattr(result, "interrupted", False):
        note = interruption(result) if isinstance(result, m.BatchResult) else "interrupted"
        print(f"{PROG}: {note}", file=sys.stderr)
        return EXIT_INTERRUPTED
    if isinstance(result, m.DeleteResult | m.BatchResult):
        return EXIT_OK if result.done else EXIT_FAILED
    if isinstance(result, m.ProbeResult) and not result.ok:
        return EXIT_INTERRUPTED if result.interrupted else EXIT_FAILED
    if isinstance(result, m.AddResult | m.UpdateResult | m.RestoreResult | m.SyncResult):
        return EXIT_OK if result.ok else EXIT_FAILED
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    if not args.csv:
        return cmd_any(args)
    import os
    import stat
    import tempfile
    from pathlib import Path

    listing, _ = _run(args)
    # EntryList.to_csv writes a file: write a private temporary one, then copy it. Its byte
    # order mark stays only for an empty regular file (> out.csv: Excel then reads UTF-8); a
    # pipe gets none (cut -d, -f1 sees "id"), nor >> onto text (U+FEFF mid-file).
    with tempfile.TemporaryDirectory(prefix="dict-magics-") as folder:
        data = listing.to_csv(Path(folder) / "entries.csv").read_bytes()
    sys.stdout.flush()
    try:
        found = os.fstat(sys.stdout.fileno())
        empty_file = stat.S_ISREG(found.st_mode) and found.st_size == 0
    except (OSError, ValueError, AttributeError):
        empty_file = False
    sys.stdout.buffer.write(data if empty_file else data.removeprefix(b"\xef\xbb\xbf"))
    sys.stdout.buffer.flush()
    return EXIT_OK


def cmd_delete(args: argparse.Namespace) -> int:
    from ..models import BatchResult, DryRunResult
    from ..operations.context import ids_from_bytes

    out: Output = args.output
    args.ids = split_args(args.ids)
    if args.file:
        where = "stdin" if args.file == "-" else repr(args.file)
        args.ids += ids_from_bytes(_read(args.file, "ids"), where)
    if args.retry_failed:
        retry = ids_to_retry(args.retry_failed)
        if not retry and not args.ids:  # nothing left to do: the usual shapes, empty, exit 0
            if out.mode == "jsonl":
                out.line({"summary": {**shapes.summary_json(BatchResult())["summary"], "ok": True}})
            else:
                text = f"Nothing to retry: every result in {args.retry_failed} succeeded."
                out.show(
                    {**shapes.batch_json(BatchResult()), "ok": True}, f"{text} Nothing was sent."
                )
            return EXIT_OK
        args.ids += retry
    if not args.ids:
        raise UsageProblem("no entry ids given: name them, or use --file. Nothing was sent.")
    stream = shapes.JsonlResults(out, _progress(args)) if out.mode == "jsonl" else None
    said: list[str] = []
    try:
        result, said = _run(args, said, progress=stream or _progress(args))
    except KeyboardInterrupt as stopped:
        done = getattr(stopped, "result", None)
        if stream is None or done is None:
            raise
        stream.finish(done, said)  # the --jsonl lines and summary, as a stopped batch gets
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if stream is not None and not isinstance(result, DryRunResult):
        stream.finish(result, said)
        return _code(result)
    return _show(args, result, said)


def cmd_check(args: argparse.Namespace) -> int:
    try:
        args.text = _read(args.file, "the text").decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        where = "stdin" if args.file == "-" else repr(args.file)
        raise UsageProblem(
            f"the text on {where} is not UTF-8 (byte {exc.start}). Nothing was sent."
        ) from None
    return cmd_any(args)


# -- the sandbox and the demo ----------------------------------------------------------------


def cmd_sandbox(argv: list[str]) -> int:
    """Serve the sandbox (``python -m dict_magics.sandbox``) with the remaining arguments."""
    from ..sandbox import main as sandbox_main

    try:
        return sandbox_main(argv, prog=f"{PROG} sandbox")
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or EXIT_OK
        return EXIT_USAGE


def cmd_demo(args: argparse.Namespace) -> int:
    from ..demo import run_demo

    return run_demo(args.output_notebook, force=args.force)


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "login": cmd_login,
    "logout": cmd_logout,
    "profiles": cmd_profiles,
    "status": cmd_status,
    "list": cmd_list,
    "delete": cmd_delete,
    "check": cmd_check,
    "demo": cmd_demo,
}
"""The commands that do more than show their operation's result (``cmd_any``)."""

if __name__ == "__main__":
    raise SystemExit(main())
