"""``dict-magics demo``: the quickstart notebook, run headlessly and checked step by step.

The last test runs the README's Quick start command verbatim in a fresh virtual environment
(pip install included, so a few minutes); it runs when DICT_MAGICS_QUICKSTART_TEST=1, as CI sets.
"""

from __future__ import annotations

import dataclasses
import io
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import nbformat
import pytest

from dict_magics.demo import QUICKSTART_STEPS, Step, run_demo
from dict_magics.models import Entry
from dict_magics.sandbox.store import generated_entry

CLI = [sys.executable, "-m", "dict_magics"]
ROOT = Path(__file__).resolve().parent.parent
QUICKSTART_ENV = "DICT_MAGICS_QUICKSTART_TEST"
# The README's Quick start command, verbatim (README.md and .ci/run carry the same string).
QUICKSTART_DEMO = (
    "python3 -m venv .venv && .venv/bin/pip install '.[demo]' && .venv/bin/dict-magics demo"
)
SECRET_PREFIX = "sandbox-secret-"


def clean_env(home: Path) -> dict[str, str]:
    """This environment without anyone's dict-magics settings or keyring."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DICT_MAGICS_")}
    env.update(HOME=str(home), PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    return env


def check_passed(stdout: str, notebook: Path) -> None:
    steps = list(QUICKSTART_STEPS)
    for number, cell_id in enumerate(steps, 1):
        assert f"[{number}/{len(steps)}] {cell_id}: " in stdout
    assert stdout.count("\u2713 as the notebook says") == len(steps)
    assert "not as the notebook says" not in stdout
    assert f"Executed notebook written to {notebook.resolve()}" in stdout
    assert stdout.rstrip().endswith(
        f"Demo passed: all {len(steps)} steps did what the notebook says."
    )
    nb = nbformat.read(notebook, as_version=4)
    code = {c.id: c for c in nb.cells if c.cell_type == "code"}
    assert list(code) == steps
    assert all(c.execution_count for c in code.values())
    assert all(c.outputs for cell_id, c in code.items() if cell_id != "load-extension")
    assert "\u2713 deleted every entry" in code["purge"].outputs[0]["data"]["text/plain"]
    assert "widgets" in nb.metadata  # the progress bar can be redrawn when opened
    assert SECRET_PREFIX not in notebook.read_text(encoding="utf-8")


def demo_process(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """``dict-magics demo`` in ``tmp_path`` with a clean environment and no stdin."""
    return subprocess.run(
        [*CLI, "demo", *options],
        cwd=tmp_path,
        env=clean_env(tmp_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
    )


def test_demo_command_runs_the_quickstart(tmp_path: Path) -> None:
    proc = demo_process(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    check_passed(proc.stdout, tmp_path / "dict-magics-demo.ipynb")
    assert "\u2713 deleted 1: \u91d1\u66dc\u65e5 \u2192 FRI (ja\u2192en) (HTTP 200" in proc.stdout
    # Entry 1 again: absent, not sent (issue 22, item 17); a purge lists after, for late additions.
    assert "entry '1' absent" in proc.stdout
    assert "sandbox: GET listing \u2192 200; 93 entries left" in proc.stdout
    assert (
        "sandbox: GET listing \u2192 200, purge \u2192 200, GET listing \u2192 200; 0 entries left"
        in proc.stdout
    )
    assert "\u2713 restored 99 entries" in proc.stdout
    # A restore's bulk addition is shown entry by entry, with how many requests carried them.
    assert (
        "\u2026 (101 in all, in 3 requests: additions go in bulk); 99 entries left" in proc.stdout
    )
    # The setup cell is one line: its call, not its imports and comments.
    setup = r"> sandbox = use_sandbox\(entries=100\)  # \(setup: \d+ lines of imports and comments"
    assert re.search(setup, proc.stdout)
    assert "import use_sandbox" not in proc.stdout
    assert "\u2026 (" in proc.stdout and " more lines)" in proc.stdout  # long outputs cut short
    assert SECRET_PREFIX not in proc.stdout + proc.stderr
    assert not (tmp_path / "data").exists()  # snapshots and audit log: in a temporary folder


def test_demo_writes_where_it_is_told(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "run.ipynb"
    target.parent.mkdir()
    target.write_text("an earlier run", encoding="utf-8")
    proc = demo_process(tmp_path, "--output", str(target), "--force")  # replaces it, as asked
    assert proc.returncode == 0, proc.stdout + proc.stderr
    check_passed(proc.stdout, target)


def test_demo_never_replaces_a_notebook_unasked(tmp_path: Path) -> None:
    target = tmp_path / "dict-magics-demo.ipynb"
    target.write_text("my own notes", encoding="utf-8")
    proc = demo_process(tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"will not replace {target}" in proc.stderr and "--force" in proc.stderr
    assert "Nothing was run." in proc.stderr and "Sandbox" not in proc.stdout
    assert target.read_text(encoding="utf-8") == "my own notes"


def test_demo_fails_and_stops_when_a_step_does_something_else(tmp_path: Path) -> None:
    # Expect the service to refuse entry 1: the sandbox deletes it, so the demo must say no.
    steps = dict(QUICKSTART_STEPS)
    steps["delete-one"] = dataclasses.replace(
        steps["delete-one"], output="\u2717", requests=(("list", None, 200), ("delete", "1", 404))
    )
    number, total = list(steps).index("delete-one") + 1, len(steps)
    out = io.StringIO()
    target = tmp_path / "failed.ipynb"
    assert run_demo(target, out, steps=steps) == 1
    text = out.getvalue()
    assert "\u2717 not as the notebook says: its output does not show '\u2717'" in text
    assert "the sandbox received [('delete', '1', 200), ('list', None, 200)]" in text
    assert f"[{number + 1}/{total}]" not in text  # it stops at the first step that went wrong
    assert text.rstrip().endswith(f"Demo FAILED at step {number} of {total}.")
    assert target.exists()  # written anyway, to look at


def entries(*ids: str) -> dict[str, Entry]:
    return {i: generated_entry(i) for i in ids}


def test_a_restore_step_must_bring_back_what_the_step_it_undoes_removed() -> None:
    step = Step("put them back", requests=(("add", "7", 200), ("add", "8", 200)), restores="del")
    before = entries("1")
    removed = {"del": Counter([generated_entry("2").terms, generated_entry("3").terms])}
    back = {**before, "7": replace(generated_entry("2"), id="7")}
    back["8"] = replace(generated_entry("3"), id="8")
    sent = [("add", "8", 200), ("add", "7", 200)]
    assert step.problems("", None, before, back, sent, removed) == []
    wrong = {**back, "8": replace(generated_entry("4"), id="8")}  # other terms came back
    assert step.problems("", None, before, wrong, sent, removed) == [
        "the entries added are not the ones 'del' removed"
    ]
    assert step.problems("", None, before, before, [], removed) == [
        "the sandbox received [], expected [('add', None, 200) x2]",
        "the sandbox holds 1 entries, expected 3",
        "the entries added are not the ones 'del' removed",
    ]


def test_demo_says_how_to_install_what_it_needs(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['nbclient'] = None\n"  # as if nbclient were not installed
        "from dict_magics.frontends.cli import main; raise SystemExit(main(['demo']))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "needs nbclient" in proc.stderr
    assert "pip install 'dict-magics[demo]'" in proc.stderr
    assert not (tmp_path / "dict-magics-demo.ipynb").exists()


def project_files() -> list[str]:
    """What a fresh clone holds, plus files not committed yet (but not ignored ones)."""
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout to know the project's files")
    listed = subprocess.run(
        [git, "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode()
    return [name for name in listed.split("\0") if name and (ROOT / name).is_file()]


@pytest.mark.skipif(
    os.environ.get(QUICKSTART_ENV) != "1",
    reason=f"runs pip install in a fresh virtual environment; set {QUICKSTART_ENV}=1 (CI does)",
)
@pytest.mark.timeout(1200)
def test_readme_quick_start_demo_command_verbatim(tmp_path: Path) -> None:
    assert QUICKSTART_DEMO in (ROOT / "README.md").read_text(encoding="utf-8")
    project = tmp_path / "dict-magics"
    for name in project_files():
        target = project / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    env = clean_env(tmp_path)
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONPATH", None)
    venv_bin = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != venv_bin)
    proc = subprocess.run(
        ["bash", "-c", QUICKSTART_DEMO],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=1100,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    demo_output = proc.stdout[proc.stdout.index("Sandbox dictionary service at") :]
    check_passed(demo_output, project / "dict-magics-demo.ipynb")
    ran = re.search(r"Running (\S+) with (\S+)", proc.stdout)
    assert ran and ran.group(1).endswith("/notebooks/quickstart.ipynb")
    assert Path(ran.group(2)).parent == project / ".venv" / "bin"  # the new venv's kernel
