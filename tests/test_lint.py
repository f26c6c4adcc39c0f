"""``%dict_lint`` / ``dict-magics lint`` / ``EntryList.lint()`` against a dictionary seeded with
one example of every kind of problem (and clean entries around them).

The sandbox is seeded directly (the service would refuse a 256-character term or ``zh`` over its
API, but a dictionary filled before the rules were enforced, or through another tool, holds
them): every kind is found, on exactly the entries that hold it, and nothing else is flagged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from conftest import point_at
from hypothesis import given, settings
from hypothesis import strategies as st
from IPython.utils.capture import capture_output

from dict_magics.models import Entry, EntryList, LintReport
from dict_magics.models.lint import KINDS, id_order, normalize_term
from dict_magics.sandbox import SandboxServer

LONG = "terms and conditions of delivery " * 7 + "x" * 25  # 256 characters
assert len(LONG) == 256

SEED = [
    Entry("1", "en", "invoice", "de", "Rechnung"),
    Entry("2", "en", "\uff49\uff4e\uff56\uff4f\uff49\uff43\uff45", "de", "Rechnung"),  # full width
    Entry("3", "ja", "請求書 ", "en", "invoice"),  # a trailing space
    Entry("4", "ja", "会議", "en", "meeting"),
    Entry("5", "ja", "会議", "en", "conference"),  # two targets for one source
    Entry("6", "en", LONG, "de", "Lieferbedingungen"),
    Entry("7", "zh", "人工智能", "en", "artificial intelligence"),
    Entry("8", "en", "tab\there", "de", "Tabulator"),
    Entry("9", "ja", "金曜日", "en", "FRI"),
    Entry("10", "ja", "金曜日", "en", "FRI"),  # 9 and 10: "10" sorts first as text
    Entry("11", "ja", "取締役", "en", "director"),
    Entry("12", "ja", "代表取締役", "en", "CEO"),
    # clean entries: nothing may be said about them
    Entry("13", "ja", "見積書", "en", "quotation"),
    Entry("14", "ja", "納品書", "en", "delivery note"),
    Entry("15", "ja", "契約書", "en", "contract"),
    Entry("16", "zh-CN", "机器翻译", "en", "machine translation"),
    Entry("17", "zh-TW", "機器翻譯", "en", "machine translation"),
    Entry("18", "de", "Straße", "en", "street"),
    Entry("19", "en", "invoice", "fr", "facture"),  # the same source in another pair
    Entry("20", "en", "Invoicing", "de", "Rechnungsstellung"),  # like "invoice", not holding it
]
EXPECTED = {
    ("duplicate", ("9", "10")),
    ("conflict", ("4", "5")),
    ("near-duplicate", ("1", "2")),
    ("too-long", ("6",)),
    ("bad-language", ("7",)),
    ("whitespace", ("3",)),
    ("control", ("8",)),
    ("overlap", ("11", "12")),
}


def found(report: LintReport) -> set[tuple[str, tuple[str, ...]]]:
    return {(f.kind, f.entry_ids) for f in report.findings}


@pytest.fixture
def seeded(monkeypatch: pytest.MonkeyPatch) -> Any:
    with SandboxServer(SEED) as server:
        yield point_at(monkeypatch, server)


def run(ip: Any, cell: str) -> Any:
    with capture_output() as cap:
        outcome = ip.run_cell(cell)
    assert outcome.error_in_exec is None, (cell, outcome.error_in_exec, cap.stderr)
    return outcome.result, cap.stdout


# -- the analysis, offline ---------------------------------------------------------------------


def test_every_kind_is_found_on_its_entries_and_nothing_else() -> None:
    report = EntryList(SEED, "example.com").lint()
    assert found(report) == EXPECTED
    assert [f.kind for f in report.findings] == list(KINDS)  # one each, in the report's order
    assert report.counts == dict.fromkeys(KINDS, 1)
    assert report.total == len(SEED)
    assert not report.ok
    assert set(report.ids()) == {i for _, ids in EXPECTED for i in ids}


def test_duplicate_ids_keep_the_numerically_lowest_id() -> None:
    copies = [Entry(i, "ja", "会議", "en", "meeting") for i in ("100", "21", "x1", "23")]
    report = EntryList([*SEED, *copies]).lint()
    assert report.duplicate_ids == ["10", "21", "23", "100", "x1"]
    groups = [f.entry_ids for f in report.by_kind()["duplicate"]]
    assert groups == [("4", "21", "23", "100", "x1"), ("9", "10")]
    assert sorted(["10", "9", "x", "100"], key=id_order) == ["9", "10", "100", "x"]
    # a listing that repeats an id (it should not) never offers the kept one for deletion
    repeated = EntryList([Entry("5", "en", "a", "de", "b"), Entry("5", "en", "a", "de", "b")])
    assert repeated.lint().duplicate_ids == []


def test_each_finding_has_a_message_and_a_fix_naming_what_to_do() -> None:
    by_kind = EntryList(SEED).lint().by_kind()
    assert list(by_kind) == list(KINDS)
    assert "keep 9 (the oldest) and delete 10" == by_kind["duplicate"][0].fix
    assert "'meeting' (4), 'conference' (5)" in by_kind["conflict"][0].message
    assert "change fromText to '請求書'" == by_kind["whitespace"][0].fix
    assert "256 characters" in by_kind["too-long"][0].message
    assert "zh-CN or zh-TW" in by_kind["bad-language"][0].fix
    assert "U+0009" in by_kind["control"][0].message
    assert "change fromText to 'tab here'" == by_kind["control"][0].fix
    assert "'代表取締役'" in by_kind["overlap"][0].message
    for finding in EntryList(SEED).lint():
        assert finding.message and finding.fix


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("\uff49\uff4e\uff56\uff4f\uff49\uff43\uff45", "invoice"),  # full-width Latin
        ("\uff76\uff72\uff77\uff9e", "カイギ"),  # half-width katakana (with a voiced mark)
        ("Invoice", "invoice"),
        ("delivery\u3000note", "delivery note"),  # ideographic space
        ("  delivery   note ", "delivery note"),
        ("請\u200b求書", "請求書"),  # a zero-width space
        ("STRASSE", "straße"),  # full case folding
    ],
)
def test_near_duplicates_fold_width_case_and_spaces(a: str, b: str) -> None:
    assert normalize_term(a) == normalize_term(b)
    report = EntryList([Entry("1", "ja", a, "en", "t"), Entry("2", "ja", b, "en", "t")]).lint()
    assert ("near-duplicate", ("1", "2")) in found(report)


def test_different_terms_are_not_near_duplicates() -> None:
    pairs = [("請求書", "請求"), ("invoice", "invoices"), ("会議", "会議室"), ("ア", "あ")]
    for a, b in pairs:
        assert normalize_term(a) != normalize_term(b)
    other_pair = [Entry("1", "en", "invoice", "de", "x"), Entry("2", "en", "Invoice", "fr", "x")]
    assert EntryList(other_pair).lint().ok


def test_whitespace_kinds_and_their_fixes() -> None:
    entries = [
        Entry("1", "en", " lead", "de", "a"),
        Entry("2", "en", "double  space", "de", "b"),
        Entry("3", "en", "ok", "de", "trail\u3000"),
        Entry("4", "en", "   ", "de", "c"),
    ]
    report = EntryList(entries).lint()
    messages = {f.entry_ids[0]: f for f in report.by_kind()["whitespace"]}
    assert "leading" in messages["1"].message and messages["1"].fix.endswith("'lead'")
    assert "doubled" in messages["2"].message and messages["2"].fix.endswith("'double space'")
    assert "trailing" in messages["3"].message and "toText" in messages["3"].fix
    assert "empty" in messages["4"].message


def test_overlap_is_per_pair_and_skips_spelling_variants() -> None:
    entries = [
        Entry("1", "en", "order", "de", "Auftrag"),
        Entry("2", "en", "purchase order", "de", "Bestellung"),
        Entry("3", "en", "order confirmation", "de", "Auftragsbestätigung"),
        Entry("4", "en", "purchase order", "fr", "bon de commande"),  # another pair
        Entry("5", "en", "order ", "de", "Auftrag"),  # a spelling variant of 1
    ]
    report = EntryList(entries).lint()
    overlaps = report.by_kind()["overlap"]
    # "order" is not reported inside its variant "order ", nor the other way round; but the
    # variant really is inside "order confirmation".
    assert [(f.entry_ids, "2 other source terms" in f.message) for f in overlaps] == [
        (("1", "2", "3"), True),
        (("5", "3"), False),
    ]
    assert ("near-duplicate", ("1", "5")) in found(report)


def test_a_chain_of_nested_terms_gives_one_finding_per_inner_term_naming_ten_holders() -> None:
    """Issue 34, item 13: 40 nested terms are 780 pairs; each finding names ten holders by id
    and counts them all, so the report grows with the terms, not with the pairs."""
    chain = [Entry(str(n), "en", "x" * n, "de", "y") for n in range(1, 41)]
    report = EntryList(chain).lint()
    overlaps = report.by_kind()["overlap"]
    assert [f.entry_ids[0] for f in overlaps] == [str(n) for n in range(1, 40)]
    first = overlaps[0]
    assert first.entry_ids == tuple(str(n) for n in range(1, 12))  # itself and ten holders
    assert "occurs inside 39 other source terms: 'xx', 'xxx', 'xxxx' and 36 more" in first.message
    assert overlaps[-2].entry_ids == ("38", "39", "40")
    assert "inside 2 other source terms" in overlaps[-2].message
    assert sum(len(f.entry_ids) for f in overlaps) < 11 * 40


def test_an_empty_or_clean_dictionary_has_no_findings() -> None:
    assert EntryList([]).lint().ok
    clean = EntryList([e for e in SEED if int(e.id) >= 13]).lint()
    assert clean.ok and clean.findings == [] and clean.duplicate_ids == []
    assert str(clean).startswith("\u2713 no problems found in 8 entries")


def test_to_pandas_has_one_row_per_finding() -> None:
    frame = EntryList(SEED).lint().to_pandas()
    assert list(frame.columns) == ["kind", "entry_ids", "message", "fix"]
    assert list(frame["kind"]) == list(KINDS)
    assert frame.explode("entry_ids")["entry_ids"].tolist()[:2] == ["9", "10"]


def test_to_pandas_without_pandas_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if it were not installed
    with pytest.raises(ImportError, match=r"needs pandas.*pip install pandas"):
        EntryList(SEED).lint().to_pandas()


# -- display -------------------------------------------------------------------------------


def test_text_and_html_neutralise_what_came_from_the_service() -> None:
    hostile = [
        Entry("1", "en", "<script>alert(1)</script>", "de", "x"),
        Entry("2", "en", "<script>alert(1)</script>", "de", "x"),
        Entry("3", "en", "red\x1b[31m", "de", "\u202eevil"),
    ]
    report = EntryList(hostile).lint()
    text, html = str(report), report._repr_html_()
    assert "\x1b" not in text and "\u202e" not in text
    assert "\\x1b" in text
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "\x1b" not in html and "\u202e" not in html


def test_a_notebook_shows_the_first_findings_of_each_kind_only() -> None:
    entries = [Entry(str(n), "en", f"term {n} ", "de", "x") for n in range(1, 31)]
    report = EntryList(entries).lint()
    with capture_output():
        from IPython.lib.pretty import pretty

        shown = pretty(report)
    assert "\n    … and 20 more" in shown and shown.count("fix:") == 10
    assert str(report).count("fix:") == 30
    assert len(report._repr_html_()) < 200_000


def test_a_conflict_or_spelling_group_of_many_entries_keeps_its_message_short() -> None:
    """One source with 1,500 targets (or 1,500 spellings) is one finding whose message names
    a few and counts the rest: a notebook must not print megabytes for one line."""
    conflict = [Entry(str(n), "en", "a", "de", f"t{n}") for n in range(1, 1501)]
    spellings = [Entry(str(n), "en", "a" + " " * n, "de", "x") for n in range(1, 1501)]
    for entries, kind in ((conflict, "conflict"), (spellings, "near-duplicate")):
        report = EntryList(entries).lint()
        (finding,) = report.by_kind()[kind]
        assert len(finding.entry_ids) == 1500
        assert len(finding.message) < 1000, (kind, len(finding.message))
        assert "1497 more" in finding.message
        with capture_output():
            from IPython.lib.pretty import pretty

            assert len(pretty(report)) < 20_000


# -- magics, end to end against the sandbox ------------------------------------------------


def test_magic_finds_every_kind_with_one_listing(ip: Any, seeded: SandboxServer) -> None:
    run(ip, "report = %dict_lint")
    report = ip.user_ns["report"]
    assert isinstance(report, LintReport)
    assert found(report) == EXPECTED
    assert [(r.operation, r.http_status) for r in seeded.requests] == [("list", 200)]
    # the duplicates feed a dry run: it names them, and changes nothing
    dry, _ = run(ip, "%dict_delete --dry-run {report.duplicate_ids}")
    assert [e.id for e in dry.entries] == ["10"] and dry.missing == []
    assert len(seeded.entries) == len(SEED)
    assert {r.operation for r in seeded.requests} == {"list"}


def test_magic_json_prints_the_contract_shape(ip: Any, seeded: SandboxServer) -> None:
    result, out = run(ip, "%dict_lint --json")
    assert result is None
    data = json.loads(out)
    assert_lint_shape(data)


def test_magic_on_a_service_without_listing_is_one_line(ip: Any, monkeypatch: Any) -> None:
    with SandboxServer(5, listing=False) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        with capture_output():
            outcome = ip.run_cell("%dict_lint")
    assert type(outcome.error_in_exec).__name__ == "UsageError"


def assert_lint_shape(data: dict) -> None:
    assert set(data) >= {"findings", "counts"}
    assert data["counts"] == dict.fromkeys(KINDS, 1)
    assert data["duplicate_ids"] == ["10"] and data["total"] == len(SEED)
    for finding in data["findings"]:
        assert set(finding) == {"kind", "entry_ids", "message", "fix"}
        assert all(isinstance(i, str) for i in finding["entry_ids"])
    assert {(f["kind"], tuple(f["entry_ids"])) for f in data["findings"]} == EXPECTED


# -- the command line ----------------------------------------------------------------------


def cli(server: SandboxServer, *args: str, credentials: bool = True) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DICT_MAGICS_")}
    env["DICT_MAGICS_HOME"] = os.environ["DICT_MAGICS_HOME"]
    env["PYTHONIOENCODING"] = "utf-8"
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
    if credentials:
        env.update(server.env())
    proc = subprocess.run(
        [sys.executable, "-m", "dict_magics", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert server.secret_key not in proc.stdout + proc.stderr
    return proc


def test_cli_lint_json_shape_and_exit_code(seeded: SandboxServer) -> None:
    proc = cli(seeded, "lint", "--json")
    assert proc.returncode == 0, proc.stderr
    assert_lint_shape(json.loads(proc.stdout))


def test_cli_lint_text_lists_every_kind(seeded: SandboxServer) -> None:
    proc = cli(seeded, "lint")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("\u2717 8 findings in 20 entries at 127.0.0.1:")
    for kind in KINDS:
        assert f"\n  {kind} (1)\n" in proc.stdout
    assert "tab\\there" in proc.stdout  # the tab shown as an escape


def test_cli_lint_errors_keep_the_exit_codes(seeded: SandboxServer) -> None:
    missing = cli(seeded, "lint", "--json", credentials=False)
    assert missing.returncode == 2
    assert json.loads(missing.stdout)["exit"] == 2
    with SandboxServer(3, listing=False) as bare:
        unsupported = cli(bare, "lint")
    assert unsupported.returncode == 1 and unsupported.stderr.startswith("dict-magics: error:")


# -- layers ----------------------------------------------------------------------------------


def test_lint_and_check_run_offline_importing_nothing_above_models() -> None:
    code = (
        "import sys\n"
        "from dict_magics.models import Entry, EntryList\n"
        "listing = EntryList([Entry(i, 'ja', '会議', 'en', 'meeting') for i in '12'])\n"
        "assert listing.lint().duplicate_ids == ['2']\n"
        "assert listing.check('会議です。').segments[0].applied == ['1']\n"
        "print(sorted(m for m in sys.modules if m.startswith('dict_magics.')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = json.loads(out.stdout.replace("'", '"'))
    assert all(m.split(".")[1] in {"models", "errors", "settings"} for m in loaded), loaded


# -- the fast path against the plain rules -----------------------------------------------------

TEXTS = st.text(alphabet="aA\uff42b \u3000", min_size=1, max_size=4)  # full-width b, U+3000


def plain_groups(entries: list[Entry]) -> set[tuple[str, frozenset[str]]]:
    """Duplicates, conflicts and near-duplicates the plain way: every pair compared."""
    found = set()
    for a in entries:
        same = [b for b in entries if (b.from_lang, b.to_lang) == (a.from_lang, a.to_lang)]
        source = [b for b in same if b.from_text == a.from_text]
        twins = frozenset(b.id for b in source if b.to_text == a.to_text)
        if len(twins) > 1:
            found.add(("duplicate", twins))
        if len({b.to_text for b in source}) > 1:
            found.add(("conflict", frozenset(b.id for b in source)))
        near = [b for b in same if normalize_term(b.from_text) == normalize_term(a.from_text)]
        if normalize_term(a.from_text) and len({b.from_text for b in near}) > 1:
            found.add(("near-duplicate", frozenset(b.id for b in near)))
    return found


def plain_overlaps(entries: list[Entry]) -> set[tuple[str, str]]:
    return {
        (a.from_text, b.from_text)
        for a in entries
        for b in entries
        if (a.from_lang, a.to_lang) == (b.from_lang, b.to_lang)
        and a.from_text != b.from_text
        and a.from_text in b.from_text
        and normalize_term(a.from_text) != normalize_term(b.from_text)
    }


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(TEXTS, st.sampled_from(["x", "y"]), st.sampled_from(["en", "ja"])),
        max_size=14,
    )
)
def test_the_fast_path_finds_what_comparing_every_pair_finds(rows: list) -> None:
    entries = [
        Entry(str(n), lang, text, "de", target) for n, (text, target, lang) in enumerate(rows)
    ]
    report = EntryList(entries).lint()
    groups = {
        (f.kind, frozenset(f.entry_ids))
        for f in report.findings
        if f.kind in ("duplicate", "conflict", "near-duplicate")
    }
    assert groups == plain_groups(entries)
    by_id = {e.id: e for e in entries}
    plain = {  # (language, inner): its holders
        (lang, inner): {o for i, o in pairs if i == inner}
        for lang in ("en", "ja")
        for pairs in [plain_overlaps([e for e in entries if e.from_lang == lang])]
        for inner, _ in pairs
    }
    reported = {}
    for finding in report.by_kind().get("overlap", []):
        first = by_id[finding.entry_ids[0]]
        holders = plain[(first.from_lang, first.from_text)]
        named = {by_id[i].from_text for i in finding.entry_ids} - {first.from_text}
        assert f"inside {len(holders)} other" in finding.message
        assert named <= holders and len(named) == min(len(holders), 10)
        reported[(first.from_lang, first.from_text)] = holders
    assert reported == plain
