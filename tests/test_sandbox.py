"""The sandbox is strict: it accepts only what the real service would, and says why not."""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
import requests

from dict_magics.models import Entry
from dict_magics.sandbox import FAULT_KINDS, SandboxServer
from dict_magics.sandbox.ratelimit import TokenBucket
from dict_magics.service.auth import nonces_for, sign

LIST = "/api/v1/dictionary"
TERMS = {"fromLang": "ja", "fromText": "請求書", "toLang": "en", "toText": "invoice"}


def signed_headers(sandbox: SandboxServer, path: str, nonce: str | None = None) -> dict[str, str]:
    nonce = nonce or nonces_for(sandbox.access_key)()
    return {
        "Content-Type": "application/json",
        "accessKey": sandbox.access_key,
        "nonce": nonce,
        "signature": sign(path, sandbox.secret_key, nonce),
    }


def said(answer: requests.Response) -> str:
    """The message of a refusal in the vendor's shape: ``{"status", "data": {code, message}}``."""
    return answer.json()["data"]["message"]


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


@pytest.mark.parametrize("method", ["GET", "POST", "PATCH"])
def test_an_entry_path_only_takes_delete_and_put(sandbox: SandboxServer, method: str) -> None:
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
        "Content-Type must be application/json": (40202, {"Content-Type": "text/plain"}),
        "required: signature": (40200, {"signature": ""}),
        "Access key does not exist": (40002, {"accessKey": "someone-else"}),
        "Key is invalid": (40003, {"accessKey": "k" * 300}),
        "Nonce value is too big": (40008, {"nonce": "abc"}),
        "Nonce value is too small": (40005, {"nonce": str(int(time.time() * 1000) - 301_000)}),
        "The signature is incorrect.": (40006, {"signature": "0" * 64}),
    }
    assert send(sandbox, LIST, method="GET").status_code == 200  # a nonce accepted
    for words, (code, change) in cases.items():
        headers = signed_headers(sandbox, path) | change
        if "signature" not in change and "accessKey" not in change:
            headers["signature"] = sign(path, sandbox.secret_key, headers["nonce"])
        answer = send(sandbox, path, headers=headers)
        assert answer.status_code == (400 if code >= 40200 else 401), words
        assert answer.json()["data"]["code"] == code, (words, answer.json())
        assert words in said(answer), (words, answer.json())
    assert "1" in sandbox.entries
    assert all(r.operation == "rejected" for r in sandbox.requests[1:])


def test_signature_covers_the_exact_path(sandbox: SandboxServer) -> None:
    headers = signed_headers(sandbox, "/api/v1/dictionary/2")
    answer = send(sandbox, "/api/v1/dictionary/1", headers=headers)
    assert answer.status_code == 401 and "1" in sandbox.entries and "2" in sandbox.entries


def test_replayed_nonce_is_rejected(sandbox: SandboxServer) -> None:
    path = "/api/v1/dictionary/404"
    headers = signed_headers(sandbox, path)
    assert send(sandbox, path, headers=headers).status_code == 404
    again = send(sandbox, path, headers=headers)
    assert again.status_code == 401 and again.json()["data"]["code"] == 40005


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
    assert "REQUESTS_CA_BUNDLE" not in env and "SSL_CERT_FILE" not in env  # plain HTTP
    assert sandbox.ca_path is None


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
            "--no-listing",
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
        listing = requests.get(url + LIST, headers=signed_headers(sandbox, LIST), timeout=5)
        assert listing.status_code == 404  # --no-listing
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
    # The lenient rule forgets old nonces (it must, to stay small): pruning must not forget
    # recent ones. (The vendor's rule keeps one number per key and needs no pruning.)
    with SandboxServer(0, nonce_rule="unique") as sandbox:
        sandbox._nonces._prune_at = 3  # prune often: a replay must still be caught after it
        sent = []
        for _ in range(8):
            path = "/api/v1/dictionary/x"
            headers = signed_headers(sandbox, path)
            assert send(sandbox, path, headers=headers).status_code == 404
            sent.append(headers)
        for headers in sent:
            again = send(sandbox, "/api/v1/dictionary/x", headers=headers)
            assert again.status_code == 401 and "replayed" in said(again)


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


# -- entries with real terms ------------------------------------------------------------------


def test_seeded_entries_have_real_distinct_terms_in_several_language_pairs() -> None:
    with SandboxServer(1000) as sandbox:
        entries = sandbox.entries
        assert entries["1"] == Entry("1", "ja", "金曜日", "en", "FRI")
        assert sandbox.entry("4") == Entry("4", "de", "Straße", "en", "street")
        assert len(set(sandbox.terms)) == 1000
        pairs = {(e.from_lang, e.to_lang) for e in list(entries.values())[:20]}
        assert {("ja", "en"), ("en", "de"), ("zh-CN", "en"), ("de", "en"), ("en", "fr")} <= pairs
        assert "会議" in {e.from_text for e in entries.values()}
        assert all(e.from_text.strip() and e.to_text.strip() for e in entries.values())
        late = entries["1000"]
        assert late.from_text.endswith(" 4") and late.to_text.endswith(" 4")


def test_entries_can_be_ids_entries_or_service_dicts() -> None:
    given = [
        "a",
        Entry("7", "en", "Straße", "de", "street"),
        {"id": 9, "fromLang": "zh", "fromText": "会议", "toLang": "en", "toText": "meeting"},
    ]
    with SandboxServer(given) as sandbox:
        assert sandbox.entry("7").from_text == "Straße"
        assert sandbox.entry("9") == Entry("9", "zh", "会议", "en", "meeting")
        assert sandbox.entry("a").from_text and sandbox.entry("b") is None
        sandbox.add_entries(["3"])
        assert sandbox.entry("3") == SandboxServer(3).entries["3"]  # same id, same terms
        assert len(sandbox.entries) == 4


# -- GET: the listing ------------------------------------------------------------------------


def test_listing_returns_every_entry_in_id_order_with_numeric_ids() -> None:
    with SandboxServer(["10", "9", "b", "007", "a", "2"]) as sandbox:
        answer = send(sandbox, LIST, method="GET")
        assert answer.status_code == 200
        body = answer.json()
        assert body["status"] == "success" and set(body) == {"status", "data"}
        listed = body["data"]["entries"]
        assert [e["id"] for e in listed] == [2, 9, 10, "007", "a", "b"]
        assert listed[0] == {"id": 2, **sandbox.entry("2").to_service(with_id=False)}
        assert [r.operation for r in sandbox.requests] == ["list"]


def test_non_ascii_terms_travel_as_utf8_and_round_trip() -> None:
    terms = {"fromLang": "de", "fromText": "Größe 金曜日 🙂", "toLang": "en", "toText": "size"}
    with SandboxServer(1) as sandbox:
        assert send(sandbox, LIST, method="POST", json=terms).json() == {"status": "success"}
        answer = send(sandbox, LIST, method="GET")
        assert "金曜日".encode() in answer.content and "Größe".encode() in answer.content
        assert answer.json()["data"]["entries"][1] == {"id": 2, **terms}


@pytest.mark.parametrize(
    "change, words",
    [
        ({"signature": "0" * 64}, "The signature is incorrect."),
        ({"Content-Type": "text/plain"}, "Content-Type"),
        ({"accessKey": "someone-else"}, "Access key does not exist"),
    ],
)
def test_listing_is_authenticated(sandbox: SandboxServer, change: dict, words: str) -> None:
    answer = send(sandbox, LIST, method="GET", headers=signed_headers(sandbox, LIST) | change)
    assert answer.status_code in (400, 401) and words in said(answer)
    assert "entries" not in answer.text


def test_listing_rejects_replays_bodies_queries_and_other_paths(sandbox: SandboxServer) -> None:
    headers = signed_headers(sandbox, LIST)
    assert send(sandbox, LIST, method="GET", headers=headers).status_code == 200
    again = send(sandbox, LIST, method="GET", headers=headers)
    assert again.status_code == 401 and said(again) == "Nonce value is too small"
    with_body = send(sandbox, LIST, method="GET", data=b"{}")
    assert with_body.status_code == 400 and "body" in said(with_body)
    query = LIST + "?page=2"
    answer = send(sandbox, query, method="GET", headers=signed_headers(sandbox, query))
    assert answer.status_code == 400 and "query" in said(answer)
    assert send(sandbox, LIST + "/", method="GET").status_code == 405
    assert [r.operation for r in sandbox.requests] == ["list"] + ["rejected"] * 4


def test_listing_can_be_turned_off_as_a_service_without_it(sandbox: SandboxServer) -> None:
    sandbox.listing = False
    answer = send(sandbox, LIST, method="GET")
    assert answer.status_code == 404
    assert answer.json() == {"status": "failure", "data": {"message": "no such endpoint"}}
    assert send(sandbox, LIST, method="POST", json=TERMS).status_code == 200  # adding still works
    sandbox.listing = True
    assert send(sandbox, LIST, method="GET").status_code == 200
    with SandboxServer(2, listing=False) as off:
        assert send(off, LIST, method="GET").status_code == 404
        assert off.requests[0].operation == "rejected"


# -- POST: add an entry ----------------------------------------------------------------------


def test_post_adds_an_entry_with_a_new_id_and_allows_duplicates(sandbox: SandboxServer) -> None:
    first = send(sandbox, LIST, method="POST", json=TERMS)
    assert first.status_code == 200 and first.json() == {"status": "success"}  # no id
    assert send(sandbox, LIST, method="POST", json=TERMS).json() == {"status": "success"}
    assert sandbox.entry("101") == Entry("101", *TERMS.values())
    assert sandbox.entry("102") == Entry("102", *TERMS.values())
    added = [r for r in sandbox.requests if r.operation == "add"]
    assert [(r.entry_id, r.entry.terms, r.http_status) for r in added] == [
        ("101", tuple(TERMS.values()), 200),
        ("102", tuple(TERMS.values()), 200),
    ]


def test_new_ids_are_never_reused(sandbox: SandboxServer) -> None:
    assert send(sandbox, "/api/v1/dictionary/100").json()["status"] == "success"
    send(sandbox, LIST, method="POST", json=TERMS)
    assert "101" in sandbox.entries and "100" not in sandbox.entries
    send(sandbox, "/api/v1/dictionary/dictionary-all")
    send(sandbox, LIST, method="POST", json=TERMS)
    assert list(sandbox.entries) == ["102"]


def test_post_body_is_not_signed(sandbox: SandboxServer) -> None:
    headers = signed_headers(sandbox, LIST)  # signed over nonce + path only
    assert send(sandbox, LIST, method="POST", headers=headers, json=TERMS).status_code == 200
    bad = signed_headers(sandbox, "/api/v1/dictionary/1")
    answer = send(sandbox, LIST, method="POST", headers=bad, json=TERMS)
    assert answer.status_code == 401 and len(sandbox.entries) == 101


@pytest.mark.parametrize(
    "body, code, words",
    [
        ({k: v for k, v in TERMS.items() if k != "toText"}, 40200, "missing: toText"),
        (TERMS | {"id": 5}, 40202, "unexpected id"),
        (TERMS | {"fromText": 5}, 40201, "fromText must be text"),
        (TERMS | {"toLang": ""}, 40202, "toLang '' is not a language code"),
        (TERMS | {"toLang": "zh"}, 40202, "(Chinese is zh-CN or zh-TW)"),
        (TERMS | {"toText": None}, 40201, "toText must be text"),
        (TERMS | {"toText": " "}, 40202, "toText is empty"),
        (TERMS | {"toText": "x" * 256}, 40202, "256 characters; the service takes at most 255"),
        ([TERMS], 40201, "must be a JSON object"),
        ("not json", 40202, "must be JSON"),
    ],
)
def test_post_wants_exactly_four_text_fields(
    sandbox: SandboxServer, body, code: int, words: str
) -> None:
    data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    answer = send(sandbox, LIST, method="POST", data=data)
    assert answer.status_code == 400 and answer.json()["status"] == "failure"
    assert answer.json()["data"]["code"] == code and words in said(answer), said(answer)
    assert len(sandbox.entries) == 100 and sandbox.requests[-1].operation == "rejected"


def test_a_refused_body_is_skipped_so_the_connection_carries_on(sandbox: SandboxServer) -> None:
    query = LIST + "?x=1"
    body = json.dumps(TERMS).encode()
    with socket.create_connection(("127.0.0.1", sandbox.port), timeout=5) as sock:
        for path in (query, LIST):  # one connection, kept alive
            headers = signed_headers(sandbox, path) | {"Content-Length": str(len(body))}
            head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
            sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\n{head}\r\n".encode() + body)
        answers = b""
        while answers.count(b"HTTP/1.1") < 2 or not answers.endswith(b"}"):
            if not (chunk := sock.recv(65536)):
                break
            answers += chunk
    assert b"400 Bad Request" in answers and b"Connection: close" not in answers
    assert answers.endswith(b'{"status": "success"}') and len(sandbox.entries) == 101


def test_a_body_that_cannot_be_skipped_closes_the_connection(sandbox: SandboxServer) -> None:
    headers = signed_headers(sandbox, LIST) | {"Transfer-Encoding": "chunked"}
    answer = send(sandbox, LIST, method="POST", headers=headers, data=iter([b"{}"]))
    assert answer.status_code == 400 and answer.headers["Connection"] == "close"
    assert "Content-Length" in said(answer) and len(sandbox.entries) == 100


# -- faults on every method ------------------------------------------------------------------


def raw_request(sandbox: SandboxServer, method: str, path: str, body: bytes = b"") -> socket.socket:
    """Send a signed request on a raw socket (the server closes after its answer)."""
    headers = signed_headers(sandbox, path) | {
        "Host": f"127.0.0.1:{sandbox.port}",
        "Connection": "close",
        "Accept-Encoding": "identity",
        "Content-Length": str(len(body)),
    }
    if not body:
        del headers["Content-Length"]
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    sock = socket.create_connection(("127.0.0.1", sandbox.port), timeout=5)
    sock.sendall(head.encode() + b"\r\n" + body)
    return sock


def read_all(sock: socket.socket) -> bytes:
    chunks = []
    with sock:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def split_answer(raw: bytes) -> tuple[str, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    return status, dict(line.split(": ", 1) for line in lines), body


REQUESTS = {
    "GET": (LIST, b""),
    "POST": (LIST, json.dumps(TERMS).encode()),
    "DELETE": ("/api/v1/dictionary/1", b""),
}


def acted(sandbox: SandboxServer, method: str) -> bool:
    """Whether the request of ``method`` (from REQUESTS) took effect."""
    if method == "GET":
        return sandbox.requests[-1].http_status == 200
    return ("1" not in sandbox.entries) if method == "DELETE" else ("101" in sandbox.entries)


@pytest.mark.parametrize("method", list(REQUESTS))
def test_bom_fault_acts_then_prefixes_a_bom(sandbox: SandboxServer, method: str) -> None:
    sandbox.inject("bom")
    status, _, body = split_answer(read_all(raw_request(sandbox, method, *REQUESTS[method])))
    assert status == "HTTP/1.1 200 OK" and body.startswith(b"\xef\xbb\xbf")
    assert json.loads(body[3:])["status"] == "success" and acted(sandbox, method)
    assert sandbox.requests[-1].outcome == "fault bom (applied)"


@pytest.mark.parametrize("method", list(REQUESTS))
def test_gzip_forced_fault_compresses_against_the_request(
    sandbox: SandboxServer, method: str
) -> None:
    sandbox.inject("gzip_forced")
    _, headers, body = split_answer(read_all(raw_request(sandbox, method, *REQUESTS[method])))
    assert headers["Content-Encoding"] == "gzip" and int(headers["Content-Length"]) == len(body)
    assert json.loads(gzip.decompress(body))["status"] == "success" and acted(sandbox, method)


def test_utf16_fault_encodes_the_listing_in_utf16(sandbox: SandboxServer) -> None:
    sandbox.inject("utf16")
    _, headers, body = split_answer(read_all(raw_request(sandbox, "GET", LIST)))
    assert headers["Content-Type"] == "application/json; charset=utf-16"
    assert body[:2] in (b"\xff\xfe", b"\xfe\xff")
    entries = json.loads(body.decode("utf-16"))["data"]["entries"]
    assert entries[0]["fromText"] == "金曜日" and len(entries) == 100


@pytest.mark.parametrize("method", ["POST", "DELETE"])
def test_truncated_fault_promises_more_than_it_sends(sandbox: SandboxServer, method: str) -> None:
    sandbox.inject("truncated")
    _, headers, body = split_answer(read_all(raw_request(sandbox, method, *REQUESTS[method])))
    assert int(headers["Content-Length"]) > len(body) and acted(sandbox, method)
    assert body == b'{"status": "success"}'


def test_empty_204_fault_answers_no_content(sandbox: SandboxServer) -> None:
    sandbox.inject("empty_204", method="POST")
    assert read_all(raw_request(sandbox, "POST", *REQUESTS["POST"])) == (
        b"HTTP/1.1 204 No Content\r\n\r\n"
    )
    assert acted(sandbox, "POST")


def test_close_mid_headers_fault_hangs_up_inside_the_head(sandbox: SandboxServer) -> None:
    sandbox.inject("close_mid_headers")
    raw = read_all(raw_request(sandbox, "DELETE", *REQUESTS["DELETE"]))
    assert raw == b"HTTP/1.1 200 OK\r\nContent-Ty" and acted(sandbox, "DELETE")


def test_drip_headers_fault_sends_the_head_bytewise_then_the_body(sandbox: SandboxServer) -> None:
    sandbox.inject("drip_headers", delay=0.005)
    sock = raw_request(sandbox, "DELETE", *REQUESTS["DELETE"])
    first = sock.recv(65536)
    raw = first + read_all(sock)
    assert b"\r\n\r\n" not in first  # the head came in pieces
    status, _, body = split_answer(raw)
    assert status == "HTTP/1.1 200 OK" and json.loads(body) == {"status": "success"}
    assert acted(sandbox, "DELETE")


def test_continue_flood_never_answers_and_stops_with_the_client(sandbox: SandboxServer) -> None:
    sandbox.inject("continue_flood", delay=0.01)
    sock = raw_request(sandbox, "DELETE", *REQUESTS["DELETE"])
    seen = b""
    while seen.count(b"100 Continue") < 3:
        seen += sock.recv(4096)
    assert set(seen.split(b"\r\n\r\n")) <= {b"HTTP/1.1 100 Continue", b""}
    sock.close()
    assert acted(sandbox, "DELETE")
    assert send(sandbox, "/api/v1/dictionary/2").json() == {"status": "success"}


@pytest.mark.parametrize("kind", ["continue_flood", "drip_headers", "hang"])
def test_long_faults_end_when_the_sandbox_stops(kind: str) -> None:
    sandbox = SandboxServer(3).start()
    sandbox.inject(kind, delay=60)
    sock = raw_request(sandbox, "DELETE", "/api/v1/dictionary/1")
    if kind == "continue_flood":
        assert sock.recv(4096).startswith(b"HTTP/1.1 100 Continue")
    sandbox.stop()
    sock.settimeout(3)  # a bound, not a measurement: a fault that ignored stop() would hang
    try:
        rest = read_all(sock)
    except ConnectionResetError:  # ended by a reset rather than a close: ended all the same
        rest = b""
    assert b"200" not in rest.replace(b"100 Continue", b"")


def test_malformed_listing_garbles_two_entries_and_is_for_get_only(
    sandbox: SandboxServer,
) -> None:
    with pytest.raises(ValueError, match="GET only"):
        sandbox.inject("malformed_listing", method="DELETE")
    sandbox.inject("malformed_listing")
    assert send(sandbox, "/api/v1/dictionary/1").json() == {"status": "success"}  # not met
    answer = send(sandbox, LIST, method="GET")
    assert answer.status_code == 200 and answer.json()["status"] == "success"
    first, second, *rest = answer.json()["data"]["entries"]
    assert "toText" not in first and isinstance(second["fromText"], int)
    assert len(rest) == 97 and all(isinstance(e["fromText"], str) for e in rest)
    with SandboxServer(0) as empty:
        empty.inject("malformed_listing")
        entries = send(empty, LIST, method="GET").json()["data"]["entries"]
        assert len(entries) == 2 and "toText" not in entries[0]


def test_faults_can_be_kept_for_one_method(sandbox: SandboxServer) -> None:
    sandbox.fail_next(1, 503, method="DELETE")
    sandbox.inject("drop_before", method="post")
    assert send(sandbox, LIST, method="GET").status_code == 200  # the listing is not faulted
    assert send(sandbox, "/api/v1/dictionary/1").status_code == 503
    with pytest.raises(requests.ConnectionError):
        send(sandbox, LIST, method="POST", json=TERMS)
    assert "1" in sandbox.entries and len(sandbox.entries) == 100
    with pytest.raises(ValueError, match="unknown method"):
        sandbox.inject("hang", method="PATCH")


def test_status_fault_on_post_adds_nothing_but_drop_after_does(sandbox: SandboxServer) -> None:
    sandbox.inject("status", status=500)
    assert send(sandbox, LIST, method="POST", json=TERMS).status_code == 500
    assert len(sandbox.entries) == 100
    sandbox.inject("drop_after")
    with pytest.raises(requests.ConnectionError):
        send(sandbox, LIST, method="POST", json=TERMS)
    assert sandbox.entry("101") == Entry("101", *TERMS.values())
    logged = [(r.operation, r.entry_id, r.outcome) for r in sandbox.requests]
    assert logged == [
        ("add", None, "fault status"),
        ("add", "101", "fault drop_after (applied)"),
    ]


def test_every_fault_kind_is_documented() -> None:
    new = {"bom", "gzip_forced", "utf16", "truncated", "empty_204", "close_mid_headers"}
    new |= {"drip_headers", "continue_flood", "malformed_listing"}
    assert new <= set(FAULT_KINDS) and all(FAULT_KINDS.values())


def test_the_log_names_each_operation(sandbox: SandboxServer) -> None:
    send(sandbox, LIST, method="GET")
    send(sandbox, LIST, method="POST", json=TERMS)
    send(sandbox, "/api/v1/dictionary/5")
    send(sandbox, "/api/v1/dictionary/5")
    send(sandbox, LIST, method="GET", headers=signed_headers(sandbox, LIST) | {"nonce": "x"})
    sandbox.inject("drop_before")
    with pytest.raises(requests.ConnectionError):
        send(sandbox, "/api/v1/dictionary/6")
    send(sandbox, "/api/v1/dictionary/dictionary-all")
    logged = [(r.method, r.operation, r.entry_id, r.http_status) for r in sandbox.requests]
    assert logged == [
        ("GET", "list", None, 200),
        ("POST", "add", "101", 200),
        ("DELETE", "delete", "5", 200),
        ("DELETE", "delete", "5", 404),
        ("GET", "rejected", None, 401),
        ("DELETE", "dropped", None, None),
        ("DELETE", "purge", None, 200),
    ]
    records = sandbox.requests
    assert records[1].entry == Entry("101", *TERMS.values())
    assert records[2].entry is not None and records[2].entry.id == "5"
    assert records[0].entry is None


# -- rate limit --------------------------------------------------------------------------------


def test_rate_limit_answers_429_beyond_the_burst_and_acts_on_none_of_those() -> None:
    # 10 a second in bursts of 10: 30 requests would need 2 s to all pass; they take far less.
    with SandboxServer(30, rate_limit=10, burst=10, retry_after=1) as sandbox:
        answers = {}
        with requests.Session() as session:
            for n in range(1, 31):
                path = f"/api/v1/dictionary/{n}"
                answers[str(n)] = session.delete(
                    sandbox.url + path, headers=signed_headers(sandbox, path), timeout=5
                )
            limited = [i for i, a in answers.items() if a.status_code == 429]
            passed = [i for i, a in answers.items() if a.status_code == 200]
            assert passed[:10] == [str(n) for n in range(1, 11)]  # it starts with a full bucket
            assert limited and len(limited) + len(passed) == 30
            for entry_id in limited:
                answer = answers[entry_id]
                assert answer.headers["Retry-After"] == "1"
                assert answer.json()["status"] == "failure"
                assert answer.json()["data"]["code"] == 40103
                assert "frequency limit" in said(answer)
            assert all(i in sandbox.entries for i in limited)
            assert not any(i in sandbox.entries for i in passed)
            logged = [r.entry_id for r in sandbox.requests if r.operation == "rate_limited"]
            assert logged == limited
            assert {r.http_status for r in sandbox.requests if r.entry_id in limited} == {429}
            time.sleep(1 / 10)  # one token's refill
            path = f"/api/v1/dictionary/{limited[0]}"
            again = session.delete(sandbox.url + path, headers=signed_headers(sandbox, path))
            assert again.status_code == 200 and limited[0] not in sandbox.entries
        assert sandbox.connections_accepted == 1  # a 429 keeps the connection alive


def test_rate_limit_covers_every_method_and_skips_a_refused_body() -> None:
    with SandboxServer(3, rate_limit=0.01, burst=1, retry_after=7) as sandbox:
        with requests.Session() as session:
            assert session.get(sandbox.url + LIST, headers=signed_headers(sandbox, LIST)).ok
            for method in ("POST", "PUT", "GET"):
                answer = session.request(
                    method, sandbox.url + LIST, headers=signed_headers(sandbox, LIST), json=TERMS
                )
                assert answer.status_code == 429 and answer.headers["Retry-After"] == "7"
                assert "Connection" not in answer.headers  # the body was read: still in step
        assert len(sandbox.entries) == 3  # the POST added nothing
        logged = [(r.method, r.operation, r.http_status) for r in sandbox.requests]
        assert logged == [
            ("GET", "list", 200),
            ("POST", "rate_limited", 429),
            ("PUT", "rate_limited", 429),
            ("GET", "rate_limited", 429),
        ]
        assert sandbox.connections_accepted == 1


def test_rate_limit_is_checked_before_faults() -> None:
    with SandboxServer(3, rate_limit=0.01, burst=1) as sandbox:
        send(sandbox, LIST, method="GET")
        sandbox.inject("drop_before")
        assert send(sandbox, "/api/v1/dictionary/1").status_code == 429  # the fault is not met
        sandbox._bucket = None  # lift the limit: the next request meets the fault
        with pytest.raises(requests.ConnectionError):
            send(sandbox, "/api/v1/dictionary/1")
        assert "1" in sandbox.entries


def test_token_bucket_starts_full_refills_continuously_and_caps_at_the_burst() -> None:
    now = [100.0]
    bucket = TokenBucket(4, 3, clock=lambda: now[0])  # (times exact in binary)
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]
    now[0] += 0.125  # half a token
    assert not bucket.take()
    now[0] += 0.125  # the other half: one token, taken
    assert bucket.take() and not bucket.take()
    now[0] += 3600  # a long rest refills up to the burst, no further
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]


def test_token_bucket_hands_out_each_token_once_across_threads() -> None:
    bucket = TokenBucket(1, 50, clock=lambda: 0.0)  # a frozen clock: exactly 50 tokens, ever
    taken: list[bool] = []
    lock = threading.Lock()

    def worker() -> None:
        mine = [bucket.take() for _ in range(100)]
        with lock:
            taken.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert taken.count(True) == 50 and len(taken) == 800


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"rate_limit": 0}, "above 0"),
        ({"rate_limit": 5, "burst": 0}, "at least 1"),
        ({"rate_limit": 5, "retry_after": -1}, "0 seconds or more"),
    ],
)
def test_rate_limit_settings_are_checked(kwargs: dict, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        SandboxServer(0, **kwargs)
