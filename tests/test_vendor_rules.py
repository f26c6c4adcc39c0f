"""Right against the vendor's documented rules: the nonce rule, coded errors, bulk, PUT, tokens.

Everything runs against the sandbox, strict to the vendor's documentation by default (each nonce
greater than the key's last accepted one; errors as ``{"status": "failure", "data": {"code",
"message"}}``). A coded answer is judged by its code whatever HTTP status comes with it, so most
cases run twice: with the sandbox's plausible status and with every coded error sent as 200.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from dict_magics.models import Cause, codes
from dict_magics.sandbox import SandboxServer
from dict_magics.sandbox.checks import sign
from dict_magics.service.client import DictionaryClient
from dict_magics.service.http import nonces_for

LIST = "/api/v1/dictionary"
TERMS = {"fromLang": "en", "fromText": "invoice", "toLang": "de", "toText": "Rechnung"}

CAUSES = {
    40001: Cause.AUTH,
    40002: Cause.AUTH,
    40003: Cause.AUTH,
    40005: Cause.NONCE,
    40006: Cause.AUTH,
    40008: Cause.NONCE,
    40103: Cause.RATE_LIMITED,
    40200: Cause.INVALID,
    40201: Cause.INVALID,
    40202: Cause.INVALID,
}


def client_for(sandbox: SandboxServer, **options) -> DictionaryClient:
    options.setdefault("backoff", 0.01)
    return DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key, **options)


def call(method: str, url: str, **options) -> requests.Response:
    return requests.request(method, url, timeout=10, **options)


def signed(sandbox: SandboxServer, path: str, nonce: str | None = None) -> dict[str, str]:
    nonce = nonce or nonces_for(sandbox.access_key)()
    return {
        "Content-Type": "application/json",
        "accessKey": sandbox.access_key,
        "nonce": nonce,
        "signature": sign(path, sandbox.secret_key, nonce),
    }


# -- every documented code: a cause, the code and the vendor's words ---------------------------


def test_every_documented_code_has_a_cause_here() -> None:
    assert set(CAUSES) == set(codes.MESSAGES)


@pytest.mark.parametrize("status", [None, 200])
@pytest.mark.parametrize("code", sorted(CAUSES))
def test_each_code_maps_to_its_cause_with_the_vendors_words(code: int, status: int | None) -> None:
    http = status or (429 if code == 40103 else 400 if code >= 40200 else 401)
    with SandboxServer(5) as sandbox:
        # More refusals than any retry budget (or patience): the answer that stands is this.
        sandbox.inject("coded", 10_000, status=http, code=code, retry_after=0)
        client = client_for(sandbox, max_retries=1, rate_limit_patience=0.3)
        result = client.delete_entry("1")
    assert not result.ok and not result.outcome_unknown
    assert result.cause is CAUSES[code], (code, result)
    assert result.code == code and result.vendor_message == codes.MESSAGES[code]
    assert f"[{code}] {codes.MESSAGES[code]}" in result.reason
    assert result.http_status == http
    if code == 40008:
        assert "clock" in result.reason and "nonce state" in result.reason
    retried = code in (40005, 40103)
    assert (result.attempts > 2) == retried, result  # 402xx and auth codes are not retried


def test_a_wrong_secret_reads_40006_everywhere(sandbox: SandboxServer, tmp_path: Path) -> None:
    result = DictionaryClient(sandbox.url, sandbox.access_key, "wrong-secret").delete_entry("1")
    assert result.cause is Cause.AUTH and result.code == 40006
    assert "[40006] The signature is incorrect." in result.reason
    assert "[40006] The signature is incorrect." in str(result)
    assert "[40006] The signature is incorrect." in result._repr_html_()
    run = run_cli(sandbox, ["delete", "--json", "--no-snapshot", "2"], secret="wrong-secret")
    data = json.loads(run.stdout)
    [item] = data["results"]
    assert item["code"] == 40006 and item["vendor_message"] == "The signature is incorrect."
    assert item["cause"] == "auth" and run.returncode == 1


def test_the_vendors_message_is_escaped_and_bounded() -> None:
    hostile = "<script>alert(1)</script>\x1b[31mred\u202egnp.exe " + "x" * 500
    with SandboxServer(5) as sandbox:
        sandbox.inject("coded", status=400, code=40202, message=hostile)
        result = client_for(sandbox).delete_entry("1")
    assert result.cause is Cause.INVALID and result.code == 40202
    shown = result.vendor_message or ""
    assert "\x1b" not in shown and "\u202e" not in shown and len(shown) <= 161
    assert "\x1b" not in result.reason and "\u202e" not in result.reason
    assert "\x1b" not in str(result) and "\u202e" not in str(result)
    html = result._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_a_data_problem_is_not_sent_again(sandbox: SandboxServer) -> None:
    sandbox.inject("coded", status=400, code=40202, method="POST")
    from dict_magics.models import Entry

    result = client_for(sandbox).add_entry(Entry("", *TERMS.values()))
    assert result.cause is Cause.INVALID and result.attempts == 1 and result.code == 40202
    assert [r.method for r in sandbox.requests] == ["POST"]


# -- 40005 and 40103: retried to completion -------------------------------------------------------


def test_40005_is_sent_again_at_once_even_for_a_post(sandbox: SandboxServer) -> None:
    from dict_magics.models import Entry

    sandbox.inject("coded", 3, status=401, code=40005, method="POST")
    result = client_for(sandbox, max_retries=0).add_entry(Entry("", *TERMS.values()))
    assert result.ok and result.attempts == 4 and not result.outcome_unknown
    assert len(sandbox.entries) == 101  # added once


@pytest.mark.parametrize("status", [429, 200])
def test_40103_pauses_and_retries_to_completion(status: int) -> None:
    with SandboxServer(16) as sandbox:
        sandbox.inject("coded", 8, status=status, code=40103, retry_after=0)
        client = client_for(sandbox, max_retries=0)
        batch = client.delete_entries([str(i) for i in range(1, 17)], workers=4)
        left = sandbox.entries
    assert batch.ok and left == {}
    assert client.rate_limit.limited >= 8


def test_the_rate_limiter_answers_40103_and_the_client_keeps_to_it() -> None:
    with SandboxServer(60, rate_limit=50, burst=5) as sandbox:
        batch = client_for(sandbox).delete_entries([str(i) for i in range(1, 61)], workers=8)
        refused = [r for r in sandbox.requests if r.operation == "rate_limited"]
        left = sandbox.entries
    assert batch.ok and left == {}
    assert refused and all(r.code == 40103 and r.http_status == 429 for r in refused)


def test_a_listing_refused_for_a_while_is_retried_before_a_delete_gives_up(
    env_creds: SandboxServer,
) -> None:
    env_creds.inject("coded", 2, status=200, code=40103, retry_after=0, method="GET")
    env_creds.inject("status", 1, status=502, method="GET")
    run = run_cli(env_creds, ["delete", "--json", "5"])
    assert run.returncode == 0, run.stderr
    assert "5" not in env_creds.entries


def test_a_listing_that_stays_down_exits_1_not_2(env_creds: SandboxServer) -> None:
    env_creds.inject("status", 50, status=503, retry_after=0, method="GET")
    run = run_cli(env_creds, ["delete", "5"], DICT_MAGICS_RETRIES="1")
    assert run.returncode == 1, (run.returncode, run.stderr)
    assert "could not list the dictionary" in run.stderr
    assert "5" in env_creds.entries


# -- many ids, many workers, several processes: 0 failed, 0 left ---------------------------------


@pytest.mark.parametrize("workers", [4, 16])
def test_400_ids_against_the_vendors_nonce_rule(workers: int) -> None:
    with SandboxServer(400) as sandbox:
        assert sandbox.nonce_rule == "increasing"
        batch = client_for(sandbox).delete_entries([str(i) for i in range(1, 401)], workers=workers)
        log, left = sandbox.requests, sandbox.entries
    assert batch.ok and batch.failed == 0 and left == {}
    refused = [r for r in log if r.code == 40005]
    assert len(log) == 400 + len(refused)  # the only extra requests: refused nonces, re-sent
    nonces = [int(r.headers["nonce"]) for r in log if r.code is None]
    assert len(set(nonces)) == len(nonces)


def test_two_processes_times_300_ids_against_the_vendors_nonce_rule() -> None:
    with SandboxServer(600) as sandbox:
        env = {**os.environ, **sandbox.env()}
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "dict_magics", "delete", "--json", *map(str, ids)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for ids in (range(1, 301), range(301, 601))
        ]
        outputs = [p.communicate(timeout=180) for p in procs]
        log, left = sandbox.requests, sandbox.entries
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err[-2000:]
        data = json.loads(out)
        assert data["failed"] == 0 and data["succeeded"] == 300
    assert left == {}
    assert all(r.code in (None, 40005) for r in log)
    accepted = [int(r.headers["nonce"]) for r in log if r.code is None]
    assert len(accepted) == 602  # 600 deletions and one listing per process for its snapshot


def test_the_lenient_rule_is_still_there_for_tests_that_need_it() -> None:
    with SandboxServer(3, nonce_rule="unique") as sandbox:
        path = LIST + "/1"
        late = str(time.time_ns() // 1_000_000 + 10)
        early = str(int(late) - 5)
        first = call("DELETE", sandbox.url + path, headers=signed(sandbox, path, late))
        path = LIST + "/2"
        second = call("DELETE", sandbox.url + path, headers=signed(sandbox, path, early))
        assert first.status_code == second.status_code == 200  # smaller, but unused: taken
    with SandboxServer(3) as strict:
        path = LIST + "/1"
        assert call("DELETE", strict.url + path, headers=signed(strict, path, late)).ok
        path = LIST + "/2"
        refused = call("DELETE", strict.url + path, headers=signed(strict, path, early))
        assert refused.json()["data"] == {"code": 40005, "message": "Nonce value is too small"}
        assert "2" in strict.entries


# -- the sandbox's new endpoints -------------------------------------------------------------


def test_bulk_adds_all_or_nothing(sandbox: SandboxServer) -> None:
    path = LIST + "/bulk"
    good = [TERMS, {**TERMS, "fromText": "receipt", "toText": "Quittung"}]
    answer = call("POST", sandbox.url + path, headers=signed(sandbox, path), json=good)
    assert answer.json() == {"status": "success"} and len(sandbox.entries) == 102
    bad = [TERMS, {**TERMS, "toLang": "zh"}, {**TERMS, "fromText": "x" * 256}]
    answer = call("POST", sandbox.url + path, headers=signed(sandbox, path), json=bad)
    assert answer.json()["data"]["code"] == 40202 and "item 2 of 3" in answer.text
    assert len(sandbox.entries) == 102
    [logged] = [r for r in sandbox.requests if r.operation == "bulk"]
    assert [e.from_text for e in logged.entries] == ["invoice", "receipt"]


def test_put_replaces_in_place_and_an_unknown_id_fails(sandbox: SandboxServer) -> None:
    path = LIST + "/7"
    new = {**TERMS, "toText": "Faktura"}
    answer = call("PUT", sandbox.url + path, headers=signed(sandbox, path), json=new)
    assert answer.json() == {"status": "success"}
    assert sandbox.entry("7").terms == tuple(new.values()) and len(sandbox.entries) == 100
    path = LIST + "/9999"
    answer = call("PUT", sandbox.url + path, headers=signed(sandbox, path), json=new)
    assert answer.status_code == 404 and answer.json()["status"] == "failure"
    path = LIST + "/dictionary-all"
    answer = call("PUT", sandbox.url + path, headers=signed(sandbox, path), json=new)
    assert answer.status_code == 405 and len(sandbox.entries) == 100


def test_tokens_expire_and_never_reach_the_log() -> None:
    with SandboxServer(5, token_lifetime=0.5) as sandbox:
        asked = {"accessKey": sandbox.access_key, "secretKey": sandbox.secret_key, "duration": 60}
        answer = call("POST", sandbox.url + "/api/v1/token", json=asked)
        token = answer.json()["data"]["encodedJWT"]
        bearer = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
        assert call("GET", sandbox.url + LIST, headers=bearer).json()["status"] == "success"
        time.sleep(0.6)
        expired = call("GET", sandbox.url + LIST, headers=bearer).json()
        assert expired["data"]["code"] == 40001 and "expired" in expired["data"]["message"]
        wrong = call("POST", sandbox.url + "/api/v1/token", json={**asked, "secretKey": "no"})
        assert wrong.json()["data"]["code"] == 40003
        logged = repr(sandbox.requests)
        assert sandbox.tokens_issued == 1
    assert token not in logged and sandbox.secret_key not in logged


def test_seed_language_codes_are_the_vendors() -> None:
    from dict_magics.models.terms import LANGUAGE_CODES

    with SandboxServer(1000) as sandbox:
        langs = {e.from_lang for e in sandbox.entries.values()}
        langs |= {e.to_lang for e in sandbox.entries.values()}
    assert langs <= LANGUAGE_CODES and "zh-CN" in langs


# -- helpers ---------------------------------------------------------------------------------------


def run_cli(
    sandbox: SandboxServer, args: list[str], *, secret: str | None = None, **extra: str
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **sandbox.env(), **extra}
    if secret is not None:
        env["DICT_MAGICS_SECRET_KEY"] = secret
    return subprocess.run(
        [sys.executable, "-m", "dict_magics", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_nonce_the_service_never_takes_stops_the_batch_after_three(
    sandbox: SandboxServer,
) -> None:
    """40008 on every request (a nonce state far ahead, a clock far off): every later request
    would get it too, so the batch stops as it does for refused credentials."""
    sandbox.inject("coded", 10_000, status=401, code=40008)
    with DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key) as client:
        batch = client.delete_entries([str(i) for i in range(1, 41)], workers=2)
    sent = [r for r in sandbox.requests if r.method == "DELETE"]
    assert len(sent) <= 3 + 2  # the first three answers, and what was in flight meanwhile
    assert batch.succeeded == 0
    never = [r for r in batch.results if r.attempts == 0]
    assert len(never) >= 35 and all("clock" in (r.reason or "") for r in never)
