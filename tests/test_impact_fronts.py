"""``--corpus`` (``%config DictMagics.corpus``, ``DICT_MAGICS_CORPUS``) in the front ends: a
sync's plan and apply, and the dry runs of delete, add and update show their impact on the
corpus after the result, ``--json`` adds ``"impact"``; a corpus that cannot be read is a usage
error before anything is sent; ``--corpus`` on a change that is not a dry run is refused.

Real shell, real ``dict-magics`` subprocess, the real sandbox holding the vendor's worked example.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import point_at, run_cell, run_cli
from IPython.core.error import UsageError
from test_sandbox_translate import ANIMALS, WORKED

from dict_magics.models import ChangePreview, DryRunResult, SyncPlan, SyncResult
from dict_magics.sandbox import SandboxServer

LINES = [*WORKED, "何もない"]
GLOSSARY = "fromLang,fromText,toLang,toText\nja,これ,en,This\nja,ウサギ,en,Bunny\n"
# Line 1 of the corpus: これ pushes ウサギ past the limit; line 2: ウサギ's target changes.
SYNC_IMPACT = {
    "lines": 3,
    "changed": [
        {
            "line": 1,
            "text": WORKED[0],
            "before": [e.to_service() for e in ANIMALS[:3]],
            "after": [
                {"fromLang": "ja", "fromText": "これ", "toLang": "en", "toText": "This"},
                *[e.to_service() for e in ANIMALS[:2]],
            ],
        },
        {
            "line": 2,
            "text": WORKED[1],
            "before": [e.to_service() for e in ANIMALS[2:]],
            "after": [{**ANIMALS[2].to_service(), "toText": "Bunny"}, ANIMALS[3].to_service()],
        },
    ],
}
# Each dry run, and the lines it changes.
DRY_RUNS = {
    "delete": (["delete", "1"], [1]),  # クマ back under the limit in line 1
    "add": (["add", "ja", "これ", "en", "This"], [1]),
    "update": (["update", "3", "--to-text", "Bunny"], [1, 2]),
}


@pytest.fixture
def animals(monkeypatch: pytest.MonkeyPatch) -> Iterator[SandboxServer]:
    with SandboxServer(ANIMALS) as server:
        yield point_at(monkeypatch, server)


@pytest.fixture
def texts(tmp_path: Path) -> dict[str, str]:
    corpus, glossary = tmp_path / "texts.txt", tmp_path / "glossary.csv"
    corpus.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    glossary.write_text(GLOSSARY, encoding="utf-8")
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("猫\n".encode() + "caf\xe9\n".encode("latin-1"))
    missing = tmp_path / "missing.txt"
    return {
        "corpus": str(corpus),
        "glossary": str(glossary),
        "bad": str(bad),
        "missing": str(missing),
    }


def changed_lines(data: dict[str, Any]) -> list[int]:
    return [c["line"] for c in data["impact"]["changed"]]


# -- the command line ----------------------------------------------------------------------


def test_cli_sync_plan_and_apply_show_the_impact(animals: SandboxServer, texts: dict) -> None:
    plan = run_cli(animals, "sync", texts["glossary"], "--corpus", texts["corpus"], "--json")
    assert plan.returncode == 0, plan.stderr
    assert json.loads(plan.stdout)["impact"] == SYNC_IMPACT
    shown = run_cli(animals, "sync", texts["glossary"], "--corpus", texts["corpus"])
    head, _, impact = shown.stdout.partition("impact on 3 sample lines (limit 3 per element)")
    assert head.startswith("Sync plan for") and "(this is a plan: nothing was sent)" in head
    assert impact.startswith(": 2 lines change, 1 does not\n  line 1: ")
    assert "pushed past the limit by これ \u2192 This" in impact
    assert [r.operation for r in animals.requests] == ["list", "list"]
    applied = run_cli(
        animals, "sync", texts["glossary"], "--corpus", texts["corpus"], "--apply", "--json"
    )
    assert applied.returncode == 0, applied.stderr
    data = json.loads(applied.stdout)
    assert data["applied"] and data["verified"] and data["impact"] == SYNC_IMPACT
    # After the apply, check reads each changed line as the impact's "after".
    after = run_cli(animals, "check", texts["corpus"], "--json")
    applied_ids = [s["applied"] for s in json.loads(after.stdout)["sentences"]]
    assert applied_ids[1] == ["3", "4"] and len(applied_ids[0]) == 3 and "3" not in applied_ids[0]


@pytest.mark.parametrize("command", sorted(DRY_RUNS))
def test_cli_dry_runs_show_the_impact(
    animals: SandboxServer, texts: dict, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    args, lines = DRY_RUNS[command]
    proc = run_cli(animals, *args, "--dry-run", "--corpus", texts["corpus"], "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["dry_run"] is True and data["impact"]["lines"] == 3
    assert changed_lines(data) == lines
    monkeypatch.setenv("DICT_MAGICS_CORPUS", texts["corpus"])
    text = run_cli(animals, *args, "--dry-run")
    assert (
        text.returncode == 0
        and "\n\u2013 impact on 3 sample lines (limit 3 per element): " in text.stdout
    )
    assert all(r.operation == "list" for r in animals.requests)


@pytest.mark.parametrize("command", [*sorted(DRY_RUNS), "sync"])
@pytest.mark.parametrize("which", ["missing", "bad"])
def test_cli_an_unreadable_corpus_is_a_usage_error_before_anything_is_sent(
    animals: SandboxServer, texts: dict, command: str, which: str
) -> None:
    args = ["sync", texts["glossary"], "--apply"] if command == "sync" else DRY_RUNS[command][0]
    args = [*args, "--dry-run"] if command != "sync" else args
    proc = run_cli(animals, *args, "--corpus", texts[which], "--json")
    assert proc.returncode == 2, proc.stderr
    said = json.loads(proc.stdout)
    assert said["exit"] == 2 and ("line 2" if which == "bad" else "cannot read") in said["error"]
    assert animals.requests == []


def test_cli_corpus_where_no_impact_can_be_shown(
    animals: SandboxServer, texts: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--corpus`` on a change that is not a dry run is refused (nothing sent); a corpus from
    the environment is then not used, and the change goes ahead."""
    for args in (
        ["delete", "1"],
        ["add", "ja", "これ", "en", "This"],
        ["update", "3", "--to-text", "X"],
    ):
        proc = run_cli(animals, *args, "--corpus", texts["corpus"])
        assert proc.returncode == 2 and "add --dry-run" in proc.stderr, proc.stderr
    assert animals.requests == []
    monkeypatch.setenv("DICT_MAGICS_CORPUS", texts["missing"])
    proc = run_cli(animals, "delete", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "impact" not in json.loads(proc.stdout) and "1" not in animals.entries


def test_cli_a_dry_run_without_a_listing_says_its_impact_is_unavailable(texts: dict) -> None:
    with SandboxServer(ANIMALS, listing=False) as server:
        proc = run_cli(server, "delete", "1", "--dry-run", "--corpus", texts["corpus"], "--json")
    assert proc.returncode == 0, proc.stderr
    assert "impact" not in json.loads(proc.stdout)
    assert "impact unavailable: the service offers no listing" in proc.stderr


# -- the magics ----------------------------------------------------------------------------


def test_magic_sync_returns_the_plan_holding_its_impact(
    ip: Any, animals: SandboxServer, texts: dict
) -> None:
    ip.user_ns.update(texts)
    run_cell(ip, "plan = %dict_sync {glossary} --corpus {corpus}")
    plan = ip.user_ns["plan"]
    assert isinstance(plan, SyncPlan) and plan.corpus_impact.to_json() == SYNC_IMPACT
    assert plan.impact(texts["corpus"]) == plan.corpus_impact  # the method still measures
    assert str(plan).index("(this is a plan") < str(plan).index("impact on 3 sample lines")
    html = plan._repr_html_()
    assert html.index("dict-magics-sync-plan") < html.index("dict-magics-impact")
    result, _, _ = run_cell(ip, "%dict_sync {glossary} --corpus {corpus} --apply")
    assert isinstance(result, SyncResult) and result.ok
    assert result.plan.corpus_impact.to_json() == SYNC_IMPACT
    assert (
        "impact on 3 sample lines" in str(result) and "dict-magics-impact" in result._repr_html_()
    )


@pytest.mark.parametrize("command", sorted(DRY_RUNS))
def test_magic_dry_runs_take_the_configured_corpus(
    ip: Any, animals: SandboxServer, texts: dict, command: str
) -> None:
    args, lines = DRY_RUNS[command]
    run_cell(ip, f"%config DictMagics.corpus = {texts['corpus']!r}")
    result, _, _ = run_cell(ip, f"%dict_{command} {' '.join(args[1:])} --dry-run")
    assert isinstance(result, DryRunResult | ChangePreview)
    assert [c.line for c in result.corpus_impact.changed] == lines
    assert "\n\u2013 impact on 3 sample lines" in str(result)
    # --corpus overrides the setting; a change that is not a dry run leaves the setting alone
    with pytest.raises(UsageError, match="cannot read the corpus"):
        run_cell(ip, f"%dict_{command} {' '.join(args[1:])} --dry-run --corpus {texts['missing']}")
    with pytest.raises(UsageError, match="add --dry-run"):
        run_cell(ip, f"%dict_{command} {' '.join(args[1:])} --corpus {texts['corpus']}")
    assert all(r.operation == "list" for r in animals.requests)


def test_magic_takes_the_environment_and_refuses_an_unreadable_corpus_first(
    ip: Any, animals: SandboxServer, texts: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DICT_MAGICS_CORPUS", texts["corpus"])
    result, _, _ = run_cell(ip, "%dict_delete 1 --dry-run")
    assert [c.line for c in result.corpus_impact.changed] == [1]
    animals.clear_log()
    monkeypatch.setenv("DICT_MAGICS_CORPUS", texts["bad"])
    ip.user_ns["glossary"] = texts["glossary"]
    for cell in ("%dict_delete 1 --dry-run", "%dict_sync {glossary} --apply", "%dict_panel"):
        with pytest.raises(UsageError, match="not UTF-8 text: line 2"):
            run_cell(ip, cell)
    assert animals.requests == []
    result, _, _ = run_cell(ip, "%dict_delete 1")  # not a dry run: the corpus is not read
    assert result.ok and "1" not in animals.entries
