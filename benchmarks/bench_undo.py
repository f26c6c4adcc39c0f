"""[13] Undo of a big sync (issue 31): the restore against the apply it undoes, before -> after.

Two shapes, each side -- this version, and main at ``BEFORE_REF`` (``git archive``, run with
``PYTHONPATH``) -- on a fresh sandbox process (the vendor's increasing-nonce rule), in a
process of its own: apply the sync (timed), then ``restore --yes`` (timed); the dictionary must
then hold exactly its first terms.

- ``adds``: N new rows onto 100 entries. The apply is bulk adds; its undo removes N entries, one
  DELETE each (the API has no bulk delete), on the workers before and after.
- ``mixed``: N rows against N entries: half the targets changed (PUTs), a twentieth dropped
  (``--delete-missing``) and as many new rows. Its undo puts back the PUTs (one at a time
  before, on the workers now), re-adds the deleted (bulk) and removes the added; through a
  20 ms round trip (``--rtt``), as a service not on loopback.

Then the window of a sync's deletions, measured as the purge's is: from the answer of the
listing the snapshot comes from to the service handling each DELETE (an in-process sandbox,
the question answered after 2 s).

``python benchmarks/bench_undo.py [--shape adds|mixed] [--rows N] [--rtt S]``;
``run.py --only undo`` (full: adds 200,000; mixed 20,000 at 20 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import (
    RESULTS,
    WORK,
    Mode,
    SandboxSpec,
    child_env,
    ratio_line,
    run_child,
    sandbox_process,
    section,
)

ROOT = Path(__file__).resolve().parent.parent
BEFORE_REF = "1498b76"
"""Main before issue 31: put-backs one PUT at a time, a sync's deletions from the plan's listing."""


def _package(ref: str) -> Path:
    target = WORK / f"pkg-{ref}"
    if not (target / "dict_magics" / "__init__.py").exists():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", ref, "dict_magics"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def _glossary(entries: list[Any], rows: int, shape: str, path: Path) -> dict[str, int]:
    """The file of ``shape`` for the listed ``entries``, and what it changes."""
    from dict_magics.formats import write_glossary
    from dict_magics.models import Entry

    kept, counts = [Entry("", *e.terms) for e in entries], Counter()
    new = [Entry("", "en", f"new term {n}", "de", f"neuer Begriff {n}") for n in range(rows)]
    if shape == "adds":
        counts["added"] = len(new) - len(kept)
        write_glossary(path, kept + new[len(kept) :])
        return dict(counts)
    for n, e in enumerate(entries):
        if n % 20 == 19:
            counts["deleted"] = counts["added"] = counts["added"] + 1
            kept[n] = new[n]
        elif n % 2:
            counts["updated"] += 1
            kept[n] = Entry("", *e.terms[:3], f"{e.to_text} (rev)")
    write_glossary(path, kept)
    return dict(counts)


def _side(which: str, rows: int, shape: str, rtt: float) -> dict[str, Any]:
    from dict_magics.service.client import DictionaryClient

    size = 100 if shape == "adds" else rows
    with sandbox_process(SandboxSpec(size, rtt=rtt, max_log=4 * rows + 1000)) as sandbox:
        with DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key) as client:
            first = list(client.list_entries())
        path = WORK / f"undo-{which}.csv"
        counts = _glossary(first, rows, shape, path)
        home = Path(tempfile.mkdtemp(prefix=f"undo-{which}-", dir=WORK))
        extra = {**sandbox.env(), "DICT_MAGICS_HOME": str(home)}
        if which == "before":
            extra["PYTHONPATH"] = str(_package(BEFORE_REF))
        found = run_child("_child-undo", str(path), env=child_env(**extra))
        with DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key) as client:
            back = Counter(e.terms for e in client.list_entries())
        found.update(counts, back=back == Counter(e.terms for e in first))
        found["requests"] = sandbox.stats()["operations"]
    return found


def child_undo(path: str) -> None:
    """Apply the sync of ``path`` (timed), then undo it (timed); print one JSON line."""
    import dict_magics
    from dict_magics.operations.context import OperationSettings
    from dict_magics.operations.restore import restore
    from dict_magics.operations.sync import sync

    settings = OperationSettings()
    started = time.perf_counter()
    applied = sync(settings, path, apply=True, delete_missing=True, yes=True)
    middle = time.perf_counter()
    undone = restore(settings, yes=True)
    ended = time.perf_counter()
    info = {
        "apply_s": middle - started,
        "undo_s": ended - middle,
        "apply_ok": applied.ok,
        "undo_ok": undone.ok,
        "package": str(Path(dict_magics.__file__).parent),
    }
    print(json.dumps(info), flush=True)


def child_window(entries: str) -> None:
    """A sync of ``entries`` entries deleting a twentieth, updating and adding a tenth each, the
    question answered after 2 s: ms from the snapshot's listing to the first and last DELETE."""
    import dict_magics
    from dict_magics.formats import write_glossary
    from dict_magics.models import Entry
    from dict_magics.operations.context import OperationSettings
    from dict_magics.operations.prompts import ScriptedPrompter
    from dict_magics.operations.sync import sync
    from dict_magics.sandbox import SandboxServer

    class Slow(ScriptedPrompter):
        def confirm(self, warning: object, question: str) -> str:
            time.sleep(2)
            return super().confirm(warning, question)

    n = int(entries)
    with SandboxServer(n, max_log=10 * n) as box:
        os.environ.update(box.env())
        rows = [Entry("", *e.terms) for e in list(box.entries.values())[n // 20 :]]
        rows[: n // 10] = [Entry("", *e.terms[:3], e.to_text + " v2") for e in rows[: n // 10]]
        rows += [Entry("", "en", f"added {i}", "de", f"neu {i}") for i in range(n // 10)]
        path = write_glossary(Path(tempfile.mkdtemp()) / "g.csv", rows)
        assert sync(OperationSettings(), path, apply=True, delete_missing=True,
                    prompter=Slow(["yes"])).ok  # fmt: skip
        log = box.requests
    deletes = [r.at for r in log if r.method == "DELETE"]
    listed = max(r.at for r in log if r.method == "GET" and r.at < deletes[0])
    info = {
        "first_ms": (deletes[0] - listed) * 1000,
        "last_ms": (deletes[-1] - listed) * 1000,
        "deletes": len(deletes),
        "package": str(Path(dict_magics.__file__).parent),
    }
    print(json.dumps(info), flush=True)


def bench_undo(mode: Mode, runs: list[tuple[str, int, float]] | None = None) -> None:
    full = mode.restore_rounds > 1
    runs = runs or [("adds", 200_000, 0.0), ("mixed", 20_000, 0.02)] if full else []
    runs = runs or [("adds", 150, 0.0), ("mixed", 80, 0.0)]
    window = 10_000 if full else 200
    section(f"[13] undo of a big sync against its apply, before -> after; {window:,}-entry window")
    print(f"  load average at the start: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    for shape, rows, rtt in runs:
        got = {which: _side(which, rows, shape, rtt) for which in ("now", "before")}
        for which, side in got.items():
            changes = ", ".join(f"{n:,} {k}" for k, n in side.items() if k in _KINDS)
            print(
                f"  {shape} {rows:,} rows, {rtt * 1000:g} ms RTT, {which:6}: apply "
                f"{side['apply_s']:7.1f} s, undo {side['undo_s']:7.1f} s ({changes}); back "
                f"exactly: {side['back']}; requests {side['requests']}  [{side['package']}]",
                flush=True,
            )
            print(ratio_line(f"undo/apply_{shape}_{which}", side["undo_s"] / side["apply_s"]))
        print(
            ratio_line(
                f"undo_before/undo_now_{shape}", got["before"]["undo_s"] / got["now"]["undo_s"]
            )
        )
        RESULTS.setdefault("undo", {})[f"{shape}-{rows}-{rtt}"] = got
    for which in ("now", "before"):
        extra = {"PYTHONPATH": str(_package(BEFORE_REF))} if which == "before" else {}
        w = run_child("_child-window", str(window), env=child_env(**extra))
        print(
            f"  {which:6}: deletion window, {window:,} entries: {w['first_ms']:.0f} ms to the "
            f"first of {w['deletes']} DELETEs, {w['last_ms']:.0f} ms to the last",
            flush=True,
        )
        RESULTS.setdefault("undo", {})[f"window-{which}"] = w
    print(f"  load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


_KINDS = ("updated", "deleted", "added")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=("adds", "mixed"), action="append")
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--rtt", type=float, default=0.0)
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    from benchlib import FULL

    bench_undo(FULL, [(shape, args.rows, args.rtt) for shape in args.shape or ["adds"]])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
