"""Restore under concurrency and interruption: nothing is ever added twice (issue 22, items 1, 2).

Real sandbox over loopback, real threads and real processes (the ``dict-magics`` command line
killed with SIGKILL while a slow service is adding).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter

import pytest
from conftest import point_at

from dict_magics.models import Entry
from dict_magics.operations.context import OperationSettings
from dict_magics.operations.delete import delete
from dict_magics.operations.purge import purge
from dict_magics.operations.restore import restore
from dict_magics.operations.snapshots import read_snapshot, write_snapshot
from dict_magics.sandbox import SandboxServer


def _terms(server: SandboxServer) -> Counter[tuple[str, str, str, str]]:
    return Counter(server.terms)


def _duplicates(now: Counter, before: Counter) -> int:
    return sum(max(0, now[t] - before[t]) for t in now)


@pytest.mark.timeout(300)
def test_two_restores_at_once_after_a_purge_of_200_add_nothing_twice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    figures = []
    for _ in range(5):
        with SandboxServer(200, latency=0.002) as server:
            point_at(monkeypatch, server)
            before = _terms(server)
            assert purge(OperationSettings(), yes=True).ok and server.entries == {}
            results: list = []
            start = threading.Barrier(2)

            def run(start: threading.Barrier = start, results: list = results) -> None:
                start.wait()
                results.append(restore(OperationSettings(workers=8)))

            threads = [threading.Thread(target=run) for _ in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            now = _terms(server)
            figures.append(_duplicates(now, before))
            assert now == before
            assert sorted(len(r.added) for r in results) == [0, 200]
    assert figures == [0, 0, 0, 0, 0]


@pytest.mark.timeout(300)
def test_two_restore_processes_at_once_add_nothing_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    with SandboxServer(200, latency=0.002) as server:
        point_at(monkeypatch, server)
        before = _terms(server)
        assert purge(OperationSettings(), yes=True).ok
        command = [sys.executable, "-m", "dict_magics", "restore", "--yes", "--json"]
        procs = [
            subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for _ in range(2)
        ]
        for proc in procs:
            proc.communicate(timeout=240)
            assert proc.returncode == 0
        assert _terms(server) == before


@pytest.mark.timeout(300)
def test_a_restore_killed_mid_way_and_run_again_adds_no_duplicates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with SandboxServer(60, add_delay=1.0) as server:
        point_at(monkeypatch, server)
        before = _terms(server)
        assert purge(OperationSettings(), yes=True).ok
        server.clear_log()
        # Bulk chunks of 5 on 8 workers: 12 chunks, so some land before the kill and some not.
        code = (
            "from dict_magics.operations.context import OperationSettings\n"
            "from dict_magics.operations.restore import restore\n"
            "restore(OperationSettings(workers=8, chunk_size=5), yes=True)\n"
        )
        command = [sys.executable, "-c", code]
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            # Killed while POSTs are in flight (the sandbox waits 1 s before adding each chunk).
            while len(server.entries) < 8 and time.monotonic() < deadline:
                time.sleep(0.01)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        assert 0 < len(server.entries) < 60
        result = restore(OperationSettings(workers=8))
        assert result.ok
        time.sleep(1.5)  # anything still in flight at the service has landed by now
        assert _terms(server) == before


def test_one_of_two_twins_deleted_comes_back(env_creds: SandboxServer) -> None:
    twin = Entry("", "en", "twin", "de", "Zwilling")
    env_creds.add_entries([Entry("501", *twin.terms), Entry("502", *twin.terms)])
    before = _terms(env_creds)
    assert delete(OperationSettings(), ["501"]).ok
    assert _terms(env_creds)[twin.terms] == 1
    result = restore(OperationSettings())
    assert result.ok and [e.terms for e in result.added] == [twin.terms]
    assert _terms(env_creds) == before
    again = restore(OperationSettings())
    assert again.added == [] and _terms(env_creds) == before


def test_two_identical_entries_in_a_snapshot_one_present_one_added(
    env_creds: SandboxServer,
) -> None:
    twin = Entry("", "en", "twin", "de", "Zwilling")
    env_creds.add_entries([Entry("501", *twin.terms)])
    snap = write_snapshot(
        [Entry("501", *twin.terms), Entry("502", *twin.terms)],
        profile="default",
        host=env_creds.url.removeprefix("http://"),
        base_url=env_creds.url,
        operation="purge",
    )
    assert read_snapshot(snap).copies == {}
    result = restore(OperationSettings(), snap)
    assert len(result.added) == 1 and len(result.skipped) == 1
    assert _terms(env_creds)[twin.terms] == 2


def test_a_dead_restore_leaves_a_note_the_next_one_waits_on(
    env_creds: SandboxServer, tmp_path
) -> None:
    from dict_magics.operations.locks import RestoreLock

    lock = RestoreLock("default", "h", timeout=0.3)
    with lock:
        lock.sending()
        note = lock._note_path
        kept = note.read_bytes()
    assert not note.exists()
    note.write_bytes(kept)  # as a process killed mid-restore leaves it
    os.chmod(note, 0o600)
    later = RestoreLock("default", "h", timeout=0.3)
    with later:
        pass
    assert 0 < later.waited <= 1.3
