"""The sandbox over HTTPS: a throw-away CA, real handshakes on loopback, keep-alive, clean-up."""

from __future__ import annotations

import os
import signal
import socket
import ssl
import stat
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
import requests
from test_sandbox import signed_headers

from dict_magics.sandbox import SandboxServer, main
from dict_magics.sandbox.handler import TRUSTME_MISSING, TrustmeMissing

LIST = "/api/v1/dictionary"


@pytest.fixture
def tls_sandbox() -> Iterator[SandboxServer]:
    with SandboxServer(10, tls=True) as server:
        yield server


def tls_socket(sandbox: SandboxServer) -> ssl.SSLSocket:
    """A client connection that trusts the sandbox's CA, handshake done."""
    context = ssl.create_default_context(cafile=sandbox.ca_path)
    raw = socket.create_connection(("127.0.0.1", sandbox.port), timeout=5)
    return context.wrap_socket(raw, server_hostname="127.0.0.1")


def test_get_and_delete_over_tls_with_signed_headers(tls_sandbox: SandboxServer) -> None:
    url, ca = tls_sandbox.url, tls_sandbox.ca_path
    assert url == f"https://127.0.0.1:{tls_sandbox.port}"
    path = "/api/v1/dictionary/3"
    answer = requests.delete(
        url + path, headers=signed_headers(tls_sandbox, path), verify=ca, timeout=5
    )
    assert answer.status_code == 200 and answer.json() == {"status": "success"}
    headers = signed_headers(tls_sandbox, LIST)
    listing = requests.get(url + LIST, headers=headers, verify=ca, timeout=5)
    ids = [e["id"] for e in listing.json()["data"]["entries"]]
    assert listing.status_code == 200 and ids == [1, 2, 4, 5, 6, 7, 8, 9, 10]
    by_name = f"https://localhost:{tls_sandbox.port}{LIST}"  # the certificate names localhost too
    again = requests.get(by_name, headers=signed_headers(tls_sandbox, LIST), verify=ca, timeout=5)
    assert again.status_code == 200
    assert [r.operation for r in tls_sandbox.requests] == ["delete", "list", "list"]


def test_a_client_that_does_not_trust_the_ca_fails_the_handshake(
    tls_sandbox: SandboxServer,
) -> None:
    path = "/api/v1/dictionary/1"
    with pytest.raises(requests.exceptions.SSLError, match="CERTIFICATE_VERIFY_FAILED"):
        requests.delete(
            tls_sandbox.url + path,
            headers=signed_headers(tls_sandbox, path),
            verify=requests.certs.where(),  # the public CAs: ours is not among them
            timeout=5,
        )
    assert tls_sandbox.requests == [] and "1" in tls_sandbox.entries
    trusted = requests.delete(
        tls_sandbox.url + path,
        headers=signed_headers(tls_sandbox, path),
        verify=tls_sandbox.ca_path,
        timeout=5,
    )
    assert trusted.json() == {"status": "success"}  # the failed handshake harmed nothing


def test_a_silent_client_does_not_hold_up_the_others(tls_sandbox: SandboxServer) -> None:
    # Connected, never says hello: were the handshake done while accepting, the server would
    # wait on this client (for up to 10 s) and the request below would time out.
    with socket.create_connection(("127.0.0.1", tls_sandbox.port), timeout=5):
        path = "/api/v1/dictionary/2"
        answer = requests.delete(
            tls_sandbox.url + path,
            headers=signed_headers(tls_sandbox, path),
            verify=tls_sandbox.ca_path,
            timeout=(5, 1.5),
        )
        assert answer.json() == {"status": "success"}
    assert tls_sandbox.connections_accepted == 2


def test_keep_alive_reuses_one_tls_connection(tls_sandbox: SandboxServer) -> None:
    with requests.Session() as session:
        for entry_id in ("1", "2", "3", "4"):
            path = f"/api/v1/dictionary/{entry_id}"
            answer = session.delete(
                tls_sandbox.url + path,
                headers=signed_headers(tls_sandbox, path),
                verify=tls_sandbox.ca_path,
                timeout=5,
            )
            assert answer.json() == {"status": "success"}
    assert tls_sandbox.connections_accepted == 1
    assert [r.entry_id for r in tls_sandbox.requests] == ["1", "2", "3", "4"]


def test_the_ca_lives_in_a_private_folder_only_while_the_sandbox_runs() -> None:
    sandbox = SandboxServer(1, tls=True)
    assert sandbox.ca_path is None  # not started: nothing to trust yet
    sandbox.start()
    try:
        ca = sandbox.ca_path
        assert ca is not None and os.path.isfile(ca)
        with open(ca) as pem:
            assert pem.read().startswith("-----BEGIN CERTIFICATE-----")
        assert stat.S_IMODE(os.stat(os.path.dirname(ca)).st_mode) == 0o700
    finally:
        sandbox.stop()
    assert not os.path.exists(ca) and not os.path.exists(os.path.dirname(ca))
    assert sandbox.ca_path is None


def test_env_makes_requests_trust_the_ca_over_the_system_bundle(
    tls_sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = tls_sandbox.env()
    assert env["REQUESTS_CA_BUNDLE"] == env["SSL_CERT_FILE"] == tls_sandbox.ca_path
    assert env["DICT_MAGICS_BASE_URL"] == tls_sandbox.url
    path = "/api/v1/dictionary/5"
    # The requests quirk env() answers: with trust_env, REQUESTS_CA_BUNDLE beats Session.verify.
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", requests.certs.where())
    with requests.Session() as session:
        session.verify = tls_sandbox.ca_path
        with pytest.raises(requests.exceptions.SSLError):
            session.delete(tls_sandbox.url + path, headers=signed_headers(tls_sandbox, path))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with requests.Session() as session:
        answer = session.delete(tls_sandbox.url + path, headers=signed_headers(tls_sandbox, path))
    assert answer.json() == {"status": "success"} and "5" not in tls_sandbox.entries


def test_faults_work_over_tls(tls_sandbox: SandboxServer) -> None:
    tls_sandbox.inject("drop_before")
    path = "/api/v1/dictionary/6"
    with pytest.raises(requests.ConnectionError):
        requests.delete(
            tls_sandbox.url + path,
            headers=signed_headers(tls_sandbox, path),
            verify=tls_sandbox.ca_path,
            timeout=5,
        )
    assert "6" in tls_sandbox.entries and tls_sandbox.requests[-1].operation == "dropped"


def test_continue_flood_over_tls_ends_when_the_client_hangs_up(
    tls_sandbox: SandboxServer,
) -> None:
    tls_sandbox.inject("continue_flood", delay=60)  # only the client's hang-up can end it soon
    path = "/api/v1/dictionary/7"
    head = "".join(f"{k}: {v}\r\n" for k, v in signed_headers(tls_sandbox, path).items())
    with tls_socket(tls_sandbox) as sock:
        sock.sendall(f"DELETE {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}\r\n".encode())
        assert sock.recv(4096).startswith(b"HTTP/1.1 100 Continue")
    open_connections = tls_sandbox.connections
    deadline = time.monotonic() + 3  # a bound, not a measurement
    while open_connections and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not open_connections and "7" not in tls_sandbox.entries


def test_stop_ends_a_connection_held_in_a_fault() -> None:
    sandbox = SandboxServer(3, tls=True).start()
    sandbox.inject("hang", delay=60)
    path = "/api/v1/dictionary/1"
    head = "".join(f"{k}: {v}\r\n" for k, v in signed_headers(sandbox, path).items())
    sock = tls_socket(sandbox)
    sock.sendall(f"DELETE {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}\r\n".encode())
    sandbox.stop()
    sock.settimeout(3)  # a bound, not a measurement: a fault that ignored stop() would hang
    with sock:
        try:
            rest = sock.recv(4096)
        except (ConnectionResetError, ssl.SSLError):
            rest = b""
    assert b"200" not in rest


def test_without_trustme_tls_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "trustme", None)  # as if not installed: import fails
    with pytest.raises(TrustmeMissing) as raised:
        SandboxServer(1, tls=True)
    assert str(raised.value) == TRUSTME_MISSING
    assert TRUSTME_MISSING == "the TLS sandbox needs trustme: pip install trustme"
    with pytest.raises(SystemExit) as exited:
        main(["--tls", "--port", "0"])
    assert exited.value.code == 2
    assert capsys.readouterr().err == TRUSTME_MISSING + "\n"


def test_command_line_tls_prints_the_ca_to_trust_and_stops_on_ctrl_c() -> None:
    secret = "cli-tls-demo-key"
    options = ["--tls", "--port", "0", "--quiet", "--entries", "3", "--secret-key", secret]
    options += ["--rate-limit", "0.1", "--burst", "2"]
    process, lines = _command_line_sandbox(options)
    try:
        url = lines[0].split(" at ")[1].split(" with ")[0]
        assert url.startswith("https://127.0.0.1:")
        ca = next(line for line in lines if line.startswith("Trust its")).rsplit(" ", 1)[1]
        assert os.path.isfile(ca)
        assert f"  export REQUESTS_CA_BUNDLE={ca}" in lines
        assert f"  export SSL_CERT_FILE={ca}" in lines
        assert any(line.startswith("Rate limit: 0.1 requests a second") for line in lines)
        client = SandboxServer(0, secret_key=secret)  # never started: it only signs
        answers = []
        for _ in range(3):  # a burst of 2 passes, the third is over the limit
            headers = signed_headers(client, "/api/v1/dictionary/2")
            answers.append(
                requests.delete(url + "/api/v1/dictionary/2", headers=headers, verify=ca, timeout=5)
            )
        assert [a.status_code for a in answers] == [200, 404, 429]
        assert answers[2].headers["Retry-After"] == "1"
    finally:
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=10)
    assert process.returncode == 0 and "Stopped." in out
    assert not os.path.exists(ca)


def test_command_line_tls_removes_its_ca_when_killed() -> None:
    """``kill`` (SIGTERM, as a process manager or CI stops it) cleans up like Ctrl-C does."""
    process, lines = _command_line_sandbox(["--tls", "--port", "0", "--quiet"])
    try:
        ca = next(line for line in lines if line.startswith("Trust its")).rsplit(" ", 1)[1]
        assert os.path.isfile(ca)
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=10)
    assert process.returncode == 0 and "Stopped." in out
    assert not os.path.exists(os.path.dirname(ca))


def _command_line_sandbox(options: list[str]) -> tuple[subprocess.Popen[str], list[str]]:
    """``dict-magics sandbox`` started with ``options``, and its welcome lines once it serves."""
    process = subprocess.Popen(
        [sys.executable, "-m", "dict_magics", "sandbox", *options],
        stdout=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    while not lines or not lines[-1].startswith("Press Ctrl-C"):
        line = process.stdout.readline()  # type: ignore[union-attr]
        if not line:
            process.kill()
            process.wait()
            raise AssertionError(f"the sandbox ended early: {lines}")
        lines.append(line.rstrip("\n"))
    return process, lines
