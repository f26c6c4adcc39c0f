"""The version-3 client API against the real sandbox, with the vendor's rules on.

``add_entries`` (bulk chunks on the batch engine; a lost chunk is settled by one listing and
never sent twice), ``update_entry`` (PUT), validation before any request, and token auth (one
token, renewed when it expires mid-batch or is refused; never shown anywhere).
"""

from __future__ import annotations

import json
import logging
import pickle
import re
import threading
import time
from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from dict_magics.errors import InvalidEntryError
from dict_magics.models import Cause, Entry, UpdateResult
from dict_magics.operations.settle import add_and_settle, decide
from dict_magics.sandbox import SandboxServer
from dict_magics.service.client import DictionaryClient

JWT = re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")


def client_for(server: SandboxServer, **options: Any) -> DictionaryClient:
    return DictionaryClient(server.url, server.access_key, server.secret_key, **options)


def made(n: int, prefix: str = "term") -> list[Entry]:
    return [Entry("", "en", f"{prefix} {i}", "de", f"Begriff {i}") for i in range(n)]


def bulk_posts(server: SandboxServer) -> list[Any]:
    """The bulk POSTs the sandbox took (a 40005 refusal is re-sent, not acted on)."""
    return [
        r
        for r in server.requests
        if r.method == "POST" and r.path.endswith("/bulk") and r.code != 40005
    ]


# -- add_entries -------------------------------------------------------------------------------


def test_add_entries_sends_chunks_in_input_order_and_counts_requests() -> None:
    with SandboxServer(3) as server:
        seeded = list(server.terms)
        entries = made(23)
        seen: list[tuple[int, int, str]] = []
        with client_for(server) as client:
            batch = add_and_settle(
                client,
                entries,
                chunk_size=5,
                workers=3,
                progress=lambda done, total, r: seen.append((done, total, r.outcome)),
            )
        assert batch.ok and len(batch) == 23 and batch.requests == 5
        assert [r.entry for r in batch.results] == entries  # input order
        assert [s[0] for s in seen] == list(range(1, 24)) and {s[1] for s in seen} == {23}
        posts = bulk_posts(server)
        assert len(posts) == 5 and sorted(len(p.entries) for p in posts) == [3, 5, 5, 5, 5]
        assert [r.method for r in server.requests].count("GET") == 1  # the listing before
        assert Counter(server.terms) == Counter([e.terms for e in entries] + seeded)


def test_the_callers_listing_spares_the_listing_before() -> None:
    with SandboxServer(0) as server, client_for(server) as client:
        batch = add_and_settle(client, made(4), before=[])
        assert batch.ok and [r.method for r in server.requests] == ["POST"]


def test_a_lost_bulk_answer_is_settled_by_a_listing_and_never_sent_twice() -> None:
    twin = Entry("", "en", "twin", "de", "Zwilling")
    with SandboxServer([Entry("1", *twin.terms)]) as server, client_for(server) as client:
        server.clear_log()
        # The first chunk (two twins) is added, then the connection drops: no answer.
        server.inject("drop_after", 1, method="POST")
        entries = [twin, twin, *made(4)]
        batch = add_and_settle(client, entries, chunk_size=2, workers=1)
        assert batch.ok and batch.unknown == [] and batch.settled == (0, 1)
        first, second = batch.results[:2]
        assert first.verified and second.verified and "verified by listing" in first.reason
        assert first.cause is Cause.CONNECTION_LOST
        assert len(bulk_posts(server)) == 3  # three chunks, none sent twice
        assert [r.method for r in server.requests].count("GET") == 2  # before, and to settle
        assert Counter(server.terms)[twin.terms] == 3


def test_twins_not_added_are_told_apart_from_a_twin_that_was() -> None:
    twin = Entry("", "en", "twin", "de", "Zwilling")
    with SandboxServer([Entry("1", *twin.terms)]) as server, client_for(server) as client:
        server.clear_log()
        # Chunk 1 (a twin) goes through; chunk 2 (two twins) is refused by a gateway page
        # that may or may not have reached the service: the listing shows it did not.
        server.inject("status", 1, status=502, method="POST")
        batch = add_and_settle(client, [twin, twin, twin], chunk_size=2, workers=1)
        assert len(bulk_posts(server)) == 2
        outcomes = [r.outcome for r in batch.results]
        assert outcomes == ["failure", "failure", "success"]
        assert all("not added, so adding it again is safe" in r.reason for r in batch.failed)
        assert Counter(server.terms)[twin.terms] == 2


def test_the_multiset_rule() -> None:
    a, b = ("a",), ("b",)
    claims = [(a, 1), (a, 1), (b, 1), None, (a, -1)]
    # Two more a's than before, one of them known: one unknown a was added, the other not.
    assert decide(claims[:2], [a], [a, a, a], known=[(a, 1)]) == [True, False]
    assert decide(claims, [a, b], [a, a, b], known=[]) == [True, False, False, None, False]
    assert decide([(a, -1)], [a, a], [a]) == [True]


def test_add_entries_stops_on_cancel_and_reports_chunks_never_sent() -> None:
    with SandboxServer(0) as server, client_for(server) as client:
        stop = threading.Event()

        def progress(done: int, total: int, result: Any) -> None:
            if done == 2:
                stop.set()

        batch = add_and_settle(
            client, made(10), chunk_size=2, workers=1, progress=progress, cancel=stop, before=[]
        )
        assert batch.interrupted and len(batch.added) == 2 and len(bulk_posts(server)) == 1
        never = batch.results[2:]
        assert all(r.cause is Cause.NOT_ATTEMPTED and r.attempts == 0 for r in never)


# -- update_entry ------------------------------------------------------------------------------


def test_update_then_the_listing_shows_the_new_terms_under_the_same_id() -> None:
    with SandboxServer(5) as server, client_for(server) as client:
        old = client.list_entries().by_id()["3"]
        result = client.update_entry(3, Entry("", "en", "updated", "fr", "mis à jour"), old=old)
        assert isinstance(result, UpdateResult) and result.ok and result.old == old
        assert result.new == Entry("3", "en", "updated", "fr", "mis à jour")
        listed = client.list_entries().by_id()
        assert listed["3"].terms == ("en", "updated", "fr", "mis à jour") and len(listed) == 5
        assert [r.method for r in server.requests].count("PUT") == 1
        assert "updated entry 3" in str(result) and "mis à jour" in result._repr_html_()
        missing = client.update_entry("999", Entry("", "en", "x", "de", "y"))
        assert missing.outcome == "failure" and missing.http_status == 404


def test_an_update_view_escapes_what_came_from_outside() -> None:
    hostile = Entry("7", "en", "<script>\u202e", "de", "x")
    result = UpdateResult("failure", "7", hostile, reason="<b>no</b>", cause=Cause.REFUSED)
    assert "<script>" not in result._repr_html_() and "&lt;b&gt;" in result._repr_html_()
    assert "\u202e" not in str(result)


# -- validation before any request ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        (Entry("", "en", "x" * 256, "de", "y"), "fromText has 256 characters"),
        (Entry("", "zh", "你好", "en", "hello"), "Chinese is zh-CN or zh-TW"),
        (Entry("", "en", "a\ud800", "de", "y"), "lone surrogate"),  # invisible ones go
    ],
)
def test_invalid_entries_are_refused_before_any_request(bad: Entry, words: str) -> None:
    with SandboxServer(3) as server, client_for(server) as client:
        with pytest.raises(InvalidEntryError, match=words) as refused:
            add_and_settle(client, [*made(3), bad, *made(2, "more")])
        assert "entry 4 of 6" in str(refused.value) and "Nothing was sent" in str(refused.value)
        with pytest.raises(InvalidEntryError, match=words):
            client.add_entry(bad)
        with pytest.raises(InvalidEntryError, match=words):
            client.update_entry("1", bad)
        assert server.requests == []
    assert Entry("", "zh-CN", "你好", "en", "hello")  # the accepted spelling is fine


def test_a_255_character_term_is_accepted() -> None:
    with SandboxServer(0) as server, client_for(server) as client:
        assert add_and_settle(client, [Entry("", "ja", "語" * 255, "zh-TW", "詞")], before=[]).ok
        assert len(server.entries) == 1


# -- token auth --------------------------------------------------------------------------------


def test_token_mode_renews_an_expiring_token_mid_batch() -> None:
    with SandboxServer(60, token_lifetime=1, latency=0.05) as server:
        with client_for(server, auth="token") as client:
            result = client.delete_entries([str(i) for i in range(1, 61)], workers=2)
        assert result.ok and server.entries == {}
        assert server.tokens_issued >= 2  # the 1 s token ran out during the ~1.5 s batch
        deletes = [r for r in server.requests if r.method == "DELETE"]
        assert all(r.http_status == 200 for r in deletes) and len(deletes) == 60
        assert not any("signature" in r.headers or "nonce" in r.headers for r in deletes)


def test_one_token_is_shared_and_renewed_once_after_a_refusal() -> None:
    with SandboxServer(20) as server:
        first, second = client_for(server, auth="token"), client_for(server, auth="token")
        assert first.delete_entry("1").ok and second.delete_entry("2").ok
        assert server.tokens_issued == 1  # two clients, one token
        server.revoke_tokens()  # the service forgets it (a restart): 40001 next time
        batch = first.add_entries(made(3), chunk_size=1, workers=1)
        assert batch.ok and server.tokens_issued == 2
        refused = [r for r in server.requests if r.operation == "rejected"]
        assert len(refused) == 1 and refused[0].code == 40001
        first.close()
        second.close()


def test_a_wrong_secret_in_token_mode_stops_after_three_refusals() -> None:
    with SandboxServer(10) as server:
        client = DictionaryClient(
            server.url, server.access_key, "sandbox-secret-wrongwrongwrong", auth="token"
        )
        result = client.delete_entries([str(i) for i in range(1, 11)], workers=1)
        assert result.succeeded == 0 and len(server.entries) == 10
        tokens = [r for r in server.requests if r.path == "/api/v1/token"]
        # Asked once: the next two requests meet that refusal unasked (a lockout risk), then
        # the batch stops (the rule for refused credentials).
        assert len(tokens) == 1
        first = result.results[0]
        assert first.cause is Cause.AUTH and "could not get a token" in first.reason
        assert re.search(r"\[400\d\d\]", first.reason)
        assert "wrongwrong" not in str(result) + repr(result)
        assert all(r.cause is Cause.NOT_ATTEMPTED for r in result.results[3:])


def test_no_token_or_secret_anywhere(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    with SandboxServer(10, token_lifetime=1) as server:
        client = client_for(server, auth="token")
        outputs: list[str] = []
        result = client.delete_entries(["1", "2", "3"])
        batch = add_and_settle(client, made(3), before=[])
        listing = client.list_entries()
        outputs += [repr(client), str(result), repr(result), repr(batch), repr(listing)]
        outputs += [repr(client._signature), repr(client._tokens), result._repr_html_()]
        with pytest.raises(TypeError, match="cannot be pickled"):
            pickle.dumps(client)
        with pytest.raises(TypeError, match="cannot be pickled"):
            pickle.dumps(client._tokens)
        server.stop()  # the next token request fails: its error must not carry the body
        time.sleep(1.0)  # the 1 s token is due for renewal: the next request asks anew
        failed = client.delete_entry("4")
        outputs += [str(failed), repr(failed), failed.reason or ""]
        seen = "\n".join(outputs) + caplog.text + "".join(capsys.readouterr())
        seen += json.dumps([r.headers for r in server.requests])
        assert not JWT.search(seen), "a token was shown"
        assert server.secret_key not in seen
        client.close()


@pytest.mark.parametrize("shape", ["coded", "html", "cut", "slashes", "slashes_cut", "url"])
def test_a_token_endpoint_echoing_the_request_body_never_shows_the_secret(shape: str) -> None:
    """A server (or a proxy's error page) that repeats the token request's body in its error
    hands back the secret, as sent, JSON-escaped as PHP does (``\\/``) or URL-encoded: it must
    reach neither the result, its reason nor the vendor's words, whole or cut."""
    from urllib.parse import urlencode

    from rawserver import RawServer, answer

    secret = "echoed/secret+0123456789abcdef=="

    def respond(conn: Any, req: tuple, n: int) -> None:
        body = req[3].decode()
        if shape == "html":
            conn.sendall(answer("400 Bad Request", f"<html>bad: {body}</html>".encode()))
            return
        if shape.startswith("slashes"):
            body = body.replace("/", "\\/")
        elif shape == "url":
            body = urlencode(json.loads(body))
        pad = "x" * (115 if shape.endswith("cut") else 1)  # the excerpt ends inside the secret
        data = {"status": "failure", "data": {"code": 40003, "message": pad + body}}
        conn.sendall(answer("400 Bad Request", json.dumps(data).encode()))

    server = RawServer(respond)
    try:
        with DictionaryClient(server.url, "k", secret, auth="token", max_retries=0) as client:
            result = client.delete_entries(["1"])
    finally:
        server.close()
    first = result.results[0]
    seen = str(result) + repr(result) + repr(first.vendor_message) + result._repr_html_()
    assert first.cause is Cause.AUTH if shape != "html" else first.outcome == "failure"
    assert "secretKey" in seen  # the echo is shown, the secret in it is not
    assert "echoed" not in seen and "secret+01" not in seen and "0123456789" not in seen


def test_a_token_whose_expiry_is_out_of_range_is_kept_for_the_time_asked() -> None:
    """A JWT whose ``exp`` claim is a number too large for a float (400 digits) is read as
    "no readable expiry", not an OverflowError out of the delete."""
    import base64

    from rawserver import SUCCESS, RawServer, answer

    claims = base64.urlsafe_b64encode(b'{"exp": ' + b"9" * 400 + b"}").decode().rstrip("=")
    jwt = f"eyJhbGciOiAibm9uZSJ9.{claims}.sig"
    body = json.dumps({"status": "success", "data": {"encodedJWT": jwt}}).encode()

    def respond(conn: Any, req: tuple, n: int) -> None:
        conn.sendall(answer("200 OK", body if req[1].endswith("/token") else SUCCESS))

    server = RawServer(respond)
    try:
        with DictionaryClient(server.url, "k", "s", auth="token") as client:
            result = client.delete_entries(["1", "2"])
    finally:
        server.close()
    assert result.ok, result
    assert [r[1] for r in server.requests].count("/api/v1/token") == 1


def test_the_auth_setting_reaches_the_client(monkeypatch: pytest.MonkeyPatch) -> None:
    from conftest import point_at

    from dict_magics.errors import UsageProblem
    from dict_magics.operations.context import OperationSettings
    from dict_magics.operations.delete import delete

    with SandboxServer(5) as server:
        point_at(monkeypatch, server)
        monkeypatch.setenv("DICT_MAGICS_AUTH", "token")
        assert OperationSettings().auth == "token"
        assert delete(OperationSettings(), ["1"]).ok and server.tokens_issued == 1
        assert OperationSettings(auth="signature").auth == "signature"
        monkeypatch.setenv("DICT_MAGICS_AUTH", "password")
        with pytest.raises(UsageProblem, match="auth must be 'signature' or 'token'"):
            OperationSettings()


def test_an_update_is_retried_like_a_delete_and_a_lost_answer_is_settled_by_a_listing() -> None:
    from dict_magics.operations.settle import settle_updates

    with SandboxServer(5) as server, client_for(server) as client:
        listed = client.list_entries().by_id()
        # A kept-alive connection dropped as the PUT went out: sent again, as a DELETE is.
        server.inject("drop_after", 1, method="PUT")
        again = client.update_entry("2", Entry("", "en", "new", "de", "neu"), old=listed["2"])
        assert again.ok and again.attempts == 2 and server.entry("2").terms[1] == "new"
        # Changed, then the answer cut short: unknown, and the listing settles it.
        server.inject("truncated", 1, method="PUT")
        lost = client.update_entry("3", Entry("", "en", "x", "de", "y"), old=listed["3"])
        assert lost.outcome == "unknown" and "sending it again is safe" in lost.reason
        after = client.list_entries().by_id()
        [settled] = settle_updates([lost], after)
        assert settled.ok and settled.verified and "holds the new terms" in settled.reason
        # An unknown update of entry 4 that the listing shows unchanged did not happen.
        untouched = UpdateResult(
            "failure", "4", Entry("4", "en", "z", "de", "Z"), old=listed["4"],
            outcome_unknown=True, cause=Cause.CONNECTION_LOST,
        )  # fmt: skip
        [settled] = settle_updates([untouched], after)
        assert settled.outcome == "failure" and "still holds the old terms" in settled.reason
        # Past its deadline, though, a slow service may still act: the listing proves nothing.
        [late] = settle_updates([replace(untouched, cause=Cause.TIMEOUT)], after)
        assert late.outcome == "unknown" and "may still act" in late.reason
        server.fail_next(1, status=503, method="PUT")  # said it did not act: sent again
        assert client.update_entry("5", Entry("", "en", "q", "de", "Q")).attempts == 2


def test_a_restore_reports_entries_the_service_would_refuse_and_sends_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from conftest import point_at

    from dict_magics.operations.context import OperationSettings
    from dict_magics.operations.delete import delete
    from dict_magics.operations.restore import restore

    legacy = Entry("50", "zh", "你好", "en", "hello")  # kept from before the vendor's rule
    with SandboxServer(5) as server:
        server.add_entries([legacy])
        point_at(monkeypatch, server)
        gone = [server.entry(i).terms for i in ("2", "3")]
        assert delete(OperationSettings(), ["2", "50", "3"]).ok
        server.clear_log()
        result = restore(OperationSettings())
        assert sorted(e.terms for e in result.added) == sorted(gone)
        assert sorted(gone) == sorted(t for t in server.terms if t in gone)
        [(entry, why)] = result.failed
        assert entry.terms == legacy.terms and "not sent: the service would refuse it" in why
        assert "zh-CN or zh-TW" in why
        [post] = [r for r in server.requests if r.method == "POST"]
        assert len(post.entries) == 2 and legacy.terms not in [e.terms for e in post.entries]


def test_update_entries_run_on_the_batch_engine_in_input_order() -> None:
    with SandboxServer(8) as server, client_for(server) as client:
        old = client.list_entries().by_id()
        changes = [(str(i), Entry("", "en", f"changed {i}", "de", f"G {i}")) for i in (5, 1, 3)]
        changes.append(("404", Entry("", "en", "nobody", "de", "niemand")))
        seen: list[int] = []
        results, why, stopped = client.update_entries(
            changes, old=old, workers=3, progress=lambda d, t, r: seen.append(d)
        )
        assert why == "" and not stopped
        assert [r.entry_id for r in results] == ["5", "1", "3", "404"]
        assert [r.outcome for r in results] == ["success"] * 3 + ["failure"]
        assert results[0].old == old["5"] and results[3].old is None
        assert sorted(seen) == [1, 2, 3, 4]
        assert server.entry("1").terms == ("en", "changed 1", "de", "G 1")
        with pytest.raises(InvalidEntryError):
            client.update_entries([("2", Entry("", "xx", "a", "de", "b"))])


def test_a_lost_chunk_that_a_listing_shows_only_in_part_stays_unknown() -> None:
    """Review finding: a bulk request acts on all its entries or none; a listing after its lost
    answer that holds X but not Y proves nobody's X is ours, so X is not "verified"."""
    from dict_magics.models import AddResult
    from dict_magics.operations.settle import _whole_chunks, settle_adds

    x, y, z = (Entry("", "en", t, "de", t.upper()) for t in ("x", "y", "z"))
    lost = [
        AddResult("failure", e, outcome_unknown=True, cause=Cause.CONNECTION_LOST) for e in (x, y)
    ]
    sure = [AddResult("success", z)]
    settled = settle_adds(lost + sure, before=[], after=[x, z])
    assert [r.outcome for r in settled] == ["success", "failure", "success"]  # per entry
    whole = _whole_chunks(settled, 2, lost=(0, 1))
    assert [r.outcome for r in whole] == ["unknown", "failure", "success"]
    assert not whole[0].verified and "someone else" in (whole[0].reason or "")
    both = _whole_chunks(settle_adds(lost, before=[], after=[x, y]), 2, lost=(0, 1))
    assert [r.outcome for r in both] == ["success", "success"]  # the chunk acted: verified
