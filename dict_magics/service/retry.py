"""When a request may be sent again, and after how long. Policy only: no I/O, no prose.

DELETE, GET and PUT are idempotent: sending them twice does what sending once does, so they are
retried after anything that says "not done, try later" and after a kept-alive connection that
the server closed as the request went out. A POST adds an entry each time it is acted on, so it
is sent again only when it certainly never left (a kept-alive connection found closed while the
request was written included), or when the service said it did not act (429, 503). How long a
429 is waited for, and by whom, is ``ratelimit``'s business.
"""

from __future__ import annotations

import email.utils
import random
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

from .transport import FailureKind

__all__ = [
    "IDEMPOTENT",
    "Retry",
    "delay",
    "is_nonce_reused",
    "parse_retry_after",
    "retry_after_failure",
    "retry_after_status",
]

IDEMPOTENT = frozenset({"DELETE", "GET", "PUT"})
NOT_ACTED = frozenset({429, 503})
"""The service says it did not act: safe to send again whatever the method."""
GATEWAY = frozenset({502, 504})
"""A gateway answered: the service behind it may have acted."""
_NOT_SENT = frozenset({FailureKind.REFUSED, FailureKind.CONNECT_TIMEOUT, FailureKind.DROPPED})
"""Failures worth another try when they certainly left nothing at the service (``sent`` False):
a DROPPED one is a kept-alive connection the server had closed before the request was written."""
_NONCE_USED = re.compile(
    r"nonce.*\b(already|used|reused|replay(ed)?|duplicated?|seen)\b"
    r"|\b(replay(ed)?|duplicated?|reused)\b.*nonce",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Retry:
    """Send again. ``maybe_applied``: this attempt may have been acted on, so a later "no such
    entry" proves nothing. ``after``: the server's ``Retry-After`` in seconds, if it gave one."""

    maybe_applied: bool = False
    after: float | None = None


def retry_after_failure(method: str, kind: FailureKind, sent: bool, reused: bool) -> Retry | None:
    """Whether a request that got no whole answer may be sent again."""
    if not sent and (kind in _NOT_SENT or method == "GET"):
        # Certainly not sent: nothing happened. A read (the listing) may always go again; for
        # the rest only the kinds that say so are worth another try.
        return Retry()
    if method in IDEMPOTENT and reused and kind is FailureKind.DROPPED:
        # The classic keep-alive race: the server closed an idle connection as the request
        # went out. It may also have acted and then hung up, hence ``maybe_applied``.
        return Retry(maybe_applied=True)
    return None


def retry_after_status(method: str, status: int, headers: Mapping[str, str]) -> Retry | None:
    """Whether an answer with ``status`` may be followed by the same request again."""
    if status in NOT_ACTED:
        return Retry(after=parse_retry_after(_header(headers, "Retry-After")))
    if status in GATEWAY and method in IDEMPOTENT:
        return Retry(maybe_applied=True)
    return None


def is_nonce_reused(message: str) -> bool:
    """True when a 401's message says the nonce was seen before (not acted on: sign afresh)."""
    return bool(_NONCE_USED.search(message))


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), else ``None``."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if seconds == seconds else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def delay(
    attempt: int,
    *,
    retry_after: float | None,
    base: float,
    ceiling: float,
    cap: float,
    rng: random.Random | None = None,
) -> float:
    """Seconds to wait before attempt ``attempt + 1``.

    The server's ``Retry-After`` wins (capped at ``cap``: beyond that, waiting hides an
    outage); otherwise exponential backoff with full jitter, so many clients that failed
    together do not come back together.
    """
    if retry_after is not None:
        return min(retry_after, cap)
    top = min(ceiling, base * 2 ** (attempt - 1))
    return (rng or random).uniform(0, top)


def _header(headers: Mapping[str, str], name: str) -> str | None:
    wanted = name.lower()
    return next((v for k, v in headers.items() if k.lower() == wanted), None)
