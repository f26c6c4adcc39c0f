"""What the service checks before it acts: who may ask, how often, what a request may carry.

The signature is written here, not imported from the client: sharing the client's code would
hide the client's bugs. The HTTP status of a coded refusal is not documented (judge the code).
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
from email.message import Message
from typing import Any

from ..models import codes
from ..models.terms import entry_problems

TERM_FIELDS = ("fromLang", "fromText", "toLang", "toText")
NONCE_RULES = ("increasing", "unique", "none")
NONCE_WINDOW_S = 300.0
"""The ``unique`` rule's window around the server's clock (it must forget old nonces)."""
DEFAULT_TOKEN_S = 1800  # a token's lifetime when the request names none (the vendor's 30 min)
MAX_TOKEN_S = 86_400


class Rejected(Exception):
    """A request the sandbox refuses: HTTP status, message, and the vendor's code if any."""

    def __init__(self, status: int, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.code = status, message, code

    def body(self) -> dict[str, Any]:
        coded = {} if self.code is None else {"code": self.code}
        return {"status": "failure", "data": {**coded, "message": self.message}}


def coded(code: int, detail: str = "") -> Rejected:
    """A refusal with a documented ``code``: the vendor's words, then ``: detail``."""
    status = 429 if code == codes.FREQUENCY_LIMIT else 400 if code in codes.DATA_CODES else 401
    return Rejected(status, codes.MESSAGES[code] + (f": {detail}" if detail else ""), code)


def parse_json(body: bytes, kind: type = dict) -> Any:
    """The body's JSON value, which must be a ``kind`` (40202 / 40201 otherwise)."""
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise coded(codes.INVALID_PARAMETERS, "the body must be JSON in UTF-8") from None
    if not isinstance(data, kind):
        what = "an object" if kind is dict else "an array of entries"
        raise coded(codes.INVALID_TYPE, f"the body must be a JSON {what}")
    return data


def _terms(data: Any, where: str = "") -> tuple[str, str, str, str]:
    if not isinstance(data, dict):
        raise coded(codes.INVALID_TYPE, f"{where}must be a JSON object")
    if missing := [name for name in TERM_FIELDS if name not in data]:
        raise coded(codes.MISSING_ARGUMENT, f"{where}{', '.join(missing)}")
    if extra := sorted(set(data) - set(TERM_FIELDS)):
        raise coded(codes.INVALID_PARAMETERS, f"{where}unexpected {', '.join(extra)}")
    if wrong := [name for name in TERM_FIELDS if not isinstance(data[name], str)]:
        raise coded(codes.INVALID_TYPE, f"{where}{wrong[0]} must be text")
    terms = tuple(data[name] for name in TERM_FIELDS)
    # Hidden characters are the client's worry (lint); the vendor refuses these three.
    for problem in entry_problems(*terms):
        if problem.kind in ("empty", "too-long", "bad-language"):
            raise coded(codes.INVALID_PARAMETERS, where + problem.message)
    return terms


def parse_terms(body: bytes, bulk: bool = False) -> list[tuple[str, str, str, str]]:
    """A POST or PUT body's terms (a bulk array all valid, or nothing is added)."""
    if not bulk:
        return [_terms(parse_json(body, object))]
    items = parse_json(body, list)
    if not items:
        raise coded(codes.MISSING_ARGUMENT, "the array holds no entry")
    return [_terms(item, f"item {n} of {len(items)}: ") for n, item in enumerate(items, 1)]


def parse_token_request(body: bytes) -> tuple[str, str, int | None]:
    """``accessKey``, ``secretKey`` and ``duration`` (``None`` when absent)."""
    data = parse_json(body)
    if missing := [name for name in ("accessKey", "secretKey") if not data.get(name)]:
        raise coded(codes.MISSING_ARGUMENT, ", ".join(missing))
    if not isinstance(data["accessKey"], str) or not isinstance(data["secretKey"], str):
        raise coded(codes.INVALID_TYPE, "accessKey and secretKey must be text")
    duration = data.get("duration")
    if duration is not None and (type(duration) is not int or duration <= 0):
        raise coded(codes.INVALID_TYPE, "duration must be a positive whole number of seconds")
    return data["accessKey"], data["secretKey"], duration


def sign(path: str, secret_key: str, nonce: str) -> str:
    """The vendor's signature: lowercase hex HMAC-SHA256(secret key, nonce + path as sent)."""
    return hmac.new(secret_key.encode(), (nonce + path).encode(), hashlib.sha256).hexdigest()


def same(given: str, expected: str) -> bool:
    """Whether two secrets are equal, in constant time (whatever characters they hold)."""
    return hmac.compare_digest(*(s.encode("utf-8", "surrogatepass") for s in (given, expected)))


class NonceBook:
    """Nonces accepted per access key under one rule: ``increasing`` (the vendor's),
    ``unique`` (unused, within 5 minutes of the clock) or ``none``."""

    def __init__(self, rule: str = "increasing") -> None:
        self.rule = rule
        self._lock = threading.Lock()
        self._last: dict[str, int] = {}
        self._seen: dict[tuple[str, int], float] = {}
        self._prune_at = 10_000

    def admit(self, access_key: str, nonce: int) -> Rejected | None:
        """Accept ``nonce`` for ``access_key`` (and remember it), or say why not."""
        if self.rule != "unique":
            with self._lock:
                if self.rule == "increasing" and nonce <= self._last.get(access_key, 0):
                    return coded(codes.NONCE_TOO_SMALL)
                self._last[access_key] = nonce
            return None
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
    return None if same(access_key, expected) else coded(codes.KEY_UNKNOWN)


def check_signed(
    headers: Message, path: str, access_key: str, secret_key: str, nonces: NonceBook
) -> Rejected | None:
    """Why a signed request is not authentic, or ``None`` (the nonce last: a forged request
    cannot use one up)."""
    names = ("accessKey", "nonce", "signature")
    sent_key, nonce, signature = (headers.get(name) or "" for name in names)
    if missing := [name for name in names if not headers.get(name)]:
        return coded(codes.MISSING_ARGUMENT, f"header(s) required: {', '.join(missing)}")
    problem = check_key(sent_key, access_key)
    if problem is not None:
        return problem
    if not (nonce.isascii() and nonce.isdigit()) or int(nonce) > codes.MAX_NONCE:
        return coded(codes.NONCE_TOO_BIG, f"a nonce is a number up to {codes.MAX_NONCE}")
    if not same(signature, sign(path, secret_key, nonce)):
        return coded(codes.SIGNATURE_INCORRECT)
    return nonces.admit(sent_key, int(nonce))


class TokenBook:
    """Tokens issued by ``POST /api/v1/token``, kept as hashes."""

    def __init__(self, lifetime: float | None = None) -> None:
        self.lifetime = lifetime
        self._lock = threading.Lock()
        self._expiry: dict[str, float] = {}
        self.issued = 0

    @staticmethod
    def _digest(token: str) -> str:
        return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()

    def issue(self, duration: int | None) -> str:
        now = time.time()
        seconds = self.lifetime or float(min(duration or DEFAULT_TOKEN_S, MAX_TOKEN_S))
        claims = {"sub": "sandbox", "iat": int(now), "exp": now + seconds}
        parts = [json.dumps(part).encode() for part in ({"alg": "HS256", "typ": "JWT"}, claims)]
        parts.append(secrets.token_bytes(32))  # the signature: looked up, never verified
        token = ".".join(base64.urlsafe_b64encode(p).rstrip(b"=").decode() for p in parts)
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
    """The rate limit: ``rate`` tokens a second, at most ``burst`` held (full at start)."""

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
