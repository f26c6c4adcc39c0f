"""Where requests go: base URL rules, entry-id encoding, and what a server might read an id as.

These rules are the line between "delete entry X" and "delete everything": an id must never be
able to change the request path, and credentials must never travel in clear text off this host.
``check_id`` refuses an id when any of its readings (``readings``: what a careless server might
make of it) has the purge word's letter skeleton (``skeleton``); a delete keeps every listed
entry a reading names in its snapshot. Only the standard library is used, so the front ends can
check input before loading ``requests``.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import reprlib
import unicodedata
from collections.abc import Callable
from functools import partial
from urllib.parse import quote, unquote_to_bytes, urlsplit

from ..errors import InvalidBaseUrlError, InvalidIdError, Remedy
from ..settings import MAX_ID_LENGTH

__all__ = [
    "API_PREFIX",
    "MAX_ID_LENGTH",
    "MAX_INTRICATE_LENGTH",
    "MAX_READINGS",
    "MAX_READING_GROWTH",
    "PURGE_SEGMENT",
    "EntryId",
    "check_id",
    "encode_id",
    "entry_path",
    "host_of",
    "is_loopback",
    "normalize_base_url",
    "purge_path",
    "readings",
    "same_base_url",
    "skeleton",
]

API_PREFIX = "/api/v1/dictionary/"
PURGE_SEGMENT = "dictionary-all"


def is_loopback(host: str) -> bool:
    """True for ``localhost``, 127.0.0.0/8 and ``::1``: the only places plain http may go.

    ``localhost.`` and ``127.0.0.1.`` are not: a trailing dot makes a fully qualified DNS name,
    which resolvers look up rather than answer from the hosts file.
    """
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@functools.lru_cache(maxsize=64)
def normalize_base_url(base_url: str) -> str:
    """Check ``base_url`` and return it without a trailing ``/`` or ``/api/v1``.

    https is required except for loopback hosts; user info, queries and fragments are refused
    because they would either leak or be silently dropped. A pure function, asked at every
    operation with the same few URLs: the answers are kept (refusals are not).
    """
    text = (base_url or "").strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise InvalidBaseUrlError(f"base URL {text!r} is not a valid URL ({exc}).") from None
    scheme = parts.scheme.lower()
    host = parts.hostname or ""
    if scheme not in ("https", "http") or not host:
        raise InvalidBaseUrlError(f"base URL {text!r} must look like https://host[:port][/prefix].")
    if not host.isprintable() or any(ch.isspace() for ch in host):
        # A control character, a bidi override, a zero-width or a space is in no host name, and
        # the host is shown in every confirmation (a purge's question names it).
        raise InvalidBaseUrlError(
            f"base URL {text!r}: the host {host!r} holds a control, invisible or space character."
        )
    if parts.username is not None or parts.password is not None:
        raise InvalidBaseUrlError("base URL must not contain a user name or password.")
    if parts.query or parts.fragment:
        raise InvalidBaseUrlError(f"base URL {text!r} must not have a query or fragment.")
    if scheme == "http" and not is_loopback(host):
        dot = " (with a trailing dot it is a DNS name, not loopback)" if host.endswith(".") else ""
        raise InvalidBaseUrlError(
            f"refusing plain http to {host!r}{dot}: credentials would travel unencrypted. "
            "Use https (plain http is allowed only for loopback: localhost, 127.0.0.0/8, ::1)."
        )
    path = parts.path.rstrip("/")
    if path.lower().endswith("/api/v1"):
        path = path[: -len("/api/v1")]
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORT[scheme]:
        # https://h:443 is https://h: one host, so one set of snapshots, listing and lock.
        netloc += f":{port}"
    return f"{scheme}://{netloc}{path}"


_DEFAULT_PORT = {"https": 443, "http": 80}


def same_base_url(one: str, other: str) -> bool:
    """Whether two base URLs name one service and API prefix, however spelled (a snapshot's
    header may hold one written by hand: a trailing slash, ``/api/v1``, a default port)."""
    if one == other:
        return True
    try:
        return normalize_base_url(one) == normalize_base_url(other)
    except InvalidBaseUrlError:
        return False


def host_of(base_url: str) -> str:
    """The host (and port) of a URL, for messages that say where a request goes."""
    return urlsplit(base_url).netloc


class EntryId(str):
    """An id ``check_id`` accepted, as the exact text that will be sent.

    Ids are checked once, where they come in (a magic's line, a file, a list); every layer
    below takes an ``EntryId`` as it is (``check_id`` returns it at once). Only ``check_id``
    makes one: ``EntryId("x")`` raises. It pickles as a plain ``str``, which is checked again
    wherever it comes back.
    """

    __slots__ = ()

    def __new__(cls, *args: object, **kwargs: object) -> EntryId:
        raise TypeError("an EntryId is made by check_id() only")

    def __reduce__(self) -> tuple[type[str], tuple[str]]:
        return str, (str.__str__(self),)


def _accepted(text: str) -> EntryId:
    return str.__new__(EntryId, text)


def check_id(entry_id: object) -> EntryId:
    """Return ``entry_id`` as the plain, stripped text that will be deleted (an ``EntryId``),
    or raise ``InvalidIdError``. Callers must use the returned text, never the object given.
    An ``EntryId`` (already checked) is returned as it is.

    Refused: ids that are not text or integers (``bool`` included), empty ids, ids over
    ``MAX_ID_LENGTH`` characters, control characters (invisible in any rendering of the
    result), and every id a careless server could read as something other than one entry.
    Subclasses of ``str`` and ``int`` are read with the base type's own methods, so an
    overridden ``strip`` or ``encode`` never decides what is checked or sent.

    Its readings (``readings`` below) are what any combination of these, repeated until
    nothing changes, makes of it: percent-decoding (byte-wise; bytes left over read as Latin-1
    or by a decoder that allows overlong UTF-8), ``%uXXXX`` decoding and ``+`` as a space;
    NFKC, NFKD, NFC and dropping combining marks; dropping invisible and control characters;
    resolving dot-segments (``\\`` as ``/``), taking the last segment, dropping ``;params``
    inside segments; stripping whitespace and ``+`` at either end, trailing dots, slashes and
    backslashes, a format suffix (``.json``), and everything from the first ``.``, ``;``,
    ``,``, ``?``, ``#`` or NUL. The id is refused when

    - a reading's skeleton (``skeleton`` below: look-alikes and transliterations folded,
      only ASCII letters and digits kept) is ``dictionaryall``: the purge, however spelt
      (``dictionary-all.json``, ``%64ictionary-all``, ``%u0064ictionary-all``,
      ``x/../dictionary-all``, ``dictionary-ałł``, ``dictionary_all``, ``(dictionary-all)``,
      a dotless i, fullwidth, Cyrillic or zero-width spellings ...);
    - a reading is empty, ``.`` or ``..``, or climbs out of the entry's place in the path by
      dot-segments: no entry at all (``%2e%2e``, ``a/..``, ``.json``, ``...``).

    Nothing else is refused: ``dictionary-allx``, ``dictionary-all-2`` and ``x/../y`` pass.
    """
    if type(entry_id) is EntryId:
        return entry_id
    text = _plain_text(entry_id).strip()
    if not text:
        raise InvalidIdError("an entry id cannot be empty.")
    if len(text) > MAX_ID_LENGTH:
        raise InvalidIdError(
            f"entry id {text[:40]!r}... is {len(text)} characters long; "
            f"the limit is {MAX_ID_LENGTH}."
        )
    if text.isascii() and text.isdigit():
        return _accepted(text)  # digits alone: no reading of them is anything but these digits
    if any(unicodedata.category(ch) in ("Cc", "Cs") for ch in text):
        raise InvalidIdError(f"entry id {text!r} contains control characters.")
    _check_readings(text)
    return _accepted(text)


def _plain_text(entry_id: object) -> str:
    """The id as an exact ``str``, made by ``str``'s and ``int``'s own methods."""
    if isinstance(entry_id, str):
        return str.__str__(entry_id)
    if isinstance(entry_id, int) and not isinstance(entry_id, bool):
        try:
            return int.__repr__(entry_id)
        except ValueError:  # more digits than int-to-str conversion allows
            raise InvalidIdError(
                f"entry id is an integer longer than {MAX_ID_LENGTH} digits."
            ) from None
    shown = reprlib.repr(entry_id)
    raise InvalidIdError(f"entry id {shown} must be a string or an integer.")


def _check_readings(text: str) -> None:
    """Raise ``InvalidIdError`` if a reading of ``text`` is the purge or leaves its segment."""
    found = readings(text)
    if any(skeleton(r) == _PURGE_SKELETON for r in found):
        how = "it is" if text.casefold() == PURGE_SEGMENT else "a server may read it as"
        raise InvalidIdError(
            f"{text!r} is not an entry id: {how} {PURGE_SEGMENT!r}, the service's "
            "delete-everything operation.",
            option=Remedy.PURGE,
        )
    escaping = sorted((r for r in found if _leaves_its_segment(r)), key=len)
    if escaping:
        reading = text if text in escaping else escaping[-1]
        how = "" if reading == text else f" (a server may read it as {reading!r})"
        raise InvalidIdError(f"{text!r} is not an entry id: it would change the request path{how}.")


def _leaves_its_segment(reading: str) -> bool:
    """True if ``API_PREFIX + reading``, dot-segments resolved, names no entry below it."""
    depth = 0
    for segment in reading.replace("\\", "/").split("/"):
        if segment == "..":
            depth -= 1
            if depth < 0:
                return True
        elif segment not in ("", "."):
            depth += 1
    return depth == 0


def encode_id(entry_id: object) -> str:
    """Return the single path segment for ``entry_id``, or raise ``InvalidIdError``.

    Everything outside RFC 3986's unreserved characters is percent-encoded, so ``/ ? # %`` and
    spaces stay inside the segment and the server decodes back exactly the id given.
    """
    return quote(check_id(entry_id), safe="")


def entry_path(entry_id: object) -> str:
    """The API path (after the base URL) that deletes one entry."""
    return API_PREFIX + encode_id(entry_id)


def purge_path() -> str:
    """The API path (after the base URL) that deletes every entry."""
    return API_PREFIX + PURGE_SEGMENT


# -- readings: what a careless server might make of an id ---------------------------------------

# Bounds on the work per id (see ``readings``). Plain ASCII ids without "%" have few readings
# whatever their length; escapes and non-ASCII characters are what multiply them.
MAX_READINGS = 300
MAX_READING_GROWTH = 4
MAX_INTRICATE_LENGTH = 200


def readings(text: str) -> set[str]:
    """Every string a careless server might make of ``text``: the closure under ``_READINGS``.

    Each reading is applied to every string found so far until nothing new appears, so any
    combination, in any order and repeated, is covered. Invisible characters (format and
    default-ignorable code points) are dropped from every new reading at once: they are never
    separators, letters or ``%``, so keeping both variants would only multiply the work.

    The work is bounded: an id containing ``%`` or a non-ASCII character may be at most
    ``MAX_INTRICATE_LENGTH`` characters, and an id with more than ``MAX_READINGS`` readings, or
    a reading more than ``MAX_READING_GROWTH`` times its length (compatibility forms such as
    U+FDFA expand 18-fold), is refused as too intricate to check rather than checked in part.
    """
    if len(text) > MAX_INTRICATE_LENGTH and ("%" in text or not text.isascii()):
        raise InvalidIdError(
            f"entry id {text[:40]!r}... is {len(text)} characters long and contains '%' or "
            f"non-ASCII characters; such ids may be at most {MAX_INTRICATE_LENGTH} characters "
            "(a server could read them in too many ways to check)."
        )
    found = {text}
    pending = [text]
    longest = MAX_READING_GROWTH * max(len(text), 1)
    while pending:
        current = pending.pop()
        for read in _READINGS:
            reading = _visible(read(current))
            if reading in found:
                continue
            if len(found) >= MAX_READINGS or len(reading) > longest:
                raise InvalidIdError(
                    f"entry id {text[:40]!r} cannot be checked safely: a server could read it "
                    "in too many ways."
                )
            found.add(reading)
            pending.append(reading)
    return found


def skeleton(text: str) -> str:
    """``text`` as a transliterating or look-alike-blind reader sees it: ASCII letters and digits.

    Compatibility forms are decomposed, accents dropped, case folded, letters with a stroke or
    hook and Cyrillic/Greek look-alikes replaced by their Latin letter (as iconv ``//TRANSLIT``,
    unidecode or Rails' ``parameterize`` would), and then everything but ``a-z`` and ``0-9`` is
    dropped: any dash, space, punctuation or unknown character between the letters.
    """
    folded = _without_marks(unicodedata.normalize("NFKD", text)).casefold()
    folded = _without_marks(unicodedata.normalize("NFKD", folded)).translate(_LOOKALIKES)
    return _NOT_LETTER_OR_DIGIT.sub("", folded)


# Lower-case letters NFKD does not reduce to the Latin letters of "dictionary-all" (casefold
# runs first, so upper-case forms arrive here lower-cased).
_LOOKALIKES = str.maketrans(
    {
        **dict.fromkeys("ɑαаᴀ", "a"),
        **dict.fromkeys("ƈȼϲσсᴄ", "c"),
        **dict.fromkeys("đɗɖƌȡԁᴅ", "d"),
        **dict.fromkeys("ɇɛεеᴇ", "e"),
        **dict.fromkeys("ıɨɪιі", "i"),
        **dict.fromkeys("łƚɫɬɭȴʟӏ", "l"),
        **dict.fromkeys("ƞɲɳȵɴηпн", "n"),
        **dict.fromkeys("øɵοоᴏ", "o"),
        **dict.fromkeys("ɍɽɼɾʀгᴦ", "r"),
        **dict.fromkeys("ŧƫƭʈȶτтᴛ", "t"),
        **dict.fromkeys("ƴɏʏγуү", "y"),
    }
)
_NOT_LETTER_OR_DIGIT = re.compile("[^a-z0-9]+")


def _percent_decoded(text: str) -> str:
    """One round of percent-decoding, byte by byte as PHP's ``urldecode`` does.

    Bytes that are not (yet) UTF-8 stay as escaped bytes (lone surrogates), so a later round
    can complete them: ``%EF%BD%9%34`` decodes to EF BD ``%94``, then to the three bytes of a
    fullwidth t. ``_as_latin1`` reads whatever bytes are left as Latin-1 characters.
    """
    if "%" not in text:
        return text
    raw = unquote_to_bytes(text.encode("utf-8", "surrogateescape"))
    return raw.decode("utf-8", "surrogateescape")


def _percent_u_decoded(text: str) -> str:
    """``%uXXXX`` escapes decoded, as JavaScript's ``unescape`` and .NET's ``UrlDecode`` do.

    A surrogate pair becomes its character; a lone surrogate stays escaped.
    """
    return _PERCENT_U.sub(_percent_u_char, text) if "%" in text else text


def _percent_u_char(match: re.Match[str]) -> str:
    high, low, single = match.groups()
    if single is None:
        return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + int(low, 16) - 0xDC00)
    code = int(single, 16)
    return match.group() if 0xD800 <= code <= 0xDFFF else chr(code)


def _lax_utf8(text: str) -> str:
    """Undecoded byte sequences read by a UTF-8 decoder that allows overlong forms.

    Old IIS, Tomcat and hand-written C decoders read C1 A4 (an overlong ``d``) as ``d``.
    """
    return _OVERLONG.sub(_lax_utf8_char, text) if not text.isascii() else text


def _lax_utf8_char(match: re.Match[str]) -> str:
    raw = [ord(ch) - 0xDC00 for ch in match.group()]
    code = raw[0] & (0x7F >> len(raw))
    for byte in raw[1:]:
        code = code << 6 | byte & 0x3F
    return match.group() if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF else chr(code)


def _as_latin1(text: str) -> str:
    """Bytes left undecoded, read as Latin-1: ``%AA`` is ª, which NFKC makes a."""
    return text.translate(_LATIN1_BYTES)


def _visible(text: str) -> str:
    return text if text.isascii() else _INVISIBLE.sub("", text)


def _without_marks(text: str) -> str:
    """Without combining marks, as accent-insensitive comparisons and slugifiers read text."""
    if text.isascii():
        return text
    return "".join(ch for ch in text if unicodedata.category(ch) not in ("Mn", "Me"))


def _resolved(text: str) -> str:
    """Dot-segments resolved (RFC 3986 5.2.4), ``\\`` read as ``/``, empty segments merged."""
    kept: list[str] = []
    for segment in text.replace("\\", "/").split("/"):
        if segment == "..":
            if kept:
                kept.pop()
        elif segment not in ("", "."):
            kept.append(segment)
    return "/".join(kept)


def _last_segment(text: str) -> str:
    return text.replace("\\", "/").rstrip("/").rpartition("/")[2]


def _cut_at(mark: str) -> Callable[[str], str]:
    return lambda text: text.partition(mark)[0]


# Default-ignorable code points (Unicode's DerivedCoreProperties) and every format (Cf)
# character. tests/test_paths.py checks that every Cf character this Python knows is here.
_INVISIBLE = re.compile(
    "[\xad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4"
    "\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff"
    "\uffa0\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
_PERCENT_U = re.compile(
    "%[uU](D[89AB][0-9A-F]{2})%[uU](D[C-F][0-9A-F]{2})|%[uU]([0-9A-F]{4})", re.IGNORECASE
)
# Lead byte and continuation bytes, as ``_percent_decoded`` leaves them (U+DC80-U+DCFF).
_OVERLONG = re.compile(
    "[\udcc0-\udcdf][\udc80-\udcbf]|[\udce0-\udcef][\udc80-\udcbf]{2}"
    "|[\udcf0-\udcf7][\udc80-\udcbf]{3}"
)
_SEGMENT_PARAMS = re.compile(r";[^/\\]*")
_FORMAT_SUFFIX = re.compile(r"\.[^./\\]*$")
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")
_LATIN1_BYTES = {0xDC00 + byte: byte for byte in range(0x80, 0x100)}

_READINGS: tuple[Callable[[str], str], ...] = (
    _percent_decoded,  # repeated by the closure: %2564 -> %64 -> d
    _percent_u_decoded,  # %u0064 -> d (unescape, HttpUtility.UrlDecode)
    _lax_utf8,  # %C1%A4 -> d (overlong UTF-8)
    _as_latin1,  # %AA -> ª (NFKC: a)
    lambda text: text.replace("+", " "),  # form decoding
    partial(unicodedata.normalize, "NFKC"),  # fullwidth letters and hyphens
    partial(unicodedata.normalize, "NFKD"),
    partial(unicodedata.normalize, "NFC"),
    _without_marks,  # accent folding after NFKD: dictionäry -> dictionary, İ -> i
    lambda text: _CONTROLS.sub("", text),  # decoded %00, %09 ...
    lambda text: _SEGMENT_PARAMS.sub("", text),  # ;params in every segment: x/.;p/..
    _resolved,  # x/../dictionary-all
    _last_segment,  # a/dictionary-all, a\\dictionary-all
    str.strip,  # whitespace at either end
    lambda text: text.strip("+"),  # "+" at either end (a space once form-decoded)
    lambda text: text.rstrip("."),  # trailing dots: dictionary-all.
    lambda text: text.rstrip("/\\"),  # trailing slashes: dictionary-all/
    lambda text: _FORMAT_SUFFIX.sub("", text),  # a format suffix: .json (x/...json: x/..)
    _cut_at("."),  # an id ends at its first dot, as in Rails: .json, .tar.gz
    _cut_at(";"),  # ;params
    _cut_at(","),  # ,params
    _cut_at("?"),  # a query, once %3F is decoded
    _cut_at("#"),  # a fragment, once %23 is decoded
    _cut_at("\x00"),  # C strings end at NUL
)


_PURGE_SKELETON = skeleton(PURGE_SEGMENT)
