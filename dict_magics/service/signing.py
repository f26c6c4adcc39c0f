"""The one signing helper every request goes through.

The service authenticates a request by ``signature = hex(HMAC-SHA256(secret, nonce + path))``,
as its own client samples compute it. Keeping this in one place means the magics, the panel,
the command line and the sandbox can never disagree about what a valid request is.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
import time

from requests import PreparedRequest
from requests.auth import AuthBase

__all__ = ["NonceSource", "SignedAuth", "next_nonce", "sign"]


def sign(path: str, secret_key: str, nonce: str) -> str:
    """Lowercase hex HMAC-SHA256 keyed by ``secret_key`` over ``nonce + path`` (UTF-8)."""
    message = (nonce + path).encode("utf-8")
    return hmac.new(secret_key.encode("utf-8"), message, hashlib.sha256).hexdigest()


class NonceSource:
    """Unix time in milliseconds, strictly increasing across every caller of this instance.

    The service may reject a nonce it has seen; two requests in the same millisecond (several
    workers, a fast retry) must therefore still get different values.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = 0

    def __call__(self) -> str:
        now = time.time_ns() // 1_000_000
        with self._lock:
            self._last = max(now, self._last + 1)
            return str(self._last)


next_nonce = NonceSource()
"""The process-wide nonce source: one sequence for every client, so nonces never repeat."""


class SignedAuth(AuthBase):
    """Signs the prepared request at send time, over its exact ``path_url``.

    Signing the prepared request rather than a path we built ourselves guarantees that what is
    signed is byte for byte what goes on the wire. Every call takes a fresh nonce, so a retried
    request is a new, validly signed request and never a replay.
    """

    def __init__(self, access_key: str, secret_key: str, nonces: NonceSource = next_nonce) -> None:
        self.access_key = access_key
        self._secret_key = secret_key
        self._nonces = nonces

    def __call__(self, request: PreparedRequest) -> PreparedRequest:
        nonce = self._nonces()
        request.headers["Content-Type"] = "application/json"
        request.headers["accessKey"] = self.access_key
        request.headers["nonce"] = nonce
        request.headers["signature"] = sign(request.path_url, self._secret_key, nonce)
        return request

    def __repr__(self) -> str:
        return f"SignedAuth(access_key={self.access_key!r}, secret_key=<hidden>)"
