"""How a request proves who sends it: a signature on every request, or a token.

``SignatureAuth`` signs when requests prepares the request: a fresh nonce, and
``signature = hex(HMAC-SHA256(secret, nonce + path))`` over the path as sent, as the vendor's
samples compute it (the sandbox checks with this same ``sign``). Token auth: one
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
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from requests.auth import AuthBase

from ..models.secret import Secret, Unpicklable

__all__ = [
    "AUTH_MODES",
    "TOKEN_PATH",
    "BearerAuth",
    "SecretBody",
    "SignatureAuth",
    "TokenState",
    "shared",
    "sign",
    "token_request_body",
]

AUTH_MODES = ("signature", "token")
TOKEN_PATH = "/api/v1/token"  # noqa: S105 - a path, not a secret
RENEW_FRACTION = 0.2
"""A token is renewed once less than this part of its life is left, or ``RENEW_AHEAD_S``."""
RENEW_AHEAD_S = 60.0


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
        self.fetched = 0
        """How many tokens were obtained (for tests and benchmarks)."""

    def __repr__(self) -> str:
        return f"TokenState(fetched={self.fetched})"

    def current(self, fetch: Callable[[], tuple[str, float]]) -> Secret:
        """A token good for a while yet: the one held, or a new one from ``fetch()`` (``(token,
        lifetime asked)``; it raises if none can be had). One thread fetches, the rest wait."""
        with self._lock:
            if self._token is not None and time.monotonic() < self._renew_at:
                return self._token
            value, asked = fetch()
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
        """Drop the token held: the next request gets a new one."""
        with self._lock:
            self._token = None


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
