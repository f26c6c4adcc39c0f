"""Faults the sandbox can inject, and what each one puts on the wire.

A fault either answers in place of the service (nothing done), or lets the service act first
and then garbles, delays or drops the answer ("applied"): the cases where a client must not
claim a failure it cannot prove.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Protocol


class Handler(Protocol):
    """What a fault writes through: the few methods of ``handler.Handler`` it uses (a protocol
    here, so the handler imports the faults and not the other way round)."""

    close_connection: bool
    headers: Any

    def pause(self, seconds: float, *, until_hangup: bool = False) -> bool: ...
    def reset(self) -> None: ...
    def send(
        self, code: int, body: bytes, content_type: str, extra: dict[str, str] | None = None
    ) -> None: ...
    def send_json(
        self, code: int, data: dict[str, Any], extra: dict[str, str] | None = None
    ) -> None: ...
    def write(self, data: bytes) -> None: ...


__all__ = ["APPLIED", "FAULT_KINDS", "METHODS", "Fault", "FaultQueue", "make_fault", "write_fault"]

METHODS = ("GET", "POST", "PUT", "DELETE")

FAULT_KINDS = {
    "status": "answer with `status` (JSON failure body with `message`, no code; optional "
    "Retry-After); nothing done",
    "coded": "answer HTTP `status` with the vendor's error `code` and its documented message "
    "(`message` instead, when given; optional Retry-After); nothing done",
    "non_json": "answer 200 with a plain-text body; nothing done",
    "no_status": "answer 200 with JSON that has no status; nothing done",
    "other_status": "answer 200 with JSON status 'deleted'; nothing done",
    "html": "answer 500 with an HTML error page; nothing done",
    "huge": "answer 200 with a 1 MiB body; nothing done",
    "deep_json": "answer 200 with JSON nested 50,000 levels deep; nothing done",
    "redirect": "answer 307 pointing at `location`; nothing done",
    "drop_before": "close the connection (reset) without acting on the request; nothing done",
    "drip": "act, then send the answer's body one byte every `delay` seconds",
    "drop_after": "act, then close the connection (reset) without answering",
    "hang": "act, then wait `delay` seconds before answering",
    "gzip": "act, and gzip the answer if the request accepts gzip",
    "bom": "act, then answer with a UTF-8 byte order mark before the JSON",
    "gzip_forced": "act, then gzip the answer (Content-Encoding: gzip) whatever the request "
    "accepts",
    "utf16": "act, then answer JSON in UTF-16 with a BOM (Content-Type: application/json; "
    "charset=utf-16)",
    "truncated": "act, then send a Content-Length larger than the body sent, and close",
    "empty_204": "act, then answer 204 with no body",
    "close_mid_headers": "act, then send 'HTTP/1.1 200 OK\\r\\nContent-Ty' and close",
    "drip_headers": "act, then send the status line and headers one byte every `delay` seconds, "
    "then the body",
    "continue_flood": "act, then send 'HTTP/1.1 100 Continue' every `delay` seconds until the "
    "client hangs up or the sandbox stops; never a final answer",
    "malformed_listing": "GET only: a 200 success listing in which one entry lacks toText and "
    "one has a numeric fromText",
}

APPLIED = frozenset(
    {
        "drip",
        "drop_after",
        "hang",
        "gzip",
        "bom",
        "gzip_forced",
        "utf16",
        "truncated",
        "empty_204",
        "close_mid_headers",
        "drip_headers",
        "continue_flood",
        "malformed_listing",
    }
)
"""The kinds for which the sandbox performs the operation before the fault takes over."""

_GET_ONLY = frozenset({"malformed_listing"})


@dataclass
class Fault:
    """One injected fault, for the next ``remaining`` requests (of ``method``, or of any)."""

    kind: str
    remaining: int
    status: int = 503
    retry_after: str | None = None
    delay: float = 0.5
    location: str = ""
    method: str | None = None
    code: int | None = None
    message: str | None = None

    @property
    def applied(self) -> bool:
        return self.kind in APPLIED


def make_fault(
    kind: str,
    count: int = 1,
    *,
    status: int = 503,
    retry_after: str | int | float | None = None,
    delay: float = 0.5,
    location: str = "",
    method: str | None = None,
    code: int | None = None,
    message: str | None = None,
) -> Fault:
    """A checked ``Fault``: a known kind, a known method, and a GET-only kind only for GET."""
    if kind not in FAULT_KINDS:
        raise ValueError(f"unknown fault {kind!r}; one of {', '.join(FAULT_KINDS)}")
    if method is not None:
        method = method.upper()
        if method not in METHODS:
            raise ValueError(f"unknown method {method!r}; one of {', '.join(METHODS)}")
    if kind in _GET_ONLY:
        if method not in (None, "GET"):
            raise ValueError(f"fault {kind!r} applies to GET only")
        method = "GET"
    if kind == "coded" and code is None:
        raise ValueError("fault 'coded' needs the vendor's error code (code=40103, say)")
    retry = None if retry_after is None else str(retry_after)
    return Fault(kind, count, status, retry, delay, location, method, code, message)


class FaultQueue:
    """Pending faults, met in the order injected by the requests they apply to."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: deque[Fault] = deque()

    def add(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def peek(self, method: str) -> Fault | None:
        """The first pending fault for ``method``, not counted as met."""
        with self._lock:
            return next((f for f in self._faults if f.method in (None, method)), None)

    def take(self, method: str) -> Fault | None:
        """The first pending fault for ``method``, counted as met once."""
        with self._lock:
            for fault in self._faults:
                if fault.method in (None, method):
                    fault.remaining -= 1
                    if fault.remaining <= 0:
                        self._faults.remove(fault)
                    return fault
            return None


def _body(data: dict[str, Any]) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


def _head(code: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {code} {HTTPStatus(code).phrase}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _status(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    extra = {"Retry-After": f.retry_after} if f.retry_after is not None else {}
    message = f.message if f.message is not None else "injected fault"
    h.send_json(f.status, {"status": "failure", "message": message}, extra)


def _non_json(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    h.send(200, b"OK, deleted.", "text/plain")


def _no_status(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    h.send_json(200, {"result": "ok"})


def _other_status(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    h.send_json(200, {"status": "deleted"})


def _html(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    h.send(500, b"<html><body><h1>500 Internal Server Error</h1></body></html>", "text/html")


def _huge(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    h.send(200, b'{"status": "success", "pad": "' + b"x" * (1 << 20) + b'"}', "application/json")


def _deep_json(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    h.send(200, b"[" * 50_000, "application/json")


def _redirect(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    h.send(307, b"", "text/plain", {"Location": f.location})


def _drop(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    h.reset()


def _hang(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    if h.pause(f.delay):
        h.send_json(code, data)


def _gzip(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    if "gzip" in (h.headers.get("Accept-Encoding") or ""):
        _gzip_forced(h, f, code, data)
    else:
        h.send_json(code, data)


def _gzip_forced(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    h.send(code, gzip.compress(_body(data)), "application/json", {"Content-Encoding": "gzip"})


def _bom(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    h.send(code, b"\xef\xbb\xbf" + _body(data), "application/json")


def _utf16(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    body = json.dumps(data, ensure_ascii=False).encode("utf-16")
    h.send(code, body, "application/json; charset=utf-16")


def _truncated(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    body = _body(data)
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body) + 100)}
    h.write(_head(code, headers) + body)
    h.close_connection = True


def _empty_204(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    h.write(b"HTTP/1.1 204 No Content\r\n\r\n")


def _close_mid_headers(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    h.write(b"HTTP/1.1 200 OK\r\nContent-Ty")
    h.close_connection = True


def _drip(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    body = _body(data)
    h.write(_head(code, {"Content-Type": "application/json", "Content-Length": str(len(body))}))
    for byte in body:
        if not h.pause(f.delay):
            return
        h.write(bytes([byte]))


def _drip_headers(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    body = _body(data)
    head = _head(code, {"Content-Type": "application/json", "Content-Length": str(len(body))})
    for byte in head:
        if not h.pause(f.delay):
            return
        h.write(bytes([byte]))
    h.write(body)


def _continue_flood(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    h.close_connection = True
    while True:
        h.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        if not h.pause(f.delay, until_hangup=True):
            return


_FILLER = {"fromLang": "en", "fromText": "filler", "toLang": "de", "toText": "Füllwort"}


def _coded(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    from ..models.codes import MESSAGES

    assert f.code is not None
    extra = {"Retry-After": f.retry_after} if f.retry_after is not None else {}
    message = f.message if f.message is not None else MESSAGES.get(f.code, "")
    h.send_json(
        f.status, {"status": "failure", "data": {"code": f.code, "message": message}}, extra
    )


def _malformed_listing(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    entries = [dict(e) for e in data["data"]["entries"]]
    for n in range(len(entries), 2):  # too few entries to garble: garble made-up ones
        entries.append({"id": f"malformed-{n}", **_FILLER})
    del entries[0]["toText"]
    entries[1]["fromText"] = 12345
    h.send_json(200, {"status": "success", "data": {"entries": entries}})


_WRITERS: dict[str, Callable[[Handler, Fault, int, dict[str, Any]], None]] = {
    "status": _status,
    "coded": _coded,
    "non_json": _non_json,
    "no_status": _no_status,
    "other_status": _other_status,
    "html": _html,
    "huge": _huge,
    "deep_json": _deep_json,
    "redirect": _redirect,
    "drop_before": _drop,
    "drip": _drip,
    "drop_after": _drop,
    "hang": _hang,
    "gzip": _gzip,
    "bom": _bom,
    "gzip_forced": _gzip_forced,
    "utf16": _utf16,
    "truncated": _truncated,
    "empty_204": _empty_204,
    "close_mid_headers": _close_mid_headers,
    "drip_headers": _drip_headers,
    "continue_flood": _continue_flood,
    "malformed_listing": _malformed_listing,
}


def write_fault(handler: Handler, fault: Fault, code: int, data: dict[str, Any]) -> None:
    """Answer (or not) as ``fault`` says; ``code`` and ``data`` are the operation's own answer
    when the fault is applied."""
    _WRITERS[fault.kind](handler, fault, code, data)
