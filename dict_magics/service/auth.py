"""Token auth: ``POST /api/v1/token`` once, then ``Authorization: Bearer <jwt>`` on every request.

The vendor's own dictionary client authenticates this way: the access key and the secret go in
the body of one token request (and only there, only over https or to a loopback sandbox), and
the token stands in for ``accessKey`` / ``nonce`` / ``signature`` until it expires. One token
serves every client of one service, key and secret in this process (``shared``), so forty
cells or eight workers ask for one token, not forty. It is renewed before it expires
(``RENEW_FRACTION`` of its life ahead, at most ``RENEW_AHEAD_S``) and once after the service
refuses it. It lives in memory only, as a ``Secret``: no repr, log line, exception, file or
pickle shows it.

``TokenAuth`` only fills the header: getting a token is a request of its own, made by the client
(with its retries and deadline) before the request it is for, never from inside one.
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
from dataclasses import dataclass
from typing import Any

from requests import PreparedRequest
from requests.auth import AuthBase

from ..models.secret import Secret, Unpicklable

__all__ = [
    "AUTH_MODES",
    "RENEW_AHEAD_S",
    "RENEW_FRACTION",
    "TOKEN_PATH",
    "PlainJSON",
    "SecretBody",
    "TokenAuth",
    "TokenState",
    "shared",
    "token_request_body",
]

AUTH_MODES = ("signature", "token")
TOKEN_PATH = "/api/v1/token"  # noqa: S105 - a path, not a secret
RENEW_FRACTION = 0.2
"""A token is renewed once less than this part of its life is left..."""
RENEW_AHEAD_S = 60.0
"""...or less than this many seconds, whichever comes first."""
_KEY = secrets.token_bytes(32)


class SecretBody(Unpicklable, bytes):
    """The token request's body (it holds the secret): bytes that never show themselves."""

    def __repr__(self) -> str:
        return "<token request body hidden>"

    __str__ = __repr__


def token_request_body(access_key: str, secret_key: str, duration: int) -> SecretBody:
    """``{accessKey, secretKey, duration}`` as the token endpoint takes it."""
    data = {"accessKey": access_key, "secretKey": secret_key, "duration": int(duration)}
    return SecretBody(json.dumps(data).encode("utf-8"))


class PlainJSON(AuthBase):
    """No credentials in the headers (the token request carries them in its body)."""

    def __call__(self, request: PreparedRequest) -> PreparedRequest:
        request.headers["Content-Type"] = "application/json"
        return request

    def __repr__(self) -> str:
        return "PlainJSON()"


@dataclass(frozen=True)
class _Token:
    value: Secret
    generation: int
    renew_at: float  # monotonic
    expires_at: float  # monotonic

    def __repr__(self) -> str:
        return f"_Token(generation={self.generation}, value=<hidden>)"


def _expiry(token: str, asked: float) -> float:
    """Seconds the token lives: its JWT ``exp`` claim when readable, else what was asked."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        left = float(claims["exp"]) - time.time()
    except (IndexError, ValueError, KeyError, TypeError, OverflowError):
        return asked
    return max(0.0, min(left, asked)) if left == left else asked


class TokenState(Unpicklable):
    """The one token of a service, key and secret in this process, and when to renew it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._token: _Token | None = None
        self._generation = 0
        self.fetched = 0
        """How many tokens were obtained (for tests and benchmarks)."""

    def __repr__(self) -> str:
        state = "none" if self._token is None else f"generation {self._token.generation}"
        return f"TokenState({state})"

    def current(self, fetch: Callable[[], tuple[str, float]]) -> tuple[Secret, int]:
        """A token good for a while yet, and its generation: the one held, or a new one from
        ``fetch()`` (``(token, lifetime asked)``; it raises if none can be had). One thread
        fetches at a time; the others wait and then share its token."""
        with self._lock:
            token = self._token
            if token is not None and time.monotonic() < token.renew_at:
                return token.value, token.generation
            value, asked = fetch()
            now = time.monotonic()
            life = _expiry(value, asked)
            self._generation += 1
            self.fetched += 1
            ahead = min(RENEW_AHEAD_S, life * RENEW_FRACTION)
            self._token = _Token(Secret(value), self._generation, now + life - ahead, now + life)
            return self._token.value, self._generation

    def refused(self, generation: int) -> None:
        """The service refused the token of ``generation``: the next request gets a new one
        (unless another thread renewed it already)."""
        with self._lock:
            if self._token is not None and self._token.generation == generation:
                self._token = None

    def forget(self) -> None:
        with self._lock:
            self._token = None


_states: dict[str, TokenState] = {}
_states_lock = threading.Lock()


def shared(base_url: str, access_key: str, secret_key: str) -> TokenState:
    """The token state every client of ``base_url`` with these keys shares in this process.

    Keyed by a hash keyed with a random value of this process, never by the secret itself."""
    digest = hmac.new(_KEY, digestmod=hashlib.sha256)
    for part in (base_url, access_key, str(secret_key)):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big") + data)
    key = digest.hexdigest()
    with _states_lock:
        state = _states.get(key)
        if state is None:
            state = _states[key] = TokenState()
        return state


class TokenAuth(Unpicklable, AuthBase):
    """Puts the token the sending thread was given (``use``) in ``Authorization: Bearer``."""

    def __init__(self, state: TokenState) -> None:
        self.state = state
        self._local = threading.local()

    def use(self, token: Secret, generation: int) -> None:
        """The token this thread's next request carries."""
        self._local.token = (token, generation)

    @property
    def generation(self) -> int:
        """The generation of the token this thread's last request carried (0: none)."""
        held = getattr(self._local, "token", None)
        return 0 if held is None else held[1]

    def __call__(self, request: PreparedRequest) -> PreparedRequest:
        held: Any = getattr(self._local, "token", None)
        request.headers["Content-Type"] = "application/json"
        if held is not None:
            request.headers["Authorization"] = f"Bearer {held[0]}"
        return request

    def __copy__(self) -> TokenAuth:
        return TokenAuth(self.state)

    def __deepcopy__(self, memo: dict[int, Any]) -> TokenAuth:
        return self.__copy__()

    def __repr__(self) -> str:
        return "TokenAuth(token=<hidden>)"
