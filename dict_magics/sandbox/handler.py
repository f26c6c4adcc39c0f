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
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from ..models import Entry
from .bodies import TERM_FIELDS, Rejected, parse_bulk, parse_terms, parse_token_request
from .faults import Fault, write_fault
from .router import route
from .store import EntryStore

if TYPE_CHECKING:
    from .tls import SandboxTLS

__all__ = ["BULK_PATH", "COLLECTION_PATH", "TOKEN_PATH", "Handler", "Server"]

COLLECTION_PATH = "/api/v1/dictionary"
"""The GET (listing) and POST (add) endpoint."""
BULK_PATH = COLLECTION_PATH + "/bulk"
"""POST: a JSON array of entries, added all together or not at all."""
TOKEN_PATH = "/api/v1/token"  # noqa: S105 - a path, not a secret
"""POST ``{accessKey, secretKey, duration}``: a Bearer token in ``data.encodedJWT``."""
POST_PATHS = {COLLECTION_PATH: "add", BULK_PATH: "bulk", TOKEN_PATH: "token"}
MAX_POST_BODY = 64 * 1024
MAX_BULK_BODY = 8 * 1024 * 1024


@dataclass
class _Done:
    """What an operation did: HTTP status, the JSON answer, and the entries it touched."""

    code: int
    data: dict[str, Any]
    entry: Entry | None = None
    entries: tuple[Entry, ...] = ()


@dataclass
class _Operation:
    """What a request asks for, once it has passed every check; ``run()`` does it."""

    name: str
    entry_id: str | None = None
    body: bytes = b""
    terms: dict[str, str] | None = None
    items: list[dict[str, str]] = field(default_factory=list)
    token_for: tuple[str, int | None] | None = None

    def run(self, sandbox: Any) -> _Done:
        store: EntryStore = sandbox._store
        if self.name == "list":
            return _Done(200, {"status": "success", "data": {"entries": store.listing()}})
        if self.name == "add":
            assert self.terms is not None
            entry = store.add(*(self.terms[name] for name in TERM_FIELDS))
            return _Done(200, {"status": "success"}, entry)
        if self.name == "bulk":
            added = store.add_many([tuple(item[n] for n in TERM_FIELDS) for item in self.items])
            return _Done(200, {"status": "success"}, entries=tuple(added))
        if self.name == "token":
            assert self.token_for is not None
            token = sandbox._tokens.issue(*self.token_for)
            return _Done(200, {"status": "success", "data": {"encodedJWT": token}})
        if self.name == "purge":
            count = store.purge()
            return _Done(200, {"status": "success", "message": f"deleted {count} entries"})
        assert self.entry_id is not None
        if self.name == "update":
            assert self.terms is not None
            terms = tuple(self.terms[name] for name in TERM_FIELDS)
            entry = store.replace(self.entry_id, terms)  # type: ignore[arg-type]
        else:
            entry = store.delete(self.entry_id)
        if entry is None:
            return _Done(404, Rejected(404, "no such entry").body())
        return _Done(200, {"status": "success"}, entry)


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
        # A term may hold a lone surrogate (as a real service's JSON may: "\ud800"): sent as
        # that escape, since UTF-8 cannot carry it.
        text = json.dumps(data, ensure_ascii=False)
        body = text.encode("utf-8", "backslashreplace")
        self.send(code, body, "application/json", extra)

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
        self._refuse(Rejected(405, f"method {self.command} not allowed"))

    do_PATCH = do_HEAD = _not_allowed

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def _refuse(
        self,
        problem: Rejected,
        entry_id: str | None = None,
        operation: str = "rejected",
        extra: dict[str, str] | None = None,
    ) -> None:
        sandbox = self.server.sandbox
        status = sandbox._status(problem)
        sandbox._log(self, operation, status, problem.message, entry_id, vendor_code=problem.code)
        extra = dict(extra or {})
        if not self._skip_body():
            # Its body is still unread: the connection cannot carry another request.
            self.close_connection = True
            extra["Connection"] = "close"
        self.send_json(status, problem.body(), extra)

    def _rate_limited(self) -> None:
        """Refuse with 40103 (or a plain 429) and ``Retry-After``, as the service does over its
        rate limit; the request is not acted on (and meets no fault)."""
        sandbox = self.server.sandbox
        extra = {"Retry-After": str(sandbox.retry_after)}
        self._refuse(sandbox._rate_refusal(), self._named_entry(), "rate_limited", extra)

    def _named_entry(self) -> str | None:
        """The entry a DELETE's or PUT's path names, if any: for the log of a request not
        looked at."""
        raw_path, query_mark, _ = self.path.partition("?")
        if self.command not in ("DELETE", "PUT") or query_mark:
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
        first = sandbox._faults.peek(self.command)
        if first is not None and first.kind == "drop_before":
            sandbox._faults.take(self.command)
            sandbox._log(self, "dropped", None, "connection dropped before reading")
            self.reset()
            return
        if sandbox.latency:
            time.sleep(sandbox.latency)
        operation = _Operation("rejected")
        try:
            operation = self._operation()
            self._check(operation)
        except Rejected as problem:
            return self._refuse(problem, operation.entry_id)
        # Only a request the service would take meets a fault: one refused (a nonce overtaken
        # on another connection, say) leaves it for the next.
        fault = sandbox._faults.take(self.command)
        if fault is not None:
            return self._fault(fault, operation)
        if operation.name in ("add", "bulk") and sandbox.add_delay:
            time.sleep(sandbox.add_delay)  # a slow service: adds late, whoever is still waiting
        done = operation.run(sandbox)
        logged_id = self._logged_id(operation, done.entry)
        sandbox._log(
            self,
            operation.name,
            done.code,
            done.data["status"],
            logged_id,
            done.entry,
            entries=done.entries,
        )
        self.send_json(done.code, done.data)

    def _check(self, operation: _Operation) -> None:
        """Authenticate the request and read its body; ``Rejected`` when the service would
        refuse it. A token request carries the keys in its body instead of signing."""
        sandbox = self.server.sandbox
        if operation.name == "token":
            problem = sandbox._check_content_type(self)
            if problem is not None:
                raise problem
            access_key, secret_key, duration = parse_token_request(operation.body)
            sandbox._check_token_request(access_key, secret_key)
            operation.token_for = (access_key, duration)
            return
        problem = sandbox._check_auth(self)
        if problem is not None:
            raise problem
        if operation.name in ("add", "update"):
            operation.terms = parse_terms(operation.body)
        elif operation.name == "bulk":
            operation.items = parse_bulk(operation.body)

    @staticmethod
    def _logged_id(operation: _Operation, entry: Entry | None) -> str | None:
        return entry.id if operation.name == "add" and entry else operation.entry_id

    def _operation(self) -> _Operation:
        """What the request asks for, checking everything but authentication and the body's
        terms; ``Rejected`` if it cannot be what the service serves."""
        raw_path, query_mark, _ = self.path.partition("?")
        command = self.command
        if command == "GET" and raw_path != COLLECTION_PATH:
            raise Rejected(405, f"method {command} not allowed")
        if command == "GET" and not self.server.sandbox.listing:
            raise Rejected(404, "no such endpoint")
        if command == "POST" and raw_path not in POST_PATHS:
            raise Rejected(405, f"method {command} not allowed")
        if query_mark:
            raise Rejected(400, "no query string is allowed")
        if command == "POST":
            name = POST_PATHS[raw_path]
            limit = MAX_BULK_BODY if name == "bulk" else MAX_POST_BODY
            return _Operation(name, body=self._read_body(limit))
        if command == "PUT":
            where = route(raw_path, self.server.sandbox.router)
            if where.kind == "error":
                raise Rejected(where.status, where.message)
            if where.entry_id is None:
                raise Rejected(405, f"method {command} not allowed")
            return _Operation("update", where.entry_id, body=self._read_body(MAX_POST_BODY))
        if self._has_body():
            raise Rejected(400, "no request body is allowed")
        if command == "GET":
            return _Operation("list")
        where = route(raw_path, self.server.sandbox.router)
        if where.kind == "error":
            raise Rejected(where.status, where.message)
        return _Operation("purge" if where.entry_id is None else "delete", where.entry_id)

    def _has_body(self) -> bool:
        length = (self.headers.get("Content-Length") or "0").strip()
        return bool(self.headers.get("Transfer-Encoding")) or length != "0"

    def _framed_length(self, limit: int = MAX_BULK_BODY) -> int | None:
        """The body's length when a Content-Length alone frames it and it is within
        ``limit``."""
        if self.headers.get("Transfer-Encoding"):
            return None
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            return None
        return length if 0 <= length <= limit else None

    def _read_body(self, limit: int = MAX_POST_BODY) -> bytes:
        length = self._framed_length(limit)
        if length is None:
            raise Rejected(400, f"send the body with a Content-Length, {limit} at most")
        self._body_read = True
        return self.rfile.read(length)

    def _skip_body(self) -> bool:
        """Drop a refused request's unread body, if it can be; False when the stream cannot
        be brought back in step."""
        if self._body_read or not self._has_body():
            return True
        length = self._framed_length()
        if length is not None:
            self._body_read = True
            self.rfile.read(length)
        return length is not None

    def _fault(self, fault: Fault, operation: _Operation) -> None:
        sandbox = self.server.sandbox
        done = _Done(0, {})
        if fault.applied:
            done = operation.run(sandbox)
        outcome = f"fault {fault.kind}" + (" (applied)" if fault.applied else "")
        logged_id = self._logged_id(operation, done.entry)
        sandbox._log(
            self,
            operation.name,
            done.code or None,
            outcome,
            logged_id,
            done.entry,
            entries=done.entries,
        )
        write_fault(self, fault, done.code or 200, done.data)
