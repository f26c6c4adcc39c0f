"""Faults the sandbox can inject, and what each one puts on the wire.

A fault either answers in place of the service (nothing done), or lets the service act first
and then garbles, delays or drops the answer ("applied"): the cases where a client must not
claim a failure it cannot prove.
"""

from __future__ import annotations

import gzip
import json
import threading
from dataclasses import dataclass
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from ..models.codes import MESSAGES

if TYPE_CHECKING:
    from .handler import Handler


METHODS = ("GET", "POST", "PUT", "DELETE")
ANSWERS_INSTEAD = frozenset(
    {"status", "coded", "non_json", "no_status", "other_status", "html", "huge", "deep_json"}
    | {"redirect", "drop_before"}
)
"""The kinds that answer in place of the service; every other kind lets it act first."""

FAULT_KINDS = {
    "status": "answer `status` (a failure without code, optional Retry-After); nothing done",
    "coded": "answer `status` with the vendor's error `code` and its message (or `message`; "
    "optional Retry-After); nothing done",
    "non_json": "answer 200 with a plain-text body; nothing done",
    "no_status": "answer 200 with JSON that has no status; nothing done",
    "other_status": "answer 200 with JSON status 'deleted'; nothing done",
    "html": "answer 500 with an HTML error page; nothing done",
    "huge": "answer 200 with a 1 MiB body; nothing done",
    "deep_json": "answer 200 with JSON nested 50,000 levels deep; nothing done",
    "redirect": "answer 307 pointing at `location`; nothing done",
    "drop_before": "reset the connection before reading the request; nothing done",
    "drip": "act, then send the body one byte every `delay` seconds",
    "drop_after": "act, then reset the connection without answering",
    "hang": "act, then wait `delay` seconds before answering",
    "gzip": "act, and gzip the answer if the request accepts gzip",
    "bom": "act, then answer with a UTF-8 byte order mark before the JSON",
    "gzip_forced": "act, then gzip the answer whatever the request accepts",
    "utf16": "act, then answer JSON in UTF-16 with a BOM (charset=utf-16)",
    "truncated": "act, then promise a longer body than is sent, and close",
    "empty_204": "act, then answer 204 with no body",
    "close_mid_headers": "act, then send 'HTTP/1.1 200 OK\\r\\nContent-Ty' and close",
    "drip_headers": "act, then send the head one byte every `delay` seconds, then the body",
    "continue_flood": "act, then send '100 Continue' every `delay` seconds until the client "
    "hangs up or the sandbox stops; never a final answer",
    "malformed_listing": "GET only: a success listing in which one entry lacks toText and one "
    "has a numeric fromText",
}


@dataclass
class Fault:
    """One injected fault, for the next ``remaining`` requests (of ``method``, or of any)."""

    kind: str
    remaining: int = 1
    status: int = 503
    retry_after: str | None = None
    delay: float = 0.5
    location: str = ""
    method: str | None = None
    code: int | None = None
    message: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {self.kind!r}; one of {', '.join(FAULT_KINDS)}")
        if self.method is not None:
            self.method = self.method.upper()
            if self.method not in METHODS:
                raise ValueError(f"unknown method {self.method!r}; one of {', '.join(METHODS)}")
        if self.kind == "malformed_listing":
            if self.method not in (None, "GET"):
                raise ValueError(f"fault {self.kind!r} applies to GET only")
            self.method = "GET"
        if self.kind == "coded" and self.code is None:
            raise ValueError("fault 'coded' needs the vendor's error code (code=40103, say)")
        if self.retry_after is not None:
            self.retry_after = str(self.retry_after)

    @property
    def applied(self) -> bool:
        """Whether the sandbox acts on the request before the fault takes over."""
        return self.kind not in ANSWERS_INSTEAD


class FaultQueue:
    """Pending faults, met in the order injected by the requests they apply to."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []

    def add(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def take(self, method: str, kind: str | None = None) -> Fault | None:
        """The first pending fault for ``method`` (if it is of ``kind``), counted as met."""
        with self._lock:
            fault = next((f for f in self._faults if f.method in (None, method)), None)
            if fault is None or kind not in (None, fault.kind):
                return None
            fault.remaining -= 1
            if fault.remaining <= 0:
                self._faults.remove(fault)
            return fault


def _head(code: int, length: int, **headers: str) -> bytes:
    lines = [f"HTTP/1.1 {code} {HTTPStatus(code).phrase}", "Content-Type: application/json"]
    lines += [f"Content-Length: {length}"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _drip(h: Handler, delay: float, data: bytes) -> bool:
    for byte in data:
        if not h.pause(delay):
            return False
        h.write(bytes([byte]))
    return True


def write_fault(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    """Answer (or not) as ``f`` says; ``code`` and ``data`` are the service's own answer when
    the fault is applied."""
    body = json.dumps(data, ensure_ascii=False).encode("utf-8")
    retry = {"Retry-After": f.retry_after} if f.retry_after is not None else {}
    match f.kind:
        case "status":
            message = f.message if f.message is not None else "injected fault"
            h.send_json(f.status, {"status": "failure", "message": message}, retry)
        case "coded":
            assert f.code is not None
            message = f.message if f.message is not None else MESSAGES.get(f.code, "")
            error = {"code": f.code, "message": message}
            h.send_json(f.status, {"status": "failure", "data": error}, retry)
        case "non_json":
            h.send(200, b"OK, deleted.", "text/plain")
        case "no_status" | "other_status":
            h.send_json(200, {"result": "ok"} if f.kind == "no_status" else {"status": "deleted"})
        case "html":
            h.send(
                500, b"<html><body><h1>500 Internal Server Error</h1></body></html>", "text/html"
            )
        case "huge":
            h.send(
                200,
                b'{"status": "success", "pad": "' + b"x" * (1 << 20) + b'"}',
                "application/json",
            )
        case "deep_json":
            h.send(200, b"[" * 50_000, "application/json")
        case "redirect":
            h.send(307, b"", "text/plain", {"Location": f.location})
        case "drop_before" | "drop_after":
            h.reset()
        case "hang":
            if h.pause(f.delay):
                h.send_json(code, data)
        case "gzip" | "gzip_forced":
            if f.kind == "gzip" and "gzip" not in (h.headers.get("Accept-Encoding") or ""):
                return h.send_json(code, data)
            h.send(code, gzip.compress(body), "application/json", {"Content-Encoding": "gzip"})
        case "bom":
            h.send(code, b"\xef\xbb\xbf" + body, "application/json")
        case "utf16":
            utf16 = json.dumps(data, ensure_ascii=False).encode("utf-16")
            h.send(code, utf16, "application/json; charset=utf-16")
        case "truncated":
            h.write(_head(code, len(body) + 100) + body)
            h.close_connection = True
        case "empty_204":
            h.write(b"HTTP/1.1 204 No Content\r\n\r\n")
        case "close_mid_headers":
            h.write(b"HTTP/1.1 200 OK\r\nContent-Ty")
            h.close_connection = True
        case "drip":
            h.write(_head(code, len(body)))
            _drip(h, f.delay, body)
        case "drip_headers":
            if _drip(h, f.delay, _head(code, len(body))):
                h.write(body)
        case "continue_flood":
            h.close_connection = True
            while True:
                h.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                if not h.pause(f.delay, until_hangup=True):
                    return
        case "malformed_listing":
            shape = data.get("data", data)  # the listing's entries: under data or at the top
            entries = [dict(e) for e in shape["entries"]]
            filler = {"fromLang": "en", "fromText": "filler", "toLang": "de", "toText": "Füllwort"}
            entries += [{"id": f"malformed-{n}", **filler} for n in range(len(entries), 2)]
            del entries[0]["toText"]
            entries[1]["fromText"] = 12345
            shape["entries"] = entries
            h.send_json(200, data)
