"""How long the curation panel's table takes to filter, sort and page, at 1,000 and 10,000
entries, against two other designs.

Run ``python benchmarks/panel_bench.py`` (a few minutes; ``--quick`` for a smoke run). Not a
test: it prints milliseconds per step as the median (and 90th percentile) of every step of
several rounds, split in two kinds: **filter** (one keystroke in the search box, or a change of
the language pair) and **sort** (a click on a column's header, or on Next / Previous page).

Three designs of the table are measured side by side on the same entries:

* ``table``: what the panel ships (plain ipywidgets): a page of rows, each a check box (the id)
  and one HTML cell (languages, source, target), made as needed and reused; sorting by ranks
  computed once per column.
* ``select``: one ``SelectMultiple`` whose option labels are replaced on each redraw, with one
  ``HTML`` count line (fewer messages, but no columns and no check boxes).
* ``datagrid``: ``ipydatagrid.DataGrid`` (only when it is installed: it is not a dependency),
  given the whole listing as a pandas DataFrame. The search (either term, casefolded) is not one
  of its column filters, so a keystroke sends the matching rows again (``grid.data = ...``);
  a sort is a transform the browser carries out, so only its message is timed here, and paging
  is its own scrolling (nothing in the kernel).

Each is measured twice: in this process (ipywidgets without a front end: the comm messages are
built, not sent) and inside a real IPython kernel (ipykernel), where every changed trait is
serialised, signed and sent over ZeroMQ as in a notebook. The browser's own drawing is not
included. The entries come from a sandbox over loopback, listed once before timing starts;
``made_ms`` is the time to build the design (for the panel: its widgets; the listing itself
loads in the background).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve()
ROOT = SCRIPT.parents[1]
SIZES = (1_000, 10_000)
# One round: type "meeting", clear, type "invoice", a search that matches nothing, clear, then
# pick a language pair and go back to every pair; sort by each column both ways, page on and
# back, and go back to the service's order.
TYPED = ["m", "me", "mee", "meet", "meeti", "meetin", "meeting", ""]
TYPED += ["i", "in", "inv", "invo", "invoice", "", "zzzz", "", "a", ""]
PAIR = ("ja", "en")
SORTS = [("source", False), ("source", True), ("target", False), ("languages", False)]
SORTS += [("id", True), ("id", False)]
TARGET_MS = 100.0
KINDS = {"search": "filter", "pair": "filter", "sort": "sort", "page": "sort"}


def _steps() -> list[tuple[str, Any]]:
    steps: list[tuple[str, Any]] = [("search", q) for q in TYPED]
    steps += [("pair", PAIR), ("pair", "all")]
    steps += [("sort", s) for s in SORTS]
    steps += [("page", 1), ("page", 2), ("page", 1), ("page", 0), ("sort", None)]
    return steps


def _run_steps(apply: Any, steps: list[tuple[str, Any]], rounds: int) -> dict[str, list[float]]:
    """Milliseconds of every step, by kind (filter, sort), first round first."""
    times: dict[str, list[float]] = {"filter": [], "sort": []}
    for _ in range(rounds):
        for kind, value in steps:
            start = time.perf_counter()
            apply(kind, value)
            times[KINDS[kind]].append((time.perf_counter() - start) * 1000)
    return times


def _summary(times: list[float], per_round: int) -> dict[str, float]:
    """Median, 90th percentile and max of every step, and the max of the first round (cold:
    no row holds any entry yet)."""
    ordered = sorted(times)
    return {
        "median_ms": round(statistics.median(ordered), 2),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))], 2),
        "max_ms": round(ordered[-1], 2),
        "cold_max_ms": round(max(times[:per_round]), 2),
        "steps": len(ordered),
    }


def _summaries(times: dict[str, list[float]], made_ms: float) -> dict[str, Any]:
    per_round = {k: sum(1 for kind, _ in _steps() if KINDS[kind] == k) for k in times}
    found: dict[str, Any] = {k: _summary(v, per_round[k]) for k, v in times.items()}
    found["made_ms"] = round(made_ms, 1)
    return found


class _SelectList:
    """The second design: the same index, one ``SelectMultiple`` and one ``HTML`` count line."""

    def __init__(self, entries: list[Any]) -> None:
        import ipywidgets as widgets

        from dict_magics.frontends.panel_table import ALL_PAIRS, EntryIndex

        self.index = EntryIndex(entries)
        self.select = widgets.SelectMultiple(options=[], rows=20)
        self.count = widgets.HTML()
        self.text, self.pair, self.sort, self.page = "", ALL_PAIRS, None, 0

    def apply(self, kind: str, value: Any) -> None:
        from dict_magics.frontends.panel import PAGE

        if kind == "search":
            self.text, self.page = value, 0
        elif kind == "pair":
            self.pair, self.page = value, 0
        elif kind == "sort":
            self.sort, self.page = value, 0
        else:
            self.page = value
        found = self.index.search(self.text, self.pair)
        if self.sort is not None:
            found = self.index.order(found, *self.sort)
        start = self.page * PAGE
        shown = [self.index.entries[i] for i in found[start : start + PAGE]]
        # One option per entry: its terms, languages and id, clipped as a label is.
        self.select.options = [(f"{e.describe()} \u00b7 id {e.id}"[:160], e.id) for e in shown]
        self.count.value = f"{len(found):,} matches of {len(self.index):,}"

    def close(self) -> None:
        self.select.close()
        self.count.close()


class _DataGrid:
    """The third design: ``ipydatagrid.DataGrid`` over the whole listing (see the module's
    docstring for what is and is not timed)."""

    def __init__(self, entries: list[Any]) -> None:
        import pandas as pd
        from ipydatagrid import DataGrid

        from dict_magics.frontends.panel_table import ALL_PAIRS, EntryIndex

        self.index = EntryIndex(entries)
        self.frame = pd.DataFrame(
            {
                "id": [e.id for e in entries],
                "languages": [f"{e.from_lang}\u2192{e.to_lang}" for e in entries],
                "source": [e.from_text for e in entries],
                "target": [e.to_text for e in entries],
            }
        )
        self.grid = DataGrid(self.frame, selection_mode="row")
        self.columns = list(self.frame.columns)
        self.text, self.pair = "", ALL_PAIRS

    def apply(self, kind: str, value: Any) -> None:
        if kind in ("search", "pair"):
            if kind == "search":
                self.text = value
            else:
                self.pair = value
            found = self.index.search(self.text, self.pair)
            self.grid.data = self.frame.iloc[found]
        elif kind == "sort":
            if value is None:
                self.grid.revert()
            else:
                column, descending = value
                index = self.columns.index(column) + 1  # column 0 is the frame's index
                self.grid.transform([{"type": "sort", "columnIndex": index, "desc": descending}])
        # "page": the grid scrolls in the browser; nothing happens in the kernel.

    def close(self) -> None:
        self.grid.close()


def _apply_to(panel: Any) -> Any:
    def apply(kind: str, value: Any) -> None:
        if kind == "search":
            panel.search_text.value = value
        elif kind == "pair":
            panel.pair_dropdown.value = value
        elif kind == "sort":
            if value is None:
                panel.sort(None)
            else:  # a click on the header; twice when it is sorted the other way
                column, descending = value
                button = panel.sort_buttons[column]
                button.click()
                if panel.sorted_by != (column, descending):
                    button.click()
        else:
            panel.show_page(value)

    return apply


def _timed(make: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    made = make(*args, **kwargs)
    return made, (time.perf_counter() - start) * 1000


def measure(sizes: tuple[int, ...], rounds: int) -> dict[str, dict[str, dict[str, Any]]]:
    """Time each design at each size in this process; returns {design: {size: summaries}}."""
    os.environ.setdefault("DICT_MAGICS_HOME", tempfile.mkdtemp(prefix="dict-magics-bench-"))
    from dict_magics.frontends.panel import DictPanel
    from dict_magics.sandbox import SandboxServer
    from dict_magics.service.client import DictionaryClient

    designs: dict[str, Any] = {"select": _SelectList}
    if importlib.util.find_spec("ipydatagrid") is not None:
        designs["datagrid"] = _DataGrid
    found: dict[str, dict[str, dict[str, Any]]] = {"table": {}, **{d: {} for d in designs}}
    steps = _steps()
    for size in sizes:
        with SandboxServer(size) as sandbox:
            client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key)
            panel, made_ms = _timed(DictPanel, client, profile="default")
            try:
                assert panel.wait(120) and len(panel.entries) == size, panel.status.value
                times = _run_steps(_apply_to(panel), steps, rounds)
                found["table"][str(size)] = _summaries(times, made_ms)
                for name, design in designs.items():
                    other, made_ms = _timed(design, panel.entries)
                    try:
                        times = _run_steps(other.apply, steps, rounds)
                    finally:
                        other.close()
                    found[name][str(size)] = _summaries(times, made_ms)
            finally:
                panel.close()
    return found


def in_kernel(sizes: tuple[int, ...], rounds: int) -> dict[str, Any]:
    """Run ``measure`` inside a fresh ipykernel of this interpreter; its JSON result."""
    from jupyter_client.manager import KernelManager

    with tempfile.TemporaryDirectory(prefix="dict-magics-bench-") as work:
        spec = Path(work) / "data" / "kernels" / "python3"
        spec.mkdir(parents=True)
        argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        (spec / "kernel.json").write_text(
            json.dumps({"argv": argv, "display_name": "bench", "language": "python"})
        )
        os.environ["JUPYTER_PATH"] = str(spec.parents[1])
        env = dict(os.environ, DICT_MAGICS_HOME=str(Path(work) / "home"))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        manager = KernelManager(kernel_name="python3")
        manager.start_kernel(env=env, cwd=work)
        client = manager.client()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=60)
            result = Path(work) / "result.json"
            code = (
                "import importlib.util, json, pathlib\n"
                f"spec = importlib.util.spec_from_file_location('panel_bench', {str(SCRIPT)!r})\n"
                "bench = importlib.util.module_from_spec(spec); spec.loader.exec_module(bench)\n"
                f"found = bench.measure({sizes!r}, {rounds})\n"
                f"pathlib.Path({str(result)!r}).write_text(json.dumps(found))\n"
            )
            # The reply comes on the shell channel, which never drops a message; iopub (where
            # the thousands of widget messages go, unread here) may.
            msg_id = client.execute(code, silent=True)
            while True:
                reply = client.get_shell_msg(timeout=600)
                if reply["parent_header"].get("msg_id") == msg_id:
                    break
            if reply["content"]["status"] != "ok":
                trace = "\n".join(reply["content"].get("traceback", []))
                raise RuntimeError(f"the kernel run failed:\n{trace}")
            return json.loads(result.read_text())
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one round")
    parser.add_argument("--no-kernel", action="store_true", help="skip the ipykernel run")
    args = parser.parse_args(argv)
    rounds = 1 if args.quick else args.rounds
    sys.path.insert(0, str(ROOT))
    runs = {"in this process": measure(SIZES, rounds)}
    if not args.no_kernel:
        runs["in an ipykernel"] = in_kernel(SIZES, rounds)
    print(
        f"ms per step ({rounds} rounds; filter: {len(TYPED) + 2} steps a round, sort: "
        f"{len(SORTS) + 5}; target < {TARGET_MS:.0f} ms)"
    )
    print(
        f"{'where':<16} {'design':<9} {'entries':>8} {'kind':<7} {'median':>8} {'p90':>8} "
        f"{'max':>8} {'cold max':>9} {'made':>8}"
    )
    worst = 0.0
    for where, found in runs.items():
        for design, by_size in found.items():
            for size, summaries in by_size.items():
                for kind in ("filter", "sort"):
                    summary = summaries[kind]
                    print(
                        f"{where:<16} {design:<9} {int(size):>8,} {kind:<7} "
                        f"{summary['median_ms']:>8.2f} {summary['p90_ms']:>8.2f} "
                        f"{summary['max_ms']:>8.2f} {summary['cold_max_ms']:>9.2f} "
                        f"{summaries['made_ms']:>8.0f}"
                    )
                    if design == "table":
                        worst = max(worst, summary["p90_ms"])
    verdict = "within" if worst < TARGET_MS else "OVER"
    print(f"panel (table): worst p90 {worst:.2f} ms, {verdict} the {TARGET_MS:.0f} ms target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
