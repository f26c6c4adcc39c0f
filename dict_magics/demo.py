"""``dict-magics demo``: run the quickstart notebook headlessly and check what it did.

The notebook runs in a kernel of *this* interpreter (a kernelspec written to a temporary
directory, so no other Python's kernel is picked up) against a sandbox started here. After each
step the sandbox's entries and request log are compared with what the notebook says the step
does. The notebooks ship inside the package as ``dict_magics.notebooks`` (the repository's
``notebooks/`` folder, mapped in pyproject.toml), so an installed copy can run the demo too.
nbclient, nbformat and ipykernel are needed only here: ``pip install 'dict-magics[demo]'``.

``sandbox_only()`` guards every notebook cell that deletes: a demo deletes without asking, so it
may only ever reach the sandbox it started, whatever the session's settings say.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from importlib.util import find_spec
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from .errors import DictMagicsError
from .models import Entry
from .sandbox import SANDBOX_MARKER, SandboxServer
from .service.http import is_loopback, normalize_base_url

__all__ = [
    "DEMO_PACKAGES",
    "INSTALL_HINT",
    "NOTEBOOKS",
    "QUICKSTART_STEPS",
    "Step",
    "cell_text",
    "execute",
    "load_notebook",
    "notebook_path",
    "run_demo",
    "running_kernel",
    "sandbox_only",
]

NOTEBOOKS = ("quickstart.ipynb", "panel.ipynb", "bulk_cleanup.ipynb", "glossary_sync.ipynb")
DEMO_PACKAGES = ("nbclient", "nbformat", "ipykernel")
INSTALL_HINT = "pip install 'dict-magics[demo]'"
KERNEL_NAME = "dict-magics-demo"
CELL_TIMEOUT_S = 120
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

Request = tuple[str, str | None, int | None]  # (operation, entry id, HTTP status) in the log


def notebook_path(name: str) -> Path:
    """Where notebook ``name`` is: shipped in the package (``notebooks/`` in the source)."""
    path = Path(str(resources.files("dict_magics.notebooks") / name))
    if not path.is_file():
        raise DictMagicsError(
            f"notebook {name!r} is not installed with dict_magics (looked at {path}); "
            "reinstall dict-magics."
        )
    return path


def _same_url(url: str | None, sandbox: str) -> bool:
    try:
        return normalize_base_url(url or "") == normalize_base_url(sandbox)
    except DictMagicsError:
        return False


def sandbox_only(base_url: str | None = None) -> None:
    """Return only if requests go to the sandbox this session's notebook set up; else raise
    IPython's ``UsageError`` (so "Run All" stops there) with nothing sent.

    ``base_url`` is where the cell's requests go (a panel's ``base_url``); by default, where the
    magics would send them now, after every profile, environment and ``%config`` setting.
    """
    from IPython import get_ipython
    from IPython.core.error import UsageError

    sandbox = os.environ.get(SANDBOX_MARKER, "")
    if base_url is None:
        shell = get_ipython()
        status = shell.run_line_magic("dict_status", "") if shell is not None else None
        base_url = getattr(status, "base_url", None)
    host = urlsplit(sandbox).hostname or ""
    if sandbox and is_loopback(host) and _same_url(base_url, sandbox):
        return
    raise UsageError(
        "this demo cell deletes without asking, so it runs only against the sandbox that "
        f"use_sandbox() started ({sandbox or 'none is running'}), but its requests would go "
        f"to {base_url or 'no service (no credentials)'}. Nothing was sent. For your own "
        "account, use %dict_delete and %dict_purge (which asks first) in a notebook of your own."
    )


def missing_packages() -> list[str]:
    """Which of the demo's own requirements cannot be imported."""
    missing = []
    for name in DEMO_PACKAGES:
        try:
            found = find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


def load_notebook(name: str) -> Any:
    """The notebook as an ``nbformat`` node (version 4)."""
    import nbformat

    return nbformat.read(notebook_path(name), as_version=4)


def kernel_env(extra: dict[str, str], home: Path) -> dict[str, str]:
    """This process's environment for the kernel, minus the user's own dict-magics and IPython
    settings (a profile or ``%config`` there must not redirect a demo), plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DICT_MAGICS_")}
    env.update(IPYTHONDIR=str(home / "ipython"), PYDEVD_DISABLE_FILE_VALIDATION="1")
    env.update(extra)
    return env


@contextmanager
def running_kernel(nb: Any, env: dict[str, str], cwd: Path) -> Iterator[Any]:
    """An ``nbclient.NotebookClient`` for ``nb`` with a started kernel of ``sys.executable``.

    The kernel gets exactly ``env``; it is shut down when the block ends.
    """
    from ipykernel.kernelspec import write_kernel_spec
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory(prefix="dict-magics-kernel-") as tmp:
        kernels = Path(tmp) / "kernels"
        write_kernel_spec(str(kernels / KERNEL_NAME), overrides={"display_name": "dict-magics"})
        manager = AsyncKernelManager(
            kernel_name=KERNEL_NAME,
            kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)]),
            transport="ipc",  # Unix sockets in the temporary directory: no TCP port opened
            connection_file=str(Path(tmp) / "kernel.json"),
        )
        client = NotebookClient(
            nb,
            km=manager,
            timeout=CELL_TIMEOUT_S,
            startup_timeout=60,
            allow_errors=True,
            resources={"metadata": {"path": str(cwd)}},
        )
        with client.setup_kernel(env=env, cleanup_kc=True):
            yield client


def cell_text(cell: Any) -> str:
    """Everything a cell showed, as text: streams, plain-text results, errors; widgets named."""
    parts = []
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "stream":
            parts.append(output.get("text", ""))
        elif kind == "error":
            parts.append(f"{output.get('ename')}: {output.get('evalue')}")
        elif kind in ("execute_result", "display_data"):
            data = output.get("data", {})
            parts.append("[widget]" if WIDGET_MIME in data else data.get("text/plain", ""))
    return "\n".join(part.rstrip("\n") for part in parts)


def execute(client: Any, cell: Any, index: int) -> str | None:
    """Run one cell; return the name of the exception it raised, or ``None``.

    The kernel's reply is what tells: a ``UsageError`` is shown as one line of stderr, not as an
    error output, yet the cell did fail.
    """
    replies: list[dict[str, Any]] = []
    client.on_cell_executed = lambda **hook: replies.append(hook["execute_reply"]["content"])
    try:
        client.execute_cell(cell, index)
    finally:
        client.on_cell_executed = None
    if cell.cell_type != "code" or not replies or replies[-1].get("status") != "error":
        return None
    return replies[-1].get("ename") or "Error"


# -- what each quickstart step must do ------------------------------------------------------


def _changed(requests: tuple[Request, ...], operation: str) -> set[str]:
    return {str(e) for op, e, code in requests if op == operation and code == 200 and e}


@dataclass(frozen=True)
class Step:
    """What the notebook says a cell does, checked against the sandbox and the cell's output.

    ``requests`` is every request the sandbox must receive (in any order); the entries it holds
    afterwards must be the ones before, minus those deleted (all, for ``purges``), plus those
    added. ``restores`` names an earlier step: the entries added must bring back exactly the
    terms that step removed.
    """

    says: str
    output: str = ""
    requests: tuple[Request, ...] = ()
    error: str | None = None
    purges: bool = False
    restores: str | None = None

    def problems(
        self,
        text: str,
        error: str | None,
        before: dict[str, Entry],
        after: dict[str, Entry],
        sent: list[Request],
        removed: Mapping[str, Counter[tuple[str, ...]]] | None = None,
    ) -> list[str]:
        """Why the cell did not do what the notebook says (empty when it did). ``removed``:
        the terms each earlier step removed from the sandbox, by cell id."""
        found = []
        if error != self.error:
            found.append(f"raised {error or 'nothing'}, expected {self.error or 'no error'}")
        if self.output not in text:
            found.append(f"its output does not show {self.output!r}")
        if Counter(sent) != Counter(self.requests):
            found.append(
                f"the sandbox received {_requests(sent)}, expected {_requests(self.requests)}"
            )
        deleted, added = _changed(self.requests, "delete"), _changed(self.requests, "add")
        kept = {} if self.purges else {k: v for k, v in before.items() if k not in deleted}
        if set(after) != set(kept) | added or any(after.get(k) != v for k, v in kept.items()):
            found.append(
                f"the sandbox holds {len(after)} entries, expected {len(set(kept) | added)}"
            )
        if self.restores is not None:
            back = Counter(after[i].terms for i in added if i in after)
            if back != (removed or {}).get(self.restores, Counter()):
                found.append(f"the entries added are not the ones {self.restores!r} removed")
        return found


def _requests(sent: Iterable[Request]) -> str:
    """The log as a short list: the 99 additions of a restore are one item, not 99."""
    counts = Counter((op, None if op == "add" else e, code) for op, e, code in sent)
    items = [f"{key}" + (f" x{n}" if n > 1 else "") for key, n in sorted(counts.items(), key=str)]
    return "[" + ", ".join(items) + "]"


def _adds(first: int, last: int) -> tuple[Request, ...]:
    """The additions of a restore: the sandbox numbers new entries on from its highest id."""
    return tuple(("add", str(i), 200) for i in range(first, last + 1))


LISTING: Request = ("list", None, 200)
INVOICES = ("2", "5", "9", "19", "26", "34")
"""The sandbox's entries whose terms contain "invoice": what the quickstart searches for."""

QUICKSTART_STEPS = {
    "load-extension": Step("load the extension"),
    "connect": Step("use the sandbox this demo started", output="Using the sandbox already"),
    "status": Step(
        "show the profile and a masked access key, never the secret",
        output="\u2713 dict-magics profile 'default'",
    ),
    "list": Step("list the dictionary", output="100 entries at", requests=(LISTING,)),
    "search": Step(
        "find the entries whose terms contain 'invoice'",
        output="6 entries at",
        requests=(LISTING,),
    ),
    "dry-run": Step(
        "show what deleting them would do, and send nothing that changes the dictionary",
        output="would delete 6 entries",
        requests=(LISTING,),
    ),
    "delete-one": Step(
        "delete entry 1, named by its terms",
        output="\u2713 deleted 1: \u91d1\u66dc\u65e5 \u2192 FRI",
        requests=(LISTING, ("delete", "1", 200)),
    ),
    "delete-several": Step(
        "delete the 6 invoice entries in parallel",
        output="\u2713 deleted 6 of 6 entries",
        requests=(LISTING, *(("delete", i, 200) for i in INVOICES)),
    ),
    "delete-again": Step(
        "report truthfully that entry 1 is not there any more (absent: nothing sent)",
        output="entry '1' absent",
        requests=(LISTING,),
    ),
    "refused": Step(
        "refuse 'dictionary-all' as an entry id, before any request",
        output="not an entry id",
        error="UsageError",
    ),
    "undo": Step(
        "put the 6 invoice entries back from their snapshot",
        output="\u2713 restored 6 entries",
        requests=(LISTING, *_adds(101, 106), LISTING),  # the last names the new ids
        restores="delete-several",
    ),
    "purge": Step(
        "delete every entry (with --yes: a headless run cannot type the confirmation)",
        output="\u2713 deleted every entry",
        requests=(LISTING, ("purge", None, 200), LISTING),
        purges=True,
    ),
    "restore": Step(
        "put every entry back from the purge's snapshot",
        output="\u2713 restored 99 entries",
        requests=(LISTING, *_adds(107, 205), LISTING),  # the last names the new ids
        restores="purge",
    ),
    "restore-again": Step(
        "add nothing the second time: everything is there",
        output="99 already present",
        requests=(LISTING,),
    ),
    "history": Step("show the last requests from the audit log", output="last 5 requests"),
}


# -- the command ----------------------------------------------------------------------------

SHOWN_LINES = 12
"""Lines of a cell's output shown in the terminal (the written notebook holds all of them)."""
_NAMES = {
    "delete": "DELETE {}",
    "add": "added (new id {})",
    "list": "GET listing",
    "purge": "purge",
}


def _indent(text: str, prefix: str = "      ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def _shorten(text: str) -> str:
    lines = text.splitlines()
    if len(lines) <= SHOWN_LINES:
        return text
    return "\n".join([*lines[:SHOWN_LINES], f"\u2026 ({len(lines) - SHOWN_LINES} more lines)"])


def _source(cell: Any) -> str:
    """The cell's code, or for the setup cell (imports, comments, ``use_sandbox``) one line."""
    source = cell.source
    if "use_sandbox(" not in source:
        return source
    lines = source.splitlines()
    call = next(line for line in lines if "use_sandbox(" in line.split("#")[0])
    others = [line.lstrip() for line in lines if line.strip() and line is not call]
    plain = all(line.startswith(("#", "from ", "import ")) for line in others)
    what = "imports and comments" if plain else "more code"
    return f"{call.strip()}  # (setup: {len(others)} lines of {what} not shown)"


def _describe(sent: list[Request], left: int, requests: int | None = None) -> str:
    """What the sandbox saw. A bulk addition is shown as the entries it added, so when that
    count is not the number of requests the line says how many requests there were."""
    if not sent:
        return f"sandbox: no request; {left} entries"
    shown = ", ".join(
        f"{_NAMES.get(op, op + ' {}').format(entry or '').strip()} \u2192 {code}"
        for op, entry, code in sent[:6]
    )
    bulk = requests is not None and requests != len(sent)
    bulk_note = f"in {requests} requests: additions go in bulk" if bulk else ""
    if len(sent) > 6:
        more = f", \u2026 ({len(sent)} in all" + (f", {bulk_note})" if bulk else ")")
    else:
        more = f" ({bulk_note})" if bulk else ""
    return f"sandbox: {shown}{more}; {left} entries left"


def _run_step(
    client: Any,
    sandbox: SandboxServer,
    cell: Any,
    index: int,
    step: Step | None,
    out: IO[str],
    removed: dict[str, Counter[tuple[str, ...]]],
) -> bool:
    """Execute one cell, print what it showed and what the sandbox saw, and judge it."""
    before, logged = sandbox.entries, len(sandbox.requests)
    error = execute(client, cell, index)
    text = cell_text(cell)
    # A request refused for a nonce overtaken on another connection (40005) was not acted on
    # and went again at once: how many there are is thread timing, not the notebook.
    # A bulk addition is read as the additions it made (each entry's new id), as a restore's
    # one POST per entry was: the notebook says which entries come back, not how they travel.
    arrived = [r for r in sandbox.requests[logged:] if r.code != 40005]
    sent = [
        request
        for r in arrived
        for request in (
            [("add", e.id, r.http_status) for e in r.entries]
            if r.operation == "bulk"
            else [(r.operation, r.entry_id, r.http_status)]
        )
    ]
    after = sandbox.entries
    removed[cell.get("id", "")] = Counter(e.terms for k, e in before.items() if k not in after)
    if text:
        print(_indent(_shorten(text)), file=out)
    print(_indent(_describe(sent, len(after), len(arrived))), file=out)
    if step is None:
        problems = ["no expectation is known for this cell"]
    else:
        problems = step.problems(text, error, before, after, sent, removed)
    if sandbox.secret_key in text:
        problems.append("its output shows the secret key")
    if problems:
        print(_indent("\u2717 not as the notebook says: " + "; ".join(problems)), file=out)
        return False
    print(_indent("\u2713 as the notebook says"), file=out)
    return True


def run_demo(
    output: str | os.PathLike[str],
    stream: IO[str] | None = None,
    steps: dict[str, Step] | None = None,
) -> int:
    """Run the quickstart against a fresh sandbox; 0 only if every step did what ``steps``
    (by default ``QUICKSTART_STEPS``, what the notebook's text says) expects of it.

    The kernel keeps its snapshots and audit log in a temporary folder: a demo leaves nothing
    in the user's own data folder.
    """
    out = stream or sys.stdout
    steps = QUICKSTART_STEPS if steps is None else steps
    missing = missing_packages()
    if missing:
        print(
            f"dict-magics demo needs {', '.join(missing)} (not installed here). "
            f"Install the demo's requirements with: {INSTALL_HINT}",
            file=sys.stderr,
        )
        return 2
    import nbformat

    target = Path(output).resolve()
    source = notebook_path("quickstart.ipynb")
    nb = nbformat.read(source, as_version=4)
    code_cells = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    removed: dict[str, Counter[tuple[str, ...]]] = {}
    with SandboxServer(100) as sandbox, tempfile.TemporaryDirectory() as tmp:
        print(f"Sandbox dictionary service at {sandbox.url} with 100 entries.", file=out)
        print(f"Running {source} with {sys.executable}", file=out)
        passed = 0
        extra = {**sandbox.env(), "DICT_MAGICS_HOME": str(Path(tmp) / "data")}
        env = kernel_env(extra, Path(tmp))
        with running_kernel(nb, env, Path(tmp)) as client:
            for number, (index, cell) in enumerate(code_cells, 1):
                step = steps.get(cell.get("id", ""))
                says = step.says if step else "(no expectation known for this cell)"
                print(f"\n[{number}/{len(code_cells)}] {cell.get('id')}: {says}", file=out)
                print(_indent(_source(cell), "    > "), file=out)
                if not _run_step(client, sandbox, cell, index, step, out, removed):
                    break
                passed += 1
            client.set_widgets_metadata()  # so the saved notebook can redraw its widgets
        leaked = sandbox.secret_key in nbformat.writes(nb)
    if leaked:
        print("\nThe executed notebook contains the secret key: not written.", file=out)
        return 1
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(target))
    print(f"\nExecuted notebook written to {target}", file=out)
    if passed == len(code_cells):
        print(f"Demo passed: all {passed} steps did what the notebook says.", file=out)
        return 0
    print(f"Demo FAILED at step {passed + 1} of {len(code_cells)}.", file=out)
    return 1
