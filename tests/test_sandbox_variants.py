"""Each documented variant of the service, switched on its own; the defaults are the vendor's."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest
import requests
from test_sandbox import LIST, TERMS, send, signed_headers

from dict_magics.sandbox import SandboxServer

BULK = LIST + "/bulk"


VENDOR = {
    "listing": "data.entries",
    "ids": "integer",
    "nonce_rule": "increasing",
    "errors": "coded",
    "bulk": True,
    "update": True,
    "token": True,
    "limit_unit": "element",
    "case_sensitive": True,
}
"""The fields of the probe's JSON (DESIGN "Probe"), as the vendor documents them."""


def test_each_probe_field_is_a_keyword_and_the_defaults_are_the_vendors() -> None:
    sandbox = SandboxServer(0)
    assert {field: getattr(sandbox, field) for field in VENDOR} == VENDOR
    other = {"listing": "entries", "ids": "string", "nonce_rule": "none", "errors": "plain"}
    other |= {"limit_unit": "sentence"}
    for field, value in VENDOR.items():
        changed = SandboxServer(0, **{field: other.get(field, not value)})
        differs = [f for f in VENDOR if getattr(changed, f) != VENDOR[f]]
        assert differs == [field]


def listed(sandbox: SandboxServer) -> dict:
    answer = send(sandbox, LIST, "GET")
    assert answer.status_code == 200
    return answer.json()


def test_the_listing_under_data_or_at_the_top() -> None:
    with SandboxServer(2) as vendor, SandboxServer(2, listing="entries") as top:
        assert set(listed(vendor)) == {"status", "data"}
        body = listed(top)
        assert set(body) == {"status", "entries"} and body["status"] == "success"
        assert body["entries"] == listed(vendor)["data"]["entries"]


def test_ids_as_integers_or_strings() -> None:
    with SandboxServer(["2", "10"]) as vendor, SandboxServer(["2", "10"], ids="string") as text:
        assert [e["id"] for e in listed(vendor)["data"]["entries"]] == [2, 10]
        assert [e["id"] for e in listed(text)["data"]["entries"]] == ["2", "10"]


@pytest.mark.parametrize("rule", ["increasing", "unique", "none"])
def test_each_nonce_rule(rule: str) -> None:
    now = str(time.time_ns() // 1_000_000)
    earlier = str(int(now) - 5)
    with SandboxServer(3, nonce_rule=rule) as sandbox:
        codes = []
        for nonce in (now, earlier, earlier):
            answer = send(sandbox, LIST, "GET", headers=signed_headers(sandbox, LIST, nonce))
            codes.append(answer.json().get("data", {}).get("code") if not answer.ok else None)
    assert (
        codes
        == {
            "increasing": [None, 40005, 40005],  # each nonce above the last accepted
            "unique": [None, None, 40005],  # any unused one
            "none": [None, None, None],  # replays too
        }[rule]
    )


def test_errors_coded_or_plain() -> None:
    bad = {"signature": "0" * 64}
    with SandboxServer(3) as vendor, SandboxServer(3, errors="plain") as plain:
        coded = send(vendor, LIST, "GET", headers=signed_headers(vendor, LIST) | bad)
        assert coded.json() == {
            "status": "failure",
            "data": {"code": 40006, "message": "The signature is incorrect."},
        }
        answer = send(plain, LIST, "GET", headers=signed_headers(plain, LIST) | bad)
        assert answer.status_code == 401 and answer.headers["Content-Type"] == "text/plain"
        assert answer.text == "The signature is incorrect."
        missing = send(plain, LIST + "/404")
        assert missing.status_code == 404 and missing.text == "no such entry"
        assert plain.requests[-1].operation == "delete"
        assert send(plain, LIST + "/1").json() == {"status": "success"}  # successes unchanged


def test_without_bulk_update_or_token_those_endpoints_are_missing() -> None:
    keys = {"accessKey": "sandbox-access-key", "secretKey": "s"}
    with SandboxServer(3, secret_key="s") as vendor:
        assert send(vendor, BULK, "POST", json=[TERMS]).json() == {"status": "success"}
        assert send(vendor, LIST + "/1", "PUT", json=TERMS).json() == {"status": "success"}
        assert requests.post(vendor.url + "/api/v1/token", json=keys, timeout=5).ok
    with SandboxServer(3, bulk=False) as sandbox:
        assert send(sandbox, BULK, "POST", json=[TERMS]).status_code == 404
        assert send(sandbox, LIST, "POST", json=TERMS).ok and len(sandbox.entries) == 4
    with SandboxServer(3, update=False) as sandbox:
        answer = send(sandbox, LIST + "/1", "PUT", json=TERMS)
        assert answer.status_code == 405 and sandbox.entry("1").to_text == "FRI"
    with SandboxServer(3, token=False, secret_key="s") as sandbox:
        answer = requests.post(sandbox.url + "/api/v1/token", json=keys, timeout=5)
        assert answer.status_code == 404 and sandbox.tokens_issued == 0


@pytest.mark.parametrize(
    "options, words",
    [
        ({"listing": "entry"}, "listing must be one of False, 'data.entries', 'entries'"),
        ({"ids": 1}, "ids must be one of"),
        ({"nonce_rule": "strict"}, "nonce_rule must be one of"),
        ({"errors": "json"}, "errors must be one of"),
        ({"limit_unit": "paragraph"}, "limit_unit must be one of"),
        ({"rate_limit_answer": 429}, "rate_limit_answer must be one of"),
    ],
)
def test_unknown_variants_are_refused(options: dict, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        SandboxServer(0, **options)


def test_the_command_line_switches_every_variant() -> None:
    options = ["--port", "0", "--quiet", "--entries", "2", "--secret-key", "s"]
    options += ["--listing", "entries", "--ids", "string", "--nonce-rule", "none"]
    options += ["--errors", "plain", "--no-bulk", "--no-update", "--no-token"]
    options += ["--limit-unit", "request", "--case-insensitive"]
    process = subprocess.Popen(
        [sys.executable, "-m", "dict_magics.sandbox", *options],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = process.stdout.readline().split(" at ")[1].split(" with ")[0]  # type: ignore[union-attr]
        client = SandboxServer(0, secret_key="s")  # never started: it only signs
        nonce = str(time.time_ns() // 1_000_000)

        def call(method: str, path: str, **kwargs) -> requests.Response:
            headers = signed_headers(client, path, nonce)  # the same nonce each time: none
            return requests.request(method, url + path, headers=headers, timeout=5, **kwargs)

        body = call("GET", LIST).json()
        assert [e["id"] for e in body["entries"]] == ["1", "2"]
        assert call("POST", BULK, json=[TERMS]).status_code == 404
        assert call("PUT", LIST + "/1", json=TERMS).status_code == 405
        assert call("POST", "/api/v1/token", json={}).status_code == 404
        assert call("DELETE", LIST + "/9").text == "no such entry"
        for n, term in enumerate("abcd", 1):
            call("POST", LIST, json={"fromLang": "ja", "fromText": term, "toLang": "en",
                                     "toText": f"X{n}"})  # fmt: skip
        ask = {"fieldId": "1", "text": ["A b c", "d"], "sourceLang": "ja", "targetLang": "en"}
        answer = call("POST", "/api/v1/translate", json=ask).json()["data"]["translationResult"]
        assert [r["translatedText"] for r in answer] == ["X1 X2 X3", "d"]  # 3 a request
    finally:
        process.terminate()
        process.communicate(timeout=10)


def test_every_request_is_logged_as_it_arrives_before_it_is_acted_on() -> None:
    with SandboxServer(3) as sandbox:
        sandbox.pause()
        sent = threading.Thread(target=send, args=(sandbox, LIST + "/2"))
        sent.start()
        try:
            deadline = time.monotonic() + 5  # a bound, not a measurement
            while not sandbox.received and time.monotonic() < deadline:
                time.sleep(0.01)
            assert [tuple(r) for r in sandbox.received] == [("DELETE", LIST + "/2", "2")]
            assert sandbox.requests == [] and "2" in sandbox.entries  # not acted on yet
        finally:
            sandbox.resume()
            sent.join()
        assert "2" not in sandbox.entries and sandbox.requests[0].entry_id == "2"
        send(sandbox, LIST + "/dictionary-all")
        assert sandbox.received[-1] == ("DELETE", LIST + "/dictionary-all", None)
