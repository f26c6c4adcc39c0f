"""Where requests go: base URL rules and entry-id encoding.

These rules are the line between "delete entry X" and "delete everything": an id must never be
able to change the request path, and credentials must never travel in clear text off this host.
Only the standard library is used, so the front ends can check input before loading ``requests``.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Callable
from functools import partial
from urllib.parse import quote, unquote_to_bytes, urlsplit

from ..errors import InvalidBaseUrlError, InvalidIdError
from ..settings import MAX_ID_LENGTH

__all__ = [
    "API_PREFIX",
    "MAX_ID_LENGTH",
    "MAX_READINGS",
    "MAX_READING_GROWTH",
    "PURGE_SEGMENT",
    "check_id",
    "encode_id",
    "entry_path",
    "host_of",
    "is_loopback",
    "normalize_base_url",
    "purge_path",
    "readings",
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


def normalize_base_url(base_url: str) -> str:
    """Check ``base_url`` and return it without a trailing ``/`` or ``/api/v1``.

    https is required except for loopback hosts; user info, queries and fragments are refused
    because they would either leak or be silently dropped.
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
    if parts.username is not None or parts.password is not None:
        raise InvalidBaseUrlError("base URL must not contain a user name or password.")
    if parts.query or parts.fragment:
        raise InvalidBaseUrlError(f"base URL {text!r} must not have a query or fragment.")
    if scheme == "http" and not is_loopback(host):
        dot = " (with a trailing dot it is a DNS name, not loopback)" if host.endswith(".") else ""
        raise InvalidBaseUrlError(
            f"refusing plain http to {host!r}{dot}: credentials would travel unencrypted. "
            "Use https (plain http is allowed only for localhost / 127.0.0.1 / ::1)."
        )
    path = parts.path.rstrip("/")
    if path.lower().endswith("/api/v1"):
        path = path[: -len("/api/v1")]
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    return f"{scheme}://{netloc}{path}"


def host_of(base_url: str) -> str:
    """The host (and port) of a URL, for messages that say where a request goes."""
    return urlsplit(base_url).netloc


def check_id(entry_id: object) -> str:
    """Return ``entry_id`` as the stripped text that will be deleted, or raise ``InvalidIdError``.

    Refused: ids that are not text or integers, empty ids, ids over ``MAX_ID_LENGTH``
    characters, control characters (invisible in any rendering of the result), and every id a
    careless server could read as something other than one entry. Its readings (``readings``)
    are what any combination of these, repeated until nothing changes, makes of it:
    percent-decoding (byte-wise; bytes left over read as Latin-1) and ``+`` as a space; NFKC,
    NFKD, NFC and dropping combining marks; dropping invisible characters (format and other
    default-ignorable code points) and control characters; resolving dot-segments (``\\`` as
    ``/``), taking the last segment, dropping ``;params`` inside segments; stripping whitespace
    and ``+`` at either end, trailing dots, slashes and backslashes, a format suffix
    (``.json``), and everything from the first ``.``, ``;``, ``,``, ``?``, ``#`` or NUL. The id
    is refused when

    - a reading case-folded, upper-cased or lower-cased is ``dictionary-all`` so treated: the
      purge (``dictionary-all.json``, ``%64ictionary-all``, ``x/../dictionary-all``, a dotless
      i, fullwidth or zero-width spellings ...);
    - a reading is empty, ``.`` or ``..``, or climbs out of the entry's place in the path by
      dot-segments: no entry at all (``%2e%2e``, ``a/..``, ``.json``, ``...``).

    Nothing else is refused: ``dictionary-allx``, ``dictionary-all-2`` and ``x/../y`` pass.
    """
    if isinstance(entry_id, bool) or not isinstance(entry_id, str | int):
        raise InvalidIdError(f"entry id {entry_id!r} must be a string or an integer.")
    text = str(entry_id).strip()
    if not text:
        raise InvalidIdError("an entry id cannot be empty.")
    if len(text) > MAX_ID_LENGTH:
        raise InvalidIdError(
            f"entry id {text[:40]!r}... is {len(text)} characters long; "
            f"the limit is {MAX_ID_LENGTH}."
        )
    if any(unicodedata.category(ch) in ("Cc", "Cs") for ch in text):
        raise InvalidIdError(f"entry id {text!r} contains control characters.")
    _check_readings(text)
    return text


def _check_readings(text: str) -> None:
    """Raise ``InvalidIdError`` if a reading of ``text`` is the purge or leaves its segment."""
    found = readings(text)
    if any(case(r) == case(PURGE_SEGMENT) for r in found for case in _CASES):
        how = "it is" if text.casefold() == PURGE_SEGMENT else "a server may read it as"
        raise InvalidIdError(
            f"{text!r} is not an entry id: {how} {PURGE_SEGMENT!r}, the service's "
            "delete-everything operation. Use %dict_purge (or `dict-magics purge`) if you "
            "mean to delete every entry."
        )
    escaping = sorted((r for r in found if _leaves_its_segment(r)), key=len)
    if escaping:
        reading = text if text in escaping else escaping[-1]
        how = "" if reading == text else f" (a server may read it as {reading!r})"
        raise InvalidIdError(f"{text!r} is not an entry id: it would change the request path{how}.")


def readings(text: str) -> set[str]:
    """Every string a careless server might make of ``text``: the closure under ``_READINGS``.

    Each reading is applied to every string found so far until nothing new appears, so any
    combination, in any order and repeated, is covered. Invisible characters (format and
    default-ignorable code points) are dropped from every new reading at once: they are never
    separators, letters or ``%``, so keeping both variants would only multiply the work.

    The work is bounded: ids are at most ``MAX_ID_LENGTH`` characters, and an id with more than
    ``MAX_READINGS`` readings, or a reading more than ``MAX_READING_GROWTH`` times its length
    (compatibility forms such as U+FDFA expand 18-fold), is refused as too intricate to check
    rather than checked in part.
    """
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
_SEGMENT_PARAMS = re.compile(r";[^/\\]*")
_FORMAT_SUFFIX = re.compile(r"\.[^./\\]*$")
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")
_LATIN1_BYTES = {0xDC00 + byte: byte for byte in range(0x80, 0x100)}

_READINGS: tuple[Callable[[str], str], ...] = (
    _percent_decoded,  # repeated by the closure: %2564 -> %64 -> d
    _as_latin1,  # %AA -> ª (NFKC: a)
    lambda text: text.replace("+", " "),  # form decoding
    partial(unicodedata.normalize, "NFKC"),  # fullwidth letters and hyphens
    partial(unicodedata.normalize, "NFKD"),
    partial(unicodedata.normalize, "NFC"),
    _without_marks,  # accent folding after NFKD: dictionäry -> dictionary, İ -> i
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
# Compared in each form, so a dotless i (upper case: I) reads as i. Case
# mappings never make or remove a separator, "%", whitespace or an invisible character, so
# applying them once, here, finds whatever applying them anywhere in a chain would.
_CASES = (str.casefold, str.upper, str.lower)
MAX_READINGS = 2000
MAX_READING_GROWTH = 4


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
