"""The sandbox's HTTP(S) side: what a request asks for, whether the service would take it, and
the bytes of the answer, its own or a fault's. HTTPS uses a throw-away CA (``trustme``).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import select
import socket
import ssl
import struct
import tempfile
import time
from http.server import BaseHTTPRequestHandler
from types import ModuleType
from typing import Any
from urllib.parse import unquote

from ..models import codes
from ..models.codes import MESSAGES
from .checks import Rejected, check_key, check_signed, coded, parse_terms, parse_token_request, same
from .faults import Fault
from .store import wire_id
from .translate import parse_request, translate

COLLECTION_PATH = "/api/v1/dictionary"
ENTRY_PREFIX = COLLECTION_PATH + "/"
PURGE_SEGMENT = "dictionary-all"
POST_PATHS = {
    COLLECTION_PATH: "add",
    ENTRY_PREFIX + "bulk": "bulk",
    "/api/v1/token": "token",
    "/api/v1/translate": "translate",
}
JSON = "application/json"
MAX_BODY = {"bulk": 8 << 20, "translate": 2 << 20}  # the rest: 64 KiB


def entry_of(path: str) -> str | None:
    """The entry a DELETE or PUT path names: one percent-decoded segment (``None``: the purge)."""
    segment = path[len(ENTRY_PREFIX) :]
    if not path.startswith(ENTRY_PREFIX) or "/" in segment or not segment:
        raise Rejected(404, "no such endpoint")
    try:
        segment = unquote(segment, errors="strict")
    except UnicodeDecodeError:
        raise Rejected(400, "the id is not valid percent-encoded UTF-8") from None
    return None if segment == PURGE_SEGMENT else segment


HANDSHAKE_TIMEOUT_S = 10.0
TRUSTME_MISSING = "the TLS sandbox needs trustme: pip install trustme"


class TrustmeMissing(RuntimeError):
    """TLS was asked for, but ``trustme`` is not installed."""


def load_trustme() -> ModuleType:
    """``trustme``, imported only when TLS is asked for (it pulls in cryptography)."""
    try:
        import trustme
    except ImportError:
        raise TrustmeMissing(TRUSTME_MISSING) from None
    return trustme


def throwaway_ca() -> tuple[ssl.SSLContext, str]:
    """A server context presenting a certificate of a new CA, and that CA's PEM file, alone in
    a new private folder (the caller removes it)."""
    ca = load_trustme().CA(organization_name="dict-magics sandbox (throw-away)")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    path = os.path.join(tempfile.mkdtemp(prefix="dict-magics-sandbox-ca-"), "ca.pem")  # 0700
    ca.cert_pem.write_to_path(path)
    return context, path


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: Any  # the ``server.SandboxServer`` serving it (which imports this module)
    server_version = "dict-magics-sandbox"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: the sandbox keeps its own log."""

    def setup(self) -> None:
        """TLS handshake here, on this connection's own thread: a slow client holds up no one."""
        if self.server.tls:
            self.request.settimeout(HANDSHAKE_TIMEOUT_S)
            self.request.do_handshake()
            self.request.settimeout(None)
        super().setup()

    # -- writing (what faults write with too) ----------------------------------------------

    def send(
        self, code: int, body: bytes, content_type: str = JSON, extra: dict[str, str] | None = None
    ) -> None:
        self.wfile.write(head(code, len(body), content_type, extra) + body)

    def send_json(
        self, code: int, data: dict[str, Any], extra: dict[str, str] | None = None
    ) -> None:
        # A term may hold a lone surrogate, as a real service's JSON may: sent as its escape.
        body = json.dumps(data, ensure_ascii=False).encode("utf-8", "backslashreplace")
        self.send(code, body, extra=extra)

    def answer(self, code: int, data: dict[str, Any], extra: dict[str, str] | None = None) -> None:
        """The service's own answer (with ``errors="plain"``, a failure as plain text)."""
        if self.server.errors == "plain" and data.get("status") == "failure":
            message = data.get("data", {}).get("message", "")
            self.send(code, message.encode("utf-8", "backslashreplace"), "text/plain", extra)
        else:
            self.send_json(code, data, extra)

    def reset(self) -> None:
        """Close with a reset, so the client sees the connection die with no answer."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    def pause(self, seconds: float, *, until_hangup: bool = False) -> bool:
        """Wait ``seconds``; False at once if the sandbox stops (or the client hangs up)."""
        end = time.monotonic() + seconds
        while self.server.serving:
            left = end - time.monotonic()
            if left <= 0:
                return True
            if not until_hangup:
                time.sleep(min(0.05, left))
            elif select.select([self.connection], [], [], min(0.05, left))[0]:
                try:  # TLS cannot peek: read
                    tls = isinstance(self.connection, ssl.SSLSocket)
                    if not self.connection.recv(1, 0 if tls else socket.MSG_PEEK):
                        return False  # hung up
                except OSError:
                    return False
                time.sleep(min(0.05, left))  # it sent something more: ignore it
        return False

    # -- handling --------------------------------------------------------------------------

    def do_GET(self) -> None:
        sandbox = self.server
        self._body_read = False
        sandbox._received(self.command, self.path, self._named_entry())
        while not sandbox._open.wait(0.05):
            if not self.server.serving:
                return
        if sandbox.latency:
            time.sleep(sandbox.latency)
        if sandbox._bucket is not None and not sandbox._bucket.take():
            refusal = (
                Rejected(429, f"rate limit exceeded: retry after {sandbox.retry_after} s")
                if sandbox.rate_limit_answer == "429"
                else coded(codes.FREQUENCY_LIMIT)
            )
            retry = {"Retry-After": str(sandbox.retry_after)}
            return self._refuse(refusal, self._named_entry(), "rate_limited", **retry)
        if sandbox._take_fault(self.command, "drop_before"):
            sandbox._log(self, "dropped", None, "connection dropped before reading")
            return self.reset()
        name, entry_id = "rejected", None
        try:
            name, entry_id = self._route()
            payload = self._check(name)
        except Rejected as problem:
            return self._refuse(problem, entry_id)
        # Only a request the service would take meets a fault: a refused one leaves it.
        fault = sandbox._take_fault(self.command)
        if fault is not None and not fault.applied:
            sandbox._log(self, name, None, f"fault {fault.kind}", entry_id)
            return write_fault(self, fault, 200, {})
        if name in ("add", "bulk") and sandbox.add_delay:
            time.sleep(sandbox.add_delay)  # a slow service: adds late, whoever still waits
        code, data, touched = self._run(name, entry_id, payload)
        if name == "add":
            entry_id = touched[0].id
        outcome = data["status"] if fault is None else f"fault {fault.kind} (applied)"
        sandbox._log(self, name, code, outcome, entry_id, touched)
        if fault is not None:
            return write_fault(self, fault, code, data)
        self.answer(code, data)

    do_POST = do_PUT = do_DELETE = do_PATCH = do_GET

    def _refuse(
        self, problem: Rejected, entry_id: str | None, operation: str = "rejected", **extra: str
    ) -> None:
        self.server._log(
            self, operation, problem.status, problem.message, entry_id, code=problem.code
        )
        # Drop its unread body; a stream that cannot be brought back in step is closed.
        skipped = self._body_read or not self._has_body()
        if not skipped and self._read_body(max(MAX_BODY.values())) is None:
            self.close_connection = True
            extra["Connection"] = "close"
        self.answer(problem.status, problem.body(), extra)

    def _named_entry(self) -> str | None:
        """The entry a DELETE's or PUT's path names, if any (for the log)."""
        if self.command in ("DELETE", "PUT") and "?" not in self.path:
            with contextlib.suppress(Rejected):
                return entry_of(self.path)
        return None

    def _route(self) -> tuple[str, str | None]:
        """The operation asked for and the entry it names; ``Rejected`` when there is none."""
        sandbox, method = self.server, self.command
        path, query, _ = self.path.partition("?")
        entry_id = None
        if method == "POST" and path in POST_PATHS:
            name = POST_PATHS[path]
            if name in ("bulk", "token") and not getattr(sandbox, name):
                raise Rejected(404, "no such endpoint")  # a deployment without bulk or tokens
        elif method == "GET" and path == COLLECTION_PATH:
            name = "list"
            if not sandbox.listing:
                raise Rejected(404, "no such endpoint")
        elif method in ("DELETE", "PUT"):
            entry_id = entry_of(path)
            name = "purge" if entry_id is None else "delete"
            if method == "PUT":
                if entry_id is None or not sandbox.update:
                    raise Rejected(405, f"method {method} not allowed")
                name = "update"
        else:
            raise Rejected(405, f"method {method} not allowed")
        if query:
            raise Rejected(400, "no query string is allowed")
        return name, entry_id

    def _check(self, name: str) -> Any:
        """Authenticate the request and read its body: what the operation needs from it."""
        sandbox = self.server
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != JSON:
            raise coded(codes.INVALID_PARAMETERS, "Content-Type must be application/json")
        body = None
        if name in ("list", "delete", "purge"):
            if self._has_body():
                raise Rejected(400, "no request body is allowed")
        elif (body := self._read_body(limit := MAX_BODY.get(name, 64 << 10))) is None:
            raise Rejected(400, f"send the body with a Content-Length, {limit} at most")
        if name == "token":  # the keys travel in the body instead of a signature
            access_key, secret_key, duration = parse_token_request(body or b"")
            problem = check_key(access_key, sandbox.access_key)
            if problem is None and not same(secret_key, sandbox.secret_key):
                problem = coded(codes.KEY_INVALID, "the secret key does not match the access key")
        elif "Authorization" in self.headers:
            problem = sandbox._tokens.check(self.headers["Authorization"])
        else:
            keys = (sandbox.access_key, sandbox.secret_key, sandbox._nonces)
            problem = check_signed(self.headers, self.path, *keys)
        if problem is not None:
            raise problem
        if name == "token":
            return duration
        if body is None:
            return None
        return parse_request(body) if name == "translate" else parse_terms(body, name == "bulk")

    def _run(self, name: str, entry_id: str | None, payload: Any) -> tuple[int, dict, tuple]:
        """Do it: HTTP status, JSON answer, and the entries touched."""
        sandbox = self.server
        store = sandbox._store
        if name == "list":
            listed = [{**e.to_service(), "id": wire_id(e.id, sandbox.ids)} for e in store.sorted()]
            if sandbox.listing == "entries":
                return 200, {"status": "success", "entries": listed}, ()
            return 200, {"status": "success", "data": {"entries": listed}}, ()
        if name in ("add", "bulk"):
            return 200, {"status": "success"}, tuple(store.add(payload))
        if name == "token":
            token = sandbox._tokens.issue(payload)
            return 200, {"status": "success", "data": {"encodedJWT": token}}, ()
        if name == "translate":
            return 200, *translate(
                payload, store.sorted(), sandbox.limit_unit, sandbox.case_sensitive
            )
        if name == "purge":
            count = store.purge()
            return 200, {"status": "success", "message": f"deleted {count} entries"}, ()
        assert entry_id is not None
        entry = store.replace(entry_id, payload[0]) if name == "update" else store.delete(entry_id)
        if entry is None:
            return 404, Rejected(404, "no such entry").body(), ()
        return 200, {"status": "success"}, (entry,)

    # -- bodies ----------------------------------------------------------------------------

    def _has_body(self) -> bool:
        length = (self.headers.get("Content-Length") or "0").strip()
        return bool(self.headers.get("Transfer-Encoding")) or length != "0"

    def _read_body(self, limit: int) -> bytes | None:
        """The body when a Content-Length alone frames it, within ``limit`` (else ``None``)."""
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            return None
        if self.headers.get("Transfer-Encoding") or not 0 <= length <= limit:
            return None
        self._body_read = True
        return self.rfile.read(length)


def head(
    code: int, length: int, content_type: str = JSON, extra: dict[str, str] | None = None
) -> bytes:
    """An answer's status line and headers."""
    lines = [f"HTTP/1.1 {code} {Handler.responses.get(code, ('',))[0]}"]
    lines += [f"Content-Type: {content_type}", f"Content-Length: {length}"]
    lines += [f"{k}: {v}" for k, v in (extra or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _drip(h: Handler, delay: float, data: bytes) -> bool:
    for byte in data:
        if not h.pause(delay):
            return False
        h.wfile.write(bytes([byte]))
    return True


def write_fault(h: Handler, f: Fault, code: int, data: dict[str, Any]) -> None:
    """Answer (or not) as ``f`` says; ``code`` and ``data``: the service's own answer."""
    body = json.dumps(data, ensure_ascii=False).encode("utf-8")
    retry = {"Retry-After": f.retry_after} if f.retry_after is not None else {}
    quoted = (f.message or "").replace("{authorization}", h.headers.get("Authorization", ""))
    match f.kind:
        case "status":
            message = quoted if f.message is not None else "injected fault"
            h.send_json(f.status, {"status": "failure", "message": message}, retry)
        case "coded":
            assert f.code is not None
            message = quoted if f.message is not None else MESSAGES.get(f.code, "")
            error = {"code": f.code, "message": message}
            h.send_json(f.status, {"status": "failure", "data": error}, retry)
        case "non_json":
            h.send(200, b"OK, deleted.", "text/plain")
        case "no_status" | "other_status":
            h.send_json(200, {"result": "ok"} if f.kind == "no_status" else {"status": "deleted"})
        case "html":
            h.send(500, b"<html><h1>500 Internal Server Error</h1></html>", "text/html")
        case "huge":
            h.send(200, b'{"status": "success", "pad": "' + b"x" * (1 << 20) + b'"}')
        case "deep_json":
            h.send(200, b"[" * 50_000)
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
            h.send(code, gzip.compress(body), extra={"Content-Encoding": "gzip"})
        case "bom":
            h.send(code, b"\xef\xbb\xbf" + body)
        case "utf16":
            utf16 = json.dumps(data, ensure_ascii=False).encode("utf-16")
            h.send(code, utf16, "application/json; charset=utf-16")
        case "truncated":
            h.wfile.write(head(code, len(body) + 100) + body)
            h.close_connection = True
        case "empty_204":
            h.wfile.write(b"HTTP/1.1 204 No Content\r\n\r\n")
        case "close_mid_headers":
            h.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Ty")
            h.close_connection = True
        case "drip":
            h.wfile.write(head(code, len(body)))
            _drip(h, f.delay, body)
        case "drip_headers":
            if _drip(h, f.delay, head(code, len(body))):
                h.wfile.write(body)
        case "continue_flood":
            h.close_connection = True
            while True:
                h.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
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
