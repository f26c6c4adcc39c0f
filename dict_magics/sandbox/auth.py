"""Who may use the sandbox: signed requests (access key, nonce, signature) or Bearer tokens.

Nonces follow one of two rules. ``increasing`` (the default) is the vendor's documentation:
each request's nonce must be greater than the last one accepted for its access key (40005
otherwise). ``unique`` is the sandbox's old, lenient rule: any nonce within 5 minutes of the
clock that the key has not used yet, for tests about something else that need a forgiving
server. Tokens are opaque, expire, and are kept only as hashes (never logged or stored as sent).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections.abc import Mapping

from ..models import codes
from ..service.auth import sign
from .bodies import Rejected, coded

__all__ = ["NONCE_RULES", "NONCE_WINDOW_S", "NonceBook", "TokenBook", "check_signed"]

NONCE_RULES = ("increasing", "unique")
NONCE_WINDOW_S = 300.0
"""The ``unique`` rule's window around the server's clock (it must forget old nonces)."""
DEFAULT_TOKEN_S = 1800
"""A token's lifetime when the request names none (the vendor documents 30 minutes)."""
MAX_TOKEN_S = 86_400
MAX_KEY_CHARS = 256


class NonceBook:
    """The nonces accepted so far, per access key, under the chosen rule."""

    def __init__(self, rule: str = "increasing") -> None:
        if rule not in NONCE_RULES:
            raise ValueError(f"unknown nonce rule {rule!r}; one of {', '.join(NONCE_RULES)}")
        self.rule = rule
        self._lock = threading.Lock()
        self._last: dict[str, int] = {}
        self._seen: dict[tuple[str, int], float] = {}
        self._prune_at = 10_000

    def last(self, access_key: str) -> int:
        """The last nonce accepted for ``access_key`` (0 before any)."""
        with self._lock:
            return self._last.get(access_key, 0)

    def admit(self, access_key: str, nonce: int) -> Rejected | None:
        """Accept ``nonce`` for ``access_key`` (and remember it), or say why not."""
        if self.rule == "unique":
            return self._admit_unique(access_key, nonce)
        with self._lock:
            last = self._last.get(access_key, 0)
            if nonce <= last:
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
            key = (access_key, nonce)
            if key in self._seen:
                return coded(codes.NONCE_TOO_SMALL, "already used (a replayed request)")
            self._seen[key] = now
            self._last[access_key] = max(nonce, self._last.get(access_key, 0))
            if len(self._seen) > self._prune_at:
                cutoff = now - 2 * NONCE_WINDOW_S
                self._seen = {k: t for k, t in self._seen.items() if t > cutoff}
                # Prune again only once the table has doubled: O(1) per request on average.
                self._prune_at = max(10_000, 2 * len(self._seen))
        return None


def _well_formed_key(access_key: str) -> bool:
    return (
        0 < len(access_key) <= MAX_KEY_CHARS and access_key.isascii() and access_key.isprintable()
    )


def check_key(access_key: str, expected: str) -> Rejected | None:
    """40003 for a key that cannot be one, 40002 for one the sandbox does not know."""
    if not _well_formed_key(access_key):
        return coded(codes.KEY_INVALID, "the access key is malformed")
    if not hmac.compare_digest(access_key.encode(), expected.encode()):
        return coded(codes.KEY_UNKNOWN)
    return None


def check_signed(
    headers: Mapping[str, str], path: str, access_key: str, secret_key: str, nonces: NonceBook
) -> Rejected | None:
    """Why a signed request is not authentic (a coded refusal), or ``None`` if it is.

    Checked in the order a server can: the headers are there, the key is known, the nonce is a
    number in range, the signature matches, and only then the nonce rule (so a forged request
    cannot use up a nonce)."""
    sent_key, nonce, signature = (
        headers.get("accessKey"),
        headers.get("nonce"),
        headers.get("signature"),
    )
    named = (("accessKey", sent_key), ("nonce", nonce), ("signature", signature))
    missing = [name for name, value in named if not value]
    if missing or not (sent_key and nonce and signature):
        return coded(codes.MISSING_ARGUMENT, f"header(s) required: {', '.join(missing)}")
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
    """Tokens issued by ``POST /api/v1/token``: JWT-shaped, opaque to clients, expiring.

    Only a hash of each token is kept. ``lifetime`` (seconds), when given, overrides every
    requested duration: a short one (1 s) lets tests see tokens expire mid-batch."""

    def __init__(self, lifetime: float | None = None) -> None:
        if lifetime is not None and not lifetime > 0:
            raise ValueError(f"token_lifetime must be above 0 seconds, not {lifetime!r}")
        self.lifetime = lifetime
        self._lock = threading.Lock()
        self._expiry: dict[str, tuple[str, float]] = {}
        self._key = secrets.token_bytes(32)
        self.issued = 0

    @staticmethod
    def _digest(token: str) -> str:
        return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()

    def issue(self, access_key: str, duration: int | None) -> str:
        """A new token for ``access_key`` lasting ``duration`` seconds (or the default)."""
        seconds = float(min(duration or DEFAULT_TOKEN_S, MAX_TOKEN_S))
        if self.lifetime is not None:
            seconds = self.lifetime
        now = time.time()
        claims = {"sub": "sandbox", "iat": int(now), "exp": now + seconds}
        claims["jti"] = secrets.token_urlsafe(12)
        head = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        body = _b64(json.dumps(claims).encode())
        mac = hmac.new(self._key, f"{head}.{body}".encode(), hashlib.sha256).digest()
        token = f"{head}.{body}.{_b64(mac)}"
        with self._lock:
            self._expiry = {d: v for d, v in self._expiry.items() if v[1] > now}
            self._expiry[self._digest(token)] = (access_key, now + seconds)
            self.issued += 1
        return token

    def check(self, authorization: str) -> Rejected | None:
        """40001 unless ``authorization`` is ``Bearer <a token issued here, not expired>``."""
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return coded(codes.ENGINE_AUTH, "the Authorization header must be 'Bearer <token>'")
        with self._lock:
            found = self._expiry.get(self._digest(token.strip()))
        if found is None:
            return coded(codes.ENGINE_AUTH, "the token is not valid")
        if found[1] <= time.time():
            return coded(codes.ENGINE_AUTH, "the token has expired")
        return None

    def revoke_all(self) -> None:
        """Forget every token issued so far (a restarted service does)."""
        with self._lock:
            self._expiry.clear()
