"""``check --translate``: the engine's own answer beside the prediction, against the sandbox's
dictionary-only engine over loopback (the magic, the cell magic, the command line, the client).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import point_at, run_cli
from IPython.utils.capture import capture_output
from test_sandbox_translate import ANIMALS, WORKED
from test_textcheck import run

from dict_magics.errors import ServiceError, UsageProblem
from dict_magics.models import CheckReport
from dict_magics.sandbox import SandboxServer
from dict_magics.service.client import DictionaryClient

PAIR = ("--from-lang", "ja", "--to-lang", "en")


def usage_error(ip: Any, cell: str) -> str:
    with capture_output():
        outcome = ip.run_cell(cell)
    assert type(outcome.error_in_exec).__name__ == "UsageError", (cell, outcome.error_in_exec)
    return str(outcome.error_in_exec)


def translated(server: SandboxServer) -> list[Any]:
    return [r for r in server.requests if r.operation == "translate"]


@pytest.mark.parametrize("engine_unit", ["element", "request"])
def test_the_vendors_worked_example_against_an_engine_counting_each_way(
    ip: Any, monkeypatch: pytest.MonkeyPatch, engine_unit: str
) -> None:
    """The prediction counts per element (no probe ran); an engine counting per request applies
    クマ nowhere: element 2 disagrees, and says so in every front end."""
    with SandboxServer(ANIMALS, limit_unit=engine_unit) as server:
        point_at(monkeypatch, server)
        report = run(ip, f"%%dict_check --translate --yes {' '.join(PAIR)}\n" + "\n".join(WORKED))
        assert isinstance(report, CheckReport) and report.unit == "element"
        assert [e.applied for e in report.engine] == (
            [["1", "2", "3"], ["3", "4"]] if engine_unit == "element" else [["1", "2", "3"], ["3"]]
        )
        assert (
            report.engine[0].translation
            == "これはKittyです。それはMarutaroです。Peterとクマも動物です。"
        )
        expected = [] if engine_unit == "element" else [
            {"index": 1, "predicted": ["3", "4"], "engine": ["3"]}
        ]  # fmt: skip
        assert report.disagreements == expected
        text = str(report)
        assert f"{len(expected)} of 2 elements differ" in text
        assert ("predicted only: 4: クマ \u2192 Teddy" in text) == bool(expected)
        assert len(translated(server)) == 1  # both elements in one request, in order

        data = _cli_json(server, "\n".join(WORKED))
        assert data["disagreements"] == expected
        first = data["sentences"][0]["engine"]
        assert first["applied"] == ["1", "2", "3"] and first["not_applied"] == ["4"]
        assert data["sentences"][1]["engine"]["translation"].startswith("Peterと")

        ip.user_ns["texts"] = WORKED  # a list: one element per item, as the cell's lines
        listed = run(ip, f"%dict_check --translate --yes {' '.join(PAIR)} {{texts}}")
        assert listed.disagreements == expected and len(listed.elements) == 2
        # Counted as the engine counts, the prediction agrees.
        same = run(
            ip, f"%dict_check --translate -y --unit {engine_unit} {' '.join(PAIR)} {WORKED[1]}"
        )
        assert same.disagreements == []


def _cli_json(server: SandboxServer, text: str) -> Any:
    proc = subprocess.run(
        [sys.executable, "-m", "dict_magics", "check", "--translate", "-y", *PAIR, "--json", "-"],
        input=text,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**os.environ, **server.env()},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_it_asks_before_sending_unless_yes(
    ip: Any, env_creds: SandboxServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    answers = iter(["no", "yes"])
    asked: list[str] = []
    monkeypatch.setattr("builtins.input", lambda q="": asked.append(q) or next(answers))
    said = usage_error(ip, f"%dict_check --translate {' '.join(PAIR)} 猫")
    assert "Cancelled" in said and translated(env_creds) == []
    report = run(ip, f"%dict_check --translate {' '.join(PAIR)} 猫")
    assert report.engine is not None and len(translated(env_creds)) == 1
    assert all("Type yes to send it" in q for q in asked) and len(asked) == 2
    # A front end that cannot ask: one usage error naming --yes, nothing translated.
    sample = tmp_path / "sample.txt"
    sample.write_text("\n".join(WORKED), encoding="utf-8")
    proc = run_cli(env_creds, "check", "--translate", *PAIR, str(sample))
    assert proc.returncode == 2 and "(--yes)" in proc.stderr, proc.stderr
    assert len(translated(env_creds)) == 1


def test_translate_needs_a_pair_and_elements_within_the_limits(
    ip: Any, env_creds: SandboxServer
) -> None:
    assert "needs both languages" in usage_error(ip, "%dict_check --translate -y 猫")
    long = " ".join(["word"] * 201)
    said = usage_error(ip, f"%%dict_check --translate -y {' '.join(PAIR)}\n猫\n{long}\n")
    assert "element 2 has 201 words" in said and "nothing was sent" in said
    assert env_creds.received == []  # not even the listing


def test_the_client_splits_at_270_kb_keeping_the_order(sandbox: SandboxServer) -> None:
    client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key)
    texts = [f"{n}" + "x" * 100_000 for n in range(5)]  # one word each, 100 KB each
    assert client.translate(texts, "ja", "en") == texts  # no entry applies: as sent
    assert [len(r.entries) for r in translated(sandbox)] == [0, 0, 0]  # 2 + 2 + 1 elements
    with pytest.raises(UsageProblem, match="element 2 has 276,480 bytes"):
        client.translate(["a", "y" * 270 * 1024], "ja", "en")
    with pytest.raises(ServiceError, match=r"could not translate.*40202"):
        client.translate(["猫"], "ja", "en", field_id="2")
    assert client.translate(["猫"], "ja", "en", contract_id="7") == ["猫"]
    assert len(translated(sandbox)) == 4
