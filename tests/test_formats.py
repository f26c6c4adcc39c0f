"""Glossary files: every format round-trips exactly; hostile files are refused quickly."""

from __future__ import annotations

import re
import struct
import sys
import time
import zlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dict_magics.errors import UsageProblem
from dict_magics.formats import guard, read_glossary, unguard, write_glossary
from dict_magics.formats.xlsx import escape, unescape
from dict_magics.models import Entry

FORMATS = ("csv", "tsv", "xlsx", "tbx")
TRICKY = [
    "=SUM(A1:A9)",
    "+49 30",
    "-minus",
    "@mention",
    "\tstarts with a tab",
    "\rstarts with CR",
    "'quoted",
    "''twice",
    "'",
    "'=both",
    "a, b, c",
    'say "hi"',
    "line\nbreak",
    "crlf\r\ninside",
    "金曜日",
    "ça va \u2013 naïve Ωmega",
    " padded ",
    "_x0041_ literal",
    "ends with '",
]


def _entries(kind: str = "xlsx") -> list[Entry]:
    """Every tricky term; a .csv or .tsv cannot hold a line break (its export refuses it)."""
    entries = [
        Entry(str(i + 1), "ja" if i % 2 else "en", term, "de", TRICKY[-1 - i])
        for i, term in enumerate(TRICKY)
    ]
    if kind in ("csv", "tsv"):
        return [Entry(e.id, *(re.sub("[\r\n]+", " ", t) for t in e.terms)) for e in entries]
    return entries


def _as_rows(entries: list[Entry]) -> list[tuple[str | None, ...]]:
    return [(e.id, *e.terms) for e in entries]


@pytest.mark.parametrize("kind", FORMATS)
def test_each_format_round_trips_exactly(tmp_path: Path, kind: str) -> None:
    entries = _entries(kind)
    path = write_glossary(tmp_path / f"glossary.{kind}", entries)
    read = read_glossary(path)
    assert read.format == kind
    assert read.unreadable == []
    assert [(r.id, *r.terms) for r in read.rows] == _as_rows(entries)
    # Rows keep their numbers: the header is row 1 of a table, a TBX counts concepts from 1.
    first = 2 if kind != "tbx" else 1
    assert [r.row for r in read.rows] == list(range(first, first + len(entries)))


@pytest.mark.parametrize("kind", ("csv", "tsv"))
def test_delimited_files_have_a_bom_and_no_cell_is_a_formula(tmp_path: Path, kind: str) -> None:
    path = write_glossary(tmp_path / f"g.{kind}", _entries(kind))
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    import csv
    import io

    delimiter = "," if kind == "csv" else "\t"
    cells = [
        c
        for row in csv.reader(io.StringIO(data.decode("utf-8-sig")), delimiter=delimiter)
        for c in row
    ]
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert "'=SUM(A1:A9)" in cells and "''quoted" in cells


def test_xlsx_cells_are_text_never_formulas(tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    path = write_glossary(tmp_path / "g.xlsx", _entries())
    book = openpyxl.load_workbook(path)
    cells = [c for row in book.worksheets[0].iter_rows() for c in row]
    assert all(c.data_type == "s" for c in cells)
    assert not [c.value for c in cells if str(c.value)[:1] in "=+-@"]


@given(st.text(max_size=12))
def test_guard_then_unguard_is_identity(text: str) -> None:
    assert unguard(guard(text)) == text
    assert guard(text)[:1] not in ("=", "+", "-", "@", "\t", "\r")


@given(st.text(max_size=12))
def test_xlsx_escape_then_unescape_is_identity(text: str) -> None:
    assert unescape(escape(text)) == text


def test_a_hand_made_apostrophe_stays(tmp_path: Path) -> None:
    path = tmp_path / "hand.csv"
    path.write_text("fromLang,fromText,toLang,toText\nen,'hello,de,'=1\n", encoding="utf-8")
    (row,) = read_glossary(path).rows
    assert row.terms == ("en", "'hello", "de", "=1")


def test_source_target_columns_with_a_pair(tmp_path: Path) -> None:
    path = tmp_path / "two.csv"
    path.write_text("Source,Target,note\nFriday,Freitag,x\n\nMonday,Montag\n", encoding="utf-8")
    rows = read_glossary(path, pair="en:de").rows
    assert [(r.row, *r.terms) for r in rows] == [
        (2, "en", "Friday", "de", "Freitag"),
        (4, "en", "Monday", "de", "Montag"),
    ]
    with pytest.raises(UsageProblem, match="no languages") as no_pair:
        read_glossary(path)
    assert no_pair.value.option == "pair"


def test_column_problems_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(UsageProblem, match="first row must name the columns") as caught:
        read_glossary(path)
    assert "\n" not in str(caught.value)
    with pytest.raises(UsageProblem, match="en:de"):
        read_glossary(path, pair="en")
    with pytest.raises(UsageProblem, match="Chinese is zh-CN"):
        read_glossary(path, pair="zh:en")
    with pytest.raises(UsageProblem, match="cannot tell the format"):
        read_glossary(tmp_path / "g.txt")
    with pytest.raises(UsageProblem, match="no file at"):
        read_glossary(tmp_path / "missing.csv")
    latin = tmp_path / "latin.csv"
    latin.write_bytes("fromLang,fromText,toLang,toText\nen,caf\xe9,de,x\n".encode("latin-1"))
    with pytest.raises(UsageProblem, match="not UTF-8"):
        read_glossary(latin)


def test_tbx_v2_and_a_pair_are_read(tmp_path: Path) -> None:
    path = tmp_path / "old.tbx"
    path.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE martif SYSTEM "http://127.0.0.1:9/TBXcoreStructV02.dtd">\n'
        '<martif type="TBX-Basic" xml:lang="en"><text><body>'
        '<termEntry id="c1">'
        '<langSet xml:lang="en"><tig><term>Friday</term></tig></langSet>'
        '<langSet xml:lang="fr"><tig><term>vendredi</term></tig></langSet>'
        '<langSet xml:lang="de"><ntig><termGrp><term>Freitag</term></termGrp></ntig></langSet>'
        "</termEntry>"
        '<termEntry><langSet xml:lang="en"><tig><term>a</term></tig><tig><term>b</term></tig>'
        '</langSet><langSet xml:lang="de"><tig><term>c</term></tig></langSet></termEntry>'
        "</body></text></martif>",
        encoding="utf-8",
    )
    read = read_glossary(path, pair="en:de")
    assert [r.terms for r in read.rows] == [("en", "Friday", "de", "Freitag")]
    assert [(b.row, "2 terms in en" in b.reason) for b in read.unreadable] == [(2, True)]
    unpaired = read_glossary(path)
    assert [b.row for b in unpaired.unreadable] == [1, 2]
    assert "3 language sections" in unpaired.unreadable[0].reason


def test_tbx_entity_expansion_is_refused_quickly(tmp_path: Path) -> None:
    lol = "".join(f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10 if i else "lol"}">' for i in range(10))
    path = tmp_path / "laughs.tbx"
    path.write_text(
        f'<?xml version="1.0"?><!DOCTYPE tbx [{lol}]><tbx><text><body><conceptEntry>'
        '<langSec xml:lang="en"><termSec><term>&lol9;</term></termSec></langSec>'
        "</conceptEntry></body></text></tbx>",
        encoding="utf-8",
    )
    started = time.monotonic()
    with pytest.raises(UsageProblem, match="expands no entity") as caught:
        read_glossary(path)
    assert time.monotonic() - started < 5  # a generous bound: it must not expand 10**9 lols
    assert "\n" not in str(caught.value)


def test_tbx_external_entity_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "xxe.tbx"
    path.write_text(
        '<?xml version="1.0"?><!DOCTYPE tbx [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        "<tbx><text><body><conceptEntry><langSec xml:lang='en'><termSec><term>&x;</term>"
        "</termSec></langSec></conceptEntry></body></text></tbx>",
        encoding="utf-8",
    )
    with pytest.raises(UsageProblem, match="refused"):
        read_glossary(path)


def _zip_bomb(path: Path, members: int = 100, each: int = 100 * 2**20) -> None:
    """A zip of ``members`` parts, each ``each`` zero bytes deflated (~100 KiB apiece)."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = bytes(2**20)
    data = b"".join(squeeze.compress(block) for _ in range(each // 2**20)) + squeeze.flush()
    crc = 0
    for _ in range(each // 2**20):
        crc = zlib.crc32(block, crc)
    local, central = bytearray(), bytearray()
    for i in range(members):
        name = (f"xl/worksheets/sheet{i + 1}.xml").encode()
        offset = len(local)
        local += (
            struct.pack(
                "<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, len(data), each, len(name), 0
            )
            + name
            + data
        )
        central += (
            struct.pack(
                "<IHHHHHHIIIHHHHHII",
                0x02014B50,
                20,
                20,
                0,
                8,
                0,
                0,
                crc,
                len(data),
                each,
                len(name),
                0,
                0,
                0,
                0,
                0,
                offset,
            )
            + name
        )
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, members, members, len(central), len(local), 0)
    path.write_bytes(bytes(local + central + end))


def test_an_xlsx_bomb_is_refused_quickly(tmp_path: Path) -> None:
    path = tmp_path / "bomb.xlsx"
    _zip_bomb(path)
    assert 5 * 2**20 < path.stat().st_size < 20 * 2**20  # about 10 MB on disk, 10 GB inflated
    started = time.monotonic()
    with pytest.raises(UsageProblem, match="zip bomb") as caught:
        read_glossary(path)
    assert time.monotonic() - started < 5  # generous: it reads the directory only
    assert "\n" not in str(caught.value)


def test_too_large_a_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dict_magics.formats import base

    monkeypatch.setattr(base, "MAX_FILE_BYTES", 100)
    path = write_glossary(tmp_path / "g.csv", _entries("csv"))
    with pytest.raises(UsageProblem, match="at most"):
        read_glossary(path)


def test_too_many_rows_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dict_magics.formats import base

    monkeypatch.setattr(base, "MAX_ROWS", 5)
    path = write_glossary(tmp_path / "g.csv", _entries("csv"))
    with pytest.raises(UsageProblem, match="more than 5 rows"):
        read_glossary(path)


def test_xlsx_without_openpyxl_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "openpyxl", None)  # as if the extra were not installed
    with pytest.raises(UsageProblem, match=r"pip install 'dict-magics\[xlsx\]'") as caught:
        write_glossary(tmp_path / "g.xlsx", _entries())
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "g.xlsx").exists()


def test_a_character_xml_cannot_hold_stops_a_tbx_export(tmp_path: Path) -> None:
    with pytest.raises(UsageProblem, match=r"entry 1 \('bell\\x07': U\+0007.*export to \.xlsx"):
        write_glossary(tmp_path / "g.tbx", [Entry("1", "en", "bell\x07", "de", "x")])
    assert list(tmp_path.iterdir()) == []


def test_entrylist_to_csv_reads_back_exactly(tmp_path: Path) -> None:
    """``list --csv`` / ``EntryList.to_csv`` and the glossary reader agree on the guard."""
    from dict_magics.models import EntryList

    entries = _entries("csv")
    path = EntryList(entries).to_csv(tmp_path / "listed.csv")
    assert [(r.id, *r.terms) for r in read_glossary(path).rows] == _as_rows(entries)


@given(st.text(max_size=20))
def test_a_printable_term_holds_no_hidden_character(text: str) -> None:
    """``models.terms.hidden_characters`` skips its per-character scan for printable text:
    no character of a hidden category is printable, so the fast path changes nothing."""
    import unicodedata

    from dict_magics.models.terms import hidden_characters

    slow = [ch for ch in text if unicodedata.category(ch) in {"Cc", "Cf", "Zl", "Zp", "Co", "Cs"}]
    assert bool(hidden_characters(text)) == bool(slow)
