"""Restore: what a snapshot holds and the dictionary lacks goes back, exactly once.

Against the real sandbox, with faults on the POSTs: an addition
whose answer was lost is settled by one listing, never sent again blindly.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import paired_audit, point_at
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from dict_magics.errors import OperationFailedError, UsageProblem
from dict_magics.models import Entry, RestoreResult
from dict_magics.operations.audit import audit_path
from dict_magics.operations.context import OperationSettings
from dict_magics.operations.delete import delete
from dict_magics.operations.prompts import ScriptedPrompter
from dict_magics.operations.purge import purge
from dict_magics.operations.restore import missing_entries, restore
from dict_magics.operations.snapshots import write_snapshot
from dict_magics.sandbox import SandboxServer

ODD = [
    Entry("9001", "ja", "全角\u3000空白", "en", "wide\u3000space"),
    Entry("9002", "ja", "寿司🍣", "en", "sushi 🍣"),
    Entry("9003", "fr", "e\u0301te\u0301", "en", "summer"),
    Entry("9004", "fr", "\u00e9t\u00e9", "en", "summer"),
    Entry("9005", "ar", "قاموس", "en", "dictionary"),
    Entry("9006", "de", 'Zeichen "x" \\ y', "en", "quotes"),
    Entry("9007", "ja", "寿司🍣", "en", "sushi 🍣"),  # the same terms twice: both come back
]


@pytest.fixture
def big(monkeypatch: pytest.MonkeyPatch) -> Iterator[SandboxServer]:
    with SandboxServer(293) as server:
        server.add_entries(ODD)
        yield point_at(monkeypatch, server)


def posts(server: SandboxServer) -> int:
    """Bulk POSTs (restore sends no other); a 40005 refusal (a nonce overtaken on another
    connection, not acted on and sent again at once) is not counted."""
    assert all(r.path.endswith("/bulk") for r in server.requests if r.method == "POST")
    return sum(1 for r in server.requests if r.method == "POST" and r.code != 40005)


def posted(server: SandboxServer) -> int:
    """Entries the bulk POSTs added."""
    return sum(len(r.entries) for r in server.requests if r.method == "POST")


def terms(server: SandboxServer) -> Counter[tuple[str, str, str, str]]:
    return Counter(server.terms)


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.threads: set[str] = set()
        self.lock = threading.Lock()

    def start(self, total: int, label: str) -> None:
        self.calls.append(("start", total, label))

    def __call__(self, done: int, total: int, result: Any) -> None:
        with self.lock:
            self.calls.append(("update", done, total, result.ok))

    def stop(self) -> None:
        self.calls.append(("stop",))


def test_a_purge_of_300_comes_back_exactly_and_a_second_restore_sends_no_post(
    big: SandboxServer,
) -> None:
    before = terms(big)
    assert sum(before.values()) == 300
    assert purge(OperationSettings(), yes=True).ok and big.entries == {}
    bar = Recorder()
    result = restore(OperationSettings(workers=8, chunk_size=50), progress=bar)
    assert isinstance(result, RestoreResult) and result.ok and len(result.added) == 300
    assert terms(big) == before  # the same terms, duplicates included; new ids
    assert posts(big) == 6 and posted(big) == 300  # six chunks of 50
    host = big.url.removeprefix("http://")
    assert bar.calls[0] == ("start", 300, f"Restoring 300 entries at {host}")
    assert [c[1] for c in bar.calls[1:-1]] == list(range(1, 301)) and bar.calls[-1] == ("stop",)

    big.clear_log()
    again = restore(OperationSettings())
    assert again.ok and again.added == [] and len(again.skipped) == 300
    assert [r.method for r in big.requests] == ["GET"]
    assert "nothing to put back; 300 already present (skipped)" in str(again)


def test_undo_of_a_delete_and_the_dry_run(env_creds: SandboxServer) -> None:
    env_creds.add_entries(ODD)
    before = terms(env_creds)
    delete(OperationSettings(), ["9001", "9002", "9007", "5"])
    env_creds.clear_log()
    preview = restore(OperationSettings(), dry_run=True)
    assert preview.dry_run and len(preview.added) == 4 and preview.skipped == []
    assert "would add 4 entries" in str(preview) and "寿司🍣" in str(preview)
    assert [r.method for r in env_creds.requests] == ["GET"]
    assert restore(OperationSettings()).ok and terms(env_creds) == before
    assert posts(env_creds) == 1 and posted(env_creds) == 4


def test_restore_reports_the_new_ids_not_the_deleted_ones(
    env_creds: SandboxServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from dict_magics.frontends.cli import main

    env_creds.add_entries(ODD)
    gone = ["9001", "9002", "9007", "5"]  # 9002 and 9007 hold the same terms: copies
    delete(OperationSettings(), gone)
    capsys.readouterr()
    assert main(["restore", "--json"]) == 0
    added = json.loads(capsys.readouterr().out)["added"]
    assert len(added) == 4
    ids = [a["id"] for a in added]
    assert len(set(ids)) == 4 and not set(ids) & set(gone)
    for shown in added:  # every id reported is listed with those terms
        entry = env_creds.entry(shown["id"])
        assert entry.to_service(with_id=False) == {k: v for k, v in shown.items() if k != "id"}
    # The undo of a sync that deleted entries names the new ids too (text and result).
    path = Path(str(audit_path())).parent / "kept.csv"
    from dict_magics.formats import write_glossary
    from dict_magics.operations.sync import sync

    kept = [e for e in env_creds.entries.values() if e.id != "7"]
    write_glossary(path, [Entry("", *e.terms) for e in kept])
    assert sync(OperationSettings(), path, apply=True, delete_missing=True, yes=True).ok
    undone = restore(OperationSettings())
    ((back,),) = [undone.added]
    assert back.id and back.id != "7" and env_creds.entry(back.id).terms == back.terms
    assert f"added entry {back.id}: " in str(undone)


def test_only_missing_terms_are_added(env_creds: SandboxServer) -> None:
    a, b = Entry("1", "en", "a", "de", "A"), Entry("2", "en", "b", "de", "B")
    wanted, skipped = missing_entries([a, b, a, a], [Entry("99", "en", "a", "de", "A")])
    assert wanted == [b, a, a] and skipped == [a]


def test_restore_brings_back_odd_terms_after_a_purge(monkeypatch: pytest.MonkeyPatch) -> None:
    with SandboxServer(40) as server:
        point_at(monkeypatch, server)
        server.add_entries(ODD)
        before = terms(server)
        assert purge(OperationSettings(), yes=True).ok
        assert restore(OperationSettings()).ok and terms(server) == before
        assert restore(OperationSettings()).added == []
        assert posts(server) == 1 and posted(server) == 47


def test_lost_answers_to_posts_are_settled_by_a_listing_not_sent_again(
    env_creds: SandboxServer,
) -> None:
    before = terms(env_creds)
    delete(OperationSettings(), [str(i) for i in range(1, 21)])
    env_creds.clear_log()
    env_creds.inject("drop_after", 2, method="POST")  # added, then the connection dropped
    result = restore(OperationSettings(workers=4, chunk_size=5))
    assert result.ok and len(result.added) == 20 and result.unknown == []
    assert posts(env_creds) == 4 and posted(env_creds) == 20  # never re-sent
    assert [r.method for r in env_creds.requests].count("GET") == 2  # before, and to settle
    assert terms(env_creds) == before
    adds = [line for line in paired_audit() if line["operation"] == "add"]
    assert len(adds) == 20 and {line["outcome"] for line in adds} == {"success"}
    assert sum(1 for line in adds if "verified by listing" in (line["reason"] or "")) == 10


def test_a_post_that_did_nothing_is_a_failure_and_a_rerun_adds_it(
    env_creds: SandboxServer,
) -> None:
    before = terms(env_creds)
    delete(OperationSettings(), ["1", "2", "3"])
    env_creds.fail_next(2, status=504, method="POST")  # a gateway answered; nothing was added
    result = restore(OperationSettings(workers=1, max_retries=0, chunk_size=1))
    assert not result.ok and len(result.added) == 1 and result.unknown == []
    assert len(result.failed) == 2
    assert all("not added, so adding it again is safe" in reason for _, reason in result.failed)
    assert posts(env_creds) == 3
    with pytest.raises(OperationFailedError):
        env_creds.fail_next(1, status=504, method="POST")
        restore(OperationSettings(max_retries=0, raise_on_failure=True, chunk_size=1))
    again = restore(OperationSettings())
    assert again.ok and len(again.added) == 1 and terms(env_creds) == before


def test_an_unknown_add_stays_unknown_when_the_listing_fails(env_creds: SandboxServer) -> None:
    delete(OperationSettings(), ["1"])

    class ThenBreakListing(Recorder):
        """Once the listing before the additions is taken: lose the POST's answer and make
        the listing after it fail."""

        def start(self, total: int, label: str) -> None:
            super().start(total, label)
            env_creds.inject("drop_after", method="POST")
            env_creds.inject("status", 10, status=500, method="GET")

    result = restore(OperationSettings(max_retries=0), progress=ThenBreakListing())
    assert not result.ok and [e.terms for e in result.unknown] == [
        Entry("1", "ja", "金曜日", "en", "FRI").terms
    ]
    assert "outcome unknown" in str(result) and posts(env_creds) == 1
    env_creds.clear_faults()
    assert restore(OperationSettings()).added == []  # it had been added: nothing twice


def test_another_hosts_snapshot_needs_a_confirmation(
    env_creds: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SandboxServer(3) as other:
        point_at(monkeypatch, other)
        delete(OperationSettings(), ["1", "2"])
        point_at(monkeypatch, env_creds)
    [snapshot] = list((Path(audit_path()).parent / "snapshots").glob("*.json"))
    delete(OperationSettings(), ["1"])
    env_creds.clear_log()

    nobody = ScriptedPrompter(reason="stdin is closed")
    with pytest.raises(UsageProblem) as refused:
        restore(OperationSettings(), snapshot, prompter=nobody)
    assert refused.value.option == "yes" and "stdin is closed" in str(refused.value)
    with pytest.raises(UsageProblem, match="restore not confirmed"):
        restore(OperationSettings(), snapshot, prompter=ScriptedPrompter(["no"]))
    assert env_creds.requests == []

    asked = ScriptedPrompter([" YES "])
    result = restore(OperationSettings(), str(snapshot), prompter=asked)
    host = env_creds.url.removeprefix("http://")
    assert f"this adds its missing entries to {host} (profile 'default')" in asked.asked[0][1]
    assert result.ok and len(result.added) == 1 and len(result.skipped) == 1  # "2" is there
    assert restore(OperationSettings(), snapshot, yes=True).added == []
    # The default is this host's own latest snapshot, never another host's.
    assert restore(OperationSettings()).skipped[0].id == "1"


def test_mistakes_are_refused_before_any_addition(
    env_creds: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(UsageProblem, match="no snapshot of profile 'default'"):
        restore(OperationSettings())
    with pytest.raises(UsageProblem, match="no snapshot at"):
        restore(OperationSettings(), tmp_path / "nothing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}', encoding="utf-8")
    with pytest.raises(UsageProblem, match="not a dict-magics snapshot"):
        restore(OperationSettings(), bad)
    assert env_creds.requests == []
    with SandboxServer(3, listing=False) as bare:
        point_at(monkeypatch, bare)
        host = bare.url.removeprefix("http://")
        write_snapshot([Entry("1", "en", "a", "de", "A")], profile="default", host=host,
                       base_url=bare.url, operation="delete")  # fmt: skip
        with pytest.raises(UsageProblem, match="cannot tell what is without a listing"):
            restore(OperationSettings())
        assert posts(bare) == 0


def test_a_cancelled_restore_sends_nothing_more(env_creds: SandboxServer) -> None:
    delete(OperationSettings(), [str(i) for i in range(1, 11)])
    env_creds.clear_log()
    stop = threading.Event()

    class StopAfterTwo(Recorder):
        def __call__(self, done: int, total: int, result: Any) -> None:
            super().__call__(done, total, result)
            if done == 2:
                stop.set()

    result = restore(
        OperationSettings(workers=1, chunk_size=1), progress=StopAfterTwo(), cancel=stop
    )
    assert len(result.added) == 2 and len(result.failed) == 8 and posts(env_creds) == 2
    assert all("not sent: the restore was stopped first" in why for _, why in result.failed)
    assert sum(1 for line in paired_audit() if line["operation"] == "add") == 2  # what was sent
    stop.clear()
    assert len(restore(OperationSettings(), cancel=stop).added) == 8  # the rest, on a re-run


def test_the_magic(ip: Any, env_creds: SandboxServer) -> None:
    with capture_output() as cap:
        ip.run_cell("%dict_delete 1 2 3")
        ip.run_cell("r = %dict_restore --dry-run -w 2")
        ip.run_cell("r")
    preview = ip.user_ns["r"]
    assert preview.dry_run and len(preview.added) == 3 and "would add 3 entries" in cap.stdout
    with capture_output() as cap:
        ip.run_cell("r = %dict_restore -w 2")
    assert ip.user_ns["r"].ok and "Restoring 3 entries at" in cap.stdout
    assert {"1", "2", "3"}.isdisjoint(env_creds.entries) and len(env_creds.entries) == 100
    with capture_output() as cap:
        outcome = ip.run_cell("%dict_restore /no/such/snapshot.json")
    assert type(outcome.error_in_exec) is UsageError and "no snapshot at" in cap.stderr
    with capture_output():
        outcome = ip.run_cell("%dict_restore -w 0")
    assert type(outcome.error_in_exec) is UsageError
    assert "<div" in ip.user_ns["r"]._repr_html_()
    with capture_output():
        ip.run_cell("kept = %dict_snapshots")
        ip.run_cell("r = %dict_restore --dry-run {kept[1].path}")  # [0]: the restore's own
    assert ip.user_ns["r"].dry_run and len(ip.user_ns["r"].skipped) == 3


def test_the_default_restore_keeps_to_this_api_prefix_on_a_shared_host(
    env_creds: SandboxServer,
) -> None:
    """Two API prefixes on one host are two dictionaries: the default restore takes this
    prefix's latest snapshot, and another prefix's goes back only once someone says yes."""
    from dict_magics.service.http import normalize_base_url

    delete(OperationSettings(), ["1"])
    ours = normalize_base_url(env_creds.url)
    host = env_creds.url.removeprefix("http://")
    theirs = write_snapshot(  # newer, same host and profile, another prefix
        [Entry("7", "en", "other prefix", "de", "anderes Präfix")],
        profile="default",
        host=host,
        base_url=ours.rstrip("/") + "/tenant-b",
        operation="delete",
    )
    env_creds.clear_log()
    result = restore(OperationSettings())
    assert [e.from_text for e in result.added] == ["金曜日"]  # entry 1, this prefix's
    with pytest.raises(UsageProblem) as refused:
        restore(OperationSettings(), theirs, prompter=ScriptedPrompter(reason="no stdin"))
    assert refused.value.option == "yes" and "/tenant-b" in str(refused.value)
    assert sum(1 for r in env_creds.requests if r.method == "POST") == 1  # the first only


def test_one_service_spelled_two_ways_is_one_prefix_for_the_default_restore(
    env_creds: SandboxServer,
) -> None:
    """A snapshot whose base URL is this service's spelled otherwise (a trailing slash, as
    edited by hand) is this prefix's: the default restore takes it and asks nothing (it asked
    for a typed yes, and with none possible refused; found by review3)."""
    host = env_creds.url.removeprefix("http://")
    kept = write_snapshot(
        [Entry("7", "en", "spelled", "de", "geschrieben")],
        profile="default",
        host=host,
        base_url=env_creds.url + "/api/v1/",
        operation="delete",
    )
    refused_asking = ScriptedPrompter(reason="no stdin")
    result = restore(OperationSettings(), prompter=refused_asking)
    assert [e.from_text for e in result.added] == ["spelled"]
    assert restore(OperationSettings(), kept, prompter=refused_asking).skipped


def test_the_default_https_port_is_no_other_service() -> None:
    """``https://h:443`` and ``https://h`` are one service: one host, one base URL, so one
    set of snapshots, one listing and one restore lock (found by review3)."""
    from dict_magics.operations.snapshots import latest_snapshot
    from dict_magics.service.http import host_of, normalize_base_url

    assert normalize_base_url("https://API.example.com:443/") == "https://api.example.com"
    assert normalize_base_url("http://127.0.0.1:80") == "http://127.0.0.1"
    assert normalize_base_url("https://api.example.com:80") == "https://api.example.com:80"
    kept = write_snapshot(
        [Entry("7", "en", "port", "de", "Port")],
        profile="default",
        host="api.example.com",
        base_url="https://api.example.com",
        operation="delete",
    )
    spelled = normalize_base_url("https://api.example.com:443")
    found = latest_snapshot("default", host_of(spelled), spelled)
    assert found is not None and found.path == kept


def test_yes_never_restores_another_prefixs_snapshot_picked_by_default(
    env_creds: SandboxServer,
) -> None:
    """With no snapshot of this prefix, the default falls back to another prefix's, which
    goes back only once someone types yes; --yes (a script) typed nothing about that file, so
    it is refused, naming it (found by review3)."""
    from dict_magics.service.http import normalize_base_url

    host = env_creds.url.removeprefix("http://")
    theirs = write_snapshot(
        [Entry("7", "en", "other prefix", "de", "anderes Präfix")],
        profile="default",
        host=host,
        base_url=normalize_base_url(env_creds.url) + "/tenant-b",
        operation="delete",
    )
    env_creds.clear_log()
    with pytest.raises(UsageProblem) as refused:
        restore(OperationSettings(), yes=True)
    assert "/tenant-b" in str(refused.value) and theirs.name in str(refused.value)
    assert not any(r.method == "POST" for r in env_creds.requests)
    # Named, it goes back with --yes as any snapshot does.
    result = restore(OperationSettings(), theirs, yes=True)
    assert [e.from_text for e in result.added] == ["other prefix"]
