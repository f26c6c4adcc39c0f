"""The vendor's GET (listing) and POST (add) through DictionaryClient, over real loopback HTTP.

A listing is read-only: it is retried like a DELETE, and anything unusable raises a
``ServiceError`` that says what is wrong. An addition is never sent twice once it may have
reached the service: such an outcome is unknown, and the sandbox's log shows it was added once.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from dict_magics.errors import (
    DictMagicsError,
    InvalidEntryError,
    ListingUnsupportedError,
    ServiceError,
)
from dict_magics.models import Cause, Entry, EntryList
from dict_magics.sandbox import SandboxServer
from dict_magics.sandbox.checks import sign
from dict_magics.service.client import DictionaryClient
from dict_magics.service.http import nonces_for

SATURDAY = Entry("", "ja", "土曜日", "en", "SAT")


def client_for(sandbox: SandboxServer, **options: object) -> DictionaryClient:
    options.setdefault("backoff", 0.01)
    options.setdefault("timeout", 1.0)
    return DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key, **options)


def adds(sandbox: SandboxServer) -> list:
    """The POSTs the sandbox acted on (answered or not)."""
    return [
        r
        for r in sandbox.requests
        if r.operation == "add" and (r.outcome == "success" or r.outcome.endswith("(applied)"))
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- listing ----------------------------------------------------------------------------------


def test_listing_returns_every_entry_with_its_terms(sandbox: SandboxServer) -> None:
    listing = client_for(sandbox).list_entries()
    assert isinstance(listing, EntryList) and len(listing) == 100
    assert listing.host == f"127.0.0.1:{sandbox.port}"
    assert listing.by_id() == sandbox.entries
    [record] = sandbox.requests
    assert (record.method, record.path, record.operation) == ("GET", "/api/v1/dictionary", "list")
    assert record.headers["signature"] == sign(
        "/api/v1/dictionary", sandbox.secret_key, record.headers["nonce"]
    )
    assert record.headers.get("Content-Length", "0") == "0"


def test_an_empty_dictionary_lists_as_empty() -> None:
    with SandboxServer(0) as sandbox:
        listing = client_for(sandbox).list_entries()
    assert len(listing) == 0 and listing.ids == []
    assert str(listing).startswith("no entries at 127.0.0.1:")


def test_a_hundred_thousand_entries_parse_and_render_small() -> None:
    with SandboxServer(100_000) as sandbox:
        listing = client_for(sandbox, timeout=15).list_entries()
        expected = sandbox.entries
    assert len(listing) == 100_000 and listing.by_id() == expected
    html = listing._repr_html_()
    assert len(html.encode()) < 200_000 and "and 99800 more (total 100000)" in html


def test_a_listing_without_listing_support_says_so() -> None:
    with SandboxServer(5, listing=False) as sandbox:
        with pytest.raises(ListingUnsupportedError) as caught:
            client_for(sandbox).list_entries()
    assert caught.value.http_status == 404 and "offers no listing" in caught.value.reason


def test_a_malformed_listing_names_the_problem(sandbox: SandboxServer) -> None:
    sandbox.inject("malformed_listing")
    with pytest.raises(ServiceError) as caught:
        client_for(sandbox).list_entries()
    assert not isinstance(caught.value, ListingUnsupportedError)
    assert caught.value.cause is Cause.BAD_ANSWER
    assert "malformed" in caught.value.reason and "lacks toText" in caught.value.reason


def test_a_listing_is_retried_like_a_delete(sandbox: SandboxServer) -> None:
    sandbox.fail_next(2, 503, retry_after=0, method="GET")
    assert len(client_for(sandbox).list_entries()) == 100
    assert [r.http_status for r in sandbox.requests] == [None, None, 200]
    assert len({r.headers["nonce"] for r in sandbox.requests}) == 3


@pytest.mark.parametrize(
    ("setup", "cause"),
    [
        (lambda s: s.fail_next(9, 503, method="GET"), Cause.UNAVAILABLE),
        (lambda s: s.fail_next(9, 429, retry_after=1, method="GET"), Cause.RATE_LIMITED),
        (lambda s: s.inject("hang", delay=2, method="GET"), Cause.TIMEOUT),
        (lambda s: s.inject("drop_after", 9, method="GET"), Cause.CONNECTION_LOST),
        (lambda s: s.fail_next(1, 500, method="GET"), Cause.REFUSED),
        (lambda s: s.inject("html", method="GET"), Cause.BAD_ANSWER),
    ],
)
def test_listing_trouble_is_a_service_error_with_a_cause(
    sandbox: SandboxServer, setup, cause: Cause
) -> None:
    setup(sandbox)
    with pytest.raises(ServiceError) as caught:
        client_for(sandbox, max_retries=1, timeout=0.5, rate_limit_patience=0.5).list_entries()
    assert not isinstance(caught.value, ListingUnsupportedError)
    assert caught.value.cause is cause and "could not list" in caught.value.reason


def test_a_listing_with_refused_credentials(sandbox: SandboxServer) -> None:
    with pytest.raises(ServiceError) as caught:
        DictionaryClient(sandbox.url, sandbox.access_key, "wrong-secret").list_entries()
    assert caught.value.cause is Cause.AUTH and caught.value.http_status == 401


def test_a_listing_from_nowhere() -> None:
    client = DictionaryClient(f"http://127.0.0.1:{free_port()}", "a", "s", max_retries=0)
    with pytest.raises(ServiceError) as caught:
        client.list_entries()
    assert caught.value.cause is Cause.UNAVAILABLE and "could not connect" in caught.value.reason


class _Canned(BaseHTTPRequestHandler):
    """Answers every GET with the server's canned status, content type and body."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        status, content_type, body = self.server.canned
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def canned() -> Iterator[ThreadingHTTPServer]:
    """A loopback server that says whatever a test wants a service to say."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Canned)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def listing_from(server: ThreadingHTTPServer, status: int, body: object) -> EntryList:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    server.canned = (status, "application/json", raw)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    return DictionaryClient(url, "a", "s", max_retries=0).list_entries()


GOOD = {"id": 1, "fromLang": "ja", "fromText": "金曜日", "toLang": "en", "toText": "FRI"}


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"status": "success"}, "neither 'data.entries' nor 'entries'"),
        ({"status": "success", "data": []}, "neither 'data.entries' nor 'entries'"),
        ({"status": "success", "data": {}}, "neither 'data.entries' nor 'entries'"),
        ({"status": "success", "data": {"entries": {"1": GOOD}}}, "'entries' is not a list"),
        ({"status": "success", "entries": "1"}, "'entries' is not a list"),
        ({"status": "success", "data": {"entries": [GOOD, [1, 2]]}}, "item 2 of 2"),
        ({"status": "success", "data": {"entries": [{**GOOD, "id": None}]}}, "whole number"),
        ({"status": "success", "data": {"entries": [{**GOOD, "id": True}]}}, "whole number"),
        ({"status": "success", "data": {"entries": [{**GOOD, "id": "abc"}]}}, "whole number"),
        ({"status": "success", "entries": [{**GOOD, "id": "1.5"}]}, "whole number"),
        ({"status": "success", "data": {"entries": [{**GOOD, "toLang": 7}]}}, "not text"),
        ({"result": "ok"}, "has no status"),
    ],
)
def test_malformed_listings_are_service_errors(
    canned: ThreadingHTTPServer, body: object, problem: str
) -> None:
    with pytest.raises(ServiceError) as caught:
        listing_from(canned, 200, body)
    assert not isinstance(caught.value, ListingUnsupportedError)
    assert problem in caught.value.reason


@pytest.mark.parametrize("shape", ["data.entries", "entries"])
def test_both_documented_shapes_list_with_ids_as_numbers_or_digit_strings(
    canned: ThreadingHTTPServer, shape: str
) -> None:
    entries = [GOOD, {**GOOD, "id": "017", "fromText": "会議", "toText": "meeting"}]
    body = {"data": {"entries": entries}} if shape == "data.entries" else {"entries": entries}
    listing = listing_from(canned, 200, {"status": "success", **body})
    assert listing.ids == ["1", "17"] and listing[1].describe() == "会議 → meeting (ja→en)"


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (405, {"status": "failure", "message": "method GET not allowed"}),
        (404, b"<html>Not Found</html>"),
    ],
)
def test_no_listing_endpoint(canned: ThreadingHTTPServer, status: int, body: object) -> None:
    with pytest.raises(ListingUnsupportedError):
        listing_from(canned, status, body)


@pytest.mark.parametrize("body", [b"<html>a web page, not a listing</html>", b""])
def test_a_200_that_is_not_a_listing_is_a_failed_listing_not_no_listing(
    canned: ThreadingHTTPServer, body: bytes
) -> None:
    """A gateway's page answered 200 is this listing failing, not the service having none:
    taken for "no listing", it let deletes go ahead without a copy (issue 22, item 4)."""
    with pytest.raises(ServiceError) as raised:
        listing_from(canned, 200, body)
    assert not isinstance(raised.value, ListingUnsupportedError)


# -- adding -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "terms",
    [
        ("ja", "土曜日", "en", "SAT"),
        ("de", "Straße", "en", "street"),
        ("ar", "\u0645\u0631\u062d\u0628\u0627", "en", "hello"),
        ("en", "thumbs up \U0001f44d", "ja", "いいね"),
        ("en", 'quote " and \\ backslash', "fr", "guillemet « »"),
    ],
)
def test_add_entry_with_any_terms(sandbox: SandboxServer, terms: tuple[str, ...]) -> None:
    entry = Entry("", *terms)
    result = client_for(sandbox).add_entry(entry)
    assert result.ok and result.attempts == 1 and result.cause is Cause.OK, result
    assert result.entry == entry and result.http_status == 200
    [record] = adds(sandbox)
    assert record.entry.terms == entry.terms
    assert terms in sandbox.terms
    assert entry.terms in [e.terms for e in client_for(sandbox).list_entries()]


def test_add_entry_needs_an_entry(sandbox: SandboxServer) -> None:
    with pytest.raises(DictMagicsError, match="needs an Entry"):
        client_for(sandbox).add_entry({"fromLang": "ja"})  # type: ignore[arg-type]
    assert sandbox.requests == []


def test_an_entry_the_service_refuses_is_a_plain_failure(sandbox: SandboxServer) -> None:
    # The client checks terms first: an empty one is refused before any request...
    with pytest.raises(InvalidEntryError, match="fromText is empty"):
        client_for(sandbox).add_entry(Entry("", "ja", " ", "en", "SAT"))
    assert sandbox.requests == []
    # ...and what the service refuses all the same is a plain failure with its words.
    message = "Missing or invalid parameter(s): fromText is empty"
    sandbox.inject("coded", status=400, code=40202, message=message, method="POST")
    result = client_for(sandbox).add_entry(SATURDAY)
    assert result.outcome == "failure" and result.http_status == 400 and result.attempts == 1
    assert result.cause is Cause.INVALID and result.code == 40202
    assert f"[40202] {message}" in result.reason
    assert adds(sandbox) == []


@pytest.mark.parametrize(
    ("fault", "added"),
    [("drop_after", True), ("drop_before", False), ("truncated", True), ("empty_204", True)],
)
def test_a_post_that_may_have_arrived_is_never_sent_again(
    sandbox: SandboxServer, fault: str, added: bool
) -> None:
    sandbox.inject(fault, method="POST")
    result = client_for(sandbox, max_retries=5).add_entry(SATURDAY)
    assert result.outcome == "unknown" and result.attempts == 1, result
    assert "not sent again blindly" in result.reason
    assert len([r for r in sandbox.requests if r.method == "POST"]) == 1
    assert len(adds(sandbox)) == int(added)


def test_a_post_past_its_deadline_is_unknown_and_not_resent(sandbox: SandboxServer) -> None:
    sandbox.inject("hang", delay=2, method="POST")
    result = client_for(sandbox, timeout=0.5).add_entry(SATURDAY)
    assert result.outcome == "unknown" and result.cause is Cause.TIMEOUT
    assert result.attempts == 1 and result.elapsed < 0.5 + 1
    assert len(adds(sandbox)) == 1


def test_a_post_on_a_dropped_kept_alive_connection_is_not_resent(sandbox: SandboxServer) -> None:
    # A DELETE would be retried here; a POST might then be added twice.
    client = client_for(sandbox)
    assert client.add_entry(SATURDAY).ok
    sandbox.inject("drop_before", method="POST")
    result = client.add_entry(Entry("", "ja", "日曜日", "en", "SUN"))
    assert result.outcome == "unknown" and result.attempts == 1
    assert len([r for r in sandbox.requests if r.method == "POST"]) == 2


@pytest.mark.parametrize("code", [429, 503])
def test_a_post_the_service_did_not_act_on_is_sent_again(sandbox: SandboxServer, code: int) -> None:
    sandbox.fail_next(2, code, retry_after=0, method="POST")
    result = client_for(sandbox).add_entry(SATURDAY)
    assert result.ok and result.attempts == 3
    assert len(adds(sandbox)) == 1


@pytest.mark.parametrize("code", [502, 504])
def test_a_post_through_a_failing_gateway_is_unknown(sandbox: SandboxServer, code: int) -> None:
    sandbox.fail_next(1, code, method="POST")
    result = client_for(sandbox).add_entry(SATURDAY)
    assert result.outcome == "unknown" and result.attempts == 1
    assert result.cause is Cause.GATEWAY and result.http_status == code


def test_a_post_that_never_left_is_sent_again() -> None:
    port = free_port()
    sandbox = SandboxServer(0, port=port)

    class StartOnSecondAttempt(requests.Session):
        """The first attempt finds nothing listening; the sandbox starts before the second.
        (Nonces are drawn once connected, so no nonce source can tell attempts apart.)"""

        attempts = 0

        def request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            self.attempts += 1
            if self.attempts == 2:
                sandbox.start()
            return super().request(*args, **kwargs)

    session = StartOnSecondAttempt()
    session.trust_env = False
    client = DictionaryClient(
        f"http://127.0.0.1:{port}",
        sandbox.access_key,
        sandbox.secret_key,
        backoff=0.01,
        session=session,
    )
    try:
        result = client.add_entry(SATURDAY)
    finally:
        sandbox.stop()
    assert result.ok and result.attempts == 2
    assert len(adds(sandbox)) == 1


def test_a_post_with_a_reused_nonce_is_not_sent_again(sandbox: SandboxServer) -> None:
    """ "Nonce already used" (no vendor code) may be a gateway's replay of a POST the service
    acted on: never re-sent, reported unknown (a listing settles it)."""
    sandbox.inject(
        "status", status=401, message="nonce already used (replayed request)", method="POST"
    )
    result = client_for(sandbox).add_entry(SATURDAY)
    assert result.outcome_unknown and result.attempts == 1
    assert result.cause is Cause.NONCE_REUSED
    assert len(adds(sandbox)) == 0


def test_a_post_refused_with_40005_is_signed_afresh_and_added_once(sandbox: SandboxServer) -> None:
    """The vendor's 40005 says the request was not acted on: sent again, whatever the method."""
    stale = str(time.time_ns() // 1_000_000 - 60_000)
    assert client_for(sandbox, nonces=lambda: stale).delete_entry("1").ok
    given = iter([stale])
    client = client_for(
        sandbox, nonces=lambda: next(given, None) or nonces_for(sandbox.access_key)()
    )
    result = client.add_entry(SATURDAY)
    assert result.ok and not result.outcome_unknown and result.attempts == 2
    assert len(adds(sandbox)) == 1
