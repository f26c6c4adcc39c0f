"""What an answer means: one attempt's reply (or network failure) read as a ``Verdict`` (with
whether, and after how long, the request may be sent again), and a listing's body read as
entries.

The rule (docs/reliability.md): ``success`` only for a readable JSON ``status: success`` with a
2xx code; ``failure`` only when the answer says the service did not act (a JSON ``failure``, a
4xx, a 3xx that repeats elsewhere) or the request certainly never left; anything else after
sending is ``unknown``. ``Verdict.again`` says whether the retry policy below allows another
attempt.

The retry policy (no I/O, no prose): DELETE, GET and PUT are idempotent: sending them twice does
what sending once does, so they are retried after anything that says "not done, try later" and
after a kept-alive connection that the server closed as the request went out. A POST adds an
entry each time it is acted on, so it is sent again only when it certainly never left (a
kept-alive connection found closed while the request was written included), or when the service
said it did not act (429, 503). How long a 429 is waited for, and by whom, is ``ratelimit``'s
business.
"""

from __future__ import annotations

import email.utils
import random
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ServiceError
from ..models import Cause, Entry, Outcome, codes
from .paths import host_of
from .transport import FailureKind, NetworkFailure, Reply

__all__ = [
    "IDEMPOTENT",
    "NONCE_REUSED",
    "NONCE_TOO_BIG",
    "Retry",
    "Verdict",
    "delay",
    "excerpt",
    "is_nonce_reused",
    "judge",
    "parse_listing",
    "parse_retry_after",
    "retry_after_failure",
    "retry_after_status",
    "vendor_error",
]

FROM_LANG, FROM_TEXT, TO_LANG, TO_TEXT = Entry.FIELDS[1:]
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


# -- the retry policy: when a request may be sent again, and after how long -----------------------

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


# -- what one attempt's answer means --------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """What one attempt's answer means; ``again`` when it may be tried again (and the rest
    then says what it means if it is not)."""

    outcome: Outcome
    cause: Cause
    reason: str | None = None
    http_status: int | None = None
    again: Retry | None = None
    nonce_reused: bool = False
    data: Any = None
    problem: str | None = None
    code: int | None = None
    """The vendor's error code, when the answer carried one."""
    vendor_message: str | None = None
    """The vendor's words with that code (an excerpt: printable, bounded)."""

    @property
    def rate_limited(self) -> bool:
        """429 or 40103: not acted on; every worker pauses and the request goes again."""
        return self.http_status == 429 or self.code == codes.FREQUENCY_LIMIT

    @property
    def nonce_too_small(self) -> bool:
        """40005: not acted on; send again at once with a fresh, larger nonce."""
        return self.code == codes.NONCE_TOO_SMALL


def vendor_error(data: Any) -> tuple[int, str] | None:
    """``(code, message)`` of an answer in the vendor's error shape ``{"status": "failure",
    "data": {"code", "message"}}`` (the message as a bounded, printable excerpt), else
    ``None``."""
    if not isinstance(data, dict) or data.get("status") != "failure":
        return None
    inner = data.get("data")
    if not isinstance(inner, dict):
        return None
    code = inner.get("code")
    if isinstance(code, str) and code.isascii() and code.isdigit() and len(code) < 10:
        code = int(code)
    if isinstance(code, bool) or not isinstance(code, int):
        return None
    message = inner.get("message")
    text = excerpt(message.encode("utf-8", "replace")) if isinstance(message, str) else ""
    return code, text or codes.MESSAGES.get(code, "")


def judge(
    method: str, answer: Reply | NetworkFailure, limit: int, *, host: str, timeout: float
) -> Verdict:
    """What one attempt's answer (or network failure) means for a ``method`` request to
    ``host`` made with a ``timeout`` deadline."""
    if isinstance(answer, Reply):
        return _judge_answer(method, answer, limit, timeout)
    if answer.status is not None:  # the headers came, the body did not (whole)
        partial = Reply(answer.status, answer.headers, b"", problem=answer.kind.value)
        return _judge_answer(method, partial, limit, timeout)
    return _judge_failure(method, answer, host, timeout)


_UNSENT = ", so the request never reached the service"
"""How a failure that is tried again says nothing reached the service: true of each attempt and
of them all, so it reads right before "; gave up after 4 attempts" (where "nothing was sent"
would not)."""


def _judge_failure(method: str, failure: NetworkFailure, host: str, timeout: float) -> Verdict:
    kind = failure.kind
    where = f"the proxy for {host}" if failure.proxy else host
    again = retry_after_failure(method, kind, failure.sent, failure.reused)
    if kind is FailureKind.DNS:
        reason = f"could not resolve the host name of {where}; nothing was sent"
        return Verdict("failure", Cause.DNS, reason)
    if kind is FailureKind.TLS:
        reason = f"TLS handshake with {where} failed ({failure.detail}); nothing was sent"
        return Verdict("failure", Cause.TLS, reason)
    if kind is FailureKind.REFUSED:
        reason = f"could not connect to {where} (connection refused){_UNSENT}"
        return Verdict("failure", Cause.UNAVAILABLE, reason, again=again)
    if kind is FailureKind.CONNECT_TIMEOUT:
        reason = f"could not connect to {where} within {timeout:g} s{_UNSENT}"
        return Verdict("failure", Cause.UNAVAILABLE, reason, again=again)
    if kind is FailureKind.PROXY:
        reason = f"the proxy for {host} would not open a connection; nothing was sent"
        return Verdict("failure", Cause.ERROR, reason)
    if kind is FailureKind.TIMEOUT:
        reason = f"no answer within the {timeout:g} s deadline"
        return Verdict("unknown", Cause.TIMEOUT, reason)
    if kind is FailureKind.DROPPED and not failure.sent:
        reason = f"{where} closed the connection before the request went out{_UNSENT}"
        return Verdict("failure", Cause.UNAVAILABLE, reason, again=again)
    if kind is FailureKind.DROPPED:
        which = "kept-alive connection" if failure.reused else "connection"
        reason = f"the {which} was closed before an answer came"
        return Verdict("unknown", Cause.CONNECTION_LOST, reason, again=again)
    if kind is FailureKind.BROKEN:
        reason = "the connection broke in the middle of the answer's headers"
        return Verdict("unknown", Cause.CONNECTION_LOST, reason)
    if failure.sent:
        reason = f"the request failed after it may have been sent ({failure.detail})"
        return Verdict("unknown", Cause.ERROR, reason)
    reason = f"the request could not be sent ({failure.detail})"
    return Verdict("failure", Cause.ERROR, reason, again=again)


def _judge_answer(method: str, reply: Reply, limit: int, timeout: float) -> Verdict:
    """An answer's status and (maybe unreadable) body. Plain failure only for what says the
    service did not act: a JSON ``failure``, a 4xx, a 3xx; unknown for anything else that
    is not a readable ``success``."""
    code, headers, data, problem = reply.status, reply.headers, reply.data, reply.problem
    if 300 <= code < 400:
        target = host_of(_header(headers, "Location") or "") or "an unnamed location"
        reason = (
            f"the service redirected to {target}; not followed, "
            "so the credentials went nowhere else"
        )
        # 307/308 say "not done here, repeat it there"; a 301/302/303 also comes after an
        # action (post-redirect-get, a framework's destroy-then-redirect): maybe acted.
        outcome: Outcome = "failure" if code in (307, 308) else "unknown"
        return Verdict(outcome, Cause.REDIRECT, reason, code)
    vendor = vendor_error(data) if problem is None else None
    if vendor is not None:
        return _judge_code(method, code, headers, *vendor)
    message = _message(data)
    if code in (401, 403):
        if is_nonce_reused(message):
            return Verdict("failure", Cause.NONCE_REUSED, NONCE_REUSED, code, nonce_reused=True)
        reason = "the service refused the credentials" + (f": {message}" if message else "")
        reason += " (check the access key, the secret key, and this computer's clock)"
        return Verdict("failure", Cause.AUTH, reason, code)
    again = retry_after_status(method, code, headers)
    if code == 429:
        reason = "rate-limited by the service"
        return Verdict("failure", Cause.RATE_LIMITED, reason, code, again)
    if code == 503:
        reason = "the service is unavailable"
        return Verdict("failure", Cause.UNAVAILABLE, reason, code, again)
    if code in GATEWAY:
        reason = "a gateway answered instead of the service, which may have acted"
        return Verdict("unknown", Cause.GATEWAY, reason, code, again)
    status = data.get("status") if isinstance(data, dict) and problem is None else None
    if status == "failure":
        reason = "the service answered status 'failure'" + (f": {message}" if message else "")
        return Verdict("failure", Cause.REFUSED, reason, code)
    if status == "success" and 200 <= code < 300:
        return Verdict("success", Cause.OK, None, code, data=data)
    if status == "success":
        reason = f"the service answered status 'success' with HTTP {code}: it may have acted"
        return Verdict("unknown", Cause.BAD_ANSWER, reason, code)
    cause, reason = _unreadable(code, data, problem, reply.body, limit, timeout)
    outcome = "failure" if 400 <= code < 500 else "unknown"
    return Verdict(outcome, cause, reason, code, problem=problem)


def _judge_code(method: str, http_status: int, headers: Any, code: int, message: str) -> Verdict:
    """An answer carrying one of the vendor's error codes: judged by the code, whatever the
    HTTP status (the vendor does not document it)."""
    said = f"[{code}] {message}".rstrip()
    extra = {"code": code, "vendor_message": message}
    if code == codes.NONCE_TOO_SMALL:
        reason = f"the service refused the request's nonce as too small ({said}); not acted on"
        return Verdict("failure", Cause.NONCE, reason, http_status, **extra)
    if code == codes.NONCE_TOO_BIG:
        reason = f"{NONCE_TOO_BIG} ({said})"
        return Verdict("failure", Cause.NONCE, reason, http_status, **extra)
    if code == codes.FREQUENCY_LIMIT:
        again = Retry(after=parse_retry_after(_header(headers, "Retry-After")))
        reason = f"rate-limited by the service ({said})"
        return Verdict("failure", Cause.RATE_LIMITED, reason, http_status, again, **extra)
    if code in codes.AUTH_CODES:
        check = "the access key and the secret key"
        if code == codes.ENGINE_AUTH:
            check = "the token (a new one is needed) and the keys"
        reason = f"the service refused the credentials: {said} (check {check})"
        return Verdict("failure", Cause.AUTH, reason, http_status, **extra)
    if code in codes.DATA_CODES:
        reason = f"the service refused the request's data: {said}"
        return Verdict("failure", Cause.INVALID, reason, http_status, **extra)
    reason = f"the service answered status 'failure': {said}"
    return Verdict("failure", Cause.REFUSED, reason, http_status, **extra)


def _unreadable(
    code: int, data: Any, problem: str | None, body: bytes, limit: int, timeout: float
) -> tuple[Cause, str]:
    """Why an answer says neither success nor failure, and its cause."""
    if problem == "too_large":
        return Cause.TOO_LARGE, f"the answer is larger than {_size(limit)}"
    if problem == FailureKind.TIMEOUT.value:
        return (
            Cause.TIMEOUT,
            f"the answer began but did not arrive whole within the {timeout:g} s deadline",
        )
    if problem == FailureKind.BROKEN.value:
        return Cause.CONNECTION_LOST, "the connection broke before the whole answer arrived"
    if problem == "empty":
        return Cause.BAD_ANSWER, "the answer is empty"
    if problem == "bad_gzip":
        return Cause.BAD_ANSWER, "the answer is gzip data that does not unpack"
    if problem == "not_json":
        return Cause.BAD_ANSWER, f"the answer is not JSON: {excerpt(body)!r}"
    if not isinstance(data, dict) or "status" not in data:
        return Cause.BAD_ANSWER, f"the JSON answer has no status: {excerpt(body)!r}"
    status = excerpt(str(data["status"]).encode())
    if data["status"] == "success":
        return Cause.BAD_ANSWER, "the service answered status 'success' with an error code"
    return Cause.BAD_ANSWER, f"the answer has an unexpected status {status!r}"


def parse_listing(data: Any, where: str) -> list[Entry]:
    """The entries of a success answer, or ``ServiceError`` naming what is malformed."""

    def malformed(problem: str) -> ServiceError:
        # The problem may quote the bad value: an excerpt, never the whole of it (a 48 KB
        # answer once made 75 MB of error text).
        return ServiceError(
            f"the listing from {where} is malformed: {excerpt(problem.encode('utf-8', 'replace'))}",
            cause=Cause.BAD_ANSWER,
        )

    inner = data.get("data") if isinstance(data, dict) else None
    if not isinstance(inner, dict):
        raise malformed("it has no 'data' object")
    entries = inner.get("entries")
    if not isinstance(entries, list):
        raise malformed("its 'data' has no 'entries' list")
    parsed = _plain_entries(entries)
    if parsed is not None:
        return parsed
    parsed = []
    for index, item in enumerate(entries):
        try:
            parsed.append(Entry.from_service(item))
        except ValueError as exc:
            raise malformed(f"item {index + 1} of {len(entries)}: {exc}") from None
    return parsed


def _plain_entries(items: list[Any]) -> list[Entry] | None:
    """The entries when every item is exactly what the service sends (as ``json`` parses it),
    else ``None`` (``Entry.from_service`` then names what is wrong). A listing may hold
    hundreds of thousands of entries: this checks each with a few exact type tests."""
    parsed = []
    append = parsed.append
    for item in items:
        if type(item) is not dict:
            return None
        get = item.get
        entry_id, a, b, c, d = get("id"), get(FROM_LANG), get(FROM_TEXT), get(TO_LANG), get(TO_TEXT)
        if type(a) is not str or type(b) is not str or type(c) is not str or type(d) is not str:
            return None
        if type(entry_id) is not str:
            if type(entry_id) is not int:
                return None
            entry_id = str(entry_id)
        append(Entry(entry_id, a, b, c, d))
    return parsed


def _header(headers: Any, name: str) -> str | None:
    wanted = name.lower()
    return next((v for k, v in headers.items() if k.lower() == wanted), None)


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
    if len(cleaned) > EXCERPT_CHARS:
        cleaned = cleaned[:EXCERPT_CHARS] + "\u2026"
    return cleaned


def _size(limit: int) -> str:
    if limit >= 1024 * 1024:
        return f"{limit // (1024 * 1024)} MiB"
    return f"{limit // 1024} KiB"
