"""The demo notebooks' saved outputs: re-run against a fresh sandbox, and kept free of this machine.

The notebooks are committed WITH their outputs, so a reader on GitHub sees what each cell shows.
``python -m tools.notebook_outputs --refresh``, run from the repository's root, executes each
one in ``dict_magics/notebooks/`` top to bottom in a kernel of this interpreter, starting its own
embedded sandbox as a reader's first run does (with ``DICT_MAGICS_HOME`` in a temporary folder),
and writes the outputs back. ``--check`` runs them again and names every cell whose output
differs from the saved one in what matters.

What a run shows that belongs to the run and not to the notebook is replaced by a stable stand-in
before saving (``scrub``): the sandbox's port (``PORT``), elapsed times (dropped), the temporary
data folder ``use_sandbox()`` gives the kernel (``/tmp/dict-magics-sandbox-home-XXXXXXXX``), any
other data folder (``~/.local/share/dict-magics``) and the widgets' random ids (numbered).
Dates and snapshot names stay as they were, and ``essence`` leaves them out of comparisons. A
notebook whose outputs would hold the sandbox's secret, a port or a path of this machine is not
written (``leaks``), nor one whose widget outputs would read as raw reprs on a viewer that
draws no widgets (``raw_widgets``). Needs the demo's packages: ``pip install 'dict-magics[demo]'``.

The quickstart's status cell shows which keyring backend holds secrets. ``--refresh`` saves it
from a real keyring, as a reader's machine has: on Linux it runs itself again inside a private
D-Bus session with an unlocked gnome-keyring in a throw-away home (``docs``: TESTING.md, section
1); elsewhere it uses the system's keyring (macOS Keychain, Windows Credential Manager). With no
real keyring it saves nothing and says how to get one. Which backend it is belongs to the
machine, so comparisons leave that line out.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from dict_magics.demo import (
    INSTALL_HINT,
    NOTEBOOKS,
    cell_text,
    execute,
    kernel_env,
    missing_packages,
    running_kernel,
)

__all__ = [
    "HOME_STAND_IN",
    "PRIVATE_KEYRING",
    "SANDBOX_HOME_STAND_IN",
    "VARIES",
    "NotebookRun",
    "check",
    "differences",
    "essence",
    "in_private_keyring",
    "keyring_problem",
    "leaks",
    "main",
    "raw_widgets",
    "refresh",
    "run_notebook",
    "scrub",
    "scrub_notebook",
]

HOME_STAND_IN = "~/.local/share/dict-magics"
SANDBOX_HOME_STAND_IN = "/tmp/dict-magics-sandbox-home-XXXXXXXX"  # noqa: S108 (a stand-in)
"""The temporary data folder ``use_sandbox()`` gives a notebook's kernel, as saved."""
_SANDBOX_HOME = re.compile(re.escape(tempfile.gettempdir()) + r"/dict-magics-sandbox-home-\w+")
VARIES = "output-varies"
"""The tag of a cell whose output is compared by its first line and length only."""
SECRET_PREFIX = "sandbox-secret-"  # noqa: S105 (how sandbox secrets start, not a secret)
"""Every sandbox secret starts so (see ``SandboxServer``): a saved notebook never holds one."""
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# Hex-encoded, so the secret itself never reaches a log (nbclient logs every kernel message).
_KEY_PROBE = (
    "import os; print(os.environ.get('DICT_MAGICS_SECRET_KEY', '').encode().hex(), flush=True)"
)
_PORT = re.compile(r"\b(127\.0\.0\.1|localhost)([:_])\d{1,5}\b")  # "_": in snapshot names
_ELAPSED = re.compile(r", \d+(?:\.\d+)? s\)")
_MODEL_ID = re.compile(r"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])")
_DATE = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2}| UTC)?"
    r"|\d{8}T\d{6,12}Z"
)
_SNAPSHOT = re.compile(r"[^\s'\"/<>]+\.json\b")
_ATTEMPTS = re.compile(r"\b\d+ attempts?\b")
"""How many requests one result took: with several workers under the vendor's nonce rule, a
request overtaken on another connection is refused (40005) and sent again, as thread timing
decides, so the count is not the notebook's."""
_KEYRING = re.compile(r"^  keyring backend: .*(?:\n  warning: .*)*", re.MULTILINE)
"""The status cell's keyring backend and its warnings: the machine's, not the notebook's."""
PRIVATE_KEYRING = "NOTEBOOK_OUTPUTS_PRIVATE_KEYRING"
"""Set in the run started inside the private keyring session (so it never starts another)."""
_UNLOCK = (
    'printf %s "$KEYRING_PW" | gnome-keyring-daemon --unlock --components=secrets >/dev/null; '
    'unset KEYRING_PW; exec "$@"'
)
_RAW_REPR = re.compile(r"^[A-Z]\w*\((?:children|value|layout)=")
"""A widget's default repr (``HBox(children=(...``): what a viewer without widgets shows."""
_ABSOLUTE = re.compile(r"(?<![\w.~])/(?:tmp|var|home|root|work|Users|private|opt|usr|srv|mnt)/")


def scrub(text: str, home: str | None = None) -> str:
    """``text`` with the port, elapsed times and the data folders of one run replaced."""
    if home:
        text = text.replace(home.rstrip("/"), HOME_STAND_IN)
    text = _SANDBOX_HOME.sub(SANDBOX_HOME_STAND_IN, text)
    text = _PORT.sub(r"\1\2PORT", text)
    return _ELAPSED.sub(")", text)


def _strings(value: Any, change: Callable[[str], str]) -> Any:
    """``value`` (JSON-like) with ``change`` applied to every string in it, keys included."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list):
        return [_strings(v, change) for v in value]
    if isinstance(value, dict):
        return {change(k): _strings(v, change) for k, v in value.items()}
    return value


def scrub_notebook(nb: Any, home: str | None = None) -> Any:
    """``nb`` (an executed ``nbformat`` node) with every output and the widget state scrubbed,
    the widgets' random model ids numbered in order of appearance, and the cells' execution
    timestamps dropped: two runs save the same file."""
    import nbformat

    widgets = nb.metadata.get("widgets", {})
    known = [
        output["data"][WIDGET_VIEW]["model_id"]
        for cell in nb.cells
        for output in cell.get("outputs", [])
        if WIDGET_VIEW in output.get("data", {})
    ]
    known += list(widgets.get(WIDGET_STATE, {}).get("state", {}))
    numbered = {model_id: f"{n:032x}" for n, model_id in enumerate(dict.fromkeys(known), 1)}

    def change(text: str) -> str:
        text = _MODEL_ID.sub(lambda m: numbered.get(m.group(0), m.group(0)), text)
        return scrub(text, home)

    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [nbformat.from_dict(_strings(o, change)) for o in cell.outputs]
            cell.metadata.pop("execution", None)  # nbclient's timestamps of the run
    if widgets:
        nb.metadata["widgets"] = nbformat.from_dict(_strings(widgets, change))
    return nb


def essence(nb: Any) -> dict[str, str]:
    """What each code cell showed, by cell id, as text, with what may differ between two honest
    runs left out: dates, snapshot file names, ports, elapsed times, attempt counts, the keyring
    backend (and its warnings) of the machine that ran it. A cell tagged
    ``output-varies`` (say, the audit log's last lines after parallel requests, which end in any
    order) counts by its first line and its number of lines only."""
    shown = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        text = scrub(cell_text(cell))
        text = _DATE.sub("<date>", _SNAPSHOT.sub("<snapshot>.json", text))
        text = _ATTEMPTS.sub("<n> attempts", text)
        text = _KEYRING.sub("  keyring backend: <this machine's>", text)
        if VARIES in cell.get("metadata", {}).get("tags", []):
            lines = text.splitlines() or [""]
            text = f"{lines[0]}\n(and {len(lines) - 1} more lines, which vary from run to run)"
        shown[cell.get("id", "")] = text
    return shown


def differences(saved: Any, fresh: Any) -> list[str]:
    """The cells whose essence differs between the saved notebook and a fresh run, each with
    both texts; empty when they agree."""
    old, new = essence(saved), essence(fresh)
    found = []
    for cell_id in dict.fromkeys([*old, *new]):
        if old.get(cell_id) != new.get(cell_id):
            found.append(
                f"cell {cell_id}:\n--- saved\n{old.get(cell_id, '(no such cell)')}\n"
                f"--- now\n{new.get(cell_id, '(no such cell)')}"
            )
    return found


def leaks(nb: Any, secrets: Iterable[str] = ()) -> list[str]:
    """Why ``nb`` may not be saved: a sandbox secret anywhere in it; in an output or the
    widget state, an address with a port or an absolute path of this machine. Each is named
    with the cell it is in."""
    parts = [(c.get("id", "?"), _json(c.get("outputs", []))) for c in nb.cells]
    parts.append(("widget state", _json(nb.metadata.get("widgets", {}))))
    found = []
    if any(secret and secret in _json(nb) for secret in [SECRET_PREFIX, *secrets]):
        found.append("a sandbox secret")
    for where, text in parts:
        text = text.replace(SANDBOX_HOME_STAND_IN, "")  # a stand-in, not this machine's
        port = _PORT.search(text)
        if port:
            found.append(f"{where}: an address with a port ({port.group(0)})")
        absolute = _ABSOLUTE.search(text)
        path = (
            absolute.group(0) if absolute else next((p for p in _local_paths() if p in text), None)
        )
        if path:
            found.append(f"{where}: an absolute path of this machine ({path}...)")
    return found


def raw_widgets(nb: Any) -> list[str]:
    """Widget outputs whose plain-text fallback (what GitHub shows) is a raw repr such as
    ``HBox(children=...)`` rather than words, or that lack one, each named with its cell."""
    found = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW not in data:
                continue
            plain = data.get("text/plain", "")
            plain = "".join(plain) if isinstance(plain, list) else plain
            if not plain.strip() or _RAW_REPR.match(plain):
                found.append(f"{cell.get('id', '?')}: a widget shown as {plain[:40]!r}")
    return found


def keyring_problem() -> str | None:
    """Why this machine's keyring is not one a reader's machine would have (none, or a
    plaintext one), or ``None``; the kernels get the same environment, hence the same one."""
    from dict_magics.profiles.credentials import backend_info

    try:
        info = backend_info()
    except Exception as exc:  # a broken PYTHON_KEYRING_BACKEND, a locked keyring
        return f"the keyring cannot be used ({type(exc).__name__})"
    if not info.available:
        return f"no keyring backend is available ({info.name})"
    if info.plaintext:
        return f"the keyring backend {info.name} keeps secrets in plain text"
    return None


def in_private_keyring(argv: list[str]) -> int | None:
    """Run this command again inside a private D-Bus session with an unlocked gnome-keyring
    and a throw-away home, as TESTING.md (section 1) does for the keyring tests, so the saved
    status shows a real keyring and the user's own is never touched; its exit code, or
    ``None`` when ``dbus-run-session`` or ``gnome-keyring-daemon`` is not installed."""
    bus, daemon = shutil.which("dbus-run-session"), shutil.which("gnome-keyring-daemon")
    if bus is None or daemon is None:
        return None
    dropped = ("DISPLAY", "WAYLAND_DISPLAY", "PYTHON_KEYRING_BACKEND", "XDG_RUNTIME_DIR")
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("DBUS_", "GNOME_KEYRING")) and name not in dropped
    }
    with tempfile.TemporaryDirectory(prefix="dict-magics-keyring-home-") as home:
        env.update(
            HOME=home,
            XDG_DATA_HOME=str(Path(home) / ".local" / "share"),
            XDG_CONFIG_HOME=str(Path(home) / ".config"),
            XDG_CACHE_HOME=str(Path(home) / ".cache"),
            KEYRING_PW=secrets.token_hex(16),  # the password on stdin, else no collection
        )
        env[PRIVATE_KEYRING] = "1"
        command = [sys.executable, "-m", "tools.notebook_outputs", *argv]
        wrapped = [bus, "--", "bash", "-c", _UNLOCK, "bash", *command]
        return subprocess.run(wrapped, env=env, check=False).returncode  # noqa: S603 (our argv)


def _local_paths() -> list[str]:
    """Folders of this machine that a run may print, wherever they are (CI, macOS, ...)."""
    places = [Path.home(), Path(tempfile.gettempdir()), Path(sys.prefix), Path.cwd()]
    return [str(p) + "/" for p in places if len(p.parts) > 1]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@dataclass
class NotebookRun:
    """One notebook executed against its own sandbox: the node, the sandbox's secret (read back
    from the kernel, to look for), each code cell's exception by id, and the probes' texts."""

    nb: Any
    secret: str = ""
    errors: dict[str, str | None] = field(default_factory=dict)
    probes: list[str] = field(default_factory=list)

    def __getitem__(self, cell_id: str) -> str:
        """What the cell with this id showed, as text."""
        for cell in self.nb.cells:
            if cell.get("id") == cell_id:
                return cell_text(cell)
        raise KeyError(cell_id)

    @property
    def failed(self) -> dict[str, str]:
        """Cells that raised although they are not tagged ``raises-exception``."""
        tagged = {
            c.get("id")
            for c in self.nb.cells
            if "raises-exception" in c.get("metadata", {}).get("tags", [])
        }
        return {k: v for k, v in self.errors.items() if v and k not in tagged}


def run_notebook(source: str | Path, *, probes: Iterable[str] = ()) -> NotebookRun:
    """Execute the notebook at ``source`` top to bottom in a fresh kernel of this interpreter,
    as a reader's first run does: it starts its own sandbox; ``DICT_MAGICS_HOME`` is a
    temporary folder. ``probes`` are cells run afterwards in the same kernel (to look at its
    state) and not kept. The outputs come back scrubbed, as ``refresh`` saves them."""
    import nbformat

    nb = nbformat.read(str(source), as_version=4)
    run = NotebookRun(nb)
    with tempfile.TemporaryDirectory(prefix="dict-magics-notebook-") as tmp:
        home = str(Path(tmp) / "home")
        env = kernel_env({"DICT_MAGICS_HOME": home}, Path(tmp))
        extra = [nbformat.v4.new_code_cell(code) for code in [_KEY_PROBE, *probes]]
        with running_kernel(nb, env, Path(tmp)) as client:
            for index, cell in enumerate(list(nb.cells)):
                if cell.cell_type == "code":
                    run.errors[cell.get("id", "")] = execute(client, cell, index)
            for cell in extra:
                nb.cells.append(cell)
                execute(client, cell, len(nb.cells) - 1)
            client.set_widgets_metadata()  # so a saved notebook can redraw its widgets
        del nb.cells[len(nb.cells) - len(extra) :]
        run.secret = bytes.fromhex(cell_text(extra[0]).strip()).decode()
        run.probes = [cell_text(cell) for cell in extra[1:]]
        scrub_notebook(nb, home)
    return run


def refresh(name: str, folder: Path, out: IO[str]) -> bool:
    """Run notebook ``name`` in ``folder`` and save its scrubbed outputs there; False (and
    nothing written) when a cell failed or the outputs would leak."""
    import nbformat

    path = folder / name
    run = run_notebook(path)
    problems = [f"{k}: raised {v}" for k, v in run.failed.items()]
    problems += leaks(run.nb, [run.secret])
    problems += raw_widgets(run.nb)
    if problems:
        print(f"{name}: NOT saved: " + "; ".join(problems), file=out)
        return False
    nbformat.write(run.nb, str(path))
    cells = sum(1 for c in run.nb.cells if c.cell_type == "code")
    print(f"{name}: {cells} code cells run, outputs saved", file=out)
    return True


def check(name: str, folder: Path, out: IO[str]) -> bool:
    """Run notebook ``name`` in ``folder`` and compare it with its saved outputs."""
    import nbformat

    path = folder / name
    saved = nbformat.read(str(path), as_version=4)
    run = run_notebook(path)
    problems = [f"{k}: raised {v}" for k, v in run.failed.items()]
    problems += leaks(saved, [run.secret])
    problems += differences(saved, run.nb)
    if problems:
        print(f"{name}: differs from a fresh run:\n" + "\n".join(problems), file=out)
        return False
    print(f"{name}: saved outputs match a fresh run", file=out)
    return True


def main(argv: list[str] | None = None) -> int:
    """``--refresh`` writes fresh outputs into the notebooks; ``--check`` compares (exit 1)."""
    parser = argparse.ArgumentParser(
        prog="python -m tools.notebook_outputs",
        description="Re-run the demo notebooks against a fresh sandbox: save their outputs "
        "(--refresh) or compare them with the saved ones (--check).",
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--refresh", action="store_true", help="write fresh outputs")
    what.add_argument("--check", action="store_true", help="compare; exit 1 on a difference")
    parser.add_argument(
        "--dir",
        type=Path,
        default=Path("dict_magics", "notebooks"),
        help="folder of the notebooks (default: ./dict_magics/notebooks, run from the "
        "repository's root)",
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"default: {' '.join(NOTEBOOKS)}")
    parser.add_argument(
        "--any-keyring",
        action="store_true",
        help="--refresh with whatever keyring this machine has, even none (the status cell then "
        "says so); by default a real one is used, a private gnome-keyring on Linux",
    )
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    missing = missing_packages()
    if missing:
        print(f"needs {', '.join(missing)}: {INSTALL_HINT}", file=sys.stderr)
        return 2
    names = args.names or list(NOTEBOOKS)
    absent = [name for name in names if not (args.dir / name).is_file()]
    if absent:
        print(
            f"no {', '.join(absent)} in {args.dir}/ (run from the repository's root)",
            file=sys.stderr,
        )
        return 2
    if args.refresh and not args.any_keyring:
        if os.environ.get(PRIVATE_KEYRING) != "1" and sys.platform.startswith("linux"):
            code = in_private_keyring(argv)
            if code is not None:
                return code
        problem = keyring_problem()
        if problem:
            print(
                f"{problem}: the quickstart's status cell would show that, and a warning, to "
                "every reader. Nothing was saved. On Linux install gnome-keyring and dbus "
                "(apt-get install gnome-keyring dbus): this tool then runs the notebooks in a "
                "private keyring of its own. Or pass --any-keyring to save what this machine "
                "shows.",
                file=sys.stderr,
            )
            return 2
    job = refresh if args.refresh else check
    results = [job(name, args.dir, sys.stdout) for name in names]
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
