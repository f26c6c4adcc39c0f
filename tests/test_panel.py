"""The curation panel, driven as a user would: typed searches, ticks and clicks.

Every test talks to the real sandbox over loopback and checks both the widgets and what the
server holds and received, so "nothing was deleted" is proven by the server itself. Each state
and transition has a test: loading, idle, armed (a deletion, the purge, a restore), running
(with Cancel), undo available, and the fallback to typed ids where the service has no listing.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from datetime import datetime, timezone

import ipywidgets
import pytest
import requests
from hypothesis import given, settings
from hypothesis import strategies as st

from dict_magics.errors import CredentialsError, DictMagicsError
from dict_magics.frontends.panel import PAGE, DictPanel, parse_ids
from dict_magics.frontends.panel_html import id_label, row_cells_html
from dict_magics.frontends.panel_table import ALL_PAIRS, EntryIndex, EntryRows
from dict_magics.models import (
    AddResult,
    BatchResult,
    Entry,
    EntryList,
    NoChange,
    RestoreResult,
    UpdateResult,
)
from dict_magics.models.glossary import SyncResult
from dict_magics.models.terms import LANGUAGE_CODES
from dict_magics.operations.snapshots import list_snapshots, read_snapshot, snapshot_dir
from dict_magics.profiles import credentials
from dict_magics.sandbox import LoggedRequest, SandboxServer
from dict_magics.service.client import DictionaryClient
from dict_magics.settings import PURGE_WORD

WAIT_S = 30.0


def make_panel(sandbox: SandboxServer, **options: object) -> DictPanel:
    client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key, backoff=0.01)
    panel = DictPanel(client, profile="default", **{"workers": 4, **options})
    assert panel.wait(WAIT_S)
    return panel


@pytest.fixture
def panel(sandbox: SandboxServer) -> Iterator[DictPanel]:
    built = make_panel(sandbox)
    yield built
    built.close()


def changes(sandbox: SandboxServer) -> list[LoggedRequest]:
    """The requests that can change the dictionary (a nonce refused with 40005 and sent again
    at once changed nothing: under load the sandbox's threads may check nonces out of order)."""
    return [r for r in sandbox.requests if r.method in ("DELETE", "POST") and r.code != 40005]


def visible(widget) -> bool:
    return widget.layout.display != "none"


def buttons(panel: DictPanel) -> dict[str, object]:
    return {
        "refresh": panel.refresh_button,
        "select all": panel.select_all_button,
        "clear": panel.clear_button,
        "delete": panel.delete_button,
        "delete all": panel.delete_all_button,
        "undo": panel.undo_button,
        "restore": panel.restore_button,
        "confirm": panel.confirm_button,
        "cancel": panel.cancel_button,
    }


def enabled(panel: DictPanel) -> set[str]:
    return {name for name, button in buttons(panel).items() if not button.disabled}


def shown_ids(panel: DictPanel) -> list[str]:
    """The ids the table's rows show, read from the widgets (a row: check box, cells)."""
    ids = [row.children[0].description for row in panel.rows.children]
    assert all(row.children[1].value for row in panel.rows.children)
    return ids


def ticks(panel: DictPanel) -> list[bool]:
    return [row.children[0].value for row in panel.rows.children]


def tick(panel: DictPanel, entry: Entry, value: bool = True) -> None:
    """Click the check box of ``entry`` (it must be shown)."""
    (box,) = [b for e, b in panel.rows.shown if e == entry]
    assert box.description == id_label(entry.id)
    box.value = value


def search(panel: DictPanel, text: str) -> None:
    panel.search_text.value = text


def confirm_and_wait(panel: DictPanel) -> None:
    panel.confirm_button.click()
    assert panel.wait(WAIT_S)


def terms_of(sandbox: SandboxServer) -> set[tuple[str, str, str, str]]:
    return set(sandbox.terms)


def arm_two_meetings(panel: DictPanel, sandbox: SandboxServer) -> list[Entry]:
    """Search "meeting", tick the first two matches, press Delete selected."""
    search(panel, "Meeting")
    going = panel.matches[:2]
    for entry in going:
        tick(panel, entry)
    assert panel.delete_button.description == "Delete selected (2)"
    panel.delete_button.click()
    assert panel.state == "armed" and panel.armed == "delete"
    return going


def everything_shown(panel: DictPanel) -> str:
    """Every synced value of every widget in the panel (the whole pool too), and its repr."""

    def walk(widget) -> Iterator:
        yield widget
        for child in getattr(widget, "children", ()):
            yield from walk(child)

    widgets = [*walk(panel), *(part for row in panel.rows.pool for part in walk(row))]
    return "\n".join([*(json.dumps(w.get_state(), default=str) for w in widgets), repr(panel)])


# -- the search index and the pool of rows ----------------------------------------------------

TEXT = st.text(alphabet="aAbß\u1e9eSs \x1f会", max_size=4)
LANG = st.sampled_from(["ja", "en", "de"])
ENTRIES = st.lists(
    st.builds(Entry, st.integers(1, 30).map(str), LANG, TEXT, LANG, TEXT), max_size=25
)


@settings(max_examples=100, deadline=None)
@given(ENTRIES, st.lists(st.tuples(TEXT, st.one_of(st.just(ALL_PAIRS), st.tuples(LANG, LANG)))))
def test_the_index_finds_what_entry_matches_finds(
    entries: list[Entry], searches: list[tuple[str, object]]
) -> None:
    index = EntryIndex(entries)
    for text, pair in searches:  # in sequence: typing on reuses the previous matches
        expected = [
            i
            for i, e in enumerate(entries)
            if e.matches(text.strip()) and pair in (ALL_PAIRS, (e.from_lang, e.to_lang))
        ]
        assert index.search(text, pair) == expected


def test_the_index_counts_the_pairs_present() -> None:
    entries = [Entry("1", "ja", "a", "en", "b"), Entry("2", "en", "c", "de", "d")]
    entries.append(Entry("3", "ja", "e", "en", "f"))
    assert EntryIndex(entries).pairs == [(("en", "de"), 1), (("ja", "en"), 2)]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(ENTRIES, st.sets(st.integers(1, 30).map(str))), max_size=8))
def test_the_rows_always_show_what_was_drawn(draws: list[tuple[list[Entry], set[str]]]) -> None:
    rows = EntryRows(5, lambda: None, threading.RLock())
    try:
        for entries, selected in draws:
            rows.select(selected)  # exactly these: the last draw's ticks go
            rows.draw(entries)
            shown = entries[:5]
            boxes = [row.children[0] for row in rows.children]
            assert [b.description for b in boxes] == [id_label(e.id) for e in shown]
            assert [row.children[1].value for row in rows.children] == [
                row_cells_html(e) for e in shown
            ]
            assert [b.value for b in boxes] == [e.id in selected for e in shown]
            assert [e for e, _ in rows.shown] == shown
            assert len(set(map(id, rows.children))) == len(shown)
            assert len(rows.pool) <= 5  # never more rows than a page shows at once
    finally:
        rows.close()


def test_a_tick_selects_the_entry_its_row_shows() -> None:
    changed: list[int] = []
    rows = EntryRows(2, lambda: changed.append(1), threading.RLock())
    one, two, three = (Entry(str(i), "en", f"t{i}", "de", f"u{i}") for i in (1, 2, 3))
    try:
        rows.draw([one, two])
        row_of_one = rows.children[0]
        rows.children[1].children[0].value = True
        assert list(rows.selected) == ["2"] and changed == [1]
        rows.draw([three, one])  # "one" keeps its row, moved; "three" gets a free one
        assert rows.children[1] is row_of_one
        assert [row.children[0].value for row in rows.children] == [False, False]
        rows.children[0].children[0].value = True
        assert list(rows.selected) == ["2", "3"]
        assert isinstance(rows.children[0].children[0], ipywidgets.Checkbox)
        assert "u3" in rows.children[0].children[1].value
    finally:
        rows.close()


# -- loading and idle ------------------------------------------------------------------------


def test_parse_ids_splits_on_spaces_and_commas_and_drops_duplicates() -> None:
    assert parse_ids(" 1, 2 3,,4\n5\t2 ") == ["1", "2", "3", "4", "5"]
    assert parse_ids(" , ") == []


def test_loading_runs_in_the_background_with_only_cancel_enabled(
    sandbox: SandboxServer,
) -> None:
    sandbox.pause()
    client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key)
    panel = DictPanel(client, profile="default")
    try:
        assert panel.state == "running" and panel.running == "list"
        assert enabled(panel) == {"cancel"}
        assert visible(panel.confirm_box) and not visible(panel.confirm_button)
        assert "Listing the entries" in panel.confirm_message.value
        panel.refresh_button.click()  # disabled: a programmatic click changes nothing
        sandbox.resume()
        assert panel.wait(WAIT_S)
        assert panel.state == "idle" and len(panel.entries) == 100
        assert [r.method for r in sandbox.requests] == ["GET"]
    finally:
        sandbox.resume()
        panel.close()


def test_idle_panel_shows_whose_dictionary_and_every_entry(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    host = f"127.0.0.1:{sandbox.port}"
    header = panel.header.value
    assert "<code>default</code>" in header and host in header
    assert credentials.mask(sandbox.access_key) in header
    assert sandbox.access_key not in header
    assert panel.state == "idle" and panel.armed is None and panel.running is None
    assert f"100 entries at {host}" in panel.count_html.value
    assert "0 selected" in panel.count_html.value
    assert shown_ids(panel) == [str(i) for i in range(1, PAGE + 1)]
    assert panel.shown == [sandbox.entry(str(i)) for i in range(1, PAGE + 1)]
    assert "rows 1\u2013" in panel.count_html.value and "page 1 of 2" in panel.page_html.value
    assert enabled(panel) == {"refresh", "select all", "delete all"}
    assert panel.delete_button.description == "Delete selected (0)"
    assert not visible(panel.confirm_box) and not visible(panel.ids_text)
    assert panel.delete_all_button.button_style == "danger"


def test_search_matches_either_term_whatever_the_case(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    search(panel, "MEETING")
    expected = [e for e in sandbox.entries.values() if e.matches("meeting")]
    assert any(e.from_text == "meeting" for e in expected)  # a source term matches
    assert any(e.to_text == "meeting" for e in expected)  # and a target term
    assert {e.id for e in panel.matches} == {e.id for e in expected}
    assert panel.shown == panel.matches[:PAGE]
    assert f"{len(expected)} matches of 100 entries" in panel.count_html.value
    search(panel, "  会議 ")
    assert [e.from_text for e in panel.matches] == ["会議"]
    search(panel, "no such term anywhere")
    assert panel.matches == [] and panel.rows.children == ()
    assert not visible(panel.pager)
    assert panel.select_all_button.disabled
    search(panel, "")
    assert len(shown_ids(panel)) == PAGE and len(panel.matches) == 100


def test_the_language_filter_offers_the_pairs_present(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    pairs = {(e.from_lang, e.to_lang) for e in sandbox.entries.values()}
    options = dict((value, label) for label, value in panel.pair_dropdown.options)
    assert options.pop("all") == "all"
    assert set(options) == pairs
    ja_en = [e for e in sandbox.entries.values() if (e.from_lang, e.to_lang) == ("ja", "en")]
    assert options[("ja", "en")] == f"ja\u2192en ({len(ja_en)})"
    panel.pair_dropdown.value = ("ja", "en")
    assert {e.id for e in panel.matches} == {e.id for e in ja_en}
    search(panel, "meeting")  # both filters at once
    assert [(e.from_text, e.to_lang) for e in panel.matches] == [("会議", "en")]
    panel.pair_dropdown.value = "all"
    assert len(panel.matches) > 1


def test_the_table_pages_through_the_matches_and_selects_beyond_the_page() -> None:
    with SandboxServer(2 * PAGE + 7) as sandbox:
        panel = make_panel(sandbox)
        try:
            assert shown_ids(panel) == [str(i) for i in range(1, PAGE + 1)]
            assert panel.pages == 3 and visible(panel.pager)
            assert f"{2 * PAGE + 7} entries" in panel.count_html.value
            assert f"rows 1\u2013{PAGE}" in panel.count_html.value
            assert panel.prev_button.disabled and not panel.next_button.disabled
            panel.next_button.click()
            panel.next_button.click()
            assert panel.page == 2 and panel.next_button.disabled
            assert shown_ids(panel) == [str(i) for i in range(2 * PAGE + 1, 2 * PAGE + 8)]
            assert "page 3 of 3" in panel.page_html.value
            assert f"rows {2 * PAGE + 1}\u2013{2 * PAGE + 7}" in panel.count_html.value
            panel.next_button.click()  # disabled in the browser; here: stays on the last page
            assert panel.page == 2
            panel.prev_button.click()
            assert panel.page == 1 and shown_ids(panel)[0] == str(PAGE + 1)
            rows_made = len(panel.rows.pool)
            panel.select_all_button.click()  # every match, not only those shown
            assert len(panel.selected) == 2 * PAGE + 7
            assert panel.delete_button.description == f"Delete selected ({2 * PAGE + 7})"
            assert all(ticks(panel))
            panel.clear_button.click()
            assert panel.selected == [] and not any(ticks(panel))
            panel.select([PAGE + 10, "1"])  # from code, e.g. the ids of a %dict_list
            assert panel.selected == [str(PAGE + 10), "1"]
            assert panel.delete_button.description == "Delete selected (2)"
            assert ticks(panel)[9] and sum(ticks(panel)) == 1
            search(panel, "1")  # a new search goes back to the first page
            assert panel.page == 0
            assert len(panel.rows.pool) <= PAGE >= rows_made  # rows are reused, never more
        finally:
            panel.close()


def test_a_click_on_a_column_sorts_by_it_and_again_the_other_way(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    entries = list(sandbox.entries.values())
    for column, key in [
        ("source", lambda e: (e.from_text.casefold(), e.to_text.casefold())),
        ("target", lambda e: (e.to_text.casefold(), e.from_text.casefold())),
        ("languages", lambda e: (e.from_lang, e.to_lang, e.from_text.casefold())),
        ("id", lambda e: int(e.id)),
    ]:
        panel.sort_buttons[column].click()
        assert panel.sorted_by == (column, False)
        assert panel.sort_buttons[column].description == f"{column} \u25b2"
        assert panel.matches == sorted(entries, key=key)
        assert panel.shown == panel.matches[:PAGE]
        panel.sort_buttons[column].click()
        assert panel.sorted_by == (column, True)
        assert panel.sort_buttons[column].description == f"{column} \u25bc"
        assert [key(e) for e in panel.matches] == sorted(map(key, entries), reverse=True)
        others = [b.description for c, b in panel.sort_buttons.items() if c != column]
        assert all(" " not in label for label in others)  # no arrow on the other columns
    search(panel, "meeting")  # the search keeps the order
    assert [int(e.id) for e in panel.matches] == sorted(int(e.id) for e in panel.matches)[::-1]
    panel.sort(None)
    assert panel.sorted_by == (None, False)
    assert panel.matches == [e for e in entries if e.matches("meeting")]


def test_ids_sort_as_numbers_before_other_ids() -> None:
    entries = [Entry(i, "en", "a", "de", "b") for i in ["10", "x-2", "9", "100", "A"]]
    index = EntryIndex(entries)
    assert [entries[i].id for i in index.order(range(5), "id")] == ["9", "10", "100", "A", "x-2"]
    with pytest.raises(ValueError, match="column"):
        index.order([0], "colour")


def test_a_row_shows_its_terms_escaped_and_marked_with_their_language(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    sandbox.add_entries([Entry("901", "ja", "<b>会議</b>", "zh-CN", "会议 & \x1b[31m")])
    panel.refresh_button.click()
    assert panel.wait(WAIT_S)
    search(panel, "会议")
    ((_entry, box),) = panel.rows.shown
    cells = panel.rows.children[0].children[1].value
    assert box.description == "901"
    assert "&lt;b&gt;会議&lt;/b&gt;" in cells and "<b>" not in cells
    assert "会议 &amp;" in cells and "\x1b" not in cells
    assert 'lang="ja"' in cells and 'lang="zh-CN"' in cells
    assert "ja\u2192zh-CN" in cells


def test_the_selection_survives_searching(panel: DictPanel, sandbox: SandboxServer) -> None:
    invoice = sandbox.entry("2")  # invoice → Rechnung
    tick(panel, invoice)
    search(panel, "meeting")
    meeting = panel.matches[0]
    assert not any(ticks(panel))  # the row that showed "invoice" is not ticked
    tick(panel, meeting)
    assert panel.selected == [invoice.id, meeting.id]
    assert "2 selected" in panel.count_html.value
    search(panel, "")
    panel.sort("id", descending=True)  # and sorting
    panel.show_page(1)  # and paging
    ticked = {e.id for e, box in panel.rows.shown if box.value}
    assert invoice in panel.shown
    assert ticked == {invoice.id, meeting.id} & {e.id for e in panel.shown}
    tick(panel, invoice, False)
    assert panel.selected == [meeting.id]
    assert panel.delete_button.description == "Delete selected (1)"


# -- armed: a deletion of ticked entries -------------------------------------------------------


def test_delete_selected_arms_a_confirmation_that_names_the_terms(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    going = arm_two_meetings(panel, sandbox)
    message = panel.confirm_message.value
    assert "Delete 2 entries" in message and f"127.0.0.1:{sandbox.port}" in message
    for entry in going:
        assert entry.from_text in message and entry.to_text in message
    assert "Undo" in message
    assert visible(panel.confirm_box) and not visible(panel.purge_word_text)
    assert enabled(panel) == {"confirm", "cancel"}
    assert changes(sandbox) == []


def test_cancel_of_an_armed_deletion_sends_nothing(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    arm_two_meetings(panel, sandbox)
    panel.cancel_button.click()
    assert panel.state == "idle" and not visible(panel.confirm_box)
    assert "Cancelled: nothing was sent." in panel.status.value
    panel.confirm_button.click()  # nothing armed any more
    assert panel.wait(WAIT_S)
    assert changes(sandbox) == [] and len(sandbox.entries) == 100
    assert len(panel.selected) == 2  # still ticked, ready for another try


def test_nothing_ticked_arms_nothing(panel: DictPanel, sandbox: SandboxServer) -> None:
    panel.delete_button.click()
    assert panel.state == "idle"
    assert "Tick one or more entries first." in panel.status.value


def test_confirm_deletes_what_was_confirmed_and_shows_the_terms_gone(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    going = arm_two_meetings(panel, sandbox)
    tick(panel, panel.matches[2])  # ticked after arming: not part of what was confirmed
    confirm_and_wait(panel)
    assert sorted(r.entry_id for r in changes(sandbox)) == sorted(e.id for e in going)
    assert all(sandbox.entry(e.id) is None for e in going)
    result = panel.history[-1]
    assert isinstance(result, BatchResult) and result.ok
    for entry in going:
        assert entry.from_text in panel.result.value and entry.to_text in panel.result.value
    assert "deleted 2 of 2 entries" in panel.result.value
    # Where the copy is, and the panel's own way back (not a magic or a command).
    assert f"Snapshot kept at <code>{result.snapshot}</code>: Undo puts them back." in (
        panel.result.value
    )
    # The list is the service's again: the deleted are gone from it and from the selection.
    assert len(panel.entries) == 98
    assert not any(e.id in {g.id for g in going} for e in panel.matches)
    assert len(panel.selected) == 1
    assert panel.state == "idle"


def test_double_click_on_confirm_sends_each_deletion_once(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    going = arm_two_meetings(panel, sandbox)
    panel.confirm_button.click()
    panel.confirm_button.click()
    assert panel.wait(WAIT_S)
    assert sorted(r.entry_id for r in changes(sandbox)) == sorted(e.id for e in going)
    assert len(panel.history) == 1


# -- running ----------------------------------------------------------------------------------


def test_while_running_only_cancel_is_enabled_and_cancel_stops_the_rest(
    sandbox: SandboxServer,
) -> None:
    panel = make_panel(sandbox, workers=1)
    try:
        panel.select_all_button.click()
        panel.delete_button.click()
        sandbox.pause()  # the first request (the snapshot's listing, or a DELETE) is held
        panel.confirm_button.click()
        assert panel.state == "running" and panel.running == "delete"
        assert enabled(panel) == {"cancel"}
        assert "Deleting 100 entries" in panel.confirm_message.value
        panel.delete_all_button.click()  # disabled: nothing happens
        panel.cancel_button.click()
        assert "Cancelling" in panel.status.value
        assert not panel.cancel_button.disabled
        sandbox.resume()
        assert panel.wait(WAIT_S)
        batch = panel.history[-1]
        assert isinstance(batch, BatchResult) and batch.interrupted
        sent = [r for r in changes(sandbox) if r.method == "DELETE"]
        assert len(sent) < 100 and batch.failed >= 100 - len(sent)
        assert len(sandbox.entries) == 100 - batch.succeeded
        assert "interrupted" in panel.status.value
        assert panel.state == "idle" and "cancel" not in enabled(panel)
    finally:
        sandbox.resume()
        panel.close()


def test_a_service_failure_is_rendered_and_the_panel_stays_usable(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    sandbox.fail_next(5, 500, method="DELETE")
    entry = sandbox.entry("4")
    tick(panel, entry)
    panel.delete_button.click()
    confirm_and_wait(panel)
    result = panel.history[-1]
    assert not result.ok and result.http_status == 500
    assert "HTTP 500" in panel.result.value and "dict-magics-failure" in panel.result.value
    assert sandbox.entry("4") == entry
    assert panel.selected == ["4"]  # still there, still ticked: try again
    assert panel.state == "idle" and "delete" in enabled(panel)


def test_an_exception_in_the_background_is_shown_and_the_panel_recovers(
    sandbox: SandboxServer,
) -> None:
    session = requests.Session()
    session.trust_env = False
    client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key, session=session)
    panel = DictPanel(client, profile="default")
    try:
        assert panel.wait(WAIT_S)

        def broken_hook(response: requests.Response, **_kwargs: object) -> None:
            if response.request.method == "DELETE":
                session.hooks["response"].remove(broken_hook)  # a bug that bites once
                raise RuntimeError("boom in a response hook")

        session.hooks["response"].append(broken_hook)
        tick(panel, sandbox.entry("8"))
        panel.delete_button.click()
        confirm_and_wait(panel)
        status = panel.status.value
        assert "dict-magics-status-error" in status
        assert "RuntimeError: boom in a response hook" in status
        assert "may or may not have reached the service" in status
        assert panel.state == "idle"

        panel.refresh_button.click()
        assert panel.wait(WAIT_S)
        tick(panel, sandbox.entry("9"))
        panel.delete_button.click()
        confirm_and_wait(panel)
        assert panel.history[-1].ok and sandbox.entry("9") is None
    finally:
        panel.close()


def test_a_listing_that_fails_says_so_and_refresh_tries_again(sandbox: SandboxServer) -> None:
    sandbox.fail_next(10, 500, method="GET")
    client = DictionaryClient(
        sandbox.url, sandbox.access_key, sandbox.secret_key, max_retries=0, backoff=0.01
    )
    panel = DictPanel(client, profile="default")
    try:
        assert panel.wait(WAIT_S)
        assert "Could not list the entries" in panel.status.value
        assert "Press Refresh" in panel.status.value
        assert panel.entries == [] and panel.state == "idle"
        sandbox.clear_faults()
        panel.refresh_button.click()
        assert panel.wait(WAIT_S)
        assert len(panel.entries) == 100
        assert "Listed 100 entries" in panel.status.value
    finally:
        panel.close()


def test_a_closed_port_is_an_error_in_the_panel() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = DictionaryClient(
        f"http://127.0.0.1:{port}", "some-access-key", "s3cret", timeout=2, max_retries=0
    )
    panel = DictPanel(client, profile="default")
    try:
        assert panel.wait(WAIT_S)
        assert "Could not list the entries" in panel.status.value
        assert f"127.0.0.1:{port}" in panel.status.value
        assert panel.state == "idle" and "refresh" in enabled(panel)
    finally:
        panel.close()


# -- undo available ---------------------------------------------------------------------------


def test_undo_puts_back_what_the_deletion_took(panel: DictPanel, sandbox: SandboxServer) -> None:
    before = terms_of(sandbox)
    assert panel.undo_button.disabled
    going = arm_two_meetings(panel, sandbox)
    confirm_and_wait(panel)
    assert not panel.undo_button.disabled and panel.undo is not None
    assert panel.undo.what == "2 entries"
    snapshot = read_snapshot(panel.undo.snapshot)
    assert {e.terms for e in snapshot.entries} == {e.terms for e in going}

    panel.undo_button.click()
    assert panel.wait(WAIT_S)
    assert terms_of(sandbox) == before
    result = panel.history[-1]
    assert isinstance(result, RestoreResult) and len(result.added) == 2
    assert "restored 2 entries" in panel.result.value
    assert panel.undo is None and panel.undo_button.disabled
    assert len(panel.entries) == 100  # listed again: the entries are back (with new ids)
    search(panel, "meeting")
    assert {e.terms for e in going} <= {e.terms for e in panel.matches}


# -- armed: the purge ---------------------------------------------------------------------------


def test_delete_all_states_how_many_and_where_the_snapshot_goes(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    panel.delete_all_button.click()
    assert panel.state == "armed" and panel.armed == "purge"
    message = panel.confirm_message.value
    assert "all 100 entries" in message and f"127.0.0.1:{sandbox.port}" in message
    assert str(snapshot_dir()) in message
    assert PURGE_WORD in message and "Undo puts them back" in message  # the panel's own words
    assert "%dict_" not in message and "dict-magics restore" not in message
    assert panel.purge_word_text.placeholder == f"type {PURGE_WORD}"
    assert visible(panel.purge_word_text)
    assert enabled(panel) == {"cancel"}  # Confirm waits for the word
    for answer in ("", "delete all", "DELETE-ALL", "delete-all!", "127.0.0.1"):
        panel.purge_word_text.value = answer
        assert panel.confirm_button.disabled, answer
    panel.confirm_button.click()  # a click the browser would not even send
    assert panel.wait(WAIT_S)
    assert panel.state == "armed" and changes(sandbox) == []
    panel.purge_word_text.value = f" 127.0.0.1:{sandbox.port} "  # the exact host also confirms
    assert not panel.confirm_button.disabled
    panel.cancel_button.click()
    assert panel.state == "idle" and changes(sandbox) == []
    panel.delete_all_button.click()
    assert panel.purge_word_text.value == "" and panel.confirm_button.disabled


def test_purge_then_restore_from_the_snapshot_choice(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    before = terms_of(sandbox)
    panel.delete_all_button.click()
    panel.purge_word_text.value = PURGE_WORD
    confirm_and_wait(panel)
    assert sandbox.entries == {}
    assert [r.operation for r in changes(sandbox)] == ["purge"]
    assert "deleted every entry" in panel.result.value
    assert panel.entries == [] and "no entries" in panel.count_html.value
    assert panel.undo is not None and panel.undo.what == "every entry"

    (latest,) = list_snapshots(profile="default", host=f"127.0.0.1:{sandbox.port}")
    assert latest.operation == "purge" and latest.count == 100
    assert panel.snapshot_dropdown.value == str(latest.path)
    assert "purge \u00b7 100 entries" in panel.snapshot_dropdown.label

    panel.restore_button.click()
    assert panel.state == "armed" and panel.armed == "restore"
    assert "100 entries" in panel.confirm_message.value
    assert "Only entries whose terms are missing are added" in panel.confirm_message.value
    assert enabled(panel) == {"confirm", "cancel"}
    assert [r.method for r in changes(sandbox)] == ["DELETE"]  # arming sent nothing
    confirm_and_wait(panel)
    assert terms_of(sandbox) == before
    assert "restored 100 entries" in panel.result.value
    assert len(panel.entries) == 100
    assert panel.undo is None  # Undo would have put back the same snapshot


def test_cancel_stops_a_restore_that_runs(panel: DictPanel, sandbox: SandboxServer) -> None:
    panel.delete_all_button.click()
    panel.purge_word_text.value = PURGE_WORD
    confirm_and_wait(panel)
    panel.restore_button.click()
    sandbox.pause()  # the restore's first request is held
    panel.confirm_button.click()
    assert panel.state == "running" and panel.running == "restore"
    assert enabled(panel) == {"cancel"}
    panel.cancel_button.click()
    sandbox.resume()
    assert panel.wait(WAIT_S)
    result = panel.history[-1]
    assert isinstance(result, RestoreResult) and len(result.added) < 100
    assert len(sandbox.entries) == len(result.added)
    assert "Cancelled" in panel.status.value
    assert panel.undo is not None  # the purge can still be undone: nothing is lost
    panel.undo_button.click()
    assert panel.wait(WAIT_S)
    assert len(sandbox.entries) == 100


def test_cancel_of_an_armed_restore_sends_nothing(panel: DictPanel, sandbox: SandboxServer) -> None:
    tick(panel, sandbox.entry("5"))
    panel.delete_button.click()
    confirm_and_wait(panel)
    sandbox.clear_log()
    panel.restore_button.click()
    assert panel.armed == "restore"
    panel.cancel_button.click()
    assert panel.state == "idle" and changes(sandbox) == []
    assert sandbox.entry("5") is None


def test_restoring_twice_adds_nothing_the_second_time(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    tick(panel, sandbox.entry("5"))
    panel.delete_button.click()
    confirm_and_wait(panel)
    for _ in range(2):
        panel.restore_button.click()
        confirm_and_wait(panel)
    assert [r.method for r in changes(sandbox)] == ["DELETE", "POST"]
    result = panel.history[-1]
    assert result.added == [] and len(result.skipped) == 1


def test_refresh_shows_what_changed_behind_the_panel(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    sandbox.add_entries([Entry("900", "en", "brand-new term", "de", "ganz neu")])
    search(panel, "brand-new")
    assert panel.matches == []
    panel.refresh_button.click()
    assert panel.wait(WAIT_S)
    assert [e.id for e in panel.matches] == ["900"]
    assert "Listed 101 entries" in panel.status.value


# -- a service without a listing ---------------------------------------------------------------


def test_without_a_listing_the_panel_falls_back_to_typed_ids() -> None:
    with SandboxServer(20, listing=False) as sandbox:
        panel = make_panel(sandbox)
        try:
            assert not panel.listing_supported
            assert visible(panel.ids_text) and not visible(panel.search_box)
            assert "dict-magics-status-warning" in panel.status.value
            assert "cannot be undone" in panel.status.value
            assert panel.delete_button.description == "Delete"
            assert panel.delete_all_button.disabled  # no snapshot possible: the purge refuses

            panel.ids_text.value = "5, dictionary-all"
            panel.delete_button.click()
            assert panel.state == "idle" and "dictionary-all" in panel.status.value

            panel.ids_text.value = "3, 4 3"
            panel.delete_button.click()
            assert panel.armed == "delete"
            message = panel.confirm_message.value
            assert "Delete 2 entries" in message and "cannot be undone" in message
            assert "&#x27;3&#x27;" in message and "&#x27;4&#x27;" in message
            confirm_and_wait(panel)
            assert sorted(r.entry_id for r in changes(sandbox)) == ["3", "4"]
            assert "3" not in sandbox.entries and "4" not in sandbox.entries
            assert panel.history[-1].ok and panel.ids_text.value == ""
            assert panel.undo is None and panel.undo_button.disabled
            assert "cannot be undone" in panel.status.value  # the operation's own warning
        finally:
            panel.close()


# -- secrets and construction ------------------------------------------------------------------


def test_the_secret_key_never_appears_in_any_widget_or_repr(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    arm_two_meetings(panel, sandbox)
    confirm_and_wait(panel)
    panel.delete_all_button.click()
    panel.purge_word_text.value = "nope"
    shown = everything_shown(panel)
    assert sandbox.secret_key not in shown
    assert sandbox.access_key not in shown
    assert credentials.mask(sandbox.access_key) in shown


def test_from_profile_reads_the_environment(
    sandbox: SandboxServer, memory_keyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in sandbox.env().items():
        monkeypatch.setenv(name, value)
    panel = DictPanel.from_profile(workers=2, timeout=5)
    try:
        assert panel.wait(WAIT_S)
        assert panel.workers == 2 and panel.profile == "default"
        assert f"127.0.0.1:{sandbox.port}" in panel.header.value
        assert len(panel.entries) == 100
        assert sandbox.secret_key not in everything_shown(panel)
    finally:
        panel.close()


def test_the_magic_s_panel_signs_as_its_settings_say(
    sandbox: SandboxServer, memory_keyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dict_magics.operations.context import OperationSettings

    for name, value in sandbox.env().items():
        monkeypatch.setenv(name, value)
    panel = DictPanel.from_settings(OperationSettings(auth="token"))  # %config DictMagics.auth
    try:
        assert panel.wait(WAIT_S) and len(panel.entries) == 100
        assert sandbox.tokens_issued == 1
        listed = [r for r in sandbox.requests if r.path != "/api/v1/token"]
        assert listed and not any("signature" in r.headers for r in listed)
    finally:
        panel.close()


def test_from_profile_reads_a_keyring_profile(sandbox: SandboxServer, memory_keyring) -> None:
    credentials.store("work", sandbox.url, sandbox.access_key, sandbox.secret_key)
    panel = DictPanel.from_profile("work")
    try:
        assert panel.wait(WAIT_S)
        assert "<code>work</code>" in panel.header.value
        panel.delete_all_button.click()
        assert "profile &#x27;work&#x27;" in panel.confirm_message.value
    finally:
        panel.close()


def test_from_profile_without_credentials_says_what_is_missing(memory_keyring) -> None:
    with pytest.raises(CredentialsError, match="for profile 'nobody': log it in") as missing:
        DictPanel.from_profile("nobody")
    assert missing.value.option == "login"  # %dict_panel words it: %dict_login -p nobody


def test_workers_below_one_are_refused(sandbox: SandboxServer) -> None:
    client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key)
    with pytest.raises(DictMagicsError, match="workers"):
        DictPanel(client, profile="default", workers=0)
    client.close()


def test_dict_panel_magic_returns_a_working_panel(
    request: pytest.FixtureRequest, sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    ip = request.getfixturevalue("ip")
    for name, value in sandbox.env().items():
        monkeypatch.setenv(name, value)
    panel = ip.run_line_magic("dict_panel", "")
    try:
        assert isinstance(panel, DictPanel)
        assert panel.wait(WAIT_S)
        tick(panel, sandbox.entry("12"))
        panel.delete_button.click()
        confirm_and_wait(panel)
        assert [r.entry_id for r in changes(sandbox)] == ["12"]
    finally:
        panel.close()


# -- edit and add: checked, then armed like every change ---------------------------------------


def open_edit(panel: DictPanel, entry: Entry) -> None:
    panel.clear_button.click()
    search(panel, entry.from_text)
    tick(panel, entry)
    panel.edit_button.click()
    assert visible(panel.edit_form) and panel.edit_form.entry == entry


def test_edit_needs_exactly_one_ticked_entry(panel: DictPanel, sandbox: SandboxServer) -> None:
    assert panel.edit_button.disabled
    tick(panel, sandbox.entry("1"))
    assert not panel.edit_button.disabled
    tick(panel, sandbox.entry("2"))
    assert panel.edit_button.disabled
    panel.edit_button.click()  # disabled in the browser; from code it says why
    assert "Tick exactly one entry" in panel.status.value and not visible(panel.edit_form)


def test_edit_shows_old_and_new_before_anything_is_sent(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    meeting = sandbox.entry("10")  # 会議 -> meeting
    open_edit(panel, meeting)
    assert panel.edit_form.source_text.value == "会議"
    assert panel.edit_form.target_text.value == "meeting"
    assert "Edit entry <code>10</code>" in panel.edit_form.title.value
    panel.edit_form.review_button.click()  # nothing typed: nothing to confirm
    assert panel.state == "idle" and "Nothing changed" in panel.status.value
    panel.edit_form.source_text.value = "会議 <b>&"
    panel.edit_form.target_text.value = "conference"
    panel.edit_form.review_button.click()
    assert panel.state == "armed" and panel.armed == "update"
    message = panel.confirm_message.value
    assert "Change entry <code>10</code>" in message
    assert '<del><span lang="ja">会議</span></del>' in message
    assert "会議 &lt;b&gt;&amp;" in message and "<b>&" not in message
    assert "meeting" in message and "conference" in message
    assert "Undo" in message
    assert enabled(panel) == {"confirm", "cancel"}
    assert panel.edit_form.review_button.disabled and panel.add_form.add_button.disabled
    panel.cancel_button.click()
    assert panel.state == "idle" and changes(sandbox) == [] and sandbox.entry("10") == meeting
    assert [r.method for r in sandbox.requests if r.method != "GET"] == []


@pytest.mark.parametrize(
    ("source", "target", "words"),
    [
        ("", "x", "fromText is empty"),
        ("a" * 256, "x", "256 characters"),
        ("ok", "   ", "toText is empty"),
    ],
)
def test_an_edit_the_service_would_refuse_is_not_armed(
    panel: DictPanel, sandbox: SandboxServer, source: str, target: str, words: str
) -> None:
    open_edit(panel, sandbox.entry("3"))
    panel.edit_form.source_text.value = source
    panel.edit_form.target_text.value = target
    panel.edit_form.review_button.click()
    assert panel.state == "idle" and "dict-magics-status-error" in panel.status.value
    assert "Not sent" in panel.status.value and words in panel.status.value
    assert changes(sandbox) == []


def test_the_add_form_offers_the_service_language_codes_and_checks_first(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    form = panel.add_form
    codes = set(form.from_lang.options)
    assert {"ja", "en", "zh-CN", "zh-TW"} <= codes and "zh" not in codes
    assert set(form.to_lang.options) == codes == set(LANGUAGE_CODES)
    form.from_text.value = "見積依頼"
    form.add_button.click()  # no target yet
    assert panel.state == "idle" and "toText is empty" in panel.status.value
    form.to_text.value = "request for quotation"
    form.add_button.click()
    assert panel.state == "armed" and panel.armed == "add"
    message = panel.confirm_message.value
    assert '<span lang="ja">見積依頼</span>' in message and "request for quotation" in message
    assert "already exists" not in message
    panel.cancel_button.click()
    assert changes(sandbox) == []
    form.from_text.value, form.to_text.value = "会議", "meeting"  # entry 10 has these terms
    form.add_button.click()
    assert "already exists (id 10)" in panel.confirm_message.value
    panel.cancel_button.click()
    assert changes(sandbox) == []


def test_an_edit_is_sent_after_confirm_and_undo_puts_the_old_terms_back(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    meeting = sandbox.entry("10")  # 会議 -> meeting
    open_edit(panel, meeting)
    panel.edit_form.source_text.value = "定例会議"
    panel.edit_form.review_button.click()
    confirm_and_wait(panel)
    puts = [r for r in sandbox.requests if r.method == "PUT"]
    assert [r.entry_id for r in puts] == ["10"]
    assert sandbox.entry("10") == Entry("10", "ja", "定例会議", "en", "meeting")
    result = panel.history[-1]
    assert isinstance(result, UpdateResult) and result.ok
    assert result.old == meeting and result.snapshot
    assert read_snapshot(result.snapshot).entries == [meeting]  # kept before the PUT
    assert "定例会議" in panel.result.value
    assert not visible(panel.edit_form) and panel.state == "idle"
    search(panel, "定例")
    assert panel.shown == [sandbox.entry("10")]  # listed again: the table shows the new terms
    assert panel.undo is not None and not panel.undo_button.disabled

    panel.undo_button.click()
    assert panel.wait(WAIT_S)
    assert sandbox.entry("10") == meeting  # the same id, its old terms
    assert len(sandbox.entries) == 100
    assert [r.entry_id for r in sandbox.requests if r.method == "PUT"] == ["10", "10"]
    assert panel.undo is None and panel.undo_button.disabled
    assert panel.matches == []  # "定例" is gone
    search(panel, "会議")
    assert sandbox.entry("10") in panel.shown


def test_a_refused_edit_shows_the_vendor_code_and_words(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    open_edit(panel, sandbox.entry("4"))
    panel.edit_form.target_text.value = "road"
    panel.edit_form.review_button.click()
    sandbox.clear_log()
    sandbox.fail_next(1, 400, method="PUT")  # the PUT (after the fresh listing of the old terms)
    confirm_and_wait(panel)
    assert [r.method for r in sandbox.requests if r.method != "GET"][:1] == ["PUT"]
    result = panel.history[-1]
    assert isinstance(result, UpdateResult) and not result.ok
    assert "HTTP 400" in panel.result.value and "dict-magics-failure" in panel.result.value
    assert sandbox.entry("4").to_text == "street"
    assert visible(panel.edit_form)  # still open: try again, or Close
    assert panel.undo is None and panel.state == "idle"


def test_cancel_while_an_edit_runs_leaves_the_panel_usable(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    open_edit(panel, sandbox.entry("2"))
    panel.edit_form.target_text.value = "Faktura"
    panel.edit_form.review_button.click()
    sandbox.pause()
    panel.confirm_button.click()
    assert panel.state == "running" and panel.running == "update"
    assert enabled(panel) == {"cancel"} and panel.edit_form.review_button.disabled
    panel.cancel_button.click()
    assert "Cancelling" in panel.status.value
    sandbox.resume()
    assert panel.wait(WAIT_S)
    assert panel.state == "idle"
    # One PUT at most; what the service holds is what the panel lists.
    assert len([r for r in sandbox.requests if r.method == "PUT"]) <= 1
    assert sandbox.entry("2") in panel.entries


def test_add_sends_after_confirm_and_the_new_entry_appears(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    form = panel.add_form
    form.from_lang.value, form.to_lang.value = "ja", "zh-CN"
    form.from_text.value, form.to_text.value = "見積依頼", "询价"
    form.add_button.click()
    confirm_and_wait(panel)
    result = panel.history[-1]
    assert isinstance(result, AddResult) and result.ok
    new_id = result.entry.id
    assert sandbox.entry(new_id) == Entry(new_id, "ja", "見積依頼", "zh-CN", "询价")
    assert [r.method for r in changes(sandbox)] == ["POST"]
    assert form.from_text.value == "" and form.to_lang.value == "zh-CN"  # ready for the next
    search(panel, "询价")
    assert [e.id for e in panel.shown] == [new_id]
    assert "见" not in panel.status.value


def test_an_add_whose_copy_appeared_since_the_panels_listing_sends_nothing(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    """The panel's listing has no entry with these terms, so its confirmation names none; the
    same entry is added meanwhile (a notebook cell, a colleague). Confirm adds no second copy:
    the answer is "not added ... already holds", nothing sent. Before: the panel always passed
    ``duplicate=True`` and added the copy unasked."""
    form = panel.add_form
    form.from_lang.value, form.to_lang.value = "ja", "zh-CN"
    form.from_text.value, form.to_text.value = "見積依頼", "询价"
    form.add_button.click()
    assert "already exists" not in panel.confirm_message.value
    sandbox.add_entries([Entry("500", "ja", "見積依頼", "zh-CN", "询价")])  # behind its back
    sandbox.clear_log()
    confirm_and_wait(panel)
    result = panel.history[-1]
    assert isinstance(result, NoChange) and result.ids == ["500"]
    assert changes(sandbox) == []
    assert [e.id for e in sandbox.entries.values() if e.to_text == "询价"] == ["500"]


def test_an_add_the_confirmation_named_as_a_copy_is_added(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    """The confirmation said an entry already has these terms; Confirm adds the copy."""
    twin = sandbox.entry("4")
    assert twin is not None
    form = panel.add_form
    form.from_lang.value, form.to_lang.value = twin.from_lang, twin.to_lang
    form.from_text.value, form.to_text.value = twin.from_text, twin.to_text
    form.add_button.click()
    assert "already exists" in panel.confirm_message.value
    confirm_and_wait(panel)
    result = panel.history[-1]
    assert isinstance(result, AddResult) and result.ok
    copies = [e.id for e in sandbox.entries.values() if e.terms == twin.terms]
    assert len(copies) == 2 and "4" in copies


def test_a_refused_add_shows_the_vendor_code_and_words(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    form = panel.add_form
    form.from_text.value, form.to_text.value = "<img src=x>", "x"
    form.add_button.click()
    sandbox.clear_log()
    sandbox.fail_next(1, 400, method="POST")
    confirm_and_wait(panel)
    result = panel.history[-1]
    assert isinstance(result, AddResult) and not result.ok
    assert "<img" not in panel.result.value and "<img" not in panel.confirm_message.value
    assert len(sandbox.entries) == 100


# -- sync: upload, plan, confirm, undo ---------------------------------------------------------


def upload(panel: DictPanel, name: str, text: str) -> None:
    """What the browser sends when a file is chosen in the FileUpload."""
    content = text.encode("utf-8")
    panel.sync_form.upload.value = (
        {
            "name": name,
            "type": "text/csv",
            "size": len(content),
            "content": memoryview(content),
            "last_modified": datetime.now(timezone.utc),
        },
    )


GLOSSARY = (
    "fromLang,fromText,toLang,toText\n"
    "ja,会議,en,conference\n"  # entry 10 reads 会議 -> meeting: an update
    "ja,見積依頼,en,request for quotation\n"  # new: an add
    "en,invoice,de,Rechnung\n"  # entry 2, as it is: unchanged
)


def test_a_sync_shows_its_plan_and_sends_nothing_until_confirmed(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    panel.sync_form.plan_button.click()
    assert "Choose a glossary file first" in panel.status.value
    upload(panel, "../../glossary.csv", GLOSSARY)
    sandbox.clear_log()
    panel.sync_form.plan_button.click()
    assert panel.wait(WAIT_S)
    assert [r.method for r in sandbox.requests] in ([], ["GET"])  # a listing at most
    assert panel.state == "armed" and panel.armed == "sync"
    plan = panel.confirm_message.value  # the plan, in the confirmation
    assert "Sync plan for glossary.csv" in plan  # the name uploaded, no folders, no temp path
    assert "1 add, 1 update, 0 deletes, 1 unchanged" in plan
    assert "conference" in plan and "見積依頼" in plan
    assert "Apply this sync" in panel.confirm_message.value
    assert "1 add, 1 update" in panel.confirm_message.value
    assert enabled(panel) == {"confirm", "cancel"}
    panel.cancel_button.click()
    assert panel.state == "idle" and changes(sandbox) == []
    assert sandbox.entry("10").to_text == "meeting"


def test_a_confirmed_sync_is_applied_and_undo_puts_the_dictionary_back(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    before = terms_of(sandbox)
    upload(panel, "glossary.csv", GLOSSARY)
    panel.sync_form.plan_button.click()
    assert panel.wait(WAIT_S) and panel.armed == "sync"
    confirm_and_wait(panel)
    assert sandbox.entry("10").to_text == "conference"  # updated in place, the same id
    assert ("ja", "見積依頼", "en", "request for quotation") in terms_of(sandbox)
    assert len(sandbox.entries) == 101
    result = panel.history[-1]
    assert isinstance(result, SyncResult) and result.ok and result.snapshot
    assert panel.undo is not None and "glossary.csv" in panel.undo.what
    search(panel, "見積依頼")
    assert len(panel.shown) == 1  # listed again
    panel.undo_button.click()
    assert panel.wait(WAIT_S)
    assert terms_of(sandbox) == before
    assert sandbox.entry("10").to_text == "meeting"
    assert panel.undo is None and panel.state == "idle"


def test_invalid_rows_stop_the_sync_unless_skipped(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    upload(panel, "bad.csv", GLOSSARY + "zh,人工智能,en,AI\nja,,en,empty\n")
    panel.sync_form.plan_button.click()
    assert panel.wait(WAIT_S)
    assert panel.state == "idle" and "invalid rows" in panel.status.value
    assert "2 invalid rows" in panel.sync_form.plan_html.value
    # What the file lacks is kept; the panel says how to ask for it with its own checkbox.
    assert (
        "not in the file are kept; to delete them too, plan again with \u201calso delete "
        "entries of the file&#x27;s language pairs that it lacks\u201d ticked"
    ) in panel.sync_form.plan_html.value
    assert "--delete-missing" not in panel.sync_form.plan_html.value
    panel.sync_form.skip_invalid.value = True
    panel.sync_form.plan_button.click()
    assert panel.wait(WAIT_S) and panel.armed == "sync"
    confirm_and_wait(panel)
    assert sandbox.entry("10").to_text == "conference"
    assert not any(t[1] == "" for t in terms_of(sandbox))


def test_a_file_that_is_not_a_glossary_is_an_error_and_nothing_is_sent(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    upload(panel, "notes.csv", "just,some,words\n<b>x</b>,y,z\n")
    panel.sync_form.plan_button.click()
    assert panel.wait(WAIT_S)
    assert panel.state == "idle" and "dict-magics-status-error" in panel.status.value
    assert "fromLang" in panel.status.value and "<b>x" not in panel.status.value
    assert changes(sandbox) == []


# -- problems and check: offline, over the entries listed --------------------------------------


def test_problems_are_grouped_by_kind_and_select_these_feeds_the_delete_flow(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    sandbox.add_entries(
        [
            Entry("901", "ja", "会議", "en", "meeting"),  # a copy of entry 10
            Entry("902", "ja", "会議", "en", "meeting"),  # and another
            Entry("903", "en", "<b>invoice ", "de", "Rechnung"),  # a stray space
        ]
    )
    panel.refresh_button.click()
    assert panel.wait(WAIT_S)
    sandbox.clear_log()
    panel.problems.find_button.click()
    assert panel.wait(WAIT_S)
    assert sandbox.requests == []  # the listing the panel holds: nothing is sent
    report = panel.problems.report_html.value
    assert "duplicate" in report and "whitespace" in report
    assert "&lt;b&gt;invoice" in report and "<b>invoice" not in report
    buttons = panel.problems.select_buttons
    assert buttons["duplicate"].description == "Select duplicate (2)"
    assert "Found " in panel.status.value

    buttons["duplicate"].click()  # every copy but the lowest id
    assert panel.selected == ["901", "902"]
    assert panel.delete_button.description == "Delete selected (2)"
    panel.delete_button.click()
    message = panel.confirm_message.value
    assert "Delete 2 entries" in message and "会議" in message
    confirm_and_wait(panel)
    assert sandbox.entry("901") is None and sandbox.entry("902") is None
    assert sandbox.entry("10") is not None  # the one kept
    # Listed again: the Problems view follows, the duplicates are gone from it.
    assert "duplicate" not in panel.problems.select_buttons
    panel.undo_button.click()
    assert panel.wait(WAIT_S)
    # The snapshot kept both copies (and counts the one that stayed): both come back.
    assert len([t for t in sandbox.terms if t == ("ja", "会議", "en", "meeting")]) == 3
    assert panel.problems.select_buttons["duplicate"].description == "Select duplicate (2)"
    panel.problems.select_buttons["whitespace"].click()
    assert panel.selected == ["903"]
    assert not panel.edit_button.disabled  # one entry: Edit selected… fixes it


def test_check_shows_which_entries_apply_per_element_and_which_hit_the_limit(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    panel.check_form.check_button.click()
    assert "Paste a text" in panel.status.value
    sandbox.add_entries(
        [Entry(str(900 + i), "ja", term, "en", f"t{i}") for i, term in enumerate("甲乙丙丁")]
    )
    panel.refresh_button.click()
    assert panel.wait(WAIT_S)
    sandbox.clear_log()
    panel.check_form.text.value = "甲乙丙丁の会議。<script>x</script>請求書です。"
    panel.check_form.check_button.click()
    assert panel.wait(WAIT_S)
    assert sandbox.requests == []  # offline
    shown = panel.check_form.report_html.value
    assert "<script>" not in shown and "&lt;script&gt;" in shown
    expected = EntryList(panel.entries).check(panel.check_form.text.value)
    (element,) = expected.segments  # one line: one element, the limit counts across it
    assert sum(m.applied for m in element.matches) == 3
    assert [m.entry.from_text for m in element.matches][:4] == list("甲乙丙丁")
    assert "limit" in shown  # the two that hit the limit of 3 are named
    assert "請求書" in shown


def test_the_panel_restores_an_update_snapshot(
    panel: DictPanel, sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An update made elsewhere (%dict_update) is undone from the panel's snapshot choice:
    the old terms go back under the same id."""
    from conftest import point_at

    from dict_magics.operations.context import OperationSettings
    from dict_magics.operations.update import update

    point_at(monkeypatch, sandbox)
    old = sandbox.entry("7")
    assert update(OperationSettings(workers=1), "7", to_text="changed").ok
    panel.refresh_button.click()
    assert panel.wait(WAIT_S)
    (latest,) = list_snapshots(profile="default", host=f"127.0.0.1:{sandbox.port}")
    assert latest.operation == "update"
    panel.snapshot_dropdown.value = str(latest.path)
    panel.restore_button.click()
    assert panel.state == "armed" and panel.armed == "restore"
    confirm_and_wait(panel)
    assert sandbox.entry("7") == old
    assert "put back 1 entry" in panel.result.value


def test_undo_follows_a_delete_whose_outcome_is_unknown(sandbox: SandboxServer) -> None:
    """The result of a delete that may have gone says 'Snapshot kept at X: Undo puts it back';
    Undo must then put back X, not the snapshot of the change before it (found by review3)."""
    client = DictionaryClient(
        sandbox.url, sandbox.access_key, sandbox.secret_key, timeout=0.5, max_retries=0
    )
    # The listing shown is reused for the snapshot, so the listing that would settle the
    # outcome afterwards is the only GET, and it fails.
    panel = DictPanel(client, profile="default", workers=4, listing_max_age=600)
    try:
        assert panel.wait(WAIT_S)
        search(panel, "Meeting")
        first = panel.matches[0]
        tick(panel, first)
        panel.delete_button.click()
        confirm_and_wait(panel)
        assert panel.undo is not None and sandbox.entry(first.id) is None
        second = panel.matches[0]
        tick(panel, second)
        panel.delete_button.click()
        sandbox.inject("hang", delay=3, method="DELETE")
        sandbox.inject("status", 50, status=503, method="GET")
        confirm_and_wait(panel)
        result = panel.history[-1]
        assert result.outcome_unknown and result.snapshot
        assert f"Snapshot kept at <code>{result.snapshot}</code>: Undo puts it back." in (
            panel.result.value
        )
        assert panel.undo is not None and panel.undo.snapshot == result.snapshot
    finally:
        panel.close()


# -- impact on a corpus: "changes N of M sample lines" in each confirmation --------------------

CORPUS = ["明日の会議は金曜日です。<img src=x>", "invoice and meeting", "nothing"]


def test_confirmations_say_how_many_sample_lines_the_change_changes(
    sandbox: SandboxServer,
) -> None:
    panel = make_panel(sandbox, corpus=CORPUS)
    try:
        tick(panel, sandbox.entry("10"))  # 会議 -> meeting: line 1
        panel.delete_button.click()
        message = panel.confirm_message.value
        summary = '<details class="dict-magics-panel-impact"><summary>changes 1 of 3 sample lines'
        assert summary in message
        details = message.split("<summary>")[1]  # the lines themselves, a click away
        assert "明日の会議は金曜日です。&lt;img src=x&gt;" in details and "<img" not in details
        assert "会議 \u2192 meeting" in details and "no longer applied (deleted)" in details
        panel.cancel_button.click()
        open_edit(panel, sandbox.entry("2"))  # invoice -> Rechnung (en->de): line 2
        panel.edit_form.target_text.value = "Faktura"
        panel.edit_form.review_button.click()
        assert panel.armed == "update"
        assert "changes 1 of 3 sample lines" in panel.confirm_message.value
        assert "Rechnung \u2192 Faktura" in panel.confirm_message.value
        panel.cancel_button.click()
        panel.add_form.from_text.value, panel.add_form.to_text.value = "nothing", "nichts"
        panel.add_form.from_lang.value, panel.add_form.to_lang.value = "en", "de"
        panel.add_form.add_button.click()
        assert panel.armed == "add" and "changes 1 of 3 sample lines" in panel.confirm_message.value
        panel.cancel_button.click()
        upload(panel, "glossary.csv", GLOSSARY)  # 会議 -> conference: line 1 again
        panel.sync_form.plan_button.click()
        assert panel.wait(WAIT_S) and panel.armed == "sync"
        message = panel.confirm_message.value
        assert "Sync plan for glossary.csv" in message
        assert message.index("Sync plan") < message.index("changes 1 of 3 sample lines")
        panel.cancel_button.click()
        assert changes(sandbox) == []
    finally:
        panel.close()


def test_without_a_corpus_a_confirmation_says_nothing_of_sample_lines(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    tick(panel, sandbox.entry("10"))
    panel.delete_button.click()
    assert panel.armed == "delete" and "sample line" not in panel.confirm_message.value


def test_the_panel_takes_the_corpus_from_the_magics_config(
    request: pytest.FixtureRequest,
    sandbox: SandboxServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path,
) -> None:
    ip = request.getfixturevalue("ip")
    for name, value in sandbox.env().items():
        monkeypatch.setenv(name, value)
    corpus = tmp_path / "texts.txt"
    corpus.write_text("\n".join(CORPUS), encoding="utf-8")
    monkeypatch.setenv("DICT_MAGICS_CORPUS", str(tmp_path / "not-this-one.txt"))
    ip.run_line_magic("config", f"DictMagics.corpus = {str(corpus)!r}")
    panel = ip.run_line_magic("dict_panel", "")
    try:
        assert panel.wait(WAIT_S)
        tick(panel, sandbox.entry("10"))
        panel.delete_button.click()
        assert "changes 1 of 3 sample lines" in panel.confirm_message.value
    finally:
        panel.close()
