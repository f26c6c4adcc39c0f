"""[11] Glossary sync: the plan of a 10,000-row file against 10,000 entries (time beyond the
listing it needs anyway), and applying 1,000 adds + 100 updates against the same requests sent
by a hand-written loop (request count and time).

Apply runs on a fresh sandbox each time (it changes the dictionary); ours and the hand loop
alternate, and each sends the same requests: a listing, the bulk chunks, the PUTs, a listing.
Ours also reads and checks the file, plans, writes the snapshot and the audit lines.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from benchlib import (
    RESULTS,
    WORK,
    Mode,
    SandboxSpec,
    environ,
    hand_headers,
    median,
    ratio_line,
    rotations,
    sandbox_process,
    section,
)

PLAN_TARGET = 1.0
"""Seconds a plan may take beyond its listing."""
APPLY_TARGET = 1.3
"""Ours / the hand-written loop."""


def _sizes(mode: Mode) -> tuple[int, int, int, int]:
    """(entries, rows, adds, updates): the issue's sizes in a full run, a tenth in a quick one."""
    if mode.listing_entries >= 100_000:
        return 10_000, 10_000, 1_000, 100
    return 1_000, 1_000, 100, 10


def bench_glossary(mode: Mode) -> None:
    entries, rows, adds, updates = _sizes(mode)
    rounds = max(2, mode.listing_rounds // 2)
    section(
        f"[11] glossary sync: plan of {rows:,} rows vs {entries:,} entries; apply {adds:,} adds "
        f"+ {updates:,} updates vs a hand-written loop"
    )
    home = WORK / "glossary-home"  # snapshots and audit lines of the applies: never the user's
    home.mkdir(parents=True, exist_ok=True)
    with environ({"DICT_MAGICS_HOME": str(home)}):
        _plan(entries, rows, rounds)
        _apply(entries, adds, updates, max(2, rounds + 2))
        # A service is not on loopback: the same at 20 ms a round trip (a delay proxy).
        _apply(entries, adds, updates, 2 if rows >= 10_000 else 1, rtt=0.02)


def _edited_file(entries: list[Any], rows: int, adds: int, updates: int, path: Path) -> Path:
    """The listing written back with ``updates`` targets changed and ``adds`` new rows."""
    from dict_magics.formats import write_glossary
    from dict_magics.models import Entry

    kept = [Entry("", *e.terms) for e in entries[: rows - adds]]
    for i in range(updates):
        e = kept[i]
        kept[i] = Entry("", e.from_lang, e.from_text, e.to_lang, f"{e.to_text} (rev {i})")
    kept += [Entry("", "en", f"new term {i}", "de", f"neuer Begriff {i}") for i in range(adds)]
    return write_glossary(path, kept)


def _plan(entries: int, rows: int, rounds: int) -> None:
    from dict_magics.formats import read_glossary
    from dict_magics.operations.context import OperationSettings
    from dict_magics.operations.listing import CACHE
    from dict_magics.operations.sync import make_plan, plan_sync
    from dict_magics.service.client import DictionaryClient

    with sandbox_process(SandboxSpec(entries)) as sandbox, environ(sandbox.env()):
        client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key)
        listing = client.list_entries()
        WORK.mkdir(parents=True, exist_ok=True)
        paths = {
            kind: _edited_file(
                list(listing), rows, rows // 10, rows // 10, WORK / f"glossary-plan.{kind}"
            )
            for kind in ("csv", "xlsx", "tbx")
        }
        settings = OperationSettings()
        times: dict[str, list[float]] = {"listing": [], "csv": [], "xlsx": [], "tbx": []}
        parts: dict[str, list[float]] = {"read csv": [], "match": []}
        for order in rotations(list(times), rounds):
            for name in order:
                CACHE.forget()
                started = time.perf_counter()
                if name == "listing":
                    client.list_entries()
                else:
                    plan = plan_sync(settings, paths[name])
                    if len(plan.adds) != rows // 10 or len(plan.updates) != rows // 10:
                        raise RuntimeError(f"the {name} plan is wrong: {plan!r}")
                times[name].append(time.perf_counter() - started)
            started = time.perf_counter()
            glossary = read_glossary(paths["csv"])
            parts["read csv"].append(time.perf_counter() - started)
            started = time.perf_counter()
            make_plan(glossary, listing.entries)
            parts["match"].append(time.perf_counter() - started)
        client.close()
    base = median(times["listing"])
    print(f"  listing {entries:,} entries: {base * 1000:.0f} ms (median of {rounds})")
    for kind in ("csv", "xlsx", "tbx"):
        total = median(times[kind])
        beyond = total - base
        print(
            f"  plan from .{kind}: {total * 1000:.0f} ms, of which beyond the listing "
            f"{beyond * 1000:.0f} ms"
        )
        print(ratio_line(f"plan_{kind}_beyond_listing_seconds", beyond, PLAN_TARGET))
        figures = RESULTS.setdefault("glossary", {})
        figures.setdefault("plan_beyond_listing_s", {})[kind] = round(beyond, 4)
    print(
        f"  of which: reading the .csv {median(parts['read csv']) * 1000:.0f} ms, matching "
        f"{median(parts['match']) * 1000:.0f} ms"
    )


def _apply(entries: int, adds: int, updates: int, rounds: int, rtt: float = 0.0) -> None:
    from dict_magics.operations.context import OperationSettings
    from dict_magics.operations.listing import CACHE
    from dict_magics.operations.sync import sync
    from dict_magics.service.client import DictionaryClient

    # One request at a time on both sides: the loop a person writes is sequential.
    times: dict[str, list[float]] = {"ours": [], "hand loop": []}
    counts: dict[str, dict[str, int]] = {}
    for order in rotations(list(times), rounds):
        for name in order:
            spec = SandboxSpec(entries, rtt=rtt)
            with sandbox_process(spec) as sandbox, environ(sandbox.env()):
                with DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key) as c:
                    listing = list(c.list_entries())
                path = _edited_file(listing, entries, adds, updates, WORK / "glossary-apply.csv")
                CACHE.forget()
                before = sandbox.stats()["operations"]
                started = time.perf_counter()
                if name == "hand loop":
                    _hand_loop(sandbox, path)
                else:
                    result = sync(OperationSettings(workers=1), path, apply=True)
                    if not result.ok:
                        raise RuntimeError(f"the sync did not succeed: {result!r}")
                times[name].append(time.perf_counter() - started)
                after = sandbox.stats()
                counts[name] = {k: v - before.get(k, 0) for k, v in after["operations"].items()}
                if after["left"] != entries + adds:
                    raise RuntimeError(f"{name}: {after['left']} entries, not {entries + adds}")
    hand = median(times["hand loop"])
    where = f"rtt{rtt * 1000:.0f}ms" if rtt else "loopback"
    print(f"  apply, {where}:")
    for name, values in times.items():
        sent = dict(sorted(counts[name].items()))
        print(f"    {name}: {median(values) * 1000:.0f} ms (median of {rounds}), requests {sent}")
    ratio = median(times["ours"]) / hand
    print(ratio_line(f"apply_{where}_ours_vs_hand_loop", ratio, APPLY_TARGET))
    figures = RESULTS.setdefault("glossary", {})
    figures[f"apply_{where}_ratio"] = round(ratio, 3)
    figures["apply_requests"] = {"ours": counts["ours"], "hand loop": counts["hand loop"]}


def _hand_loop(sandbox: Any, path: Path) -> None:
    """What a person writes: list, compare, POST the new rows in chunks of 500, PUT the changed."""
    import csv

    import requests

    prefix = "/api/v1/dictionary"
    with requests.Session() as session:

        def listing() -> list[dict[str, Any]]:
            headers = hand_headers(prefix, sandbox.access_key, sandbox.secret_key)
            return json.loads(session.get(sandbox.url + prefix, headers=headers).content)["data"][
                "entries"
            ]

        by_source = {(e["fromLang"], e["fromText"], e["toLang"]): e for e in listing()}
        with open(path, encoding="utf-8-sig", newline="") as handle:
            rows = list(csv.DictReader(handle))
        new, changed = [], []
        for row in rows:
            terms = {k: row[k] for k in ("fromLang", "fromText", "toLang", "toText")}
            found = by_source.get((row["fromLang"], row["fromText"], row["toLang"]))
            if found is None:
                new.append(terms)
            elif found["toText"] != row["toText"]:
                changed.append((found["id"], terms))
        for i in range(0, len(new), 500):
            bulk = prefix + "/bulk"
            headers = hand_headers(bulk, sandbox.access_key, sandbox.secret_key)
            body = json.dumps(new[i : i + 500])
            answer = session.post(sandbox.url + bulk, data=body, headers=headers)
            if answer.json().get("status") != "success":
                raise RuntimeError(f"bulk refused: {answer.text[:200]}")
        for entry_id, terms in changed:
            one = f"{prefix}/{entry_id}"
            headers = hand_headers(one, sandbox.access_key, sandbox.secret_key)
            answer = session.put(sandbox.url + one, data=json.dumps(terms), headers=headers)
            if answer.json().get("status") != "success":
                raise RuntimeError(f"PUT refused: {answer.text[:200]}")
        listing()
