"""A signal during one mutating request never leaves a request the service acted on unaudited.

Real processes against the sandbox: the request is held by the sandbox (a ``hang`` fault) until
the signal has arrived, so the service acts on it and its answer comes back after the signal.
The audit log must then hold the request's line, and the command must say what happened,
whatever the process's Ctrl-C handling: Python's own, ignored (a background job of a script,
stopped with SIGTERM), the default action (``SIG_DFL``), or a handler of the program's own
that ends it with ``SystemExit``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import paired_audit

from dict_magics.sandbox import SandboxServer

HELD = 3.0  # seconds the sandbox holds the request: the signal lands meanwhile


def _stopped_mid_request(
    argv: list[str],
    method: str,
    signum: int,
    home: Path,
    preexec: Callable[[], object] | None = None,
    no_listing: bool = False,
) -> tuple[int, str, list[dict], SandboxServer]:
    """(exit code, output, audit lines, sandbox) of ``argv`` signalled while the sandbox holds
    its ``method`` request (``no_listing``: the first listing answers 404, a warning)."""
    with SandboxServer(10) as box:
        if no_listing:
            box.inject("status", 1, status=404, method="GET")
        box.inject("hang", delay=HELD, method=method)
        proc, _ = _started(argv, box, home, method, preexec)
        assert proc.poll() is None
        proc.send_signal(signum)
        out, _ = proc.communicate(timeout=60)
    audit = home / "audit.jsonl"
    lines = paired_audit(audit)
    return proc.returncode, out, lines, box


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "dict_magics", *args]


def _started(
    argv: list[str],
    box: SandboxServer,
    home: Path,
    method: str,
    preexec: Callable[[], object] | None = None,
) -> tuple[subprocess.Popen[str], float]:
    """``argv`` started against ``box`` (its output merged), once the sandbox holds its first
    ``method`` request; with the safety deadline (not a timing assertion) the caller goes on
    with."""
    proc = subprocess.Popen(
        argv,
        env={**os.environ, **box.env(), "DICT_MAGICS_HOME": str(home)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=preexec,
    )
    deadline = time.monotonic() + 60
    while not any(r.method == method for r in box.requests):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return proc, deadline


def _ignore_ctrl_c() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a shell starts a background job


def test_sigterm_to_a_background_delete_audits_and_shows_the_request(tmp_path: Path) -> None:
    """``dict-magics delete 7 &`` from a script (Ctrl-C ignored), then ``kill``: the DELETE the
    service acted on is shown and audited, not lost to a KeyboardInterrupt mid-request."""
    code, out, lines, box = _stopped_mid_request(
        _cli("delete", "7"), "DELETE", signal.SIGTERM, tmp_path, _ignore_ctrl_c
    )
    assert "7" not in box.entries
    assert code == 128 + signal.SIGTERM
    assert [(x["entry_id"], x["outcome"]) for x in lines] == [("7", "success")]
    assert "deleted 7" in out


def test_ctrl_c_still_ignored_by_a_background_delete(tmp_path: Path) -> None:
    """Ctrl-C ignored before the request stays ignored during it: the delete goes on."""
    code, out, lines, box = _stopped_mid_request(
        _cli("delete", "7"), "DELETE", signal.SIGINT, tmp_path, _ignore_ctrl_c
    )
    assert code == 0 and "7" not in box.entries and "interrupted" not in out
    assert [(x["entry_id"], x["outcome"]) for x in lines] == [("7", "success")]


@pytest.mark.parametrize(
    ("method", "args", "operation"),
    [
        ("POST", ("add", "en", "hello", "ja", "konnichiwa"), "add"),
        ("PUT", ("update", "3", "--to-text", "CHANGED"), "update"),
    ],
)
def test_ctrl_c_during_one_add_or_update_audits_and_shows_it(
    method: str, args: tuple[str, ...], operation: str, tmp_path: Path
) -> None:
    code, out, lines, box = _stopped_mid_request(_cli(*args), method, signal.SIGINT, tmp_path)
    assert code == 130
    acted = ("en", "hello", "ja", "konnichiwa") in box.terms or box.entries["3"].to_text == (
        "CHANGED"
    )
    assert acted
    assert [(x["operation"], x["outcome"]) for x in lines] == [(operation, "success")]
    assert ("added" if operation == "add" else "updated entry 3") in out


_PROGRAM = r"""
import signal, sys
if sys.argv[1] == "default":
    signal.signal(signal.SIGINT, signal.SIG_DFL)
else:
    signal.signal(signal.SIGINT, lambda signum, frame: sys.exit(3))
from dict_magics.operations.context import OperationSettings
from dict_magics.operations.delete import delete
delete(OperationSettings(), ["7"])
"""


@pytest.mark.parametrize(("handling", "exit_code"), [("default", 1), ("exits", 3)])
def test_a_program_of_its_own_ctrl_c_handling_gets_its_delete_audited(
    handling: str, exit_code: int, tmp_path: Path
) -> None:
    """A program that set SIGINT to ``SIG_DFL``, or to a handler that calls ``sys.exit``: the
    process ends once the DELETE's line is written (before, it died with the DELETE unaudited)."""
    code, _, lines, box = _stopped_mid_request(
        [sys.executable, "-c", _PROGRAM, handling], "DELETE", signal.SIGINT, tmp_path
    )
    assert "7" not in box.entries
    assert code == exit_code
    assert [(x["entry_id"], x["outcome"]) for x in lines] == [("7", "success")]


def test_ctrl_c_again_and_again_during_one_delete_loses_no_line(tmp_path: Path) -> None:
    """Ctrl-C five times while the service holds the DELETE: its line is written (before it
    left, then with its outcome) and the deletion is shown."""
    with SandboxServer(10) as box:
        box.inject("hang", delay=1.0, method="DELETE")
        proc, _ = _started(_cli("delete", "7"), box, tmp_path, "DELETE")
        for _ in range(5):
            proc.send_signal(signal.SIGINT)
            time.sleep(0.1)
        out, _ = proc.communicate(timeout=60)
    assert "7" not in box.entries
    assert proc.returncode == 130 and "deleted 7" in out
    lines = paired_audit(tmp_path / "audit.jsonl")
    assert [(x["entry_id"], x["outcome"]) for x in lines] == [("7", "success")]


@pytest.mark.parametrize(
    ("args", "method", "outcome", "shown"),
    [
        # A DELETE with no answer in time: Ctrl-C during the listing that would settle it.
        (("delete", "--timeout", "1", "--max-retries", "0", "7"), "DELETE", "unknown", "7"),
        # An add answered: Ctrl-C during the listing that names its new id.
        (("add", "en", "hello", "ja", "konnichiwa"), "POST", "success", "added"),
    ],
)
def test_ctrl_c_during_the_listing_after_a_request_audits_and_shows_it(
    args: tuple[str, ...], method: str, outcome: str, shown: str, tmp_path: Path
) -> None:
    """The request went; the listing after it (to settle or name it) is slow, and Ctrl-C ends
    the wait: the request is audited as it stood (a lost answer stays unknown) and shown.
    Before: no audit line, and only "interrupted"."""
    with SandboxServer(10) as box:
        box.inject("hang", delay=HELD, method=method)
        proc, deadline = _started(_cli(*args), box, tmp_path, method)
        box.inject("hang", delay=30, method="GET")  # the listing after: slow
        while sum(r.method == "GET" for r in box.requests) < 2:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    audit = tmp_path / "audit.jsonl"
    lines = paired_audit(audit)
    assert proc.returncode == 130
    assert [x["outcome"] for x in lines] == [outcome]
    assert shown in out.split("interrupted")[0]


def test_ctrl_c_during_one_delete_with_jsonl_prints_result_lines_and_a_summary(
    tmp_path: Path,
) -> None:
    """``--jsonl`` keeps its shape when Ctrl-C stops a one-id delete: a line for the result,
    then the summary (before: one ``--json``-shaped document, no summary line), which holds the
    warnings said before the Ctrl-C (before: none)."""
    code, out, lines, _ = _stopped_mid_request(
        _cli("delete", "--jsonl", "7"), "DELETE", signal.SIGINT, tmp_path, no_listing=True
    )
    assert code == 130
    printed = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [(x["entry_id"], x["outcome"]) for x in printed[:-1]] == [("7", "success")]
    assert "summary" in printed[-1] and printed[-1]["summary"]["deleted"] == 1
    assert any("offers no listing" in w for w in printed[-1]["summary"]["warnings"]), out
    assert [(x["entry_id"], x["outcome"]) for x in lines] == [("7", "success")]
