"""One signed request, one deadline: a ``Reply`` or a ``NetworkFailure``, never an exception.

The transport sends a request exactly once. It signs it at send time: once connected, right
before the first byte goes out, it draws the nonce (``SignedAuth.stamp``) and writes the request
while holding the draw, so a key's requests leave in the order of their nonces. It never
follows a redirect, asks for an uncompressed answer, and reads at most ``limit`` bytes of it.
One deadline covers the whole attempt, from sending to the last byte of the answer: a watchdog
shuts the socket when it expires, so a server that drips its headers or floods ``100
Continue`` lines cannot hold a call past it. Whether to try again, and how to word what
happened, is for ``answers`` and the client: nothing here is prose for people.
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import http.client
import itertools
import json
import os
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from concurrent.futures import Future, wait
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import requests
import urllib3.exceptions
from requests.adapters import HTTPAdapter
from requests.auth import AuthBase
from urllib3.connection import HTTPConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

__all__ = [
    "ANSWER_LIMIT",
    "CA_VARIABLES",
    "LISTING_LIMIT",
    "FailureKind",
    "Gate",
    "NetworkFailure",
    "NotSent",
    "Reply",
    "Transport",
    "ca_bundle",
    "decode_json",
]

ANSWER_LIMIT = 64 * 1024
"""The largest answer read for a DELETE or POST (the service answers a few bytes)."""
LISTING_LIMIT = 50 * 1024 * 1024
"""The largest listing read (about 300,000 entries of ordinary length)."""
CA_VARIABLES = ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR")
"""Where the ecosystem says which CAs to trust, first found wins (requests' own order, then
OpenSSL's): honoured for every host, loopback included."""
_CHUNK = 64 * 1024
HOLD_BODY_LIMIT = 16 * 1024
"""A request body up to this size is written while the nonce's draw is held (it fits a socket
buffer at once); a larger one (a bulk add) is written after, so a slow upload holds up no one."""
_HEADERS = {"Accept-Encoding": "identity"}
_GZIP_MAGIC = b"\x1f\x8b"
_BOMB_RATIO = 100
"""A gzip answer that unpacks to more than this many times its size is refused unparsed
(JSON text, a listing's included, compresses about 5 to 15 times)."""
_BOMB_FLOOR = 1024 * 1024


class FailureKind(str, Enum):
    """Why no whole answer came back."""

    DNS = "dns"
    REFUSED = "refused"
    CONNECT_TIMEOUT = "connect_timeout"
    TLS = "tls"
    PROXY = "proxy"
    """The proxy would not open a tunnel (it answered, but not with a connection)."""
    TIMEOUT = "timeout"
    """The deadline expired after the request may have been sent."""
    DROPPED = "dropped"
    """The connection closed (or was reset) before any answer came. With ``sent`` False it
    was found closed while the request was being written: the service cannot have acted."""
    BROKEN = "broken"
    """The answer started but broke off: cut short, or garbled headers."""
    TOO_LARGE = "too_large"
    ERROR = "error"


@dataclass(frozen=True)
class Gate:
    """What must hold before a request's first byte goes out, handed down as data: ``ready``
    done (a snapshot on disk, say: what it raised is raised as it was, and nothing is sent),
    then ``stop`` not set (else ``NotSent``). It is waited for once connected and signed, so
    the caller's wait overlaps with connecting and signing and is not counted against the
    deadline."""

    ready: Future[Any]
    stop: threading.Event | None = None


_GATE_LOOK = 0.1
"""How often a wait for ``Gate.ready`` looks at ``Gate.stop`` (seconds)."""


class NotSent(Exception):
    """``Gate.stop`` was set while ``Gate.ready`` was waited for: not one byte went out."""


@dataclass(frozen=True)
class Reply:
    """A whole answer. ``data`` is its JSON (gzip, a BOM and UTF-16/32 undone), or ``None``
    with ``problem`` (``empty``, ``not_json``, ``bad_gzip`` or ``too_large``)."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    data: Any = None
    problem: str | None = None
    reused: bool = False


@dataclass(frozen=True)
class NetworkFailure:
    """No whole answer. ``sent`` is False only when the request certainly never left (DNS,
    refused, connect timeout, TLS handshake, a proxy that would not connect). ``status`` and
    ``headers`` are set when the answer's headers did arrive."""

    kind: FailureKind
    sent: bool
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    detail: str = ""
    reused: bool = False
    proxy: bool = False


def decode_json(body: bytes, limit: int) -> tuple[Any, str | None, bytes]:
    """``(data, problem, body)``: the JSON in ``body``, whatever a server did to it.

    A gzip body (sent although identity was asked) is unpacked up to ``limit`` bytes;
    ``json.loads`` on bytes already reads UTF-8 (with or without a BOM), UTF-16 and UTF-32.
    """
    if body[:2] == _GZIP_MAGIC:
        unpacker = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            unpacked = unpacker.decompress(body, limit + 1)
        except zlib.error:
            return None, "bad_gzip", body
        if len(unpacked) > limit:
            return None, "too_large", body
        if not unpacker.eof:
            return None, "bad_gzip", body
        if len(unpacked) > _BOMB_FLOOR and len(unpacked) > _BOMB_RATIO * len(body):
            # Megabytes of JSON from a few kilobytes (``[{},{},...]``): parsed, each object
            # costs 30 times its bytes in memory. No listing compresses like that.
            return None, "too_large", body
        body = unpacked
    if not body.strip():
        return None, "empty", body
    try:
        return json.loads(body), None, body
    except (ValueError, RecursionError):
        return None, "not_json", body


# -- the deadline ------------------------------------------------------------------------------


class _Deadline:
    """One attempt's deadline; when it fires it shuts every socket the attempt uses."""

    def __init__(self, seconds: float) -> None:
        self.expires = time.monotonic() + seconds
        self.expired = False
        self._done = False
        self._connections: list[HTTPConnection | socket.socket] = []
        self._lock = threading.Lock()
        self._held_at: float | None = None

    @property
    def done(self) -> bool:
        return self._done

    def watch(self, connection: HTTPConnection | socket.socket) -> None:
        """Shut ``connection`` (or a bare socket, still connecting) when the deadline fires."""
        with self._lock:
            if self.expired:
                _shut(connection)
            elif not self._done:
                self._connections.append(connection)

    def hold(self) -> None:
        """Stop counting: the caller's own wait (``Gate.ready``) is not the service's time."""
        with self._lock:
            self._held_at = time.monotonic()

    def resume(self) -> None:
        """Count again, the time held added to the deadline."""
        with self._lock:
            held, self._held_at = self._held_at, None
            if held is None or self._done:
                return
            self.expires += time.monotonic() - held
        _WATCHDOG.arm(self)

    def fire(self) -> None:
        with self._lock:
            # Held, or pushed back by a hold: ``resume`` armed the watchdog for the new time.
            if self._done or self._held_at is not None or time.monotonic() < self.expires:
                return
            self.expired = True
            for connection in self._connections:
                _shut(connection)

    def finish(self) -> None:
        with self._lock:
            self._done = True
            self._connections.clear()


def _shut(connection: HTTPConnection | socket.socket) -> None:
    """Shut a connection's socket from another thread: a blocked read returns at once.

    ``socket.socket.shutdown`` is called directly so a TLS socket keeps its state for the
    thread that is reading (``SSLSocket.shutdown`` would drop it under that thread's feet).
    """
    sock = connection if isinstance(connection, socket.socket) else connection.sock
    if sock is None:
        return
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


class _Watchdog:
    """One daemon thread for every deadline of the process, nearest first."""

    def __init__(self) -> None:
        self._order = itertools.count()
        self.reset()

    def reset(self) -> None:
        """Start afresh (also in a forked child, which has no watchdog thread)."""
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, _Deadline]] = []
        self._thread: threading.Thread | None = None

    def arm(self, deadline: _Deadline) -> None:
        with self._cond:
            heapq.heappush(self._heap, (deadline.expires, next(self._order), deadline))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="dict-magics-deadlines", daemon=True
                )
                self._thread.start()
            elif self._heap[0][2] is deadline:
                self._cond.notify()

    def _run(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                while self._heap and (self._heap[0][2].done or self._heap[0][0] <= now):
                    heapq.heappop(self._heap)[2].fire()
                self._cond.wait(self._heap[0][0] - now if self._heap else None)


_WATCHDOG = _Watchdog()
if hasattr(os, "register_at_fork"):  # not on Windows
    os.register_at_fork(after_in_child=_WATCHDOG.reset)


class _Attempt:
    """What the connection layer reports about the attempt running on this thread."""

    def __init__(self, seconds: float, gate: Gate | None = None) -> None:
        self.deadline = _Deadline(seconds)
        self.gate = gate
        self.sending = False
        self.reused = False
        self.unwritten = False
        self.stamp: Callable[..., Any] | None = None
        self.path = ""

    def signing(self, headers: Any, hold: bool) -> Any:
        """A context in which the request's nonce is drawn and signed into ``headers`` (once):
        with ``hold``, no other request of the key is signed until it ends."""
        stamp, self.stamp = self.stamp, None
        if stamp is None or headers is None:
            return contextlib.nullcontext()
        return stamp(headers, self.path, hold=hold)

    def await_ready(self) -> None:
        """Wait for the gate (once), the wait not counted against the deadline; what its
        ``ready`` raised, or ``NotSent`` for its ``stop``, goes out as ``_NotReady``, to be
        raised as it was by ``Transport.send``."""
        gate, self.gate = self.gate, None
        if gate is None:
            return
        self.deadline.hold()
        try:
            # Ctrl-C (``stop``) ends the wait even if ``ready`` never comes (a sync to a disk
            # that hangs): nothing has been sent, so nothing need be waited for.
            while not wait([gate.ready], timeout=_GATE_LOOK).done:
                if gate.stop is not None and gate.stop.is_set():
                    break
            else:
                gate.ready.result()
        except BaseException as exc:
            raise _NotReady(exc) from None
        finally:
            self.deadline.resume()
        if gate.stop is not None and gate.stop.is_set():
            raise _NotReady(NotSent())


class _NotReady(Exception):
    """What waiting for the gate raised, carried through urllib3 and requests (which would take
    an ``OSError`` for a network failure) to ``Transport.send``, which raises it as it was."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(type(cause).__name__)
        self.cause = cause


_current = threading.local()


# -- connections that report to the attempt ------------------------------------------------------


class _Watched:
    """Mixed into urllib3's connections: tells the current attempt when the request starts
    going out (after connecting), on which socket, whether the connection was reused, and
    whether the connection refused the request's first byte (urllib3 then still tries to read
    an answer, which fails too)."""

    _uses = 0
    _writes = 0

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        self._uses = 0

    def _new_conn(self) -> socket.socket:
        # The bare socket, before a proxy's CONNECT and the TLS handshake run on it: a peer
        # dripping either one byte at a time is cut off by the deadline too.
        sock = super()._new_conn()  # type: ignore[misc]
        attempt: _Attempt | None = getattr(_current, "attempt", None)
        if attempt is not None:
            attempt.deadline.watch(sock)
        return sock

    def send(self, data: Any) -> None:
        super().send(data)  # type: ignore[misc]
        self._writes += 1

    def request(self, *args: Any, **kwargs: Any) -> None:
        if self.sock is None:  # type: ignore[attr-defined]
            self.connect()
        self._uses += 1
        self._writes = 0
        attempt: _Attempt | None = getattr(_current, "attempt", None)
        signing: Any = contextlib.nullcontext()
        if attempt is not None:
            attempt.await_ready()  # connected; not one byte written yet
            headers = kwargs.get("headers")
            if headers is not None and not isinstance(headers, MutableMapping):
                headers = kwargs["headers"] = dict(headers)
            body = kwargs.get("body", args[2] if len(args) > 2 else None)
            small = body is None or (isinstance(body, bytes) and len(body) <= HOLD_BODY_LIMIT)
            signing = attempt.signing(headers, hold=small)
        try:
            with signing:  # the nonce is drawn here, and held while a small request goes out
                if attempt is not None:
                    attempt.sending = True
                    attempt.reused = self._uses > 1
                    attempt.deadline.watch(self)  # type: ignore[arg-type]
                super().request(*args, **kwargs)  # type: ignore[misc]
        except OSError:
            # Not one byte of the request was taken: the peer had already closed or reset the
            # connection, so the service cannot have seen (let alone acted on) this request.
            if attempt is not None and self._writes == 0:
                attempt.unwritten = True
            raise


def _watched(pools: dict[str, type]) -> dict[str, type]:
    """The same pools (by scheme), their connections reporting to the attempt (``_Watched``)."""
    made = {}
    for scheme, pool in pools.items():
        connection = type(
            f"Watched{pool.ConnectionCls.__name__}", (_Watched, pool.ConnectionCls), {}
        )
        made[scheme] = type(f"Watched{pool.__name__}", (pool,), {"ConnectionCls": connection})
    return made


_POOLS = _watched({"http": HTTPConnectionPool, "https": HTTPSConnectionPool})


@functools.cache
def _socks_pools() -> dict[str, type]:
    """Watched pools for a SOCKS proxy (``requests[socks]``: PySocks installed)."""
    from urllib3.contrib.socks import SOCKSHTTPConnectionPool, SOCKSHTTPSConnectionPool

    return _watched({"http": SOCKSHTTPConnectionPool, "https": SOCKSHTTPSConnectionPool})


class _Adapter(HTTPAdapter):
    """requests' adapter with watched connections: to the service, through HTTP(S) proxies and
    through SOCKS proxies. A pool of any other kind would not report to the attempt: then what
    must come before the first byte (the ``Gate``) comes before the pool is used at all."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _POOLS

    def proxy_manager_for(self, proxy: str, **kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **kwargs)
        socks = proxy.lower().startswith("socks")
        manager.pool_classes_by_scheme = _socks_pools() if socks else _POOLS
        return manager

    def get_connection_with_tls_context(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        pool = super().get_connection_with_tls_context(request, *args, **kwargs)
        return _ready_unless_watched(pool, request)

    def get_connection(self, url: Any, *args: Any, **kwargs: Any) -> Any:  # requests < 2.32.2
        return _ready_unless_watched(super().get_connection(url, *args, **kwargs), None)


def _ready_unless_watched(pool: Any, request: Any) -> Any:
    if not issubclass(getattr(pool, "ConnectionCls", object), _Watched):
        attempt: _Attempt | None = getattr(_current, "attempt", None)
        if attempt is not None:
            attempt.await_ready()
            with attempt.signing(getattr(request, "headers", None), hold=False):
                pass
    return pool


_DEFERRABLE = hasattr(HTTPAdapter, "get_connection_with_tls_context")
"""requests 2.32.2 and later hand the adapter the request, so an unwatched pool can still sign
it; before, the request is signed when prepared."""


class _AtSendTime(AuthBase):
    """requests' view of the service's auth: the fixed headers now, the nonce and signature
    later, when the connection is about to write the request (``_Attempt.signing``)."""

    def __init__(self, auth: Any) -> None:
        self.auth = auth

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        attempt: _Attempt | None = getattr(_current, "attempt", None)
        stamp = getattr(self.auth, "stamp", None)
        if attempt is None or stamp is None or not _DEFERRABLE:
            return self.auth(request)
        self.auth.prepare(request)
        attempt.stamp, attempt.path = stamp, request.path_url
        return request


# -- the transport ---------------------------------------------------------------------------------


def ca_bundle(environ: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """``(variable, path)`` of the CA bundle (or folder) the environment names, else ``None``.

    requests reads ``REQUESTS_CA_BUNDLE`` only when it trusts the environment, which it must
    not for loopback (a proxy would see the sandbox's traffic); and never ``SSL_CERT_FILE``.
    The transport therefore passes this as ``verify`` on every request itself.
    """
    environ = os.environ if environ is None else environ
    for variable in CA_VARIABLES:
        path = environ.get(variable, "").strip()
        if path:
            return variable, path
    return None


class Transport:
    """Sends one request at a time per thread over a shared, kept-alive connection pool.

    Proxies and ``~/.netrc`` follow ``trust_env``; the CAs trusted follow the environment's
    ``CA_VARIABLES`` whatever ``trust_env`` says, unless the session was given a ``verify``.
    """

    def __init__(
        self,
        auth: AuthBase,
        *,
        session: requests.Session | None = None,
        trust_env: bool = True,
        workers: int = 1,
    ) -> None:
        self.auth = auth
        self._auth = _AtSendTime(auth)
        self.session = session or requests.Session()
        if session is None:
            self.session.trust_env = trust_env
        self._pool_lock = threading.Lock()
        self._pool_size = 0
        self.ensure_pool(workers)

    def ensure_pool(self, workers: int) -> None:
        """Size the connection pool so every worker keeps its own connection alive."""
        with self._pool_lock:
            if workers <= self._pool_size:
                return
            previous = self.session.adapters.get("https://")
            adapter = _Adapter(pool_connections=1, pool_maxsize=workers, max_retries=0)
            self.session.mount("http://", adapter)
            self.session.mount("https://", adapter)
            self._pool_size = workers
            if previous is not None:
                previous.close()

    def close(self) -> None:
        self.session.close()

    def send(
        self,
        method: str,
        url: str,
        *,
        body: bytes | None = None,
        limit: int = ANSWER_LIMIT,
        timeout: float,
        gate: Gate | None = None,
        auth: AuthBase | None = None,
    ) -> Reply | NetworkFailure:
        """Send once and read the answer, all within ``timeout`` seconds.

        ``auth`` stands in for the transport's own for this request (the token request).

        ``gate`` (a ``Gate``) is waited for once connected and signed, right before the first
        byte goes out: what must be done before the request (a snapshot made durable) overlaps
        with connecting and signing. If its ``ready`` raised, nothing was sent, and ``send``
        raises that exception (``NotSent`` when its ``stop`` was set). It is not waited for
        when the request never reached a connection (a failure returned).
        """
        verify = self._verify() if url[:6].lower() == "https:" else True
        if isinstance(verify, NetworkFailure):
            return verify
        attempt = _Attempt(timeout, gate)
        _WATCHDOG.arm(attempt.deadline)
        _current.attempt = attempt
        response = None
        try:
            try:
                response = self.session.request(
                    method,
                    url,
                    data=body,
                    headers=_HEADERS,
                    auth=self._auth if auth is None else auth,
                    timeout=(timeout, timeout),
                    allow_redirects=False,
                    stream=True,
                    verify=verify,
                )
            except _NotReady as stopped:
                raise stopped.cause from None
            except _NETWORK_ERRORS as exc:
                return _failure(exc, attempt)
            return _read(response, attempt, limit)
        finally:
            _current.attempt = None
            attempt.deadline.finish()
            if response is not None:
                response.close()

    def _verify(self) -> bool | str | NetworkFailure:
        """What to verify the server's certificate against, read afresh for each request (a
        notebook may export a CA after the client was made); a failure if it is missing."""
        if self.session.verify is not True:
            return self.session.verify
        named = ca_bundle()
        if named is None:
            return True
        variable, path = named
        if not os.path.exists(path):
            detail = f"{variable} names {path}, which does not exist"
            return NetworkFailure(FailureKind.TLS, False, detail=detail)
        return path


_NETWORK_ERRORS = (
    requests.RequestException,
    urllib3.exceptions.HTTPError,
    http.client.HTTPException,
    OSError,
)


def _read(response: requests.Response, attempt: _Attempt, limit: int) -> Reply | NetworkFailure:
    """Read the body (at most ``limit`` bytes), then release the connection if it is clean."""
    status, headers = response.status_code, dict(response.headers)
    common: dict[str, Any] = {"sent": True, "status": status, "headers": headers}
    common["reused"] = attempt.reused
    if status < 200:
        # An interim answer (103 Early Hints, a stray 100) taken for the final one: the real
        # answer is still coming on this connection, so it must never go back to the pool
        # (the next request would read this one's answer). The service may have acted.
        return NetworkFailure(FailureKind.BROKEN, detail=f"interim answer {status}", **common)
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limit:
        return NetworkFailure(FailureKind.TOO_LARGE, **common)
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            chunk = response.raw.read(min(_CHUNK, limit + 1 - size), decode_content=False)
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                return NetworkFailure(FailureKind.TOO_LARGE, **common)
            chunks.append(chunk)
    except _NETWORK_ERRORS as exc:
        if attempt.deadline.expired or _timed_out(exc):
            return NetworkFailure(FailureKind.TIMEOUT, **common)
        return NetworkFailure(FailureKind.BROKEN, detail=type(exc).__name__, **common)
    if attempt.deadline.expired:
        # A close-delimited answer ends the same way a shut socket does: we cannot tell.
        return NetworkFailure(FailureKind.TIMEOUT, **common)
    framed = declared.isdigit() or "chunked" in response.headers.get("Transfer-Encoding", "")
    keep = response.headers.get("Connection", "").lower() != "close"
    if framed and keep and response.raw.version != 10:
        response.raw.release_conn()
    data, problem, body = decode_json(b"".join(chunks), limit)
    return Reply(status, headers, body, data, problem, attempt.reused)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception and every exception it wraps (arguments, causes, contexts)."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo.extend(a for a in current.args if isinstance(a, BaseException))
        for inner in (
            current.__cause__,
            current.__context__,
            getattr(current, "reason", None),
            getattr(current, "original_error", None),
        ):
            if isinstance(inner, BaseException):
                todo.append(inner)


def _timed_out(exc: BaseException) -> bool:
    return any(
        isinstance(e, socket.timeout | urllib3.exceptions.ReadTimeoutError) for e in _chain(exc)
    )


def _failure(exc: BaseException, attempt: _Attempt) -> NetworkFailure:
    """Classify an error raised before the answer's headers were read."""
    chain = list(_chain(exc))
    proxy = any(isinstance(e, urllib3.exceptions.ProxyError) for e in chain)
    if attempt.sending:
        reused = attempt.reused
        if attempt.unwritten:  # not one byte taken: not sent, whatever else happened
            detail = type(exc).__name__
            return NetworkFailure(FailureKind.DROPPED, False, detail=detail, reused=reused)
        if attempt.deadline.expired or _timed_out(exc):
            return NetworkFailure(FailureKind.TIMEOUT, True, reused=reused, proxy=proxy)
        no_answer = any(
            isinstance(e, ConnectionResetError | BrokenPipeError | http.client.RemoteDisconnected)
            for e in chain
        )
        kind = FailureKind.DROPPED if no_answer else FailureKind.BROKEN
        return NetworkFailure(kind, True, detail=type(exc).__name__, reused=reused, proxy=proxy)
    if any(isinstance(e, urllib3.exceptions.NameResolutionError) for e in chain):
        return NetworkFailure(FailureKind.DNS, False, proxy=proxy)
    tls = _tls_detail(chain)
    if tls is not None:
        return NetworkFailure(FailureKind.TLS, False, detail=tls, proxy=proxy)
    if any(isinstance(e, urllib3.exceptions.NewConnectionError) for e in chain):
        return NetworkFailure(FailureKind.REFUSED, False, proxy=proxy)
    connect_timeout = (urllib3.exceptions.ConnectTimeoutError, requests.ConnectTimeout)
    if any(isinstance(e, connect_timeout) for e in chain) or _timed_out(exc):
        # A timeout before the request started to go out: connecting, or the TLS handshake.
        return NetworkFailure(FailureKind.CONNECT_TIMEOUT, False, proxy=proxy)
    if proxy:
        return NetworkFailure(FailureKind.PROXY, False, detail=type(exc).__name__, proxy=True)
    # Raised before the request started to go out (a bad header, a bad URL, ...).
    return NetworkFailure(FailureKind.ERROR, False, detail=type(exc).__name__)


def _tls_detail(chain: list[BaseException]) -> str | None:
    """A short machine-ish description when TLS failed while connecting."""
    for error in chain:
        if isinstance(error, ssl.SSLCertVerificationError):
            return f"certificate not trusted: {error.verify_message}"
    for error in chain:
        if isinstance(error, ssl.SSLError):
            return (error.reason or type(error).__name__).replace("_", " ").lower()
    if any(isinstance(e, urllib3.exceptions.SSLError) for e in chain):
        return "tls error"
    return None
