"""A real local stand-in for the translation service's dictionary-delete API.

``SandboxServer`` listens on 127.0.0.1 only and implements both endpoints strictly: method, path,
headers, empty body, signature, nonce freshness and replay. It keeps seeded entries, a log of
every request it received, and injectable faults, so the demo and the tests exercise real HTTP
with no account. Run ``python -m dict_magics.sandbox`` to serve one until Ctrl-C.
"""

from __future__ import annotations

import argparse
import gzip
import hmac
import json
import secrets
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from ..service.paths import is_loopback
from ..service.signing import sign
from .router import ROUTERS, route

__all__ = ["FAULT_KINDS", "LoggedRequest", "SandboxServer", "main", "use_sandbox"]

NONCE_WINDOW_S = 300.0
SANDBOX_MARKER = "DICT_MAGICS_SANDBOX"
"""Set (to the sandbox's URL) by whoever started a sandbox for a notebook run to reuse."""

FAULT_KINDS = {
    "status": "answer with `status` (JSON failure body, optional Retry-After); nothing deleted",
    "non_json": "answer 200 with a plain-text body; nothing deleted",
    "no_status": "answer 200 with JSON that has no status; nothing deleted",
    "other_status": "answer 200 with JSON status 'deleted'; nothing deleted",
    "html": "answer 500 with an HTML error page; nothing deleted",
    "huge": "answer 200 with a 1 MiB body; nothing deleted",
    "drip": "delete, then send the answer one byte every `delay` seconds",
    "drop_before": "close the connection without acting on the request; nothing deleted",
    "drop_after": "delete, then close the connection without answering",
    "hang": "delete, then wait `delay` seconds before answering",
    "redirect": "answer 307 pointing at `location`; nothing deleted",
    "gzip": "delete, and gzip the answer if the request accepts gzip",
    "deep_json": "answer 200 with JSON nested 50,000 levels deep; nothing deleted",
}


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the sandbox received it, and what it did about it."""

    method: str
    path: str
    headers: dict[str, str]
    entry_id: str | None
    operation: str
    http_status: int | None
    outcome: str
    at: float


@dataclass
class _Fault:
    kind: str
    remaining: int
    status: int = 503
    retry_after: str | None = None
    delay: float = 0.5
    location: str = ""


@dataclass
class _State:
    entries: dict[str, str]
    seen_nonces: dict[tuple[str, str], float] = field(default_factory=dict)
    faults: deque[_Fault] = field(default_factory=deque)
    log: deque[LoggedRequest] = field(default_factory=deque)
    lock: threading.Lock = field(default_factory=threading.Lock)
    prune_at: int = 10_000


class SandboxServer:
    """The service's two DELETE endpoints on ``127.0.0.1``, with faults on demand.

    ``entries`` is a count (ids ``"1"``..``"N"``) or an iterable of ids. ``latency`` (seconds)
    is added to every answer; ``echo`` prints one line per request (never a header value).
    Use as a context manager, or call ``start()`` / ``stop()``.
    """

    def __init__(
        self,
        entries: int | Iterable[str] = 100,
        *,
        access_key: str = "sandbox-access-key",
        secret_key: str | None = None,
        port: int = 0,
        latency: float = 0.0,
        max_log: int | None = 100_000,
        echo: bool = False,
        router: str = "strict",
    ) -> None:
        if router not in ROUTERS:
            raise ValueError(f"unknown router {router!r}; one of {', '.join(ROUTERS)}")
        self.router = router
        ids = [str(i) for i in range(1, entries + 1)] if isinstance(entries, int) else entries
        self.access_key = access_key
        # A recognisable prefix lets tests (and people) spot a leaked sandbox secret at once.
        self.secret_key = secret_key or "sandbox-secret-" + secrets.token_urlsafe(18)
        self.latency = latency
        self.echo = echo
        self._state = _State(entries={i: f"term {i}" for i in ids}, log=deque(maxlen=max_log))
        self._port = port
        self._open = threading.Event()
        self._open.set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        where = self.url if self._server else "stopped"
        return f"SandboxServer({where}, entries={len(self._state.entries)})"

    # -- life cycle ------------------------------------------------------------------------

    def start(self) -> SandboxServer:
        """Bind 127.0.0.1 and serve on a background thread."""
        if self._server is not None:
            return self
        server = _Server(("127.0.0.1", self._port), _Handler)
        server.sandbox = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close every open connection."""
        server, self._server = self._server, None
        if server is None:
            return
        self._open.set()
        server.shutdown()
        server.close_connections()
        server.server_close()

    def __enter__(self) -> SandboxServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The port it listens on (chosen by the system unless given)."""
        if self._server is None:
            raise RuntimeError("the sandbox is not running")
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """The base URL to give a client: ``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """The ``DICT_MAGICS_*`` variables that point a client at this sandbox."""
        return {
            "DICT_MAGICS_BASE_URL": self.url,
            "DICT_MAGICS_ACCESS_KEY": self.access_key,
            "DICT_MAGICS_SECRET_KEY": self.secret_key,
            SANDBOX_MARKER: self.url,
        }

    # -- state -----------------------------------------------------------------------------

    @property
    def entries(self) -> dict[str, str]:
        """A copy of the current entries (id -> source term)."""
        with self._state.lock:
            return dict(self._state.entries)

    def add_entries(self, ids: Iterable[str]) -> None:
        """Add (or re-add) entries by id."""
        with self._state.lock:
            self._state.entries.update((str(i), f"term {i}") for i in ids)

    @property
    def requests(self) -> list[LoggedRequest]:
        """A copy of the log of every request received, oldest first."""
        with self._state.lock:
            return list(self._state.log)

    def clear_log(self) -> None:
        """Forget the requests received so far."""
        with self._state.lock:
            self._state.log.clear()

    def inject(
        self,
        kind: str,
        count: int = 1,
        *,
        status: int = 503,
        retry_after: str | int | float | None = None,
        delay: float = 0.5,
        location: str = "",
    ) -> None:
        """Make the next ``count`` requests meet fault ``kind`` (see ``FAULT_KINDS``)."""
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {kind!r}; one of {', '.join(FAULT_KINDS)}")
        fault = _Fault(
            kind,
            count,
            status=status,
            retry_after=None if retry_after is None else str(retry_after),
            delay=delay,
            location=location,
        )
        with self._state.lock:
            self._state.faults.append(fault)

    def fail_next(self, count: int = 1, status: int = 503, retry_after: Any = None) -> None:
        """Answer the next ``count`` requests with ``status`` (and ``Retry-After``)."""
        self.inject("status", count, status=status, retry_after=retry_after)

    def pause(self) -> None:
        """Hold every request that arrives from now on until ``resume()``: a request in flight,
        for as long as a test needs to look at it."""
        self._open.clear()

    def resume(self) -> None:
        """Let held requests (and new ones) through."""
        self._open.set()

    def drop_connections(self) -> None:
        """Close every open (kept-alive) connection now, as a restart or an idle timeout does."""
        if self._server is not None:
            self._server.close_connections()

    def clear_faults(self) -> None:
        """Drop every pending fault."""
        with self._state.lock:
            self._state.faults.clear()

    # -- request handling (called from the server's threads) -------------------------------

    def _take_fault(self) -> _Fault | None:
        with self._state.lock:
            if not self._state.faults:
                return None
            fault = self._state.faults[0]
            fault.remaining -= 1
            if fault.remaining <= 0:
                self._state.faults.popleft()
            return fault

    def _log(
        self, handler: _Handler, entry_id: str | None, op: str, code: int | None, outcome: str
    ):
        record = LoggedRequest(
            method=handler.command,
            path=handler.path,
            headers=dict(handler.headers.items()),
            entry_id=entry_id,
            operation=op,
            http_status=code,
            outcome=outcome,
            at=time.time(),
        )
        with self._state.lock:
            self._state.log.append(record)
        if self.echo:
            shown = "-" if code is None else code
            print(f"{handler.command} {handler.path} -> {shown} {outcome}", flush=True)

    def _check_auth(self, handler: _Handler) -> str | None:
        """The reason a request is not authentic, or ``None`` if it is."""
        headers = handler.headers
        content_type = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != "application/json":
            return "Content-Type must be application/json"
        access_key, nonce, signature = (
            headers.get("accessKey"),
            headers.get("nonce"),
            headers.get("signature"),
        )
        if not access_key or not nonce or not signature:
            return "accessKey, nonce and signature headers are required"
        if not hmac.compare_digest(access_key, self.access_key):
            return "unknown access key"
        if not nonce.isdigit():
            return "nonce must be the Unix time in milliseconds"
        now = time.time()
        if abs(int(nonce) / 1000 - now) > NONCE_WINDOW_S:
            return "nonce is more than 5 minutes from the server's clock"
        expected = sign(handler.path, self.secret_key, nonce)
        if not hmac.compare_digest(signature, expected):
            return "signature does not match"
        with self._state.lock:
            key = (access_key, nonce)
            if key in self._state.seen_nonces:
                return "nonce already used (replayed request)"
            self._state.seen_nonces[key] = now
            if len(self._state.seen_nonces) > self._state.prune_at:
                cutoff = now - 2 * NONCE_WINDOW_S
                self._state.seen_nonces = {
                    k: t for k, t in self._state.seen_nonces.items() if t > cutoff
                }
                # Prune again only once the table has doubled: O(1) per request on average.
                # (Pruning on every request past 10,000 recent nonces made each one O(n).)
                self._state.prune_at = max(10_000, 2 * len(self._state.seen_nonces))
        return None

    def _apply(self, entry_id: str | None) -> tuple[int, dict[str, str]]:
        with self._state.lock:
            if entry_id is None:
                count = len(self._state.entries)
                self._state.entries.clear()
                return 200, {"status": "success", "message": f"deleted {count} entries"}
            if self._state.entries.pop(entry_id, None) is None:
                return 404, {"status": "failure", "message": "no such entry"}
            return 200, {"status": "success"}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    # A batch's workers all connect at once; with the default backlog of 5 a busy machine drops
    # the extra SYNs and those connections wait out the kernel's 1 s retransmission timeout.
    request_queue_size = 128
    sandbox: SandboxServer

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._connections_lock:
                self._connections.discard(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up is part of the game (timeouts, faults); anything else is not."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def close_connections(self) -> None:
        with self._connections_lock:
            for conn in list(self._connections):
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server
    server_version = "dict-magics-sandbox"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr log: the sandbox keeps its own."""

    def _answer(self, code: int, body: bytes, content_type: str, extra: dict[str, str]) -> None:
        head = [f"HTTP/1.1 {code} {self.responses.get(code, ('',))[0]}"]
        head += [f"Content-Type: {content_type}", f"Content-Length: {len(body)}"]
        head += [f"{k}: {v}" for k, v in extra.items()]
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)

    def _json(self, code: int, data: dict[str, Any], extra: dict[str, str] | None = None) -> None:
        self._answer(code, json.dumps(data).encode(), "application/json", extra or {})

    def _reject(self, code: int, message: str, entry_id: str | None = None) -> None:
        self.server.sandbox._log(self, entry_id, "rejected", code, message)
        self._json(code, {"status": "failure", "message": message})

    def _not_allowed(self) -> None:
        self._reject(405, f"method {self.command} not allowed")

    do_GET = do_POST = do_PUT = do_PATCH = do_HEAD = _not_allowed

    def do_DELETE(self) -> None:
        sandbox = self.server.sandbox
        while not sandbox._open.wait(0.05):
            if sandbox._server is not self.server:
                return
        fault = sandbox._take_fault()
        if fault is not None and fault.kind == "drop_before":
            sandbox._log(self, None, "dropped", None, "connection dropped before reading")
            self._drop()
            return
        if sandbox.latency:
            time.sleep(sandbox.latency)
        raw_path, _, query = self.path.partition("?")
        if query or "?" in self.path:
            return self._reject(400, "no query string is allowed")
        if self.headers.get("Transfer-Encoding") or int(self.headers.get("Content-Length") or 0):
            return self._reject(400, "no request body is allowed")
        where = route(raw_path, sandbox.router)
        if where.kind == "error":
            return self._reject(where.status, where.message)
        entry_id = where.entry_id
        problem = sandbox._check_auth(self)
        if problem is not None:
            return self._reject(401, problem, entry_id)
        op = "purge" if entry_id is None else "delete"
        if fault is not None and fault.kind != "drop_before":
            return self._fault(fault, entry_id, op)
        code, data = sandbox._apply(entry_id)
        sandbox._log(self, entry_id, op, code, data["status"])
        self._json(code, data)

    def _drop(self) -> None:
        """Close with a reset, so the client sees the connection die with no answer."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass

    def _fault(self, fault: _Fault, entry_id: str | None, op: str) -> None:
        sandbox = self.server.sandbox
        kind = fault.kind
        applied = kind in ("drip", "drop_after", "hang", "gzip")
        code: int | None = None
        if applied:
            code, data = sandbox._apply(entry_id)
        sandbox._log(self, entry_id, op, code, f"fault {kind}" + (" (applied)" if applied else ""))
        if kind == "status":
            extra = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
            self._json(fault.status, {"status": "failure", "message": "injected fault"}, extra)
        elif kind == "non_json":
            self._answer(200, b"OK, deleted.", "text/plain", {})
        elif kind == "no_status":
            self._json(200, {"result": "ok"})
        elif kind == "other_status":
            self._json(200, {"status": "deleted"})
        elif kind == "html":
            page = b"<html><body><h1>500 Internal Server Error</h1></body></html>"
            self._answer(500, page, "text/html", {})
        elif kind == "huge":
            self._answer(
                200,
                b'{"status": "success", "pad": "' + b"x" * (1 << 20) + b'"}',
                "application/json",
                {},
            )
        elif kind == "gzip":
            body = json.dumps(data).encode()
            if "gzip" in (self.headers.get("Accept-Encoding") or ""):
                self._answer(
                    code, gzip.compress(body), "application/json", {"Content-Encoding": "gzip"}
                )
            else:
                self._answer(code, body, "application/json", {})
        elif kind == "deep_json":
            self._answer(200, b"[" * 50_000, "application/json", {})
        elif kind == "redirect":
            self._answer(307, b"", "text/plain", {"Location": fault.location})
        elif kind == "drop_after":
            self._drop()
        elif kind == "hang":
            self._sleep(fault.delay)
            self._json(code or 200, data)
        elif kind == "drip":
            body = json.dumps(data).encode()
            self.wfile.write(
                f"HTTP/1.1 {code} OK\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n".encode()
            )
            for byte in body:
                self._sleep(fault.delay)
                self.wfile.write(bytes([byte]))
                self.wfile.flush()

    def _sleep(self, seconds: float) -> None:
        """Sleep, but give up as soon as the server stops."""
        end = time.monotonic() + seconds
        while time.monotonic() < end and self.server.sandbox._server is self.server:
            time.sleep(min(0.05, end - time.monotonic()))


def use_sandbox(entries: int = 100) -> SandboxServer | None:
    """Point this IPython session at a sandbox, and at nothing else (the demo notebooks' setup).

    A sandbox announced by ``DICT_MAGICS_SANDBOX`` (``dict-magics demo`` and the tests start
    one) is reused; otherwise one is started here and returned. Either way the session's
    profile and base-URL settings are reset, so a stored profile, a ``%config`` line or real
    credentials in the environment can never send these notebooks' deletes to a real account.
    """
    import os

    given = os.environ.get(SANDBOX_MARKER)
    sandbox = None
    loopback = is_loopback(urlsplit(given or "").hostname or "")
    if given and loopback and given == os.environ.get("DICT_MAGICS_BASE_URL"):
        print(f"Using the sandbox already running at {given}")
    else:
        sandbox = SandboxServer(entries).start()
        os.environ.update(sandbox.env())
        print(f"Started an embedded sandbox at {sandbox.url} with {entries} entries")
    os.environ["DICT_MAGICS_PROFILE"] = "default"
    from IPython import get_ipython

    shell = get_ipython()
    for configurable in getattr(shell, "configurables", []):
        if type(configurable).__name__ == "DictMagics":
            configurable.profile = ""
            configurable.base_url = ""
    return sandbox


def main(argv: list[str] | None = None, prog: str = "python -m dict_magics.sandbox") -> int:
    """Serve a sandbox until Ctrl-C, printing its URL and demo credentials."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Serve a local stand-in for the dictionary API (127.0.0.1 only).",
    )
    parser.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any)")
    parser.add_argument("--entries", type=int, default=100, help="seeded entries 1..N")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added per answer")
    parser.add_argument("--secret-key", help="demo secret (default: a new random one)")
    parser.add_argument("--quiet", action="store_true", help="do not print a line per request")
    args = parser.parse_args(argv)
    sandbox = SandboxServer(
        args.entries,
        port=args.port,
        latency=args.latency,
        secret_key=args.secret_key,
        echo=not args.quiet,
    )
    try:
        sandbox.start()
    except OSError as exc:
        hint = " (--port 0 picks any free port)" if args.port else ""
        parser.exit(2, f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}{hint}\n")
    print(f"Sandbox dictionary service at {sandbox.url} with {args.entries} entries.")
    print("Its demo credentials (for this sandbox only):")
    print(f"  export DICT_MAGICS_BASE_URL={sandbox.url}")
    print(f"  export DICT_MAGICS_ACCESS_KEY={sandbox.access_key}")
    print(f"  export DICT_MAGICS_SECRET_KEY={sandbox.secret_key}")
    print("Press Ctrl-C to stop.", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("\nStopped.")
    finally:
        sandbox.stop()
    return 0
