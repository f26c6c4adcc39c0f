"""Records render themselves, one way for every front end: outcomes look different, and
outside text is escaped."""

from __future__ import annotations

import unicodedata
from dataclasses import replace

import pytest

from dict_magics.models import BatchResult, Cause, DeleteResult, Entry, EntryList

OK = DeleteResult("success", "42", http_status=200, attempts=1, elapsed=0.01)
FAILED = DeleteResult(
    "failure", "<b>x</b>", http_status=404, reason="said <script>1</script>", cause=Cause.REFUSED
)
UNKNOWN = DeleteResult(
    "failure", "9", reason="no answer", outcome_unknown=True, attempts=2, cause=Cause.TIMEOUT
)
OK2 = DeleteResult("success", "43", http_status=200)
PURGE = DeleteResult("success", None, http_status=200)


def test_three_outcomes_are_distinct_in_text_and_html() -> None:
    assert [r.outcome for r in (OK, FAILED, UNKNOWN)] == ["success", "failure", "unknown"]
    texts = [str(r) for r in (OK, FAILED, UNKNOWN)]
    assert texts[0].startswith("\u2713 deleted entry '42'")
    assert texts[1].startswith("\u2717 entry '<b>x</b>' not deleted \u2014 said")
    assert texts[2].startswith("? outcome unknown for entry '9'")
    htmls = [r._repr_html_() for r in (OK, FAILED, UNKNOWN)]
    for html, kind in zip(htmls, ["success", "failure", "unknown"], strict=True):
        assert f"dict-magics-{kind}" in html
    assert len({h.split('style="color:')[1][:7] for h in htmls}) == 3


def test_html_escapes_ids_and_reasons() -> None:
    html = FAILED._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html


def test_purge_reads_as_every_entry() -> None:
    assert "deleted every entry" in str(PURGE)


def test_batch_summary_then_failures_grouped_by_cause() -> None:
    batch = BatchResult([OK, FAILED, UNKNOWN, OK2])
    lines = str(batch).splitlines()
    assert lines[0] == "\u2717 deleted 2 of 4 entries; 2 not deleted (1 with unknown outcome)"
    assert lines[1:] == [
        f"  \u2713 {OK.target}",  # what was deleted is named (issue 22, item 16)
        f"  \u2713 {OK2.target}",
        "  \u2717 1 not deleted: refused by the service",
        f"    {FAILED}",
        "  ? 1 outcome unknown: no answer in time",
        f"    {UNKNOWN}",
    ]
    html = batch._repr_html_()
    assert html.count("<li") == 6 and "<script>" not in html  # 2 deleted, 2 groups of 1
    assert html.count("<ul") == 3 and "&lt;script&gt;" in html  # the groups' lists inside
    assert (batch.succeeded, batch.failed, batch.unknown, batch.ok) == (2, 2, 1, False)


def test_two_thousand_failures_read_as_a_few_lines() -> None:
    refused = [
        DeleteResult(
            "failure", str(i), http_status=404, reason="no such entry", cause=Cause.REFUSED
        )
        for i in range(2000)
    ]
    late = [
        DeleteResult(
            "failure",
            f"t{i}",
            http_status=None,
            reason="no answer",
            outcome_unknown=True,
            cause=Cause.TIMEOUT,
        )
        for i in range(7)
    ]
    batch = BatchResult([*refused, *late, *refused[:10]])  # ids repeated: each shown once
    lines = str(batch).splitlines()
    assert len(lines) == 1 + (1 + 5 + 1) + (1 + 5 + 1)
    assert lines[1] == "  \u2717 2000 not deleted: refused by the service"
    assert lines[7] == "    \u2026 and 1,995 more"
    assert lines[8] == "  ? 7 outcome unknown: no answer in time"
    assert lines[-1] == "    \u2026 and 2 more"
    html = batch._repr_html_()
    assert html.count("<li") == 2 + 2 * (5 + 1) and len(html) < 10_000
    assert "and 1,995 more" in html


def test_an_interrupted_batch_says_so() -> None:
    never = DeleteResult("failure", "9", reason="not attempted", attempts=0)
    never = replace(never, cause=Cause.NOT_ATTEMPTED)
    batch = BatchResult([OK, never], interrupted=True)
    text = str(batch)
    assert text.splitlines()[0].endswith("; interrupted: 1 never sent")
    assert "1 not deleted: not sent" in text
    assert "interrupted" in batch._repr_html_()
    assert "interrupted" not in str(BatchResult([OK, never]))


def test_results_name_the_terms_when_the_entry_is_known() -> None:
    entry = Entry("1042", "ja", "金曜日", "en", "FRI")
    result = replace(OK, entry_id="1042", entry=entry)
    assert str(result).startswith("\u2713 deleted 1042: 金曜日 \u2192 FRI (ja\u2192en)")
    gone = replace(FAILED, entry_id="1042", entry=replace(entry, from_text="<i>"))
    assert "1042: &lt;i&gt; \u2192 FRI" in gone._repr_html_()


def test_all_good_batch() -> None:
    batch = BatchResult([OK, OK2])
    assert batch.ok and str(batch).splitlines() == [
        "\u2713 deleted 2 of 2 entries",
        f"  \u2713 {OK.target}",
        f"  \u2713 {OK2.target}",
    ]
    assert batch._repr_html_().count("<ul") == 1  # no group of failures
    assert not BatchResult([]).ok


def test_results_render_themselves() -> None:
    from IPython.lib.pretty import pretty

    assert pretty(OK) == str(OK) and OK._repr_html_().startswith("<div")
    batch = BatchResult([OK])
    assert pretty(batch) == str(batch) and batch._repr_html_().startswith("<div")


def test_repr_lists_the_fields_for_debugging() -> None:
    assert repr(OK).startswith("DeleteResult(status='success', http_status=200")
    assert "entry_id='42'" in repr(OK)
    assert repr(BatchResult([OK])).startswith("BatchResult(results=[DeleteResult(")


def test_repeated_ids_are_said_to_be_sent_once() -> None:
    batch = BatchResult([OK, OK2, OK, OK])
    first = str(batch).splitlines()[0]
    assert first == "\u2713 deleted 4 of 4 entries (2 repeated ids, each sent once)"


def test_details_come_from_the_fields_not_from_the_reason() -> None:
    text = str(DeleteResult("failure", "1", http_status=404, reason="no such entry"))
    assert text.endswith("(HTTP 404, 1 attempt, 0.00 s)")
    text = str(DeleteResult("failure", "1", reason="HTTP 404 said a proxy"))
    assert text.endswith("(1 attempt, 0.00 s)")


# -- listings ---------------------------------------------------------------------------------


def terminal_width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


TERMS = [
    Entry("1", "ja", "金曜日", "en", "FRI"),
    Entry("1042", "en", "line\nbreak", "de", "Zeilenumbruch"),
    Entry("7", "de", "<b>Straße</b>", "en", "street & road"),
]


def test_entries_text_aligns_columns_wide_characters_too() -> None:
    text = str(EntryList(TERMS, "dictionary.example.com"))
    lines = text.splitlines()
    assert lines[0] == "3 entries at dictionary.example.com"
    assert lines[1].split() == ["id", "from", "source", "to", "target"]
    # The target column starts at the same terminal column on every row (金曜日 is 6 wide).
    starts = {
        terminal_width(line[: line.index(target)])
        for line, target in zip(lines[2:], ["FRI", "Zeilen", "street"], strict=True)
    }
    assert len(starts) == 1
    assert "line\\nbreak" in lines[3]  # a newline in a term is shown, not obeyed
    assert len(lines) == 5


def test_entries_text_with_a_limit_says_how_many_more() -> None:
    listing = EntryList([Entry(str(i), "en", f"t{i}", "de", f"u{i}") for i in range(500)])
    text = listing.text(limit=200)
    assert len(text.splitlines()) == 1 + 1 + 200 + 1
    assert text.endswith("\u2026 and 300 more (total 500)")
    assert len(str(listing).splitlines()) == 502
    from IPython.lib.pretty import pretty

    assert pretty(listing) == text


def test_entries_html_escapes_and_shows_the_first_rows() -> None:
    html = EntryList(TERMS, "h")._repr_html_()
    assert "<b>Straße</b>" not in html and "&lt;b&gt;Straße&lt;/b&gt;" in html
    assert "street &amp; road" in html and html.count("<tr>") == 4
    empty = EntryList([], "h")._repr_html_()
    assert "no entries at h" in empty and "<table>" not in empty


@pytest.mark.parametrize("term", ["x", "&" * 5000, "\U0001f600" * 5000, '"<>' * 3000])
def test_entries_html_stays_small_at_any_size(term: str) -> None:
    listing = EntryList([Entry(str(i), "en", term, "de", term) for i in range(20_000)])
    html = listing._repr_html_()
    assert len(html.encode("utf-8")) < 200_000
    shown = html.count("<tr>") - 1
    assert 1 <= shown <= 200 and f"and {20_000 - shown} more (total 20000)" in html


def test_the_snapshot_line_neutralises_a_hostile_data_folder_in_text_and_html() -> None:
    """The snapshot path comes from $DICT_MAGICS_HOME: markup is escaped, and ESC or a bidi
    override is shown as an escape in HTML as in a terminal (an RLO would reverse the shown
    path in a notebook; found by review3)."""
    path = "/tmp/<script>x</script>\x1b[31m\u202etxt.json"
    gone = DeleteResult("success", "1", http_status=None, snapshot=path)
    batch = BatchResult([gone], snapshot=path)
    for shown in (gone._repr_html_(), batch._repr_html_()):
        assert "<script>" not in shown and "&lt;script&gt;" in shown
        assert "\x1b" not in shown and "\u202e" not in shown and "\\u202e" in shown
    for shown in (str(gone), str(batch)):
        assert "\x1b" not in shown and "\u202e" not in shown and "\\x1b[31m" in shown


# -- every record: outside text neutralised ---------------------------------------------------

BAD = "<script>x</script>\x1b[2J\u202e\x9b31m"
RAW = ("<script>", "\x1b", "\u202e", "\x9b")


def _hostile_records() -> list[object]:
    from datetime import datetime, timezone
    from pathlib import Path

    from dict_magics.models import (
        AddBatch,
        AddResult,
        AuditLine,
        AuditTable,
        ChangePreview,
        DryRunResult,
        ExportResult,
        NoChange,
        PurgePlan,
        RestoreResult,
        SnapshotInfo,
        SnapshotList,
        SyncPlan,
        SyncResult,
        UpdateResult,
    )
    from dict_magics.profiles.status import ProfileStatus

    bad = Entry(BAD, "en", BAD, "de", BAD)
    now = datetime(2024, 5, 1, tzinfo=timezone.utc)
    plan = SyncPlan(BAD, BAD, BAD, adds=[bad], add_rows=[2], deletes=[bad], missing=[bad, bad])
    return [
        EntryList([bad], BAD),
        DeleteResult(
            "failure",
            BAD,
            http_status=None,
            reason=BAD,
            entry=bad,
            snapshot=BAD,
            outcome_unknown=True,
        ),
        BatchResult([DeleteResult("success", BAD, entry=bad)], snapshot=BAD),
        AddResult("failure", bad, http_status=None, reason=BAD),
        AddBatch(
            [AddResult("success", bad), AddResult("failure", bad, http_status=None, reason=BAD)],
            why=BAD,
        ),
        UpdateResult("failure", BAD, bad, old=bad, http_status=None, reason=BAD),
        DryRunResult("delete", BAD, BAD, [bad], [BAD]),
        RestoreResult(added=[bad], failed=[(bad, BAD)], put_back=[bad]),
        SnapshotList([SnapshotInfo(Path(BAD), now, BAD, BAD, BAD, "delete", 1)]),
        AuditTable([AuditLine(now, BAD, BAD, "delete", BAD, bad, "failure", 404, 1, BAD, BAD)]),
        PurgePlan(BAD, BAD, 3, BAD),
        plan,
        SyncResult(
            plan, adds=[AddResult("failure", bad, http_status=None, reason=BAD)], mismatches=[BAD]
        ),
        ExportResult(Path(BAD), "csv", 1, BAD),
        ChangePreview("update", BAD, BAD, bad, bad, [bad]),
        NoChange("add", BAD, BAD, bad, [bad]),
        EntryList([bad]).lint(),
        EntryList([bad]).check(BAD),
        ProfileStatus(BAD, BAD, problem=BAD),
    ]


def test_every_record_neutralises_outside_text_in_text_and_html() -> None:
    """A term, id, host, profile, reason or path from outside can neither steer a terminal
    (ESC, C1, a bidi override) nor inject markup, in any record's text or HTML."""
    from IPython.lib.pretty import pretty

    for record in _hostile_records():
        html = record._repr_html_()
        for shown in (str(record), pretty(record), html):
            assert not [r for r in RAW[1:] if r in shown], (type(record).__name__, shown)
        assert "<script>" not in html and "&lt;script&gt;" in html, type(record).__name__
        assert "\\x1b" in str(record) and "\\x1b" in html, type(record).__name__
