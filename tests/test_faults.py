"""The fault matrix: every way the network or the service can misbehave, one test each.

Each case asserts the outcome the client reports, how many attempts it made, and what really
happened at the sandbox, so a report can never be wrong: "success" means deleted exactly once,
"failure" means not deleted, and "unknown" is used exactly when the service may have acted.
The table in docs/reliability.md is this file in prose.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from dict_magics.models import Cause
from dict_magics.sandbox import SandboxServer
from dict_magics.service.client import DictionaryClient


@dataclass(frozen=True)
class Case:
    setup: Callable[[SandboxServer], None]
    outcome: str  # success | failure | unknown
    attempts: int
    deleted: bool
    cause: Cause
    reason: str = ""
    http_status: int | None = None


def fault(kind: str, **options: object) -> Callable[[SandboxServer], None]:
    return lambda s: s.inject(kind, **options)


U, F, S = "unknown", "failure", "success"
CASES = {
    # The service (or a gateway) answered with a status that settles it, or asks for a retry.
    "429 with Retry-After": Case(
        lambda s: s.fail_next(1, 429, retry_after=0), S, 2, True, Cause.OK, http_status=200
    ),
    "500 with a JSON failure": Case(
        lambda s: s.fail_next(1, 500), F, 1, False, Cause.REFUSED, "injected fault", 500
    ),
    "502": Case(lambda s: s.fail_next(1, 502), S, 2, True, Cause.OK, http_status=200),
    "503": Case(lambda s: s.fail_next(1, 503), S, 2, True, Cause.OK, http_status=200),
    "504": Case(lambda s: s.fail_next(1, 504), S, 2, True, Cause.OK, http_status=200),
    "503 every time": Case(
        lambda s: s.fail_next(99, 503), F, 4, False, Cause.UNAVAILABLE, "gave up after 4", 503
    ),
    "504 every time": Case(
        lambda s: s.fail_next(99, 504), U, 4, False, Cause.GATEWAY, "gave up after 4", 504
    ),
    # No answer after sending: nobody can say whether the service acted.
    # A DELETE is sent again (it does the same however often it is sent); the first attempt
    # may have acted, so a later "no such entry" proves nothing.
    "reset on receipt (drop_before)": Case(
        fault("drop_before"), S, 2, True, Cause.OK, http_status=200
    ),
    "dropped after acting (drop_after)": Case(
        fault("drop_after"), U, 2, True, Cause.CONNECTION_LOST, "closed before an answer", 404
    ),
    "read timeout": Case(
        fault("hang", delay=2), U, 1, True, Cause.TIMEOUT, "no answer within the 0.5 s deadline"
    ),
    "slowly dripping body": Case(
        fault("drip", delay=0.2), U, 1, True, Cause.TIMEOUT, "did not arrive whole", 200
    ),
    "body cut short (truncated)": Case(
        fault("truncated"), U, 1, True, Cause.CONNECTION_LOST, "before the whole answer", 200
    ),
    "connection closed mid-headers": Case(
        fault("close_mid_headers"), U, 1, True, Cause.BAD_ANSWER, "empty", 200
    ),
    "204 with no body": Case(fault("empty_204"), U, 1, True, Cause.BAD_ANSWER, "empty", 204),
    # Unreadable answers after sending: unknown (changed in version 2 from a plain failure).
    "non-JSON body": Case(
        fault("non_json"), U, 1, False, Cause.BAD_ANSWER, "not JSON: 'OK, deleted.'", 200
    ),
    "JSON without status": Case(
        fault("no_status"), U, 1, False, Cause.BAD_ANSWER, "has no status", 200
    ),
    "status other than success/failure": Case(
        fault("other_status"), U, 1, False, Cause.BAD_ANSWER, "unexpected status 'deleted'", 200
    ),
    "HTML error page": Case(
        fault("html"), U, 1, False, Cause.BAD_ANSWER, "500 Internal Server Error", 500
    ),
    "huge body": Case(fault("huge"), U, 1, False, Cause.TOO_LARGE, "larger than 64 KiB", 200),
    "JSON nested 50,000 deep": Case(
        fault("deep_json"), U, 1, False, Cause.BAD_ANSWER, "not JSON", 200
    ),
    # Readable after all: a success is a success.
    "gzip-compressed answer": Case(fault("gzip"), S, 1, True, Cause.OK, http_status=200),
    "gzip although identity was asked": Case(
        fault("gzip_forced"), S, 1, True, Cause.OK, http_status=200
    ),
    "UTF-8 BOM before the JSON": Case(fault("bom"), S, 1, True, Cause.OK, http_status=200),
    "UTF-16 JSON with a BOM": Case(fault("utf16"), S, 1, True, Cause.OK, http_status=200),
}
TIMEOUT = 0.5


def make_client(sandbox: SandboxServer, **options: object) -> DictionaryClient:
    return DictionaryClient(
        sandbox.url,
        sandbox.access_key,
        sandbox.secret_key,
        timeout=TIMEOUT,
        backoff=0.01,
        **options,
    )


def applied_deletes(sandbox: SandboxServer, entry_id: str) -> int:
    """How many times the sandbox really removed ``entry_id``."""
    return sum(
        1
        for r in sandbox.requests
        if r.entry_id == entry_id
        and r.operation == "delete"
        and (r.outcome == "success" or r.outcome.endswith("(applied)"))
    )


@pytest.mark.parametrize("name", list(CASES))
def test_fault(sandbox: SandboxServer, name: str) -> None:
    case = CASES[name]
    case.setup(sandbox)
    result = make_client(sandbox).delete_entry("42")
    assert result.outcome == case.outcome, result
    assert result.attempts == case.attempts, result
    assert result.ok == (case.outcome == "success")
    assert ("42" not in sandbox.entries) == case.deleted
    assert applied_deletes(sandbox, "42") == int(case.deleted)
    assert result.cause is case.cause, result
    assert case.reason in (result.reason or ""), result
    assert result.http_status == case.http_status
    if case.outcome == "unknown":
        assert "may have reached the service" in result.reason
    # Each attempt ends within its timeouts (requests' own: per read; the body as a whole).
    assert result.elapsed < case.attempts * (TIMEOUT + 1)
    # Every attempt was a distinct, valid request: no replay was ever rejected.
    assert all(r.operation != "rejected" for r in sandbox.requests)
    nonces = [r.headers.get("nonce") for r in sandbox.requests]
    assert len(set(nonces)) == len(nonces) == case.attempts


def test_connection_refused() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = DictionaryClient(f"http://127.0.0.1:{port}", "a", "s", max_retries=2, backoff=0.01)
    result = client.delete_entry("42")
    assert result.outcome == "failure" and result.attempts == 3
    assert f"could not connect to 127.0.0.1:{port}" in result.reason


def test_kept_alive_connection_dropped_before_sending(sandbox: SandboxServer) -> None:
    # The server closes idle connections (a restart, an idle timeout): the next request must
    # notice before sending and use a new connection, with no error and no retry needed.
    client = make_client(sandbox)
    assert client.delete_entry("1").ok
    sandbox.drop_connections()
    result = client.delete_entry("2")
    assert result.ok and result.attempts == 1
    assert applied_deletes(sandbox, "2") == 1


def test_a_kept_alive_connection_reset_on_receipt_is_retried(sandbox: SandboxServer) -> None:
    # The server closed the idle connection as the request went out: a DELETE may be sent
    # again, and the retry's answer settles it.
    client = make_client(sandbox)
    assert client.delete_entry("1").ok
    sandbox.inject("drop_before")
    result = client.delete_entry("2")
    assert result.ok and result.attempts == 2, result
    assert applied_deletes(sandbox, "2") == 1


def test_a_kept_alive_connection_dropped_after_acting_stays_unknown(
    sandbox: SandboxServer,
) -> None:
    # Retried, the service says "no such entry": the first attempt may well have deleted it.
    client = make_client(sandbox)
    assert client.delete_entry("1").ok
    sandbox.inject("drop_after")
    result = client.delete_entry("2")
    assert result.outcome == "unknown" and result.attempts == 2, result
    assert result.http_status == 404 and result.cause is Cause.CONNECTION_LOST
    assert "attempt 1 (the connection was closed" in result.reason
    assert applied_deletes(sandbox, "2") == 1 and "2" not in sandbox.entries


class _Recorder(BaseHTTPRequestHandler):
    def do_DELETE(self) -> None:
        self.server.received.append(dict(self.headers.items()))
        self.send_response(200)
        self.send_header("Content-Length", "21")
        self.end_headers()
        self.wfile.write(b'{"status": "success"}')

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def other_host() -> Iterator[ThreadingHTTPServer]:
    """A second loopback server that records every request reaching it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.received = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_redirect_to_another_host_carries_no_credentials(
    sandbox: SandboxServer, other_host: ThreadingHTTPServer
) -> None:
    target = f"http://127.0.0.1:{other_host.server_address[1]}"
    sandbox.inject("redirect", count=5, location=target + "/api/v1/dictionary/42")
    result = make_client(sandbox).delete_entry("42")
    assert result.outcome == "failure" and result.attempts == 1 and result.http_status == 307
    assert target.removeprefix("http://") in result.reason
    assert other_host.received == [] and "42" in sandbox.entries
    # The recorder does record what reaches it (so the empty list above means something).
    import requests

    requests.delete(target + "/probe", headers={"accessKey": "probe"}, timeout=5)
    assert other_host.received[0]["accessKey"] == "probe"


def test_tls_to_a_plain_http_port_fails_before_sending(sandbox: SandboxServer) -> None:
    # https to a server that does not speak TLS: the handshake fails, nothing is sent, and
    # retrying would not help, so it is a plain failure after one attempt.
    port = sandbox.port
    client = DictionaryClient(f"https://127.0.0.1:{port}", "a", "s", max_retries=3, backoff=0.01)
    result = client.delete_entry("42")
    assert result.outcome == "failure" and result.attempts == 1, result
    assert "TLS handshake" in result.reason and "nothing was sent" in result.reason
    assert sandbox.requests == [] and "42" in sandbox.entries


def test_unreachable_proxy_is_not_sent_and_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    # The proxy (on loopback) refuses connections: the request never left this machine.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    client = DictionaryClient("https://dictionary.invalid", "a", "s", max_retries=1, backoff=0.01)
    result = client.delete_entry("42")
    assert result.outcome == "failure" and result.attempts == 2, result
    assert "could not connect to the proxy for dictionary.invalid" in result.reason


def test_unresolvable_host_is_not_sent_and_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    # The resolver itself is the fault (no query may leave this machine): it knows no name.
    def no_such_name(*args: object, **kwargs: object) -> None:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_such_name)
    client = DictionaryClient("https://dictionary.invalid", "a", "s", max_retries=3, backoff=0.01)
    result = client.delete_entry("42")
    assert result.outcome == "failure" and result.attempts == 1, result
    assert "could not resolve the host name of dictionary.invalid" in result.reason
    assert "nothing was sent" in result.reason
