"""Answers a real service (or a gateway before it) gives after acting, and inputs that used to
slip through: each was found by an adversarial review, and each is reported honestly now.

The services here are raw HTTP servers on 127.0.0.1 (``tests/rawserver.py``) whose bytes the
test decides, because no well-behaved server sends them.
"""

from __future__ import annotations

import itertools
import json
import time
import traceback
from collections.abc import Iterator

import pytest
from rawserver import FAILURE, SUCCESS, RawServer, answer

from dict_magics.errors import DictMagicsError, InvalidIdError
from dict_magics.sandbox import SandboxServer
from dict_magics.service.client import DictionaryClient


def _client(url: str) -> DictionaryClient:
    counter = itertools.count(int(time.time() * 1000))
    return DictionaryClient(
        url, "ak", "sk-test-secret", nonces=lambda: str(next(counter)), backoff=0.01
    )


class Service:
    """Entries by id; the first request of each (method, path) is answered with ``first``,
    after acting on it; later ones get the usual answers."""

    def __init__(self, first: bytes) -> None:
        self.entries = {"1": "a", "2": "b"}
        self.added: list[dict] = []
        self.first = first
        self.seen: set[tuple[str, str]] = set()
        self.server = RawServer(self.respond)

    def respond(self, conn, request, _n) -> None:
        method, path, _headers, body = request
        if method == "POST":
            self.added.append(json.loads(body))
        elif method == "DELETE" and self.entries.pop(path.rsplit("/", 1)[1], None) is None:
            conn.sendall(answer("404 Not Found", FAILURE))
            return
        if (method, path) not in self.seen:
            self.seen.add((method, path))
            conn.sendall(self.first)
            return
        conn.sendall(answer("200 OK", SUCCESS))


@pytest.fixture
def service() -> Iterator[type[Service]]:
    made: list[Service] = []

    def make(first: bytes) -> Service:
        made.append(Service(first))
        return made[-1]

    yield make  # type: ignore[misc]
    for svc in made:
        svc.server.close()


def test_an_interim_answer_never_hands_its_late_answer_to_the_next_request() -> None:
    """103 Early Hints, then the real 200 later: the connection must not be reused, or the next
    request reads that late 200 as its own (a refused delete reported as success)."""

    def respond(conn, request, _n) -> None:
        if request[1].endswith("/1"):
            conn.sendall(b"HTTP/1.1 103 Early Hints\r\nLink: </x.css>; rel=preload\r\n\r\n")
            time.sleep(0.3)
            conn.sendall(answer("200 OK", SUCCESS))
        else:
            conn.sendall(answer("404 Not Found", FAILURE))

    server = RawServer(respond)
    try:
        with _client(server.url) as client:
            first = client.delete_entry("1")
            second = client.delete_entry("2")
    finally:
        server.close()
    assert first.outcome == "unknown" and first.http_status == 103
    assert second.outcome == "failure" and second.http_status == 404


@pytest.mark.parametrize("code", ["301 Moved Permanently", "302 Found", "303 See Other"])
def test_a_redirect_after_acting_is_unknown_not_a_failure(service, code: str) -> None:
    svc = service(
        f"HTTP/1.1 {code}\r\nLocation: /api/v1/dictionary\r\nContent-Length: 0\r\n\r\n".encode()
    )
    with _client(svc.server.url) as client:
        result = client.delete_entry("1")
    assert "1" not in svc.entries  # the service did delete it
    assert result.outcome == "unknown" and result.cause.value == "redirect"
    assert result.attempts == 1  # and the redirect was not followed


@pytest.mark.parametrize("code", ["307 Temporary Redirect", "308 Permanent Redirect"])
def test_a_redirect_that_says_repeat_it_elsewhere_is_a_failure(code: str) -> None:
    def respond(conn, _request, _n) -> None:
        conn.sendall(f"HTTP/1.1 {code}\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n".encode())

    server = RawServer(respond)
    try:
        with _client(server.url) as client:
            result = client.delete_entry("1")
    finally:
        server.close()
    assert result.outcome == "failure" and result.cause.value == "redirect"


def test_a_4xx_whose_body_says_success_is_unknown(service) -> None:
    svc = service(answer("410 Gone", SUCCESS))
    with _client(svc.server.url) as client:
        result = client.delete_entry("1")
    assert "1" not in svc.entries
    assert result.outcome == "unknown" and result.http_status == 410


@pytest.mark.parametrize("ids", ["17", b"17", bytearray(b"17"), {"17": 1}])
def test_a_batch_of_ids_is_never_a_string_split_into_characters(
    sandbox: SandboxServer, ids: object
) -> None:
    with DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key) as client:
        with pytest.raises(InvalidIdError, match="a list of ids"):
            client.delete_entries(ids)  # type: ignore[arg-type]
    assert sandbox.requests == [] and len(sandbox.entries) == 100


def test_a_secret_that_is_not_utf8_is_refused_without_showing_it(sandbox: SandboxServer) -> None:
    secret = "sandbox-secret-\udcff-not-text"
    with pytest.raises(DictMagicsError) as info:
        DictionaryClient(sandbox.url, sandbox.access_key, secret)
    shown = "".join(
        traceback.TracebackException.from_exception(info.value, capture_locals=False).format()
    )
    assert "not valid UTF-8" in shown and "not-text" not in shown
    assert sandbox.requests == []
