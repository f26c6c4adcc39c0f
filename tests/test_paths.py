"""Id and base-URL rules: what may reach the request path, and where credentials may go."""

from __future__ import annotations

import pickle
import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dict_magics.errors import InvalidBaseUrlError, InvalidIdError
from dict_magics.frontends.commands import CLI, MAGIC, PANEL
from dict_magics.sandbox import SandboxServer
from dict_magics.sandbox.handler import entry_of
from dict_magics.service import paths
from dict_magics.service.client import DictionaryClient
from dict_magics.service.paths import (
    API_PREFIX,
    MAX_ID_LENGTH,
    MAX_INTRICATE_LENGTH,
    EntryId,
    check_id,
    encode_id,
    entry_path,
    is_loopback,
    normalize_base_url,
    skeleton,
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
# Spellings real decoders and transliterators make the purge (the adversarial review's cases):
# %u escapes (JavaScript unescape, .NET HttpUtility.UrlDecode, classic ASP), overlong UTF-8
# (old IIS, Tomcat, hand-written C), iconv //TRANSLIT, unidecode, Rails' parameterize.
DECODER_PURGE_SPELLINGS = [
    "%u0064ictionary-all",
    "dictionary%u002Dall",
    "%u0044ICTIONARY-ALL",
    "%U0064ictionary-all",
    "%25u0064ictionary-all",  # decoded, then unescaped
    "%C1%A4ictionary-all",  # overlong d, two bytes
    "%E0%81%A4ictionary-all",  # overlong d, three bytes
    "%F0%80%81%A4ictionary-all",  # overlong d, four bytes
    "dictionary%C0%ADall",  # overlong hyphen
    "dictionary-a\u0142\u0142",  # l with stroke
    "\u0111ictionary-all",  # d with stroke
    "\u0257ictionary-all",  # d with hook
    "\u0110ICTIONARY-ALL",
    "d\u0456ctionary-all",  # Cyrillic i
    "di\u0441ti\u043enary-\u0430ll",  # Cyrillic c, o, a
    "dictionary-\u03b1ll",  # Greek alpha
    "dictionary-all!",
    "(dictionary-all)",
    "dictionary_all",
    "dictionary all",
    "dictionary.all",
    "dictionaryall",
    "dictionary/all",
    "dictionary\u2603all",  # anything that is not an ASCII letter or digit is dropped
] + [f"dictionary{dash}all" for dash in "\u2010\u2011\u2012\u2013\u2014\u2212\ufe63\uff0d"]
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
    "dictionary-all-2",  # digits stay in the skeleton
    "dictionary-all%32",
    "2dictionary-all",
    "xdictionary-all",
    "dicti0nary-all",
    "dictionary-al",
    "all-dictionary",
    "%u0064",  # d
    "%C1%A4",  # d
    "100%u",
    "x" * MAX_ID_LENGTH,
    "a/" * (MAX_ID_LENGTH // 2),
    "\u91d1" * MAX_INTRICATE_LENGTH,
    "%41" * (MAX_INTRICATE_LENGTH // 3),
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
    with pytest.raises(InvalidIdError) as info:
        check_id("dictionary-all")
    assert info.value.option == "purge"  # each front end names its own purge command
    assert "%dict_purge" in MAGIC.message(info.value)
    assert "`dict-magics purge`" in CLI.message(info.value)
    assert "Delete all" in PANEL.message(info.value)


@pytest.mark.parametrize(
    "spelling", PURGE_SPELLINGS + MORE_PURGE_SPELLINGS + DECODER_PURGE_SPELLINGS
)
def test_every_spelling_a_server_may_read_as_the_purge_is_refused(spelling: str) -> None:
    with pytest.raises(InvalidIdError) as info:
        check_id(spelling)
    message = str(info.value)
    assert "\n" not in message
    assert repr(spelling.strip()) in message
    assert "delete-everything operation" in message and info.value.option == "purge"


@pytest.mark.parametrize("entry_id", ORDINARY_IDS)
def test_ordinary_ids_pass_and_route_to_themselves(entry_id: str) -> None:
    assert check_id(entry_id) == entry_id
    assert entry_of(entry_path(entry_id)) == entry_id


def test_every_format_character_inside_the_purge_word_is_refused() -> None:
    invisible = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    assert len(invisible) > 150
    for char in invisible:
        with pytest.raises(InvalidIdError, match="delete-everything"):
            check_id(f"diction{char}ary-all")


TANGLE_SEPARATORS = ["2F", "3B", "2B", "23", "3F", "2C", "2E", "5C", "00", "20"] * 2


@pytest.mark.parametrize(
    "tangled",
    [
        # Separators encoded 0 to 5 times over: each round of decoding reveals new cut points,
        # and each cut multiplies the Unicode forms of what is left.
        "".join("%" + "25" * (i % 6) + sep + "\u01c5" for i, sep in enumerate(TANGLE_SEPARATORS)),
        "\ufdfa" * 100 + "dictionary-all",  # NFKC makes 18 characters of each
    ],
)
def test_an_id_with_too_many_readings_is_refused_not_checked_in_part(tangled: str) -> None:
    assert len(tangled) <= MAX_INTRICATE_LENGTH
    with pytest.raises(InvalidIdError, match="cannot be checked safely"):
        check_id(tangled)


@pytest.mark.parametrize(
    "long_id",
    [
        "\u91d1" * (MAX_INTRICATE_LENGTH + 1),
        "x" * MAX_INTRICATE_LENGTH + "%41",
        "x" * (MAX_ID_LENGTH - 1) + "\xe9",
    ],
)
def test_a_long_id_with_escapes_or_non_ascii_is_refused_as_too_intricate(long_id: str) -> None:
    with pytest.raises(InvalidIdError, match=f"at most {MAX_INTRICATE_LENGTH} characters"):
        check_id(long_id)


class SneakyText(str):
    """Checked as "42", but its own methods would make the path the purge."""

    def __str__(self) -> str:
        return self

    def strip(self, chars: str | None = None) -> str:
        return self

    def encode(self, encoding: str = "utf-8", errors: str = "strict") -> bytes:
        return PURGE_BYTES


class SneakyNumber(int):
    def __str__(self) -> str:
        return "dictionary-all"

    def __repr__(self) -> str:
        return "dictionary-all"

    def __format__(self, spec: str) -> str:
        return "dictionary-all"


PURGE_BYTES = b"dictionary-all"


@pytest.mark.parametrize(("given", "text"), [(SneakyText("42"), "42"), (SneakyNumber(42), "42")])
def test_subclasses_are_read_with_the_base_types_methods(given: object, text: str) -> None:
    checked = check_id(given)
    assert (
        checked == text and type(checked) is EntryId
    )  # ours: no method of the subclass given survives
    assert encode_id(given) == text
    assert entry_path(given) == API_PREFIX + text


def test_a_huge_integer_is_refused_not_crashed_on() -> None:
    with pytest.raises(InvalidIdError, match="integer longer than"):
        check_id(10**5000)


def test_a_sneaky_subclass_sends_only_its_checked_text() -> None:
    with SandboxServer(3) as sandbox:
        sandbox.add_entries(["42", "43", "44"])
        before = sandbox.entries
        with DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key) as client:
            result = client.delete_entry(SneakyText("42"))
            batch = client.delete_entries([SneakyText("43"), SneakyNumber(44)])
        log = sandbox.requests
        # Taken requests only (a 40005 is not acted on), in any order (two workers).
        taken = [(r.operation, r.entry_id) for r in log if r.method == "DELETE" and r.code is None]
        assert sorted(taken) == [("delete", "42"), ("delete", "43"), ("delete", "44")]
        assert all(r.operation != "purge" for r in log)
        assert result.outcome == "success"
        assert result.entry_id == "42" and type(result.entry_id) is EntryId
        assert [r.entry_id for r in batch.results] == ["43", "44"]
        kept = {k: v for k, v in before.items() if k not in ("42", "43", "44")}
        assert sandbox.entries == kept


# Letters of the purge word: the skeleton must read every character whose case mapping,
# decomposed and without accents, is one of them as that letter (the dotless i upper-cases to I).
PURGE_LETTERS = set("dictionaryl")


def test_the_skeleton_reads_every_case_mapping_of_a_purge_letter_as_that_letter() -> None:
    missed = []
    for code in range(0x80, 0x20000):
        char = chr(code)
        for case in (str.upper, str.lower, str.casefold):
            mapped = unicodedata.normalize("NFKD", case(char))
            letters = "".join(c for c in mapped if not unicodedata.combining(c)).lower()
            if letters and set(letters) <= PURGE_LETTERS and skeleton(char) != letters:
                missed.append((char, case.__name__, letters, skeleton(char)))
    assert missed == []


@pytest.mark.parametrize(
    ("given", "letters"),
    [
        ("dictionary-all", "dictionaryall"),
        ("D\u0130CTIONARY-ALL", "dictionaryall"),
        ("\uff44\u0131\u0441\u0442\u0456\u03bf\u0273\u0251\u027d\u028f", "dictionary"),
        ("dictionary-all-2", "dictionaryall2"),
        ("\u91d1\u66dc\u65e5", ""),
        ("caf\xe9", "cafe"),
    ],
)
def test_skeletons(given: str, letters: str) -> None:
    assert skeleton(given) == letters


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


@pytest.mark.parametrize(
    "host", ["a\x1bXb.example", "api\u202e.example", "a\u200bpi.example", "a\x7fb.example"]
)
def test_a_host_with_control_or_invisible_characters_is_refused(host: str) -> None:
    """The host is named in every confirmation (a purge's question, its refusal): a control,
    bidi or zero-width character there would reach the terminal as it is, or make a host that
    reads like another one. No host name holds one."""
    with pytest.raises(InvalidBaseUrlError, match="control, invisible or space") as info:
        normalize_base_url(f"https://{host}")
    assert str(info.value).isprintable()


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


@given(st.text(alphabet="0123456789", min_size=1, max_size=paths.MAX_ID_LENGTH))
def test_ids_of_ascii_digits_skip_only_checks_they_always_pass(text: str) -> None:
    """``check_id`` returns plain ASCII digits without computing their readings: every reading
    of them must pass the full check anyway, or skipping it would be a hole."""
    paths._check_readings(text)
    assert paths.check_id(f" {text}\t") == text


def test_an_id_is_checked_once_and_trusted_below() -> None:
    checked = check_id("17")
    assert check_id(checked) is checked and entry_path(checked).endswith("/17")
    with pytest.raises(TypeError):
        EntryId("dictionary-all")  # only check_id makes one
    back = pickle.loads(pickle.dumps(checked))  # noqa: S301 (our own bytes)
    assert type(back) is str and back == "17"  # comes back as text, checked again on use
