"""The sandbox is strict: it accepts only what the real service would, and says why not."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import requests

from dict_magics.sandbox import FAULT_KINDS, SandboxServer
from dict_magics.service.signing import next_nonce, sign


def signed_headers(sandbox: SandboxServer, path: str, nonce: str | None = None) -> dict[str, str]:
    nonce = nonce or next_nonce()
    return {
        "Content-Type": "application/json",
        "accessKey": sandbox.access_key,
        "nonce": nonce,
        "signature": sign(path, sandbox.secret_key, nonce),
    }


def send(sandbox: SandboxServer, path: str, method: str = "DELETE", **kwargs) -> requests.Response:
    headers = kwargs.pop("headers", None) or signed_headers(sandbox, path)
    return requests.request(method, sandbox.url + path, headers=headers, timeout=5, **kwargs)


def test_seeded_entries_and_a_valid_delete(sandbox: SandboxServer) -> None:
    assert list(sandbox.entries)[:3] == ["1", "2", "3"] and len(sandbox.entries) == 100
    answer = send(sandbox, "/api/v1/dictionary/1")
    assert answer.status_code == 200 and answer.json() == {"status": "success"}
    assert "1" not in sandbox.entries
    assert sandbox.url.startswith("http://127.0.0.1:")


def test_entries_can_be_given_as_ids() -> None:
    with SandboxServer(["a", "b/c"]) as sandbox:
        assert sorted(sandbox.entries) == ["a", "b/c"]


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH"])
def test_only_delete_is_allowed(sandbox: SandboxServer, method: str) -> None:
    answer = send(sandbox, "/api/v1/dictionary/1", method=method)
    assert answer.status_code == 405 and answer.json()["status"] == "failure"
    assert "1" in sandbox.entries


def test_query_string_and_body_are_rejected(sandbox: SandboxServer) -> None:
    path = "/api/v1/dictionary/1?x=1"
    assert send(sandbox, path, headers=signed_headers(sandbox, path)).status_code == 400
    assert send(sandbox, "/api/v1/dictionary/1", data=b"{}").status_code == 400
    assert "1" in sandbox.entries


@pytest.mark.parametrize(
    "path", ["/api/v1/dictionary/", "/api/v1/dictionary/a/b", "/api/v2/dictionary/1", "/"]
)
def test_other_paths_are_not_endpoints(sandbox: SandboxServer, path: str) -> None:
    assert send(sandbox, path).status_code == 404


def test_headers_are_checked(sandbox: SandboxServer) -> None:
    path = "/api/v1/dictionary/1"
    cases = {
        "Content-Type must be application/json": {"Content-Type": "text/plain"},
        "required": {"signature": ""},
        "unknown access key": {"accessKey": "someone-else"},
        "Unix time in milliseconds": {"nonce": "abc"},
        "5 minutes": {"nonce": str(int(time.time() * 1000) - 301_000)},
        "signature does not match": {"signature": "0" * 64},
    }
    for words, change in cases.items():
        headers = signed_headers(sandbox, path) | change
        answer = send(sandbox, path, headers=headers)
        assert answer.status_code == 401 or words.startswith("Content-Type"), words
        assert words in answer.json()["message"], (words, answer.json())
    assert "1" in sandbox.entries
    assert all(r.operation == "rejected" for r in sandbox.requests)


def test_signature_covers_the_exact_path(sandbox: SandboxServer) -> None:
    headers = signed_headers(sandbox, "/api/v1/dictionary/2")
    answer = send(sandbox, "/api/v1/dictionary/1", headers=headers)
    assert answer.status_code == 401 and "1" in sandbox.entries and "2" in sandbox.entries


def test_replayed_nonce_is_rejected(sandbox: SandboxServer) -> None:
    path = "/api/v1/dictionary/404"
    headers = signed_headers(sandbox, path)
    assert send(sandbox, path, headers=headers).status_code == 404
    again = send(sandbox, path, headers=headers)
    assert again.status_code == 401 and "replayed" in again.json()["message"]


def test_purge_and_unknown_ids(sandbox: SandboxServer) -> None:
    assert send(sandbox, "/api/v1/dictionary/zzz").json()["status"] == "failure"
    answer = send(sandbox, "/api/v1/dictionary/dictionary-all")
    assert answer.json()["status"] == "success" and sandbox.entries == {}


def test_percent_encoded_purge_word_is_routed_as_the_purge(sandbox: SandboxServer) -> None:
    # The sandbox decodes before routing, as a careless real server might: so the client's
    # encoding (never the server's leniency) is what keeps ids away from the purge.
    # (http.client, because requests itself would rewrite %64 to "d" before sending.)
    import http.client

    path = "/api/v1/dictionary/%64ictionary-all"
    conn = http.client.HTTPConnection("127.0.0.1", sandbox.port, timeout=5)
    conn.request("DELETE", path, headers=signed_headers(sandbox, path))
    assert conn.getresponse().status == 200
    conn.close()
    assert sandbox.entries == {}


def test_unknown_fault_kind_is_refused(sandbox: SandboxServer) -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        sandbox.inject("meteor")
    assert "hang" in FAULT_KINDS


def test_faults_are_consumed_in_order(sandbox: SandboxServer) -> None:
    sandbox.fail_next(1, 503, retry_after=7)
    sandbox.inject("other_status")
    first = send(sandbox, "/api/v1/dictionary/1")
    assert first.status_code == 503 and first.headers["Retry-After"] == "7"
    assert send(sandbox, "/api/v1/dictionary/1").json() == {"status": "deleted"}
    assert send(sandbox, "/api/v1/dictionary/1").json() == {"status": "success"}


def test_env_points_a_client_at_the_sandbox(sandbox: SandboxServer) -> None:
    env = sandbox.env()
    assert env["DICT_MAGICS_BASE_URL"] == sandbox.url
    assert env["DICT_MAGICS_SECRET_KEY"] == sandbox.secret_key


@pytest.mark.shows_secret
def test_command_line_serves_until_interrupted() -> None:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dict_magics.sandbox",
            "--port",
            "0",
            "--entries",
            "5",
            "--secret-key",
            "demo-secret",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        first = process.stdout.readline()
        assert "Sandbox dictionary service at http://127.0.0.1:" in first
        url = first.split(" at ")[1].split(" with ")[0]
        lines = [process.stdout.readline() for _ in range(5)]
        assert any("DICT_MAGICS_SECRET_KEY=demo-secret" in line for line in lines)
        sandbox = SandboxServer(0, secret_key="demo-secret")
        path = "/api/v1/dictionary/3"
        answer = requests.delete(url + path, headers=signed_headers(sandbox, path), timeout=5)
        assert answer.json() == {"status": "success"}
    finally:
        process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=10)
    assert process.returncode == 0 and "Stopped." in out


def test_echo_prints_a_line_per_request_without_headers(capsys: pytest.CaptureFixture) -> None:
    with SandboxServer(3, echo=True) as sandbox:
        send(sandbox, "/api/v1/dictionary/1")
        send(sandbox, "/api/v1/dictionary/1")
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "DELETE /api/v1/dictionary/1 -> 200 success",
        "DELETE /api/v1/dictionary/1 -> 404 failure",
    ]


def test_busy_port_says_how_to_pick_another() -> None:
    with SandboxServer(0) as busy:
        port = busy.port
        process = subprocess.run(
            [sys.executable, "-m", "dict_magics.sandbox", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert process.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in process.stderr
    assert "--port 0 picks any free port" in process.stderr


def test_replays_are_rejected_across_nonce_pruning() -> None:
    with SandboxServer(0) as sandbox:
        sandbox._state.prune_at = 3  # prune often: a replay must still be caught after it
        sent = []
        for _ in range(8):
            path = "/api/v1/dictionary/x"
            headers = signed_headers(sandbox, path)
            assert send(sandbox, path, headers=headers).status_code == 404
            sent.append(headers)
        for headers in sent:
            again = send(sandbox, "/api/v1/dictionary/x", headers=headers)
            assert again.status_code == 401 and "replayed" in again.json()["message"]


def test_use_sandbox_reuses_only_a_loopback_sandbox(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from dict_magics.sandbox import SANDBOX_MARKER, use_sandbox

    real = "https://api.real.example"
    # Every variable use_sandbox() writes goes through monkeypatch, so all are undone after.
    for name in ("DICT_MAGICS_ACCESS_KEY", "DICT_MAGICS_SECRET_KEY", "DICT_MAGICS_PROFILE"):
        monkeypatch.setenv(name, "from-a-real-account")
    for name in (SANDBOX_MARKER, "DICT_MAGICS_BASE_URL"):
        monkeypatch.setenv(name, real)
    started = use_sandbox(entries=3)
    try:
        assert started is not None
        assert os.environ["DICT_MAGICS_BASE_URL"] == started.url != real
        assert "Started an embedded sandbox" in capsys.readouterr().out
    finally:
        started.stop()
    with SandboxServer(0) as given:
        for name, value in given.env().items():
            monkeypatch.setenv(name, value)
        assert use_sandbox(entries=3) is None
        assert f"Using the sandbox already running at {given.url}" in capsys.readouterr().out
