"""Signatures and nonces: known answers, and nonces that increase per access key across the
threads and processes of this machine (one state file a key, read and written under flock)."""

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
import requests

from dict_magics import localdata
from dict_magics.sandbox import SandboxServer
from dict_magics.sandbox.checks import sign
from dict_magics.service.http import NonceSource, SignatureAuth, nonces_for


def test_rfc4231_case_2() -> None:
    # HMAC-SHA256("Jefe", "what do ya want for nothing?"), split into nonce + path.
    assert (
        sign("ya want for nothing?", "Jefe", "what do ")
        == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    )


def test_known_answers_computed_with_openssl() -> None:
    # printf '%s' "<nonce><path>" | openssl dgst -sha256 -hmac "<secret>"
    assert (
        sign("/api/v1/dictionary/42", "secret", "1700000000000")
        == "90ac102d9b9aca90c4bbeef22ece4062ef8d509f2bd05d5af877e51168d56b32"
    )
    assert (
        sign("/api/v1/dictionary/dictionary-all", "s3cr3t-Ключ", "1700000000001")
        == "539acd91aedd81a500fdbadf2dad990efeff51b0706f3d7faad2026dc2dd24fe"
    )


def test_auth_signs_the_prepared_path_exactly_and_hides_the_secret() -> None:
    nonces = iter(["111", "112"])
    auth = SignatureAuth("AK", "very-secret-value", lambda: next(nonces))
    prepared = requests.Request("DELETE", "http://127.0.0.1:1/api/v1/dictionary/42", auth=auth)
    headers = prepared.prepare().headers
    assert (headers["accessKey"], headers["nonce"]) == ("AK", "111")
    assert headers["Content-Type"] == "application/json"
    assert headers["signature"] == sign("/api/v1/dictionary/42", "very-secret-value", "111")
    assert "very-secret-value" not in repr(auth) + repr(vars(auth)) + str(headers)


def test_nonces_are_unix_milliseconds_strictly_increasing_across_threads() -> None:
    source = NonceSource("AK-threads")
    seen: list[list[int]] = [[] for _ in range(8)]
    before = time.time_ns() // 1_000_000
    threads = [
        threading.Thread(target=lambda b=b: b.extend(int(source()) for _ in range(500)))
        for b in seen
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    everything = [n for bucket in seen for n in bucket]
    assert len(set(everything)) == len(everything) == 4000
    assert all(bucket == sorted(bucket) for bucket in seen)
    assert before <= min(everything) and max(everything) <= time.time_ns() // 1_000_000 + 5000


def _take(home: str, count: int, start: Any, results: Any) -> None:
    os.environ[localdata.ENV_HOME] = home
    source = NonceSource("AK-shared")
    start.wait()  # every process begins at once: their draws interleave
    results.put([int(source()) for _ in range(count)])


@pytest.mark.parametrize("processes", [2, 4])
def test_distinct_and_increasing_across_processes(processes: int) -> None:
    home, count = os.environ[localdata.ENV_HOME], 2000 // processes
    context = multiprocessing.get_context("fork")
    start, results = context.Barrier(processes), context.Queue()
    workers = [
        context.Process(target=_take, args=(home, count, start, results)) for _ in range(processes)
    ]
    for worker in workers:
        worker.start()
    runs = [results.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    everything = [n for run in runs for n in run]
    assert len(set(everything)) == len(everything) == 2000
    assert all(all(a < b for a, b in itertools.pairwise(run)) for run in runs)
    assert int(NonceSource("AK-shared").path.read_bytes()) == max(everything)


def test_two_concurrent_cli_batches_with_one_key_never_reuse_a_nonce() -> None:
    with SandboxServer(600) as sandbox:
        env = {**os.environ, **sandbox.env()}
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "dict_magics", "delete", "-w", "8", *map(str, ids)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for ids in (range(1, 301), range(301, 601))
        ]
        for proc in procs:
            proc.communicate(timeout=120)
        log, remaining = sandbox.requests, sandbox.entries
    refused = [r for r in log if r.code == 40005]  # overtaken on another connection: re-sent
    assert [p.returncode for p in procs] == [0, 0] and remaining == {}
    nonces = [r.headers["nonce"] for r in log]
    # each process lists once for its snapshot; no nonce is ever sent twice
    assert len(nonces) == len(set(nonces)) == 602 + len(refused)
    assert all(r.code in (None, 40005) for r in log)


def test_the_state_file_is_private_and_named_by_a_hash_of_the_key() -> None:
    access_key = "AK-do-not-write-me-anywhere"
    issued = [int(nonces_for(access_key)()) for _ in range(5)]
    for path in localdata.home("nonces").iterdir():
        assert access_key not in path.name + path.read_text()
        assert path.stat().st_mode & 0o077 == 0
    assert int(nonces_for(access_key).path.read_text()) == issued[-1]
    assert nonces_for(access_key) is nonces_for(access_key)


def test_a_forked_child_never_repeats_its_parents_values() -> None:
    source = NonceSource("AK-fork")
    parent = [int(source())]
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its nonces and leave at once
        os.write(writer, " ".join(source() for _ in range(20)).encode())
        os._exit(0)
    os.close(writer)
    parent += [int(source()) for _ in range(20)]
    os.waitpid(pid, 0)
    with os.fdopen(reader) as pipe:
        child = [int(n) for n in pipe.read().split()]
    assert len(child) == 20 and not set(child) & set(parent)


def test_values_go_on_from_a_state_ahead_of_the_clock() -> None:
    far = time.time_ns() // 1_000_000 + 30_000
    source = NonceSource("AK-ahead")
    localdata.home("nonces")
    source.path.write_text(f"{far:020d}\n")
    assert [int(source()) for _ in range(3)] == [far + 1, far + 2, far + 3]


def test_a_damaged_state_file_restarts_from_the_clock() -> None:
    source = NonceSource("AK-damaged")
    localdata.home("nonces")
    source.path.write_bytes(b"not a number, and longer than the 21 bytes of a value")
    before = time.time_ns() // 1_000_000
    values = [int(source()) for _ in range(5)]
    assert before <= values[0] and values == sorted(set(values))
    assert int(source.path.read_bytes()) == values[-1]


@pytest.mark.parametrize("kind", ["symlink", "fifo", "unwritable"])
def test_a_state_file_that_cannot_be_used_falls_back_to_this_process(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own file\n")
    source = NonceSource(f"AK-{kind}")
    localdata.home("nonces")
    if kind == "symlink":
        source.path.symlink_to(victim)
    elif kind == "fifo":
        os.mkfifo(source.path, 0o600)  # reading it would wait for a writer for ever
    else:
        monkeypatch.setenv(localdata.ENV_HOME, str(victim / "home"))  # cannot be a folder
        source = NonceSource(f"AK-{kind}")
    with caplog.at_level(logging.WARNING, logger="dict_magics.service.http"):
        values = [int(source()) for _ in range(20)]
    assert values == sorted(set(values))
    assert victim.read_text() == "the user's own file\n"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "cannot keep nonces" in warnings[0]


def test_the_first_use_makes_the_data_folder_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "not-yet" / "dm"
    monkeypatch.setenv(localdata.ENV_HOME, str(home))
    old = os.umask(0o022)
    try:
        NonceSource("AK-fresh")()
    finally:
        os.umask(old)
    for folder in (home.parent, home, home / "nonces"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
