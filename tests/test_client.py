"""DictionaryClient against the sandbox over real loopback HTTP: outcomes, retries, id rules."""

from __future__ import annotations

import itertools
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from requests.structures import CaseInsensitiveDict

from dict_magics.errors import DictMagicsError, InvalidBaseUrlError, InvalidIdError
from dict_magics.models import Cause
from dict_magics.sandbox import SandboxServer
from dict_magics.sandbox.checks import sign
from dict_magics.service.client import DictionaryClient
from dict_magics.service.http import API_PREFIX, NetworkFailure, Reply, judge


def client_for(sandbox: SandboxServer, **options: object) -> DictionaryClient:
    options.setdefault("backoff", 0.01)
    return DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key, **options)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def assert_fresh_signed_nonces(sandbox: SandboxServer) -> None:
    nonces = [r.headers["nonce"] for r in sandbox.requests]
    assert len(set(nonces)) == len(nonces)
    for record in sandbox.requests:
        assert record.headers["signature"] == sign(
            record.path, sandbox.secret_key, record.headers["nonce"]
        )


# -- plain outcomes ---------------------------------------------------------------------------


def test_delete_one_entry(sandbox: SandboxServer) -> None:
    result = client_for(sandbox).delete_entry("7")
    assert result.ok and result.status == "success"
    assert (result.entry_id, result.http_status, result.attempts) == ("7", 200, 1)
    assert not result.outcome_unknown and result.reason is None and result.elapsed >= 0
    assert result.cause is Cause.OK
    assert "7" not in sandbox.entries and len(sandbox.entries) == 99
    [record] = sandbox.requests
    assert (record.method, record.path, record.operation) == (
        "DELETE",
        "/api/v1/dictionary/7",
        "delete",
    )
    assert record.headers["Content-Type"] == "application/json"
    assert record.headers["accessKey"] == sandbox.access_key
    assert sandbox.secret_key not in str(record.headers)


def test_unknown_id_is_a_failure_with_the_services_reason(sandbox: SandboxServer) -> None:
    result = client_for(sandbox).delete_entry("99999")
    assert not result.ok and result.status == "failure" and not result.outcome_unknown
    assert result.http_status == 404 and result.cause is Cause.REFUSED
    assert "status 'failure'" in result.reason and "no such entry" in result.reason
    assert len(sandbox.entries) == 100


def test_purge_deletes_everything(sandbox: SandboxServer) -> None:
    result = client_for(sandbox).delete_all()
    assert result.ok and result.entry_id is None
    assert sandbox.entries == {}
    assert [r.operation for r in sandbox.requests] == ["purge"]
    assert sandbox.requests[0].path == "/api/v1/dictionary/dictionary-all"


def test_wrong_secret_is_reported_not_raised(sandbox: SandboxServer) -> None:
    client = DictionaryClient(sandbox.url, sandbox.access_key, "wrong-secret")
    result = client.delete_entry("1")
    assert not result.ok and result.http_status == 401 and result.cause is Cause.AUTH
    assert "[40006] The signature is incorrect." in result.reason
    assert "wrong-secret" not in result.reason and "1" in sandbox.entries


def test_base_url_with_api_v1_suffix_works(sandbox: SandboxServer) -> None:
    client = DictionaryClient(sandbox.url + "/api/v1/", sandbox.access_key, sandbox.secret_key)
    assert client.delete_entry("3").ok
    assert sandbox.requests[0].path == "/api/v1/dictionary/3"


# -- id and URL rules: refused before any request ---------------------------------------------


BAD_IDS = [
    "dictionary-all",
    "",
    " ",
    "+17",
    "-17",
    " 17",
    "17 ",
    "1.0",
    "1e3",
    "\uff11\uff17",
    "\u0663",
    "a\nb",
]


@pytest.mark.parametrize("bad", [*BAD_IDS, True, 17.0, -1, 2**63, "9" * 30, None])
def test_an_id_that_is_not_ascii_digits_never_reaches_the_service(
    sandbox: SandboxServer, bad: object
) -> None:
    client = client_for(sandbox)
    with pytest.raises(InvalidIdError, match="is not an entry id: ids are whole numbers"):
        client.delete_entry(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidIdError):
        client.delete_entries(["1", "2", bad, "3"])  # type: ignore[list-item]
    assert sandbox.requests == [] and len(sandbox.entries) == 100


def test_leading_zeros_name_the_same_entry(sandbox: SandboxServer) -> None:
    result = client_for(sandbox).delete_entry("017")
    assert result.ok and result.entry_id == "17" and "17" not in sandbox.entries
    [record] = sandbox.requests
    assert record.path == API_PREFIX + "17"


def test_plain_http_to_a_remote_host_is_refused() -> None:
    with pytest.raises(InvalidBaseUrlError, match="plain http"):
        DictionaryClient("http://dictionary.example.com", "a", "s")


def test_missing_keys_and_bad_options_are_refused() -> None:
    with pytest.raises(DictMagicsError):
        DictionaryClient("https://example.com", "", "s")
    with pytest.raises(DictMagicsError):
        DictionaryClient("https://example.com", "a", "s", timeout=0)
    with pytest.raises(DictMagicsError):
        DictionaryClient("https://example.com", "a", "s", max_retries=-1)
    with pytest.raises(DictMagicsError, match="must be text"):
        DictionaryClient("https://example.com", "a", b"secret-as-bytes")
    for bad in (float("nan"), float("inf"), -1.0):
        with pytest.raises(DictMagicsError, match="positive number of seconds"):
            DictionaryClient("https://example.com", "a", "s", timeout=bad)


@pytest.mark.parametrize("url", ["http://[::1]", "http://localhost", "http://127.0.0.1:9"])
def test_loopback_traffic_never_goes_through_an_environment_proxy(url: str) -> None:
    assert DictionaryClient(url, "a", "s")._http.session.trust_env is False
    assert DictionaryClient("https://example.com", "a", "s")._http.session.trust_env is True


class ProxyRecorder:
    """A listener standing in for an HTTP proxy: records the first line of each connection
    (``CONNECT host:443 ...`` for HTTPS), then hangs up."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.lines: list[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                self.lines.append(conn.recv(4096).split(b"\r\n")[0].decode("latin-1"))

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def proxy_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[ProxyRecorder]:
    """Every proxy variable points at a recorder; nothing exempts loopback (no NO_PROXY)."""
    recorder = ProxyRecorder()
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, recorder.url)
    yield recorder
    recorder.close()


def test_proxies_stay_off_for_loopback_while_trusting_the_environments_ca(
    proxy_env: ProxyRecorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SandboxServer(10, tls=True) as tls:
        for name, value in tls.env().items():
            monkeypatch.setenv(name, value)
        assert client_for(tls).delete_entry("1").ok
    with SandboxServer(10) as plain:
        assert client_for(plain).delete_entry("1").ok
    assert proxy_env.lines == []


def test_other_hosts_still_go_through_the_environments_proxy(proxy_env: ProxyRecorder) -> None:
    client = DictionaryClient("https://dictionary.example.com", "a", "s", max_retries=0)
    result = client.delete_entry("1")
    [line] = proxy_env.lines
    assert line.startswith("CONNECT dictionary.example.com:443 HTTP/")
    # The proxy hung up before a tunnel was open: the request never reached the service (said
    # as "nothing was sent" when urllib3 names the proxy, else honestly "unknown").
    assert not result.ok and result.http_status is None


# -- TLS: the CAs the environment names are trusted for every host, loopback included ----------


@pytest.fixture
def tls_sandbox() -> Iterator[SandboxServer]:
    with SandboxServer(10, tls=True) as server:
        yield server


@pytest.mark.parametrize(
    "variables",
    [
        ("REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"),  # what SandboxServer.env() exports
        ("REQUESTS_CA_BUNDLE",),
        ("CURL_CA_BUNDLE",),
        ("SSL_CERT_FILE",),
    ],
)
def test_a_tls_sandbox_is_trusted_through_the_environment(
    tls_sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch, variables: tuple[str, ...]
) -> None:
    for name in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name in variables:
        monkeypatch.setenv(name, tls_sandbox.ca_path or "")
    client = client_for(tls_sandbox)
    assert client._http.session.trust_env is False  # loopback: still no proxies
    assert client.delete_entry("1").ok and client.delete_entry("2").ok
    assert tls_sandbox.connections_accepted == 1


def test_a_ca_exported_after_the_client_was_made_is_used(
    tls_sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = client_for(tls_sandbox, max_retries=0)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/etc/ssl/certs/ca-certificates.crt")
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    untrusted = client.delete_entry("1")
    assert not untrusted.ok and untrusted.cause is Cause.TLS and not untrusted.outcome_unknown
    assert "nothing was sent" in untrusted.reason and tls_sandbox.requests == []
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", tls_sandbox.ca_path or "")
    assert client.delete_entry("1").ok


def test_a_ca_bundle_that_does_not_exist_is_named(
    tls_sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    missing = str(tmp_path / "gone.pem")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", missing)
    result = client_for(tls_sandbox).delete_entry("1")
    assert not result.ok and result.cause is Cause.TLS and result.attempts == 1
    assert f"REQUESTS_CA_BUNDLE names {missing}, which does not exist" in result.reason
    assert tls_sandbox.requests == []


def test_client_repr_never_shows_the_secret(sandbox: SandboxServer) -> None:
    client = client_for(sandbox)
    assert sandbox.secret_key not in repr(client)
    assert sandbox.secret_key not in repr(client._signature)


# -- retries ----------------------------------------------------------------------------------


@pytest.mark.parametrize("code", [429, 502, 503, 504])
def test_retryable_statuses_are_retried_with_fresh_nonces(
    sandbox: SandboxServer, code: int
) -> None:
    sandbox.fail_next(2, code)
    result = client_for(sandbox, max_retries=3).delete_entry("5")
    assert result.ok and result.attempts == 3 and not result.outcome_unknown
    assert len(sandbox.requests) == 3 and "5" not in sandbox.entries
    assert_fresh_signed_nonces(sandbox)


def test_giving_up_says_so(sandbox: SandboxServer) -> None:
    sandbox.fail_next(10, 503)
    result = client_for(sandbox, max_retries=2).delete_entry("5")
    assert not result.ok and not result.outcome_unknown and result.attempts == 3
    assert result.http_status == 503 and "gave up after 3 attempts" in result.reason
    assert result.cause is Cause.UNAVAILABLE
    assert len(sandbox.requests) == 3


def test_a_429_spends_patience_not_max_retries(sandbox: SandboxServer) -> None:
    # A 429 was not acted on: it is sent again past max_retries, while patience lasts.
    sandbox.fail_next(5, 429, retry_after=0)
    result = client_for(sandbox, max_retries=1).delete_entry("5")
    assert result.ok and result.attempts == 6 and "5" not in sandbox.entries


def test_giving_up_on_a_rate_limit_says_so(sandbox: SandboxServer) -> None:
    sandbox.fail_next(50, 429, retry_after=0.2)
    result = client_for(sandbox, rate_limit_patience=0.3).delete_entry("5")
    assert not result.ok and not result.outcome_unknown and result.attempts == 2
    assert result.http_status == 429 and result.cause is Cause.RATE_LIMITED
    assert "gave up after 2 attempts" in result.reason
    assert "0.3 s allowed for the service's rate limit" in result.reason
    assert len(sandbox.requests) == 2 and "5" in sandbox.entries


@pytest.mark.parametrize("code", [502, 504])
def test_gateway_errors_may_have_been_applied(sandbox: SandboxServer, code: int) -> None:
    # A 504 then "no such entry" could mean the first attempt deleted it: say we do not know.
    sandbox.fail_next(1, code)
    result = client_for(sandbox).delete_entry("99999")
    assert not result.ok and result.outcome_unknown and result.attempts == 2
    assert result.http_status == 404 and result.cause is Cause.GATEWAY
    assert f"attempt 1 (HTTP {code}) may have been acted on" in result.reason
    assert "may have reached the service" in result.reason


def test_non_retryable_statuses_are_not_retried(sandbox: SandboxServer) -> None:
    sandbox.fail_next(1, 500)
    result = client_for(sandbox).delete_entry("5")
    assert not result.ok and result.attempts == 1 and result.http_status == 500
    assert len(sandbox.requests) == 1 and "5" in sandbox.entries


def test_retry_after_is_honoured_and_capped() -> None:
    policy = DictionaryClient("https://example.com", "a", "s").retry
    assert policy.max_retry_after == 30
    assert policy.wait(1, 7.0) == 7.0
    assert policy.wait(1, 3600.0) == 30.0
    assert policy.wait(5, 0.0) == 0.0


def test_backoff_grows_with_full_jitter_up_to_a_ceiling() -> None:
    client = DictionaryClient("https://example.com", "a", "s", backoff=0.5, max_backoff=8)
    for attempt, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (6, 8.0), (9, 8.0)]:
        delays = [client.retry.wait(attempt) for _ in range(200)]
        assert all(0 <= d <= ceiling for d in delays) and len(set(delays)) > 1
        # Full jitter: anywhere from 0, not only in the upper half.
        assert min(delays) < ceiling / 4 and max(delays) > ceiling * 3 / 4


def test_retry_after_header_forms() -> None:
    from email.utils import formatdate

    from dict_magics.service.http import parse_retry_after

    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(" 0.5 ") == 0.5
    assert parse_retry_after("-4") == 0.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert parse_retry_after("nan") is None
    now = time.time()
    in_a_minute = parse_retry_after(formatdate(now + 60, usegmt=True))
    assert in_a_minute is not None and 58 <= in_a_minute <= 60
    assert parse_retry_after(formatdate(now - 60, usegmt=True)) == 0.0


def test_retry_after_is_used_end_to_end(sandbox: SandboxServer) -> None:
    sandbox.fail_next(1, 429, retry_after=0)
    result = client_for(sandbox, backoff=30, max_backoff=30).delete_entry("5")
    # Backoff alone would have slept at least 15 s; Retry-After: 0 must win over it.
    assert result.ok and result.attempts == 2 and result.elapsed < 10


def test_connection_refused_is_retried_then_reported() -> None:
    port = free_port()
    client = DictionaryClient(f"http://127.0.0.1:{port}", "a", "s", max_retries=2, backoff=0.01)
    result = client.delete_entry("1")
    assert not result.ok and not result.outcome_unknown and result.attempts == 3
    assert "could not connect" in result.reason and result.cause is Cause.UNAVAILABLE


def test_connection_refused_then_service_comes_up() -> None:
    port = free_port()
    sandbox = SandboxServer(10, port=port)
    client = DictionaryClient(
        f"http://127.0.0.1:{port}",
        sandbox.access_key,
        sandbox.secret_key,
        max_retries=8,
        backoff=0.2,
    )
    timer = threading.Timer(0.3, sandbox.start)
    timer.start()
    try:
        result = client.delete_entry("1")
    finally:
        timer.join()
        sandbox.stop()
    assert result.ok and result.attempts >= 2
    assert "1" not in sandbox.entries


# Unreadable answers, timeouts, dropped connections and redirects: see test_faults.py.


# -- the retry policy: which requests may be sent again --------------------------------------


@pytest.mark.parametrize(
    ("method", "kind", "sent", "again"),
    [
        ("DELETE", "refused", False, True),
        ("POST", "refused", False, True),
        ("POST", "connect_timeout", False, True),
        ("GET", "connect_timeout", False, True),
        ("GET", "tls", False, True),
        ("DELETE", "dns", False, False),
        ("DELETE", "tls", False, False),
        ("DELETE", "dropped", True, True),
        ("GET", "dropped", True, True),
        ("PUT", "dropped", True, True),
        ("POST", "dropped", True, False),
        ("DELETE", "timeout", True, False),
        ("DELETE", "broken", True, False),
    ],
)
def test_retry_policy_after_network_failures(
    method: str, kind: str, sent: bool, again: bool
) -> None:
    verdict = judge(method, NetworkFailure(kind, sent), 100, host="h", timeout=1)
    assert verdict.again == again
    # Only a request that may have left can have been acted on.
    assert verdict.outcome == ("unknown" if sent else "failure")


@pytest.mark.parametrize(
    ("method", "status", "again", "maybe_applied"),
    [
        ("DELETE", 429, True, False),
        ("DELETE", 503, True, False),
        ("DELETE", 502, True, True),
        ("DELETE", 504, True, True),
        ("GET", 504, True, True),
        ("POST", 429, True, False),
        ("POST", 503, True, False),
        ("POST", 502, False, False),
        ("POST", 504, False, False),
        ("DELETE", 500, False, False),
        ("DELETE", 404, False, False),
        ("DELETE", 401, False, False),
    ],
)
def test_retry_policy_after_statuses(
    method: str, status: int, again: bool, maybe_applied: bool
) -> None:
    reply = Reply(status, CaseInsensitiveDict({"retry-after": "2"}), b"", problem="empty")
    verdict = judge(method, reply, 100, host="h", timeout=1)
    assert verdict.again == again
    if again:
        assert (verdict.outcome == "unknown") == maybe_applied
    assert verdict.retry_after == (2.0 if status in (429, 503) else None)


@pytest.mark.parametrize(
    ("message", "reused"),
    [
        ("nonce already used (replayed request)", True),
        ("Nonce has been used", True),
        ("duplicate nonce", True),
        ("replayed nonce", True),
        ("nonce is more than 5 minutes from the server's clock", False),
        ("[40006] The signature is incorrect.", False),
        ("", False),
    ],
)
def test_nonce_reuse_is_recognised(message: str, reused: bool) -> None:
    reply = Reply(401, {}, b"{}", data={"message": message})
    assert judge("DELETE", reply, 100, host="h", timeout=1).nonce_reused == reused


def taken(sandbox: SandboxServer) -> list:
    """The requests the sandbox took: a nonce overtaken on another connection (40005) is not
    acted on and is sent again at once, as often as thread timing makes it happen."""
    return [r for r in sandbox.requests if r.code != 40005]


_AHEAD = itertools.count(1000)


class StaleNonces:
    """A nonce source that repeats one already-used nonce ``times`` times, then is fresh: what
    a second process with the same access key looks like to the service."""

    def __init__(self, stale: str, times: int) -> None:
        self.stale, self.times = stale, times

    def __call__(self) -> str:
        if self.times:
            self.times -= 1
            return self.stale
        return str(time.time_ns() // 1_000_000 + next(_AHEAD))


def used_nonce(sandbox: SandboxServer) -> str:
    """A nonce the sandbox has already seen (another process used it a moment ago)."""
    stale = str(time.time_ns() // 1_000_000 - 60_000)
    client = client_for(sandbox, nonces=lambda: stale)
    assert client.delete_entry("1").ok
    sandbox.clear_log()
    return stale


def test_a_reused_nonce_is_sent_once_more_with_a_fresh_one(sandbox: SandboxServer) -> None:
    stale = used_nonce(sandbox)
    result = client_for(sandbox, nonces=StaleNonces(stale, 1), max_retries=0).delete_entry("2")
    assert result.ok and result.attempts == 2, result
    assert [r.operation for r in sandbox.requests] == ["rejected", "delete"]
    assert sandbox.requests[0].headers["nonce"] == stale


def test_a_nonce_refused_again_and_again_is_sent_with_fresh_ones_until_taken(
    sandbox: SandboxServer,
) -> None:
    # The vendor's 40005 says "not acted on": each refusal is sent again at once with a fresh
    # nonce, whatever max_retries says. (The old "already used" answer without a code, which
    # may also be a gateway's replay, keeps its one cautious re-send: see http.NONCE_REUSED.)
    stale = used_nonce(sandbox)
    result = client_for(sandbox, nonces=StaleNonces(stale, 5), max_retries=0).delete_entry("2")
    assert result.ok and result.attempts == 6 and not result.outcome_unknown, result
    assert [r.code for r in sandbox.requests] == [40005] * 5 + [None]
    assert "2" not in sandbox.entries


def test_a_nonce_refused_every_time_gives_up_with_the_vendors_words(
    sandbox: SandboxServer,
) -> None:
    stale = used_nonce(sandbox)
    client = client_for(sandbox, nonces=lambda: stale)
    result = client.delete_entry("2")
    assert not result.ok and not result.outcome_unknown and result.cause is Cause.NONCE
    assert result.attempts == client.retry.nonce_resends + 1 and result.code == 40005
    assert "[40005] Nonce value is too small" in result.reason
    assert "2" in sandbox.entries


# -- batches ----------------------------------------------------------------------------------


def test_batch_keeps_input_order_and_deletes_duplicates_once(sandbox: SandboxServer) -> None:
    ids = ["5", "999", "6", "5", "06", "7"]
    calls: list[tuple[int, int]] = []
    batch = client_for(sandbox).delete_entries(
        ids, workers=3, progress=lambda done, total, result: calls.append((done, total))
    )
    assert [r.entry_id for r in batch.results] == ["5", "999", "6", "5", "6", "7"]
    assert [r.ok for r in batch.results] == [True, False, True, True, True, True]
    assert (batch.succeeded, batch.failed, batch.ok) == (5, 1, False)
    assert sorted(r.entry_id for r in taken(sandbox)) == ["5", "6", "7", "999"]
    assert sorted(calls) == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_batch_of_many_on_many_workers(sandbox: SandboxServer) -> None:
    batch = client_for(sandbox).delete_entries([str(i) for i in range(1, 101)], workers=16)
    assert batch.ok and batch.succeeded == 100 and sandbox.entries == {}
    assert_fresh_signed_nonces(sandbox)


def test_batch_cancel_reports_what_was_not_attempted(sandbox: SandboxServer) -> None:
    cancel = threading.Event()

    def stop_after_three(done: int, total: int, result: object) -> None:
        if done == 3:
            cancel.set()

    batch = client_for(sandbox).delete_entries(
        [str(i) for i in range(1, 51)], workers=1, progress=stop_after_three, cancel=cancel
    )
    attempted = [r for r in batch.results if r.attempts > 0]
    assert len(attempted) == 3 and batch.failed == 47 and batch.interrupted
    skipped = [r for r in batch.results if r.attempts == 0]
    assert all(r.cause is Cause.NOT_ATTEMPTED for r in skipped)
    assert all("not attempted: the batch stopped before this entry" in r.reason for r in skipped)
    assert len(sandbox.entries) == 97 and len(taken(sandbox)) == 3


def test_a_batch_stops_when_the_credentials_are_refused(sandbox: SandboxServer) -> None:
    client = DictionaryClient(sandbox.url, sandbox.access_key, "wrong-secret")
    batch = client.delete_entries([str(i) for i in range(1, 41)], workers=1)
    refused = [r for r in batch.results if r.cause is Cause.AUTH]
    skipped = [r for r in batch.results if r.cause is Cause.NOT_ATTEMPTED]
    assert len(refused) == 3 and len(skipped) == 37 and not batch.interrupted
    assert all(r.attempts == 0 and "refused the credentials" in r.reason for r in skipped)
    assert len(taken(sandbox)) == 3 and len(sandbox.entries) == 100


def test_a_batch_on_many_workers_stops_after_those_in_flight(sandbox: SandboxServer) -> None:
    client = DictionaryClient(sandbox.url, sandbox.access_key, "wrong-secret")
    batch = client.delete_entries([str(i) for i in range(1, 41)], workers=4)
    sent = len(taken(sandbox))
    # The first three answers, plus those in flight or handed out while they came back.
    assert 3 <= sent <= 3 + 4 - 1
    assert sum(r.cause is Cause.AUTH for r in batch.results) == sent
    assert sum(r.cause is Cause.NOT_ATTEMPTED for r in batch.results) == 40 - sent


def test_a_batch_goes_on_after_an_auth_failure_among_successes(sandbox: SandboxServer) -> None:
    # One 401 (a clock hiccup, say) among good answers is no reason to stop the batch.
    sandbox.fail_next(1, 401)
    batch = client_for(sandbox).delete_entries([str(i) for i in range(1, 21)], workers=1)
    assert batch.succeeded == 19 and len(taken(sandbox)) == 20


def test_workers_must_be_positive(sandbox: SandboxServer) -> None:
    with pytest.raises(DictMagicsError):
        client_for(sandbox).delete_entries(["1"], workers=0)


# -- property: an id is one segment or refused, never the purge -------------------------------


@pytest.fixture(scope="module")
def shared_sandbox() -> Iterator[SandboxServer]:
    with SandboxServer(0) as server:
        yield server


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.one_of(
        st.text(),
        st.text(alphabet="/.%?#& dictonary-aLL\\", max_size=30),
        st.sampled_from(
            [
                "dictionary-all",
                "Dictionary-ALL",
                "%64ictionary-all",
                "dictionary%2Dall",
                "./dictionary-all",
                "dictionary-all/.",
            ]
        ),
    )
)
def test_any_id_is_one_segment_or_refused(shared_sandbox: SandboxServer, entry_id: str) -> None:
    client = client_for(shared_sandbox)
    shared_sandbox.clear_log()
    shared_sandbox.add_entries([entry_id.strip()] if entry_id.strip() else [])
    try:
        result = client.delete_entry(entry_id)
    except InvalidIdError:
        assert shared_sandbox.requests == []
        return
    [record] = shared_sandbox.requests
    assert record.operation == "delete", record
    assert record.entry_id == entry_id.strip()
    assert "/" not in record.path[len(API_PREFIX) :]
    assert result.ok, result


# -- Ctrl-C on the main thread: held back while the request runs ------------------------------


def test_a_request_on_the_main_thread_leaves_ctrl_c_as_it_found_it(sandbox: SandboxServer) -> None:
    import signal

    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert client_for(sandbox).delete_entry("1").ok
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_under_another_sigint_handler_still_waits_for_the_answer(
    sandbox: SandboxServer,
) -> None:
    """A front end with its own SIGINT handler: it is called once the request has ended (not
    in the middle of it), and the ``KeyboardInterrupt`` it raises carries the true result."""
    import signal

    from dict_magics.service.client import RequestInterrupted

    def own_handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, own_handler)
    timer = threading.Timer(
        0.3, lambda: signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
    )
    try:
        sandbox.inject("hang", delay=1.0)
        timer.start()
        with pytest.raises(RequestInterrupted) as caught:
            client_for(sandbox).delete_entry("7")
        assert signal.getsignal(signal.SIGINT) is own_handler
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert caught.value.result.ok and caught.value.result.elapsed >= 0.9
    assert "7" not in sandbox.entries


def test_a_custom_handler_that_does_not_raise_lets_the_result_through(
    sandbox: SandboxServer,
) -> None:
    """A SIGINT handler that only takes note (an event loop's, say) is called once, after the
    request ended; nothing is raised, and the result comes back as usual."""
    import signal

    calls: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: calls.append(signum))
    timer = threading.Timer(
        0.3, lambda: signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
    )
    try:
        sandbox.inject("hang", delay=1.0)
        timer.start()
        result = client_for(sandbox).delete_entry("7")
        assert calls == [signal.SIGINT]  # delivered once the request had ended
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert result.ok and result.elapsed >= 0.9 and "7" not in sandbox.entries
