"""One rendering for every front end: outcomes look different, and outside text is escaped."""

from __future__ import annotations

from dict_magics.render import batch_html, batch_text, kind_of, result_html, result_text
from dict_magics.service.models import BatchResult, DeleteResult

OK = DeleteResult("success", "42", http_status=200, attempts=1, elapsed=0.01)
FAILED = DeleteResult("failure", "<b>x</b>", http_status=404, reason="said <script>1</script>")
UNKNOWN = DeleteResult("failure", "9", reason="no answer", outcome_unknown=True, attempts=2)
OK2 = DeleteResult("success", "43", http_status=200)
PURGE = DeleteResult("success", None, http_status=200)


def test_three_outcomes_are_distinct_in_text_and_html() -> None:
    assert [kind_of(r) for r in (OK, FAILED, UNKNOWN)] == ["success", "failure", "unknown"]
    texts = [result_text(r) for r in (OK, FAILED, UNKNOWN)]
    assert texts[0].startswith("\u2713 deleted entry '42'")
    assert texts[1].startswith("\u2717 entry '<b>x</b>' not deleted \u2014 said")
    assert texts[2].startswith("? outcome unknown for entry '9'")
    htmls = [result_html(r) for r in (OK, FAILED, UNKNOWN)]
    for html, kind in zip(htmls, ["success", "failure", "unknown"], strict=True):
        assert f"dict-magics-{kind}" in html
    assert len({h.split('style="color:')[1][:7] for h in htmls}) == 3


def test_html_escapes_ids_and_reasons() -> None:
    html = result_html(FAILED)
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html


def test_purge_reads_as_every_entry() -> None:
    assert "deleted every entry" in result_text(PURGE)


def test_batch_summary_lists_every_failure_with_its_reason() -> None:
    batch = BatchResult([OK, FAILED, UNKNOWN, OK2])
    text = batch_text(batch)
    assert (
        text.splitlines()[0]
        == "\u2717 deleted 2 of 4 entries; 2 not deleted (1 with unknown outcome)"
    )
    assert "said <script>" in text and "no answer" in text and len(text.splitlines()) == 3
    html = batch_html(batch)
    assert html.count("<li>") == 2 and "<script>" not in html
    assert (batch.succeeded, batch.failed, batch.unknown, batch.ok) == (2, 2, 1, False)


def test_all_good_batch() -> None:
    batch = BatchResult([OK, OK2])
    assert batch.ok and batch_text(batch) == "\u2713 deleted 2 of 2 entries"
    assert "<li>" not in batch_html(batch)
    assert not BatchResult([]).ok


def test_results_render_themselves() -> None:
    from IPython.lib.pretty import pretty

    assert pretty(OK) == str(OK) == result_text(OK) and OK._repr_html_() == result_html(OK)
    batch = BatchResult([OK])
    assert pretty(batch) == str(batch) == batch_text(batch)
    assert batch._repr_html_() == batch_html(batch)


def test_repr_lists_the_fields_for_debugging() -> None:
    assert repr(OK).startswith("DeleteResult(status='success', entry_id='42', http_status=200")
    assert repr(BatchResult([OK])).startswith("BatchResult(results=[DeleteResult(")


def test_repeated_ids_are_said_to_be_sent_once() -> None:
    batch = BatchResult([OK, OK2, OK, OK])
    assert batch_text(batch) == "\u2713 deleted 4 of 4 entries (2 repeated ids, each sent once)"


def test_details_do_not_repeat_the_http_status() -> None:
    text = result_text(DeleteResult("failure", "1", http_status=404, reason="HTTP 404, no"))
    assert text.count("HTTP 404") == 1
