"""The transport on its own: one attempt, one deadline, a Reply or a classified NetworkFailure.

Real HTTP over loopback to the sandbox (and to a bare socket where the sandbox cannot misbehave
enough). Deadline tests assert that a call returned within its deadline plus a margin: that is
the behaviour under test, not a speed measurement.
"""

from __future__ import annotations

import gzip
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator

import pytest
import trustme

from dict_magics.sandbox import SandboxServer
from dict_magics.service.paths import entry_path
from dict_magics.service.signing import SignedAuth, sign
from dict_magics.service.transport import (
    ANSWER_LIMIT,
    LISTING_LIMIT,
    FailureKind,
    NetworkFailure,
    Reply,
    Transport,
    decode_json,
)

TIMEOUT = 0.5


def transport_for(sandbox: SandboxServer, **options: object) -> Transport:
    options.setdefault("trust_env", False)
    return Transport(SignedAuth(sandbox.access_key, sandbox.secret_key), **options)


def delete(transport: Transport, sandbox: SandboxServer, entry_id: str, **options: object):
    options.setdefault("timeout", TIMEOUT)
    return transport.send("DELETE", sandbox.url + entry_path(entry_id), **options)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- replies ----------------------------------------------------------------------------------


def test_a_plain_answer_is_a_reply_with_its_json(sandbox: SandboxServer) -> None:
    reply = delete(transport_for(sandbox), sandbox, "3")
    assert isinstance(reply, Reply)
    assert (reply.status, reply.data, reply.problem, reply.reused) == (
        200,
        {"status": "success"},
        None,
        False,
    )
    [record] = sandbox.requests
    # Signed at send time over the exact path, identity asked, and nothing else needed.
    assert record.headers["signature"] == sign(
        record.path, sandbox.secret_key, record.headers["nonce"]
    )
    assert record.headers["Accept-Encoding"] == "identity"


def test_the_connection_is_kept_alive_and_reused(sandbox: SandboxServer) -> None:
    transport = transport_for(sandbox)
    first, second = delete(transport, sandbox, "1"), delete(transport, sandbox, "2")
    assert isinstance(first, Reply) and isinstance(second, Reply)
    assert (first.reused, second.reused) == (False, True)


def test_a_post_carries_its_json_body(sandbox: SandboxServer) -> None:
    body = json.dumps({"fromLang": "ja", "fromText": "金曜日", "toLang": "en", "toText": "FRI"})
    reply = transport_for(sandbox).send(
        "POST", sandbox.url + "/api/v1/dictionary", body=body.encode(), timeout=TIMEOUT
    )
    assert isinstance(reply, Reply) and reply.data == {"status": "success"}
    [record] = sandbox.requests
    assert record.operation == "add" and record.entry.from_text == "金曜日"


def test_redirects_are_never_followed(sandbox: SandboxServer) -> None:
    sandbox.inject("redirect", location="http://127.0.0.1:9/elsewhere")
    reply = delete(transport_for(sandbox), sandbox, "3")
    assert isinstance(reply, Reply) and reply.status == 307
    assert reply.headers["Location"] == "http://127.0.0.1:9/elsewhere"


@pytest.mark.parametrize("kind", ["bom", "gzip_forced", "utf16"])
def test_answers_in_odd_encodings_are_decoded(sandbox: SandboxServer, kind: str) -> None:
    sandbox.inject(kind)
    reply = delete(transport_for(sandbox), sandbox, "3")
    assert isinstance(reply, Reply) and reply.data == {"status": "success"}, reply


def test_decode_json_undoes_what_servers_do() -> None:
    data = {"status": "success", "message": "金曜日"}
    text = json.dumps(data, ensure_ascii=False)
    for body in (
        text.encode(),
        b"\xef\xbb\xbf" + text.encode(),
        text.encode("utf-16"),
        text.encode("utf-16-le"),
        text.encode("utf-32"),
        gzip.compress(text.encode()),
        gzip.compress(b"\xef\xbb\xbf" + text.encode()),
    ):
        assert decode_json(body, ANSWER_LIMIT)[:2] == (data, None), body[:8]
    assert decode_json(b"", ANSWER_LIMIT)[1] == "empty"
    assert decode_json(b" \r\n", ANSWER_LIMIT)[1] == "empty"
    assert decode_json(b"OK, deleted.", ANSWER_LIMIT)[1] == "not_json"
    assert decode_json(b"[" * 50_000, ANSWER_LIMIT)[1] == "not_json"
    assert decode_json(b"\xff\xfe\x00", ANSWER_LIMIT)[1] == "not_json"
    assert decode_json(b"\x1f\x8bnot gzip at all", ANSWER_LIMIT)[1] == "bad_gzip"
    assert decode_json(gzip.compress(b'{"a": 1}')[:-8], ANSWER_LIMIT)[1] == "bad_gzip"


def test_a_gzip_bomb_is_not_unpacked_past_the_limit() -> None:
    bomb = gzip.compress(b'{"status": "success", "pad": "' + b"x" * (20 << 20) + b'"}')
    assert len(bomb) < ANSWER_LIMIT
    data, problem, _ = decode_json(bomb, ANSWER_LIMIT)
    assert (data, problem) == (None, "too_large")


def test_the_limit_is_a_parameter(sandbox: SandboxServer) -> None:
    transport = transport_for(sandbox)
    sandbox.inject("huge", count=2)
    small = delete(transport, sandbox, "3")
    assert isinstance(small, NetworkFailure) and small.kind is FailureKind.TOO_LARGE
    assert small.sent and small.status == 200
    large = delete(transport, sandbox, "3", limit=LISTING_LIMIT)
    assert isinstance(large, Reply) and large.data["status"] == "success"
    assert len(large.body) > 1 << 20


# -- failures: sent or not --------------------------------------------------------------------


def test_connection_refused_was_not_sent() -> None:
    transport = Transport(SignedAuth("a", "s"), trust_env=False)
    failure = transport.send("DELETE", f"http://127.0.0.1:{free_port()}/x", timeout=TIMEOUT)
    assert isinstance(failure, NetworkFailure)
    assert (failure.kind, failure.sent, failure.status) == (FailureKind.REFUSED, False, None)


def test_tls_to_a_plain_port_fails_the_handshake_before_sending(sandbox: SandboxServer) -> None:
    transport = Transport(SignedAuth("a", "s"), trust_env=False)
    failure = transport.send("DELETE", f"https://127.0.0.1:{sandbox.port}/x", timeout=TIMEOUT)
    assert isinstance(failure, NetworkFailure)
    assert (failure.kind, failure.sent) == (FailureKind.TLS, False)
    assert sandbox.requests == []


@pytest.mark.parametrize(
    ("fault", "kind", "status"),
    [
        ("drop_before", FailureKind.DROPPED, None),
        ("drop_after", FailureKind.DROPPED, None),
        ("truncated", FailureKind.BROKEN, 200),
    ],
)
def test_broken_connections_after_sending(
    sandbox: SandboxServer, fault: str, kind: FailureKind, status: int | None
) -> None:
    sandbox.inject(fault)
    failure = delete(transport_for(sandbox), sandbox, "3")
    assert isinstance(failure, NetworkFailure)
    assert (failure.kind, failure.sent, failure.status) == (kind, True, status)
    assert not failure.reused


def test_a_dropped_kept_alive_connection_says_it_was_reused(sandbox: SandboxServer) -> None:
    transport = transport_for(sandbox)
    assert isinstance(delete(transport, sandbox, "1"), Reply)
    sandbox.inject("drop_before")
    failure = delete(transport, sandbox, "2")
    assert isinstance(failure, NetworkFailure) and failure.kind is FailureKind.DROPPED
    assert failure.reused and failure.sent


def test_network_failures_carry_no_prose() -> None:
    fields = set(NetworkFailure.__dataclass_fields__)
    assert fields == {"kind", "sent", "status", "headers", "detail", "reused", "proxy"}


# -- one deadline per attempt -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "delay", "status"),
    [
        ("hang", 2.0, None),  # nothing at all until after the deadline
        ("drip", 0.2, 200),  # headers at once, then the body a byte at a time
        ("drip_headers", 0.05, None),  # the status line and headers a byte at a time
        ("continue_flood", 0.05, None),  # 100 Continue forever
    ],
)
def test_the_deadline_covers_the_whole_answer(
    sandbox: SandboxServer, fault: str, delay: float, status: int | None
) -> None:
    sandbox.inject(fault, delay=delay)
    started = time.monotonic()
    failure = delete(transport_for(sandbox), sandbox, "3")
    elapsed = time.monotonic() - started
    assert isinstance(failure, NetworkFailure), failure
    assert failure.kind is FailureKind.TIMEOUT and failure.sent
    if status is not None:
        assert failure.status == status
    assert elapsed < TIMEOUT + 1
    assert "3" not in sandbox.entries  # the sandbox acted: hence "sent", and unknown later


@pytest.fixture
def dripping_server() -> Iterator[int]:
    """A bare server that answers every connection with an endless trickle of header bytes."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.05)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(65536)
                try:
                    conn.sendall(b"HTTP/1.1 200 OK\r\n")
                    while not stop.wait(0.02):
                        conn.sendall(b"X-Pad: y\r\n")
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    listener.close()


def test_endless_headers_cannot_hold_a_call(dripping_server: int) -> None:
    # Each read returns within any per-read timeout: only the watchdog ends this.
    transport = Transport(SignedAuth("a", "s"), trust_env=False)
    started = time.monotonic()
    failure = transport.send("GET", f"http://127.0.0.1:{dripping_server}/x", timeout=TIMEOUT)
    assert isinstance(failure, NetworkFailure) and failure.kind is FailureKind.TIMEOUT
    assert time.monotonic() - started < TIMEOUT + 1


def test_a_proxy_dripping_its_connect_answer_cannot_hold_a_call(
    dripping_server: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An HTTPS request through a proxy first reads the proxy's answer to CONNECT, on the bare
    socket: the deadline watches that socket from the moment it exists."""
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{dripping_server}")
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    transport = Transport(SignedAuth("a", "s"), trust_env=True)
    started = time.monotonic()
    failure = transport.send("GET", "https://dictionary.invalid/x", timeout=TIMEOUT)
    assert time.monotonic() - started < TIMEOUT + 1
    assert isinstance(failure, NetworkFailure) and not failure.sent, failure


def test_many_deadlines_at_once_each_fire_on_time() -> None:
    # The lenient nonce rule: the transport sends each request once, so a nonce overtaken on
    # another of the 8 connections (40005) would answer instead of the hang under test.
    with SandboxServer(100, nonce_rule="unique") as sandbox:
        _many_deadlines(sandbox)


def _many_deadlines(sandbox: SandboxServer) -> None:
    sandbox.inject("hang", count=8, delay=2.0)
    transport = transport_for(sandbox, workers=8)
    outcomes: list[object] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        timeout = 0.2 + 0.1 * (i % 4)
        started = time.monotonic()
        result = delete(transport, sandbox, str(i), timeout=timeout)
        with lock:
            outcomes.append((result, time.monotonic() - started, timeout))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(1, 9)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(outcomes) == 8
    for result, elapsed, timeout in outcomes:
        assert isinstance(result, NetworkFailure) and result.kind is FailureKind.TIMEOUT
        assert timeout <= elapsed < timeout + 1


def test_the_pool_grows_to_the_workers(sandbox: SandboxServer) -> None:
    transport = transport_for(sandbox, workers=2)
    transport.ensure_pool(12)
    transport.ensure_pool(3)  # never shrinks
    adapter = transport.session.get_adapter(sandbox.url)
    assert adapter._pool_maxsize == 12


# -- TLS: the same deadline, and a handshake that never ends ---------------------------------


@pytest.fixture
def tls_listener(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[socket.socket, object]]:
    """A loopback listener and a server TLS context whose throw-away CA the client trusts."""
    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    with ca.cert_pem.tempfile() as bundle:
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", bundle)
        monkeypatch.setenv("SSL_CERT_FILE", bundle)
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener, context
        listener.close()


def test_tls_headers_that_never_end_cannot_hold_a_call(tls_listener) -> None:
    listener, context = tls_listener
    stop = threading.Event()

    def serve() -> None:
        conn, _ = listener.accept()
        with context.wrap_socket(conn, server_side=True) as tls:
            tls.recv(65536)
            try:
                tls.sendall(b"HTTP/1.1 200 OK\r\n")
                while not stop.wait(0.02):
                    tls.sendall(b"X-Pad: y\r\n")
            except OSError:
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    started = time.monotonic()
    url = f"https://127.0.0.1:{listener.getsockname()[1]}/x"
    failure = Transport(SignedAuth("a", "s")).send("GET", url, timeout=TIMEOUT)
    stop.set()
    thread.join()
    assert isinstance(failure, NetworkFailure) and failure.kind is FailureKind.TIMEOUT
    assert failure.sent and time.monotonic() - started < TIMEOUT + 1


def test_a_tls_handshake_that_never_completes_was_not_sent(tls_listener) -> None:
    listener, _ = tls_listener  # accepts the TCP connection (backlog), never speaks TLS
    started = time.monotonic()
    url = f"https://127.0.0.1:{listener.getsockname()[1]}/x"
    failure = Transport(SignedAuth("a", "s")).send("DELETE", url, timeout=TIMEOUT)
    assert isinstance(failure, NetworkFailure)
    assert (failure.kind, failure.sent) == (FailureKind.CONNECT_TIMEOUT, False)
    assert time.monotonic() - started < TIMEOUT + 1
