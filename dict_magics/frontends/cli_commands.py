"""The ``dict-magics`` commands: parse nothing, decide nothing, call one operation, show it.

Each ``cmd_*`` takes the parsed arguments (with ``args.output``, where the answer goes) and
returns the exit code: 0 when everything succeeded, 1 when something failed or its outcome is
unknown, 2 for a user's mistake (raised as ``DictMagicsError``; ``cli.main`` prints it). Heavy
modules (requests, keyring) load only inside the commands that need them.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageProblem
from ..models.secret import Secret
from ..operations.context import OperationSettings, split_args
from .cli_input import (
    ids_to_retry,
    is_terminal,
    prompter,
    read_ids_file,
    read_text_file,
    stdin_line,
)
from .cli_output import (
    Output,
    add_json,
    audit_json,
    batch_json,
    dryrun_json,
    export_json,
    listing_json,
    no_change_json,
    preview_json,
    restore_json,
    snapshot_json,
    summary_json,
    sync_json,
    update_json,
)
from .cli_progress import JsonlResults, LogProgress, Tee
from .hints import CLI

if TYPE_CHECKING:
    from ..models import EntryList
    from ..operations.context import ProgressSink

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "PROG",
    "cmd_add",
    "cmd_check",
    "cmd_delete",
    "cmd_demo",
    "cmd_export",
    "cmd_lint",
    "cmd_list",
    "cmd_log",
    "cmd_login",
    "cmd_logout",
    "cmd_profiles",
    "cmd_purge",
    "cmd_restore",
    "cmd_sandbox",
    "cmd_snapshots",
    "cmd_status",
    "cmd_sync",
    "cmd_update",
]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
PROG = "dict-magics"
SETTINGS = ("profile", "base_url", "timeout", "max_retries", "workers", "auth")


# -- shared glue -------------------------------------------------------------------------------


def _settings(args: argparse.Namespace) -> OperationSettings:
    """The options this command has, on top of the defaults in ``dict_magics.settings``."""
    given = vars(args)
    chosen: dict[str, Any] = {name: given[name] for name in SETTINGS if name in given}
    if "no_snapshot" in given:
        chosen["snapshots"] = not given["no_snapshot"]
    return OperationSettings(**chosen)


def _output(args: argparse.Namespace) -> Output:
    return args.output


def _warnings() -> tuple[list[str], Callable[[str], None]]:
    """A list that collects the operation's warnings, and the ``warn`` that also prints them."""
    said: list[str] = []

    def warn(message: str) -> None:
        message = CLI.worded(message)
        said.append(message)
        print(f"{PROG}: warning: {message}", file=sys.stderr, flush=True)

    return said, warn


def _progress(args: argparse.Namespace) -> ProgressSink | None:
    """A redrawn bar on a terminal, a line every few seconds in a log, nothing with --quiet."""
    if args.quiet or sys.stderr is None:
        return None
    if is_terminal(sys.stderr):
        from .progress import BarSink

        return BarSink(stream=sys.stderr)
    return LogProgress(sys.stderr, args.progress_every)


# -- credentials -------------------------------------------------------------------------------


def cmd_login(args: argparse.Namespace) -> int:
    """Store a profile in the keyring, asking for what the options did not give."""
    from ..operations.login import login

    settings = _settings(args)
    secret = None
    if not is_terminal(sys.stdin):
        secret = Secret(stdin_line("the secret key"))
    hint = ": give --base-url and --access-key, and pipe the secret key on stdin"
    done = login(
        settings,
        prompter(hint),
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
    _output(args).show(data, "\n".join(done.lines))
    return EXIT_OK


def cmd_logout(args: argparse.Namespace) -> int:
    """Remove the profile's keyring items."""
    from ..operations.login import logout

    done = logout(_settings(args))
    data = {"profile": done.profile, "removed": list(done.removed)}
    _output(args).show(data, "\n".join(done.lines))
    return EXIT_OK


def cmd_profiles(args: argparse.Namespace) -> int:
    """The profiles stored in the keyring: name, base URL, masked access key; never a secret."""
    from ..profiles import credentials, registry

    info = credentials.backend_info()
    if not info.available:
        # No keyring: nothing can be stored, so none is; an empty list, not an error (exit 0).
        _output(args).show(
            {"profiles": [], "keyring_backend": info.name, "keyring_available": False},
            "No keyring on this system: no stored profiles. To store profiles, install and "
            f"unlock a keyring (e.g. gnome-keyring), then `{PROG} login`; without one, a "
            "single set of credentials can come from DICT_MAGICS_ACCESS_KEY / "
            "DICT_MAGICS_SECRET_KEY / DICT_MAGICS_BASE_URL.",
        )
        return EXIT_OK
    found = registry.stored_profiles()
    backend = info.name
    data = {
        "profiles": [
            {
                "name": p.name,
                "base_url": p.base_url,
                "access_key": p.masked_access_key,
                "complete": p.complete,
                "missing": p.missing,
                "default": p.default,
            }
            for p in found
        ],
        "keyring_backend": backend,
        "keyring_available": True,
    }
    if not found:
        text = f"No profile is stored in the keyring ({backend}): run `{PROG} login`."
    else:
        rows = [f"{len(found)} stored profile{'s' if len(found) != 1 else ''} ({backend}):"]
        width = max(len(p.name) for p in found)
        for p in found:
            mark = "*" if p.default else " "
            line = f"{mark} {p.name:<{width}}  {p.base_url or '(no base URL)'}"
            line += f"  access key {p.masked_access_key or '(none)'}"
            if not p.complete:
                line += f"  (incomplete: no {', '.join(p.missing)})"
            rows.append(line)
        rows.append("* the profile used when none is named")
        text = "\n".join(rows)
    _output(args).show(data, text)
    return EXIT_OK


def _check(settings: OperationSettings) -> dict[str, Any]:
    """One read-only request (the listing) that says whether the credentials work."""
    from ..operations.check import check_credentials

    found = check_credentials(settings)
    data: dict[str, Any] = {
        "works": found.works,
        "message": found.message,
        "http_status": found.http_status,
    }
    if found.entries is not None:
        data["entries"] = found.entries
    return data


def cmd_status(args: argparse.Namespace) -> int:
    """Where requests would go and with which key; with --check, one listing to prove it."""
    from ..operations.status import status
    from ..render.status import status_text

    settings = _settings(args)
    found = status(settings).worded(CLI.worded)
    backend = found.backend
    data: dict[str, Any] = {
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
    text = status_text(found)
    code = EXIT_OK if found.ready else EXIT_USAGE
    if args.check and found.ready:
        check = _check(settings)
        data["check"] = check
        symbol = "\u2713" if check["works"] else "\u2717" if check["works"] is False else "?"
        text += f"\n{symbol} {check['message']}"
        code = EXIT_OK if check["works"] else EXIT_FAILED
    _output(args).show(data, text)
    return code


# -- the dictionary ----------------------------------------------------------------------------


def _csv_to_stdout(listing: EntryList) -> None:
    """``EntryList.to_csv`` writes a file: write it to a private temporary one, then copy.

    Its byte order mark stays only when stdout is an empty regular file (``> out.csv``: Excel
    then reads it as UTF-8); a pipe or a terminal gets none, so ``cut -d, -f1`` sees ``id``,
    and neither does ``>>`` onto a file holding text (mid-file it would glue U+FEFF to a cell)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="dict-magics-") as folder:
        data = listing.to_csv(Path(folder) / "entries.csv").read_bytes()
    sys.stdout.flush()
    if not _empty_file(sys.stdout):
        data = data.removeprefix(b"\xef\xbb\xbf")
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _empty_file(stream: Any) -> bool:
    """Whether ``stream`` writes to an empty regular file (not a pipe, terminal or socket, nor
    a file ``>>`` appends to after its text)."""
    try:
        found = os.fstat(stream.fileno())
        return stat.S_ISREG(found.st_mode) and found.st_size == 0
    except (OSError, ValueError, AttributeError):
        return False


def cmd_list(args: argparse.Namespace) -> int:
    """The dictionary's entries, filtered; exit 1 where the service cannot list them."""
    from ..operations.listing import list_entries

    listing = list_entries(
        _settings(args), match=args.match, from_lang=args.from_lang, to_lang=args.to_lang
    )
    if args.csv:
        _csv_to_stdout(listing)
    else:
        _output(args).show(listing_json(listing), str(listing))
    return EXIT_OK


def _ids(args: argparse.Namespace) -> tuple[list[str], list[str] | None]:
    """The ids typed, read from --file, and (second) the ids --retry-failed picked, if given."""
    ids = split_args(args.ids)
    if args.file:
        ids += read_ids_file(args.file)
    retry = ids_to_retry(args.retry_failed) if args.retry_failed else None
    return ids, retry


def _nothing_to_retry(args: argparse.Namespace) -> int:
    """A saved result with nothing left to do: the usual shapes, empty, and exit 0."""
    from ..models import BatchResult

    out = _output(args)
    if out.mode == "jsonl":
        summary = summary_json(BatchResult())
        summary["summary"]["ok"] = True
        out.line(summary)
    else:
        text = f"Nothing to retry: every result in {args.retry_failed} succeeded. Nothing was sent."
        out.show({**batch_json(BatchResult()), "ok": True}, text)
    return EXIT_OK


def cmd_delete(args: argparse.Namespace) -> int:
    """Delete one entry or several; every id is checked before the first request."""
    from ..models import DryRunResult
    from ..operations.delete import delete, interruption

    ids, retry = _ids(args)
    if retry is not None:
        if not retry and not ids:
            return _nothing_to_retry(args)
        ids += retry
    if not ids:
        raise UsageProblem("no entry ids given: name them, or use --file. Nothing was sent.")
    out = _output(args)
    said, warn = _warnings()
    stream = JsonlResults(out) if out.mode == "jsonl" else None
    sinks = [s for s in (_progress(args), stream) if s is not None]
    progress = Tee(*sinks) if sinks else None
    try:
        result = delete(_settings(args), ids, progress=progress, dry_run=args.dry_run, warn=warn)
    except KeyboardInterrupt as stopped:
        done = getattr(stopped, "result", None)
        if stream is None or done is None:
            raise
        stream.finish(done, said)  # the --jsonl lines and summary, as a stopped batch gets
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if isinstance(result, DryRunResult):
        out.show(dryrun_json(result), str(result))
        return EXIT_OK
    if stream is not None:
        stream.finish(result, said)
    else:
        out.show(batch_json(result, said), str(replace(result, names=CLI.names)))
    note = interruption(result)
    if note:
        print(f"{PROG}: {note}", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_OK if result.done else EXIT_FAILED  # an absent id is no failure


def cmd_purge(args: argparse.Namespace) -> int:
    """Delete every entry, after a typed confirmation or ``--yes``."""
    from ..models import DryRunResult
    from ..operations.purge import purge

    said, warn = _warnings()
    result = purge(
        _settings(args), prompter=prompter(), yes=args.yes, dry_run=args.dry_run, warn=warn
    )
    out = _output(args)
    if isinstance(result, DryRunResult):
        out.show(dryrun_json(result), str(result))
        return EXIT_OK
    out.show(batch_json(result, said), str(replace(result, names=CLI.names)))
    return EXIT_OK if result.ok else EXIT_FAILED


def cmd_restore(args: argparse.Namespace) -> int:
    """Put back what a snapshot holds and the service lacks."""
    from ..operations.restore import restore

    said, warn = _warnings()
    result = restore(
        _settings(args),
        args.snapshot,
        prompter=prompter(),
        progress=_progress(args),
        dry_run=args.dry_run,
        yes=args.yes,
        warn=warn,
    )
    return _shown(args, result, restore_json, said)


def _shown(
    args: argparse.Namespace, result: Any, as_json: Callable[[Any], dict[str, Any]], said: list[str]
) -> int:
    """Show a change's result (a preview of a dry run as it is) with the warnings said; exit 0
    only when it succeeded, or when there was nothing to change."""
    from ..models import ChangePreview, NoChange

    if isinstance(result, ChangePreview):
        _output(args).show(preview_json(result), str(result))
        return EXIT_OK
    if isinstance(result, NoChange):
        _output(args).show({**no_change_json(result), "warnings": said}, str(result))
        return EXIT_OK
    _output(args).show({**as_json(result), "warnings": said}, str(result))
    return EXIT_OK if result.ok else EXIT_FAILED


# -- glossary: add, update, sync, export -------------------------------------------------------


def cmd_add(args: argparse.Namespace) -> int:
    """Add one entry (checked first); the result names the new id."""
    from ..operations.add import add

    said, warn = _warnings()
    result = add(
        _settings(args),
        args.from_lang,
        args.from_text,
        args.to_lang,
        args.to_text,
        dry_run=args.dry_run,
        warn=warn,
    )
    return _shown(args, result, add_json, said)


def cmd_update(args: argparse.Namespace) -> int:
    """Change one entry in place; its old terms go into a snapshot first."""
    from ..operations.update import update

    said, warn = _warnings()
    result = update(
        _settings(args),
        args.id,
        from_lang=args.from_lang,
        from_text=args.from_text,
        to_lang=args.to_lang,
        to_text=args.to_text,
        dry_run=args.dry_run,
        warn=warn,
    )
    return _shown(args, result, update_json, said)


def cmd_sync(args: argparse.Namespace) -> int:
    """The plan (exit 0), or the plan applied (exit 0 only when every change is verified)."""
    from ..models import SyncPlan
    from ..operations.sync import sync

    said, warn = _warnings()
    result = sync(
        _settings(args),
        args.file,
        apply=args.apply,
        delete_missing=args.delete_missing,
        pair=args.pair,
        format=args.format,
        sheet=args.sheet,
        skip_invalid=args.skip_invalid,
        yes=args.yes,
        prompter=prompter(),
        progress=_progress(args),
        warn=warn,
    )
    shown = replace(result, names=CLI.names) if isinstance(result, SyncPlan) else result
    _output(args).show({**sync_json(result), "warnings": said}, str(shown))
    if isinstance(result, SyncPlan):
        return EXIT_OK
    return EXIT_OK if result.ok else EXIT_FAILED


def cmd_export(args: argparse.Namespace) -> int:
    """Write the dictionary to a glossary file."""
    from ..operations.export import export

    result = export(_settings(args), args.file, format=args.format, overwrite=args.force)
    _output(args).show(export_json(result), str(result))
    return EXIT_OK


def cmd_lint(args: argparse.Namespace) -> int:
    """What is wrong in the dictionary; exit 0 whatever it finds (1 only when the listing
    cannot be had)."""
    from ..operations.lint import lint

    report = lint(_settings(args))
    _output(args).show(report.to_json(), str(report))
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    """Which entries apply to each sentence of a text file (or stdin)."""
    from ..operations.textcheck import check_text

    text = read_text_file(args.file)
    report = check_text(_settings(args), text, from_lang=args.from_lang, to_lang=args.to_lang)
    _output(args).show(report.to_json(), str(report))
    return EXIT_OK


# -- local records -----------------------------------------------------------------------------


def cmd_snapshots(args: argparse.Namespace) -> int:
    """The snapshots on disk, newest first (of one profile with -p)."""
    from ..operations.history import snapshots

    infos = snapshots(profile=args.profile)
    data = {"snapshots": [snapshot_json(i) for i in infos]}
    _output(args).show(data, str(infos))
    return EXIT_OK


def cmd_log(args: argparse.Namespace) -> int:
    """The last lines of the audit log, oldest first."""
    from ..operations.history import audit

    lines = audit(args.n)
    data = {"lines": [audit_json(line) for line in lines], "skipped": lines.skipped}
    _output(args).show(data, str(lines))
    return EXIT_OK


# -- the sandbox and the demo ------------------------------------------------------------------


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
    """Run the quickstart notebook headlessly against an embedded sandbox."""
    from ..demo import run_demo

    return run_demo(args.output_notebook)
