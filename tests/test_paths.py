"""Id and base-URL rules: what may reach the request path, and where credentials may go."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from dict_magics.errors import InvalidBaseUrlError, InvalidIdError
from dict_magics.sandbox.router import route
from dict_magics.service.paths import (
    API_PREFIX,
    MAX_ID_LENGTH,
    check_id,
    encode_id,
    entry_path,
    is_loopback,
    normalize_base_url,
)

# Spellings a careless server reads as the purge, each with the reading that gets it there.
PURGE_SPELLINGS = [
    "dictionary-all.json",  # a Rails-like format suffix
    "dictionary-all.xml",
    "dictionary-all.tar.gz",
    "d\u0131ctionary-all",  # dotless i: upper case is DICTIONARY-ALL
    "\uff44\uff49\uff43\uff54\uff49\uff4f\uff4e\uff41\uff52\uff59\uff0d\uff41\uff4c\uff4c",  # NFKC
    "DICTIONARY\ufe63ALL",  # small hyphen-minus (NFKC)
    "dictionary-all;v=1",
    "dictionary-all.",
    "dictionary-all...",
    "dictionary-all/",
    "dictionary-all\\",
    "dic\u200btionary-all",  # zero-width space
    "dictionary\u200d-all",  # zero-width joiner
    "\ufeffdictionary-all",  # byte-order mark
    "dictionary\u00ad-all",  # soft hyphen
    "dictionary-al\u2060l",  # word joiner
    "%64ictionary-all",  # decoded twice
    "dictionary%2Dall",
    "dictionary%252Dall",  # decoded three times
    "%2564%2569ctionary-all",
    "x/../dictionary-all",  # decoded, then dot-segments
    "x%2F..%2Fdictionary-all",
    "dictionary-all%3Bv=1",  # ;params once decoded
    "dictionary-all%2Ejson",
]
# More a careless server may do: the rule covers these too.
MORE_PURGE_SPELLINGS = [
    "DICTIONARY-ALL",
    "Dictionary-All",
    " dictionary-all ",
    "D\u0130CTIONARY-ALL",  # dotted capital I: lower case is i + a combining dot
    "dictiona\u0308ry-all",  # accent-insensitive comparison
    "dictionary-%AAll",  # %AA read as Latin-1 is ª, NFKC a
    "dictionary-all,x",
    "dictionary-all?x",
    "dictionary-all#x",
    "dictionary-all%00.png",  # C strings end at NUL
    "+dictionary-all+",
    "a\\dictionary-all",
    "./dictionary-all",
    "a/b/../dictionary-all",  # the last segment
    "dictionary-all/x/..",
    "dictionary-all/x/...json",  # the format suffix first, then the dot-segment
    "dictionary-all/x/...json/x/..",  # dot-segments, the format suffix, dot-segments again
    "dictionary-all/x/..+",  # the "+" first, then the dot-segment
    "dictionary-all/x/.;p/..",  # ;params in each segment, as Tomcat reads them
    "%EF%BD%84ictionary-all",  # fullwidth d, percent-encoded
    "dic%EF%BD%9%34ionary-all",  # fullwidth t, its last byte encoded twice (byte-wise decoding)
]
ORDINARY_IDS = [
    "42",
    "0",
    "-1",
    "9007199254740993",
    "3f2b8c1e-9d4a-4e6b-8f0c-2a1b3c4d5e6f",
    "FRI",
    "金曜日",
    "café",
    "İstanbul",
    "straße",
    "two words",
    "a.b_c-d~e",
    "a/b",
    "x/../y",
    "100%",
    "a?b#c",
    "dictionary",
    "dictionary-allx",
    "dictionary-all-2",
    "xdictionary-all",
    "dictionary_all",
    "dictionary\u2013all",  # en dash: no normalisation makes it a hyphen
    "dictionary all",
    "all-dictionary",
    "x" * MAX_ID_LENGTH,
]


@pytest.mark.parametrize(
    ("given", "segment"),
    [
        ("42", "42"),
        ("  42 ", "42"),
        (42, "42"),
        ("a/b", "a%2Fb"),
        ("a?b#c", "a%3Fb%23c"),
        ("100%", "100%25"),
        ("%41", "%2541"),
        ("two words", "two%20words"),
        ("café", "caf%C3%A9"),
        ("a.b_c-d~e", "a.b_c-d~e"),
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
        "...",
        "%2e%2e",
        ".%2E",
        "%252E%252e",
        "\uff0e\uff0e",
        "a/..",
        "a%2F..",
        "..;x",
        ".json",
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


@pytest.mark.parametrize("spelling", PURGE_SPELLINGS + MORE_PURGE_SPELLINGS)
def test_every_spelling_a_server_may_read_as_the_purge_is_refused(spelling: str) -> None:
    with pytest.raises(InvalidIdError) as info:
        check_id(spelling)
    message = str(info.value)
    assert "\n" not in message
    assert repr(spelling.strip()) in message
    assert "dict_purge" in message and "dict-magics purge" in message


@pytest.mark.parametrize("spelling", PURGE_SPELLINGS)
def test_the_lenient_sandbox_really_purges_on_each_listed_spelling(spelling: str) -> None:
    path = API_PREFIX + encode_id_unchecked(spelling)
    assert route(path, "lenient").kind == "purge"
    assert route(path, "strict").kind == "delete"


def encode_id_unchecked(entry_id: str) -> str:
    """The segment the client would send for ``entry_id`` were it not refused."""
    from urllib.parse import quote

    return quote(entry_id.strip(), safe="")


@pytest.mark.parametrize("entry_id", ORDINARY_IDS)
def test_ordinary_ids_pass_and_route_to_themselves(entry_id: str) -> None:
    assert check_id(entry_id) == entry_id
    assert route(entry_path(entry_id), "strict").entry_id == entry_id


def test_every_format_character_inside_the_purge_word_is_refused() -> None:
    invisible = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    assert len(invisible) > 150
    for char in invisible:
        with pytest.raises(InvalidIdError, match="delete-everything"):
            check_id(f"diction{char}ary-all")


TANGLE_SEPARATORS = ["2F", "3B", "2B", "23", "3F", "2C", "2E", "5C", "00", "20"] * 4


@pytest.mark.parametrize(
    "tangled",
    [
        # Separators encoded 0 to 5 times over: each round of decoding reveals new cut points,
        # and each cut multiplies the Unicode forms of what is left (2,624 readings).
        "".join("%" + "25" * (i % 6) + sep + "\u01c5" for i, sep in enumerate(TANGLE_SEPARATORS)),
        "\ufdfa" * 300 + "dictionary-all",  # NFKC makes 18 characters of each
    ],
)
def test_an_id_with_too_many_readings_is_refused_not_checked_in_part(tangled: str) -> None:
    assert len(tangled) <= MAX_ID_LENGTH
    with pytest.raises(InvalidIdError, match="cannot be checked safely"):
        check_id(tangled)


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
    assert all(is_loopback(h) for h in ["LOCALHOST", "Localhost"])
    assert not any(is_loopback(h) for h in ["10.0.0.1", "example.com", "128.0.0.1", "::2"])


@pytest.mark.parametrize("host", ["localhost.", "127.0.0.1.", "LOCALHOST.", "127.0.0.1.."])
def test_a_trailing_dot_is_a_dns_name_not_loopback(host: str) -> None:
    assert not is_loopback(host)
    with pytest.raises(InvalidBaseUrlError, match=r"trailing dot.*plain http") as info:
        normalize_base_url(f"http://{host}:8765")
    assert "\n" not in str(info.value)
    assert normalize_base_url(f"https://{host}:8765") == f"https://{host.lower()}:8765"
