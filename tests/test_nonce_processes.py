"""Nonces across processes: one access key used by several processes at once never repeats one.

A user runs two ``dict-magics delete -w 8`` batches at the same time (two terminals, two
kernels). The service refuses a nonce not greater than the last one it accepted for that access
key, so the processes draw one value at a time, above every other's: through a small state file
under ``DICT_MAGICS_HOME`` and a file lock.
"""

from __future__ import annotations

import itertools
import logging
import multiprocessing
import os
import stat
import subprocess
import sys
import threading
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
    refused = [r for r in log if r.code == 40005]  # overtaken on another connection: re-sent
    assert [p.returncode for p in procs] == [0, 0]
    assert remaining == {}
    nonces = [r.headers["nonce"] for r in log]
    # each process lists once for its snapshot; no nonce is ever sent twice
    assert len(nonces) == len(set(nonces)) == 602 + len(refused)
    assert all(r.code in (None, 40005) for r in log)


def _take(home: str, access_key: str, count: int, start: Any, results: Any) -> None:
    os.environ[localdata.ENV_HOME] = home
    source = SharedNonceSource(access_key)
    start.wait()  # every process begins at once: their draws interleave
    results.put([int(source()) for _ in range(count)])


@pytest.mark.parametrize("processes", [2, 4])
def test_shared_source_is_distinct_and_increasing_across_processes(processes: int) -> None:
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
    # Drawn one at a time under the file lock: the state file holds the largest of them all.
    state = _state_file("AK-shared")
    assert int(state.read_bytes()) == max(everything)


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
    from dict_magics.service.auth import SignatureAuth

    first, second = SignedAuth("AK-a", "s-1"), SignedAuth("AK-a", "s-2")
    assert first._nonces is second._nonces is nonces_for("AK-a")
    assert SignedAuth("AK-b", "s-1")._nonces is not first._nonces


def _state_file(access_key: str) -> Path:
    return localdata.home("nonces") / f"{signing._key_digest(access_key)}.nonce"


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def test_values_go_on_from_a_state_ahead_of_the_clock() -> None:
    # Another process drew values ahead of the clock (many draws a millisecond, or a clock set
    # back since): the service took them, so nothing below them may follow.
    far = _now_ms() + 30_000
    _state_file("AK-back").write_text(f"{far:020d}\n")
    source = SharedNonceSource("AK-back", local=signing.NonceSource())
    assert [int(source()) for _ in range(3)] == [far + 1, far + 2, far + 3]


def test_a_damaged_state_file_restarts_from_the_clock(caplog: pytest.LogCaptureFixture) -> None:
    for damage in ("garbage", f"{signing.MAX_NONCE + 5}"):
        key = f"AK-damaged-{len(damage)}"
        _state_file(key).write_text(damage)
        before = _now_ms()
        with caplog.at_level(logging.WARNING, logger="dict_magics.service.signing"):
            value = int(SharedNonceSource(key, local=signing.NonceSource())())
        assert before <= value <= _now_ms() + 1000
        assert int(_state_file(key).read_bytes()) == value
    assert len([m for m in _warnings(caplog) if "damaged" in m]) == 2


def _first_nonce(source: SharedNonceSource) -> int:
    """``source()`` in a thread: a source that never answers fails the test, not hangs it."""
    box: list[str] = []
    thread = threading.Thread(target=lambda: box.append(source()), daemon=True)
    thread.start()
    thread.join(30)
    assert box, "no nonce came: the source hangs"
    return int(box[0])


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_a_long_damaged_state_file_is_rewritten_clean_and_the_source_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    state = _state_file("AK-long-garbage")
    state.write_bytes(b"not a number, and longer than the 21 bytes of a value")
    source = SharedNonceSource("AK-long-garbage", local=signing.NonceSource())
    with caplog.at_level(logging.WARNING, logger="dict_magics.service.signing"):
        first = _first_nonce(source)
        values = [first] + [int(source()) for _ in range(100)]
    assert all(a < b for a, b in itertools.pairwise(values))
    content = state.read_bytes()
    assert len(content) == 21 and int(content) >= values[-1]
    assert source._shared  # still shared with other processes
    assert [m for m in _warnings(caplog) if "damaged" in m] != []


def test_a_far_future_state_is_honoured_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    year = 365 * 86_400_000  # written while the clock was a year ahead (a bad RTC, a VM resume)
    state = _state_file("AK-far")
    state.write_text(f"{_now_ms() + year:020d}\n")
    source = SharedNonceSource("AK-far", local=signing.NonceSource())
    with caplog.at_level(logging.WARNING, logger="dict_magics.service.signing"):
        values = [int(source()) for _ in range(5)]
    # The service accepted values up there: going back below them would be refused (40005)
    # until the clock caught up, a year from now.
    assert min(values) > _now_ms() + year - 60_000
    assert len([m for m in _warnings(caplog) if "ahead of this computer's clock" in m]) == 1


def test_a_symbolic_link_in_the_state_files_place_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own file\n")
    _state_file("AK-link").symlink_to(victim)
    monkeypatch.setattr(signing, "_warned", False)
    source = SharedNonceSource("AK-link", local=signing.NonceSource())
    with caplog.at_level(logging.WARNING, logger="dict_magics.service.signing"):
        values = [_first_nonce(source)] + [int(source()) for _ in range(5)]
    assert victim.read_text() == "the user's own file\n"
    assert all(a < b for a, b in itertools.pairwise(values))
    warnings = _warnings(caplog)
    assert len(warnings) == 1 and "symbolic link" in warnings[0], warnings


def test_a_fifo_in_the_state_files_place_falls_back(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    os.mkfifo(_state_file("AK-fifo"), 0o600)  # reading it would wait for a writer for ever
    monkeypatch.setattr(signing, "_warned", False)
    source = SharedNonceSource("AK-fifo", local=signing.NonceSource())
    with caplog.at_level(logging.WARNING, logger="dict_magics.service.signing"):
        _first_nonce(source)
    warnings = _warnings(caplog)
    assert len(warnings) == 1 and "not a regular file" in warnings[0], warnings


def test_a_lock_held_elsewhere_falls_back_within_the_time_bound(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from filelock import FileLock

    monkeypatch.setattr(signing, "RESERVE_TIMEOUT_S", 0.1)
    monkeypatch.setattr(signing, "_warned", False)
    source = SharedNonceSource("AK-held", local=signing.NonceSource())
    held = FileLock(localdata.home("nonces") / f"{signing._key_digest('AK-held')}.lock")
    with held, caplog.at_level(logging.WARNING, logger="dict_magics.service.signing"):
        _first_nonce(source)
    assert not source._shared
    assert len(_warnings(caplog)) == 1


def test_the_first_use_makes_the_data_folder_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "not-yet" / "dm"
    monkeypatch.setenv(localdata.ENV_HOME, str(home))
    old = os.umask(0o022)
    try:
        SharedNonceSource("AK-fresh")()
    finally:
        os.umask(old)
    for folder in (home.parent, home, home / "nonces"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


_INTERRUPTED_CHILD = """
import sys, time
from dict_magics.service.signing import SharedNonceSource
source = SharedNonceSource("interrupted-key")
print("ready", flush=True)
end = time.monotonic() + 3


def spin():
    while time.monotonic() < end:
        try:
            with source.lease():
                pass
        except BaseException:  # noqa: BLE001
            pass  # a kernel lives on after Ctrl-C (filelock groups two quick ones)


while True:
    try:
        spin()
        break
    except BaseException:  # noqa: BLE001
        pass  # one that landed on the loop itself
try:
    source()  # the next cell's first request
except BaseException:  # noqa: BLE001
    pass
print("done", flush=True)
sys.stdin.readline()
"""


def _other_process_shares(access_key: str) -> bool:
    code = (
        "from dict_magics.service import signing\n"
        "signing.RESERVE_TIMEOUT_S = 1.0\n"
        f"s = signing.SharedNonceSource({access_key!r}); s()\n"
        "print(s._shared)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    return out.stdout.strip() == "True"


def test_ctrl_c_while_drawing_never_leaves_the_file_lock_held() -> None:
    """Ctrl-C (SIGINT) landing anywhere in a draw, even inside the file lock's own release,
    in a process that lives on (a kernel): after its next draw, other processes still share
    the nonces instead of timing out on a lock nobody uses."""
    import random
    import signal

    child = subprocess.Popen(
        [sys.executable, "-c", _INTERRUPTED_CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "ready"
        for _ in range(200):
            time.sleep(random.uniform(0.001, 0.008))
            child.send_signal(signal.SIGINT)
        assert child.stdout.readline().strip() == "done"
        assert _other_process_shares("interrupted-key")
        child.stdin.write("\n")
        child.stdin.flush()
    finally:
        child.wait(timeout=60)


def test_a_hold_left_by_an_interrupted_release_is_released_at_the_next_draw() -> None:
    source = SharedNonceSource("left-held-key")
    source()
    source._locked().acquire()  # what a release cut short by Ctrl-C leaves behind
    source()
    assert _other_process_shares("left-held-key")
