"""Where requests go: base URL rules and entry-id encoding.

These rules are the line between "delete entry X" and "delete everything": an id must never be
able to change the request path, and credentials must never travel in clear text off this host.
Only the standard library is used, so the front ends can check input before loading ``requests``.
"""

from __future__ import annotations

import ipaddress
import unicodedata
from urllib.parse import quote, urlsplit

from ..errors import InvalidBaseUrlError, InvalidIdError

__all__ = [
    "API_PREFIX",
    "MAX_ID_LENGTH",
    "PURGE_SEGMENT",
    "check_id",
    "encode_id",
    "entry_path",
    "host_of",
    "is_loopback",
    "normalize_base_url",
    "purge_path",
]

API_PREFIX = "/api/v1/dictionary/"
PURGE_SEGMENT = "dictionary-all"
MAX_ID_LENGTH = 1000


def is_loopback(host: str) -> bool:
    """True for ``localhost``, 127.0.0.0/8 and ``::1``: the only places plain http may go."""
    host = host.strip("[]").rstrip(".").lower()
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
        raise InvalidBaseUrlError(
            f"refusing plain http to {host!r}: credentials would travel unencrypted. "
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

    The purge segment, ``.`` and ``..`` are refused outright, whatever their letter case, and so
    are empty ids and control characters (invisible in any rendering of the result).
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
    if text.casefold() == PURGE_SEGMENT:
        raise InvalidIdError(
            f"{text!r} is not an entry id: it is the service's delete-everything operation. "
            "Use %dict_purge (or `dict-magics purge`) if you mean to delete every entry."
        )
    if text in (".", ".."):
        raise InvalidIdError(f"{text!r} is not an entry id: it would change the request path.")
    if any(unicodedata.category(ch) in ("Cc", "Cs") for ch in text):
        raise InvalidIdError(f"entry id {text!r} contains control characters.")
    return text


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
