"""What an answer means: one attempt's reply (or network failure) read as a ``Verdict``, and a
listing's body read as entries.

``success`` only for a readable JSON ``status: success`` with a 2xx code; ``failure`` only when
the answer says the service did not act (a JSON ``failure``, a vendor code, a 4xx, a 307/308)
or the request certainly never left; anything else after sending is ``unknown``. The vendor's
codes (40001..40204) are judged by the code, whatever the HTTP status. ``Verdict.again`` says
whether the request may be sent again: DELETE, GET and PUT do the same however often they are
sent, so they go again after "not done, try later" and after a connection lost; a POST adds an
entry each time it is acted on, so it goes again only when it certainly never left or the
service said it did not act (429, 503, 40103).
"""

from __future__ import annotations

import email.utils
import re
import time
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidIdError, ServiceError
from ..models import Cause, Entry, Outcome, codes
from ..models.entry import MAX_ID, check_id
from .http import FailureKind, NetworkFailure, Reply, host_of

__all__ = ["IDEMPOTENT", "Retry", "Verdict", "excerpt", "judge", "parse_listing"]

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
_UNSENT = ", so the request never reached the service"


@dataclass(frozen=True)
class Retry:
    """Send again. ``maybe_applied``: this attempt may have been acted on, so a later "no such
    entry" proves nothing. ``after``: the server's ``Retry-After`` in seconds, if given."""

    maybe_applied: bool = False
    after: float | None = None


@dataclass(frozen=True)
class Verdict:
    """What one attempt's answer means; ``again`` when it may be tried again."""

    outcome: Outcome
    cause: Cause
    reason: str | None = None
    http_status: int | None = None
    again: Retry | None = None
    nonce_reused: bool = False
    data: Any = None
    code: int | None = None
    vendor_message: str | None = None

    @property
    def rate_limited(self) -> bool:
        """429 or 40103: not acted on; every worker pauses and the request goes again."""
        return self.http_status == 429 or self.code == codes.FREQUENCY_LIMIT

    @property
    def nonce_too_small(self) -> bool:
        """40005: not acted on; sent again at once with a fresh nonce."""
        return self.code == codes.NONCE_TOO_SMALL


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


def judge(
    method: str, answer: Reply | NetworkFailure, limit: int, *, host: str, timeout: float
) -> Verdict:
    """What one attempt's answer (or failure) means for a ``method`` request to ``host``."""
    if isinstance(answer, Reply):
        return _judge_answer(method, answer, limit, timeout)
    if answer.status is not None:  # the headers came, the body did not (whole)
        partial = Reply(answer.status, answer.headers, b"", problem=answer.kind.value)
        return _judge_answer(method, partial, limit, timeout)
    return _judge_failure(method, answer, host, timeout)


def _judge_failure(method: str, failure: NetworkFailure, host: str, timeout: float) -> Verdict:
    kind, where = failure.kind, f"the proxy for {host}" if failure.proxy else host
    if not failure.sent:
        # Certainly not sent: a read may always go again, the rest after the kinds that say so.
        worth = kind in (FailureKind.REFUSED, FailureKind.CONNECT_TIMEOUT) or method == "GET"
        again = Retry() if worth else None
        reasons = {
            FailureKind.DNS: (
                Cause.DNS,
                f"could not resolve the host name of {where}; nothing was sent",
            ),
            FailureKind.TLS: (
                Cause.TLS,
                f"TLS handshake with {where} failed ({failure.detail}); nothing was sent",
            ),
            FailureKind.REFUSED: (
                Cause.UNAVAILABLE,
                f"could not connect to {where} (connection refused){_UNSENT}",
            ),
            FailureKind.CONNECT_TIMEOUT: (
                Cause.UNAVAILABLE,
                f"could not connect to {where} within {timeout:g} s{_UNSENT}",
            ),
            FailureKind.PROXY: (
                Cause.ERROR,
                f"the proxy for {host} would not open a connection; nothing was sent",
            ),
        }
        cause, reason = reasons.get(
            kind, (Cause.ERROR, f"the request could not be sent ({failure.detail})")
        )
        return Verdict("failure", cause, reason, again=again)
    if kind is FailureKind.TIMEOUT:
        return Verdict("unknown", Cause.TIMEOUT, f"no answer within the {timeout:g} s deadline")
    if kind is FailureKind.DROPPED:
        again = Retry(maybe_applied=True) if method in IDEMPOTENT else None
        reason = "the connection was closed before an answer came"
        return Verdict("unknown", Cause.CONNECTION_LOST, reason, again=again)
    reason = f"the request failed after it may have been sent ({failure.detail})"
    return Verdict("unknown", Cause.ERROR, reason)


def _judge_answer(method: str, reply: Reply, limit: int, timeout: float) -> Verdict:
    status, headers, data, problem = reply.status, reply.headers, reply.data, reply.problem
    if 300 <= status < 400:
        target = host_of(_header(headers, "Location") or "") or "an unnamed location"
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
        after = Retry(after=parse_retry_after(_header(headers, "Retry-After")))
        if status == 429:
            return Verdict("failure", Cause.RATE_LIMITED, "rate-limited by the service", 429, after)
        return Verdict("failure", Cause.UNAVAILABLE, "the service is unavailable", 503, after)
    if status in (502, 504):
        again = Retry(maybe_applied=True) if method in IDEMPOTENT else None
        reason = "a gateway answered instead of the service, which may have acted"
        return Verdict("unknown", Cause.GATEWAY, reason, status, again)
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
    extra: dict[str, Any] = {"code": code, "vendor_message": message}
    if code == codes.NONCE_TOO_SMALL:
        reason = f"the service refused the request's nonce as too small ({said}); not acted on"
        return Verdict("failure", Cause.NONCE, reason, status, **extra)
    if code == codes.NONCE_TOO_BIG:
        return Verdict("failure", Cause.NONCE, f"{NONCE_TOO_BIG} ({said})", status, **extra)
    if code == codes.FREQUENCY_LIMIT:
        again = Retry(after=parse_retry_after(_header(headers, "Retry-After")))
        reason = f"rate-limited by the service ({said})"
        return Verdict("failure", Cause.RATE_LIMITED, reason, status, again, **extra)
    if code in codes.AUTH_CODES:
        check = "the access key and the secret key"
        if code == codes.ENGINE_AUTH:
            check = "the token (a new one is needed) and the keys"
        reason = f"the service refused the credentials: {said} (check {check})"
        return Verdict("failure", Cause.AUTH, reason, status, **extra)
    if code in codes.DATA_CODES:
        reason = f"the service refused the request's data: {said}"
        return Verdict("failure", Cause.INVALID, reason, status, **extra)
    reason = f"the service answered status 'failure': {said}"
    return Verdict("failure", Cause.REFUSED, reason, status, **extra)


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


def _unreadable(
    data: Any, problem: str | None, body: bytes, limit: int, timeout: float
) -> tuple[Cause, str]:
    """Why an answer says neither success nor failure, and its cause."""
    if problem == "too_large":
        size = f"{limit // 2**20} MiB" if limit >= 2**20 else f"{limit // 1024} KiB"
        return Cause.TOO_LARGE, f"the answer is larger than {size}"
    if problem == "timeout":
        return Cause.TIMEOUT, (
            f"the answer began but did not arrive whole within the {timeout:g} s deadline"
        )
    if problem == "broken":
        return Cause.CONNECTION_LOST, "the connection broke before the whole answer arrived"
    words = {
        "empty": "the answer is empty",
        "bad_gzip": "the answer is gzip data that does not unpack",
        "not_json": f"the answer is not JSON: {excerpt(body)!r}",
    }
    if problem in words:
        return Cause.BAD_ANSWER, words[problem]
    if not isinstance(data, dict) or "status" not in data:
        return Cause.BAD_ANSWER, f"the JSON answer has no status: {excerpt(body)!r}"
    if data["status"] == "success":
        return Cause.BAD_ANSWER, "the service answered status 'success' with an error code"
    status = excerpt(str(data["status"]).encode())
    return Cause.BAD_ANSWER, f"the answer has an unexpected status {status!r}"


def parse_listing(data: Any, where: str) -> list[Entry]:
    """The entries of a listing, under ``data.entries`` (the vendor's client) or a top-level
    ``entries`` (its reference page); ``ServiceError`` naming what is malformed."""

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
    parsed = []
    append = parsed.append
    for index, item in enumerate(entries):
        get = item.get if type(item) is dict else None
        terms = (get(FROM_LANG), get(FROM_TEXT), get(TO_LANG), get(TO_TEXT)) if get else ()
        entry_id = get("id") if get else None
        if (
            type(entry_id) is str
            and entry_id.isascii()
            and entry_id.isdigit()
            and entry_id[0] != "0"
            and len(entry_id) < 19
        ):
            pass  # the common case, checked in a few type tests (listings can be huge)
        elif type(entry_id) is int and 0 <= entry_id <= MAX_ID:
            entry_id = str(entry_id)
        else:
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
    return cleaned[:EXCERPT_CHARS] + "\u2026" if len(cleaned) > EXCERPT_CHARS else cleaned
