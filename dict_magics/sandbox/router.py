"""How the sandbox maps a DELETE path to "delete entry X" or "delete everything".

``strict`` routes as the service's contract says: exactly one percent-decoded segment after the
prefix, and only the exact segment ``dictionary-all`` is the purge. ``lenient`` routes as a
careless real-world server does (format suffixes, repeated decoding, Unicode normalisation, case
folding, dot-segments), so the tests can prove that no id the client sends reaches the purge even
there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from unicodedata import category, normalize
from urllib.parse import unquote

from ..service.http import API_PREFIX

PURGE_SEGMENT = "dictionary-all"

__all__ = ["ROUTERS", "Route", "route"]

ROUTERS = ("strict", "lenient")


@dataclass(frozen=True)
class Route:
    """Where a DELETE path leads: the purge, one entry, or an error (HTTP status + message)."""

    kind: Literal["purge", "delete", "error"]
    entry_id: str | None = None
    status: int = 200
    message: str = ""


def route(raw_path: str, mode: str = "strict") -> Route:
    """Route ``raw_path`` (the path as received, without a query string)."""
    if mode == "lenient":
        return _lenient(raw_path)
    return _strict(raw_path)


def _strict(raw_path: str) -> Route:
    if not raw_path.startswith(API_PREFIX) or "/" in raw_path[len(API_PREFIX) :]:
        return Route("error", status=404, message="no such endpoint")
    try:
        segment = unquote(raw_path[len(API_PREFIX) :], errors="strict")
    except UnicodeDecodeError:
        return Route("error", status=400, message="the id is not valid percent-encoded UTF-8")
    if not segment:
        return Route("error", status=404, message="no such endpoint")
    if segment == PURGE_SEGMENT:
        return Route("purge")
    return Route("delete", segment)


def _lenient(raw_path: str) -> Route:
    """Route as a careless Rails-like server that normalises paths, round after round.

    It percent-decodes the whole path (so ``%2F`` becomes a separator), applies NFKC, drops
    format (Cf) characters, reads ``\\`` as ``/`` and resolves dot-segments, until that changes
    nothing; then, in the id, it drops ``;params``, trailing dots, slashes and whitespace, and a
    format suffix (``.json``, any ``.ext``), and starts again until the id is stable. The id is
    the purge if its case folding or upper case is the purge word's; an empty id (the
    collection itself, which a REST-minded server deletes whole) is the purge too.
    """
    path = raw_path
    for _ in range(_LENIENT_ROUNDS):
        decoded = _resolve_dot_segments(
            _drop_format_chars(normalize("NFKC", unquote(path))).replace("\\", "/")
        )
        if decoded != path:
            path = decoded
            continue
        if path.rstrip("/") == API_PREFIX.rstrip("/"):
            return Route("purge")
        if not path.startswith(API_PREFIX):
            return Route("error", status=404, message="no such endpoint")
        entry_id = path[len(API_PREFIX) :].partition(";")[0].rstrip("./ \t\r\n")
        entry_id = _FORMAT_SUFFIX.sub("", entry_id)
        if API_PREFIX + entry_id == path:
            break
        path = API_PREFIX + entry_id
    else:
        return Route("error", status=400, message="the path is encoded too many times")
    if not entry_id or _is_purge_word(entry_id):
        return Route("purge")
    return Route("delete", entry_id)


def _is_purge_word(text: str) -> bool:
    return text.casefold() == PURGE_SEGMENT.casefold() or text.upper() == PURGE_SEGMENT.upper()


def _drop_format_chars(text: str) -> str:
    return "".join(ch for ch in text if category(ch) != "Cf")


def _resolve_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4, so ``/a/b/../c`` is ``/a/c``, keeping a trailing ``/``."""
    kept: list[str] = []
    segments = path.split("/")
    for segment in segments:
        if segment == "..":
            if len(kept) > 1:
                kept.pop()
        elif segment != ".":
            kept.append(segment)
    if segments[-1] in (".", ".."):
        kept.append("")
    return "/".join(kept)


_FORMAT_SUFFIX = re.compile(r"\.[^./]*$")
_LENIENT_ROUNDS = 50
