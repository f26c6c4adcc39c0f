"""How a request proves who sends it: a signature on every request, or a token.

``SignatureAuth`` signs when requests prepares the request: a fresh nonce, and
``signature = hex(HMAC-SHA256(secret, nonce + path))`` over the path as sent, as the vendor's
samples compute it (the sandbox checks with this same ``sign``). The service refuses a nonce not
greater than the last one it accepted for the key (40005), and a user may run two kernels or a
kernel and the command line with one key: so ``NonceSource`` keeps each key's last nonce in
``<DICT_MAGICS_HOME>/nonces/<hash of the key>.nonce``, read and written under ``flock`` on a
descriptor this process keeps open (a few system calls a nonce). Requests sent in parallel can
still arrive out of order; the client re-sends a refused one with a fresh nonce. Token auth: one
``POST /api/v1/token`` (``{accessKey, secretKey, duration}`` → ``data.encodedJWT``), then
``Authorization: Bearer``; one token per service and keys in the process (``shared``), renewed
before it expires and once after a refusal. Neither the secret nor a token shows in a repr, a
log, an exception or a pickle.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from requests.auth import AuthBase

from .. import localdata
from ..models.codes import MAX_NONCE
from ..models.secret import Secret, Unpicklable

try:
    import fcntl
except ImportError:  # Windows: nonces are shared by this process's threads only
    fcntl = None  # type: ignore[assignment]


AUTH_MODES = ("signature", "token")
TOKEN_PATH = "/api/v1/token"  # noqa: S105 - a path, not a secret
RENEW_FRACTION = 0.2
"""A token is renewed once less than this part of its life is left, or ``RENEW_AHEAD_S``."""
RENEW_AHEAD_S = 60.0
PAUSE_S = 10.0
"""After a token request failed, every request gets that failure for this long, unasked: a
batch must not ask per entry (a lockout risk where the keys are refused)."""


log = logging.getLogger(__name__)
MAX_SKIP_MS = 60_000
"""The most ``skip_ahead`` moves the values past the clock at once."""


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
        """Make the next values at least ``ms`` (at most ``MAX_SKIP_MS``) past the clock: the
        service keeps refusing them as too small, so it accepted larger ones elsewhere."""
        self._floor = max(self._floor, time.time_ns() // 1_000_000 + min(ms, MAX_SKIP_MS))

    def _draw_shared(self, value: int) -> int:
        """Above the state file's value too, written back (under ``flock``)."""
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


def sign(path: str, secret_key: str, nonce: str) -> str:
    """Lowercase hex HMAC-SHA256 keyed by ``secret_key`` over ``nonce + path`` (UTF-8)."""
    message = (nonce + path).encode("utf-8")
    return hmac.new(secret_key.encode("utf-8"), message, hashlib.sha256).hexdigest()


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
    """``Authorization: Bearer <token>`` (no token: the token request, keys in its body)."""

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
    """The token request's body (it holds the secret): bytes that never show themselves."""

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
        self.failure: Exception | None = None
        """Why the last token request failed, until one succeeds."""
        self._quiet_until = 0.0
        self.fetched = 0
        """How many tokens were obtained (for tests and benchmarks)."""

    def __repr__(self) -> str:
        return f"TokenState(fetched={self.fetched})"

    def current(self, fetch: Callable[[], tuple[str, float]]) -> Secret:
        """A token good for a while yet: the one held, or a new one from ``fetch()`` (``(token,
        lifetime asked)``; it raises if none can be had: that exception is raised again,
        unasked, for ``PAUSE_S``). One thread fetches, the rest wait."""
        with self._lock:
            if self._token is not None and time.monotonic() < self._renew_at:
                return self._token
            if self.failure is not None and time.monotonic() < self._quiet_until:
                raise self.failure
            try:
                value, asked = fetch()
            except Exception as exc:
                self.failure, self._quiet_until = exc, time.monotonic() + PAUSE_S
                raise
            self.failure = None
            life = _lifetime(value, asked)
            self._token = Secret(value)
            self._renew_at = time.monotonic() + life - min(RENEW_AHEAD_S, life * RENEW_FRACTION)
            self.fetched += 1
            return self._token

    def refused(self, token: str) -> None:
        """The service refused ``token``: the next request gets a new one (unless another
        thread renewed it already)."""
        with self._lock:
            if self._token is not None and hmac.compare_digest(self._token, token):
                self._token = None

    def forget(self) -> None:
        """Drop the token held (and a failure): the next request asks for a new one."""
        with self._lock:
            self._token = self.failure = None


_KEY = secrets.token_bytes(32)
_states: dict[str, TokenState] = {}
_states_lock = threading.Lock()


def shared(base_url: str, access_key: str, secret_key: str) -> TokenState:
    """The token state every client of ``base_url`` with these keys shares in this process,
    found by a hash keyed with a random value of this process, never by the secret itself."""
    digest = hmac.new(_KEY, digestmod=hashlib.sha256)
    for part in (base_url, access_key, str(secret_key)):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big") + data)
    with _states_lock:
        return _states.setdefault(digest.hexdigest(), TokenState())
