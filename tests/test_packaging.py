"""The package as a user gets it: the sdist and wheel built once, checked by twine, and the wheel
installed in a fresh virtual environment outside the repository, where ``dict-magics demo`` runs.

A source checkout hides packaging mistakes (a module or notebook left out of the wheel, a version
written in two places): only an installed wheel, away from the source tree, shows them. The build
and the install take about two minutes, so this module builds once and runs with the rest of the
suite (marker ``packaging``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.parser import HeaderParser
from pathlib import Path

import pytest

from dict_magics import __version__
from dict_magics.settings import VERSION

# The build runs in whichever test comes first, the pip install and the demo in the last one.
pytestmark = [pytest.mark.packaging, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parent.parent
NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "test-artifacts", "site"
)


def run(args: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        args, capture_output=True, text=True, encoding="utf-8", stdin=subprocess.DEVNULL, **kwargs
    )
    assert proc.returncode == 0, f"{args}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


def pip_cache() -> str:
    """This machine's pip cache, kept when a test moves HOME (the registry fills it if empty)."""
    return run([sys.executable, "-m", "pip", "cache", "dir"]).stdout.strip()


def user_env(home: Path, venv: Path | None = None) -> dict[str, str]:
    """A user's shell: HOME in ``home``, no dict-magics settings, no trace of the repository."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DICT_MAGICS_", "XDG_")) and k not in ("PYTHONPATH", "VIRTUAL_ENV")
    }
    ours = str(Path(sys.executable).parent)
    paths = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != ours]
    if venv is not None:
        paths.insert(0, str(venv / "bin"))
    env.update(
        HOME=str(home),
        PATH=os.pathsep.join(paths),
        PIP_CACHE_DIR=pip_cache(),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
    )
    return env


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``python -m build`` (sdist, then the wheel from the sdist) of a copy of the source tree."""
    source = tmp_path_factory.mktemp("source") / "dict-magics"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)
    out = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "build", "--outdir", str(out), str(source)], timeout=600)
    built = {p.suffix if p.suffix == ".whl" else ".tar.gz": p for p in out.iterdir()}
    assert sorted(built) == [".tar.gz", ".whl"], sorted(out.iterdir())
    return built


def test_twine_finds_both_distributions_fit_to_upload(dist: dict[str, Path]) -> None:
    proc = run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.values())])
    assert proc.stdout.count("PASSED") == 2, proc.stdout


def test_the_wheel_holds_every_module_and_notebook_and_one_version(dist: dict[str, Path]) -> None:
    source = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "dict_magics").rglob("*")
        if p.is_file() and p.suffix in (".py", ".ipynb", ".typed") and "__pycache__" not in p.parts
    }
    with zipfile.ZipFile(dist[".whl"]) as wheel:
        names = set(wheel.namelist())
        info = f"dict_magics-{VERSION}.dist-info"
        metadata = HeaderParser().parsestr(wheel.read(f"{info}/METADATA").decode())
        scripts = wheel.read(f"{info}/entry_points.txt").decode()
    assert source - names == set()  # a subpackage or a notebook the wheel would lack
    assert {"dict_magics/py.typed", "dict_magics/notebooks/quickstart.ipynb"} <= names
    assert f"{info}/licenses/LICENSE" in names
    assert not [n for n in names if n.startswith(("tests/", "tools/", "benchmarks/"))]
    assert metadata["Version"] == VERSION == __version__
    assert metadata["Requires-Python"] == ">=3.10"
    assert "Typing :: Typed" in metadata.get_all("Classifier")
    assert "dict-magics = dict_magics.frontends.cli:main" in scripts
    assert dist[".whl"].name == f"dict_magics-{VERSION}-py3-none-any.whl"
    with tarfile.open(dist[".tar.gz"]) as sdist:
        top = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    assert {"README.md", "CHANGELOG.md", "LICENSE", "pyproject.toml"} <= top
    assert not [n for n in top if n.startswith("tests/")]  # they need the whole repository


def test_the_installed_wheel_runs_the_demo_outside_the_repository(
    dist: dict[str, Path], tmp_path: Path
) -> None:
    home, work, venv = tmp_path / "home", tmp_path / "work", tmp_path / "venv"
    home.mkdir()
    work.mkdir()
    env = user_env(home, venv)
    run([sys.executable, "-m", "venv", str(venv)], cwd=work, env=env, timeout=300)
    # The wheel by its path (never a dict-magics from the index); its dependencies from the cache.
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    run([*pip, f"{dist['.whl']}[demo]"], cwd=work, env=env, timeout=600)

    where = run(
        [str(venv / "bin" / "python"), "-c", "import dict_magics; print(dict_magics.__file__)"],
        cwd=work,
        env=env,
    ).stdout.strip()
    assert Path(where).is_relative_to(venv), where  # not the source tree
    version = run([str(venv / "bin" / "dict-magics"), "--version"], cwd=work, env=env)
    assert version.stdout.strip() == f"dict-magics {VERSION}"

    proc = run([str(venv / "bin" / "dict-magics"), "demo"], cwd=work, env=env, timeout=600)
    assert "Demo passed: all " in proc.stdout, proc.stdout[-4000:]
    notebook = proc.stdout.split("Running ", 1)[1].split(" with ", 1)[0]
    assert Path(notebook).is_relative_to(venv), notebook  # the notebook shipped in the wheel
    assert (work / "dict-magics-demo.ipynb").is_file()
    # The sandbox's snapshots and audit lines went to a private folder, not the user's own (the
    # default data folder, DICT_MAGICS_HOME being unset).
    default = "import platformdirs as p; print(p.user_data_dir('dict-magics', appauthor=False))"
    data = run([str(venv / "bin" / "python"), "-c", default], cwd=work, env=env).stdout.strip()
    assert Path(data).is_relative_to(home), data
    assert not Path(data).exists(), sorted(Path(data).rglob("*"))
