"""What the sandbox refuses, in the vendor's shape, and the request bodies it reads.

A coded refusal is ``{"status": "failure", "data": {"code", "message"}}``. The vendor does not
document the HTTP status that comes with it, so the sandbox sends a plausible one (401
credentials and nonces, 400 data, 429 the frequency limit): a client must judge by the code.
"""

from __future__ import annotations

import json
from typing import Any

from ..models import codes
from ..models.terms import entry_problems

__all__ = ["TERM_FIELDS", "Rejected", "coded", "parse_json", "parse_terms", "parse_token_request"]

TERM_FIELDS = ("fromLang", "fromText", "toLang", "toText")


class Rejected(Exception):
    """A request the sandbox refuses: HTTP status, message, and the vendor's code if any."""

    def __init__(self, status: int, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.code = status, message, code

    def body(self) -> dict[str, Any]:
        data: dict[str, Any] = {"message": self.message}
        if self.code is not None:
            data = {"code": self.code, **data}
        return {"status": "failure", "data": data}


def coded(code: int, detail: str = "") -> Rejected:
    """A refusal with a documented ``code``: the vendor's words, then ``: detail``."""
    status = 429 if code == codes.FREQUENCY_LIMIT else 400 if code in codes.DATA_CODES else 401
    return Rejected(status, codes.MESSAGES[code] + (f": {detail}" if detail else ""), code)


def parse_json(body: bytes, kind: type = dict) -> Any:
    """The body's JSON value, which must be a ``kind`` (40202 / 40201 otherwise)."""
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise coded(codes.INVALID_PARAMETERS, "the body must be JSON in UTF-8") from None
    if not isinstance(data, kind):
        what = "an object" if kind is dict else "an array of entries"
        raise coded(codes.INVALID_TYPE, f"the body must be a JSON {what}")
    return data


def _terms(data: Any, where: str = "") -> tuple[str, str, str, str]:
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
    terms = tuple(data[name] for name in TERM_FIELDS)
    # Hidden characters are the client's worry (lint); the vendor refuses these three.
    for problem in entry_problems(*terms):
        if problem.kind in ("empty", "too-long", "bad-language"):
            raise coded(codes.INVALID_PARAMETERS, where + problem.message)
    return terms  # type: ignore[return-value]


def parse_terms(body: bytes, bulk: bool = False) -> list[tuple[str, str, str, str]]:
    """A POST or PUT body's terms (a bulk POST's array: all valid, or the refusal naming the
    first bad item, so nothing is added)."""
    if not bulk:
        return [_terms(parse_json(body, object))]
    items = parse_json(body, list)
    if not items:
        raise coded(codes.MISSING_ARGUMENT, "the array holds no entry")
    return [_terms(item, f"item {n} of {len(items)}: ") for n, item in enumerate(items, 1)]


def parse_token_request(body: bytes) -> tuple[str, str, int | None]:
    """``accessKey``, ``secretKey`` and ``duration`` (``None`` when absent)."""
    data = parse_json(body)
    missing = [name for name in ("accessKey", "secretKey") if not data.get(name)]
    if missing:
        raise coded(codes.MISSING_ARGUMENT, ", ".join(missing))
    if not isinstance(data["accessKey"], str) or not isinstance(data["secretKey"], str):
        raise coded(codes.INVALID_TYPE, "accessKey and secretKey must be text")
    duration = data.get("duration")
    if duration is not None and (type(duration) is not int or duration <= 0):
        raise coded(codes.INVALID_TYPE, "duration must be a positive whole number of seconds")
    return data["accessKey"], data["secretKey"], duration
