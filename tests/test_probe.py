"""``probe``: each rule found against sandboxes that differ in exactly that rule, the dictionary
left as it began (ids and terms, never a purge), an interrupted probe naming its markers, and
what the client, ``check`` and ``status`` do with what it found.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import paired_audit, point_at, run_cli
from IPython.utils.capture import capture_output
from test_sandbox_variants import VENDOR

from dict_magics.models import Entry, ProbeResult
from dict_magics.operations.context import OperationSettings
from dict_magics.operations.probe import probe
from dict_magics.sandbox import SandboxServer

VARIANTS = [
    ("listing", "entries"),
    ("ids", "string"),
    ("nonce_rule", "unique"),
    ("nonce_rule", "none"),
    ("errors", "plain"),
    ("bulk", False),
    ("update", False),
    ("token", False),
    ("limit_unit", "request"),
    ("limit_unit", "sentence"),
    ("case_sensitive", False),
]
SEEDED = [
    Entry("7", "ja", "猫", "en", "Kitty"),
    Entry("12", "en", "invoice", "de", "Rechnung"),
    Entry("40", "ja", "会議", "en", "meeting"),
]


def purged(server: SandboxServer) -> bool:
    return any("dictionary-all" in r.path for r in server.received)


def as_listed(server: SandboxServer) -> list[tuple[str, tuple[str, str, str, str]]]:
    return sorted((i, e.terms) for i, e in server.entries.items())


@pytest.mark.parametrize(("field", "value"), [(None, None), *VARIANTS])
def test_each_rule_is_found_on_a_sandbox_differing_in_it_alone(
    monkeypatch: pytest.MonkeyPatch, field: str | None, value: Any
) -> None:
    variant = {field: value} if field else {}
    with SandboxServer(SEEDED, **variant) as server:
        point_at(monkeypatch, server)
        before = as_listed(server)
        found = probe(OperationSettings(), translate=True, yes=True)
        assert found.ok, str(found)
        assert {k: v for k, v in found.to_json().items() if k in VENDOR} == {
            **VENDOR,
            **variant,
        }
        assert found.unchanged and as_listed(server) == before and not purged(server)
        assert found.requests == len(server.received)
        assert [r.operation for r in server.requests].count("translate") == 1


def test_without_translate_the_engine_is_not_asked(env_creds: SandboxServer) -> None:
    proc = run_cli(env_creds, "probe", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert list(data) == [*VENDOR, "unchanged", "requests"]
    assert data["limit_unit"] is None and data["case_sensitive"] is None and data["unchanged"]
    assert "translate" not in [r.operation for r in env_creds.requests] and not purged(env_creds)
    # Asked to translate where nobody can answer: a usage error naming --yes, nothing sent.
    count = len(env_creds.received)
    refused = run_cli(env_creds, "probe", "--translate")
    assert refused.returncode == 2 and "(--yes)" in refused.stderr
    assert len(env_creds.received) == count


def test_markers_are_its_own_and_the_dictionary_ends_as_it_began(env_creds: SandboxServer) -> None:
    before = as_listed(env_creds)
    probe(OperationSettings(), translate=True, yes=True)
    changed = [r for r in env_creds.requests if r.operation in ("add", "bulk", "update", "delete")]
    touched = [e for r in changed for e in ([r.entry] if r.entry else r.entries)]
    assert touched and all(e.from_text.startswith("dmp") for e in touched)
    assert {r.entry_id for r in changed if r.entry_id} <= {
        e.id for e in touched
    }  # no DELETE or PUT named an entry that was there before
    assert not {r.entry_id for r in changed} & {i for i, _ in before}
    assert as_listed(env_creds) == before and not purged(env_creds)


def test_the_magic_keeps_what_it_found_for_check_status_and_the_client(
    ip: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with SandboxServer(
        SEEDED, limit_unit="request", case_sensitive=False, bulk=False, update=False
    ) as server:
        point_at(monkeypatch, server)
        with capture_output():
            found = ip.run_line_magic("dict_probe", "--translate --yes")
        assert isinstance(found, ProbeResult) and found.ok
        with capture_output() as cap:
            ip.run_cell("%dict_status")
        assert "probe:" in cap.stdout and "limit unit request" in cap.stdout
        with capture_output():
            report = ip.run_line_magic("dict_check", "猫と会議。CAT")
        assert report.unit == "request" and report.case_sensitive is False
        # Impact counts the limit as found too.
        corpus = tmp_path / "corpus.txt"
        corpus.write_text("猫と会議。\n", encoding="utf-8")
        with capture_output() as cap:
            ip.run_cell(f"%dict_delete --dry-run 7 --corpus {corpus}")
        assert "(limit 3 per request)" in cap.stdout, cap.stdout
        status = json.loads(run_cli(server, "status", "--json").stdout)
        assert status["probe"]["limit_unit"] == "request" and status["probe"]["date"]
        # No PUT: an update is refused before anything is sent, naming why.
        count = len(server.received)
        with capture_output():
            outcome = ip.run_cell("%dict_update 7 --to-text Cat")
        said = str(outcome.error_in_exec)
        assert "no PUT" in said and "new id" in said and len(server.received) == count


def test_no_bulk_sends_single_posts_said_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    glossary = tmp_path / "glossary.csv"
    rows = ["fromLang,fromText,toLang,toText", *(f"en,word{n},de,Wort{n}" for n in range(3))]
    glossary.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with SandboxServer(SEEDED, bulk=False, update=False) as server:
        point_at(monkeypatch, server)
        # Before any probe: the bulk request's 404 proves nothing was added; one POST each.
        proc = run_cli(server, "sync", str(glossary), "--apply", "--yes")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        operations = [r.operation for r in server.requests]
        assert operations.count("rejected") == 1 and operations.count("add") == 3
        assert proc.stderr.count("no bulk endpoint") == 1
        # After a probe: no bulk request at all.
        probe(OperationSettings())
        server.clear_log()
        glossary.write_text(
            "\n".join([*rows, *(f"en,more{n},de,Mehr{n}" for n in range(2))]) + "\n",
            encoding="utf-8",
        )
        proc = run_cli(server, "sync", str(glossary), "--apply", "--yes")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert [r.operation for r in server.requests].count("add") == 2
        assert "bulk" not in [r.operation for r in server.requests]
        assert proc.stderr.count("no bulk endpoint") == 1
        # No PUT: a sync with an update is refused before anything is sent.
        glossary.write_text("\n".join([rows[0], "en,word0,de,Wort-neu"]) + "\n", encoding="utf-8")
        server.clear_log()
        proc = run_cli(server, "sync", str(glossary), "--apply", "--yes")
        assert proc.returncode == 2 and "no PUT" in proc.stderr
        assert [r.method for r in server.received] == ["GET"]  # the plan's listing only


def test_a_failing_probe_names_its_markers_and_the_delete_that_removes_them(
    env_creds: SandboxServer,
) -> None:
    before = as_listed(env_creds)
    env_creds.inject("status", count=20, status=400, method="DELETE")
    proc = run_cli(env_creds, "probe")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    left = sorted(set(env_creds.entries) - {i for i, _ in before}, key=int)
    assert len(left) == 6
    command = f"`dict-magics delete {' '.join(left)}`"
    assert command in proc.stdout, proc.stdout
    env_creds.clear_faults()
    assert run_cli(env_creds, "delete", *left).returncode == 0
    assert as_listed(env_creds) == before and not purged(env_creds)


def test_a_marker_deleted_whose_answer_was_lost_is_settled_by_the_listing(
    env_creds: SandboxServer,
) -> None:
    """The service deletes a marker, then the connection drops: the probe's last listing shows
    it gone, so nothing is left, the dictionary is unchanged, and the audit says so."""
    before = as_listed(env_creds)
    env_creds.inject("drop_after", count=1, method="DELETE")
    proc = run_cli(env_creds, "probe", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert data["unchanged"] is True and "left" not in data and "stopped" not in data
    assert as_listed(env_creds) == before and not purged(env_creds)
    deletes = [line for line in paired_audit() if line["operation"] == "delete"]
    assert len(deletes) == 6 and all(line["entry"] for line in deletes)  # each names its marker
    assert all(line["outcome"] == "success" for line in deletes)
    assert any("verified by listing" in (line.get("reason") or "") for line in deletes)


def test_ctrl_c_mid_probe_names_its_markers(tmp_path: Path) -> None:
    """A real Ctrl-C while the sandbox holds the probe's PUT (of its own marker): the PUT is
    waited for, then the probe stops, naming every marker and how to remove them."""
    with SandboxServer(SEEDED) as server:
        before = as_listed(server)
        server.inject("hang", delay=3.0, method="PUT")
        proc = subprocess.Popen(
            [sys.executable, "-m", "dict_magics", "probe", "--json"],
            env={**os.environ, **server.env(), "DICT_MAGICS_HOME": str(tmp_path)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.default_int_handler),
        )
        deadline = time.monotonic() + 60
        while not any(r.method == "PUT" for r in server.received):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        data = json.loads(out)
        assert data["stopped"].startswith("interrupted")
        left = [e["id"] for e in data["left"]]
        assert sorted(left, key=int) == sorted(
            set(server.entries) - {i for i, _ in before}, key=int
        )
        assert len(left) == 6 and not purged(server)
        assert run_cli(server, "delete", *left).returncode == 0
        assert as_listed(server) == before
