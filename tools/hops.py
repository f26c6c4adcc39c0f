"""Which of our modules one ``%dict_delete 17`` passes through, in order (docs/architecture.md).

``python -m tools.hops`` runs the magic once in a real InteractiveShell against a sandbox on
loopback, traces every call into ``dict_magics`` on every thread, and prints the modules in the
order they are first entered, then every call that re-enters a module already lower on the same
stack (the path doubling back, e.g. client -> a hook -> client). Module-level imports are not
calls and are not counted.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from collections.abc import Callable
from typing import Any


def trace_delete(line: str = "17", shell: Any = None) -> tuple[list[str], list[tuple[str, str]]]:
    """(modules in order of first entry, hops back as (from, into)) for ``%dict_delete LINE``.

    ``shell``: the InteractiveShell to run it in (default: IPython's global one). The
    environment variables pointing at the sandbox and the trace functions found are put back
    afterwards, so a test can call this."""
    from IPython.testing.globalipapp import start_ipython

    from dict_magics.sandbox import SandboxServer

    ip = shell if shell is not None else start_ipython()
    ip.run_line_magic("load_ext", "dict_magics")
    order: list[str] = []
    back: list[tuple[str, str]] = []
    lock = threading.Lock()

    def tracer(frame: Any, event: str, arg: Any) -> Callable[..., Any] | None:
        if event != "call":
            return None
        name = frame.f_globals.get("__name__", "")
        if not name.startswith("dict_magics"):
            return None
        chain = _chain(frame.f_back)
        with lock:
            if name not in order:
                order.append(name)
            if chain and chain[0] != name and name in chain:
                back.append((chain[0], name))
        return None

    with SandboxServer(entries=30) as sandbox:
        saved = {key: os.environ.get(key) for key in sandbox.env()}
        os.environ.update(sandbox.env())
        try:
            ip.run_line_magic("dict_delete", "1")  # a first cell: imports and the kept client
            found = sys.gettrace(), threading.gettrace()
            sys.settrace(tracer)
            threading.settrace(tracer)
            try:
                ip.run_line_magic("dict_delete", line)
            finally:
                sys.settrace(found[0])
                threading.settrace(found[1])  # type: ignore[arg-type]
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    return order, back


def _chain(frame: Any) -> list[str]:
    """Our modules on the stack below ``frame``, innermost first, repeats collapsed."""
    names: list[str] = []
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name.startswith("dict_magics") and (not names or names[-1] != name):
            names.append(name)
        frame = frame.f_back
    return names


def main() -> int:
    with tempfile.TemporaryDirectory() as home:
        os.environ["DICT_MAGICS_HOME"] = home
        order, back = trace_delete()
    print(f"{len(order)} modules, in order of first entry:")
    for number, name in enumerate(order, 1):
        print(f"  {number:2}. {name}")
    unique = sorted(set(back))
    print(f"{len(unique)} calls back into a module already on the stack (caller -> module):")
    for outer, inner in unique:
        print(f"  {outer} -> {inner}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
