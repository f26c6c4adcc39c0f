"""Issue 34, items 1-5: a glossary file is read as its author meant, or refused whole, naming
where; an export reads back as exactly what was listed. Real files on disk, the real sync and
export operations against the sandbox over loopback."""

from __future__ import annotations

import io
import json
import re
import zipfile
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import point_at, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dict_magics.errors import UsageProblem
from dict_magics.formats import read_glossary, write_glossary
from dict_magics.frontends.commands import CLI
from dict_magics.models import Entry, SyncPlan
from dict_magics.operations.context import OperationSettings
from dict_magics.operations.export import export
from dict_magics.operations.sync import sync
from dict_magics.sandbox import SandboxServer

ONE = OperationSettings(workers=1)
HEADER = "fromLang,fromText,toLang,toText\n"
FRUIT = [
    Entry("1", "en", "apple", "de", "Apfel"),
    Entry("2", "en", "pear", "de", "Birne"),
    Entry("3", "en", "invoice", "de", "Rechnung"),
    Entry("4", "en", "meeting", "de", "Sitzung"),
    Entry("5", "en", "pear", "fr", "poire"),
    Entry("6", "en", "plum", "fr", "prune"),
]


@pytest.fixture
def fruit(monkeypatch: pytest.MonkeyPatch):
    with SandboxServer(FRUIT) as server:
        yield point_at(monkeypatch, server)


def _csv(tmp_path: Path, body: str, name: str = "g.csv") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + body, encoding="utf-8", newline="")
    return path


# -- item 1: a stray quote -----------------------------------------------------------------------


def test_a_stray_quote_is_refused_whole_and_nothing_is_deleted(
    fruit: SandboxServer, tmp_path: Path
) -> None:
    path = _csv(
        tmp_path,
        'en,apple,de,Apfel\nen,"pear,de,Birne\nen,invoice,de,Rechnung\nen,meeting,de,Sitzung\n',
    )
    with pytest.raises(UsageProblem, match=r"line 3.*never closed") as caught:
        read_glossary(path)
    assert "\n" not in str(caught.value)
    before = fruit.entries
    fruit.clear_log()
    for apply in (False, True):
        with pytest.raises(UsageProblem, match="line 3"):
            sync(ONE, path, apply=apply, delete_missing=True, skip_invalid=True, yes=True)
    assert fruit.entries == before and fruit.requests == []  # refused before any request


def test_a_quoted_cell_spanning_lines_is_refused_naming_both_lines(tmp_path: Path) -> None:
    path = _csv(tmp_path, 'en,apple,de,Apfel\nen,"pear\n\nstill pear",de,Birne\nen,x,de,y\n')
    with pytest.raises(UsageProblem) as caught:
        read_glossary(path)
    message = str(caught.value)
    assert "line 3" in message and "line 5" in message and "line break" in message
    crlf = _csv(tmp_path, 'en,"a\r\nb",de,c\r\n', "crlf.csv")
    with pytest.raises(UsageProblem, match=r"line 2.*line 3"):
        read_glossary(crlf)


def test_a_quote_that_closes_mid_cell_is_refused_naming_the_line(tmp_path: Path) -> None:
    path = _csv(tmp_path, 'en,apple,de,Apfel\nen,"pear"s,de,Birnen\n')
    with pytest.raises(UsageProblem, match="line 3"):
        read_glossary(path)
    # A quote inside a cell that does not start with one is just a character.
    kept = _csv(tmp_path, 'en,5" screen,de,5-Zoll-Bildschirm\n', "inch.csv")
    assert [r.from_text for r in read_glossary(kept)] == ['5" screen']


# -- item 2: invalid rows never turn into deletions -----------------------------------------------


def test_invalid_rows_never_turn_their_entries_into_deletions(
    fruit: SandboxServer, tmp_path: Path
) -> None:
    path = _csv(
        tmp_path,
        "en,apple,de,Apfel\n"
        "EN,pear,de,Birne\n"  # unreadable language: protects 'pear' in every pair
        "en,invoice,de-DE,Rechnung\n"
        "en,meeting,de,\n"  # empty target: protects 'meeting' en->de
        "en,plum,fr,prune\n",
    )
    plan = sync(ONE, path, delete_missing=True)
    assert [bad.row for bad in plan.invalid] == [3, 4, 5]
    assert plan.deletes == [] and plan.missing == []
    assert set(plan.pairs) == {("en", "de"), ("en", "fr")}
    fruit.clear_log()
    done = sync(ONE, path, apply=True, delete_missing=True, skip_invalid=True, yes=True)
    assert done.ok and {r.method for r in fruit.requests} == {"GET"}
    assert fruit.entries == {e.id: e for e in FRUIT}


def test_a_tbx_concept_with_three_languages_deletes_none_of_its_terms(
    fruit: SandboxServer, tmp_path: Path
) -> None:
    path = tmp_path / "three.tbx"
    path.write_text(
        '<?xml version="1.0"?><tbx type="TBX-Basic"><text><body>'
        '<conceptEntry><langSec xml:lang="en"><termSec><term>apple</term></termSec></langSec>'
        '<langSec xml:lang="de"><termSec><term>Apfel</term></termSec></langSec></conceptEntry>'
        '<conceptEntry><langSec xml:lang="en"><termSec><term>pear</term></termSec></langSec>'
        '<langSec xml:lang="de"><termSec><term>Birne</term></termSec></langSec>'
        '<langSec xml:lang="fr"><termSec><term>poire</term></termSec></langSec></conceptEntry>'
        "</body></text></tbx>",
        encoding="utf-8",
    )
    plan = sync(ONE, path, delete_missing=True)
    assert [bad.row for bad in plan.invalid] == [2]
    assert sorted(e.from_text for e in plan.deletes) == ["invoice", "meeting"]  # never pear


# -- item 3: xlsx read whole, from the sheet the author sees ------------------------------------


def _workbook(path: Path, sheets: list[tuple[str, list[list[str]], str]], active: int) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.remove(book.active)
    for title, rows, state in sheets:
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
        sheet.sheet_state = state
    book.active = active
    book.save(path)


def _rewrite(path: Path, part: str, pattern: bytes, replacement: bytes) -> None:
    """Rewrite the parts of an .xlsx whose names start with ``part``, as another tool might
    have written them."""
    with zipfile.ZipFile(path) as archive:
        parts = [(item, archive.read(item)) for item in archive.infolist()]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for item, data in parts:
            if item.filename.startswith(part):
                data, n = re.subn(pattern, replacement, data)
                assert n == 1
            archive.writestr(item, data)
    path.write_bytes(out.getvalue())


TERMS = [
    ["fromLang", "fromText", "toLang", "toText"],
    ["en", "apple", "de", "Apfel"],
    ["en", "pear", "de", "Birne"],
    ["en", "invoice", "de", "Rechnung"],
    ["en", "meeting", "de", "Sitzung"],
]


def test_an_xlsx_is_read_past_a_dimension_tag_that_says_less(
    fruit: SandboxServer, tmp_path: Path
) -> None:
    path = tmp_path / "short.xlsx"
    _workbook(path, [("Terms", TERMS, "visible")], 0)
    _rewrite(path, "xl/worksheets/", rb'<dimension ref="[^"]*"\s*/>', b'<dimension ref="A1:D2"/>')
    read = read_glossary(path)
    assert [(r.row, r.from_text) for r in read] == [
        (2, "apple"),
        (3, "pear"),
        (4, "invoice"),
        (5, "meeting"),
    ]
    assert read.sheet == "Terms"
    assert sync(ONE, path, delete_missing=True).deletes == []


def test_a_hidden_sheet_is_never_read_in_place_of_the_active_one(
    fruit: SandboxServer, tmp_path: Path
) -> None:
    path = tmp_path / "hidden.xlsx"
    old = [TERMS[0], ["en", "apple", "de", "OLD"]]
    _workbook(path, [("Old", old, "hidden"), ("Terms", TERMS, "visible")], 1)
    read = read_glossary(path)
    assert (read.sheet, next(r.to_text for r in read)) == ("Terms", "Apfel")
    plan = sync(ONE, path)
    assert plan.sheet == "Terms" and "sheet 'Terms'" in str(plan)
    assert plan.updates == [] and plan.other_sheets == []  # the hidden one is not mentioned
    # Named, a hidden sheet is read: the user asked for it in words.
    assert [r.to_text for r in read_glossary(path, sheet="Old")] == ["OLD"]


def test_several_visible_sheets_say_which_was_read_and_how_to_pick_another(
    ip, fruit: SandboxServer, tmp_path: Path
) -> None:
    path = tmp_path / "two.xlsx"
    notes = [TERMS[0], ["en", "plum", "fr", "prune"]]
    _workbook(path, [("Notes", notes, "visible"), ("Terms", TERMS, "visible")], 1)
    plan = sync(ONE, path)
    assert (plan.sheet, plan.other_sheets) == ("Terms", ["Notes"])
    assert "sheet 'Terms'" in str(plan) and "not 'Notes'" in str(plan)
    assert "--sheet NAME" in str(replace(plan, names=CLI.names))
    picked = sync(ONE, path, sheet="Notes")
    assert picked.sheet == "Notes" and picked.unchanged == 1
    assert ip.run_line_magic("dict_sync", f"{path} --sheet Notes").sheet == "Notes"
    done = run_cli(fruit, "sync", str(path), "--sheet", "Notes", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["sheet"] == "Notes"
    with pytest.raises(UsageProblem, match=r"no sheet 'Nope'.*'Notes', 'Terms'"):
        read_glossary(path, sheet="Nope")
    with pytest.raises(UsageProblem, match=r"only an \.xlsx"):
        read_glossary(_csv(tmp_path, "en,a,de,b\n"), sheet="Terms")


def test_an_active_sheet_that_is_hidden_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "odd.xlsx"
    _workbook(path, [("Terms", TERMS, "visible"), ("Secret", TERMS, "hidden")], 0)
    # Excel never saves a hidden sheet as the one it opens at; another tool might.
    _rewrite(path, "xl/workbook.xml", rb'activeTab="0"', b'activeTab="1"')
    with pytest.raises(UsageProblem, match=r"'Secret'.*hidden") as caught:
        read_glossary(path)
    assert caught.value.option == "sheet" and "--sheet NAME" in CLI.message(caught.value)
    assert len(read_glossary(path, sheet="Terms")) == 4


# -- item 4: export names what it cannot write, and reads back exactly ----------------------------

FORMATS = ("csv", "tsv", "xlsx", "tbx")


@pytest.mark.parametrize("kind", FORMATS)
def test_export_refuses_a_lone_surrogate_naming_the_entry(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, kind: str
) -> None:
    hostile = [
        *FRUIT,
        Entry("7", "en", "bad\ud800", "de", "x"),
        Entry("8", "en", "y", "de", "\udfff"),
    ]
    with SandboxServer(hostile) as server:
        point_at(monkeypatch, server)
        path = tmp_path / f"out.{kind}"
        with pytest.raises(UsageProblem) as caught:
            export(ONE, path)
    message = str(caught.value)
    assert "entry 7 ('bad\\ud800'" in message and "entry 8 ('\\udfff'" in message
    assert "nothing was written" in message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ("csv", "tsv"))
def test_a_line_break_in_a_term_stops_a_csv_export_naming_the_entry(
    tmp_path: Path, kind: str
) -> None:
    with pytest.raises(UsageProblem, match=r"entry 3 \('two\\nlines'.*\.xlsx or \.tbx"):
        write_glossary(
            tmp_path / f"g.{kind}", [*FRUIT[:2], Entry("3", "en", "two\nlines", "de", "x")]
        )
    assert list(tmp_path.iterdir()) == []
    # The same entry goes to an .xlsx or a .tbx and reads back exactly.
    for other in ("xlsx", "tbx"):
        path = write_glossary(
            tmp_path / f"g.{other}", [Entry("3", "en", "two\r\nlines\r", "de", "x")]
        )
        assert [r.from_text for r in read_glossary(path)] == ["two\r\nlines\r"]


HOSTILE = [
    "\u200b",
    "\ufeff",
    "\u202e",
    "\u2028",
    "\u0085",
    "\x00",
    "\x07",
    "\x1b",
    "\t",
    "\r",
    "\n",
    "\x7f",
    "\ufffe",
    "\uffff",
    "\u00a0",
    "\u3000",
    " ",
    '"',
    "'",
    ",",
    ";",
    "=",
    "+",
    "-",
    "@",
    "<",
    "&",
    "]]>",
    "_x0041_",
    "_x",
    "\U0001f600",
    "\u0301",
    "\ud800",
]
TERM = st.lists(st.sampled_from(HOSTILE) | st.characters(), max_size=8).map("".join)
LANG = st.sampled_from(["en", "de", "ja", "zh-CN", "EN", "de-DE", ""])
ENTRIES = st.lists(st.tuples(LANG, TERM, LANG, TERM), min_size=1, max_size=6)


@contextmanager
def _sandbox(entries: list[Entry]):
    """A sandbox holding ``entries``, the environment pointing at it (one per example)."""
    with SandboxServer(entries) as server, pytest.MonkeyPatch.context() as env:
        for name, value in server.env().items():
            env.setenv(name, value)
        yield server


def _cannot(kind: str, text: str) -> bool:
    """What ``kind`` cannot hold (export refuses it, naming the entry)."""
    if re.search("[\ud800-\udfff]", text):
        return True
    if kind in ("csv", "tsv"):
        return "\r" in text or "\n" in text
    if kind == "tbx":
        return re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]", text) is not None
    return False


@pytest.mark.parametrize("kind", FORMATS)
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=ENTRIES)
def test_export_then_sync_of_hostile_terms_plans_no_change(
    tmp_path: Path, kind: str, rows: list[tuple[str, str, str, str]]
) -> None:
    entries = [Entry(str(n + 1), *terms) for n, terms in enumerate(rows)]
    path = tmp_path / f"hostile.{kind}"
    path.unlink(missing_ok=True)
    refused = [e for e in entries if any(_cannot(kind, t) for t in e.terms)]
    with _sandbox(entries) as server:
        if refused:
            with pytest.raises(UsageProblem) as caught:
                export(ONE, path)
            named = re.findall(r"entry (\d+) \(", str(caught.value))
            assert named == [e.id for e in refused][: len(named)] and named
            assert not path.exists()
            return
        assert export(ONE, path).count == len(entries)
        server.clear_log()
        plan = sync(ONE, path, delete_missing=True)
    assert isinstance(plan, SyncPlan)
    assert (plan.adds, plan.updates, plan.deletes, plan.invalid, plan.missing) == (
        [],
        [],
        [],
        [],
        [],
    )
    assert plan.empty and plan.ok and plan.warnings == []
    assert [r.method for r in server.requests] == ["GET"]


# -- item 5: semicolons, duplicated columns, blank lines, stray spaces ----------------------------


def test_a_semicolon_csv_is_read(tmp_path: Path) -> None:
    path = tmp_path / "excel-de.csv"
    path.write_bytes(
        '\ufefffromLang;fromText;toLang;toText\r\nen;apple, red;de;"Apfel; rot"\r\n'.encode()
    )
    (row,) = read_glossary(path)
    assert row.terms == ("en", "apple, red", "de", "Apfel; rot")
    tsv_in_csv = tmp_path / "tabs.csv"
    tsv_in_csv.write_text("id\tfromLang\tfromText\ttoLang\ttoText\n7\ten\ta;b\tde\tc,d\n")
    assert [(r.id, r.from_text, r.to_text) for r in read_glossary(tsv_in_csv)] == [
        ("7", "a;b", "c,d")
    ]


def test_a_duplicated_column_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "twice.csv"
    path.write_text("fromLang,fromText,toLang,toText,ToText\nen,a,de,b,c\n", encoding="utf-8")
    with pytest.raises(UsageProblem, match=r"'ToText'.*columns 4 and 5"):
        read_glossary(path)
    path.write_text("source,target,Source\na,b,c\n", encoding="utf-8")
    with pytest.raises(UsageProblem, match="'Source'"):
        read_glossary(path, pair="en:de")


def test_blank_lines_do_not_count_toward_the_row_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dict_magics.formats import base

    monkeypatch.setattr(base, "MAX_ROWS", 3)
    path = _csv(tmp_path, "en,a,de,b\n\nen,c,de,d\nen,e,de,f\n" + "\n" * 50 + ",,,\n" * 5)
    assert len(read_glossary(path)) == 3
    path = _csv(tmp_path, "en,a,de,b\nen,c,de,d\nen,e,de,f\nen,g,de,h\n")
    with pytest.raises(UsageProblem, match="more than 3 rows"):
        read_glossary(path)


def test_a_plan_warns_of_stray_spaces_as_lint_does(fruit: SandboxServer, tmp_path: Path) -> None:
    from dict_magics.models import EntryList

    path = _csv(tmp_path, "en, kiwi ,de,Kiwi\nen,apple,de,Apfel  rot\nen,fig,de,Feige\n")
    plan = sync(ONE, path)
    assert len(plan.adds) == 2 and len(plan.updates) == 1
    lint = EntryList([Entry("0", *a.terms) for a in plan.adds] + [plan.updates[0].new]).lint()
    words = [f.message for f in lint.findings if f.kind == "whitespace"]
    assert len(words) == 2 and len(plan.warnings) == 2
    assert all(w in shown for w, shown in zip(words, plan.warnings, strict=True))
    assert "row 2" in plan.warnings[0] and "row 3" in plan.warnings[1]
    assert "leading and trailing spaces" in str(plan) and "doubled" in str(plan)
