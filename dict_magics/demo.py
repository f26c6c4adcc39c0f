"""``dict-magics demo``: run the quickstart notebook headlessly and check what each step did.

After each cell the sandbox's entries and request log are compared with what the notebook
says the cell does. Needs the ``demo`` extra.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources, util
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from .errors import DictMagicsError
from .models import Entry
from .sandbox import SANDBOX_MARKER, SandboxServer
from .service.http import is_loopback, normalize_base_url

NOTEBOOKS = (
    "quickstart.ipynb",
    "panel.ipynb",
    "bulk_cleanup.ipynb",
    "glossary_sync.ipynb",
    "before_you_trust_it.ipynb",
)
INSTALL_HINT = "pip install 'dict-magics[demo]'"
Request = tuple[str, str | None, int | None]  # (operation, entry id, HTTP status) in the log


def notebook_path(name: str) -> Path:
    """Where notebook ``name`` is installed (``dict_magics/notebooks/``, shipped in the package)."""
    path = Path(str(resources.files("dict_magics.notebooks") / name))
    if not path.is_file():
        raise DictMagicsError(f"notebook {name!r} is not installed (looked at {path}); reinstall.")
    return path


def load_notebook(name: str) -> Any:
    import nbformat

    return nbformat.read(notebook_path(name), as_version=4)


def sandbox_only(base_url: str | None = None) -> None:
    """Raise ``UsageError`` unless requests go to the sandbox this notebook started, so "Run
    All" stops there with nothing sent: a demo cell deletes without asking."""
    from IPython import get_ipython
    from IPython.core.error import UsageError

    sandbox, shell = os.environ.get(SANDBOX_MARKER, ""), get_ipython()
    if base_url is None and shell is not None:
        base_url = getattr(shell.run_line_magic("dict_status", ""), "base_url", None)
    try:
        same = normalize_base_url(base_url or "") == normalize_base_url(sandbox)
    except DictMagicsError:
        same = False
    if sandbox and is_loopback(urlsplit(sandbox).hostname or "") and same:
        return
    raise UsageError(
        "this demo cell deletes without asking, so it runs only against the sandbox that "
        f"use_sandbox() started ({sandbox or 'none is running'}), but its requests would go "
        f"to {base_url or 'no service (no credentials)'}. Nothing was sent. For your own "
        "account, use %dict_delete and %dict_purge (which asks first) in a notebook of your own."
    )


def missing_packages() -> list[str]:
    """Which of the demo's own requirements cannot be imported."""
    return [name for name in ("nbclient", "nbformat", "ipykernel") if util.find_spec(name) is None]


def kernel_env(extra: dict[str, str], home: Path) -> dict[str, str]:
    """This environment without the user's dict-magics settings or IPython profile, + ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DICT_MAGICS_")}
    env.update(IPYTHONDIR=str(home / "ipython"), PYDEVD_DISABLE_FILE_VALIDATION="1")
    return env | extra


@contextmanager
def running_kernel(nb: Any, env: dict[str, str], cwd: Path) -> Iterator[Any]:
    """A ``NotebookClient`` for ``nb`` with a kernel of ``sys.executable`` given ``env``."""
    from ipykernel.kernelspec import write_kernel_spec
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory(prefix="dict-magics-kernel-") as tmp:
        write_kernel_spec(f"{tmp}/kernels/dict-magics-demo", overrides={"display_name": "demo"})
        specs = KernelSpecManager(kernel_dirs=[f"{tmp}/kernels"])
        manager = AsyncKernelManager(
            kernel_name="dict-magics-demo",
            kernel_spec_manager=specs,
            transport="ipc",
            connection_file=f"{tmp}/kernel.json",
        )
        client = NotebookClient(nb, km=manager, timeout=120, startup_timeout=60, allow_errors=True)
        client.resources = {"metadata": {"path": str(cwd)}}
        with client.setup_kernel(env=env, cleanup_kc=True):
            yield client


def cell_text(cell: Any) -> str:
    """Everything a cell showed, as text (one print may arrive split: a stream's are joined)."""
    parts: list[str] = []
    last_stream = None
    for out in cell.get("outputs", []):
        data, kind = out.get("data", {}), out.get("output_type")
        if kind == "stream":
            text = "".join(out.get("text", ""))  # a list of lines, or one string
            if last_stream == out.get("name"):
                parts[-1] += text
            else:
                parts.append(text)
            last_stream = out.get("name")
            continue
        last_stream = None
        if kind == "error":
            parts.append(f"{out.get('ename')}: {out.get('evalue')}")
        else:
            widget = "application/vnd.jupyter.widget-view+json" in data
            parts.append("[widget]" if widget else data.get("text/plain", ""))
    return "\n".join(part.rstrip("\n") for part in parts)


def execute(client: Any, cell: Any, index: int) -> str | None:
    """Run one cell; the name of the exception it raised, or ``None``."""
    replies: list[dict[str, Any]] = []
    client.on_cell_executed = lambda **hook: replies.append(hook["execute_reply"]["content"])
    try:
        client.execute_cell(cell, index)
    finally:
        client.on_cell_executed = None
    if cell.cell_type != "code" or not replies or replies[-1].get("status") != "error":
        return None
    return replies[-1].get("ename") or "Error"


@dataclass(frozen=True)
class Step:
    """What the notebook says a cell does: its ``output``, the ``requests`` the sandbox gets,
    the ``error`` it raises; the entries added bring back the terms step ``restores`` removed."""

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
        """Why the cell did not do what the notebook says (empty when it did)."""
        done = {
            op: {str(e) for o, e, c in self.requests if (o, c) == (op, 200) and e}
            for op in ("delete", "add")
        }
        kept = {} if self.purges else {k: v for k, v in before.items() if k not in done["delete"]}
        expected = set(kept) | done["add"]
        back = Counter(after[i].terms for i in done["add"] if i in after)
        checks = [
            (error == self.error,
             f"raised {error or 'nothing'}, expected {self.error or 'no error'}"),
            (self.output in text, f"its output does not show {self.output!r}"),
            (Counter(sent) == Counter(self.requests),
             f"the sandbox received {_short(sent)}, expected {_short(self.requests)}"),
            (set(after) == expected and all(after.get(k) == v for k, v in kept.items()),
             f"the sandbox holds {len(after)} entries, expected {len(expected)}"),
            (self.restores is None or back == (removed or {}).get(self.restores, Counter()),
             f"the entries added are not the ones {self.restores!r} removed"),
        ]  # fmt: skip
        return [why for fine, why in checks if not fine]


def _short(sent: Any) -> str:
    """The log as a short list: a restore's 99 additions are one item, not 99."""
    counts = Counter((op, None if op == "add" else e, code) for op, e, code in sent)
    items = sorted(counts.items(), key=str)
    return "[" + ", ".join(f"{k}" + (f" x{n}" if n > 1 else "") for k, n in items) + "]"


# fmt: off
LISTING: Request = ("list", None, 200)
INVOICES = ("2", "5", "9", "19", "26", "34")  # the entries whose terms contain "invoice"
QUICKSTART_STEPS = {
    "load-extension": Step("load the extension"),
    "connect": Step("use the sandbox this demo started", "Using the sandbox already"),
    "status": Step("show the profile and a masked access key, never the secret",
                   "\u2713 dict-magics profile 'default'"),
    "list": Step("list the dictionary", "100 entries at", (LISTING,)),
    "search": Step("find the entries whose terms contain 'invoice'", "6 entries at", (LISTING,)),
    "dry-run": Step("show what deleting them would do, and send nothing that changes the "
                    "dictionary", "would delete 6 entries", (LISTING,)),
    "delete-one": Step("delete entry 1, named by its terms",
                       "\u2713 deleted 1: \u91d1\u66dc\u65e5 \u2192 FRI",
                       (LISTING, ("delete", "1", 200))),
    "delete-several": Step("delete the 6 invoice entries in parallel",
                           "\u2713 deleted 6 of 6 entries",
                           (LISTING, *(("delete", i, 200) for i in INVOICES))),
    "delete-again": Step("report truthfully that entry 1 is not there any more (absent: "
                         "nothing sent)", "entry '1' absent", (LISTING,)),
    "refused": Step("refuse 'dictionary-all' as an entry id, before any request",
                    "not an entry id", error="UsageError"),
    "undo": Step("put the 6 invoice entries back from their snapshot",
                 "\u2713 restored 6 entries", restores="delete-several",
                 requests=(LISTING, *(("add", str(i), 200) for i in range(101, 107)), LISTING)),
    "purge": Step("delete every entry (with --yes: a headless run cannot type the "
                  "confirmation)", "\u2713 deleted every entry", purges=True,
                  requests=(LISTING, ("purge", None, 200), LISTING)),
    "restore": Step("put every entry back from the purge's snapshot",
                    "\u2713 restored 99 entries", restores="purge",
                    requests=(LISTING, *(("add", str(i), 200) for i in range(107, 206)), LISTING)),
    "restore-again": Step("add nothing the second time: everything is there",
                          "99 already present", (LISTING,)),
    "history": Step("show the last requests from the audit log", "last 5 requests"),
}
# fmt: on
"""What each quickstart cell does, as its text says."""
UNKNOWN = Step("(no expectation known for this cell)", error="(no expectation)")


def _show(text: str, out: IO[str], prefix: str = "      ", limit: int = 12) -> None:
    lines = text.splitlines()
    if len(lines) > limit:
        lines = [*lines[:limit], f"\u2026 ({len(lines) - limit} more lines)"]
    print("\n".join(prefix + line for line in lines), file=out)


def _source(cell: Any) -> str:
    """The cell's code; the setup cell (imports, comments, ``use_sandbox``) as one line."""
    lines = cell.source.splitlines()
    call = next((line for line in lines if "use_sandbox(" in line.split("#")[0]), None)
    if call is None:
        return cell.source
    others = [line.lstrip() for line in lines if line.strip() and line is not call]
    plain = all(line.startswith(("#", "from ", "import ")) for line in others)
    what = "imports and comments" if plain else "more code"
    return f"{call.strip()}  # (setup: {len(others)} lines of {what} not shown)"


def _seen(sent: list[Request], left: int, requests: int) -> str:
    """What the sandbox saw; a bulk addition as the entries it added."""
    if not sent:
        return f"sandbox: no request; {left} entries"
    names = {"delete": "DELETE {}", "add": "added (new id {})", "list": "GET listing"}
    shown = ", ".join(
        f"{names.get(op, op + ' {}').format(e or '').strip()} \u2192 {code}"
        for op, e, code in sent[:6]
    )
    bulk = f"in {requests} requests: additions go in bulk" if requests != len(sent) else ""
    if len(sent) > 6:
        shown += f", \u2026 ({len(sent)} in all" + (f", {bulk})" if bulk else ")")
    elif bulk:
        shown += f" ({bulk})"
    return f"sandbox: {shown}; {left} entries left"


def _step(client: Any, sandbox: Any, cell: Any, index: int, step: Step, out: IO[str],
          removed: dict[str, Counter[tuple[str, ...]]]) -> bool:  # fmt: skip
    """Run one cell, print what it showed and what the sandbox saw, and judge it."""
    before, logged = sandbox.entries, len(sandbox.requests)
    error = execute(client, cell, index)
    text, after = cell_text(cell), sandbox.entries
    # A 40005 (a nonce overtaken on another connection) was not acted on and went again at
    # once: thread timing, not the notebook. A bulk addition counts as the entries it added.
    arrived = [r for r in sandbox.requests[logged:] if r.code != 40005]
    sent = [(op, e, r.http_status) for r in arrived
            for op, e in ([("add", x.id) for x in r.entries] if r.operation == "bulk"
                          else [(r.operation, r.entry_id)])]  # fmt: skip
    removed[cell.get("id", "")] = Counter(e.terms for k, e in before.items() if k not in after)
    if text:
        _show(text, out)
    _show(_seen(sent, len(after), len(arrived)), out)
    problems = step.problems(text, error, before, after, sent, removed)
    if sandbox.secret_key in text:
        problems.append("its output shows the secret key")
    said = "; ".join(problems)
    _show(
        f"\u2717 not as the notebook says: {said}" if said else "\u2713 as the notebook says", out
    )
    return not problems


def run_demo(
    output: str | os.PathLike[str],
    stream: IO[str] | None = None,
    steps: dict[str, Step] | None = None,
    force: bool = False,
) -> int:
    """Run the quickstart against a fresh sandbox: 0 only if every step did what ``steps``
    expects; 2, with nothing run, if a requirement is missing or ``output`` exists."""
    out, steps = stream or sys.stdout, QUICKSTART_STEPS if steps is None else steps
    target = Path(output).resolve()
    refusal = ""
    if missing := missing_packages():
        refusal = f"needs {', '.join(missing)} (not installed here): {INSTALL_HINT}"
    elif target.exists() and not force:
        refusal = f"will not replace {target}: name another file with -o, or add --force"
    if refusal:
        print(f"dict-magics demo {refusal}. Nothing was run.", file=sys.stderr)
        return 2
    import nbformat

    nb = load_notebook("quickstart.ipynb")
    cells = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    removed: dict[str, Counter[tuple[str, ...]]] = {}
    passed = 0
    with SandboxServer(100) as sandbox, tempfile.TemporaryDirectory() as tmp:
        print(f"Sandbox dictionary service at {sandbox.url} with 100 entries.", file=out)
        print(f"Running {notebook_path('quickstart.ipynb')} with {sys.executable}", file=out)
        env = kernel_env({**sandbox.env(), "DICT_MAGICS_HOME": f"{tmp}/data"}, Path(tmp))
        with running_kernel(nb, env, Path(tmp)) as client:
            for number, (index, cell) in enumerate(cells, 1):
                step = steps.get(cell.get("id", ""), UNKNOWN)
                print(f"\n[{number}/{len(cells)}] {cell.get('id')}: {step.says}", file=out)
                _show(_source(cell), out, "    > ", limit=10**6)
                if not _step(client, sandbox, cell, index, step, out, removed):
                    break
                passed += 1
            client.set_widgets_metadata()  # so the saved notebook can redraw its widgets
        if sandbox.secret_key in nbformat.writes(nb):
            print("\nThe executed notebook contains the secret key: not written.", file=out)
            return 1
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(target))
    print(f"\nExecuted notebook written to {target}", file=out)
    if passed == len(cells):
        print(f"Demo passed: all {passed} steps did what the notebook says.", file=out)
        return 0
    print(f"Demo FAILED at step {passed + 1} of {len(cells)}.", file=out)
    return 1
