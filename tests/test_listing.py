"""Issue 12, seeing what you delete: %dict_list and list_entries against the real sandbox.

The listing is one signed GET; filters run on what it returned. A service without a listing,
or with a malformed one, gives one clear line, never a traceback, and nothing is changed.
"""

from __future__ import annotations

from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from dict_magics.errors import ListingUnsupportedError, ServiceError
from dict_magics.models import Entry, EntryList
from dict_magics.operations.context import OperationSettings
from dict_magics.operations.listing import CACHE, list_entries
from dict_magics.sandbox import SandboxServer


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    CACHE.forget()


@pytest.fixture
def env_creds(monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer) -> SandboxServer:
    for name, value in sandbox.env().items():
        monkeypatch.setenv(name, value)
    return sandbox


def ops(server: SandboxServer) -> list[tuple[str, str | None]]:
    return [(r.operation, r.entry_id) for r in server.requests]


def one_line_error(ip: Any, cell: str) -> str:
    with capture_output() as cap:
        result = ip.run_cell(cell)
    assert type(result.error_in_exec) is UsageError, (result.error_in_exec, cap.stderr)
    assert "Traceback" not in cap.stdout + cap.stderr
    message = str(result.error_in_exec)
    assert "\n" not in message
    return message


def test_list_returns_every_entry_as_the_service_has_it(env_creds: SandboxServer) -> None:
    listing = list_entries(OperationSettings())
    assert isinstance(listing, EntryList) and len(listing) == 100
    assert listing.by_id() == env_creds.entries
    assert listing.host == env_creds.url.removeprefix("http://")
    assert ops(env_creds) == [("list", None)]


def test_every_filter_and_their_combination(env_creds: SandboxServer) -> None:
    everything = list(env_creds.entries.values())
    settings = OperationSettings()

    def expect(match: str | None = None, src: str | None = None, dst: str | None = None):
        return [e for e in everything if e.matches(match, src, dst)]

    assert list_entries(settings, match="INVOICE").entries == expect("invoice")
    assert list_entries(settings, from_lang="JA").entries == expect(src="ja")
    assert list_entries(settings, to_lang="de").entries == expect(dst="de")
    both = list_entries(settings, match="in", from_lang="en", to_lang="de")
    assert both.entries == expect("in", "en", "de") and both.entries
    assert all(e.from_lang == "en" and e.to_lang == "de" for e in both)
    assert list_entries(settings, match="no such term anywhere").entries == []
    assert len(env_creds.requests) == 5  # one GET each, nothing else


def test_non_ascii_terms_match_and_render(env_creds: SandboxServer) -> None:
    env_creds.add_entries(
        [
            Entry("500", "ja", "金曜日の会議", "en", "Friday meeting"),
            Entry("501", "de", "Straße", "en", "street"),
            Entry("502", "zh", "数据库", "en", "database"),
        ]
    )
    found = list_entries(OperationSettings(), match="曜日の")
    assert found.ids == ["500"]
    assert "501" in list_entries(OperationSettings(), match="STRASSE").ids  # casefold: ß = ss
    assert list_entries(OperationSettings(), match="数据").ids == ["502"]
    text, html = str(found), found._repr_html_()
    assert "金曜日の会議" in text and "金曜日の会議" in html
    assert "1 entry at" in text


def test_the_magic_returns_a_table_and_its_ids_feed_delete(ip: Any, env_creds: SandboxServer):
    with capture_output() as cap:
        ip.run_cell("found = %dict_list --from-lang ja")
        ip.run_cell("found")
    found = ip.user_ns["found"]
    assert isinstance(found, EntryList) and len(found) > 1
    assert all(e.from_lang == "ja" for e in found)
    assert "金曜日" in cap.stdout and "source" in cap.stdout
    assert "<table>" in found._repr_html_()
    with capture_output():
        batch = ip.run_cell("%dict_delete {found.ids}").result
    assert {r.entry_id for r in batch.results} == set(found.ids) and batch.ok
    assert not set(found.ids) & set(env_creds.entries)
    assert [r.entry for r in batch.results] == found.entries  # the results name the terms


def test_a_pandas_column_of_ids_feeds_delete(ip: Any, env_creds: SandboxServer) -> None:
    pytest.importorskip("pandas")
    with capture_output():
        ip.run_cell("_found = %dict_list --to-lang de")
        ip.run_cell("df = _found.to_pandas()")
        wanted = [str(i) for i in ip.user_ns["df"]["id"]]
        result = ip.run_cell("%dict_delete {df['id']}").result
    assert len(wanted) > 1 and [r.entry_id for r in result.results] == wanted and result.ok
    assert not set(wanted) & set(env_creds.entries)


def test_an_empty_dictionary(ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with SandboxServer(0) as empty:
        for name, value in empty.env().items():
            monkeypatch.setenv(name, value)
        with capture_output() as cap:
            ip.run_cell("nothing = %dict_list")
            ip.run_cell("nothing")
        nothing = ip.user_ns["nothing"]
        assert len(nothing) == 0 and nothing.ids == []
        assert "no entries at 127.0.0.1:" in cap.stdout
        assert "no entries" in nothing._repr_html_()


def test_a_service_without_a_listing_is_one_clear_line(
    ip: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SandboxServer(5, listing=False) as bare:
        for name, value in bare.env().items():
            monkeypatch.setenv(name, value)
        with pytest.raises(ListingUnsupportedError):
            list_entries(OperationSettings())
        message = one_line_error(ip, "%dict_list")
        assert "offers no listing" in message and "HTTP 404" in message
        assert {r.method for r in bare.requests} == {"GET"}
        assert len(bare.entries) == 5


def test_a_malformed_listing_is_one_clear_line(ip: Any, env_creds: SandboxServer) -> None:
    env_creds.inject("malformed_listing")
    with pytest.raises(ServiceError, match="malformed"):
        list_entries(OperationSettings())
    for fault in ("malformed_listing", "deep_json", "huge", "no_status"):
        env_creds.inject(fault, method="GET")
        message = one_line_error(ip, "%dict_list")
        assert "127.0.0.1" in message, fault
    env_creds.inject("status", status=500, method="GET")
    one_line_error(ip, "%config DictMagics.max_retries = 0\n%dict_list")
    assert {r.method for r in env_creds.requests} == {"GET"}
    assert len(env_creds.entries) == 100


def test_listing_mistakes_are_refused_before_any_request(ip: Any, env_creds: SandboxServer):
    assert "unrecognized" in one_line_error(ip, "%dict_list --bogus")
    assert "profile" in one_line_error(ip, "%dict_list -p 'bad profile!'")
    assert env_creds.requests == []


def test_help_shows_the_options(ip: Any) -> None:
    from IPython.core.oinspect import getdoc  # what %dict_list? shows

    doc = getdoc(ip.find_line_magic("dict_list"))
    for option in ("--match", "--from-lang", "--to-lang", "-p", "{found.ids}"):
        assert option in doc
