"""The write-ahead audit log names every request a dying process may have sent (issue 30).

A real ``dict-magics delete`` batch against the sandbox, stopped mid-way by a real signal at a
jittered moment, several runs each; the sandbox's own request log says which DELETEs it
received, and the audit log must hold a line for every one of them, whatever the signal:
SIGINT, SIGTERM and SIGHUP (the batch stops, waits for what is in flight, notes the outcomes)
and SIGKILL (no chance to note anything after the fact: the "sending" line was on disk before
the request left, and reads as unknown). A full disk is played with ``RLIMIT_FSIZE``.
"""

from __future__ import annotations

import json
import os
import random
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import paired_audit

from dict_magics.sandbox import SandboxServer

WORKERS = 8
RUNS = int(os.environ.get("DICT_MAGICS_SIGNAL_RUNS", "3"))
"""Runs per signal (each at another jittered moment); a stress loop may set one."""
EXIT = {"SIGINT": 130, "SIGTERM": 143, "SIGHUP": 129, "SIGKILL": -signal.SIGKILL}


def _until_quiet(box: SandboxServer, quiet: float = 1.0, limit: float = 60.0) -> None:
    """Until the sandbox has logged nothing new for ``quiet`` seconds: its handler threads log
    the requests already received once they are done, later under load. A safety limit, not a
    timing assertion."""
    deadline = time.monotonic() + limit
    seen, since = len(box.requests), time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - since < quiet:
        time.sleep(0.05)
        if len(box.requests) != seen:
            seen, since = len(box.requests), time.monotonic()


def _batch_stopped_by(signum: int, home: Path, rng: random.Random) -> tuple[int, set[str], list]:
    """(exit code, ids the sandbox received a DELETE for, paired audit lines) of a 300-id batch
    signalled once between 10 and 150 entries are gone, plus up to 30 ms."""
    with SandboxServer(300, latency=0.05) as box:
        env = {**os.environ, **box.env(), "DICT_MAGICS_HOME": str(home)}
        ids = [str(i) for i in range(1, 301)]
        proc = subprocess.Popen(
            [sys.executable, "-m", "dict_magics", "delete", "-w", str(WORKERS), *ids],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        left = 300 - rng.randint(10, 150)
        deadline = time.monotonic() + 60  # a safety limit, not a timing assertion
        while len(box.entries) > left and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(rng.uniform(0, 0.03))
        proc.send_signal(signum)
        proc.communicate(timeout=60)
        _until_quiet(box)
        received = {r.entry_id for r in box.requests if r.method == "DELETE"}
    return proc.returncode, received, paired_audit(home / "audit.jsonl")


@pytest.mark.parametrize("name", list(EXIT))
def test_a_signal_mid_batch_leaves_a_line_for_every_delete_received(
    name: str, tmp_path: Path
) -> None:
    rng = random.Random(f"{name}-{os.getpid()}-{time.time_ns()}")
    for run in range(RUNS):
        code, received, lines = _batch_stopped_by(getattr(signal, name), tmp_path / str(run), rng)
        assert code == EXIT[name], (run, code)
        assert 0 < len(received) < 300, (run, len(received))
        audited = [line["entry_id"] for line in lines]
        assert len(audited) == len(set(audited)), run  # one request, one line once paired
        assert received <= set(audited), (run, sorted(received - set(audited)))
        if name != "SIGKILL":  # stopped in order: everything in flight ended and was noted
            assert set(audited) == received, (run, sorted(set(audited) - received))
            assert not [x for x in lines if x["outcome"] == "unknown"], run


_FULL_DISK = r"""
import os, resource, signal, sys
from dict_magics.models import DeleteResult, Entry
from dict_magics.operations.audit import AuditLog
path = os.path.join(os.environ["DICT_MAGICS_HOME"], "audit.jsonl")
NONE = resource.RLIM_INFINITY
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of death, as ENOSPC would be
said = []
with AuditLog(profile="default", host="h", operation="delete", warn=said.append) as log:
    for i in range(40):
        if i == 10:  # the disk fills up part-way through a line
            resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(path) + 100, NONE))
        if i == 30:  # space again
            resource.setrlimit(resource.RLIMIT_FSIZE, (NONE, NONE))
        entry = Entry(str(i), "ja", "金曜日" * 5, "en", "FRI")
        key = log.sending("DELETE", str(i), [entry])
        log.ended(key, [DeleteResult("success", str(i), http_status=200, entry=entry)])
print(len(said))
"""


def test_a_disk_full_for_a_moment_warns_once_and_tears_no_later_line(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.touch(mode=0o600)
    _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    assert hard == resource.RLIM_INFINITY or hard > 10**6
    proc = subprocess.run(
        [sys.executable, "-c", _FULL_DISK],
        env={**os.environ, "DICT_MAGICS_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert int(proc.stdout) == 1  # one warning, however many lines could not be written
    raw = path.read_bytes().splitlines()
    readable = []
    for line in raw:
        try:
            readable.append(json.loads(line))
        except ValueError:
            continue
    assert len(raw) - len(readable) <= 1  # at most the line the disk cut short
    ids = {x["entry_id"] for x in readable}
    assert {str(i) for i in range(10)} | {str(i) for i in range(30, 40)} <= ids
