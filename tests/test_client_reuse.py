"""One client kept between operations, and kept-alive connections the server closed meanwhile.

The cache is tested through its own API and through the real magics (cells in a real
InteractiveShell), counting the connections the sandbox accepted.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.utils.capture import capture_output

from dict_magics.models import Entry
from dict_magics.operations import context as clients
from dict_magics.operations.context import ClientCache, ClientKey, fingerprint
from dict_magics.profiles.credentials import Credentials
from dict_magics.sandbox import SandboxServer
from dict_magics.service.client import DictionaryClient

SETTINGS = {"timeout": 15.0, "max_retries": 3}


def creds_for(sandbox: SandboxServer, profile: str = "default", **changes: str) -> Credentials:
    values = {
        "base_url": sandbox.url,
        "access_key": sandbox.access_key,
        "secret_key": sandbox.secret_key,
    }
    values.update(changes)
    return Credentials(profile, values["base_url"], values["access_key"], values["secret_key"])


@pytest.fixture
def cache() -> Iterator[ClientCache]:
    made = ClientCache(size=3)
    yield made
    made.forget()


@pytest.fixture
def kept() -> Iterator[ClientCache]:
    """The process's own cache (what the magics use), empty before and after the test."""
    clients.close_all()
    yield clients.CLIENTS
    clients.close_all()


# -- the cache's own API ------------------------------------------------------------------------


def test_same_credentials_and_settings_share_one_client(
    cache: ClientCache, sandbox: SandboxServer
) -> None:
    first = cache.get(creds_for(sandbox), **SETTINGS)
    assert cache.get(creds_for(sandbox), **SETTINGS) is first
    assert not first.closed and len(cache.kept()) == 1
    for number in ("1", "2", "3"):
        assert cache.get(creds_for(sandbox), **SETTINGS).delete_entry(number).ok
    assert sandbox.connections_accepted == 1


@pytest.mark.parametrize(
    "change",
    [
        {"secret_key": "sandbox-secret-another-one-entirely"},
        {"access_key": "another-access-key"},
        {"base_url": "http://localhost:9"},
    ],
)
def test_a_credential_change_gives_a_fresh_client_and_closes_the_old(
    cache: ClientCache, sandbox: SandboxServer, change: dict[str, str]
) -> None:
    old = cache.get(creds_for(sandbox), **SETTINGS)
    new = cache.get(creds_for(sandbox, **change), **SETTINGS)
    assert new is not old and old.closed and not new.closed
    assert cache.kept() == [new]


def test_other_profiles_keep_their_clients(cache: ClientCache, sandbox: SandboxServer) -> None:
    work = cache.get(creds_for(sandbox, "work"), **SETTINGS)
    home = cache.get(creds_for(sandbox, "home", secret_key="sandbox-secret-home"), **SETTINGS)
    assert not work.closed and not home.closed and len(cache.kept()) == 2


def test_the_least_recently_used_client_is_closed_beyond_the_bound(
    cache: ClientCache, sandbox: SandboxServer
) -> None:
    a, b, c = (cache.get(creds_for(sandbox, p), **SETTINGS) for p in ("a", "b", "c"))
    assert cache.get(creds_for(sandbox, "a"), **SETTINGS) is a  # now the most recent
    d = cache.get(creds_for(sandbox, "d"), **SETTINGS)
    assert b.closed and not (a.closed or c.closed or d.closed)
    assert cache.kept() == [c, a, d]


def test_forget_and_close_all_close_what_they_drop(
    cache: ClientCache, sandbox: SandboxServer
) -> None:
    a = cache.get(creds_for(sandbox, "a"), **SETTINGS)
    b = cache.get(creds_for(sandbox, "b"), **SETTINGS)
    assert cache.forget("a") == 1 and a.closed and not b.closed
    assert cache.forget("nobody") == 0
    cache.forget()
    assert b.closed and len(cache.kept()) == 0


def test_concurrent_callers_get_one_client(cache: ClientCache, sandbox: SandboxServer) -> None:
    barrier = threading.Barrier(16)
    got: list[DictionaryClient] = []

    def fetch() -> None:
        barrier.wait()
        got.append(cache.get(creds_for(sandbox), **SETTINGS))

    threads = [threading.Thread(target=fetch) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(got) == 16 and len({id(c) for c in got}) == 1 and len(cache.kept()) == 1


def test_keys_hold_a_keyed_hash_never_the_secret(sandbox: SandboxServer) -> None:
    key = ClientKey.of(creds_for(sandbox), timeout=15.0, max_retries=3)
    assert sandbox.secret_key not in repr(key) and sandbox.secret_key not in key.credentials
    assert key.credentials == fingerprint(sandbox.access_key, sandbox.secret_key)
    assert fingerprint("ab", "c") != fingerprint("a", "bc")
    assert fingerprint("a", "s1") != fingerprint("a", "s2")
    assert len({fingerprint("a", "s"), fingerprint("b", "s")}) == 2


def test_with_the_cache_off_each_lease_is_a_new_client_closed_after(
    kept: ClientCache, sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(clients.CACHE_ENV, "off")
    leased = []
    for number in ("1", "2"):
        with clients.lease(creds_for(sandbox), **SETTINGS) as client:
            assert client.delete_entry(number).ok
            leased.append(client)
    assert leased[0] is not leased[1] and all(c.closed for c in leased)
    assert len(kept.kept()) == 0 and sandbox.connections_accepted == 2
    monkeypatch.delenv(clients.CACHE_ENV)
    with clients.lease(creds_for(sandbox), **SETTINGS) as client:
        assert client.delete_entry("3").ok
    assert not client.closed and kept.kept() == [client]


# -- the magics: cells share one client and one connection --------------------------------------


def cell(ip: Any, source: str) -> Any:
    with capture_output():
        outcome = ip.run_cell(source)
    assert outcome.error_in_exec is None, outcome.error_in_exec
    return outcome.result


@pytest.fixture
def env_sandbox(monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer) -> SandboxServer:
    for name, value in sandbox.env().items():
        monkeypatch.setenv(name, value)
    return sandbox


def test_cells_reuse_one_client_and_one_connection(
    ip: Any, kept: ClientCache, env_sandbox: SandboxServer
) -> None:
    for number in ("1", "2", "3"):
        assert cell(ip, f"%dict_delete {number}").ok
    assert env_sandbox.connections_accepted == 1
    assert cell(ip, "%dict_delete 4 5 6").ok  # three workers: up to two more connections
    after_batch = env_sandbox.connections_accepted
    assert after_batch <= 3
    assert cell(ip, "%dict_delete 7").ok and cell(ip, "%dict_delete 8 9").ok
    [client] = kept.kept()
    # The batch's pool is kept: two more requests at once open at most what it lacks.
    assert env_sandbox.connections_accepted <= max(after_batch, 2) and not client.closed
    assert {str(i) for i in range(1, 10)}.isdisjoint(env_sandbox.entries)


def test_a_new_secret_in_a_later_cell_gets_a_new_client(
    ip: Any, kept: ClientCache, env_sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cell(ip, "%dict_delete 1").ok
    [first] = kept.kept()
    monkeypatch.setenv("DICT_MAGICS_SECRET_KEY", "sandbox-secret-not-the-right-one")
    with capture_output():
        refused = ip.run_cell("%dict_delete 2")  # its listing is refused: nothing sent
    assert "refused the credentials" in str(refused.error_in_exec)
    assert "--no-snapshot" not in str(refused.error_in_exec)  # a copyless delete fails too
    [second] = kept.kept()
    assert second is not first and first.closed
    monkeypatch.setenv("DICT_MAGICS_SECRET_KEY", env_sandbox.secret_key)
    assert cell(ip, "%dict_delete 2").ok
    [third] = kept.kept()
    assert third not in (first, second) and second.closed


def test_config_changes_reach_the_next_cell(
    ip: Any, kept: ClientCache, env_sandbox: SandboxServer
) -> None:
    assert cell(ip, "%dict_delete 1").ok
    cell(ip, "%config DictMagics.timeout = 7.5")
    assert cell(ip, "%dict_delete 2").ok
    timeouts = sorted(c.timeout for c in kept.kept())
    assert timeouts == [7.5, 15.0]


def test_a_tls_sandbox_is_trusted_through_requests_ca_bundle_in_a_cell(
    ip: Any, kept: ClientCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SandboxServer(10, tls=True) as tls:
        for name, value in tls.env().items():
            monkeypatch.setenv(name, value)
        assert cell(ip, "%dict_delete 1").ok
        assert cell(ip, "%dict_delete 2").ok
        assert tls.connections_accepted == 1 and "1" not in tls.entries


# -- kept-alive connections the server closed meanwhile --------------------------------------------


def test_a_connection_closed_while_idle_does_not_fail_a_request(sandbox: SandboxServer) -> None:
    client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key)
    assert client.delete_entry("1").ok
    sandbox.drop_connections()  # an idle timeout, or a restart behind a load balancer
    deleted = client.delete_entry("2")
    assert deleted.ok and deleted.attempts == 1
    sandbox.drop_connections()
    assert len(client.list_entries()) == 98
    sandbox.drop_connections()
    added = client.add_entry(Entry("", "ja", "日曜日", "en", "SUN"))
    assert added.ok and added.attempts == 1  # found closed before it was sent: never unknown
    assert sandbox.connections_accepted == 4
    assert [r.operation for r in sandbox.requests] == ["delete", "delete", "list", "add"]


def test_an_idle_closed_tls_connection_does_not_fail_a_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with SandboxServer(10, tls=True) as tls:
        for name, value in tls.env().items():
            monkeypatch.setenv(name, value)
        client = DictionaryClient(tls.url, tls.access_key, tls.secret_key)
        assert client.delete_entry("1").ok and client.delete_entry("2").ok
        assert tls.connections_accepted == 1
        tls.drop_connections()
        result = client.delete_entry("3")
        assert result.ok and result.attempts == 1 and tls.connections_accepted == 2


class ClosingProxy:
    """Forwards the first request of each connection to ``port``; at the second it hangs up
    without forwarding it: a server closing an idle connection just as a request arrives."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.hung_up = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                downstream, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.port))
            for run in (self._relay, self._requests):
                threading.Thread(target=run, args=(upstream, downstream), daemon=True).start()

    def _requests(self, upstream: socket.socket, downstream: socket.socket) -> None:
        seen = b""
        while data := downstream.recv(65536):
            if b"\r\n\r\n" in seen:  # a second request: hang up instead of forwarding it
                self.hung_up += 1
                break
            seen += data
            upstream.sendall(data)
        for sock in (downstream, upstream):
            sock.close()

    @staticmethod
    def _relay(upstream: socket.socket, downstream: socket.socket) -> None:
        try:
            while data := upstream.recv(65536):
                downstream.sendall(data)
        except OSError:
            pass


def test_a_connection_closed_as_a_request_arrives_is_settled_honestly(
    sandbox: SandboxServer,
) -> None:
    proxy = ClosingProxy(sandbox.port)
    try:
        client = DictionaryClient(proxy.url, sandbox.access_key, sandbox.secret_key, backoff=0.01)
        assert client.delete_entry("1").ok
        # Sent, then the connection closed: it may have been acted on. A DELETE may be sent
        # again (deleting twice is deleting once) ...
        deleted = client.delete_entry("2")
        assert deleted.ok and deleted.attempts == 2 and "2" not in sandbox.entries
        # ... a POST may not (it could add the entry twice): its outcome is unknown.
        added = client.add_entry(Entry("", "ja", "日曜日", "en", "SUN"))
        assert added.outcome == "unknown" and added.attempts == 1
        assert proxy.hung_up == 2
        assert [r.operation for r in sandbox.requests] == ["delete", "delete"]
    finally:
        proxy.close()
