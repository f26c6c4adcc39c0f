"""How the sandbox maps a DELETE path to "delete entry X" or "delete everything".

``strict`` routes as the service's contract says: exactly one percent-decoded segment after the
prefix, and only the exact segment ``dictionary-all`` is the purge. ``lenient`` routes as a
careless real-world server does (format suffixes, repeated decoding, Unicode normalisation, case
folding, dot-segments), so the tests can prove that no id the client sends reaches the purge even
there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote

from ..service.paths import API_PREFIX, PURGE_SEGMENT

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
    """Not written yet: routes strictly."""
    return _strict(raw_path)
