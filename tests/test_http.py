"""``service.http`` on its own: one attempt, a Reply or a classified NetworkFailure.

Real HTTP over loopback to the sandbox. Timing checks assert that a call returned within its
timeout plus a margin: that is the behaviour under test, not a speed measurement.
"""

from __future__ import annotations

import gzip
import json
import socket
import time

import pytest

from dict_magics.sandbox import SandboxServer
from dict_magics.sandbox.checks import sign
from dict_magics.service.http import (
    ANSWER_LIMIT,
    API_PREFIX,
    HTTP,
    LISTING_LIMIT,
    NetworkFailure,
    Reply,
    SignatureAuth,
    decode_json,
    nonces_for,
)

TIMEOUT = 0.5


def http_for(url: str) -> HTTP:
    return HTTP(url)


def delete(sandbox: SandboxServer, entry_id: str, http: HTTP | None = None, **options: object):
    auth = SignatureAuth(sandbox.access_key, sandbox.secret_key, nonces_for(sandbox.access_key))
    options.setdefault("timeout", TIMEOUT)
    return (http or HTTP(sandbox.url)).send("DELETE", API_PREFIX + entry_id, auth, **options)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_plain_answer_is_a_reply_with_its_json(sandbox: SandboxServer) -> None:
    reply = delete(sandbox, "3")
    assert isinstance(reply, Reply)
    assert (reply.status, reply.data, reply.problem) == (200, {"status": "success"}, None)
    [record] = sandbox.requests
    # Signed over the exact path, identity asked, and nothing else needed.
    assert record.headers["signature"] == sign(
        record.path, sandbox.secret_key, record.headers["nonce"]
    )
    assert record.headers["Accept-Encoding"] == "identity"


def test_the_connection_is_kept_alive_and_reused(sandbox: SandboxServer) -> None:
    http = HTTP(sandbox.url)
    assert isinstance(delete(sandbox, "1", http), Reply)
    assert isinstance(delete(sandbox, "2", http), Reply)
    assert sandbox.connections_accepted == 1


def test_redirects_are_never_followed(sandbox: SandboxServer) -> None:
    sandbox.inject("redirect", location="http://127.0.0.1:9/elsewhere")
    reply = delete(sandbox, "3")
    assert isinstance(reply, Reply) and reply.status == 307
    assert reply.headers["Location"] == "http://127.0.0.1:9/elsewhere"


@pytest.mark.parametrize("kind", ["bom", "gzip_forced", "utf16"])
def test_answers_in_odd_encodings_are_decoded(sandbox: SandboxServer, kind: str) -> None:
    sandbox.inject(kind)
    reply = delete(sandbox, "3")
    assert isinstance(reply, Reply) and reply.data == {"status": "success"}, reply


def test_decode_json_undoes_what_servers_do() -> None:
    data = {"status": "success", "message": "金曜日"}
    text = json.dumps(data, ensure_ascii=False)
    for body in (
        text.encode(),
        b"\xef\xbb\xbf" + text.encode(),
        text.encode("utf-16"),
        text.encode("utf-32"),
        gzip.compress(text.encode()),
    ):
        assert decode_json(body, ANSWER_LIMIT)[:2] == (data, None), body[:8]
    assert decode_json(b" \r\n", ANSWER_LIMIT)[1] == "empty"
    assert decode_json(b"OK, deleted.", ANSWER_LIMIT)[1] == "not_json"
    assert decode_json(b"[" * 50_000, ANSWER_LIMIT)[1] == "not_json"
    assert decode_json(b"\x1f\x8bnot gzip at all", ANSWER_LIMIT)[1] == "bad_gzip"
    assert decode_json(gzip.compress(b'{"a": 1}')[:-8], ANSWER_LIMIT)[1] == "bad_gzip"


def test_a_gzip_bomb_is_not_unpacked_past_the_limit() -> None:
    bomb = gzip.compress(b'{"status": "success", "pad": "' + b"x" * (20 << 20) + b'"}')
    assert len(bomb) < ANSWER_LIMIT
    assert decode_json(bomb, ANSWER_LIMIT)[:2] == (None, "too_large")


def test_the_size_limit_is_a_parameter(sandbox: SandboxServer) -> None:
    http = HTTP(sandbox.url)
    sandbox.inject("huge", count=2)
    small = delete(sandbox, "3", http)
    assert isinstance(small, Reply) and (small.status, small.problem) == (200, "too_large")
    large = delete(sandbox, "3", http, limit=LISTING_LIMIT)
    assert isinstance(large, Reply) and large.data["status"] == "success"


def test_connection_refused_was_not_sent() -> None:
    failure = HTTP(f"http://127.0.0.1:{free_port()}").send("DELETE", "/x", None, timeout=TIMEOUT)
    assert isinstance(failure, NetworkFailure)
    assert (failure.kind, failure.sent) == ("refused", False)


def test_tls_to_a_plain_port_fails_the_handshake_before_sending(sandbox: SandboxServer) -> None:
    http = HTTP(f"https://127.0.0.1:{sandbox.port}")
    failure = http.send("DELETE", "/x", None, timeout=TIMEOUT)
    assert isinstance(failure, NetworkFailure)
    assert (failure.kind, failure.sent) == ("tls", False)
    assert sandbox.requests == []


@pytest.mark.parametrize(
    ("fault", "kind", "status"),
    [
        ("drop_before", "dropped", None),
        ("drop_after", "dropped", None),
        ("truncated", "broken", 200),
    ],
)
def test_broken_connections_after_sending(
    sandbox: SandboxServer, fault: str, kind: str, status: int | None
) -> None:
    sandbox.inject(fault)
    failure = delete(sandbox, "3")
    if status is None:  # no head came: a failure that was sent
        assert isinstance(failure, NetworkFailure) and (failure.kind, failure.sent) == (kind, True)
    else:  # the head came: an answer cut short
        assert isinstance(failure, Reply) and (failure.status, failure.problem) == (status, kind)


@pytest.mark.parametrize(
    ("fault", "delay", "status"),
    [
        ("hang", 2.0, None),  # nothing at all until after the timeout
        ("drip", 0.2, 200),  # headers at once, then the body a byte at a time
    ],
)
def test_a_slow_answer_ends_within_its_timeout(
    sandbox: SandboxServer, fault: str, delay: float, status: int | None
) -> None:
    sandbox.inject(fault, delay=delay)
    started = time.monotonic()
    failure = delete(sandbox, "3")
    elapsed = time.monotonic() - started
    if status is None:
        assert isinstance(failure, NetworkFailure) and failure.kind == "timeout" and failure.sent
    else:
        assert isinstance(failure, Reply) and (failure.status, failure.problem) == (
            status,
            "timeout",
        )
    assert elapsed < TIMEOUT + 1
    assert "3" not in sandbox.entries  # the sandbox acted: hence "sent", and unknown later
