"""A throw-away JupyterLab or Notebook 7 on 127.0.0.1, isolated from the developer's own
Jupyter setup.

Every Jupyter and IPython directory is temporary, the news pop-up is disabled, and the
``python3`` kernelspec points at this interpreter (the project's venv), so the kernel imports
the code under test and nothing the user has installed elsewhere.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

START_TIMEOUT_S = 90.0
ANNOUNCEMENTS = "@jupyterlab/apputils-extension:announcements"
APPS = ("lab", "notebook")
"""The front ends the browser tests run in: JupyterLab 4 and Notebook 7."""


@dataclass(frozen=True)
class JupyterLab:
    """A running server: which front end, where it listens, its token, its notebook folder."""

    app: str
    url: str
    token: str
    root: Path
    process: subprocess.Popen[bytes]
    log: Path

    def api(self, path: str) -> object:
        """GET a JSON API path (no proxy: this is loopback)."""
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"{self.url}{path}?token={self.token}", timeout=10) as answer:
            return json.load(answer)

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def notebook_url(self, name: str) -> str:
        """Where the browser opens notebook ``name`` in this front end."""
        where = "lab/tree" if self.app == "lab" else "notebooks"
        return f"{self.url}/{where}/{name}?token={self.token}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))


def _isolated_env(base: Path) -> dict[str, str]:
    dirs = {
        "JUPYTER_CONFIG_DIR": base / "config",
        "JUPYTER_DATA_DIR": base / "data",
        "JUPYTER_RUNTIME_DIR": base / "runtime",
        "JUPYTERLAB_SETTINGS_DIR": base / "lab-settings",
        "JUPYTERLAB_WORKSPACES_DIR": base / "lab-workspaces",
        "IPYTHONDIR": base / "ipython",
    }
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    _write_json(
        dirs["JUPYTER_CONFIG_DIR"] / "labconfig" / "page_config.json",
        {"disabledExtensions": {ANNOUNCEMENTS: True}},
    )
    # Found before any system-wide spec of the same name: the kernel runs this venv's Python.
    _write_json(
        dirs["JUPYTER_DATA_DIR"] / "kernels" / "python3" / "kernel.json",
        {
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (dict-magics tests)",
            "language": "python",
            "metadata": {"debugger": False},
        },
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("DICT_MAGICS_")}
    env.update({name: str(path) for name, path in dirs.items()})
    env["JUPYTER_PATH"] = str(dirs["JUPYTER_DATA_DIR"])
    env.pop("JUPYTER_PREFER_ENV_PATH", None)
    return env


@contextmanager
def jupyter_lab(base: Path, app: str = "lab") -> Iterator[JupyterLab]:
    """Start JupyterLab (``app="lab"``) or Notebook 7 (``"notebook"``) under ``base``; stop it
    (and its kernels) with terminate()."""
    if app not in APPS:
        raise ValueError(f"app must be one of {APPS}, not {app!r}")
    root = base / "notebooks"
    root.mkdir(parents=True, exist_ok=True)
    env = _isolated_env(base)
    port = _free_port()
    token = secrets.token_hex(16)
    log = base / "jupyter.log"
    command = [
        sys.executable,
        "-m",
        "jupyter",
        app,
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--expose-app-in-browser",
    ]
    if app == "lab":
        command += [
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            command, env=env, cwd=root, stdout=log_file, stderr=subprocess.STDOUT
        )
    lab = JupyterLab(app, f"http://127.0.0.1:{port}", token, root, process, log)
    try:
        _wait_until_up(lab)
        yield lab
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_up(lab: JupyterLab) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if lab.process.poll() is not None:
            raise RuntimeError(f"jupyter {lab.app} exited early:\n{lab.log_tail()}")
        try:
            lab.api("/api/status")
            return
        except (urllib.error.URLError, OSError):
            if time.monotonic() > deadline:
                raise RuntimeError(f"jupyter {lab.app} did not answer:\n{lab.log_tail()}") from None
            time.sleep(0.2)
