"""Issue 13, nothing lost: snapshots before the first deleting request, dry runs, the audit log,
the listing cache, and unknown outcomes settled by a listing, all against the real sandbox.

Every claim is checked on the sandbox's own request log or on the files on disk.
"""

from __future__ import annotations

import os
import signal
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import paired_audit, point_at, run_cell, run_cli
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from dict_magics.errors import LocalDataError, ServiceError, UsageProblem
from dict_magics.models import BatchResult, DeleteResult, DryRunResult, Entry
from dict_magics.operations.audit import audit_path, read_audit
from dict_magics.operations.context import ListingCache, OperationSettings, cache_key
from dict_magics.operations.delete import delete
from dict_magics.operations.history import AuditTable, SnapshotList, audit, snapshots
from dict_magics.operations.prompts import ScriptedPrompter
from dict_magics.operations.purge import purge
from dict_magics.operations.snapshots import list_snapshots, read_snapshot, snapshot_dir
from dict_magics.sandbox import SandboxServer
from dict_magics.service.client import DictionaryClient

NON_ASCII = [
    Entry("9001", "ja", "改行\nあり", "en", "line\nbreak"),
    Entry("9002", "ja", "寿司🍣", "en", "sushi 🍣"),
    Entry("9003", "fr", "e\u0301te\u0301", "en", "summer (decomposed)"),
    Entry("9004", "fr", "\u00e9t\u00e9", "en", "summer (composed)"),
    Entry("9005", "ar", "قاموس", "en", "dictionary"),
    Entry("9006", "de", 'Anführungszeichen "x" \\ y', "en", "quotes and a backslash"),
]


@pytest.fixture
def bare(monkeypatch: pytest.MonkeyPatch) -> Iterator[SandboxServer]:
    """A service without the listing endpoint."""
    with SandboxServer(10, listing=False) as server:
        yield point_at(monkeypatch, server)


def methods(server: SandboxServer) -> list[str]:
    # 40005: a nonce overtaken on another connection, not acted on and sent again at once.
    return [r.method for r in server.requests if r.code != 40005]


def changes(server: SandboxServer) -> list[tuple[str, str | None]]:
    return [
        (r.operation, r.entry_id) for r in server.requests if r.method != "GET" and r.code != 40005
    ]


def audit_lines() -> list[dict[str, Any]]:
    return paired_audit()


# -- snapshots before the first deleting request ---------------------------------------------


def test_a_purge_of_300_keeps_them_on_disk_before_the_delete(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The DELETE is held (the sandbox acts, then waits before answering): while the client
    still waits for its answer, the whole snapshot must already be on disk."""
    with SandboxServer(294) as server:
        point_at(monkeypatch, server)
        server.add_entries(NON_ASCII)
        expected = sorted(server.terms)
        server.inject("hang", delay=0.6, method="DELETE")
        outcome: list[DeleteResult] = []
        worker = threading.Thread(
            target=lambda: outcome.append(purge(OperationSettings(), yes=True))  # type: ignore[arg-type]
        )
        worker.start()
        try:
            while not any(r.operation == "purge" for r in server.requests):
                assert worker.is_alive(), "the purge ended without a DELETE reaching the service"
                worker.join(0.005)
            files = list(snapshot_dir().glob("*.json"))
            assert worker.is_alive()  # the client is still waiting for the DELETE's answer
        finally:
            worker.join()
        [path] = files
        delete_at = next(r.at for r in server.requests if r.operation == "purge")
        assert path.stat().st_mtime_ns <= delete_at * 1e9  # written before it was handled
        kept = read_snapshot(path)
        assert sorted(e.terms for e in kept.entries) == expected and len(expected) == 300
        assert kept.operation == "purge" and kept.host == server.url.removeprefix("http://")
        [result] = outcome
        assert result.ok and result.snapshot == str(path) and server.entries == {}
        # The listing after the purge shows what was added meanwhile (issue 22, item 8).
        assert [r.method for r in server.requests] == ["GET", "DELETE", "GET"]


def test_a_one_id_delete_has_its_snapshot_on_disk_before_the_delete_arrives(
    env_creds: SandboxServer,
) -> None:
    """One id: the snapshot syncs while the request connects and is signed; the DELETE still
    reaches the service only after the whole snapshot is on disk."""
    env_creds.add_entries(NON_ASCII)
    env_creds.inject("hang", delay=0.6, method="DELETE")
    outcome: list[Any] = []
    worker = threading.Thread(target=lambda: outcome.append(delete(OperationSettings(), ["9002"])))
    worker.start()
    try:
        while not any(r.method == "DELETE" for r in env_creds.requests):
            assert worker.is_alive(), "the delete ended without a DELETE reaching the service"
            worker.join(0.002)
        files = list(snapshot_dir().glob("*.json"))
        [path] = files
        on_disk = read_snapshot(path)  # whole while the client still waits for the answer
        assert worker.is_alive()
    finally:
        worker.join()
    delete_at = next(r.at for r in env_creds.requests if r.method == "DELETE")
    assert path.stat().st_mtime_ns <= delete_at * 1e9
    assert on_disk.entries == [Entry("9002", "ja", "寿司🍣", "en", "sushi 🍣")]
    [result] = outcome
    assert result.ok and result.snapshot == str(path) and result.entry == on_disk.entries[0]
    [line] = [x for x in audit_lines() if x["operation"] == "delete"]
    assert line["snapshot"] == str(path) and line["outcome"] == "success"


def test_a_delete_keeps_exactly_the_entries_about_to_go(env_creds: SandboxServer) -> None:
    env_creds.add_entries(NON_ASCII)
    before = env_creds.entries
    result = delete(OperationSettings(workers=3), ["9001", "9002", "99999", "9001", "7"])
    assert isinstance(result, BatchResult) and result.snapshot is not None
    kept = read_snapshot(result.snapshot)
    assert [e.id for e in kept.entries] == ["9001", "9002", "7"]  # the input order, once each
    assert kept.entries == [before["9001"], before["9002"], before["7"]]
    assert methods(env_creds)[0] == "GET" and methods(env_creds).count("GET") == 1
    assert {r.entry_id: r.entry for r in result.results} == {
        "9001": before["9001"],
        "9002": before["9002"],
        "99999": None,
        "7": before["7"],
    }
    assert all(r.snapshot == result.snapshot for r in result.results if r.entry is not None)
    text = str(result)
    assert "9001" not in text or "改行" in text  # a failure line would name the terms


def test_results_name_the_terms(env_creds: SandboxServer) -> None:
    result = delete(OperationSettings(), ["1"])
    assert isinstance(result, DeleteResult) and result.entry == Entry(
        "1", "ja", "金曜日", "en", "FRI"
    )
    assert str(result).startswith("\u2713 deleted 1: 金曜日 \u2192 FRI (ja\u2192en)")
    assert "金曜日" in result._repr_html_()
    missing = delete(OperationSettings(), ["99999"])
    assert missing.entry is None and missing.snapshot is None and "entry '99999'" in str(missing)


def test_snapshot_files_hold_no_secret(env_creds: SandboxServer, ip: Any) -> None:
    delete(OperationSettings(), ["1", "2"])
    env_creds.inject("drop_after", method="DELETE")
    delete(OperationSettings(), ["3"])
    purge(OperationSettings(), yes=True)
    home = Path(os.environ["DICT_MAGICS_HOME"])
    files = [p for p in home.rglob("*") if p.is_file()]
    assert len(list_snapshots()) == 3 and audit_path() in files
    for path in files:
        data = path.read_bytes()
        assert env_creds.secret_key.encode() not in data, path
        assert b"sandbox-secret-" not in data and b"signature" not in data, path
        assert path.stat().st_mode & 0o077 == 0, path
    assert snapshot_dir().stat().st_mode & 0o077 == 0


class AddsWhileAsking(ScriptedPrompter):
    """Someone else adds an entry while the person reads the question, then confirms."""

    def __init__(self, server: SandboxServer) -> None:
        super().__init__(["delete-all"])
        self.server = server

    def confirm(self, warning: object, question: str) -> str:
        self.server.add_entries([Entry("555", "en", "added meanwhile", "de", "inzwischen")])
        return super().confirm(warning, question)


def test_a_purge_keeps_what_was_added_while_the_question_was_open(env_creds: SandboxServer):
    prompter = AddsWhileAsking(env_creds)
    result = purge(OperationSettings(), prompter)
    warning = prompter.asked[0][1]
    assert "This deletes all 100 entries on" in warning
    stated = warning.split("a snapshot is kept at ")[1].split(" (removed if you cancel;")[0]
    assert Path(stated).is_file() and len(read_snapshot(stated).entries) == 100
    assert result.ok and result.snapshot != stated
    assert "555" in {e.id for e in read_snapshot(result.snapshot).entries}  # kept as well
    assert [r.method for r in env_creds.requests] == ["GET", "GET", "DELETE", "GET"]


def test_a_purge_without_snapshot_still_states_the_count(env_creds: SandboxServer) -> None:
    prompter = ScriptedPrompter(["no"])
    with pytest.raises(UsageProblem, match="purge not confirmed"):
        purge(OperationSettings(snapshots=False), prompter)
    assert prompter.asked[0][1].endswith(
        "(profile 'default'); no snapshot is kept (snapshots are off), so it cannot be undone."
    )
    assert purge(OperationSettings(), yes=True, snapshot=False).snapshot is None
    assert list_snapshots() == [] and [r.method for r in env_creds.requests] == ["GET", "DELETE"]


# -- dry runs --------------------------------------------------------------------------------


def test_dry_runs_send_nothing_that_changes_the_dictionary(ip: Any, env_creds: SandboxServer):
    env_creds.add_entries(NON_ASCII)
    result = delete(OperationSettings(), ["9002", "99999", "1", "99999"], dry_run=True)
    assert isinstance(result, DryRunResult) and result.listed and result.operation == "delete"
    assert [e.id for e in result.entries] == ["9002", "1"] and result.missing == ["99999"]
    text = str(result)
    assert "would delete 2 entries" in text and "寿司🍣" in text and "'99999'" in text
    assert "nothing that changes the dictionary was sent" in text
    assert "寿司🍣" in result._repr_html_()

    whole = purge(OperationSettings(), dry_run=True)
    assert isinstance(whole, DryRunResult) and len(whole.entries) == 106
    assert "a purge would delete all 106 entries" in str(whole)
    assert "\u2026 and 86 more" in str(whole)

    value, out, _ = run_cell(ip, "%dict_delete --dry-run 9001 9003")
    assert isinstance(value, DryRunResult) and "改行\\nあり" in out  # a newline shown escaped
    value, out, _ = run_cell(ip, "%dict_purge --dry-run")
    assert isinstance(value, DryRunResult) and "all 106 entries" in out
    assert set(methods(env_creds)) == {"GET"} and len(env_creds.entries) == 106
    assert list_snapshots() == [] and audit_lines() == []


def test_dry_runs_without_a_listing_say_what_is_unknown(bare: SandboxServer) -> None:
    result = delete(OperationSettings(), ["1", "2"], dry_run=True)
    assert isinstance(result, DryRunResult) and not result.listed and result.missing == ["1", "2"]
    assert "their terms are unknown (the service offers no listing)" in str(result)
    whole = purge(OperationSettings(), dry_run=True)
    assert not whole.listed and "how many is unknown" in str(whole)
    assert set(methods(bare)) == {"GET"} and len(bare.entries) == 10


# -- services without a listing -------------------------------------------------------------


def test_without_a_listing_delete_warns_and_purge_refuses(ip: Any, bare: SandboxServer) -> None:
    warnings: list[str] = []
    result = delete(OperationSettings(), ["1"], warn=warnings.append)
    assert result.ok and result.snapshot is None and result.entry is None
    assert len(warnings) == 1 and "cannot be undone" in warnings[0]
    assert changes(bare) == [("delete", "1")]

    _, _, err = run_cell(ip, "%dict_delete 2 3")
    assert "Warning:" in err and "cannot be undone" in err and "--no-snapshot" in err
    _, _, err = run_cell(ip, "%dict_delete --no-snapshot 4")
    assert err == ""
    assert methods(bare).count("GET") == 1  # "no listing" is remembered, not asked each time

    with pytest.raises(UsageProblem) as refused:
        purge(OperationSettings(), yes=True)
    assert refused.value.option == "no_snapshot" and "Nothing was deleted" in str(refused.value)
    with capture_output() as cap:
        outcome = ip.run_cell("%dict_purge -y")
    assert type(outcome.error_in_exec) is UsageError and "--no-snapshot" in cap.stderr
    assert "Traceback" not in cap.stderr
    assert ("purge", None) not in changes(bare)

    result, _, _ = run_cell(ip, "%dict_purge -y --no-snapshot")
    assert result.ok and bare.entries == {}
    assert list_snapshots() == []
    assert [line["outcome"] for line in audit_lines()] == ["success"] * 5


def test_config_snapshots_off_sends_no_listing(ip: Any, env_creds: SandboxServer) -> None:
    run_cell(ip, "%config DictMagics.snapshots = False")
    try:
        result, _, _ = run_cell(ip, "%dict_delete 1 2")
        assert result.ok and result.snapshot is None
        result, _, _ = run_cell(ip, "%dict_purge -y")
        assert result.ok and result.snapshot is None
    finally:
        run_cell(ip, "%config DictMagics.snapshots = True")
    assert "GET" not in methods(env_creds) and list_snapshots() == []
    assert [line["snapshot"] for line in audit_lines()] == [None, None, None]


def test_a_listing_that_fails_stops_the_delete_before_any_deletion(
    ip: Any, env_creds: SandboxServer
) -> None:
    for fault in ("malformed_listing", "huge", "status"):
        env_creds.inject(fault, 4, status=500, method="GET")
        with capture_output() as cap:
            outcome = ip.run_cell("%dict_delete 1 2")
        assert type(outcome.error_in_exec) is UsageError, fault
        message = str(outcome.error_in_exec)
        assert "nothing was deleted" in message and "--no-snapshot" in message
        assert "Traceback" not in cap.stdout + cap.stderr
        env_creds.clear_faults()
    env_creds.inject("malformed_listing")
    with pytest.raises(ServiceError, match="malformed"):  # the service's fault: exit 1
        purge(OperationSettings(), yes=True)
    assert set(methods(env_creds)) == {"GET"} and len(env_creds.entries) == 100


# -- the listing cache --------------------------------------------------------------------------


def test_a_loop_of_one_id_deletes_lists_before_each(ip: Any, env_creds: SandboxServer) -> None:
    """A snapshot holds the service's terms at the moment of the delete, never a cached
    listing's (issue 22, item 6): one listing per delete (its cost: docs/reliability.md)."""
    for entry_id in range(1, 21):
        result, _, _ = run_cell(ip, f"%dict_delete {entry_id}")
        assert result.ok and result.entry is not None and result.snapshot is not None
    assert methods(env_creds).count("GET") == 20
    assert methods(env_creds).count("DELETE") == 20
    run_cell(ip, "%dict_delete 21 99999")  # "99999" is in no listing: absent, not sent
    assert methods(env_creds).count("GET") == 21 and methods(env_creds).count("DELETE") == 21


def test_the_cache_refreshes_when_old_or_when_an_id_is_missing(sandbox: SandboxServer) -> None:
    now = [0.0]
    cache = ListingCache(max_age=60.0, clock=lambda: now[0])
    client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key)
    try:
        assert "5" in cache.current(client, "default").by_id()
        now[0] = 59.0
        assert cache.recent(client, "default", ["6"], 60.0) is not None
        cache.current(client, "default")
        assert methods(sandbox) == ["GET"]
        sandbox.add_entries([Entry("777", "en", "new", "de", "neu")])
        assert cache.recent(client, "default", ["777"], 60.0) is None  # missing: list again
        assert "777" in cache.fetch(client, "default").by_id()
        now[0] = 200.0
        cache.current(client, "default")  # too old: listed again
        assert methods(sandbox) == ["GET"] * 3
        cache.deleted(client, "default", ["5"])
        held = cache.recent(client, "default")
        assert held is not None and "5" not in held[0].by_id()
        cache.invalidate(client, "default")
        assert cache.recent(client, "default") is None
        key = cache_key(client, "default")
        assert key == ("default", client.base_url, sandbox.access_key)  # plain: no secret in it
        other = cache_key(DictionaryClient(sandbox.url, "another-key", "x" * 8), "default")
        assert other != key
        # Another API prefix on the same host, same key and profile: another dictionary.
        prefixed = DictionaryClient(sandbox.url + "/staging", sandbox.access_key, "x" * 8)
        assert prefixed.host == client.host and cache_key(prefixed, "default") != key
    finally:
        client.close()


def test_what_this_tool_adds_makes_the_cache_list_again(env_creds: SandboxServer) -> None:
    from dict_magics.operations.restore import restore

    delete(OperationSettings(), ["1"])
    restore(OperationSettings())
    env_creds.clear_log()
    result = delete(OperationSettings(), ["2"])
    assert result.ok and methods(env_creds) == ["GET", "DELETE"]


# -- unknown outcomes settled -------------------------------------------------------------------


def test_unknown_deletions_in_a_batch_are_settled_by_one_listing(env_creds: SandboxServer):
    env_creds.inject("drop_after", 3, method="DELETE")
    ids = [str(i) for i in range(1, 11)]
    batch = delete(OperationSettings(workers=1, max_retries=0), ids)
    assert isinstance(batch, BatchResult) and batch.ok and batch.unknown == 0
    verified = [r for r in batch.results if r.verified]
    assert len(verified) == 3
    assert all("verified by listing" in (r.reason or "") for r in verified)
    assert all(r.cause.value == "connection_lost" for r in verified)
    assert "(verified by a listing)" in str(verified[0])
    assert methods(env_creds).count("GET") == 2  # one before, one to settle
    assert not set(ids) & set(env_creds.entries)
    lines = audit_lines()
    assert sorted(line["entry_id"] for line in lines) == sorted(ids)
    assert {line["outcome"] for line in lines} == {"success"}


def test_an_unknown_deletion_still_listed_is_a_failure_safe_to_retry(
    env_creds: SandboxServer,
) -> None:
    env_creds.fail_next(5, status=504, method="DELETE")
    batch = delete(OperationSettings(max_retries=0), ["1", "2", "3"])
    assert isinstance(batch, BatchResult) and batch.unknown == 0 and batch.succeeded == 0
    for result in batch.results:
        assert result.outcome == "failure" and "safe to retry" in (result.reason or "")
        assert result.cause.value == "gateway" and result.entry is not None
    single = delete(OperationSettings(max_retries=0), ["4"])
    assert single.outcome == "failure" and "still holds the entry" in (single.reason or "")
    assert {line["outcome"] for line in audit_lines()} == {"failure"}
    assert {"1", "2", "3", "4"} <= set(env_creds.entries)
    assert delete(OperationSettings(), ["1", "2", "3", "4"]).ok  # and indeed retrying works


def test_an_unknown_outcome_stays_unknown_when_the_listing_fails(env_creds: SandboxServer):
    env_creds.inject("drop_after", method="DELETE")
    env_creds.inject("status", 10, status=500, method="GET")
    result = delete(OperationSettings(max_retries=0), ["1"], snapshot=False)
    assert result.outcome == "unknown" and methods(env_creds) == ["DELETE", "GET"]
    assert [line["outcome"] for line in audit_lines()][-1] == "unknown"
    env_creds.clear_faults()
    env_creds.clear_log()
    delete(OperationSettings(), ["2"])
    assert methods(env_creds)[0] == "GET"  # the unknown made the cached listing untrusted


def test_an_unknown_purge_is_settled_by_a_listing(env_creds: SandboxServer) -> None:
    env_creds.inject("drop_after", method="DELETE")
    result = purge(OperationSettings(max_retries=0), yes=True)
    assert result.ok and result.verified and "listing afterwards is empty" in result.reason
    assert [line["outcome"] for line in audit_lines()] == ["success"]


# -- the audit log -------------------------------------------------------------------------------


def test_every_changing_request_is_audited_with_its_snapshot(env_creds: SandboxServer):
    delete(OperationSettings(), ["1"])
    delete(OperationSettings(), ["2", "3", "99999"])
    prompter = ScriptedPrompter(["delete-all"])
    purge(OperationSettings(), prompter)
    lines = audit_lines()
    seen = [(line["operation"], line["entry_id"], line["outcome"]) for line in lines]
    assert seen[0] == ("delete", "1", "success") and seen[3] == ("purge", None, "success")
    assert set(seen[1:3]) == {("delete", "2", "success"), ("delete", "3", "success")}
    assert len(seen) == 4  # "99999" is in no listing: absent, never sent, so no request to log
    assert lines[0]["entry"] == {
        "fromLang": "ja",
        "fromText": "金曜日",
        "toLang": "en",
        "toText": "FRI",
    }
    paths = [line["snapshot"] for line in lines]
    assert all(p and Path(p).is_file() for p in paths)
    assert len(list_snapshots()) == 3
    taken = [r for r in env_creds.requests if r.method == "DELETE" and r.code != 40005]
    assert len(lines) == len(taken)  # a refused nonce (40005) is re-sent, not audited twice


def test_concurrent_batches_append_whole_lines(env_creds: SandboxServer) -> None:
    groups = [[str(i) for i in range(start, start + 25)] for start in (1, 26, 51, 76)]
    errors: list[BaseException] = []

    def one(ids: list[str]) -> None:
        try:
            assert delete(OperationSettings(workers=4), ids).ok
        except BaseException as exc:  # reported on the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(g,)) for g in groups]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    raw = audit_path().read_bytes()
    assert raw.endswith(b"\n") and raw.count(b"\n") == 200  # a line before, a line after
    lines = audit_lines()
    assert sorted(int(line["entry_id"]) for line in lines) == list(range(1, 101))
    assert {line["outcome"] for line in lines} == {"success"}
    assert all(line["entry"] is not None for line in lines)
    assert read_audit(200).skipped == 0


def test_dict_log_and_dict_snapshots_show_tables(ip: Any, env_creds: SandboxServer) -> None:
    assert "audit log is empty" in str(audit())
    run_cell(ip, "%dict_delete 1 2")
    run_cell(ip, "%dict_purge -y")
    log, out, _ = run_cell(ip, "%dict_log -n 2")
    assert isinstance(log, AuditTable) and len(log) == 2
    assert "last 2 requests" in out and "every entry" in out
    assert "<table" in log._repr_html_()
    everything = audit(50)
    assert "金曜日" in str(everything)
    listed, out, _ = run_cell(ip, "%dict_snapshots")
    assert isinstance(listed, SnapshotList) and [s.operation for s in listed] == ["purge", "delete"]
    assert "2 snapshots, newest first" in out and "<table" in listed._repr_html_()
    assert snapshots(profile="someone-else") == []
    assert run_cell(ip, "%dict_snapshots -p default")[0] == listed
    with capture_output():
        refused = ip.run_cell("%dict_log -n 0").error_in_exec
    assert type(refused) is UsageError and "-n" in str(refused)


def test_a_snapshot_that_cannot_be_written_deletes_nothing(
    env_creds: SandboxServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No copy on disk, no DELETE: the data folder is a file, so the snapshot cannot be saved."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the data folder should be")
    monkeypatch.setenv("DICT_MAGICS_HOME", str(blocked))
    for ids in (["5"], ["5", "6", "7"]):
        with pytest.raises(LocalDataError, match="could not save a snapshot before deleting"):
            delete(OperationSettings(), ids)
    with pytest.raises(LocalDataError, match="could not save a snapshot before deleting"):
        purge(OperationSettings(), prompter=ScriptedPrompter(), yes=True)
    # A disk problem is not a usage mistake: the command line exits 1, as for an outage.
    ran = run_cli(env_creds, "delete", "5")  # DICT_MAGICS_HOME is still the file
    assert ran.returncode == 1, ran.stderr
    assert "could not save a snapshot before deleting" in ran.stderr
    assert [r.method for r in env_creds.requests if r.method != "GET"] == []
    assert {"5", "6", "7"} <= set(env_creds.entries) and len(env_creds.entries) == 100


def test_an_update_whose_snapshot_cannot_be_written_names_no_flag_it_lacks(
    env_creds: SandboxServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An update always keeps a snapshot (it has no --no-snapshot, and the snapshots setting
    does not skip it): its refusal says nothing was sent, and points at no way around it."""
    from dict_magics.frontends.commands import CLI, MAGIC
    from dict_magics.operations.update import update

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the data folder should be")
    monkeypatch.setenv("DICT_MAGICS_HOME", str(blocked))
    with pytest.raises(LocalDataError, match=r"before the update .*nothing was sent") as refused:
        update(OperationSettings(), "5", to_text="x")
    assert refused.value.option is None
    assert "--no-snapshot" not in MAGIC.message(refused.value)
    assert "--no-snapshot" not in CLI.message(refused.value)
    assert [r.method for r in env_creds.requests if r.method != "GET"] == []


# -- one id: the snapshot is on disk before the request leaves ---------------------------------


def _slow_sync(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """A busy disk: the snapshot's sync takes ``seconds`` (stdlib fault injection)."""
    real = os.fdatasync

    def slow(fd: int) -> None:
        time.sleep(seconds)
        real(fd)

    monkeypatch.setattr(os, "fdatasync", slow)


def test_a_sync_slower_than_the_timeout_is_not_charged_to_the_request(
    env_creds: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk takes 1 s to sync, the deadline is 0.3 s: waiting for our own disk is not the
    service's time, so the DELETE goes out once the snapshot is on disk and succeeds."""
    _slow_sync(monkeypatch, 1.0)
    result = delete(OperationSettings(timeout=0.3, max_retries=0), ["5"])
    assert result.ok and result.attempts == 1 and result.snapshot is not None, result
    assert methods(env_creds) == ["GET", "DELETE"]


def test_ctrl_c_while_the_snapshot_syncs_sends_nothing(
    env_creds: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C 0.3 s into a 1 s sync, before any byte of the DELETE has left: it is not sent,
    and nothing is audited."""
    _slow_sync(monkeypatch, 1.0)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    main = threading.main_thread().ident or 0
    timer = threading.Timer(0.3, lambda: signal.pthread_kill(main, signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            delete(OperationSettings(), ["6"])
    finally:
        timer.join()
    assert methods(env_creds) == ["GET"] and "6" in env_creds.entries
    assert [x for x in audit_lines() if x["operation"] == "delete"] == []


def test_the_audit_log_tightens_a_data_folder_opened_meanwhile(env_creds: SandboxServer) -> None:
    home = Path(os.environ["DICT_MAGICS_HOME"])
    assert delete(OperationSettings(), ["1"]).ok
    os.chmod(home, 0o755)  # noqa: S103 - widened by hand (a backup tool, chmod -R): the case
    assert delete(OperationSettings(snapshots=False), ["2"]).ok  # only the audit log writes
    assert (home / "audit.jsonl").read_text().count('"entry_id": "2"') == 2  # before, after
    assert stat.S_IMODE(os.stat(home).st_mode) == 0o700


def test_an_id_with_leading_zeros_is_that_entry_and_a_snapshot_holds_exactly_it(
    env_creds: SandboxServer,
) -> None:
    before = env_creds.entries
    result = delete(OperationSettings(), ["017", "0"])
    kept = read_snapshot(result.snapshot)
    assert [e.id for e in kept.entries] == ["17"] and kept.entries[0] == before["17"]
    assert {r.entry_id: r.entry for r in result.results} == {"17": before["17"], "0": None}
    assert "17" not in env_creds.entries
