"""Who may use the sandbox, and how often: signatures, nonce rules, Bearer tokens, rate limit.

The signature is written here, not imported from the client: a stand-in for the vendor that
shared the client's code would hide the client's bugs. Tokens are kept only as hashes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections.abc import Callable, Mapping

from ..models import codes
from .bodies import Rejected, coded

__all__ = ["NONCE_RULES", "NonceBook", "TokenBook", "TokenBucket", "check_key", "check_signed"]

NONCE_RULES = ("increasing", "unique", "none")
NONCE_WINDOW_S = 300.0
"""The ``unique`` rule's window around the server's clock (it must forget old nonces)."""
DEFAULT_TOKEN_S = 1800
"""A token's lifetime when the request names none (the vendor documents 30 minutes)."""
MAX_TOKEN_S = 86_400


def sign(path: str, secret_key: str, nonce: str) -> str:
    """The vendor's signature: lowercase hex HMAC-SHA256(secret key, nonce + path as sent)."""
    return hmac.new(secret_key.encode(), (nonce + path).encode(), hashlib.sha256).hexdigest()


class NonceBook:
    """The nonces accepted so far, per access key, under one rule: ``increasing`` (the
    vendor's: each greater than the last accepted), ``unique`` (any unused one within 5
    minutes of the clock) or ``none`` (any number, replays too)."""

    def __init__(self, rule: str = "increasing") -> None:
        self.rule = rule
        self._lock = threading.Lock()
        self._last: dict[str, int] = {}
        self._seen: dict[tuple[str, int], float] = {}
        self._prune_at = 10_000

    def admit(self, access_key: str, nonce: int) -> Rejected | None:
        """Accept ``nonce`` for ``access_key`` (and remember it), or say why not."""
        if self.rule == "none":
            return None
        if self.rule == "unique":
            return self._admit_unique(access_key, nonce)
        with self._lock:
            if nonce <= self._last.get(access_key, 0):
                return coded(codes.NONCE_TOO_SMALL)
            self._last[access_key] = nonce
        return None

    def _admit_unique(self, access_key: str, nonce: int) -> Rejected | None:
        now = time.time()
        if nonce / 1000 - now > NONCE_WINDOW_S:
            return coded(codes.NONCE_TOO_BIG, "more than 5 minutes ahead of the server's clock")
        if now - nonce / 1000 > NONCE_WINDOW_S:
            return coded(codes.NONCE_TOO_SMALL, "more than 5 minutes behind the server's clock")
        with self._lock:
            if (access_key, nonce) in self._seen:
                return coded(codes.NONCE_TOO_SMALL, "already used (a replayed request)")
            self._seen[access_key, nonce] = now
            if len(self._seen) > self._prune_at:
                cutoff = now - 2 * NONCE_WINDOW_S
                self._seen = {k: t for k, t in self._seen.items() if t > cutoff}
                self._prune_at = max(10_000, 2 * len(self._seen))  # O(1) a request on average
        return None


def check_key(access_key: str, expected: str) -> Rejected | None:
    """40003 for a key that cannot be one, 40002 for one the sandbox does not know."""
    if not (0 < len(access_key) <= 256 and access_key.isascii() and access_key.isprintable()):
        return coded(codes.KEY_INVALID, "the access key is malformed")
    if not hmac.compare_digest(access_key.encode(), expected.encode()):
        return coded(codes.KEY_UNKNOWN)
    return None


def check_signed(
    headers: Mapping[str, str], path: str, access_key: str, secret_key: str, nonces: NonceBook
) -> Rejected | None:
    """Why a signed request is not authentic, or ``None``. The nonce rule comes last, so a
    forged request cannot use up a nonce."""
    named = {name: headers.get(name) for name in ("accessKey", "nonce", "signature")}
    missing = [name for name, value in named.items() if not value]
    if missing:
        return coded(codes.MISSING_ARGUMENT, f"header(s) required: {', '.join(missing)}")
    sent_key, nonce, signature = named.values()
    assert sent_key and nonce and signature
    problem = check_key(sent_key, access_key)
    if problem is not None:
        return problem
    if not (nonce.isascii() and nonce.isdigit()) or int(nonce) > codes.MAX_NONCE:
        return coded(codes.NONCE_TOO_BIG, f"a nonce is a number up to {codes.MAX_NONCE}")
    if not hmac.compare_digest(signature, sign(path, secret_key, nonce)):
        return coded(codes.SIGNATURE_INCORRECT)
    return nonces.admit(sent_key, int(nonce))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class TokenBook:
    """Tokens issued by ``POST /api/v1/token``: JWT-shaped, opaque, expiring. ``lifetime``
    overrides every requested duration (1 s lets tests see tokens expire mid-batch)."""

    def __init__(self, lifetime: float | None = None) -> None:
        self.lifetime = lifetime
        self._lock = threading.Lock()
        self._expiry: dict[str, float] = {}
        self._key = secrets.token_bytes(32)
        self.issued = 0

    @staticmethod
    def _digest(token: str) -> str:
        return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()

    def issue(self, duration: int | None) -> str:
        now = time.time()
        seconds = self.lifetime or float(min(duration or DEFAULT_TOKEN_S, MAX_TOKEN_S))
        claims = {"sub": "sandbox", "iat": int(now), "exp": now + seconds}
        head_body = ".".join(
            _b64(json.dumps(part).encode())
            for part in ({"alg": "HS256", "typ": "JWT"}, {**claims, "jti": secrets.token_hex(8)})
        )
        mac = hmac.new(self._key, head_body.encode(), hashlib.sha256).digest()
        token = f"{head_body}.{_b64(mac)}"
        with self._lock:
            self._expiry = {d: t for d, t in self._expiry.items() if t > now}
            self._expiry[self._digest(token)] = now + seconds
            self.issued += 1
        return token

    def check(self, authorization: str) -> Rejected | None:
        """40001 unless ``authorization`` is ``Bearer <a token issued here, not expired>``."""
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return coded(codes.ENGINE_AUTH, "the Authorization header must be 'Bearer <token>'")
        with self._lock:
            expiry = self._expiry.get(self._digest(token.strip()))
        if expiry is None:
            return coded(codes.ENGINE_AUTH, "the token is not valid")
        if expiry <= time.time():
            return coded(codes.ENGINE_AUTH, "the token has expired")
        return None

    def revoke_all(self) -> None:
        with self._lock:
            self._expiry.clear()


class TokenBucket:
    """The rate limit: ``rate`` tokens a second, at most ``burst`` held, one per request.
    Starts full, so a burst right after start passes, as a real service allows."""

    def __init__(
        self, rate: float, burst: int, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if not rate > 0:
            raise ValueError(f"rate limit must be above 0 requests a second, not {rate!r}")
        if burst < 1:
            raise ValueError(f"burst must be at least 1, not {burst!r}")
        self.rate, self.burst, self._clock = float(rate), burst, clock
        self._lock = threading.Lock()
        self._tokens, self._at = float(burst), clock()

    def take(self) -> bool:
        """Take a token if one is there: True if the request may pass."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
            self._at = now
            if self._tokens < 1:
                return False
            self._tokens -= 1
            return True
