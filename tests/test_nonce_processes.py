"""Nonces across processes: one access key used by several processes at once never repeats one.

A user runs two ``dict-magics delete -w 8`` batches at the same time (two terminals, two
kernels). The service rejects a nonce it has seen for that access key, so the processes must
hand out distinct values: through a small state file under ``DICT_MAGICS_HOME`` and a file lock.
"""

from __future__ import annotations

import itertools
import logging
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from dict_magics import localdata
from dict_magics.sandbox import SandboxServer
from dict_magics.service import signing
from dict_magics.service.signing import SharedNonceSource, nonces_for


def _run_batches(sandbox: SandboxServer, ranges: list[range]) -> list[subprocess.Popen]:
    env = {**os.environ, **sandbox.env()}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "dict_magics", "delete", "-w", "8", *map(str, ids)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for ids in ranges
    ]
    for proc in procs:
        proc.communicate(timeout=120)
    return procs


def test_two_concurrent_cli_batches_with_one_key_never_reuse_a_nonce() -> None:
    with SandboxServer(600) as sandbox:
        procs = _run_batches(sandbox, [range(1, 301), range(301, 601)])
        log = sandbox.requests
        remaining = sandbox.entries
    replayed = [r for r in log if "nonce already used" in r.outcome]
    assert replayed == [], f"{len(replayed)} of {len(log)} requests reused a nonce"
    assert [p.returncode for p in procs] == [0, 0]
    assert remaining == {}
    nonces = [r.headers["nonce"] for r in log]
    assert len(nonces) == len(set(nonces)) == 602  # each process lists once for its snapshot


def _take(home: str, access_key: str, count: int, start: Any, results: Any) -> None:
    os.environ[localdata.ENV_HOME] = home
    source = SharedNonceSource(access_key)
    start.wait()  # every process begins at once: their requests for blocks interleave
    results.put([int(source()) for _ in range(count)])


@pytest.mark.parametrize("processes", [2, 4])
def test_shared_source_is_distinct_and_increasing_across_processes(processes: int) -> None:
    # 2,000 nonces in all: within what the clock allows (about 1,000 a second, 3 s ahead).
    home, count = os.environ[localdata.ENV_HOME], 2000 // processes
    context = multiprocessing.get_context("fork")
    start, results = context.Barrier(processes), context.Queue()
    workers = [
        context.Process(target=_take, args=(home, "AK-shared", count, start, results))
        for _ in range(processes)
    ]
    for worker in workers:
        worker.start()
    runs = [results.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    everything = [n for run in runs for n in run]
    assert len(set(everything)) == len(everything) == 2000
    for run in runs:
        assert all(a < b for a, b in itertools.pairwise(run))
    assert max(everything) - time.time_ns() // 1_000_000 <= signing.MAX_AHEAD_MS


def test_state_file_is_named_by_a_hash_of_the_key_and_holds_no_key() -> None:
    access_key = "AK-do-not-write-me-anywhere"
    source = SharedNonceSource(access_key)
    issued = [int(source()) for _ in range(5)]
    files = sorted(p.name for p in localdata.home("nonces").iterdir())
    assert files and not any(access_key in name for name in files)
    for path in localdata.home("nonces").iterdir():
        assert access_key not in path.read_text()
        assert path.stat().st_mode & 0o077 == 0
    state = next(p for p in localdata.home("nonces").iterdir() if p.suffix == ".nonce")
    assert int(state.read_text()) >= issued[-1]
    assert access_key not in repr(source)


def test_a_forked_child_never_reuses_its_parents_block() -> None:
    source = SharedNonceSource("AK-fork")
    parent_first = int(source())  # the parent now holds a reserved block
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its nonces and leave at once
        os.write(writer, " ".join(source() for _ in range(20)).encode())
        os._exit(0)
    os.close(writer)
    os.waitpid(pid, 0)
    with os.fdopen(reader) as pipe:
        child = [int(n) for n in pipe.read().split()]
    parent = [parent_first] + [int(source()) for _ in range(20)]
    assert len(child) == 20 and not set(child) & set(parent)


def test_unwritable_data_folder_falls_back_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(localdata.ENV_HOME, str(blocker / "home"))  # cannot become a folder
    monkeypatch.setattr(signing, "_warned", False)
    source = SharedNonceSource("AK-readonly")
    with caplog.at_level(logging.WARNING, logger="dict_magics.service.signing"):
        values = [int(source()) for _ in range(200)]
        again = SharedNonceSource("AK-readonly-2")
        values += [int(again()) for _ in range(5)]
    assert values == sorted(values) and len(set(values)) == len(values)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "cannot keep nonces" in warnings[0].getMessage()


def test_signed_auth_uses_one_shared_source_per_access_key() -> None:
    from dict_magics.service.signing import SignedAuth

    first, second = SignedAuth("AK-a", "s-1"), SignedAuth("AK-a", "s-2")
    assert first._nonces is second._nonces is nonces_for("AK-a")
    assert SignedAuth("AK-b", "s-1")._nonces is not first._nonces


def _state_file(access_key: str) -> Path:
    return localdata.home("nonces") / f"{signing._key_digest(access_key)}.nonce"


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def test_never_more_than_max_ahead_of_the_clock() -> None:
    # Another process has reserved up to just below the limit: this one waits for the clock.
    _state_file("AK-ahead").write_text(f"{_now_ms() + signing.MAX_AHEAD_MS - 20:020d}\n")
    source = SharedNonceSource("AK-ahead", local=signing.NonceSource())
    for _ in range(60):
        value = int(source())
        assert value <= _now_ms() + signing.MAX_AHEAD_MS


def test_a_clock_set_back_does_not_stall_the_source() -> None:
    far = _now_ms() + 3_600_000  # as if the clock had just been set back by an hour
    _state_file("AK-back").write_text(f"{far:020d}\n")
    source = SharedNonceSource("AK-back", local=signing.NonceSource())
    assert [int(source()) for _ in range(3)] == [far + 1, far + 2, far + 3]


def test_a_damaged_state_file_starts_above_anything_reserved() -> None:
    _state_file("AK-damaged").write_text("garbage")
    before = _now_ms()
    value = int(SharedNonceSource("AK-damaged", local=signing.NonceSource())())
    # No process can have reserved beyond its clock + MAX_AHEAD_MS.
    assert value > before + signing.MAX_AHEAD_MS
