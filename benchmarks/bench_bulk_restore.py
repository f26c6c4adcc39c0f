"""[10] Bulk additions and token auth (issue 20).

a) Restore of a purge of N entries (10,000 in the full run): this version's ``restore`` (bulk
   chunks through ``add_entries``) against version 2's (one ``POST`` per entry on 4 workers):
   requests the sandbox received and seconds, interleaved rounds in one run. Version 2 is the
   package of ``V2_REF`` (``git archive``), run in a process of its own with
   ``PYTHONPATH``; it predates the vendor's nonce rule, so both sides are served with
   ``nonce_rule="unique"`` (the nonce rule is measured elsewhere; this is about the bulk
   requests). Each side purges (not timed), then restores (timed), in its own process.
b) Token auth: ``delete_entries`` of 400 ids with 4 and 16 workers, ``auth="token"`` against
   ``auth="signature"`` (the vendor's increasing-nonce rule on), side by side; failed and left
   counts, token requests, and the time ratio. Then two processes x 300 ids at once in token mode.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchlib import (
    RESULTS,
    SCRIPT,
    WORK,
    Mode,
    SandboxSpec,
    child_env,
    median,
    ratio_line,
    rotations,
    run_child,
    sandbox_process,
    section,
)

ROOT = Path(__file__).resolve().parent.parent
TOKEN_IDS = 400
V2_REF = "8255784"
"""The last commit of ``main`` whose restore sends one POST per entry (version 2's way)."""


def _v2_package() -> Path | None:
    """Version 2's restore (the package of ``V2_REF``), unpacked once under ``WORK``."""
    target = WORK / f"v2-{V2_REF}"
    if (target / "dict_magics" / "__init__.py").exists():
        return target
    target.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", V2_REF, "dict_magics"],
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        return None
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def child_restore(which: str) -> None:
    """Purge every entry (not timed), then restore them (timed); print one JSON line."""
    import dict_magics
    from dict_magics.operations.context import OperationSettings
    from dict_magics.operations.purge import purge
    from dict_magics.operations.restore import restore

    if not purge(OperationSettings(), yes=True).ok:
        raise RuntimeError("the purge failed")
    started = time.perf_counter()
    result = restore(OperationSettings())
    took = time.perf_counter() - started
    info = {
        "which": which,
        "seconds": took,
        "added": len(result.added),
        "failed": len(result.failed),
        "unknown": len(result.unknown),
        "package": str(Path(dict_magics.__file__).parent),
    }
    print(json.dumps(info), flush=True)


def _restore_side(which: str, sandbox: Any, v2: Path | None, home: Path) -> dict[str, Any]:
    extra = {**sandbox.env(), "DICT_MAGICS_HOME": str(home)}
    if which == "v2" and v2 is not None:
        extra["PYTHONPATH"] = str(v2)
    # Each side keeps its nonces in its own data folder, and may have drawn them up to 3 s
    # ahead of the clock: waiting that out keeps the two from repeating one another's.
    time.sleep(3.5)
    before = sandbox.stats()["operations"]
    found = run_child("_child-restore", which, env=child_env(**extra))
    after = sandbox.stats()["operations"]
    sent = {k: after.get(k, 0) - before.get(k, 0) for k in ("add", "bulk", "list")}
    found["requests"] = sent
    return found


def bench_bulk_restore(mode: Mode) -> None:
    n = mode.restore_entries
    section(f"[10] bulk restore of a {n:,}-entry purge vs version 2; token auth, {TOKEN_IDS} ids")
    v2 = _v2_package()
    if v2 is None:
        print(f"  (no commit {V2_REF} to take version 2 from: bulk side only)")
    sides = ["bulk", "v2"] if v2 is not None else ["bulk"]
    RESULTS["bulk_restore"] = {"entries": n}
    _restore_runs("loopback", SandboxSpec(n, max_log=20 * n, nonce_rule="unique"), sides, v2,
                  mode.restore_rounds)  # fmt: skip
    if mode.restore_rounds > 1:  # the full run: once more through a 20 ms round trip
        spec = SandboxSpec(n, max_log=20 * n, nonce_rule="unique", rtt=RTT)
        _restore_runs(f"{RTT * 1000:g} ms RTT", spec, sides, v2, 1)
    _bench_tokens(mode)


RTT = 0.02


def _restore_runs(
    label: str, spec: SandboxSpec, sides: list[str], v2: Path | None, rounds: int
) -> None:
    runs: dict[str, list[dict[str, Any]]] = {s: [] for s in sides}
    with sandbox_process(spec) as sandbox:
        for order in rotations(sides, rounds):
            for which in order:
                home = WORK / f"home-{which}"
                home.mkdir(parents=True, exist_ok=True)
                runs[which].append(_restore_side(which, sandbox, v2, home))
    RESULTS["bulk_restore"][label] = runs
    print(f"  {label}, {rounds} interleaved round(s):")
    for which in sides:
        seconds = median([r["seconds"] for r in runs[which]])
        last = runs[which][-1]
        posts = last["requests"]["add"] + last["requests"]["bulk"]
        print(
            f"  {which:4}: {seconds:7.3f} s (median); {posts} POSTs + "
            f"{last['requests']['list']} listings (one is the purge's); added {last['added']}, "
            f"failed {last['failed']}, unknown {last['unknown']}  [{last['package']}]"
        )
    if "v2" in runs:
        ratio = median(
            [v["seconds"] / b["seconds"] for v, b in zip(runs["v2"], runs["bulk"], strict=True)]
        )
        name = "restore_v2_one_post_each/bulk" + ("" if label == "loopback" else "_rtt")
        print(ratio_line(name, ratio))


def _delete_run(sandbox: Any, ids: list[str], workers: int, auth: str) -> dict[str, Any]:
    from dict_magics.service.client import DictionaryClient

    before = sandbox.stats()["operations"]
    started = time.perf_counter()
    with DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key, auth=auth) as c:
        batch = c.delete_entries(ids, workers=workers)
    took = time.perf_counter() - started
    after = sandbox.stats()["operations"]
    return {
        "seconds": took,
        "failed": batch.failed,
        "requests": sum(after.values()) - sum(before.values()),
        "tokens": after.get("token", 0) - before.get("token", 0),
    }


def _bench_tokens(mode: Mode) -> None:
    rounds = mode.restore_rounds
    variants = [(w, a) for w in (4, 16) for a in ("signature", "token")]
    names = [f"{a}-{w}" for w, a in variants]
    total = TOKEN_IDS * len(variants) * rounds + 600
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    with sandbox_process(SandboxSpec(total, max_log=4 * total)) as sandbox:
        first = 1
        for order in rotations(names, rounds):
            for name in order:
                auth, workers = name.split("-")
                ids = [str(i) for i in range(first, first + TOKEN_IDS)]
                first += TOKEN_IDS
                results[name].append(_delete_run(sandbox, ids, int(workers), auth))
        both = _two_processes(sandbox, first)
        left = sandbox.stats()["left"]
    print(
        f"  {TOKEN_IDS} ids per run, {rounds} interleaved round(s), vendor nonce rule on; "
        "one token serves every client of this process (one key)"
    )
    RESULTS["token"] = {"runs": results, "two_processes": both}
    for name in names:
        rs = results[name]
        print(
            f"  {name:>13}: {median([r['seconds'] for r in rs]):6.3f} s; failed "
            f"{max(r['failed'] for r in rs)} (worst); {median([r['requests'] for r in rs]):.0f} "
            f"requests; token requests over its {len(rs)} run(s): {sum(r['tokens'] for r in rs)}"
        )
    for workers in (4, 16):
        token, signed = results[f"token-{workers}"], results[f"signature-{workers}"]
        ratio = median([t["seconds"] / s["seconds"] for t, s in zip(token, signed, strict=True)])
        print(ratio_line(f"token/signature_{workers}_workers", ratio))
    print(
        f"  two processes x 300 ids, token mode: failed {both['failed']}, "
        f"{both['seconds']:.3f} s; entries left of the 600: {both['left']}"
    )
    RESULTS["token"]["left_after"] = left
    _bench_token_rtt(rounds)


def _bench_token_rtt(rounds: int) -> None:
    """400 ids on 8 workers through a 20 ms round trip: time against n x RTT / workers."""
    workers, names = 8, ["token", "signature"]
    limit = TOKEN_IDS * RTT / workers
    spec = SandboxSpec(TOKEN_IDS * len(names) * rounds, rtt=RTT, max_log=10_000)
    results: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    with sandbox_process(spec) as sandbox:
        first = 1
        for order in rotations(names, rounds):
            for auth in order:
                ids = [str(i) for i in range(first, first + TOKEN_IDS)]
                first += TOKEN_IDS
                results[auth].append(_delete_run(sandbox, ids, workers, auth))
    RESULTS["token"]["rtt"] = results
    print(f"  {TOKEN_IDS} ids, {workers} workers, {RTT * 1000:g} ms RTT: limit n x RTT / w = "
          f"{limit:.2f} s")  # fmt: skip
    for auth in names:
        rs = results[auth]
        print(
            f"  {auth:>9}: {median([r['seconds'] for r in rs]):6.3f} s; failed "
            f"{max(r['failed'] for r in rs)} (worst); {median([r['requests'] for r in rs]):.0f} "
            "requests"
        )
        ratio = median([r["seconds"] / limit for r in rs])
        print(ratio_line(f"{auth}_rtt20_8_workers/limit", ratio, 1.2 if auth == "token" else None))


def _two_processes(sandbox: Any, first: int) -> dict[str, Any]:
    """Two processes deleting 300 ids each at once with token auth (one key)."""
    env = child_env(**sandbox.env(), DICT_MAGICS_AUTH="token")
    ranges = [(first, first + 300), (first + 300, first + 600)]
    started = time.perf_counter()
    procs = [
        subprocess.Popen(
            [sys.executable, str(SCRIPT), "_child-token-delete", f"{a}:{b}"],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for a, b in ranges
    ]
    outs = [json.loads(p.communicate(timeout=600)[0].strip().splitlines()[-1]) for p in procs]
    took = time.perf_counter() - started
    listing = set(_listing_ids(sandbox))
    left = sum(1 for i in range(first, first + 600) if str(i) in listing)
    return {"seconds": took, "failed": sum(o["failed"] for o in outs), "left": left}


def _listing_ids(sandbox: Any) -> list[str]:
    from dict_magics.service.client import DictionaryClient

    with DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key) as c:
        return [e.id for e in c.list_entries()]


def child_token_delete(span: str) -> None:
    """Delete ids ``a..b-1`` with token auth (from ``DICT_MAGICS_*``); print one JSON line."""
    from dict_magics.service.client import DictionaryClient

    a, b = (int(x) for x in span.split(":"))
    env = os.environ
    with DictionaryClient(
        env["DICT_MAGICS_BASE_URL"],
        env["DICT_MAGICS_ACCESS_KEY"],
        env["DICT_MAGICS_SECRET_KEY"],
        auth=env.get("DICT_MAGICS_AUTH", "token"),
    ) as client:
        batch = client.delete_entries([str(i) for i in range(a, b)])
    print(json.dumps({"failed": batch.failed}), flush=True)
