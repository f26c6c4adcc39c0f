"""HTTP to the service: base-URL rules, one ``requests.Session`` per client, one attempt per call.

``send`` makes one attempt and returns a ``Reply`` (a whole answer, read up to a size limit) or
a ``NetworkFailure`` saying whether the request may have reached the service; it never raises
for the network. Credentials never follow a redirect (``allow_redirects=False``), plain http goes
only to loopback, and loopback traffic ignores proxies from the environment. ``RetryPolicy`` is
the one immutable statement of how often and how long to try again.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import os
import random
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any
from urllib.parse import urlsplit

from .. import settings
from ..errors import InvalidBaseUrlError

__all__ = [
    "ANSWER_LIMIT",
    "API_PREFIX",
    "HTTP",
    "LISTING_LIMIT",
    "FailureKind",
    "NetworkFailure",
    "Reply",
    "RetryPolicy",
    "host_of",
    "is_loopback",
    "normalize_base_url",
    "same_base_url",
]

API_PREFIX = "/api/v1/dictionary/"
ANSWER_LIMIT = 64 * 1024
"""The largest answer read for a change (the service answers a few bytes)."""
LISTING_LIMIT = 50 * 1024 * 1024
"""The largest listing read (about 300,000 entries of ordinary length)."""
CA_VARIABLES = ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE")
_CHUNK = 64 * 1024
_DEFAULT_PORT = {"https": 443, "http": 80}


def is_loopback(host: str) -> bool:
    """``localhost``, 127.0.0.0/8 and ``::1``: the only hosts plain http may go to (a trailing
    dot makes a DNS name, which is looked up, not loopback)."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@functools.lru_cache(maxsize=64)
def normalize_base_url(base_url: str) -> str:
    """``base_url`` checked, without a trailing ``/``, ``/api/v1`` or default port.

    https is required except for loopback; user info, queries and fragments are refused (they
    would leak or be dropped silently)."""
    text = (base_url or "").strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise InvalidBaseUrlError(f"base URL {text!r} is not a valid URL ({exc}).") from None
    scheme, host = parts.scheme.lower(), parts.hostname or ""
    if scheme not in ("https", "http") or not host:
        raise InvalidBaseUrlError(f"base URL {text!r} must look like https://host[:port][/prefix].")
    if not host.isprintable() or any(ch.isspace() for ch in host):
        raise InvalidBaseUrlError(
            f"base URL {text!r}: the host {host!r} holds a control, invisible or space character."
        )
    if parts.username is not None or parts.password is not None:
        raise InvalidBaseUrlError("base URL must not contain a user name or password.")
    if parts.query or parts.fragment:
        raise InvalidBaseUrlError(f"base URL {text!r} must not have a query or fragment.")
    if scheme == "http" and not is_loopback(host):
        dot = " (with a trailing dot it is a DNS name, not loopback)" if host.endswith(".") else ""
        raise InvalidBaseUrlError(
            f"refusing plain http to {host!r}{dot}: credentials would travel unencrypted. "
            "Use https (plain http is allowed only for loopback: localhost, 127.0.0.0/8, ::1)."
        )
    path = parts.path.rstrip("/")
    if path.lower().endswith("/api/v1"):
        path = path[: -len("/api/v1")]
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORT[scheme]:
        netloc += f":{port}"
    return f"{scheme}://{netloc}{path}"


def same_base_url(one: str, other: str) -> bool:
    """Whether two base URLs name one service and API prefix, however spelled."""
    if one == other:
        return True
    try:
        return normalize_base_url(one) == normalize_base_url(other)
    except InvalidBaseUrlError:
        return False


def host_of(base_url: str) -> str:
    """The host (and port) of a URL, for messages that say where a request goes."""
    return urlsplit(base_url).netloc


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to try again (what may be tried again is ``answers``' call).

    ``total`` re-sends after failures that allow one, with full-jitter exponential backoff from
    ``backoff`` up to ``max_backoff``; a ``Retry-After`` wins, capped at ``max_retry_after``.
    Answers that say "not acted on, later" (429, 40103) spend ``rate_limit_patience`` seconds
    instead; a nonce refused as too small (40005) is re-sent at once up to ``nonce_resends``
    times. Neither counts against ``total``."""

    total: int = settings.RETRIES
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = settings.MAX_RETRY_AFTER
    rate_limit_patience: float = 300.0
    nonce_resends: int = 25

    def wait(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds before re-send number ``retry`` (1, 2, ...)."""
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        return random.uniform(0, min(self.max_backoff, self.backoff * 2 ** (retry - 1)))


class FailureKind(str, Enum):
    """Why no whole answer came back."""

    DNS = "dns"
    REFUSED = "refused"
    CONNECT_TIMEOUT = "connect_timeout"
    TLS = "tls"
    PROXY = "proxy"
    TIMEOUT = "timeout"
    DROPPED = "dropped"
    BROKEN = "broken"
    TOO_LARGE = "too_large"
    ERROR = "error"


@dataclass(frozen=True)
class Reply:
    """A whole answer: ``data`` its JSON, or ``None`` with ``problem`` (``empty``,
    ``not_json``, ``bad_gzip``, ``too_large``)."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    data: Any = None
    problem: str | None = None


@dataclass(frozen=True)
class NetworkFailure:
    """No whole answer. ``sent`` is False only when the request certainly never left;
    ``status`` and ``headers`` are set when the answer's headers did arrive."""

    kind: FailureKind
    sent: bool
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    detail: str = ""
    proxy: bool = False


class HTTP:
    """One kept-alive ``requests.Session`` for one service (pooled for up to ``MAX_WORKERS``
    threads at once); ``send`` makes one attempt."""

    def __init__(self, base_url: str, session: Any = None) -> None:
        import requests
        from requests.adapters import HTTPAdapter

        self.base_url = base_url
        self.loopback = is_loopback(urlsplit(base_url).hostname or "")
        self.session = session or requests.Session()
        if session is None:
            self.session.trust_env = not self.loopback  # no environment proxy for loopback
            adapter = HTTPAdapter(pool_maxsize=settings.MAX_WORKERS, max_retries=0)
            self.session.mount("http://", adapter)
            self.session.mount("https://", adapter)
        self.session.headers["Accept-Encoding"] = "identity"

    def close(self) -> None:
        self.session.close()

    def send(
        self,
        method: str,
        path: str,
        auth: Any,
        *,
        body: bytes | None = None,
        timeout: float,
        limit: int = ANSWER_LIMIT,
    ) -> Reply | NetworkFailure:
        """One attempt: ``(connect, read)`` timeouts of ``timeout`` each, and the body read
        until ``limit`` bytes or ``timeout`` seconds after its headers came."""
        import requests

        verify = self._verify()
        if isinstance(verify, NetworkFailure):
            return verify
        try:
            response = self.session.request(
                method,
                self.base_url + path,
                data=body,
                auth=auth,
                timeout=(timeout, timeout),
                allow_redirects=False,
                stream=True,
                verify=verify,
            )
        except requests.RequestException as exc:
            return _failure(exc)
        except OSError as exc:  # pragma: no cover - requests wraps these
            return NetworkFailure(FailureKind.ERROR, True, detail=type(exc).__name__)
        try:
            return _read(response, limit, time.monotonic() + timeout)
        finally:
            response.close()

    def _verify(self) -> Any:
        """The CAs to trust: the session's, else the environment's (read for loopback too,
        where the environment is not trusted for proxies), else the system's."""
        if self.session.verify is not True or not self.base_url.startswith("https:"):
            return self.session.verify
        for variable in CA_VARIABLES:
            path = os.environ.get(variable, "").strip()
            if path:
                if not os.path.exists(path):
                    detail = f"{variable} names {path}, which does not exist"
                    return NetworkFailure(FailureKind.TLS, False, detail=detail)
                return path
        return True


def _read(response: Any, limit: int, deadline: float) -> Reply | NetworkFailure:
    """The body, at most ``limit`` bytes, before ``deadline``; the connection goes back to the
    pool once the body is read whole."""
    import requests
    import urllib3

    status, headers = response.status_code, dict(response.headers)
    common: dict[str, Any] = {"sent": True, "status": status, "headers": headers}
    if status < 200:  # an interim answer (103) taken for the final one: this one never came
        return NetworkFailure(FailureKind.BROKEN, detail=f"interim answer {status}", **common)
    declared = headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limit:
        return NetworkFailure(FailureKind.TOO_LARGE, **common)
    chunks, size = [], 0
    read = getattr(response.raw, "read1", response.raw.read)  # read1: what has come (urllib3 2)
    try:
        while chunk := read(min(_CHUNK, limit + 1 - size), decode_content=False):
            size += len(chunk)
            if size > limit:
                return NetworkFailure(FailureKind.TOO_LARGE, **common)
            if time.monotonic() > deadline:
                return NetworkFailure(FailureKind.TIMEOUT, **common)
            chunks.append(chunk)
    except (urllib3.exceptions.ReadTimeoutError, TimeoutError):
        return NetworkFailure(FailureKind.TIMEOUT, **common)
    except (urllib3.exceptions.HTTPError, requests.RequestException, OSError) as exc:
        return NetworkFailure(FailureKind.BROKEN, detail=type(exc).__name__, **common)
    data, problem, body = decode_json(b"".join(chunks), limit)
    return Reply(status, headers, body, data, problem)


def decode_json(body: bytes, limit: int) -> tuple[Any, str | None, bytes]:
    """``(data, problem, body)``: the JSON in ``body``, gzip undone (sent although identity was
    asked) up to ``limit`` bytes; ``json.loads`` reads UTF-8 (BOM or not), UTF-16 and UTF-32."""
    if body[:2] == b"\x1f\x8b":
        unpacker = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            unpacked = unpacker.decompress(body, limit + 1)
        except zlib.error:
            return None, "bad_gzip", body
        if len(unpacked) > limit or (len(unpacked) > 2**20 and len(unpacked) > 100 * len(body)):
            return None, "too_large", body  # no JSON answer compresses 100 times
        if not unpacker.eof:
            return None, "bad_gzip", body
        body = unpacked
    if not body.strip():
        return None, "empty", body
    try:
        return json.loads(body), None, body
    except (ValueError, RecursionError):
        return None, "not_json", body


def _failure(exc: BaseException) -> NetworkFailure:
    """What requests raised, as whether the request may have left."""
    import requests
    import urllib3

    chain = _chain(exc)
    proxy = any(isinstance(e, urllib3.exceptions.ProxyError) for e in chain)
    if isinstance(exc, requests.exceptions.SSLError):
        detail = next(
            (str(e.reason or e).lower() for e in chain if hasattr(e, "verify_message")), None
        )
        detail = detail or "tls error"
        return NetworkFailure(FailureKind.TLS, False, detail=detail.replace("_", " "))
    if any(isinstance(e, urllib3.exceptions.NameResolutionError) for e in chain):
        return NetworkFailure(FailureKind.DNS, False, proxy=proxy)
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return NetworkFailure(FailureKind.CONNECT_TIMEOUT, False, proxy=proxy)
    if any(isinstance(e, urllib3.exceptions.NewConnectionError) for e in chain):
        return NetworkFailure(FailureKind.REFUSED, False, proxy=proxy)
    if proxy:
        return NetworkFailure(FailureKind.PROXY, False, detail=type(exc).__name__, proxy=True)
    if isinstance(exc, requests.exceptions.ReadTimeout):
        return NetworkFailure(FailureKind.TIMEOUT, True)
    if isinstance(exc, requests.exceptions.ConnectionError):
        return NetworkFailure(FailureKind.DROPPED, True, detail=type(exc).__name__)
    if isinstance(exc, requests.exceptions.InvalidURL | requests.exceptions.InvalidHeader):
        return NetworkFailure(FailureKind.ERROR, False, detail=type(exc).__name__)
    return NetworkFailure(FailureKind.ERROR, True, detail=type(exc).__name__)


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and every exception it wraps (arguments, causes, contexts, reasons)."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo:
        current = todo.pop()
        if any(current is e for e in seen):
            continue
        seen.append(current)
        todo.extend(a for a in current.args if isinstance(a, BaseException))
        for inner in (current.__cause__, current.__context__, getattr(current, "reason", None)):
            if isinstance(inner, BaseException):
                todo.append(inner)
    return seen
