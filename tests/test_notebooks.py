"""The demo notebooks, executed top to bottom in a real kernel of this interpreter.

Each runs twice: against a sandbox started here (its DICT_MAGICS_* variables passed to the
kernel, so the sandbox's state can be checked), and on its own, starting the embedded sandbox
inside the kernel as a user's first run does. Outputs are checked cell by cell, and no output may
contain the secret key.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from dict_magics.demo import (
    NOTEBOOKS,
    QUICKSTART_STEPS,
    cell_text,
    execute,
    kernel_env,
    load_notebook,
    notebook_path,
    running_kernel,
)
from dict_magics.sandbox import SandboxServer

REPO_NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
# Hex-encoded, so the secret itself never reaches a log (nbclient logs every kernel message).
SECRET_PROBE = "import os; print(os.environ['DICT_MAGICS_SECRET_KEY'].encode().hex())"


class Run:
    """One executed notebook: each code cell's text and exception name, by cell id."""

    def __init__(self, nb: nbformat.NotebookNode, secret: str) -> None:
        self.nb = nb
        self.secret = secret
        self.text: dict[str, str] = {}
        self.error: dict[str, str | None] = {}

    def __getitem__(self, cell_id: str) -> str:
        return self.text[cell_id]


def run_notebook(name: str, tmp_path: Path, sandbox: SandboxServer | None) -> Run:
    """Execute every cell; with no ``sandbox`` the notebook starts its own, whose secret is
    then read back from the kernel by one extra cell (not part of the notebook)."""
    nb = load_notebook(name)
    extra = sandbox.env() if sandbox is not None else {}
    probe = new_code_cell(SECRET_PROBE)
    with running_kernel(nb, kernel_env(extra, tmp_path), tmp_path) as client:
        run = Run(nb, "")
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            run.error[cell.id] = execute(client, cell, index)
            run.text[cell.id] = cell_text(cell)
            if run.error[cell.id] and "raises-exception" not in cell.metadata.get("tags", []):
                pytest.fail(f"cell {cell.id} raised {run.error[cell.id]}: {run.text[cell.id]}")
        nb.cells.append(probe)
        assert execute(client, probe, len(nb.cells) - 1) is None
        nb.cells.remove(probe)
    run.secret = bytes.fromhex(cell_text(probe).strip()).decode()
    assert run.secret and (sandbox is None or run.secret == sandbox.secret_key)
    saved = nbformat.writes(nb)
    assert run.secret not in saved
    for cell_id, text in run.text.items():
        assert run.secret not in text, f"cell {cell_id} shows the secret key"
    return run


def log(sandbox: SandboxServer) -> list[tuple[str, str | None, int | None]]:
    return [(r.operation, r.entry_id, r.http_status) for r in sandbox.requests]


# -- the committed files -------------------------------------------------------------------


def test_committed_notebooks_are_clean_and_installed() -> None:
    found = sorted(p.name for p in REPO_NOTEBOOKS.glob("*.ipynb"))
    assert found == sorted(NOTEBOOKS)
    for name in NOTEBOOKS:
        raw = json.loads((REPO_NOTEBOOKS / name).read_text(encoding="utf-8"))
        nb = nbformat.from_dict(raw)
        nbformat.validate(nb)
        assert nb.metadata.kernelspec.name == "python3"  # JupyterLab opens it without asking
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [], f"{name} cell {cell.id} has outputs"
                assert cell.execution_count is None, f"{name} cell {cell.id} has a count"
        text = (REPO_NOTEBOOKS / name).read_text(encoding="utf-8")
        assert "%dict_login" in text and "DICT_MAGICS_BASE_URL" in text
        assert "%config DictMagics.base_url" in text
        assert notebook_path(name).read_bytes() == (REPO_NOTEBOOKS / name).read_bytes()


def test_the_demo_knows_what_every_quickstart_cell_does() -> None:
    nb = load_notebook("quickstart.ipynb")
    assert [c.id for c in nb.cells if c.cell_type == "code"] == list(QUICKSTART_STEPS)


# -- quickstart ----------------------------------------------------------------------------


def check_quickstart(run: Run) -> None:
    assert run["status"].startswith("\u2713 dict-magics profile 'default'")
    assert "sand\u2026ey" in run["status"]
    assert run["delete-one"].startswith("\u2713 deleted entry '1' (HTTP 200")
    assert "\u2713 deleted 4 of 4 entries" in run["delete-several"]
    assert run["delete-again"].startswith("\u2717 entry '1' not deleted \u2014 HTTP 404")
    assert run.error["refused"] == "UsageError"
    assert "'dictionary-all' is not an entry id" in run["refused"]
    assert run["purge"].startswith("\u2713 deleted every entry (HTTP 200")
    assert [e for e in run.error.values() if e] == ["UsageError"]


def test_quickstart_against_a_given_sandbox(tmp_path: Path) -> None:
    with SandboxServer(100) as sandbox:
        run = run_notebook("quickstart.ipynb", tmp_path, sandbox)
        assert run["connect"] == f"Using the sandbox already running at {sandbox.url}"
        check_quickstart(run)
        sent = log(sandbox)
        assert sent[0] == ("delete", "1", 200)
        assert sorted(sent[1:5]) == [("delete", str(i), 200) for i in range(2, 6)]
        assert sent[5:] == [("delete", "1", 404), ("purge", None, 200)]  # refused: nothing sent
        assert sandbox.entries == {}


def test_quickstart_starts_its_own_sandbox(tmp_path: Path) -> None:
    run = run_notebook("quickstart.ipynb", tmp_path, None)
    assert run["connect"].startswith("Started an embedded sandbox at http://127.0.0.1:")
    assert run["connect"].endswith("with 100 entries")
    check_quickstart(run)


# -- panel ---------------------------------------------------------------------------------


def check_panel(run: Run) -> None:
    assert run["show-panel"] == "[widget]"
    assert run["arm-delete"] == "state: armed\nConfirm enabled: True"
    assert run["confirm-delete"].startswith("\u2713 deleted 3 of 3 entries")
    assert run["arm-purge"] == (
        "Confirm enabled before typing: False\nConfirm enabled after typing delete-all: True"
    )
    assert run["confirm-purge"].startswith("\u2713 deleted every entry (HTTP 200")


def test_panel_against_a_given_sandbox(tmp_path: Path) -> None:
    with SandboxServer(100) as sandbox:
        run = run_notebook("panel.ipynb", tmp_path, sandbox)
        check_panel(run)
        assert sorted(log(sandbox)[:3]) == [("delete", i, 200) for i in ("1", "2", "3")]
        assert log(sandbox)[3:] == [("purge", None, 200)]
        assert sandbox.entries == {}


def test_panel_starts_its_own_sandbox(tmp_path: Path) -> None:
    check_panel(run_notebook("panel.ipynb", tmp_path, None))


# -- bulk cleanup --------------------------------------------------------------------------


def check_bulk(run: Run) -> None:
    assert run["ids"] == "310 ids: 1, 2, 3 ... gone-9, gone-10"
    lines = run["bulk-delete"].splitlines()
    assert lines[0] == "[widget]"  # the progress bar
    assert lines[1] == "\u2717 deleted 295 of 310 entries; 15 not deleted"
    assert len(lines) == 2 + 15  # every failure listed with its reason
    summary = run["summary"].splitlines()
    assert summary[0] == "295 succeeded, 15 failed"
    assert summary[1].startswith("  10 x HTTP 404, the service answered status 'failure'")
    assert summary[2].startswith("   5 x HTTP 500 with an answer that is not JSON")
    assert run["retry"].splitlines()[-1].startswith("\u2713 deleted 5 of 5 entries")


def test_bulk_cleanup_against_a_given_sandbox(tmp_path: Path) -> None:
    with SandboxServer(500) as sandbox:
        sandbox.inject("html", 5)  # as the notebook does when it runs its own sandbox
        run = run_notebook("bulk_cleanup.ipynb", tmp_path, sandbox)
        check_bulk(run)
        assert sorted(sandbox.entries, key=int) == [str(i) for i in range(301, 501)]
        codes = [code for _, _, code in log(sandbox)]
        assert len(codes) == 310 + 5
        assert (codes.count(200), codes.count(404), codes.count(None)) == (300, 10, 5)


def test_bulk_cleanup_starts_its_own_sandbox(tmp_path: Path) -> None:
    run = run_notebook("bulk_cleanup.ipynb", tmp_path, None)
    assert run["connect"].endswith("with 500 entries")
    check_bulk(run)


# -- nothing can redirect a demo notebook to a real account --------------------------------


def test_stored_profile_and_config_cannot_redirect_the_notebook(tmp_path: Path) -> None:
    """A user whose IPython config picks a real profile (and base URL) runs the quickstart:
    the sandbox gets every request, the "real" service (another sandbox) none."""
    from file_keyring import ENV_FILE

    with SandboxServer(50) as real:
        keyring_file = tmp_path / "keyring.json"
        items = {"base_url": real.url, "access_key": real.access_key, "secret_key": real.secret_key}
        keyring_file.write_text(
            json.dumps({f"dict-magics\x00work:{k}": v for k, v in items.items()}), encoding="utf-8"
        )
        config = tmp_path / "ipython" / "profile_default"
        config.mkdir(parents=True)
        for name in ("ipython_config.py", "ipython_kernel_config.py"):
            (config / name).write_text(
                f"c.DictMagics.profile = 'work'\nc.DictMagics.base_url = {real.url!r}\n",
                encoding="utf-8",
            )
        extra = {
            "PYTHON_KEYRING_BACKEND": "file_keyring.FileKeyring",
            # The tests' folder (for file_keyring), before the code under test.
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")])
            ),
            ENV_FILE: str(keyring_file),
            "DICT_MAGICS_PROFILE": "work",
        }
        nb = load_notebook("quickstart.ipynb")
        env = kernel_env({}, tmp_path) | extra
        with running_kernel(nb, env, tmp_path) as client:
            probe = new_code_cell("print(get_ipython().config.DictMagics.profile)")
            nb.cells.insert(0, probe)
            assert execute(client, probe, 0) is None
            assert cell_text(probe).strip() == "work"  # the config really was in force
            nb.cells.remove(probe)
            for index, cell in enumerate(nb.cells):
                if cell.cell_type == "code":
                    execute(client, cell, index)
            texts = {cell.id: cell_text(cell) for cell in nb.cells if cell.cell_type == "code"}
        assert texts["purge"].startswith("\u2713 deleted every entry")
        assert real.requests == [] and len(real.entries) == 50


# -- cells that delete reach only the notebook's own sandbox -------------------------------

DELETING = ("%dict_delete", "%dict_purge", "confirm_button.click")


def deleting_cells(name: str) -> list[nbformat.NotebookNode]:
    cells = load_notebook(name).cells
    return [c for c in cells if c.cell_type == "code" and any(d in c.source for d in DELETING)]


def test_every_cell_that_deletes_first_checks_for_the_sandbox() -> None:
    for name in NOTEBOOKS:
        text = (REPO_NOTEBOOKS / name).read_text(encoding="utf-8")
        assert "USE_REAL_SERVICE" not in text, f"{name} still has a real-service switch"
        cells = deleting_cells(name)
        assert cells, name
        for cell in cells:
            assert cell.source.startswith("sandbox_only("), f"{name} cell {cell.id}"


def test_cells_that_delete_refuse_any_other_service(ip, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run All after pointing the session at a real account (another sandbox with the same
    keys): every cell that deletes refuses, and that account receives nothing."""
    with (
        SandboxServer(20) as sandbox,
        SandboxServer(20, access_key=sandbox.access_key, secret_key=sandbox.secret_key) as real,
    ):
        for variable, value in {**sandbox.env(), "DICT_MAGICS_PROFILE": "default"}.items():
            monkeypatch.setenv(variable, value)  # as `dict-magics demo` starts a kernel
        for name in NOTEBOOKS:
            refused = []
            for cell in load_notebook(name).cells:
                if cell.cell_type != "code" or cell.id == "load-extension":
                    continue
                outcome = ip.run_cell(cell.source)
                if cell.id == "connect":  # then the user points the session elsewhere
                    ip.run_line_magic("config", f"DictMagics.base_url = {real.url!r}")
                if any(d in cell.source for d in DELETING):
                    assert type(outcome.error_in_exec).__name__ == "UsageError", cell.id
                    assert "runs only against the sandbox" in str(outcome.error_in_exec)
                    assert f"would go to {real.url}" in str(outcome.error_in_exec)
                    refused.append(cell.id)
            assert refused == [c.id for c in deleting_cells(name)]
            panel = ip.user_ns.pop("panel", None)
            if panel is not None:
                panel.close()
        assert real.requests == [] and len(real.entries) == 20
        assert sandbox.requests == []
