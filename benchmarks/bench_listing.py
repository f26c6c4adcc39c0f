"""[7] Listing a large dictionary: time against a hand-signed ``requests.get`` + ``json.loads``,
peak memory per entry, and the size of the HTML a notebook is sent.

``%dict_list`` is used when the extension has it; otherwise ``DictionaryClient.list_entries()``
(the call it is built on), and the section says which. Memory is traced in a process of its own.
"""

from __future__ import annotations

import gc
import json
import os
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from benchlib import (
    RESULTS,
    Mode,
    SandboxSpec,
    child_env,
    environ,
    hand_headers,
    median,
    ratio_line,
    rotations,
    run_child,
    sandbox_process,
    section,
)

TIME_TARGET = 1.5
HTML_LIMIT = 200 * 1024


def bench_listing(mode: Mode) -> None:
    n = mode.listing_entries
    section(f"[7] listing {n:,} entries: vs requests.get + json.loads; memory; HTML size")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    if "dict_magics" not in shell.extension_manager.loaded:
        shell.run_line_magic("load_ext", "dict_magics")
    magic = "dict_list" in shell.magics_manager.magics["line"]
    with sandbox_process(SandboxSpec(n)) as sandbox, environ(sandbox.env()):
        from dict_magics.service.client import DictionaryClient

        client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key)
        listing: Any = None

        def ours() -> None:
            nonlocal listing
            listing = shell.run_line_magic("dict_list", "") if magic else client.list_entries()
            if len(listing) != n:
                raise RuntimeError(f"the listing has {len(listing)} entries, not {n}")

        def hand() -> None:
            if len(_hand_get(sandbox)["data"]["entries"]) != n:
                raise RuntimeError("the hand-signed listing is short")

        variants: dict[str, Callable[[], None]] = {"ours": ours, "hand": hand}
        times: dict[str, list[float]] = {name: [] for name in variants}
        for run in variants.values():  # warm-up
            run()
        for order in rotations(list(variants), mode.listing_rounds):
            for name in order:
                gc.collect()
                started = time.perf_counter()
                variants[name]()
                times[name].append(time.perf_counter() - started)
        html = listing._repr_html_()
        client.close()
        memory = run_child("_child-listing-memory", str(n), env=child_env(**sandbox.env()))
    what = "%dict_list" if magic else "DictionaryClient.list_entries() (no %dict_list here yet)"
    ratio = median([a / b for a, b in zip(times["ours"], times["hand"], strict=True)])
    size = len(html.encode("utf-8"))
    print(f"  {mode.listing_rounds} interleaved rounds (medians); ours = {what}")
    print(f"  ours:                         {median(times['ours']) * 1e3:8.1f} ms")
    print(f"  requests.get + json.loads:    {median(times['hand']) * 1e3:8.1f} ms")
    print(ratio_line("listing/get_json", ratio, TIME_TARGET))
    per_entry, hand_per_entry = memory["ours"] / n, memory["hand"] / n
    print(
        f"  peak traced memory: ours {per_entry:.0f} B/entry, requests + json.loads "
        f"{hand_per_entry:.0f} B/entry (each in a fresh process)"
    )
    print(ratio_line("listing_peak_memory/get_json", per_entry / hand_per_entry))
    print(f"  HTML of the listing: {size / 1024:.1f} KiB (limit {HTML_LIMIT // 1024} KiB)")
    print(ratio_line("listing_html/limit", size / HTML_LIMIT, 1.0))
    RESULTS["listing"] = {
        "entries": n,
        "magic": magic,
        "ms": {k: median(v) * 1e3 for k, v in times.items()},
        "ratio": ratio,
        "peak_bytes_per_entry": per_entry,
        "hand_peak_bytes_per_entry": hand_per_entry,
        "html_bytes": size,
    }


def _hand_get(sandbox: Any) -> Any:
    import requests

    path = "/api/v1/dictionary"
    headers = hand_headers(path, sandbox.access_key, sandbox.secret_key)
    with requests.Session() as session:
        return json.loads(session.get(sandbox.url + path, headers=headers).content)


def child_listing_memory(count: int) -> None:
    """Peak traced memory of one listing, ours then by hand, each from a clean start."""
    import tracemalloc

    from dict_magics.service.client import DictionaryClient

    sandbox = SimpleNamespace(
        url=os.environ["DICT_MAGICS_BASE_URL"],
        access_key=os.environ["DICT_MAGICS_ACCESS_KEY"],
        secret_key=os.environ["DICT_MAGICS_SECRET_KEY"],
    )
    client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key)
    peaks = {}
    for name, run in (("ours", client.list_entries), ("hand", lambda: _hand_get(sandbox))):
        run()  # warm-up: imports and caches are not the listing's
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        result = run()
        peaks[name] = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        del result
        gc.collect()
    print(json.dumps({"count": count, **peaks}))
