"""The audit log loses nothing a dying process had done (issue 22, item 9).

A real ``dict-magics delete`` batch against the sandbox, stopped mid-way by a real signal; the
sandbox's request log says which DELETEs it received, the audit log must have one line for each
(for SIGKILL: for each whose answer had come back, so at most ``workers`` fewer). A full disk is
played with ``RLIMIT_FSIZE``: the kernel refuses writes past the limit (``EFBIG``), part-way
through one, exactly as a full disk does.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dict_magics.sandbox import SandboxServer

WORKERS = 8


def _until_quiet(box: SandboxServer, quiet: float = 1.0, limit: float = 60.0) -> None:
    """Until the sandbox has logged nothing new for ``quiet`` seconds: its handler threads
    finish (and log) the requests already received after the client is gone, later under
    load. A safety limit, not a timing assertion."""
    deadline = time.monotonic() + limit
    seen, since = len(box.requests), time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - since < quiet:
        time.sleep(0.05)
        if len(box.requests) != seen:
            seen, since = len(box.requests), time.monotonic()


def _batch_stopped_by(signum: int, home: Path) -> tuple[int, set[str], list[dict]]:
    """(exit code, ids the sandbox received a DELETE for, audit lines) of a 300-id batch."""
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
        deadline = time.monotonic() + 60  # a safety limit, not a timing assertion
        while len(box.entries) > 240 and time.monotonic() < deadline:
            time.sleep(0.005)
        proc.send_signal(signum)
        proc.communicate(timeout=60)
        _until_quiet(box)  # a DELETE received just before the end is logged once it is done
        # The ids the sandbox received a DELETE for: one refused for its nonce (40005) and
        # re-sent at once with a fresh one is the same request (one result, one line); if the
        # signal came between the two, the refusal is what the service received (a failure).
        received = {r.entry_id for r in box.requests if r.method == "DELETE"}
    audit = home / "audit.jsonl"
    lines = [json.loads(x) for x in audit.read_text("utf-8").splitlines()] if audit.exists() else []
    return proc.returncode, received, lines


@pytest.mark.parametrize(
    ("name", "exit_code"), [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)]
)
def test_a_signal_mid_batch_leaves_one_audit_line_per_delete_received(
    name: str, exit_code: int, tmp_path: Path
) -> None:
    code, received, lines = _batch_stopped_by(getattr(signal, name), tmp_path)
    assert code == exit_code
    assert 0 < len(received) < 300
    assert sorted(line["entry_id"] for line in lines) == sorted(received)  # once each


def test_sigkill_mid_batch_loses_only_the_requests_in_flight(tmp_path: Path) -> None:
    code, received, lines = _batch_stopped_by(signal.SIGKILL, tmp_path)
    assert code == -signal.SIGKILL
    written = [line["entry_id"] for line in lines]
    assert len(written) == len(set(written)) and set(written) <= received
    assert len(received) - WORKERS <= len(written)


_FULL_DISK = r"""
import os, resource, signal, sys
from dict_magics.models import DeleteResult, Entry
from dict_magics.operations.audit import AuditLog
path = sys.argv[1]
NONE = resource.RLIM_INFINITY
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of death, as ENOSPC would be
log = AuditLog(path, flush_every=1)
failed = 0
for i in range(40):
    if i == 10:  # the disk fills up part-way through a line
        resource.setrlimit(resource.RLIMIT_FSIZE, (os.path.getsize(path) + 100, NONE))
    if i == 30:  # space again
        resource.setrlimit(resource.RLIMIT_FSIZE, (NONE, NONE))
    entry = Entry(str(i), "ja", "金曜日" * 5, "en", "FRI")
    result = DeleteResult("success", str(i), 200, entry=entry)
    try:
        log.record(result, profile="default", host="h", operation="delete")
    except OSError:
        failed += 1
log.flush()
print(failed)
"""


def test_a_disk_full_for_a_moment_writes_each_line_once_and_whole(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.touch(mode=0o600)
    _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    assert hard == resource.RLIM_INFINITY or hard > 10**6
    proc = subprocess.run(
        [sys.executable, "-c", _FULL_DISK, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert int(proc.stdout) > 0  # some writes really failed
    raw = path.read_bytes().splitlines()
    ids = [json.loads(line)["entry_id"] for line in raw]  # every line parses: none torn
    assert ids == [str(i) for i in range(40)]
