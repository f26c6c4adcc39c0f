"""The listing is not trusted blindly; deletes and purges say what they did (issue 22).

Against the real sandbox over loopback; where the service must misbehave in a way the sandbox
has no fault for (a partial listing, repeated rows), a loopback proxy rewrites the listing
(``editing_proxy.py``) and forwards every request unchanged.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import point_at
from editing_proxy import EditingProxy, entries, with_entries

from dict_magics.errors import ServiceError, UsageProblem
from dict_magics.models import Entry
from dict_magics.operations.context import OperationSettings
from dict_magics.operations.delete import delete
from dict_magics.operations.prompts import ScriptedPrompter
from dict_magics.operations.purge import purge
from dict_magics.operations.restore import restore
from dict_magics.operations.snapshots import list_snapshots, read_snapshot
from dict_magics.sandbox import SandboxServer


@pytest.fixture
def box() -> Iterator[SandboxServer]:
    with SandboxServer(100) as server:
        yield server


def through(
    monkeypatch: pytest.MonkeyPatch, server: SandboxServer, edit: Any
) -> Iterator[EditingProxy]:
    with EditingProxy(server.url, edit) as proxy:
        point_at(monkeypatch, server)
        monkeypatch.setenv("DICT_MAGICS_BASE_URL", proxy.url)
        yield proxy


def deletes(server: SandboxServer) -> list[str | None]:
    return [r.entry_id for r in server.requests if r.method == "DELETE"]


# -- 3. the listing is not trusted blindly ----------------------------------------------------


def test_an_id_the_listing_lacks_is_not_deleted_without_a_copy(
    monkeypatch: pytest.MonkeyPatch, box: SandboxServer
) -> None:
    def hide_17(data: dict) -> dict:
        return with_entries(data, [e for e in entries(data) if e["id"] != 17])

    for _ in through(monkeypatch, box, hide_17):
        result = delete(OperationSettings(), ["17", "18"])
    assert [r.outcome for r in result.results] == ["absent", "success"]
    assert "17" in box.entries and deletes(box) == ["18"]  # never sent, so still there
    assert "not in the dictionary" in str(result)


def test_a_partial_listing_makes_a_purge_say_how_many_it_kept(
    monkeypatch: pytest.MonkeyPatch, box: SandboxServer
) -> None:
    def half(data: dict) -> dict:
        return with_entries(data, entries(data)[:50])

    for _ in through(monkeypatch, box, half):
        result = purge(OperationSettings(), yes=True)
    kept = read_snapshot(result.snapshot)
    assert result.ok and result.purged == len(kept.entries) == 50
    assert "every entry (50 entries listed just before, kept)" in str(result)


def test_rows_a_listing_repeats_do_not_come_back_twice(
    monkeypatch: pytest.MonkeyPatch, box: SandboxServer
) -> None:
    before = Counter(box.terms)

    def twice(data: dict) -> dict:
        return with_entries(data, entries(data) * 2)

    for _ in through(monkeypatch, box, twice):
        one = delete(OperationSettings(), ["5"])
        assert [e.id for e in read_snapshot(one.snapshot).entries] == ["5"]
        assert read_snapshot(one.snapshot).copies == {}
        result = purge(OperationSettings(), yes=True)
        assert len(read_snapshot(result.snapshot).entries) == 99 and result.purged == 99
    point_at(monkeypatch, box)
    for snap in reversed(list_snapshots()):  # the delete's, then the purge's
        assert restore(OperationSettings(), snap.path, yes=True).ok  # taken via the proxy
    assert Counter(box.terms) == before


# -- 4. a gateway page is not "no listing" ------------------------------------------------------


def test_a_gateway_page_as_the_listing_stops_the_delete_and_is_not_remembered(
    env_creds: SandboxServer,
) -> None:
    env_creds.inject("non_json", method="GET")
    warnings: list[str] = []
    with pytest.raises(ServiceError, match="nothing was deleted"):
        delete(OperationSettings(), ["1"], warn=warnings.append)
    assert deletes(env_creds) == [] and "1" in env_creds.entries
    for entry_id in ("1", "2", "3", "4", "5", "6"):  # the next deletes each keep a copy
        result = delete(OperationSettings(), [entry_id], warn=warnings.append)
        assert result.ok and result.snapshot is not None
    assert warnings == []


# -- 6. a snapshot holds the terms of the moment ---------------------------------------------------


def test_a_snapshot_holds_the_terms_the_service_has_at_the_delete(env_creds: SandboxServer) -> None:
    assert delete(OperationSettings(), ["5"]).ok  # a listing is cached now
    edited = Entry("6", "en", "edited elsewhere", "de", "anderswo bearbeitet")
    env_creds.add_entries([edited])  # another client edits entry 6
    result = delete(OperationSettings(), ["6"])
    assert read_snapshot(result.snapshot).entries == [edited]
    assert restore(OperationSettings()).ok and edited.terms in env_creds.terms


# -- 8. entries added while a purge runs -------------------------------------------------------


def test_entries_added_while_a_purge_runs_are_shown(env_creds: SandboxServer) -> None:
    env_creds.inject("hang", delay=0.5, method="DELETE")
    late = Entry("999", "en", "late", "de", "spät")

    def add_during_the_purge() -> None:
        deadline = time.monotonic() + 10
        while not any(r.operation == "purge" for r in env_creds.requests):
            assert time.monotonic() < deadline
            time.sleep(0.005)
        env_creds.add_entries([late])

    adder = threading.Thread(target=add_during_the_purge)
    adder.start()
    warnings: list[str] = []
    result = purge(OperationSettings(), yes=True, warn=warnings.append)
    adder.join()
    assert result.ok and list(env_creds.entries) == ["999"]
    assert len(warnings) == 1 and "1 entry is listed right after the purge" in warnings[0]


# -- 15. an outage is not a usage error --------------------------------------------------------


@pytest.mark.parametrize("command", [["delete", "1"], ["delete", "1", "2"], ["purge", "--yes"]])
def test_an_unreachable_service_exits_1_and_suggests_no_copyless_delete(
    command: list[str], tmp_path: Any
) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    env = {
        "PATH": "/usr/bin:/bin",
        "DICT_MAGICS_HOME": str(tmp_path),
        "DICT_MAGICS_BASE_URL": f"http://127.0.0.1:{port}",
        "DICT_MAGICS_ACCESS_KEY": "key",
        "DICT_MAGICS_SECRET_KEY": "not-a-real-secret",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "dict_magics", *command, "--max-retries", "0"],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr
    assert "--no-snapshot" not in proc.stderr and "could not connect" in proc.stderr


# -- 16, 17. results name their terms; an id already gone is "absent" -----------------------------


def test_batch_results_name_the_terms_of_what_was_deleted(env_creds: SandboxServer) -> None:
    wanted = {i: env_creds.entries[i] for i in ("3", "4")}
    text = str(delete(OperationSettings(), list(wanted)))
    for entry_id, entry in wanted.items():
        assert f"{entry_id}: {entry.describe()}" in text


def test_an_id_already_gone_is_absent_and_a_rerun_exits_0(env_creds: SandboxServer) -> None:
    command = [sys.executable, "-m", "dict_magics", "delete", "5", "6", "--json"]
    first = subprocess.run(command, capture_output=True, text=True, timeout=60)
    again = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0 and again.returncode == 0, again.stdout + again.stderr
    data = json.loads(again.stdout)
    assert [r["outcome"] for r in data["results"]] == ["absent", "absent"]
    assert (data["ok"], data["deleted"], data["absent"], data["failed"]) == (True, 0, 2, 0)


# -- 18. a purge nobody can confirm -------------------------------------------------------------


def test_a_purge_nobody_can_confirm_says_so_before_listing_or_keeping(
    env_creds: SandboxServer,
) -> None:
    asker = ScriptedPrompter(reason="stdin is not a terminal")
    with pytest.raises(UsageProblem, match="stdin is not a terminal"):
        purge(OperationSettings(), asker)
    assert env_creds.requests == [] and list_snapshots() == []
    assert asker.asked == []  # no warning, no snapshot path, no question shown
    proc = subprocess.run(
        [sys.executable, "-m", "dict_magics", "purge"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert proc.returncode == 2 and "snapshot" not in proc.stderr + proc.stdout
    assert "Type delete-all" not in proc.stderr and env_creds.requests == []
