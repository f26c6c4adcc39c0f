"""Impact of a change on a corpus: per line, the entries applied before and after.

Each kind of change goes through the real operation against the sandbox (its dry run gives
the impact, then the change is made and ``check`` on the corpus must read as the impact's
"after"), and a Hypothesis test does the same for random sync plans under every unit. The fast
path (only lines holding a touched term are matched again) is held to matching every line.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import point_at
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_sandbox_translate import ANIMALS, WORKED

from dict_magics.errors import UsageProblem
from dict_magics.models import DryRunResult, Entry, EntryList, SyncPlan
from dict_magics.models.impact import Impact, after_change, impact, read_corpus
from dict_magics.operations.add import add
from dict_magics.operations.context import OperationSettings
from dict_magics.operations.delete import delete
from dict_magics.operations.listing import CACHE
from dict_magics.operations.sync import plan_sync, sync
from dict_magics.operations.textcheck import check_text
from dict_magics.operations.update import update
from dict_magics.sandbox import SandboxServer

CORPUS = [*WORKED, "何もない", "", "猫"]
ONE = OperationSettings(workers=1)


@pytest.fixture
def animals(monkeypatch: pytest.MonkeyPatch) -> Iterator[SandboxServer]:
    with SandboxServer(ANIMALS) as server:
        yield point_at(monkeypatch, server)


def checked(lines: list[str], unit: str = "element", case_sensitive: bool = True) -> list[list]:
    """``check`` on each line (a text of its own), through the operation: terms applied."""
    out = []
    for line in lines:
        if not line.strip():
            out.append([])
            continue
        report = check_text(ONE, [line], unit=unit, case_sensitive=case_sensitive)
        out.append([e.terms for s in report.segments for e in s.applied_entries])
    return out


def assert_after_is_check(result: Impact, before: list[list], lines: list[str], **how: Any):
    """The change was made: ``check`` now reads as the impact's "after" on changed lines, and
    as before on the others."""
    now = checked(lines, **how)
    changed = {c.line: c for c in result.changed}
    for number, (was, is_) in enumerate(zip(before, now, strict=True), 1):
        if number in changed:
            assert [e.terms for e in changed[number].before] == was, number
            assert [e.terms for e in changed[number].after] == is_, number
        else:
            assert is_ == was, number
    assert result.lines == len(lines)


def reasons(result: Impact) -> dict[int, list[str]]:
    return {c.line: [str(r) for r in c.reasons] for c in result.changed}


# -- each kind of change through its operation ---------------------------------------------------


def test_an_add_pushes_an_entry_past_the_limit(animals: SandboxServer) -> None:
    before = checked(CORPUS)
    animals.clear_log()
    preview = add(ONE, "ja", "これ", "en", "This", dry_run=True)
    result = preview.impact(CORPUS)
    assert [r.operation for r in animals.requests] == ["list"]  # measuring sent nothing more
    assert reasons(result) == {
        1: [
            "+ これ \u2192 This (ja\u2192en): newly applied (a new entry)",
            "- ウサギ \u2192 Peter (ja\u2192en), entry 3: no longer applied (pushed past the "
            "limit by これ \u2192 This)",
        ]
    }
    assert str(result).startswith(
        "\u2013 impact on 5 sample lines (limit 3 per element): 1 line changes, 4 do not"
    )
    add(ONE, "ja", "これ", "en", "This")
    assert_after_is_check(result, before, CORPUS)


def test_a_delete_lets_one_back_in(animals: SandboxServer) -> None:
    before = checked(CORPUS)
    dry = delete(ONE, ["1"], dry_run=True)
    assert isinstance(dry, DryRunResult)
    result = dry.impact(CORPUS)
    assert reasons(result) == {
        1: [
            "+ クマ \u2192 Teddy (ja\u2192en), entry 4: newly applied (back under the limit)",
            "- 猫 \u2192 Kitty (ja\u2192en), entry 1: no longer applied (deleted)",
        ],
        5: ["- 猫 \u2192 Kitty (ja\u2192en), entry 1: no longer applied (deleted)"],
    }
    delete(ONE, ["1"])
    assert_after_is_check(result, before, CORPUS)


def test_a_longer_term_takes_over_a_position(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = ["代表取締役が来ます。", "取締役会"]
    with SandboxServer([Entry("11", "ja", "取締役", "en", "director")]) as server:
        point_at(monkeypatch, server)
        before = checked(lines)
        result = add(ONE, "ja", "代表取締役", "en", "CEO", dry_run=True).impact(lines)
        assert reasons(result) == {
            1: [
                "+ 代表取締役 \u2192 CEO (ja\u2192en): newly applied (a new entry)",
                "- 取締役 \u2192 director (ja\u2192en), entry 11: no longer applied (covered by "
                "代表取締役 \u2192 CEO)",
            ]
        }
        add(ONE, "ja", "代表取締役", "en", "CEO")
        assert_after_is_check(result, before, lines)


def test_an_update_of_a_target(animals: SandboxServer) -> None:
    before = checked(CORPUS, unit="sentence")
    preview = update(ONE, "3", to_text="Bunny", dry_run=True)
    result = preview.impact(CORPUS, unit="sentence")
    target = "~ ウサギ \u2192 Bunny (ja\u2192en), entry 3: target changed: Peter \u2192 Bunny"
    assert reasons(result) == {1: [target], 2: [target]}
    assert [e.to_text for e in result.changed[0].after] == ["Kitty", "Marutaro", "Bunny", "Teddy"]
    update(ONE, "3", to_text="Bunny")
    assert_after_is_check(result, before, CORPUS, unit="sentence")


def test_a_sync_plan_on_a_corpus_file(animals: SandboxServer, tmp_path: Path) -> None:
    glossary = tmp_path / "animals.csv"
    write_glossary(glossary, [("ja", "猫", "en", "Cat"), ("ja", "可愛", "en", "cute")])
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes("\ufeff".encode() + "\r\n".join(CORPUS).encode() + b"\r\n")
    plan = plan_sync(ONE, glossary, delete_missing=True)
    result = plan.impact(corpus)
    data = result.to_json()
    assert data["lines"] == 5 and [c["line"] for c in data["changed"]] == [1, 2, 5]
    assert data["changed"][1] == {
        "line": 2,
        "text": "ウサギとクマも可愛いです。",
        "before": [
            {"id": "3", "fromLang": "ja", "fromText": "ウサギ", "toLang": "en", "toText": "Peter"},
            {"id": "4", "fromLang": "ja", "fromText": "クマ", "toLang": "en", "toText": "Teddy"},
        ],
        "after": [{"fromLang": "ja", "fromText": "可愛", "toLang": "en", "toText": "cute"}],
    }
    json.dumps(data)
    frame = result.to_pandas()
    assert list(frame.columns) == ["line", "text", "before", "after", "why"]
    assert frame["line"].tolist() == [1, 2, 5]
    assert "target changed: Kitty \u2192 Cat" in frame["why"][2]


# -- random plans: the impact's "after" is check after the apply ----------------------------------

VOCABULARY = ["猫", "子猫", "犬", "猫犬", "ウサギ", "クマ", "Cat", "cat", "hot dog", "dog"]


def write_glossary(path: Path, rows: list[tuple[str, str, str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["fromLang", "fromText", "toLang", "toText"])
        writer.writerows(rows)


@st.composite
def plans(draw: Any) -> tuple[list[Entry], list[tuple[str, str, str, str]], list[str]]:
    """A dictionary, a glossary file for a sync, and a corpus made of the same terms."""
    sources = draw(st.lists(st.sampled_from(VOCABULARY), max_size=7, unique=True))
    ids = draw(
        st.lists(st.integers(1, 60), min_size=len(sources), max_size=len(sources), unique=True)
    )
    entries = [Entry(str(i), "en", s, "de", f"<{i}>") for s, i in zip(sources, ids, strict=True)]
    rows = []
    for source in draw(st.lists(st.sampled_from(VOCABULARY), max_size=7, unique=True)):
        target = draw(st.sampled_from(["<a>", "<b>", "<c>"]))
        rows.append(("en", source, "de", target))
    piece = st.one_of(st.sampled_from(VOCABULARY), st.sampled_from([" ", ". ", "x", "CAT"]))
    lines = draw(st.lists(st.lists(piece, max_size=8).map("".join), min_size=1, max_size=6))
    return entries, rows, lines


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    case=plans(),
    delete_missing=st.booleans(),
    unit=st.sampled_from(["element", "request", "sentence"]),
    case_sensitive=st.booleans(),
)
def test_after_a_random_sync_check_reads_as_the_impact_said(
    tmp_path: Path, case: tuple, delete_missing: bool, unit: str, case_sensitive: bool
) -> None:
    entries, rows, lines = case
    glossary = tmp_path / "glossary.csv"
    write_glossary(glossary, rows)
    how = {"unit": unit, "case_sensitive": case_sensitive}
    CACHE.forget()  # a sandbox may come back on a port an earlier example used
    with SandboxServer(entries) as server, pytest.MonkeyPatch.context() as patch:
        point_at(patch, server)
        before = checked(lines, **how)
        plan = plan_sync(ONE, glossary, delete_missing=delete_missing)
        result = plan.impact(lines, **how)
        done = sync(ONE, glossary, apply=True, delete_missing=delete_missing, yes=True)
        assert done.ok
        assert_after_is_check(result, before, lines, **how)


# -- the fast path is the whole computation ----------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    case=plans(),
    unit=st.sampled_from(["element", "sentence"]),
    case_sensitive=st.booleans(),
    data=st.data(),
)
def test_only_lines_with_a_touched_term_change(
    case: tuple, unit: str, case_sensitive: bool, data: Any
) -> None:
    """Matching every line before and after finds exactly the lines (and entries) the
    impact lists."""
    entries, rows, lines = case
    deletes = data.draw(st.lists(st.sampled_from(entries), unique=True) if entries else st.just([]))
    updates = [Entry(e.id, *e.terms[:3], e.to_text + "!") for e in entries if e not in deletes][:2]
    adds = [Entry("", *row) for row in rows]
    after = after_change(entries, adds=adds, updates=updates, deletes=deletes)
    result = impact(entries, after, lines, unit=unit, case_sensitive=case_sensitive)
    naive = {}
    for listing, key in ((entries, "before"), (after, "after")):
        report = EntryList(listing).check(lines, unit=unit, case_sensitive=case_sensitive)
        for number in range(len(lines)):
            applied = [e for s in report.segments if s.element == number for e in s.applied_entries]
            naive.setdefault(number + 1, {})[key] = applied
    expected = {n: (v["before"], v["after"]) for n, v in naive.items() if v["before"] != v["after"]}
    assert {c.line: (list(c.before), list(c.after)) for c in result.changed} == expected


# -- the corpus file, the record ----------------------------------------------------------------


def test_a_corpus_file_is_utf8_lines_and_bounded(tmp_path: Path) -> None:
    good = tmp_path / "good.txt"
    good.write_bytes(b"\xef\xbb\xbfone\r\ntwo\rthree\n\nfour\n")
    assert read_corpus(good) == ["one", "two", "three", "", "four"]
    bad = tmp_path / "bad.txt"
    bad.write_bytes("one\n二\n".encode() + b"\xff three\n")
    with pytest.raises(UsageProblem, match=r"bad.txt is not UTF-8 text: line 3 is not"):
        read_corpus(bad)
    huge = tmp_path / "huge.txt"
    with huge.open("wb") as handle:
        handle.truncate(65 * 1024 * 1024)  # sparse: no 65 MB written
    with pytest.raises(UsageProblem, match="over 64 MiB: keep a sample"):
        read_corpus(huge)
    with pytest.raises(UsageProblem, match="cannot read the corpus"):
        read_corpus(tmp_path / "missing.txt")
    with pytest.raises(UsageProblem, match="cannot read the corpus"):
        read_corpus(tmp_path)


def test_a_record_without_its_listing_is_given_one() -> None:
    plan = SyncPlan("g.csv", "h", "p", adds=[Entry("", "ja", "これ", "en", "This")])
    with pytest.raises(UsageProblem, match="SyncPlan holds no listing to measure from"):
        plan.impact(WORKED)
    assert len(plan.impact(WORKED, listing=ANIMALS).changed) == 1
    purge = DryRunResult("purge", "h", "p", entries=ANIMALS)
    assert [len(c.after) for c in purge.impact(WORKED).changed] == [0, 0]
    with pytest.raises(UsageProblem, match="not 'word'"):
        plan.impact(WORKED, listing=ANIMALS, unit="word")


def test_an_impact_shows_itself_escaped_and_bounded() -> None:
    from IPython.lib.pretty import pretty

    hostile = Entry("9", "en", "<b>x</b>", "de", "\x1b[2J\u202e")
    lines = [f"<script>{n}</script> <b>x</b>" for n in range(500)]
    result = impact([], [hostile], lines)
    assert len(result.changed) == 500
    for shown in (str(result), pretty(result), result._repr_html_()):
        assert "\x1b" not in shown and "\u202e" not in shown
    html = result._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html and "<b>x" not in html
    assert len(html.encode()) < 200_000 and "\u2026 and 300 more" in html
    assert "\u2026 and 480 more" in pretty(result)
    assert "\u2026 and 450 more" in str(result)
    assert result.to_json()["changed"][0]["after"] == [hostile.to_service()]
