"""Undo you can trust (issue 31): what the service took goes back, and an undo does no more.

Real sandbox over loopback (the vendor's rules on) and, where the attack needs one, a second
client (``DictionaryClient`` over HTTP, another process's view) editing the same dictionary.
Each test failed on main at 1498b76.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import paired_audit, point_at, run_cli
from IPython.utils.capture import capture_output

from dict_magics.formats import write_glossary
from dict_magics.models import Entry, EntryList, NoChange
from dict_magics.operations.add import add
from dict_magics.operations.context import OperationSettings
from dict_magics.operations.delete import delete
from dict_magics.operations.prompts import ScriptedPrompter
from dict_magics.operations.purge import purge
from dict_magics.operations.restore import restore
from dict_magics.operations.snapshots import latest_snapshot, read_snapshot
from dict_magics.operations.sync import sync
from dict_magics.operations.update import update
from dict_magics.sandbox import SandboxServer
from dict_magics.service.client import DictionaryClient

S = OperationSettings(workers=4)
HIDDEN = [  # characters the vendor documents no rule against
    Entry("201", "fa", "می\u200cخواهم", "en", "I want"),  # ZWNJ  # noqa: RUF001
    Entry("202", "en", "family", "ja", "👨\u200d👩\u200d👧"),  # ZWJ emoji
    Entry("203", "en", "tab\there", "de", "Tab"),  # a tab
    Entry("204", "he", "\u200fשלום", "en", "hello"),  # a right-to-left mark  # noqa: RUF001
]


@pytest.fixture
def box(monkeypatch: pytest.MonkeyPatch) -> Iterator[SandboxServer]:
    with SandboxServer(20) as server:
        server.add_entries(HIDDEN)
        yield point_at(monkeypatch, server)


@pytest.fixture
def other(box: SandboxServer) -> Iterator[DictionaryClient]:
    """A second client on the same dictionary (another person, another process)."""
    with DictionaryClient(box.url, box.access_key, box.secret_key) as client:
        yield client


def retarget(client: DictionaryClient, entry: Entry, to_text: str) -> Entry:
    new = Entry(entry.id, entry.from_lang, entry.from_text, entry.to_lang, to_text)
    assert client.update_entry(entry.id, new).ok
    return new


def glossary(path: Path, entries: list[Entry]) -> Path:
    return write_glossary(path, [Entry("", *e.terms) for e in entries])


def changes(box: SandboxServer) -> list[str]:
    return [r.method for r in box.requests if r.method in ("POST", "PUT", "DELETE")]


# -- 1. what the service took, an undo sends back -------------------------------------------------


def test_entries_with_invisible_characters_come_back_after_delete_purge_and_update(
    box: SandboxServer,
) -> None:
    before = Counter(box.terms)
    assert delete(S, [e.id for e in HIDDEN]).ok
    back = restore(S)
    assert back.ok and len(back.added) == 4 and back.failed == []
    assert Counter(box.terms) == before
    assert purge(S, yes=True).ok and restore(S).ok and Counter(box.terms) == before
    [zwnj] = [e for e in box.entries.values() if e.from_text == HIDDEN[0].from_text]
    assert update(S, zwnj.id, to_text="I want it").ok
    assert restore(S).ok and box.entry(zwnj.id) == Entry(zwnj.id, *HIDDEN[0].terms)


def test_a_sync_sends_invisible_characters_its_plan_warns_and_lint_reports_them(
    box: SandboxServer, tmp_path: Path
) -> None:
    rows = [e for e in box.entries.values() if e.id not in {h.id for h in HIDDEN}]
    new = Entry("", "fa", "نمی\u200cدانم", "en", "I don't know")  # noqa: RUF001
    path = glossary(tmp_path / "g.csv", [*rows, new])
    plan = sync(S, path, delete_missing=True)
    assert plan.invalid == [] and [a.terms for a in plan.adds] == [new.terms]
    assert any("U+200C" in w for w in plan.warnings)
    before = Counter(box.terms)
    assert sync(S, path, apply=True, delete_missing=True, yes=True).ok
    gone = {e.id for e in plan.deletes}
    assert new.terms in box.terms and "201" in gone and not gone & set(box.entries)
    undone = restore(S, yes=True)
    assert undone.ok and undone.failed == [] and Counter(box.terms) == before
    found = EntryList(list(box.entries.values())).lint()
    flagged = {i for f in found.findings if f.kind == "control" for i in f.entry_ids}
    assert {e.terms for e in box.entries.values() if e.id in flagged} == {h.terms for h in HIDDEN}
    assert add(S, *new.terms).ok  # a typed term as the service takes it


# -- 2. an undo never overwrites a later edit silently --------------------------------------------


def test_an_undo_of_an_update_leaves_a_later_edit_by_someone_else(
    box: SandboxServer, other: DictionaryClient
) -> None:
    old = box.entry("2")
    assert update(S, "2", to_text="Faktura").ok
    approved = retarget(other, box.entry("2"), "Rechnung-2024-approved")
    preview = restore(S, dry_run=True)
    assert preview.changed == [(old, approved)] and preview.put_back == []
    assert "Rechnung-2024-approved" in str(preview) and "will put back" in str(preview)
    box.clear_log()
    left = restore(S, yes=True)  # a script: the later edit stays, and it is said
    assert left.changed == [(old, approved)] and changes(box) == []
    assert box.entry("2") == approved and "left as it is" in str(left)
    asked = ScriptedPrompter(["yes"])  # a person, asked, chooses to put the old terms back
    back = restore(S, prompter=asked)
    assert "Rechnung-2024-approved" in asked.asked[0][1] and back.put_back == [old]
    assert box.entry("2") == old
    assert read_snapshot(back.snapshot).entries == [approved]  # the other edit is kept on disk
    assert {line["snapshot"] for line in paired_audit() if line["operation"] == "update"} >= {
        back.snapshot
    }


def test_an_undo_of_a_sync_says_what_changed_since_and_removes_no_edited_addition(
    box: SandboxServer, other: DictionaryClient, tmp_path: Path
) -> None:
    three = box.entry("3")
    rows = [e for e in box.entries.values() if e.id not in ("3", "5")]
    rows.append(Entry("", *three.terms[:3], "neu"))
    added = Entry("", "en", "added by the sync", "de", "hinzugefügt")
    path = glossary(tmp_path / "g.csv", [*rows, added])
    assert sync(S, path, apply=True, delete_missing=True, yes=True).ok
    retarget(other, box.entry("3"), "edited by B")
    [mine] = [e for e in box.entries.values() if e.terms == added.terms]
    retarget(other, mine, "geändert von B")
    undone = restore(S, yes=True)
    assert undone.ok and [e.terms for e in undone.added] == [box.entry(undone.added[0].id).terms]
    assert undone.removed == [] and box.entry(mine.id).to_text == "geändert von B"
    assert box.entry("3").to_text == "edited by B"
    said = str(undone)
    assert "edited by B" in said and "added by the sync" in said
    assert [e.from_text for e, _ in undone.changed] == [three.from_text, "added by the sync"]


# -- 3. a sync's deletions keep the version listed just before them -------------------------------


class EditWhileAsked(ScriptedPrompter):
    """Someone edits ``entry`` while the sync's question is open."""

    def __init__(self, client: DictionaryClient, entry: Entry) -> None:
        super().__init__(["yes"])
        self.client, self.entry = client, entry

    def confirm(self, warning: object, question: str) -> str:
        retarget(self.client, self.entry, "edited while asked")
        return super().confirm(warning, question)


def test_a_syncs_deletions_keep_the_live_version_and_every_audit_line_names_its_snapshot(
    box: SandboxServer, other: DictionaryClient, tmp_path: Path
) -> None:
    path = glossary(tmp_path / "g.csv", [e for e in box.entries.values() if e.id != "7"])
    asked = EditWhileAsked(other, box.entry("7"))
    result = sync(S, path, apply=True, delete_missing=True, prompter=asked)
    assert result.ok and "7" not in box.entries
    [seven] = read_snapshot(result.snapshot).entries
    assert seven.to_text == "edited while asked"
    lines = [line for line in paired_audit() if line["outcome"] != "sending"]
    assert lines and all(line["snapshot"] == result.snapshot for line in lines)
    [gone] = [line for line in lines if line["operation"] == "delete"]
    assert gone["entry"]["toText"] == "edited while asked" and gone["entry_id"] == "7"
    back = restore(S, yes=True)
    assert [e.to_text for e in back.added] == ["edited while asked"]


def test_a_syncs_deletion_whose_answer_was_lost_is_settled_in_its_own_audit_line(
    box: SandboxServer, tmp_path: Path
) -> None:
    path = glossary(tmp_path / "g.csv", [e for e in box.entries.values() if e.id != "8"])
    box.inject("drop_after", method="DELETE")  # deleted, then the connection dropped
    result = sync(OperationSettings(max_retries=0), path, apply=True, delete_missing=True, yes=True)
    assert result.ok and "8" not in box.entries
    [gone] = [line for line in paired_audit() if line["operation"] == "delete"]
    assert gone["outcome"] == "success" and "verified by listing" in gone["reason"]


# -- 4. "latest" is the latest change; a restore run twice adds nothing ---------------------------


def test_a_restore_run_twice_changes_nothing_the_second_time(
    box: SandboxServer, tmp_path: Path
) -> None:
    new = [Entry("", "en", f"new {i}", "de", f"neu {i}") for i in range(30)]
    path = glossary(tmp_path / "g.csv", [*box.entries.values(), *new])
    before = Counter(box.terms)
    assert sync(S, path, apply=True, yes=True).ok
    first = restore(S, yes=True)
    assert len(first.removed) == 30 and Counter(box.terms) == before
    box.clear_log()
    second = restore(S, yes=True)
    assert second.ok and second.added == second.removed == second.put_back == []
    assert changes(box) == [] and Counter(box.terms) == before and second.snapshot is None
    latest = latest_snapshot("default", box.url.removeprefix("http://"))
    assert latest is not None and str(latest.path) != first.snapshot  # the sync's, not the undo's
    again = restore(S, first.snapshot, yes=True)  # the undo of the undo, asked for by name
    assert len(again.added) == 30 and Counter(box.terms) == before + Counter(e.terms for e in new)


# -- 5. put-backs in parallel ----------------------------------------------------------------------


class HoldTheFirstRequests:
    """A progress sink that holds the service once the put-backs start, and counts the PUTs
    that arrive while it is held (one at a time: 1; in parallel: up to the workers)."""

    def __init__(self, box: SandboxServer) -> None:
        self.box, self.held = box, 0

    def start(self, total: int, label: str) -> None:
        self.box.pause()
        threading.Thread(target=self._release, daemon=True).start()

    def _release(self) -> None:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and self._puts() < 4:
            time.sleep(0.01)
        self.held = self._puts()
        self.box.resume()

    def _puts(self) -> int:
        return sum(1 for r in self.box.received if r.method == "PUT")

    def __call__(self, done: int, total: int, result: Any) -> None:
        pass

    def stop(self) -> None:
        pass


def test_put_backs_go_on_several_workers(box: SandboxServer, tmp_path: Path) -> None:
    plain = [e for e in box.entries.values() if int(e.id) <= 20]
    path = glossary(tmp_path / "g.csv", [Entry("", *e.terms[:3], f"{e.to_text} v2") for e in plain])
    before = Counter(box.terms)
    assert len(sync(S, path, apply=True, yes=True).updates) == 20
    box.clear_log()
    sink = HoldTheFirstRequests(box)
    undone = restore(OperationSettings(workers=4), yes=True, progress=sink)
    assert undone.ok and len(undone.put_back) == 20 and Counter(box.terms) == before
    assert sink.held == 4


# -- 6. update: an exact duplicate as add treats it; its result names snapshot and restore --------


def test_an_update_that_would_duplicate_an_entry_sends_nothing_and_names_it(
    box: SandboxServer,
) -> None:
    one = box.entry("1")
    box.clear_log()
    terms = dict(zip(("from_lang", "from_text", "to_lang", "to_text"), one.terms, strict=True))
    result = update(S, "2", **terms)
    assert isinstance(result, NoChange) and result.entry == one and changes(box) == []
    assert "entry 1" in str(result) and "duplicate" in str(result)


def test_an_update_names_its_snapshot_and_the_restore_in_each_front_ends_words(
    box: SandboxServer, ip: Any
) -> None:
    ran = run_cli(box, "update", "3", "--to-text", "drei")
    kept = latest_snapshot("default", box.url.removeprefix("http://"))
    assert ran.returncode == 0 and kept is not None
    assert f"Snapshot kept at {kept.path}: `dict-magics restore` puts it back" in ran.stdout
    data = json.loads(run_cli(box, "update", "4", "--to-text", "vier", "--json").stdout)
    assert data["snapshot"] and Path(data["snapshot"]).exists()
    with capture_output() as cap:
        ip.run_cell("%dict_update 6 --to-text sechs")
    assert "Snapshot kept at" in cap.stdout and "%dict_restore puts it back" in cap.stdout
