"""What the sandbox refuses, in the vendor's shape, and the request bodies it reads.

A refusal with a documented code answers ``{"status": "failure", "data": {"code", "message"}}``
(the vendor's words, then ``: <detail>`` when the sandbox can say more). The vendor does not
document the HTTP status of these answers; the sandbox sends a plausible one (``http_status``)
unless told to send one status for all (``SandboxServer(coded_status=200)``), so tests prove that
the client judges by the code.
"""

from __future__ import annotations

import json
from typing import Any

from ..models import codes
from ..models.terms import entry_problems

__all__ = [
    "TERM_FIELDS",
    "Rejected",
    "coded",
    "http_status",
    "parse_bulk",
    "parse_terms",
    "parse_token_request",
]

TERM_FIELDS = ("fromLang", "fromText", "toLang", "toText")


def http_status(code: int) -> int:
    """The sandbox's default HTTP status for a coded error: 429 for the frequency limit, 400
    for the caller's data, 401 for the rest (credentials and nonces)."""
    if code == codes.FREQUENCY_LIMIT:
        return 429
    if code in codes.DATA_CODES:
        return 400
    return 401


class Rejected(Exception):
    """A request the sandbox refuses: HTTP status, message, and the vendor's code if any."""

    def __init__(self, status: int, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.code = status, message, code

    def body(self) -> dict[str, Any]:
        """The JSON answer: the vendor's shape (with or without a code)."""
        data: dict[str, Any] = {"message": self.message}
        if self.code is not None:
            data = {"code": self.code, **data}
        return {"status": "failure", "data": data}


def coded(code: int, detail: str = "") -> Rejected:
    """A refusal with a documented ``code``: the vendor's words, and ``detail`` after them."""
    message = codes.MESSAGES[code] + (f": {detail}" if detail else "")
    return Rejected(http_status(code), message, code)


def _json(body: bytes) -> Any:
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise coded(codes.INVALID_PARAMETERS, "the body must be JSON in UTF-8") from None


def _terms(data: Any, where: str = "") -> dict[str, str]:
    """Four valid terms from one JSON object, or the coded refusal saying what is wrong."""
    if not isinstance(data, dict):
        raise coded(codes.INVALID_TYPE, f"{where}must be a JSON object")
    missing = [name for name in TERM_FIELDS if name not in data]
    if missing:
        raise coded(codes.MISSING_ARGUMENT, f"{where}{', '.join(missing)}")
    extra = sorted(set(data) - set(TERM_FIELDS))
    if extra:
        raise coded(codes.INVALID_PARAMETERS, f"{where}unexpected {', '.join(extra)}")
    for name in TERM_FIELDS:
        if not isinstance(data[name], str):
            raise coded(codes.INVALID_TYPE, f"{where}{name} must be text")
    # Hidden characters are the client's worry (lint); the vendor refuses these three.
    for problem in entry_problems(*(data[name] for name in TERM_FIELDS)):
        if problem.kind in ("empty", "too-long", "bad-language"):
            raise coded(codes.INVALID_PARAMETERS, where + problem.message)
    return {name: data[name] for name in TERM_FIELDS}


def parse_terms(body: bytes) -> dict[str, str]:
    """A POST or PUT body's four terms, or the coded refusal saying what is wrong with it."""
    return _terms(_json(body))


def parse_bulk(body: bytes) -> list[dict[str, str]]:
    """A bulk POST's entries: all valid, or the refusal naming the first bad one (nothing is
    added then: all or nothing)."""
    data = _json(body)
    if not isinstance(data, list):
        raise coded(codes.INVALID_TYPE, "the body must be a JSON array of entries")
    if not data:
        raise coded(codes.MISSING_ARGUMENT, "the array holds no entry")
    return [_terms(item, f"item {n} of {len(data)}: ") for n, item in enumerate(data, 1)]


def parse_token_request(body: bytes) -> tuple[str, str, Any]:
    """``accessKey``, ``secretKey`` and ``duration`` (``None`` when absent) of a token
    request."""
    data = _json(body)
    if not isinstance(data, dict):
        raise coded(codes.INVALID_TYPE, "the body must be a JSON object")
    missing = [name for name in ("accessKey", "secretKey") if not data.get(name)]
    if missing:
        raise coded(codes.MISSING_ARGUMENT, ", ".join(missing))
    if not isinstance(data["accessKey"], str) or not isinstance(data["secretKey"], str):
        raise coded(codes.INVALID_TYPE, "accessKey and secretKey must be text")
    duration = data.get("duration")
    if duration is not None and (
        isinstance(duration, bool) or not isinstance(duration, int) or duration <= 0
    ):
        raise coded(codes.INVALID_TYPE, "duration must be a positive whole number of seconds")
    return data["accessKey"], data["secretKey"], duration
