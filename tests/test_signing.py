"""The signing helper: known answers, nonce ordering, and signing what is actually sent."""

from __future__ import annotations

import threading

import requests

from dict_magics.service.signing import NonceSource, SignedAuth, next_nonce, sign


def test_rfc4231_case_2() -> None:
    # HMAC-SHA256("Jefe", "what do ya want for nothing?"), split into nonce + path.
    assert (
        sign("ya want for nothing?", "Jefe", "what do ")
        == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    )


def test_known_answers_computed_with_openssl() -> None:
    # printf '%s' "<nonce><path>" | openssl dgst -sha256 -hmac "<secret>"
    assert (
        sign("/api/v1/dictionary/42", "secret", "1700000000000")
        == "90ac102d9b9aca90c4bbeef22ece4062ef8d509f2bd05d5af877e51168d56b32"
    )
    assert (
        sign("/api/v1/dictionary/dictionary-all", "s3cr3t-Ключ", "1700000000001")
        == "539acd91aedd81a500fdbadf2dad990efeff51b0706f3d7faad2026dc2dd24fe"
    )
    assert (
        sign("/api/v1/dictionary/caf%C3%A9", "k", "1")
        == "6d4a51b755ef0376f4301324bab4d13754b9d1c24c4f2690667748414e7c7839"
    )


def test_signature_is_lowercase_hex() -> None:
    value = sign("/p", "k", "1")
    assert len(value) == 64 and value == value.lower() and int(value, 16) >= 0


def test_nonces_strictly_increase_across_threads() -> None:
    source = NonceSource()
    seen: list[list[int]] = [[] for _ in range(8)]

    def take(bucket: list[int]) -> None:
        bucket.extend(int(source()) for _ in range(2000))

    threads = [threading.Thread(target=take, args=(b,)) for b in seen]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    everything = [n for bucket in seen for n in bucket]
    assert len(set(everything)) == len(everything) == 16000
    for bucket in seen:
        assert bucket == sorted(bucket) and len(set(bucket)) == len(bucket)


def test_draw_above_never_goes_back() -> None:
    source = NonceSource()
    first = int(source())
    assert source.draw_above(0) > first
    assert source.draw_above(first + 100_000) == first + 100_000
    assert int(source()) == first + 100_001
    assert source.draw_above(5) == first + 100_002


def test_nonce_is_unix_time_in_milliseconds() -> None:
    import time

    before = time.time_ns() // 1_000_000
    value = int(next_nonce())
    after = time.time_ns() // 1_000_000
    # Strictly increasing may run ahead of the clock, but only by the nonces taken this run.
    assert before <= value <= after + 100_000


def test_auth_signs_the_prepared_path_exactly() -> None:
    nonces = iter(["111", "112"])
    auth = SignedAuth("AK", "SK", nonces=lambda: next(nonces))
    prepared = requests.Request(
        "DELETE", "http://127.0.0.1:1/api/v1/dictionary/a%2Fb", auth=auth
    ).prepare()
    assert prepared.path_url == "/api/v1/dictionary/a%2Fb"
    assert prepared.headers["accessKey"] == "AK"
    assert prepared.headers["nonce"] == "111"
    assert prepared.headers["Content-Type"] == "application/json"
    assert prepared.headers["signature"] == sign("/api/v1/dictionary/a%2Fb", "SK", "111")
    assert "SK" not in str(prepared.headers)


def test_auth_repr_hides_the_secret() -> None:
    auth = SignedAuth("AK", "very-secret-value")
    assert "very-secret-value" not in repr(auth)
    # Debuggers and verbose tracebacks show attributes: the secret is held as a ``Secret``.
    assert "very-secret-value" not in repr(vars(auth))
    assert "very-secret-value" not in repr(auth._nonces)
