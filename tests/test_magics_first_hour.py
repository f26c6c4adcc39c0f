"""A new user's first hour with the magics (issue 22, item 20): bounded lists, no repeated
paths, and a hint where the panel cannot show."""

from __future__ import annotations

from typing import Any

from test_magics import run

from dict_magics.models import Entry
from dict_magics.operations.snapshots import write_snapshot
from dict_magics.sandbox import SandboxServer

WHERE = {"profile": "default", "host": "h", "base_url": "http://127.0.0.1:1"}


def test_dict_snapshots_shows_the_newest_20_unless_told(ip: Any) -> None:
    entry = Entry("1", "en", "a", "de", "b")
    made = [write_snapshot([entry], operation="delete", **WHERE) for _ in range(25)]
    shown = run(ip, "%dict_snapshots")
    assert len(shown.result) == 20 and shown.result[0].path == made[-1]
    assert "the 20 newest of 25 snapshots" in shown.stdout
    assert len(run(ip, "%dict_snapshots -n 0").result) == 25
    assert len(run(ip, "%dict_snapshots -n 3").result) == 3


def test_dict_log_names_a_shared_snapshot_once(ip: Any, env_creds: SandboxServer) -> None:
    assert run(ip, "%dict_delete 1 2 3").result.ok
    text = str(run(ip, "%dict_log").result)
    [path] = {r.snapshot for r in run(ip, "%dict_delete 4 5").result.results}
    text = str(run(ip, "%dict_log").result)
    assert text.count(path) == 1 and text.count("snapshot ") == 2


def test_dict_panel_in_a_terminal_says_where_it_shows(ip: Any, env_creds: SandboxServer) -> None:
    outcome = run(ip, "%dict_panel")
    assert outcome.error is None and outcome.result is not None
    assert "shows in Jupyter" in outcome.stdout and "plain terminal" in outcome.stdout
    # Saved in a notebook and read where widgets cannot run (GitHub): a sentence, not a tree.
    shown = repr(outcome.result)
    assert shown.startswith("DictPanel(profile=") and "running Jupyter front end" in shown
    assert "children=" not in shown
    outcome.result.close()
