"""Id and base-URL rules: what may reach the request path, and where credentials may go."""

from __future__ import annotations

import pytest

from dict_magics.errors import InvalidBaseUrlError, InvalidIdError
from dict_magics.service.paths import (
    check_id,
    encode_id,
    entry_path,
    is_loopback,
    normalize_base_url,
)


@pytest.mark.parametrize(
    ("given", "segment"),
    [
        ("42", "42"),
        ("  42 ", "42"),
        (42, "42"),
        ("a/b", "a%2Fb"),
        ("a?b#c", "a%3Fb%23c"),
        ("100%", "100%25"),
        ("%64ictionary-all", "%2564ictionary-all"),
        ("two words", "two%20words"),
        ("café", "caf%C3%A9"),
        ("a.b_c-d~e", "a.b_c-d~e"),
        ("...", "..."),
        ("dictionary-all-2", "dictionary-all-2"),
    ],
)
def test_ids_become_one_encoded_segment(given: object, segment: str) -> None:
    assert encode_id(given) == segment
    assert entry_path(given) == "/api/v1/dictionary/" + segment


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "   ",
        "dictionary-all",
        "DICTIONARY-ALL",
        "Dictionary-All",
        " dictionary-all ",
        ".",
        "..",
        "a\x00b",
        "tab\tinside",
        "x" * 1001,
        None,
        True,
        1.5,
        b"42",
    ],
)
def test_bad_ids_are_refused_with_a_message_naming_them(bad: object) -> None:
    with pytest.raises(InvalidIdError) as info:
        check_id(bad)
    message = str(info.value)
    assert message
    if isinstance(bad, str) and bad.strip() and len(bad) < 100:
        assert repr(bad.strip())[1:-1][:20] in message


def test_purge_refusal_points_at_the_purge_command() -> None:
    with pytest.raises(InvalidIdError, match="dict_purge"):
        check_id("dictionary-all")


@pytest.mark.parametrize(
    ("given", "normal"),
    [
        ("https://api.example.com", "https://api.example.com"),
        ("https://api.example.com/", "https://api.example.com"),
        ("https://api.example.com/api/v1", "https://api.example.com"),
        ("https://api.example.com/api/v1/", "https://api.example.com"),
        ("https://api.example.com:8443/prefix", "https://api.example.com:8443/prefix"),
        ("HTTPS://API.example.com", "https://api.example.com"),
        ("http://127.0.0.1:8765", "http://127.0.0.1:8765"),
        ("http://127.5.6.7", "http://127.5.6.7"),
        ("http://localhost:1/api/v1", "http://localhost:1"),
        ("http://[::1]:9", "http://[::1]:9"),
    ],
)
def test_base_urls_accepted(given: str, normal: str) -> None:
    assert normalize_base_url(given) == normal


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        ("http://api.example.com", "plain http"),
        ("http://10.0.0.1", "plain http"),
        ("http://localhost.example.com", "plain http"),
        ("http://api.localhost:8080", "plain http"),
        ("ftp://api.example.com", "https://host"),
        ("api.example.com", "https://host"),
        ("", "https://host"),
        ("https://user:pw@api.example.com", "user name"),
        ("https://api.example.com/?x=1", "query"),
        ("https://api.example.com:99999", "not a valid URL"),
    ],
)
def test_base_urls_refused(bad: str, words: str) -> None:
    with pytest.raises(InvalidBaseUrlError, match=words):
        normalize_base_url(bad)


def test_loopback_hosts() -> None:
    assert all(is_loopback(h) for h in ["localhost", "127.0.0.1", "127.255.0.1", "::1", "[::1]"])
    assert not any(is_loopback(h) for h in ["10.0.0.1", "example.com", "128.0.0.1", "::2"])
