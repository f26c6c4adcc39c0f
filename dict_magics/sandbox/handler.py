"""The sandbox's HTTP side: what a request asks for, whether the service would take it, and
the bytes of the answer (faults write through the same few methods)."""

from __future__ import annotations

import json
import select
import socket
import ssl
import struct
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from ..models import Entry
from .faults import Fault, write_fault
from .router import route
from .store import EntryStore

if TYPE_CHECKING:
    from .tls import SandboxTLS

__all__ = ["COLLECTION_PATH", "Handler", "Server"]

COLLECTION_PATH = "/api/v1/dictionary"
"""The GET (listing) and POST (add) endpoint."""
MAX_POST_BODY = 64 * 1024
TERM_FIELDS = ("fromLang", "fromText", "toLang", "toText")


class _Rejected(Exception):
    """A request the service refuses: HTTP status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


@dataclass
class _Operation:
    """What a request asks for, once it has passed every check; ``run()`` does it."""

    name: str
    entry_id: str | None = None
    body: bytes = b""
    terms: dict[str, str] | None = None

    def run(self, store: EntryStore) -> tuple[int, dict[str, Any], Entry | None]:
        """HTTP status, the service's JSON answer, and the entry added or deleted."""
        if self.name == "list":
            return 200, {"status": "success", "data": {"entries": store.listing()}}, None
        if self.name == "add":
            assert self.terms is not None
            entry = store.add(*(self.terms[name] for name in TERM_FIELDS))
            return 200, {"status": "success"}, entry
        if self.name == "purge":
            count = store.purge()
            return 200, {"status": "success", "message": f"deleted {count} entries"}, None
        assert self.entry_id is not None
        entry = store.delete(self.entry_id)
        if entry is None:
            return 404, {"status": "failure", "message": "no such entry"}, None
        return 200, {"status": "success"}, entry


def _parse_terms(body: bytes) -> dict[str, str]:
    """The POST body's four terms, or ``_Rejected`` saying what is wrong with it."""
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise _Rejected(400, "the body must be JSON in UTF-8") from None
    if not isinstance(data, dict):
        raise _Rejected(400, "the body must be a JSON object")
    missing = [name for name in TERM_FIELDS if name not in data]
    extra = sorted(set(data) - set(TERM_FIELDS))
    if missing or extra:
        wrong = [f"missing {', '.join(missing)}"] * bool(missing)
        wrong += [f"unexpected {', '.join(extra)}"] * bool(extra)
        needs = ", ".join(TERM_FIELDS)
        raise _Rejected(400, f"the body needs exactly {needs}: {'; '.join(wrong)}")
    for name in TERM_FIELDS:
        if not isinstance(data[name], str) or not data[name].strip():
            raise _Rejected(400, f"{name} must be non-empty text")
    return data


class Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    # A batch's workers all connect at once; with the default backlog of 5 a busy machine drops
    # the extra SYNs and those connections wait out the kernel's 1 s retransmission timeout.
    request_queue_size = 128
    sandbox: Any
    """The ``server.SandboxServer`` this server belongs to (it imports this module)."""
    tls: SandboxTLS | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self.accepted = 0
        super().__init__(*args, **kwargs)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        if self.tls is not None:
            try:
                request = self.tls.wrap(request)  # no I/O: the handshake is the handler's
            except OSError:
                self.shutdown_request(request)
                return
        with self._connections_lock:
            self._connections.add(request)
            self.accepted += 1
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._connections_lock:
                self._connections.discard(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up, or fails or stalls its TLS handshake, is part of the game
        (timeouts, faults, untrusted certificates); anything else is not."""
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, ssl.SSLError, TimeoutError)):
            super().handle_error(request, client_address)

    def close_connections(self) -> None:
        with self._connections_lock:
            for conn in list(self._connections):
                try:
                    # socket.socket's own shutdown: SSLSocket.shutdown would also drop its TLS
                    # state under the feet of the thread still reading from it.
                    socket.socket.shutdown(conn, socket.SHUT_RDWR)
                except OSError:
                    pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: Server
    server_version = "dict-magics-sandbox"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr log: the sandbox keeps its own."""

    def setup(self) -> None:
        """Shake hands first when serving TLS: here, on this connection's own thread, a slow
        or broken client holds up no one else."""
        if self.server.tls is not None:
            self.server.tls.handshake(self.request)
        super().setup()

    # -- writing (also what faults.py writes with) -----------------------------------------

    def write(self, data: bytes) -> None:
        self.wfile.write(data)

    def send(
        self, code: int, body: bytes, content_type: str, extra: dict[str, str] | None = None
    ) -> None:
        head = [f"HTTP/1.1 {code} {self.responses.get(code, ('',))[0]}"]
        head += [f"Content-Type: {content_type}", f"Content-Length: {len(body)}"]
        head += [f"{k}: {v}" for k, v in (extra or {}).items()]
        self.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)

    def send_json(self, code: int, data: dict[str, Any], extra: dict[str, str] | None = None):
        self.send(code, json.dumps(data, ensure_ascii=False).encode(), "application/json", extra)

    def reset(self) -> None:
        """Close with a reset, so the client sees the connection die with no answer."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass

    def running(self) -> bool:
        return self.server.sandbox._server is self.server

    def pause(self, seconds: float, *, until_hangup: bool = False) -> bool:
        """Wait ``seconds``; False (at once) when the sandbox stops or, with ``until_hangup``,
        when the client hangs up: the caller then gives up on its answer."""
        end = time.monotonic() + seconds
        while self.running():
            left = end - time.monotonic()
            if left <= 0:
                return True
            if not until_hangup:
                time.sleep(min(0.05, left))
            elif select.select([self.connection], [], [], min(0.05, left))[0]:
                if self._hung_up():
                    return False
                time.sleep(min(0.05, left))  # it sent something more: ignore it
        return False

    def _hung_up(self) -> bool:
        """Whether the client closed its side (asked once the connection reads as ready)."""
        try:
            if isinstance(self.connection, ssl.SSLSocket):
                # TLS cannot peek: read. A close or close_notify reads as b""; other bytes are
                # dropped, which is fine for the one caller, a connection about to close.
                return not self.connection.recv(1)
            return not self.connection.recv(1, socket.MSG_PEEK)
        except OSError:
            return True

    # -- reading ---------------------------------------------------------------------------

    def _not_allowed(self) -> None:
        self._body_read = False
        if not self.server.sandbox._admitted():
            return self._rate_limited()
        self._refuse(_Rejected(405, f"method {self.command} not allowed"))

    do_PUT = do_PATCH = do_HEAD = _not_allowed

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def _refuse(
        self,
        problem: _Rejected,
        entry_id: str | None = None,
        operation: str = "rejected",
        extra: dict[str, str] | None = None,
    ) -> None:
        self.server.sandbox._log(self, operation, problem.status, problem.message, entry_id)
        extra = dict(extra or {})
        if not self._skip_body():
            # Its body is still unread: the connection cannot carry another request.
            self.close_connection = True
            extra["Connection"] = "close"
        self.send_json(problem.status, {"status": "failure", "message": problem.message}, extra)

    def _rate_limited(self) -> None:
        """Answer 429 with ``Retry-After``, as the service does over its rate limit; the
        request is not acted on (and meets no fault)."""
        wait = str(self.server.sandbox.retry_after)
        problem = _Rejected(429, f"rate limit exceeded: retry after {wait} s")
        self._refuse(problem, self._named_entry(), "rate_limited", {"Retry-After": wait})

    def _named_entry(self) -> str | None:
        """The entry a DELETE's path names, if any: for the log of a request not looked at."""
        raw_path, query_mark, _ = self.path.partition("?")
        if self.command != "DELETE" or query_mark:
            return None
        return route(raw_path, self.server.sandbox.router).entry_id

    def _handle(self) -> None:
        sandbox = self.server.sandbox
        self._body_read = False
        while not sandbox._open.wait(0.05):
            if not self.running():
                return
        if not sandbox._admitted():
            if sandbox.latency:
                time.sleep(sandbox.latency)
            return self._rate_limited()
        fault = sandbox._faults.take(self.command)
        if fault is not None and fault.kind == "drop_before":
            sandbox._log(self, "dropped", None, "connection dropped before reading")
            self.reset()
            return
        if sandbox.latency:
            time.sleep(sandbox.latency)
        operation = _Operation("rejected")
        try:
            operation = self._operation()
            problem = sandbox._check_auth(self)
            if problem is not None:
                raise _Rejected(401, problem)
            if operation.name == "add":
                operation.terms = _parse_terms(operation.body)
        except _Rejected as problem:
            return self._refuse(problem, operation.entry_id)
        if fault is not None:
            return self._fault(fault, operation)
        code, data, entry = operation.run(sandbox._store)
        logged_id = self._logged_id(operation, entry)
        sandbox._log(self, operation.name, code, data["status"], logged_id, entry)
        self.send_json(code, data)

    @staticmethod
    def _logged_id(operation: _Operation, entry: Entry | None) -> str | None:
        return entry.id if operation.name == "add" and entry else operation.entry_id

    def _operation(self) -> _Operation:
        """What the request asks for, checking everything but authentication and the POST
        body's terms; ``_Rejected`` if it cannot be what the service serves."""
        raw_path, query_mark, _ = self.path.partition("?")
        if self.command != "DELETE":
            if raw_path != COLLECTION_PATH:
                raise _Rejected(405, f"method {self.command} not allowed")
            if self.command == "GET" and not self.server.sandbox.listing:
                raise _Rejected(404, "no such endpoint")
        if query_mark:
            raise _Rejected(400, "no query string is allowed")
        if self.command == "POST":
            return _Operation("add", body=self._read_body())
        if self._has_body():
            raise _Rejected(400, "no request body is allowed")
        if self.command == "GET":
            return _Operation("list")
        where = route(raw_path, self.server.sandbox.router)
        if where.kind == "error":
            raise _Rejected(where.status, where.message)
        return _Operation("purge" if where.entry_id is None else "delete", where.entry_id)

    def _has_body(self) -> bool:
        length = (self.headers.get("Content-Length") or "0").strip()
        return bool(self.headers.get("Transfer-Encoding")) or length != "0"

    def _framed_length(self) -> int | None:
        """The body's length when a Content-Length alone frames it and it is small enough."""
        if self.headers.get("Transfer-Encoding"):
            return None
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            return None
        return length if 0 <= length <= MAX_POST_BODY else None

    def _read_body(self) -> bytes:
        length = self._framed_length()
        if length is None:
            raise _Rejected(400, f"send the body with a Content-Length, {MAX_POST_BODY} at most")
        self._body_read = True
        return self.rfile.read(length)

    def _skip_body(self) -> bool:
        """Drop a refused request's unread body, if it can be; False when the stream cannot
        be brought back in step."""
        if self._body_read or not self._has_body():
            return True
        length = self._framed_length()
        if length is not None:
            self._read_body()
        return length is not None

    def _fault(self, fault: Fault, operation: _Operation) -> None:
        sandbox = self.server.sandbox
        code: int | None = None
        data: dict[str, Any] = {}
        entry = None
        if fault.applied:
            code, data, entry = operation.run(sandbox._store)
        outcome = f"fault {fault.kind}" + (" (applied)" if fault.applied else "")
        sandbox._log(self, operation.name, code, outcome, self._logged_id(operation, entry), entry)
        write_fault(self, fault, code or 200, data)
