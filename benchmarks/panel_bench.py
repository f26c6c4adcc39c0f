"""How long the curation panel takes to filter and redraw its list, at 1,000 and 10,000 entries.

Run ``python benchmarks/panel_bench.py`` (about a minute; ``--quick`` for a smoke run). Not a
test: it prints milliseconds per filter+redraw (one keystroke in the search box, or a change of
the language pair), as the median (and 90th percentile) of every step of several rounds.

Two designs of the list are measured side by side on the same index of casefolded keys:

* ``pool``: what the panel ships, check boxes made as needed (never more than a page shows at
  once) that keep their entry: a redraw reorders the boxes of entries already labelled and
  relabels the others, taking the boxes hidden longest first.
* ``select``: one ``SelectMultiple`` whose 200 option labels are replaced on each redraw, with
  one ``HTML`` count line (fewer messages, but no check boxes).

Each is measured twice: in this process (ipywidgets without a front end: the comm messages are
built, not sent) and inside a real IPython kernel (ipykernel), where every changed trait is
serialised, signed and sent over ZeroMQ as in a notebook. The browser's own drawing is not
included. The entries come from a sandbox over loopback, listed once before timing starts.
"""

from __future__ import annotations

import argparse
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
# pick a language pair and go back to every pair.
TYPED = ["m", "me", "mee", "meet", "meeti", "meetin", "meeting", ""]
TYPED += ["i", "in", "inv", "invo", "invoice", "", "zzzz", "", "a", ""]
PAIR = ("ja", "en")
TARGET_MS = 100.0


def _steps() -> list[tuple[str, Any]]:
    return [("search", q) for q in TYPED] + [("pair", PAIR), ("pair", "all")]


def _run_steps(apply: Any, steps: list[tuple[str, Any]], rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        for kind, value in steps:
            start = time.perf_counter()
            apply(kind, value)
            times.append((time.perf_counter() - start) * 1000)
    return times


def _summary(times: list[float], per_round: int) -> dict[str, float]:
    """Median, 90th percentile and max of every step, and the max of the first round (cold:
    no check box holds any entry yet)."""
    ordered = sorted(times)
    return {
        "median_ms": round(statistics.median(ordered), 2),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))], 2),
        "max_ms": round(ordered[-1], 2),
        "cold_max_ms": round(max(times[:per_round]), 2),
        "steps": len(ordered),
    }


class _SelectList:
    """The other design: the same index, one ``SelectMultiple`` and one ``HTML`` count line."""

    def __init__(self, entries: list[Any]) -> None:
        import ipywidgets as widgets

        from dict_magics.frontends.panel_index import ALL_PAIRS, EntryIndex

        self.index = EntryIndex(entries)
        self.select = widgets.SelectMultiple(options=[], rows=20)
        self.count = widgets.HTML()
        self.text, self.pair = "", ALL_PAIRS

    def apply(self, kind: str, value: Any) -> None:
        from dict_magics.frontends.panel import PAGE
        from dict_magics.render.panel import row_label

        if kind == "search":
            self.text = value
        else:
            self.pair = value
        matches = self.index.search(self.text, self.pair)
        shown = [self.index.entries[i] for i in matches[:PAGE]]
        self.select.options = [(row_label(e), e.id) for e in shown]
        self.count.value = f"{len(matches):,} matches of {len(self.index):,}"

    def close(self) -> None:
        self.select.close()
        self.count.close()


def _apply_to(panel: Any) -> Any:
    def apply(kind: str, value: Any) -> None:
        if kind == "search":
            panel.search_text.value = value
        else:
            panel.pair_dropdown.value = value

    return apply


def measure(sizes: tuple[int, ...], rounds: int) -> dict[str, dict[str, dict[str, float]]]:
    """Time both designs at each size in this process; returns {design: {size: summary}}."""
    os.environ.setdefault("DICT_MAGICS_HOME", tempfile.mkdtemp(prefix="dict-magics-bench-"))
    from dict_magics.frontends.panel import DictPanel
    from dict_magics.sandbox import SandboxServer
    from dict_magics.service.client import DictionaryClient

    found: dict[str, dict[str, dict[str, float]]] = {"pool": {}, "select": {}}
    steps = _steps()
    for size in sizes:
        with SandboxServer(size) as sandbox:
            client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key)
            start = time.perf_counter()
            panel = DictPanel(client, profile="default")
            made_ms = (time.perf_counter() - start) * 1000
            try:
                assert panel.wait(120) and len(panel.entries) == size, panel.status.value
                times = _run_steps(_apply_to(panel), steps, rounds)
                found["pool"][str(size)] = {**_summary(times, len(steps)), "made_ms": made_ms}
                other = _SelectList(panel.entries)
                try:
                    times = _run_steps(other.apply, steps, rounds)
                finally:
                    other.close()
                found["select"][str(size)] = _summary(times, len(steps))
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
        f"filter + redraw, ms per step ({len(TYPED) + 2} steps x {rounds} rounds; target "
        f"< {TARGET_MS:.0f} ms)"
    )
    print(
        f"{'where':<16} {'design':<7} {'entries':>8} {'median':>8} {'p90':>8} {'max':>8} "
        f"{'cold max':>9}"
    )
    worst = 0.0
    made: list[str] = []
    for where, found in runs.items():
        for design, by_size in found.items():
            for size, summary in by_size.items():
                print(
                    f"{where:<16} {design:<7} {int(size):>8,} {summary['median_ms']:>8.2f} "
                    f"{summary['p90_ms']:>8.2f} {summary['max_ms']:>8.2f} "
                    f"{summary['cold_max_ms']:>9.2f}"
                )
                if design == "pool":
                    worst = max(worst, summary["p90_ms"])
                    made.append(f"{where}, {int(size):,} entries: {summary['made_ms']:.0f} ms")
    print("panel made (widgets only; the listing loads in the background): " + "; ".join(made))
    verdict = "within" if worst < TARGET_MS else "OVER"
    print(f"panel (pool): worst p90 {worst:.2f} ms, {verdict} the {TARGET_MS:.0f} ms target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
