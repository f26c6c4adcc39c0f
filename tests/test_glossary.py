"""Add, update, sync and export against the sandbox (vendor rules on), and their undo.

Requests go one at a time (``workers=1``) where a test counts them exactly.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import point_at

from dict_magics.errors import InvalidEntryError, UsageProblem
from dict_magics.formats import read_glossary, write_glossary
from dict_magics.models import Entry, SyncPlan, SyncResult
from dict_magics.operations.add import add
from dict_magics.operations.context import OperationSettings
from dict_magics.operations.export import export
from dict_magics.operations.prompts import ScriptedPrompter
from dict_magics.operations.restore import restore
from dict_magics.operations.snapshots import read_snapshot
from dict_magics.operations.sync import sync
from dict_magics.operations.update import update
from dict_magics.sandbox import SandboxServer

ONE = OperationSettings(workers=1)
# Valid terms a spreadsheet or a parser could mangle: formulas, quotes, commas, apostrophes.
TRICKY = [
    Entry("1", "en", "=SUM(A1)", "de", "+49 Vorwahl"),
    Entry("2", "en", "-minus", "de", "@handle"),
    Entry("3", "en", "'quoted", "de", "''twice"),
    Entry("4", "en", 'say "hi", please', "de", "sag \u201ehallo\u201c, bitte"),
    Entry("5", "ja", "金曜日", "en", "Friday"),
    Entry("6", "zh-CN", "人工智能", "fr", "intelligence artificielle"),
    Entry("7", "en", " padded ", "de", "ça va \u2013 naïve"),
    Entry("8", "en", "a,b;c|d", "de", "x"),
]


@pytest.fixture
def tricky(monkeypatch: pytest.MonkeyPatch):
    with SandboxServer(TRICKY) as server:
        yield point_at(monkeypatch, server)


def _terms(server: SandboxServer) -> Counter:
    return Counter(server.terms)


@pytest.mark.parametrize("kind", ["csv", "tsv", "xlsx", "tbx"])
def test_export_then_sync_plans_no_change(tricky: SandboxServer, tmp_path: Path, kind: str) -> None:
    path = tmp_path / f"glossary.{kind}"
    done = export(ONE, path)
    assert (done.count, done.format) == (len(TRICKY), kind)
    assert sorted(r.terms for r in read_glossary(path).rows) == sorted(e.terms for e in TRICKY)
    tricky.clear_log()
    plan = sync(ONE, path, delete_missing=True)
    assert isinstance(plan, SyncPlan)
    assert plan.counts() == {
        "adds": 0,
        "updates": 0,
        "deletes": 0,
        "unchanged": len(TRICKY),
        "conflicts": 0,
        "invalid": 0,
    }
    assert [r.method for r in tricky.requests] == ["GET"]  # a plan sends one listing only


@pytest.mark.parametrize("kind", ["csv", "tsv", "tbx"])
def test_export_then_sync_of_a_conflict_plans_no_change(
    tricky: SandboxServer, tmp_path: Path, kind: str
) -> None:
    # A conflict made through the API: one source and pair, two targets.
    first = add(ONE, "en", "twin", "de", "Zwilling")
    second = add(ONE, "en", "twin", "de", "Doppel")
    path = tmp_path / f"out.{kind}"
    export(ONE, path)
    plan = sync(ONE, path, delete_missing=True)
    assert plan.counts() == {
        "adds": 0,
        "updates": 0,
        "deletes": 0,
        "unchanged": len(TRICKY),
        "conflicts": 1,
        "invalid": 0,
    }
    ((conflict,),) = [plan.conflicts]
    assert sorted(e.id for e in conflict.entries) == sorted([first.entry.id, second.entry.id])
    before = _terms(tricky)
    tricky.clear_log()
    applied = sync(ONE, path, apply=True, delete_missing=True)  # allowed: nothing to apply
    assert isinstance(applied, SyncResult) and applied.ok
    assert _terms(tricky) == before
    assert {r.method for r in tricky.requests} == {"GET"}
    # The file's rows for that source differ from the dictionary's: still invalid.
    write_glossary(
        path,
        [Entry("", "en", "twin", "de", "Zwilling"), Entry("", "en", "twin", "de", "Gemini")],
    )
    plan = sync(ONE, path)
    assert len(plan.invalid) == 2 and plan.conflicts == []
    with pytest.raises(UsageProblem, match="2 targets in the file"):
        sync(ONE, path, apply=True)


def test_export_refuses_an_existing_file_unless_forced(
    ip, env_creds: SandboxServer, tmp_path: Path, capsys
) -> None:
    from IPython.core.error import UsageError

    from dict_magics.frontends.cli import main

    path = tmp_path / "mine.csv"
    path.write_text("my edited glossary\n", encoding="utf-8")
    env_creds.clear_log()
    with pytest.raises(UsageProblem, match="already exists; nothing was written") as caught:
        export(ONE, path)
    assert caught.value.option == "overwrite" and env_creds.requests == []  # nothing listed
    assert main(["export", str(path)]) == 2
    assert "--force" in capsys.readouterr().err
    with pytest.raises(UsageError, match=r"already exists.*--force"):
        ip.run_line_magic("dict_export", str(path))
    assert path.read_text(encoding="utf-8") == "my edited glossary\n"  # untouched
    assert export(ONE, path, overwrite=True).count == 100
    assert main(["export", str(path), "--force", "--json"]) == 0
    assert ip.run_line_magic("dict_export", f"{path} --force").count == 100
    assert len(read_glossary(path).rows) == 100


def _edited(server: SandboxServer, path: Path) -> dict[str, object]:
    """A file with one update, two adds, one row missing, two invalid rows, one conflict."""
    server.add_entries(
        [Entry("150", "en", "twin", "de", "Zwilling"), Entry("151", "en", "twin", "de", "Doppel")]
    )
    entries = sorted(server.entries.values(), key=lambda e: int(e.id))
    kept = [e for e in entries if e.id not in ("2", "150", "151")]  # 2 goes missing
    rows = [Entry("", *e.terms) for e in kept]
    first = kept[0]
    rows[0] = Entry("", first.from_lang, first.from_text, first.to_lang, "CHANGED")
    rows += [
        Entry("", "en", "brand new", "de", "ganz neu"),
        Entry("", "en", "also new", "fr", "aussi nouveau"),
        Entry("", "en", "x" * 256, "de", "too long"),  # invalid: 256 characters
        Entry("", "zh", "普通话", "en", "Mandarin"),  # invalid: zh is zh-CN or zh-TW
        Entry("", "en", "twin", "de", "Zwilling"),  # a conflict in the dictionary
    ]
    write_glossary(path, rows)
    header = 1
    return {
        "update": (first.id, first.to_text),
        "adds": [("en", "brand new", "de", "ganz neu"), ("en", "also new", "fr", "aussi nouveau")],
        "add_rows": [header + len(kept) + 1, header + len(kept) + 2],
        "invalid_rows": [header + len(kept) + 3, header + len(kept) + 4],
        "conflict_row": header + len(kept) + 5,
        "missing": entries[1],
    }


def test_a_sync_plans_exactly_the_adds_updates_missing_and_invalid_rows(
    env_creds: SandboxServer, tmp_path: Path
) -> None:
    path = tmp_path / "edited.csv"
    want = _edited(env_creds, path)
    plan = sync(ONE, path)
    assert [a.terms for a in plan.adds] == want["adds"]
    assert plan.add_rows == want["add_rows"]
    ((update_id, old_text),) = [(u.id, u.old.to_text) for u in plan.updates]
    assert (update_id, old_text) == want["update"]
    assert plan.updates[0].new.to_text == "CHANGED" and plan.updates[0].row == 2
    assert plan.deletes == []  # missing rows are deleted only when asked
    assert plan.missing == [want["missing"]]
    assert [bad.row for bad in plan.invalid] == want["invalid_rows"]
    assert "256 characters" in plan.invalid[0].reason and "zh-CN" in plan.invalid[1].reason
    assert [(c.row, sorted(e.id for e in c.entries)) for c in plan.conflicts] == [
        (want["conflict_row"], ["150", "151"])
    ]
    assert plan.unchanged == 100 - 2  # all but the missing one and the updated one
    with_deletes = sync(ONE, path, delete_missing=True)
    assert with_deletes.deletes == [want["missing"]]
    shown = str(with_deletes)
    assert "2 adds, 1 update, 1 delete, 98 unchanged, 1 conflict, 2 invalid rows" in shown
    frame = with_deletes.to_pandas()
    assert Counter(frame["action"]) == {
        "add": 2,
        "update": 1,
        "delete": 1,
        "conflict": 2,
        "invalid": 2,
    }


def test_apply_refuses_invalid_rows_unless_skipped(
    env_creds: SandboxServer, tmp_path: Path
) -> None:
    path = tmp_path / "edited.csv"
    want = _edited(env_creds, path)
    before = _terms(env_creds)
    env_creds.clear_log()
    with pytest.raises(UsageProblem, match=f"row {want['invalid_rows'][0]}") as caught:
        sync(ONE, path, apply=True)
    assert caught.value.option == "skip_invalid"
    assert [r.method for r in env_creds.requests] == ["GET"] and _terms(env_creds) == before


def test_apply_then_restore_brings_the_dictionary_back(
    env_creds: SandboxServer, tmp_path: Path
) -> None:
    path = tmp_path / "edited.xlsx"
    _edited(env_creds, path)
    before = _terms(env_creds)
    env_creds.clear_log()
    result = sync(ONE, path, apply=True, delete_missing=True, skip_invalid=True, yes=True)
    assert isinstance(result, SyncResult) and result.ok and result.verified is True
    methods = Counter(r.method for r in env_creds.requests)
    # one listing to plan, one bulk POST, one PUT, one DELETE, one listing to verify
    assert methods == {"GET": 2, "POST": 1, "PUT": 1, "DELETE": 1}
    kept = read_snapshot(result.snapshot)
    assert kept.operation == "sync" and kept.format == "dict-magics-snapshot/2"
    assert len(kept.entries) == 2 and len(kept.added) == 2
    assert _terms(env_creds) != before
    undone = restore(ONE, prompter=ScriptedPrompter(["yes"]))
    assert undone.ok and len(undone.put_back) == 1 and len(undone.removed) == 2
    assert len(undone.added) == 1
    assert _terms(env_creds) == before  # equal terms, as a multiset


def test_deleting_missing_entries_asks_first(env_creds: SandboxServer, tmp_path: Path) -> None:
    path = tmp_path / "edited.csv"
    _edited(env_creds, path)
    before = _terms(env_creds)
    asked = ScriptedPrompter(["no"])
    with pytest.raises(UsageProblem, match="not confirmed"):
        sync(ONE, path, apply=True, delete_missing=True, skip_invalid=True, prompter=asked)
    assert asked.asked[0][0] == "warning" and "deletes 1 entry" in asked.asked[0][1]
    with pytest.raises(UsageProblem, match="without a confirmation"):
        sync(ONE, path, apply=True, delete_missing=True, skip_invalid=True)
    assert _terms(env_creds) == before


def test_update_then_restore_puts_the_old_terms_back_under_the_same_id(
    env_creds: SandboxServer,
) -> None:
    old = env_creds.entry("7")
    result = update(ONE, "7", to_text="NEW TARGET", from_text="new source")
    assert result.ok and result.old == old
    assert env_creds.entry("7").terms == (old.from_lang, "new source", old.to_lang, "NEW TARGET")
    kept = read_snapshot(result.snapshot)
    assert (kept.operation, kept.entries, kept.added) == ("update", [old], [])
    preview = restore(ONE, dry_run=True)
    assert preview.put_back == [old] and env_creds.entry("7").to_text == "NEW TARGET"
    assert " 0 entries" not in str(preview)  # an update's undo removes and re-adds nothing
    undone = restore(ONE)
    assert undone.ok and undone.put_back == [old]
    assert env_creds.entry("7") == old
    assert "put back 1 entry under their ids" in str(undone)
    assert "removed 0" not in str(undone) and "re-added 0" not in str(undone)


def test_update_checks_before_sending(env_creds: SandboxServer) -> None:
    env_creds.clear_log()
    with pytest.raises(InvalidEntryError, match="255"):
        update(ONE, "7", to_text="y" * 256)
    with pytest.raises(UsageProblem, match="nothing to change"):
        update(ONE, "7")
    with pytest.raises(UsageProblem, match="entry 999 is not in the dictionary"):
        update(ONE, "999", to_text="x")
    assert {r.method for r in env_creds.requests} <= {"GET"}


def test_add_names_the_new_id_and_checks_first(env_creds: SandboxServer) -> None:
    result = add(ONE, "en", "purchase requisition", "de", "Bestellanforderung")
    assert result.ok and result.entry.id
    assert env_creds.entry(result.entry.id).terms == (
        "en",
        "purchase requisition",
        "de",
        "Bestellanforderung",
    )
    assert f"added entry {result.entry.id}" in str(result)
    env_creds.clear_log()
    with pytest.raises(InvalidEntryError, match="zh-CN or zh-TW"):
        add(ONE, "zh", "你好", "en", "hello")
    preview = add(ONE, "en", "purchase order", "de", "Auftrag", dry_run=True)
    assert preview.alongside and "conflict" in str(preview)
    assert [r.method for r in env_creds.requests] == ["GET"]


def test_a_lost_bulk_answer_is_settled_by_a_listing_not_sent_twice(
    env_creds: SandboxServer, tmp_path: Path
) -> None:
    rows = [Entry("", *e.terms) for e in env_creds.entries.values()]
    rows += [Entry("", "en", f"lost {i}", "de", f"verloren {i}") for i in range(3)]
    path = write_glossary(tmp_path / "g.csv", rows)
    env_creds.inject("drop_after", method="POST")  # the service acts, the answer is lost
    env_creds.clear_log()
    result = sync(ONE, path, apply=True)
    posts = [r for r in env_creds.requests if r.method == "POST"]
    assert len(posts) == 1  # never sent twice
    assert result.ok and result.verified is True
    assert all(r.verified for r in result.adds)
    assert Counter(t for t in env_creds.terms if t[1].startswith("lost")) == Counter(
        ("en", f"lost {i}", "de", f"verloren {i}") for i in range(3)
    )


def test_cli_sync_json_shape(env_creds: SandboxServer, tmp_path: Path, capsys) -> None:
    from dict_magics.frontends.cli import main

    path = tmp_path / "edited.tsv"
    _edited(env_creds, path)
    assert main(["sync", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {
        "applied",
        "adds",
        "updates",
        "deletes",
        "unchanged",
        "conflicts",
        "invalid",
        "verified",
        "snapshot",
        "results",
    } <= set(data)
    assert data["applied"] is False and data["verified"] is None and data["snapshot"] is None
    assert set(data["updates"][0]) >= {"id", "old", "new"}
    assert set(data["conflicts"][0]) == {"entries", "row"}
    assert set(data["invalid"][0]) == {"row", "reason"}
    assert "id" not in data["adds"][0]
    env_creds.clear_log()
    assert main(["sync", str(path), "--dry-run", "--json"]) == 0  # the plan, as without --apply
    assert json.loads(capsys.readouterr().out)["applied"] is False
    assert main(["sync", str(path), "--dry-run", "--apply"]) == 2
    assert "contradict" in capsys.readouterr().err
    assert {r.method for r in env_creds.requests} == {"GET"}
    code = main(["sync", str(path), "--apply", "--skip-invalid", "--json", "-w", "1"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["applied"] is True and data["verified"] is True
    assert data["snapshot"] and len(data["results"]) == 3
    assert main(["sync", str(path), "--apply", "--json"]) == 2  # invalid rows: refused
    assert "--skip-invalid" in json.loads(capsys.readouterr().out)["error"]


def test_magics_show_the_plan_and_export(ip, env_creds: SandboxServer, tmp_path: Path) -> None:
    path = tmp_path / "out.csv"
    exported = ip.run_line_magic("dict_export", str(path))
    assert exported.count == 100 and path.read_bytes().startswith(b"\xef\xbb\xbf")
    plan = ip.run_line_magic("dict_sync", str(path))
    assert isinstance(plan, SyncPlan) and plan.empty and plan.unchanged == 100
    html = plan._repr_html_()
    assert "0 adds" in html and "<script" not in html
    added = ip.run_line_magic("dict_add", 'en "<b>bold</b>" de fett')
    assert added.ok and "&lt;b&gt;" in added._repr_html_()
    updated = ip.run_line_magic("dict_update", f"{added.entry.id} --to-text Fett")
    assert updated.ok and env_creds.entry(added.entry.id).to_text == "Fett"


def test_a_plan_says_how_to_ask_for_the_missing_entry_in_each_front_ends_words(
    ip, env_creds: SandboxServer, tmp_path: Path
) -> None:
    import os
    import subprocess
    import sys

    path = tmp_path / "edited.csv"
    _edited(env_creds, path)  # one entry of the file's pairs is missing from it
    kept = "not in the file is kept; to delete it too, run the sync again with --delete-missing)"
    plan = ip.run_line_magic("dict_sync", str(path))
    assert "(1 entry of " in str(plan) and kept in str(plan)
    assert "to delete it too, run the sync again with --delete-missing" in plan._repr_html_()
    assert "deleting them" not in str(plan)
    shown = subprocess.run(
        [sys.executable, "-m", "dict_magics", "sync", str(path)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=os.environ,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert kept in shown.stdout
    assert env_creds.entry("2") is not None  # a plan: nothing deleted
