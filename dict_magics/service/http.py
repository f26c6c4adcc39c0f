"""The wire: one attempt (``HTTP.send``), who signs it, and what its answer means (``judge``).

``send`` never raises for the network: a ``NetworkFailure`` says whether the request may have
left. ``judge`` says ``success`` only for a JSON ``status: success`` with a 2xx code,
``failure`` only when the service certainly did not act, else ``unknown``.
"""

from __future__ import annotations

import base64
import email.utils
import functools
import hashlib
import hmac
import ipaddress
import json
import logging
import os
import random
import re
import secrets
import threading
import time
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from requests.auth import AuthBase

from .. import localdata, settings
from ..errors import InvalidBaseUrlError, InvalidIdError, ServiceError
from ..models import Cause, Entry, Outcome, codes
from ..models.codes import MAX_NONCE
from ..models.entry import MAX_ID, check_id
from ..models.secret import Secret, Unpicklable

try:
    import fcntl
except ImportError:  # Windows: nonces are shared by this process's threads only
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)
API_PREFIX = "/api/v1/dictionary/"
ANSWER_LIMIT = 64 * 1024
"""The largest answer read for a change (the service answers a few bytes)."""
LISTING_LIMIT = 50 * 1024 * 1024
"""The largest listing read (about 300,000 entries of ordinary length)."""
CA_VARIABLES = ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE")
_CHUNK = 64 * 1024
_DEFAULT_PORT = {"https": 443, "http": 80}


def is_loopback(host: str) -> bool:
    """``localhost``, 127.0.0.0/8 and ``::1``: the only hosts plain http may go to."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@functools.lru_cache(maxsize=64)
def normalize_base_url(base_url: str) -> str:
    """``base_url`` checked, without a trailing ``/``, ``/api/v1`` or default port: https
    except for loopback; user info, queries and fragments refused (they would leak or be lost)."""
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
    """How often and how long to try again: ``total`` re-sends with full-jitter backoff or a
    capped ``Retry-After``. 429 / 40103 spend ``rate_limit_patience`` seconds instead, and a
    40005 is re-sent at once up to ``nonce_resends`` times: neither counts against ``total``."""

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


@dataclass(frozen=True)
class Reply:
    """An answer: ``data`` its JSON, or ``None`` with ``problem`` saying why (a kind of
    ``NetworkFailure`` when the head came but not the whole body)."""

    status: int
    headers: Mapping[str, str]  # case-insensitive, as requests gives them
    body: bytes
    data: Any = None
    problem: str | None = None


@dataclass(frozen=True)
class NetworkFailure:
    """No answer, and why (``kind``: ``dns``, ``refused``, ``connect_timeout``, ``tls``,
    ``proxy``, ``timeout``, ``dropped``, ``broken``, ``too_large`` or ``error``). ``sent``:
    False only when the request certainly never left."""

    kind: str
    sent: bool
    detail: str = ""
    proxy: bool = False


class HTTP:
    """One kept-alive ``requests.Session`` for one service, pooled for ``MAX_WORKERS``."""

    def __init__(self, base_url: str, session: Any = None) -> None:
        self.base_url = base_url
        self.loopback = is_loopback(urlsplit(base_url).hostname or "")
        self.session = session or requests.Session()
        if session is None:
            self.session.trust_env = not self.loopback  # no environment proxy for loopback
            adapter = HTTPAdapter(pool_maxsize=settings.MAX_WORKERS, max_retries=0)
            self.session.mount("http://", adapter)
            self.session.mount("https://", adapter)
        self.session.headers["Accept-Encoding"] = "identity"

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
        """One attempt; the body is read up to ``limit`` bytes, ``timeout`` after its head."""
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
            return NetworkFailure("error", True, detail=type(exc).__name__)
        try:
            return _read(response, limit, time.monotonic() + timeout)
        finally:
            response.close()

    def _verify(self) -> Any:
        """The CAs to trust: the session's, else the environment's, else the system's."""
        if self.session.verify is not True or not self.base_url.startswith("https:"):
            return self.session.verify
        for variable in CA_VARIABLES:
            path = os.environ.get(variable, "").strip()
            if path:
                if not os.path.exists(path):
                    detail = f"{variable} names {path}, which does not exist"
                    return NetworkFailure("tls", False, detail=detail)
                return path
        return True


def _read(response: Any, limit: int, deadline: float) -> Reply:
    """The body, at most ``limit`` bytes, before ``deadline``."""
    status, headers = response.status_code, response.headers
    cut_short = functools.partial(Reply, status, headers, b"")
    if status < 200:  # an interim answer (103) taken for the final one: this one never came
        return cut_short(problem="broken")
    declared = headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limit:
        return cut_short(problem="too_large")
    chunks, size = [], 0
    read = getattr(response.raw, "read1", response.raw.read)  # read1: what has come (urllib3 2)
    try:
        while chunk := read(min(_CHUNK, limit + 1 - size), decode_content=False):
            size += len(chunk)
            if size > limit:
                return cut_short(problem="too_large")
            if time.monotonic() > deadline:
                return cut_short(problem="timeout")
            chunks.append(chunk)
    except (urllib3.exceptions.ReadTimeoutError, TimeoutError):
        return cut_short(problem="timeout")
    except (urllib3.exceptions.HTTPError, requests.RequestException, OSError):
        return cut_short(problem="broken")
    data, problem, body = decode_json(b"".join(chunks), limit)
    return Reply(status, headers, body, data, problem)


def decode_json(body: bytes, limit: int) -> tuple[Any, str | None, bytes]:
    """``(data, problem, body)``: the JSON in ``body``, gzip (sent unasked) undone."""
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
    chain = _chain(exc)
    proxy = any(isinstance(e, urllib3.exceptions.ProxyError) for e in chain)
    if isinstance(exc, requests.exceptions.SSLError):
        found = [e for e in chain if hasattr(e, "verify_message")]  # ssl.SSLCertVerificationError
        detail = str(getattr(found[0], "reason", None) or found[0]).lower() if found else ""
        detail = detail or "tls error"
        return NetworkFailure("tls", False, detail=detail.replace("_", " "))
    if any(isinstance(e, urllib3.exceptions.NameResolutionError) for e in chain):
        return NetworkFailure("dns", False, proxy=proxy)
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return NetworkFailure("connect_timeout", False, proxy=proxy)
    if any(isinstance(e, urllib3.exceptions.NewConnectionError) for e in chain):
        return NetworkFailure("refused", False, proxy=proxy)
    if proxy:
        return NetworkFailure("proxy", False, detail=type(exc).__name__, proxy=True)
    if isinstance(exc, requests.exceptions.ReadTimeout):
        return NetworkFailure("timeout", True)
    if isinstance(exc, requests.exceptions.ConnectionError):
        return NetworkFailure("dropped", True, detail=type(exc).__name__)
    if isinstance(exc, requests.exceptions.InvalidURL | requests.exceptions.InvalidHeader):
        return NetworkFailure("error", False, detail=type(exc).__name__)
    return NetworkFailure("error", True, detail=type(exc).__name__)


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


# -- who sends a request: signatures, nonces, tokens ------------------------------------------

AUTH_MODES = ("signature", "token")
TOKEN_PATH = "/api/v1/token"  # noqa: S105 - a path, not a secret
RENEW_FRACTION = 0.2  # renewed with less than this part of its life left, or RENEW_AHEAD_S
RENEW_AHEAD_S = 60.0
PAUSE_S = 10.0
"""A failed token request is not repeated for this long: a batch must not ask per entry."""
MAX_SKIP_MS = 60_000


class NonceSource:
    """Unix time in milliseconds, each value above every value drawn before for this key."""

    def __init__(self, access_key: str) -> None:
        digest = hashlib.sha256(("dict-magics nonces\0" + access_key).encode("utf-8", "replace"))
        self.path = localdata.location("nonces", digest.hexdigest()[:32] + ".nonce")
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._pid = 0
        self._last = 0
        self._floor = 0
        self._shared = fcntl is not None

    def __repr__(self) -> str:
        return f"NonceSource({self.path.name[:12]}\u2026)"

    def __call__(self) -> str:
        with self._lock:
            value = max(time.time_ns() // 1_000_000, self._last + 1, self._floor)
            if self._shared:
                try:
                    value = self._draw_shared(value)
                except OSError as exc:
                    self._shared = False
                    log.warning(
                        "cannot keep nonces in %s (%s): they are now unique within this process "
                        "only, so another process using this access key may be refused",
                        self.path.parent,
                        exc.strerror or exc,
                    )
            self._last = value
            return str(value)

    def skip_ahead(self, ms: int) -> None:
        """Move the next values ``ms`` (at most ``MAX_SKIP_MS``) past the clock: the service
        keeps refusing them as too small, so it accepted larger ones elsewhere."""
        self._floor = max(self._floor, time.time_ns() // 1_000_000 + min(ms, MAX_SKIP_MS))

    def _draw_shared(self, value: int) -> int:
        """Above the state file's value too, written back under ``flock``."""
        if self._fd is None or self._pid != os.getpid():  # a forked child opens its own
            localdata.home("nonces")
            self._fd = localdata.open_private(self.path, os.O_RDWR | os.O_CREAT)
            self._pid = os.getpid()
        fd = self._fd
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            raw = os.pread(fd, 32, 0)
            last = int(raw) if raw.strip().isdigit() and int(raw) < MAX_NONCE else 0
            value = max(value, last + 1)
            os.pwrite(fd, b"%020d\n" % value, 0)
            if len(raw) > 21:  # a damaged, longer content: cut off
                os.ftruncate(fd, 21)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
        return value


_sources: dict[tuple[str, str], NonceSource] = {}
_sources_lock = threading.Lock()


def nonces_for(access_key: str) -> NonceSource:
    """The one nonce source of ``access_key`` (and data folder) in this process."""
    key = (str(localdata.location()), access_key)
    with _sources_lock:
        source = _sources.get(key)
        if source is None:
            source = _sources[key] = NonceSource(access_key)
        return source


class SignatureAuth(Unpicklable, AuthBase):
    """accessKey, nonce and signature headers, drawn and signed as the request is prepared."""

    def __init__(self, access_key: str, secret_key: str, nonces: Callable[[], str]) -> None:
        self.access_key = access_key
        self.nonces = nonces
        self._mac = hmac.new(secret_key.encode("utf-8"), digestmod=hashlib.sha256)

    def __call__(self, request: Any) -> Any:
        nonce = self.nonces()
        mac = self._mac.copy()
        mac.update((nonce + request.path_url).encode("utf-8"))
        headers = request.headers
        headers["Content-Type"] = "application/json"
        headers["accessKey"] = self.access_key
        headers["nonce"] = nonce
        headers["signature"] = mac.hexdigest()
        return request

    def __copy__(self) -> SignatureAuth:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> SignatureAuth:
        return self

    def __repr__(self) -> str:
        return f"SignatureAuth(access_key={self.access_key!r}, secret_key=<hidden>)"


class BearerAuth(Unpicklable, AuthBase):
    """``Authorization: Bearer <token>`` (none for the token request)."""

    def __init__(self, token: Secret | None = None) -> None:
        self.token = token

    def __call__(self, request: Any) -> Any:
        request.headers["Content-Type"] = "application/json"
        if self.token is not None:
            request.headers["Authorization"] = f"Bearer {self.token}"
        return request

    def __repr__(self) -> str:
        return "BearerAuth(token=<hidden>)"


class SecretBody(Unpicklable, bytes):
    """The token request's body: it holds the secret, so it never shows itself."""

    def __repr__(self) -> str:
        return "<token request body hidden>"

    __str__ = __repr__


def token_request_body(access_key: str, secret_key: str, duration: int) -> SecretBody:
    """``{accessKey, secretKey, duration}`` as the token endpoint takes it."""
    data = {"accessKey": access_key, "secretKey": secret_key, "duration": int(duration)}
    return SecretBody(json.dumps(data).encode("utf-8"))


def _lifetime(token: str, asked: float) -> float:
    """Seconds the token lives: its JWT ``exp`` claim when readable, else what was asked."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        left = float(claims["exp"]) - time.time()
    except (IndexError, ValueError, KeyError, TypeError, OverflowError):
        return asked
    return max(0.0, min(left, asked)) if left == left else asked


class TokenState(Unpicklable):
    """The one token of a service and keys in this process, and when to renew it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._token: Secret | None = None
        self._renew_at = 0.0
        self.failure: Verdict | None = None
        """Why the last token request failed, until one succeeds."""
        self._quiet_until = 0.0

    def current(self, fetch: Callable[[], tuple[str, float] | Verdict]) -> Secret | Verdict:
        """The token held if good for a while yet, else a new one from ``fetch()`` (one thread
        fetches, the rest wait); a failure is given again, unasked, for ``PAUSE_S``."""
        with self._lock:
            if self._token is not None and time.monotonic() < self._renew_at:
                return self._token
            if self.failure is not None and time.monotonic() < self._quiet_until:
                return self.failure
            got = fetch()
            if isinstance(got, Verdict):
                self.failure, self._quiet_until = got, time.monotonic() + PAUSE_S
                return got
            value, asked = got
            self.failure = None
            life = _lifetime(value, asked)
            self._token = Secret(value)
            self._renew_at = time.monotonic() + life - min(RENEW_AHEAD_S, life * RENEW_FRACTION)
            return self._token

    def refused(self, token: str) -> None:
        """The service refused ``token``: the next request gets a new one."""
        with self._lock:
            if self._token is not None and hmac.compare_digest(self._token, token):
                self._token = None


_KEY = secrets.token_bytes(32)
_states: dict[str, TokenState] = {}
_states_lock = threading.Lock()


def shared(base_url: str, access_key: str, secret_key: str) -> TokenState:
    """The token state the clients of ``base_url`` with these keys share, found by a hash
    keyed with a random value of this process (never by the secret itself)."""
    digest = hmac.new(_KEY, digestmod=hashlib.sha256)
    for part in (base_url, access_key, str(secret_key)):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big") + data)
    with _states_lock:
        return _states.setdefault(digest.hexdigest(), TokenState())


# -- what an answer means --------------------------------------------------------------------

IDEMPOTENT = frozenset({"DELETE", "GET", "PUT"})
EXCERPT_CHARS = 160
NONCE_REUSED = (
    "the service says the request's nonce was already used, twice in a row: another process "
    "(a second notebook, a script, the command line) is probably sending requests with the "
    "same access key at the same moment, or a gateway replayed the request; try again, or give "
    "each process its own access key"
)
NONCE_TOO_BIG = (
    "the service refused the request's nonce as too big: this computer's clock may be far "
    "ahead, or the nonce state file (in the data folder's 'nonces' folder) holds a value the "
    "service cannot take; set the clock right, or delete that file"
)
_NONCE_USED = re.compile(
    r"nonce.*\b(already|used|reused|replay(ed)?|duplicated?|seen)\b"
    r"|\b(replay(ed)?|duplicated?|reused)\b.*nonce",
    re.IGNORECASE,
)
FROM_LANG, FROM_TEXT, TO_LANG, TO_TEXT = Entry.FIELDS[1:]


@dataclass(frozen=True)
class Verdict:
    """What one attempt's answer means (or, from the client, a whole request's). ``again``:
    send it again (after ``retry_after`` seconds, if the service said); an ``unknown`` one may
    have been acted on, so a later "no such entry" proves nothing."""

    outcome: Outcome
    cause: Cause
    reason: str | None = None
    http_status: int | None = None
    again: bool = False
    retry_after: float | None = None
    nonce_reused: bool = False
    data: Any = None
    code: int | None = None
    vendor_message: str | None = None
    attempts: int = 1
    elapsed: float = 0.0
    key: str | None = None

    @property
    def rate_limited(self) -> bool:
        """429 or 40103: not acted on; every worker pauses and the request goes again."""
        return self.http_status == 429 or self.code == codes.FREQUENCY_LIMIT


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), else ``None``."""
    if not value:
        return None
    try:
        seconds = float(value)
        return max(0.0, seconds) if seconds == seconds else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    return None if when.tzinfo is None else max(0.0, when.timestamp() - time.time())


_CONNECT = "could not connect to {where}"
_NEVER_REACHED = ", so the request never reached the service"
_NOT_SENT = {  # why a request certainly never left, by kind: its cause and words
    "dns": (Cause.DNS, "could not resolve the host name of {where}; nothing was sent"),
    "tls": (Cause.TLS, "TLS handshake with {where} failed ({detail}); nothing was sent"),
    "refused": (Cause.UNAVAILABLE, f"{_CONNECT} (connection refused){_NEVER_REACHED}"),
    "connect_timeout": (Cause.UNAVAILABLE, f"{_CONNECT} within {{timeout:g}} s{_NEVER_REACHED}"),
    "proxy": (Cause.ERROR, "the proxy for {host} would not open a connection; nothing was sent"),
}


def _judge_failure(method: str, failure: NetworkFailure, host: str, timeout: float) -> Verdict:
    kind, where = failure.kind, f"the proxy for {host}" if failure.proxy else host
    if not failure.sent:
        # Certainly not sent: a read may always go again, the rest after the kinds that say so.
        worth = kind in ("refused", "connect_timeout") or method == "GET"
        cause, words = _NOT_SENT.get(
            kind, (Cause.ERROR, "the request could not be sent ({detail})")
        )
        reason = words.format(where=where, host=host, detail=failure.detail, timeout=timeout)
        return Verdict("failure", cause, reason, again=worth)
    if kind == "timeout":
        return Verdict("unknown", Cause.TIMEOUT, f"no answer within the {timeout:g} s deadline")
    if kind == "dropped":
        reason = "the connection was closed before an answer came"
        return Verdict("unknown", Cause.CONNECTION_LOST, reason, again=method in IDEMPOTENT)
    reason = f"the request failed after it may have been sent ({failure.detail})"
    return Verdict("unknown", Cause.ERROR, reason)


def judge(
    method: str, answer: Reply | NetworkFailure, limit: int, *, host: str, timeout: float
) -> Verdict:
    """What one attempt's answer (or failure) means for a ``method`` request to ``host``."""
    if isinstance(answer, NetworkFailure):
        return _judge_failure(method, answer, host, timeout)
    reply = answer
    status, headers, data, problem = reply.status, reply.headers, reply.data, reply.problem
    if 300 <= status < 400:
        target = host_of(headers.get("Location") or "") or "an unnamed location"
        reason = (
            f"the service redirected to {target}; not followed, so the credentials went "
            "nowhere else"
        )
        # 307/308: "not done here"; 301/302/303 also come after an action (post-redirect-get).
        outcome: Outcome = "failure" if status in (307, 308) else "unknown"
        return Verdict(outcome, Cause.REDIRECT, reason, status)
    vendor = _vendor_error(data) if problem is None else None
    if vendor is not None:
        return _judge_code(status, headers, *vendor)
    message = _message(data)
    if status in (401, 403):
        if _NONCE_USED.search(message):
            return Verdict("failure", Cause.NONCE_REUSED, NONCE_REUSED, status, nonce_reused=True)
        reason = "the service refused the credentials" + (f": {message}" if message else "")
        reason += " (check the access key, the secret key, and this computer's clock)"
        return Verdict("failure", Cause.AUTH, reason, status)
    if status in (429, 503):
        after = parse_retry_after(headers.get("Retry-After"))
        cause, reason = Cause.RATE_LIMITED, "rate-limited by the service"
        if status == 503:
            cause, reason = Cause.UNAVAILABLE, "the service is unavailable"
        return Verdict("failure", cause, reason, status, again=True, retry_after=after)
    if status in (502, 504):
        reason = "a gateway answered instead of the service, which may have acted"
        return Verdict("unknown", Cause.GATEWAY, reason, status, method in IDEMPOTENT)
    said = data.get("status") if isinstance(data, dict) and problem is None else None
    if said == "failure":
        reason = "the service answered status 'failure'" + (f": {message}" if message else "")
        return Verdict("failure", Cause.REFUSED, reason, status)
    if said == "success" and 200 <= status < 300:
        return Verdict("success", Cause.OK, None, status, data=data)
    if said == "success":
        reason = f"the service answered status 'success' with HTTP {status}: it may have acted"
        return Verdict("unknown", Cause.BAD_ANSWER, reason, status)
    cause, reason = _unreadable(data, problem, reply.body, limit, timeout)
    return Verdict("failure" if 400 <= status < 500 else "unknown", cause, reason, status)


def _judge_code(status: int, headers: Any, code: int, message: str) -> Verdict:
    said = f"[{code}] {message}".rstrip()
    cause, reason, after = Cause.REFUSED, f"the service answered status 'failure': {said}", None
    if code == codes.NONCE_TOO_SMALL:
        cause = Cause.NONCE
        reason = f"the service refused the request's nonce as too small ({said}); not acted on"
    elif code == codes.NONCE_TOO_BIG:
        cause, reason = Cause.NONCE, f"{NONCE_TOO_BIG} ({said})"
    elif code == codes.FREQUENCY_LIMIT:
        cause, reason = Cause.RATE_LIMITED, f"rate-limited by the service ({said})"
        after = parse_retry_after(headers.get("Retry-After"))
    elif code in codes.AUTH_CODES:
        check = "the access key and the secret key"
        if code == codes.ENGINE_AUTH:
            check = "the token (a new one is needed) and the keys"
        cause, reason = Cause.AUTH, f"the service refused the credentials: {said} (check {check})"
    elif code in codes.DATA_CODES:
        cause, reason = Cause.INVALID, f"the service refused the request's data: {said}"
    again = code == codes.FREQUENCY_LIMIT
    return Verdict(
        "failure", cause, reason, status, again, after, code=code, vendor_message=message
    )


def _vendor_error(data: Any) -> tuple[int, str] | None:
    """``(code, message)`` of ``{"status": "failure", "data": {"code", "message"}}``."""
    inner = data.get("data") if isinstance(data, dict) and data.get("status") == "failure" else None
    code = inner.get("code") if isinstance(inner, dict) else None
    if isinstance(code, str) and code.isascii() and code.isdigit() and len(code) < 10:
        code = int(code)
    if isinstance(code, bool) or not isinstance(code, int):
        return None
    message = inner.get("message")  # type: ignore[union-attr]
    text = excerpt(message.encode("utf-8", "replace")) if isinstance(message, str) else ""
    return code, text or codes.MESSAGES.get(code, "")


_UNREADABLE = {  # what kept an answer from being read: its cause and words
    "too_large": (Cause.TOO_LARGE, "the answer is larger than {size}"),
    "timeout": (Cause.TIMEOUT, "the answer began but did not arrive whole within {timeout}"),
    "broken": (Cause.CONNECTION_LOST, "the connection broke before the whole answer arrived"),
    "empty": (Cause.BAD_ANSWER, "the answer is empty"),
    "bad_gzip": (Cause.BAD_ANSWER, "the answer is gzip data that does not unpack"),
    "not_json": (Cause.BAD_ANSWER, "the answer is not JSON: {body!r}"),
}


def _unreadable(
    data: Any, problem: str | None, body: bytes, limit: int, timeout: float
) -> tuple[Cause, str]:
    """Why an answer says neither success nor failure, and its cause."""
    if problem in _UNREADABLE:
        cause, words = _UNREADABLE[problem]
        size = f"{limit // 2**20} MiB" if limit >= 2**20 else f"{limit // 1024} KiB"
        deadline = f"the {timeout:g} s deadline"
        return cause, words.format(size=size, timeout=deadline, body=excerpt(body))
    if not isinstance(data, dict) or "status" not in data:
        return Cause.BAD_ANSWER, f"the JSON answer has no status: {excerpt(body)!r}"
    if data["status"] == "success":
        return Cause.BAD_ANSWER, "the service answered status 'success' with an error code"
    status = excerpt(str(data["status"]).encode())
    return Cause.BAD_ANSWER, f"the answer has an unexpected status {status!r}"


def parse_listing(data: Any, where: str) -> list[Entry]:
    """The entries under ``data.entries`` or a top-level ``entries`` (both documented)."""

    def malformed(problem: str) -> ServiceError:
        text = excerpt(problem.encode("utf-8", "replace"))
        return ServiceError(
            f"the listing from {where} is malformed: {text}", cause=Cause.BAD_ANSWER
        )

    inner = data.get("data") if isinstance(data, dict) else None
    if isinstance(inner, dict) and "entries" in inner:
        entries = inner["entries"]
    elif isinstance(data, dict) and "entries" in data:
        entries = data["entries"]
    else:
        raise malformed("it has neither 'data.entries' nor 'entries'")
    if not isinstance(entries, list):
        raise malformed("its 'entries' is not a list")
    parsed: list[Entry] = []
    append = parsed.append
    for index, item in enumerate(entries):
        get = item.get if type(item) is dict else None
        terms = (get(FROM_LANG), get(FROM_TEXT), get(TO_LANG), get(TO_TEXT)) if get else ()
        entry_id = get("id") if get else None
        if type(entry_id) is int and 0 <= entry_id <= MAX_ID:
            entry_id = str(entry_id)
        elif not (
            type(entry_id) is str
            and entry_id.isascii()
            and entry_id.isdigit()
            and entry_id[0] != "0"
            and len(entry_id) < 19
        ):  # not the common case (checked in a few type tests: listings can be huge)
            try:
                entry_id = check_id(entry_id)
            except InvalidIdError:
                what = f"its id {excerpt(repr(entry_id).encode())} is not a whole number"
                raise malformed(f"item {index + 1} of {len(entries)}: {what}") from None
        if not all(type(t) is str for t in terms) or len(terms) != 4:
            try:
                terms = Entry.from_service(item).terms
            except ValueError as exc:
                raise malformed(f"item {index + 1} of {len(entries)}: {exc}") from None
        append(Entry(entry_id, *terms))
    return parsed


def _message(data: Any) -> str:
    """The service's own words in a JSON answer, if any (as an excerpt)."""
    if not isinstance(data, dict):
        return ""
    inner = data.get("data")
    if isinstance(inner, dict) and isinstance(inner.get("message"), str):
        code = inner.get("code")
        shown = f"[{code}] " if isinstance(code, int) and not isinstance(code, bool) else ""
        return excerpt((shown + inner["message"]).encode())
    for key in ("message", "error", "msg", "detail"):
        if isinstance(data.get(key), str):
            return excerpt(data[key].encode())
    return ""


def excerpt(raw: bytes) -> str:
    """A short, single-line, printable excerpt of something a server sent."""
    text = raw.decode("utf-8", errors="replace")
    cleaned = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return cleaned[:EXCERPT_CHARS] + "\u2026" if len(cleaned) > EXCERPT_CHARS else cleaned
