"""``%dict_check`` / ``dict-magics check`` / ``EntryList.check(texts)``: the limit of 3 per
element (or per request, per sentence), as the vendor's worked example defines it.

Offline on an ``EntryList``, end to end through the magic and the command line, and held to
the sandbox's translate endpoint (written apart from the matcher): for random dictionaries and
texts, under every unit and both case settings, the entries the check predicts applied are the
entries the engine applied.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from conftest import point_at, run_cell
from hypothesis import given, settings
from hypothesis import strategies as st
from IPython.utils.capture import capture_output
from test_sandbox_translate import ANIMALS, WORKED

from dict_magics.errors import UsageProblem
from dict_magics.models import CheckReport, Entry, EntryList
from dict_magics.models.textcheck import LIMIT, fold, split_sentences
from dict_magics.sandbox import SandboxServer

ENTRIES = [
    Entry("11", "ja", "取締役", "en", "director"),
    Entry("13", "ja", "見積書", "en", "quotation"),
    Entry("14", "ja", "納品書", "en", "delivery note"),
    Entry("15", "ja", "契約書", "en", "contract"),
    Entry("3", "ja", "請求書", "en", "invoice"),
    Entry("4", "ja", "会議", "en", "meeting"),
    Entry("20", "en", "invoice", "de", "Rechnung"),
    Entry("21", "en", "chiffre d'affaires", "de", "Umsatz"),
    Entry("22", "ja", "会議", "de", "Besprechung"),
]
# Five entries match, in this order: 見積書 納品書 契約書 取締役 請求書.
FIVE = "見積書と納品書と契約書を取締役が請求書と一緒に送ります。"


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("会議です。請求書です！本当？", ["会議です。", "請求書です！", "本当？"]),  # noqa: RUF001
        ("本当？！はい。", ["本当？", "！", "はい。"]),  # noqa: RUF001
        ("One. Two! Three? Four", ["One.", " Two!", " Three?", " Four"]),
        ("Version 3.14 is out.Next", ["Version 3.14 is out.Next"]),
        ("Wait... what?!\tYes", ["Wait...", " what?!", "\tYes"]),
        ("", []),
    ],
)
def test_sentences_end_at_each_mark_as_the_contract_says(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


# -- the vendor's worked example ---------------------------------------------------------------


@pytest.mark.parametrize(
    "unit, applied, not_applied",
    [
        # The vendor's own answer: クマ past the limit in the first element, applied in the second.
        ("element", [["1", "2", "3"], ["3", "4"]], [["4"], []]),
        # 3 across the request: ウサギ applies again in the second element, クマ never.
        ("request", [["1", "2", "3"], ["3"]], [["4"], ["4"]]),
        # Each sentence its own 3: everything applies.
        ("sentence", [["1"], ["2"], ["3", "4"], ["3", "4"]], [[], [], [], []]),
    ],
)
def test_the_vendors_worked_example(unit: str, applied: list, not_applied: list) -> None:
    report = EntryList(ANIMALS).check(WORKED, unit=unit)
    assert [s.applied for s in report.segments] == applied
    assert [s.not_applied for s in report.segments] == not_applied
    assert [s.element for s in report.segments] == ([0, 0, 0, 1] if unit == "sentence" else [0, 1])
    assert report.never_applied == (["4"] if unit == "request" else [])
    assert report.to_json()["unit"] == unit


def test_the_default_unit_is_one_element_a_line_of_a_string() -> None:
    report = EntryList(ANIMALS).check("\n".join(WORKED) + "\n\n")
    assert report.unit == "element" and len(report.segments) == 2  # a blank line is no element
    assert [s.applied for s in report.segments] == [["1", "2", "3"], ["3", "4"]]
    assert str(report).startswith(
        "\u2013 2 of 2 elements match 4 entries (of 4 checked): 3 applied, 1 applied in some "
        "elements only (limit 3 per element)"
    )
    assert " \u2014 not applied (limit 3 per element)" in str(report)


def test_the_counts_add_up_whatever_the_unit() -> None:
    """Every matched entry is counted once: applied, applied in some segments only, or never
    applied; the title's numbers sum to the entries it names."""
    texts = [FIVE, "取締役です。", "請求書と会議", "nothing"]
    for unit in ("element", "request", "sentence"):
        report = EntryList(ENTRIES).check(texts, unit=unit)
        title = str(report).splitlines()[0]
        matched, parts = re.match(
            r"\u2013 \d+ of \d+ \w+ match\w* (\d+) entries .*?: (.*) \(limit", title
        ).groups()
        numbers = [int(n) for n in re.findall(r"(\d+) (?:applied|never)", parts)]
        assert sum(numbers) == int(matched) == len(report.entries), title
        outcomes = report.outcomes()
        assert sorted(i for ids in outcomes.values() for i in ids) == sorted(report.entries)
    report = EntryList(ENTRIES).check(texts)
    assert report.outcomes() == {
        "applied": ["4", "13", "14", "15", "22"],
        "some": ["3", "11"],  # past the limit in the first element, applied in another
        "never": [],
    }
    assert str(report).startswith(
        "\u2013 3 of 4 elements match 7 entries (of 9 checked): 5 applied, 2 applied in some "
        "elements only (limit 3 per element)"
    )


# -- the rule, offline -----------------------------------------------------------------------


def test_five_matches_in_one_element_apply_the_first_three() -> None:
    report = EntryList(ENTRIES).check([FIVE + "会議の後で。"])
    (element,) = report.segments
    assert element.applied == ["13", "14", "15", "22"]  # 会議 ja→de: another pair, its own 3
    assert element.not_applied == ["11", "3", "4"]
    assert [m.start for m in element.matches] == [0, 4, 8, 12, 16, 28, 28]
    assert report.never_applied == ["3", "4", "11"] and LIMIT == 3
    only = EntryList(ENTRIES).check(FIVE, from_lang="ja", to_lang="de")
    assert only.checked == 1 and only.entries == {}


def test_ties_at_one_position_go_longer_first_then_lower_id() -> None:
    entries = [
        Entry("7", "ja", "会議", "en", "meeting"),
        Entry("5", "ja", "会議室", "en", "meeting room"),
        Entry("10", "ja", "会議", "en", "conference"),
        Entry("9", "ja", "会議", "en", "session"),
        Entry("2", "ja", "室へ", "en", "to the room"),
    ]
    (segment,) = EntryList(entries).check("会議室へ。会議").segments
    # 会議室 is applied first; the text it covers is translated, so 室へ and the 会議 inside
    # it are no match there; the second 会議 goes to the lowest id among the same term.
    assert segment.applied == ["5", "7"]
    assert [
        (m.entry.id, m.start, m.status, m.by.id if m.by else None) for m in segment.matches
    ] == [
        ("5", 0, "applied", None),
        ("9", 0, "inside", "5"),  # each is placed where it first occurs: inside 会議室
        ("10", 0, "inside", "5"),
        ("2", 2, "inside", "5"),
        ("7", 5, "applied", None),
    ]
    assert "not applied (covered by entry 5: 会議室)" in str(EntryList(entries).check("会議室"))


def test_an_applied_entry_counts_once_and_past_the_limit_a_longer_term_waits() -> None:
    entries = [
        Entry("1", "en", "York", "de", "Y"),
        Entry("2", "en", "New", "de", "N"),
        Entry("5", "en", "New York", "de", "NY"),
        Entry("7", "en", "and", "de", "u"),
    ]
    (segment,) = EntryList(entries).check("York and New New York").segments
    assert segment.applied == ["1", "7", "2"] and segment.not_applied == ["5"]


@pytest.mark.parametrize("case_sensitive", [True, False])
def test_case_both_ways(case_sensitive: bool) -> None:
    listing = EntryList(ENTRIES)
    report = listing.check(["Invoice and INVOICE.", "an invoice"], case_sensitive=case_sensitive)
    assert [s.applied for s in report.segments] == [[] if case_sensitive else ["20"], ["20"]]
    assert report.to_json()["case_sensitive"] is case_sensitive


def test_folding_keeps_offsets_and_folds_as_regular_expressions_do() -> None:
    folded = fold("STRASSE Straße ẞ İstanbul ıI ſ Σς")  # noqa: RUF001
    assert folded == "strasse straße ß istanbul ii s σσ"  # noqa: RUF001
    entries = [Entry("1", "de", "straße", "en", "street"), Entry("2", "tr", "istanbul", "en", "X")]
    report = EntryList(entries).check(["STRAẞE", "STRASSE", "İSTANBUL"], case_sensitive=False)
    assert [s.applied for s in report.segments] == [["1"], [], ["2"]]


def test_a_term_never_matches_across_a_sentence_end_under_sentence() -> None:
    entries = [Entry("1", "en", "end. Next", "de", "x")]
    assert EntryList(entries).check("The end. Next one.", unit="sentence").entries == {}
    assert list(EntryList(entries).check("The end. Next one.").entries) == ["1"]


def test_a_list_keeps_each_item_and_an_unknown_unit_is_refused() -> None:
    report = EntryList(ANIMALS).check(["猫\n犬", "", "クマ"])
    assert [s.applied for s in report.segments] == [["1", "2"], [], ["4"]]
    with pytest.raises(UsageProblem, match="element, request, sentence, not 'paragraph'"):
        EntryList(ANIMALS).check("猫", unit="paragraph")
    empty = EntryList([]).check("会議です。")
    assert empty.checked == 0 and empty.matched == [] and empty.never_applied == []


# -- the engine agrees: the sandbox's translate endpoint ----------------------------------------


def translate(sandbox: SandboxServer, texts: list[str]) -> list[str]:
    """One signed ``POST /api/v1/translate`` (the seed's signature, computed here)."""
    path = "/api/v1/translate"
    nonce = str(time.time_ns() // 1000)
    key = sandbox.secret_key.encode()
    headers = {
        "Content-Type": "application/json",
        "accessKey": sandbox.access_key,
        "nonce": nonce,
        "signature": hmac.new(key, (nonce + path).encode(), hashlib.sha256).hexdigest(),
    }
    body = {"fieldId": "1", "text": texts, "sourceLang": "en", "targetLang": "de"}
    answer = requests.post(sandbox.url + path, json=body, headers=headers, timeout=10)
    assert answer.json()["status"] == "success", answer.text
    return [r["translatedText"] for r in answer.json()["data"]["translationResult"]]


# Letters that fold in every awkward way, the sentence ends, spaces. Targets are markers that
# no source holds, so "its toText is in the translation" can only mean "applied".
ALPHABET = "abAB。！？.!? ßẞsSſıİiIσςΣ"  # noqa: RUF001
TERM = st.text(ALPHABET, min_size=1, max_size=3).filter(str.strip)


@st.composite
def dictionaries_and_texts(draw: Any) -> tuple[list[Entry], list[str]]:
    """Up to 8 entries (ids at random) and 1-3 texts made mostly of their terms, in either
    case, so that the limit, covered terms and ties are met often."""
    terms = draw(st.lists(TERM, min_size=1, max_size=8))
    ids = draw(st.lists(st.integers(1, 40), min_size=len(terms), max_size=len(terms), unique=True))
    entries = [Entry(str(i), "en", t, "de", f"<{i}>") for t, i in zip(terms, ids, strict=True)]
    term = st.sampled_from(terms)
    piece = st.one_of(term, term.map(str.swapcase), st.text(ALPHABET, max_size=2))
    text = st.lists(piece, max_size=9).map("".join).filter(str.strip)
    return entries, draw(st.lists(text, min_size=1, max_size=3))


@settings(max_examples=80, deadline=None)
@given(
    case=dictionaries_and_texts(),
    unit=st.sampled_from(["element", "request", "sentence"]),
    case_sensitive=st.booleans(),
)
def test_the_prediction_is_what_the_engine_applies(
    case: tuple[list[Entry], list[str]], unit: str, case_sensitive: bool
) -> None:
    entries, texts = case
    predicted = [set() for _ in texts]
    report = EntryList(entries).check(texts, unit=unit, case_sensitive=case_sensitive)
    for segment in report.segments:
        predicted[segment.element] |= set(segment.applied)
    with SandboxServer(entries, limit_unit=unit, case_sensitive=case_sensitive) as sandbox:
        translated = translate(sandbox, texts)
    engine = [
        {e.id for e in entries if e.to_text in out and e.to_text not in text}
        for text, out in zip(texts, translated, strict=True)
    ]
    assert predicted == engine


# -- display ---------------------------------------------------------------------------------


def test_text_and_html_show_applied_and_skipped_and_escape_everything() -> None:
    entries = [*ENTRIES, Entry("30", "en", "<b>bold</b>", "de", "\x1b[31mred\u202e")]
    report = EntryList(entries).check(FIVE + "\n<script>x</script> <b>bold</b> \x1b[2J.")
    text, html = str(report), report._repr_html_()
    assert "  [1] " + FIVE in text
    assert (
        "\u2717 11: 取締役 \u2192 director (ja\u2192en) \u2014 not applied (limit 3 per element)"
        in text
    )
    assert "never applied in these texts (2)" in text
    assert "\x1b" not in text and "\u202e" not in text and "\\x1b" in text
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<b>bold" not in html and '">&lt;b&gt;bold&lt;/b&gt;</mark>' in html
    assert "\x1b" not in html and "\u202e" not in html
    assert html.count("<mark") == 6
    assert 'title="entries 13"' in html and "line-through" in html


def test_sentences_are_numbered_within_their_element() -> None:
    report = EntryList(ANIMALS).check(WORKED, unit="sentence")
    text = str(report)
    assert "  [1.3] ウサギとクマも動物です。" in text and "  [2.1] ウサギとクマ" in text
    assert (
        "4 of 4 sentences match 4 entries (of 4 checked): 4 applied (limit 3 per sentence)" in text
    )


def test_a_long_text_stays_within_a_fixed_size() -> None:
    text = "見積書と納品書と契約書を取締役が請求書と一緒に送ります。\n" * 5000
    report = EntryList(ENTRIES).check(text)
    assert len(report.segments) == 5000
    assert len(report._repr_html_().encode()) < 200_000
    from IPython.lib.pretty import pretty

    assert "\n    \u2026 and 4,980 more\n" in pretty(report)


def test_a_notebook_names_the_first_never_applied_entries_only() -> None:
    entries = [Entry(str(n), "en", f"w{n:04d}", "de", "x") for n in range(1, 3001)]
    text = " ".join(f"w{n:04d}" for n in range(1, 3001)) + "."
    report = EntryList(entries).check(text)
    assert len(report.never_applied) == 2997
    from IPython.lib.pretty import pretty

    shown = pretty(report)
    assert len(shown) < 20_000, len(shown)
    assert "\n    \u2026 and 2,977 more" in shown
    assert "\n      \u2026 and 2,980 more\n" in shown
    assert str(report).count("w2999 \u2192 x") == 2  # the element's list and the summary


# -- magics and the command line against the sandbox ---------------------------------------


@pytest.fixture
def seeded(monkeypatch: pytest.MonkeyPatch) -> Any:
    with SandboxServer(ENTRIES) as server:
        yield point_at(monkeypatch, server)


def run(ip: Any, cell: str) -> Any:
    with capture_output() as cap:
        outcome = ip.run_cell(cell)
    assert outcome.error_in_exec is None, (cell, outcome.error_in_exec, cap.stderr)
    return outcome.result


def test_magic_checks_the_text_as_typed_with_one_listing(ip: Any, seeded: SandboxServer) -> None:
    report = run(ip, f"%dict_check {FIVE}")
    assert isinstance(report, CheckReport)
    assert report.segments[0].applied == ["13", "14", "15"]
    assert report.segments[0].not_applied == ["11", "3"]
    # an apostrophe and quotes stay as typed; options before the text; one line, one element
    report = run(ip, '%dict_check --to-lang de "Our" chiffre d\'affaires. 会議')
    assert [s.text for s in report.segments] == ['"Our" chiffre d\'affaires. 会議']
    assert [s.applied for s in report.segments] == [["21", "22"]]
    assert [(r.operation, r.http_status) for r in seeded.requests] == [("list", 200)]


def test_magic_takes_a_variable_and_a_cell(ip: Any, seeded: SandboxServer) -> None:
    ip.user_ns["sample"] = FIVE
    run(ip, "result = %dict_check {sample}")
    assert ip.user_ns["result"].segments[0].not_applied == ["11", "3"]
    report = run(ip, "%%dict_check --from-lang ja\n" + FIVE + "\n- 会議\n")
    assert [s.applied for s in report.segments] == [["13", "14", "15"], ["4", "22"]]


def test_magic_refuses_an_empty_text_before_any_request(ip: Any, seeded: SandboxServer) -> None:
    for cell in ("%dict_check", "%dict_check -p default", "%%dict_check\n  \n"):
        with capture_output():
            outcome = ip.run_cell(cell)
        assert type(outcome.error_in_exec).__name__ == "UsageError", cell
    assert seeded.requests == []


def test_the_operation_takes_a_unit_and_a_list(seeded: SandboxServer) -> None:
    from dict_magics.operations.context import OperationSettings
    from dict_magics.operations.textcheck import check_text

    settings_ = OperationSettings()
    report = check_text(settings_, [FIVE, "取締役"], unit="request", from_lang="ja")
    assert [s.applied for s in report.segments] == [["13", "14", "15"], []]
    with pytest.raises(UsageProblem, match="not 'word'"):
        check_text(settings_, FIVE, unit="word")
    with pytest.raises(UsageProblem, match="no text to check"):
        check_text(settings_, ["", "  "])
    assert [r.operation for r in seeded.requests] == ["list"]


def cli(server: SandboxServer, *args: str, stdin: str | None = None) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DICT_MAGICS_")}
    env.update(server.env(), DICT_MAGICS_HOME=os.environ["DICT_MAGICS_HOME"])
    env.update(PYTHONIOENCODING="utf-8", PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring")
    proc = subprocess.run(
        [sys.executable, "-m", "dict_magics", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=120,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )
    assert server.secret_key not in proc.stdout + proc.stderr
    return proc


def test_cli_check_json_shape_from_a_file_and_stdin(seeded: SandboxServer, tmp_path: Path) -> None:
    sample = tmp_path / "sample.txt"
    sample.write_text("\ufeff" + FIVE + "\nNo match here.\n", encoding="utf-8")  # with a BOM
    proc = cli(seeded, "check", str(sample), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) >= {"unit", "sentences", "never_applied"} and data["unit"] == "element"
    assert data["sentences"] == [
        {"text": FIVE, "applied": ["13", "14", "15"], "not_applied": ["11", "3"]},
        {"text": "No match here.", "applied": [], "not_applied": []},
    ]
    assert data["never_applied"] == ["3", "11"]
    assert {e["id"] for e in data["entries"]} == {"3", "11", "13", "14", "15"}
    piped = cli(seeded, "check", "-", "--json", stdin=FIVE + "\nNo match here.\n")
    assert json.loads(piped.stdout) == data


def test_cli_check_text_and_usage_errors(seeded: SandboxServer, tmp_path: Path) -> None:
    proc = cli(seeded, "check", "-", "--from-lang", "ja", stdin=FIVE)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(
        "\u2013 1 of 1 element matches 5 entries (of 7 ja\u2192* checked at 127.0.0.1:"
    )
    assert "): 3 applied, 2 never applied (limit 3 per element)" in proc.stdout.splitlines()[0]
    two = cli(seeded, "check", "-", "--from-lang", "ja", stdin=FIVE + "\n" + FIVE + "\nNone.\n")
    assert two.returncode == 0, two.stderr
    assert two.stdout.startswith("\u2013 2 of 3 elements match 5 entries (of 7 ja\u2192* checked")
    missing = cli(seeded, "check", str(tmp_path / "nope.txt"), "--json")
    assert missing.returncode == 2 and json.loads(missing.stdout)["exit"] == 2
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe\x00bad")
    assert cli(seeded, "check", str(binary)).returncode == 2
    assert cli(seeded, "check", "-", stdin="   \n").returncode == 2
    assert [r.operation for r in seeded.requests] == ["list", "list"]


# -- --unit through the magic and the command line, on the vendor's worked example ----------

WORKED_APPLIED = {
    "element": [["1", "2", "3"], ["3", "4"]],
    "request": [["1", "2", "3"], ["3"]],
    "sentence": [["1"], ["2"], ["3", "4"], ["3", "4"]],
}


@pytest.mark.parametrize("unit", sorted(WORKED_APPLIED))
def test_unit_each_way_through_the_magic_and_the_cli(
    ip: Any, unit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SandboxServer(ANIMALS) as server:
        point_at(monkeypatch, server)
        report = run(ip, f"%%dict_check --unit {unit}\n" + "\n".join(WORKED))  # a line each
        assert report.unit == unit and [s.applied for s in report.segments] == WORKED_APPLIED[unit]
        one = run(ip, f"%dict_check --unit {unit} {WORKED[0]}")  # the line: one element
        assert [s.applied for s in one.segments] == WORKED_APPLIED[unit][: len(one.segments)]
        assert len(one.segments) == (3 if unit == "sentence" else 1)
        data = json.loads(
            cli(server, "check", "-", "--unit", unit, "--json", stdin="\n".join(WORKED)).stdout
        )
        assert data["unit"] == unit
        assert [s["applied"] for s in data["sentences"]] == WORKED_APPLIED[unit]
        title = cli(server, "check", "-", "--unit", unit, stdin="\n".join(WORKED)).stdout
        title = title.splitlines()[0]
        assert title.endswith(f"(limit 3 per {unit})")
        assert ("sentence" in title) == (unit == "sentence")  # "per element" words otherwise


def test_the_default_unit_is_the_element_in_both_front_ends(ip: Any, seeded: SandboxServer) -> None:
    from dict_magics.frontends import commands
    from dict_magics.models.textcheck import UNITS

    assert commands.UNITS == UNITS
    assert run(ip, "%dict_check これは。請求書です。").unit == "element"
    with pytest.raises(Exception, match="invalid choice: 'word'"):
        run_cell(ip, "%dict_check --unit word 請求書")
    proc = cli(seeded, "check", "-", "--unit", "word", stdin="請求書")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr
    assert [r.operation for r in seeded.requests] == ["list"]
