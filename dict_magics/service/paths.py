"""Where requests go: base URL rules and entry-id encoding.

These rules are the line between "delete entry X" and "delete everything": an id must never be
able to change the request path, and credentials must never travel in clear text off this host.
Only the standard library is used, so the front ends can check input before loading ``requests``.
"""

from __future__ import annotations

import functools
import ipaddress
import reprlib
import unicodedata
from urllib.parse import quote, urlsplit

from ..errors import InvalidBaseUrlError, InvalidIdError, Remedy
from ..settings import MAX_ID_LENGTH
from .readings import MAX_INTRICATE_LENGTH, MAX_READING_GROWTH, MAX_READINGS, readings, skeleton

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
    if port is not None:
        netloc += f":{port}"
    return f"{scheme}://{netloc}{path}"


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

    Its readings (``readings.readings``) are what any combination of these, repeated until
    nothing changes, makes of it: percent-decoding (byte-wise; bytes left over read as Latin-1
    or by a decoder that allows overlong UTF-8), ``%uXXXX`` decoding and ``+`` as a space;
    NFKC, NFKD, NFC and dropping combining marks; dropping invisible and control characters;
    resolving dot-segments (``\\`` as ``/``), taking the last segment, dropping ``;params``
    inside segments; stripping whitespace and ``+`` at either end, trailing dots, slashes and
    backslashes, a format suffix (``.json``), and everything from the first ``.``, ``;``,
    ``,``, ``?``, ``#`` or NUL. The id is refused when

    - a reading's skeleton (``readings.skeleton``: look-alikes and transliterations folded,
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


_PURGE_SKELETON = skeleton(PURGE_SEGMENT)


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
