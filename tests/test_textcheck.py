"""``%dict_check`` / ``dict-magics check`` / ``EntryList.check(text)``: the 3-per-sentence rule.

Offline on an ``EntryList``, and end to end against a sandbox seeded with the entries the
sentences use. A property test holds the automaton to a plain reference (every sentence x every
entry, ``str.find``), so the fast path cannot drift from the rule.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import point_at
from hypothesis import given, settings
from hypothesis import strategies as st
from IPython.utils.capture import capture_output

from dict_magics.models import CheckReport, Entry, EntryList
from dict_magics.models.lint import id_order
from dict_magics.models.textcheck import LIMIT, split_sentences
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


# -- sentences -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("会議です。請求書です！本当？", ["会議です。", "請求書です！", "本当？"]),  # noqa: RUF001
        ("本当？！はい。。", ["本当？！", "はい。。"]),  # noqa: RUF001
        ("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"]),
        ("Version 3.14 is out.Next", ["Version 3.14 is out.Next"]),
        ("Wait... what?!\tYes", ["Wait...", "what?!", "Yes"]),
        ("line one\nline two\r\n\n  line three  ", ["line one", "line two", "line three"]),
        ("", []),
        ("  \n \n", []),
    ],
)
def test_sentences_split_as_the_contract_says(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


# -- the rule, offline -----------------------------------------------------------------------


def test_five_matches_in_one_sentence_apply_the_first_three() -> None:
    report = EntryList(ENTRIES).check(FIVE + "会議の後で。")
    first, second = report.sentences
    assert first.applied == ["13", "14", "15"]
    assert first.not_applied == ["11", "3"]
    assert [m.start for m in first.matches] == [0, 4, 8, 12, 16]
    assert second.applied == ["4", "22"]  # one per pair: ja→en and ja→de
    assert report.never_applied == ["3", "11"]
    assert LIMIT == 3


def test_the_limit_counts_per_language_pair() -> None:
    entries = [Entry(str(n), "ja", t, "en", "x") for n, t in enumerate("あいうえ", 1)]
    entries += [Entry(str(n), "ja", t, "de", "y") for n, t in enumerate("あいうえ", 5)]
    report = EntryList(entries).check("あいうえ")
    assert report.sentences[0].applied == ["1", "5", "2", "6", "3", "7"]
    assert report.sentences[0].not_applied == ["4", "8"]
    only = EntryList(entries).check("あいうえ", from_lang="ja", to_lang="de")
    assert only.sentences[0].applied == ["5", "6", "7"] and only.checked == 4


def test_ties_at_one_position_go_longer_first_then_lower_id() -> None:
    entries = [
        Entry("7", "ja", "会議", "en", "meeting"),
        Entry("5", "ja", "会議室", "en", "meeting room"),
        Entry("10", "ja", "会議", "en", "conference"),
        Entry("9", "ja", "会議", "en", "session"),
    ]
    report = EntryList(entries).check("会議室へ。")
    assert report.sentences[0].applied == ["5", "7", "9"]
    assert report.sentences[0].not_applied == ["10"]


def test_matching_is_exact_and_case_sensitive() -> None:
    report = EntryList(ENTRIES).check("Invoice and INVOICE. Our chiffre d'affaires grew.")
    assert [s.applied for s in report.sentences] == [[], ["21"]]
    assert EntryList(ENTRIES).check("an invoice.").sentences[0].applied == ["20"]


def test_an_entry_is_placed_at_its_first_occurrence_and_counted_once() -> None:
    entries = [Entry("1", "en", "b", "de", "x"), Entry("2", "en", "a", "de", "y")]
    report = EntryList(entries).check("a b a b a")
    (sentence,) = report.sentences
    assert [(m.entry_id, m.start) for m in sentence.matches] == [("2", 0), ("1", 2)]


def test_a_term_never_matches_across_a_sentence_end() -> None:
    entries = [Entry("1", "en", "end. Next", "de", "x")]
    assert EntryList(entries).check("The end. Next one.").entries == {}


def test_no_entries_or_no_matches() -> None:
    report = EntryList([]).check("会議です。")
    assert report.checked == 0 and report.matched == [] and report.never_applied == []
    report = EntryList(ENTRIES).check("nothing here.", from_lang="xx")
    assert report.checked == 0 and len(report) == 1


def reference(entries: list[Entry], text: str) -> list[tuple[list[str], list[str]]]:
    """The rule written the plain way: every sentence, every entry, ``str.find``."""
    out = []
    for start, end in split_sentences(text):
        sentence = text[start:end]
        found = []
        for e in entries:
            at = sentence.find(e.from_text) if e.from_text else -1
            if at >= 0:
                found.append((at, -len(e.from_text), id_order(e.id), e))
        found.sort(key=lambda row: row[:3])
        taken: dict[tuple[str, str], int] = {}
        applied, skipped = [], []
        for *_, e in found:
            pair = (e.from_lang, e.to_lang)
            taken[pair] = taken.get(pair, 0) + 1
            (applied if taken[pair] <= LIMIT else skipped).append(e.id)
        out.append((applied, skipped))
    return out


TERMS = st.text(alphabet="ab。 .", min_size=0, max_size=3)


@settings(max_examples=300, deadline=None)
@given(
    terms=st.lists(st.tuples(TERMS, st.sampled_from(["en", "ja"])), max_size=12),
    text=st.text(alphabet="ab。 .\n", max_size=40),
)
def test_the_automaton_agrees_with_the_plain_rule(terms: list, text: str) -> None:
    entries = [Entry(str(n), lang, t, "de", "x") for n, (t, lang) in enumerate(terms)]
    report = EntryList(entries).check(text)
    assert [(s.applied, s.not_applied) for s in report.sentences] == reference(entries, text)


# -- display ---------------------------------------------------------------------------------


def test_text_and_html_show_applied_and_skipped_and_escape_everything() -> None:
    entries = [*ENTRIES, Entry("30", "en", "<b>bold</b>", "de", "\x1b[31mred\u202e")]
    report = EntryList(entries).check(FIVE + "\n<script>x</script> <b>bold</b> \x1b[2J.")
    text, html = str(report), report._repr_html_()
    assert "  [1] " + FIVE in text
    assert "\u2717 11: 取締役 \u2192 director (ja\u2192en)  not applied (limit 3)" in text
    assert "never applied in this text (2)" in text
    assert "\x1b" not in text and "\u202e" not in text and "\\x1b" in text
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<b>bold" not in html and '">&lt;b&gt;bold&lt;/b&gt;</mark>' in html
    assert "\x1b" not in html and "\u202e" not in html
    assert html.count("<mark") == 6
    assert 'title="entries 13"' in html and "line-through" in html


def test_a_long_text_stays_within_a_fixed_size() -> None:
    text = "見積書と納品書と契約書を取締役が請求書と一緒に送ります。\n" * 5000
    report = EntryList(ENTRIES).check(text)
    assert len(report.sentences) == 5000
    assert len(report._repr_html_().encode()) < 200_000
    from IPython.lib.pretty import pretty

    assert "\u2026 and 4980 more sentences with matches" in pretty(report)


def test_a_notebook_names_the_first_never_applied_entries_only() -> None:
    """Thousands of entries past the limit are counted in the notebook's text view, as the
    sentences are (``report.never_applied`` and ``str(report)`` keep them all)."""
    entries = [Entry(str(n), "en", f"w{n:04d}", "de", "x") for n in range(1, 3001)]
    text = " ".join(f"w{n:04d}" for n in range(1, 3001)) + "."
    report = EntryList(entries).check(text)
    assert len(report.never_applied) == 2997
    from IPython.lib.pretty import pretty

    shown = pretty(report)
    assert len(shown) < 20_000, len(shown)
    assert "\u2026 and 2977 more never applied" in shown
    assert "\u2026 and 2980 more entries" in shown
    assert str(report).count("w2999 \u2192 x") == 2  # the sentence's list and the summary


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
    assert report.sentences[0].applied == ["13", "14", "15"]
    assert report.sentences[0].not_applied == ["11", "3"]
    # an apostrophe and quotes stay as typed; options before the text
    report = run(ip, '%dict_check --to-lang de "Our" chiffre d\'affaires. 会議')
    assert [s.text for s in report.sentences] == ['"Our" chiffre d\'affaires.', "会議"]
    assert [s.applied for s in report.sentences] == [["21"], ["22"]]
    assert [(r.operation, r.http_status) for r in seeded.requests] == [("list", 200)]


def test_magic_takes_a_variable_and_a_cell(ip: Any, seeded: SandboxServer) -> None:
    ip.user_ns["sample"] = FIVE
    run(ip, "result = %dict_check {sample}")
    assert ip.user_ns["result"].sentences[0].not_applied == ["11", "3"]
    report = run(ip, "%%dict_check --from-lang ja\n" + FIVE + "\n- 会議\n")
    assert [s.applied for s in report.sentences] == [["13", "14", "15"], ["4", "22"]]


def test_magic_refuses_an_empty_text_before_any_request(ip: Any, seeded: SandboxServer) -> None:
    for cell in ("%dict_check", "%dict_check -p default", "%%dict_check\n  \n"):
        with capture_output():
            outcome = ip.run_cell(cell)
        assert type(outcome.error_in_exec).__name__ == "UsageError", cell
    assert seeded.requests == []


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
    assert set(data) >= {"sentences", "never_applied"}
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
    assert proc.stdout.startswith("1 of 1 sentence matches 5 entries (of 7 ja\u2192* checked")
    two = cli(seeded, "check", "-", "--from-lang", "ja", stdin=FIVE + "\n" + FIVE + "\nNone.\n")
    assert two.returncode == 0, two.stderr
    assert two.stdout.startswith("2 of 3 sentences match 5 entries (of 7 ja\u2192* checked")
    missing = cli(seeded, "check", str(tmp_path / "nope.txt"), "--json")
    assert missing.returncode == 2 and json.loads(missing.stdout)["exit"] == 2
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe\x00bad")
    assert cli(seeded, "check", str(binary)).returncode == 2
    assert cli(seeded, "check", "-", stdin="   \n").returncode == 2
    assert [r.operation for r in seeded.requests] == ["list", "list"]
