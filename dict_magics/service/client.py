"""The dictionary client: every operation of the service, with retries and honest results.

Every front end goes through ``DictionaryClient``. It holds no display logic: it sends through
``transport`` (one attempt, one deadline), reads each answer with ``answers``, asks ``retry``
whether to try again, keeps Ctrl-C from cutting a request off (``interrupts``), and words what
happened. A deletion or an addition always comes back as a result whose ``outcome`` is
``success`` only when the service said so, ``failure`` only when the service certainly did not
act, and ``unknown`` otherwise. It raises only for a caller's mistake (a bad id, base URL or
option), before any request, and for a listing it cannot produce (``ServiceError``).
"""

from __future__ import annotations

import json
import math
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .. import settings
from ..errors import DictMagicsError, InvalidIdError, ListingUnsupportedError, ServiceError
from ..models import AddResult, BatchResult, Cause, DeleteResult, Entry, EntryList, Outcome
from ..models.secret import Secret, mask
from . import retry
from .answers import Verdict, judge, parse_listing
from .interrupts import RequestInterrupted, guarded, wait_through_interrupts
from .paths import (
    API_PREFIX,
    check_id,
    entry_path,
    host_of,
    is_loopback,
    normalize_base_url,
    purge_path,
)
from .ratelimit import RATE_LIMIT_PATIENCE, RateGate, Ticket, WaitListener
from .signing import SignedAuth
from .transport import ANSWER_LIMIT, LISTING_LIMIT, Transport

if TYPE_CHECKING:
    import requests

__all__ = ["BatchResult", "DeleteResult", "DictionaryClient", "Progress", "RequestInterrupted"]

Progress = Callable[[int, int, DeleteResult], None]
"""``progress(done, total, result)``, called after each result of a batch."""

LIST_PATH = API_PREFIX.rstrip("/")
"""The collection: ``GET`` lists it, ``POST`` adds to it."""
AUTH_STOP_AFTER = 3
"""A batch whose first this many answers all refuse the credentials sends nothing more."""
_UNKNOWN_DELETE = (
    ". The request may have reached the service, so the entry may be gone; sending it again "
    "is safe (it answers 'no such entry' if so)"
)
_UNKNOWN_PURGE = (
    ". The request may have reached the service, so the entries may be gone; a listing shows "
    "what is left"
)
_UNKNOWN_ADD = (
    ". The request may have reached the service, so the entry may have been added; it is not "
    "sent again blindly (a listing shows whether it is there)"
)
_STOPPED = "; not sent again: stopped (Ctrl-C or cancel)"


@dataclass(frozen=True)
class _Final:
    """What a request ended as, over all its attempts."""

    outcome: Outcome
    cause: Cause
    reason: str | None
    http_status: int | None
    attempts: int
    elapsed: float
    data: Any = None
    problem: str | None = None


@dataclass
class _Batch:
    """A batch's shared state: what was sent, what came back, and why it stopped early."""

    halt: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    started: set[str] = field(default_factory=set)
    results: dict[str, DeleteResult] = field(default_factory=dict)
    errors: list[BaseException] = field(default_factory=list)
    finished: int = 0
    why: str = ""
    done: queue.SimpleQueue = field(default_factory=queue.SimpleQueue)

    def stop(self, why: str) -> None:
        with self.lock:
            if not self.halt.is_set():
                self.why = why
                self.halt.set()


class DictionaryClient:
    """Deletes, lists and adds user-dictionary entries with signed requests.

    ``timeout`` is one attempt's deadline, from sending to the last byte of the answer;
    ``max_retries`` is how many times a request is sent again when that is safe (see
    ``retry``), each time with a fresh nonce and signature; ``workers`` sizes the connection
    pool. ``nonces`` is the nonce source (by default the one shared by every process that uses
    this access key).

    Every request passes the client's ``rate_limit`` gate (``ratelimit.RateGate``): a 429 pauses
    every worker until its ``Retry-After``, the gate learns a pace the service accepts, and a
    request answered 429 is sent again (it was not acted on) for up to ``rate_limit_patience``
    seconds rather than ``max_retries`` times. ``on_wait(seconds, reason)`` is called (from a
    worker thread) at each such pause.
    """

    def __init__(
        self,
        base_url: str,
        access_key: str,
        secret_key: str,
        *,
        timeout: float = settings.TIMEOUT,
        max_retries: int = settings.RETRIES,
        session: requests.Session | None = None,
        workers: int = settings.WORKERS,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        max_retry_after: float = settings.MAX_RETRY_AFTER,
        nonces: Callable[[], str] | None = None,
        rate_limit_patience: float = RATE_LIMIT_PATIENCE,
        on_wait: WaitListener | None = None,
    ) -> None:
        self.base_url = normalize_base_url(base_url)
        if not isinstance(access_key, str) or not isinstance(secret_key, str):
            raise DictMagicsError("the access key and the secret key must be text (str).")
        if not access_key or not secret_key:
            raise DictMagicsError("both an access key and a secret key are needed.")
        for name, value in (("access key", access_key), ("secret key", secret_key)):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                # Said without the value: the exception's .object would be the key itself.
                raise DictMagicsError(f"the {name} is not valid UTF-8 text.") from None
        if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0):
            raise DictMagicsError(f"timeout must be a positive number of seconds, not {timeout!r}.")
        if max_retries < 0:
            raise DictMagicsError(f"max_retries must be 0 or more, not {max_retries!r}.")
        self.access_key = access_key
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self.rate_limit_patience = rate_limit_patience
        self.closed = False
        self._gate = RateGate(backoff=backoff, max_backoff=max_backoff, on_wait=on_wait)
        self._auth = SignedAuth(access_key, Secret(secret_key), nonces)
        loopback = is_loopback(urlsplit(self.base_url).hostname or "")
        # A proxy from the environment must not see loopback traffic (the sandbox).
        self._transport = Transport(
            self._auth, session=session, trust_env=not loopback, workers=max(1, workers)
        )

    def __repr__(self) -> str:
        return f"DictionaryClient(base_url={self.base_url!r}, access_key={mask(self.access_key)!r})"

    def close(self) -> None:
        """Close the connection pool (a request made afterwards opens a new connection)."""
        self.closed = True
        self._transport.close()

    def ensure_pool(self, workers: int) -> None:
        """Keep at least ``workers`` connections alive (a kept client grows for a batch)."""
        self._transport.ensure_pool(max(1, workers))

    def __enter__(self) -> DictionaryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def host(self) -> str:
        """Where requests go, for messages and confirmations."""
        return host_of(self.base_url)

    @property
    def rate_limit(self) -> RateGate:
        """The gate every request passes: ``waiting()`` says how long every worker still waits
        for the service's rate limit, ``rate`` the pace learned, ``stats`` what it has seen."""
        return self._gate

    # -- public operations ---------------------------------------------------------------

    def delete_entry(
        self, entry_id: str | int, *, ready: Callable[[], object] | None = None
    ) -> DeleteResult:
        """Delete one entry. Raises ``InvalidIdError`` (before any request) for a bad id.

        Ctrl-C does not abandon a request in flight: the call waits for its answer (at most
        one deadline), then raises ``RequestInterrupted`` (a ``KeyboardInterrupt``) carrying
        the true result, so a loop stops and nothing is left unknown that need not be.

        ``ready()`` is called before each attempt's first byte goes out, once connected and
        signed (so a snapshot being synced meanwhile costs no extra time); if it raises, that
        exception propagates and nothing was sent.
        """
        text = check_id(entry_id)
        return guarded(lambda stop: self._delete_one(text, stop, ready))

    def delete_all(self) -> DeleteResult:
        """Delete every entry of this account. Front ends confirm before calling this.

        Ctrl-C behaves as for ``delete_entry``.
        """

        def purge(stop: Callable[[], bool]) -> DeleteResult:
            return self._delete_result(None, self._exchange("DELETE", purge_path(), stop=stop))

        return guarded(purge)

    def delete_entries(
        self,
        ids: Iterable[str | int],
        workers: int = settings.WORKERS,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        on_wait: WaitListener | None = None,
    ) -> BatchResult:
        """Delete several entries on ``workers`` threads; results come back in input order.

        Every id is checked before the first request and duplicates are deleted once.
        ``progress`` is called (on the calling thread) after each result; ``on_wait(seconds,
        reason)`` (from a worker thread) whenever every worker pauses for the service's rate
        limit, so a display can say why nothing moves. Ctrl-C or ``cancel``
        starts nothing new, waits for the requests in flight (each at most one deadline) and
        returns ``BatchResult(..., interrupted=True)``: what was sent is reported as it ended,
        ids never sent as ``not_attempted``. If the first answers all refuse the credentials,
        the rest are not sent either.
        """
        if isinstance(ids, str | bytes | bytearray | Mapping):
            # A string is an iterable of characters: "17" would delete entries 1 and 7.
            raise InvalidIdError(
                f"delete_entries takes a list of ids, not {type(ids).__name__} {ids!r:.40}; "
                "use delete_entry for one id."
            )
        texts = [check_id(i) for i in ids]
        unique = list(dict.fromkeys(texts))
        if workers < 1:
            raise DictMagicsError(f"workers must be at least 1, not {workers!r}.")
        workers = min(workers, max(1, len(unique)))
        self._transport.ensure_pool(workers)
        cancel = cancel or threading.Event()
        with self._gate.listen(on_wait):
            batch = self._run_batch(unique, workers, progress, cancel)
        interrupted = batch.why in ("interrupted", "cancelled") or cancel.is_set()
        by_id = {t: batch.results.get(t) or self._not_attempted(t, batch.why) for t in unique}
        return BatchResult([by_id[t] for t in texts], interrupted=interrupted)

    def list_entries(self) -> EntryList:
        """Every entry, from the signed ``GET`` listing (retried like a DELETE).

        Raises ``ListingUnsupportedError`` when the service has no listing (404, 405, or an
        answer that is not JSON) and ``ServiceError`` for a listing it cannot use (malformed,
        refused, or no answer). Read-only, so Ctrl-C simply interrupts it.
        """
        final = self._exchange("GET", LIST_PATH, limit=LISTING_LIMIT)
        return self._listing(final)

    def add_entry(self, entry: Entry) -> AddResult:
        """Add ``entry`` (its four terms; the service picks the id) with a signed ``POST``.

        Never sent twice once it may have reached the service: such an outcome is ``unknown``
        (a listing settles it). Ctrl-C behaves as for ``delete_entry``.
        """
        if not isinstance(entry, Entry):
            raise DictMagicsError(f"add_entry needs an Entry, not {type(entry).__name__}.")
        body = json.dumps(entry.to_service(with_id=False), ensure_ascii=False).encode("utf-8")

        def add(stop: Callable[[], bool]) -> AddResult:
            final = self._exchange("POST", LIST_PATH, body=body, stop=stop)
            return AddResult(
                final.outcome if final.outcome != "unknown" else "failure",
                entry,
                http_status=final.http_status,
                reason=_with_consequence(final, _UNKNOWN_ADD),
                outcome_unknown=final.outcome == "unknown",
                attempts=final.attempts,
                elapsed=final.elapsed,
                cause=final.cause,
            )

        return guarded(add)

    # -- Ctrl-C: a request in flight is waited for ---------------------------------------------

    # -- batches -------------------------------------------------------------------------------

    def _run_batch(
        self,
        unique: list[str],
        workers: int,
        progress: Progress | None,
        cancel: threading.Event,
    ) -> _Batch:
        batch = _Batch()

        def stopped() -> bool:
            return batch.halt.is_set() or cancel.is_set()

        def work(text: str) -> None:
            with batch.lock:
                if stopped():
                    batch.done.put(None)
                    return
                batch.started.add(text)
            try:
                result = self._delete_one(text, stopped)
            except BaseException as exc:  # a bug: re-raised on the caller's thread
                with batch.lock:
                    batch.errors.append(exc)
                    batch.finished += 1
                batch.done.put(None)
                return
            sent = result.attempts > 0  # else stopped while waiting for the rate limit
            with batch.lock:
                if sent:
                    batch.results[text] = result
                batch.finished += 1
            batch.done.put(text if sent else None)

        pool = ThreadPoolExecutor(workers, thread_name_prefix="dict-magics-batch")
        try:
            self._feed(pool, work, unique, workers, progress, batch, stopped)
        except KeyboardInterrupt:
            batch.stop("interrupted")
        except BaseException:
            batch.stop("error")
            raise
        finally:
            wait_through_interrupts(lambda: self._finish(pool, batch))
        if batch.errors:
            raise batch.errors[0]
        if cancel.is_set() and not batch.why:
            batch.why = "cancelled"
        return batch

    def _feed(
        self,
        pool: ThreadPoolExecutor,
        work: Callable[[str], None],
        unique: list[str],
        workers: int,
        progress: Progress | None,
        batch: _Batch,
        stopped: Callable[[], bool],
    ) -> None:
        """Keep ``workers`` requests going, and report each result as it comes back.

        Handing out one id per free worker (rather than queueing them all) is what lets a
        cancel, a Ctrl-C or refused credentials stop the batch after the requests in flight.
        """
        pending = iter(unique)
        submitted = received = reported = 0
        refusals: list[bool] = []
        while True:
            while submitted - received < workers and not stopped():
                text = next(pending, None)
                if text is None:
                    break
                pool.submit(work, text)
                submitted += 1
            if received == submitted:
                return
            text = batch.done.get()
            received += 1
            result = batch.results.get(text) if text is not None else None
            if batch.errors:
                batch.stop("error")
            if result is None:
                continue
            if len(refusals) < AUTH_STOP_AFTER:
                refusals.append(result.cause is Cause.AUTH)
                if len(refusals) == AUTH_STOP_AFTER and all(refusals):
                    batch.stop("auth")
            reported += 1
            if progress is not None and not batch.halt.is_set():
                progress(reported, len(unique), result)

    @staticmethod
    def _finish(pool: ThreadPoolExecutor, batch: _Batch) -> None:
        """Drop what was never started, then wait until every request that was started has
        ended (each within its deadline)."""
        pool.shutdown(wait=False, cancel_futures=True)
        while True:
            with batch.lock:
                if batch.finished >= len(batch.started):
                    return
            batch.done.get()

    @staticmethod
    def _not_attempted(text: str, why: str) -> DeleteResult:
        reasons = {
            "interrupted": "not attempted: the batch was interrupted (Ctrl-C) before this entry "
            "was sent",
            "auth": f"not attempted: the service refused the credentials for the first "
            f"{AUTH_STOP_AFTER} requests, so the rest were not sent (check the access key and "
            "the secret key)",
            "error": "not attempted: the batch stopped on an unexpected error",
        }
        cancelled = "not attempted: the batch was cancelled before this entry was sent"
        reason = reasons.get(why, cancelled)
        return DeleteResult("failure", text, reason=reason, attempts=0, cause=Cause.NOT_ATTEMPTED)

    # -- one request, with retries ---------------------------------------------------------------

    def _delete_one(
        self, text: str, stop: Callable[[], bool], ready: Callable[[], object] | None = None
    ) -> DeleteResult:
        final = self._exchange("DELETE", entry_path(text), stop=stop, ready=ready)
        return self._delete_result(text, final)

    @staticmethod
    def _delete_result(entry_id: str | None, final: _Final) -> DeleteResult:
        consequence = _UNKNOWN_PURGE if entry_id is None else _UNKNOWN_DELETE
        return DeleteResult(
            "success" if final.outcome == "success" else "failure",
            entry_id,
            http_status=final.http_status,
            reason=_with_consequence(final, consequence),
            outcome_unknown=final.outcome == "unknown",
            attempts=final.attempts,
            elapsed=final.elapsed,
            cause=final.cause,
        )

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """How long to wait before attempt ``attempt + 1``."""
        return retry.delay(
            attempt,
            retry_after=retry_after,
            base=self.backoff,
            ceiling=self.max_backoff,
            cap=self.max_retry_after,
        )

    def _exchange(
        self,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        limit: int = ANSWER_LIMIT,
        stop: Callable[[], bool] = lambda: False,
        ready: Callable[[], object] | None = None,
    ) -> _Final:
        """Send until the answer is final, the retry budget is spent, or ``stop()``.

        A 429 spends the rate-limit patience (time), not ``max_retries``: the gate holds every
        worker until the service's ``Retry-After`` and paces them after it.
        """
        url = self.base_url + path
        started = time.monotonic()
        earlier: tuple[int, Verdict] | None = None  # an attempt that may have been acted on
        fresh_nonce = 0  # the one re-send after "nonce already used" (never acted on)
        limited = 0  # attempts answered 429
        attempt = 0
        verdict: Verdict | None = None
        before_sending = None if ready is None else _then_unless_stopped(ready, stop)
        while True:
            ticket = self._gate.acquire(stop)
            if ticket is None:
                if verdict is None:
                    return _never_sent(started, _WAITING)
                return self._settle(verdict, earlier, attempt, started, _STOPPED)
            attempt += 1
            try:
                answer = self._transport.send(
                    method, url, body=body, limit=limit, timeout=self.timeout, ready=before_sending
                )
            except _StoppedBeforeSending:
                attempt -= 1  # not one byte of it went out
                if verdict is None:
                    return _never_sent(started, _BEFORE_SENDING)
                return self._settle(verdict, earlier, attempt, started, _STOPPED)
            verdict = judge(method, answer, limit, host=self.host, timeout=self.timeout)
            if verdict.http_status == 429:
                limited += 1
                self._limited(ticket, verdict)
            elif verdict.http_status is not None:
                self._gate.passed(ticket)
            if verdict.nonce_reused and not fresh_nonce:
                fresh_nonce = 1
                # "Already used" can also mean a gateway replayed this very request after the
                # service acted on it: a later "no such entry" proves nothing, and a POST is
                # not sent again.
                earlier = (attempt, verdict)
                if method in retry.IDEMPOTENT:
                    continue
                return self._settle(verdict, earlier, attempt, started, "")
            again = verdict.again
            if again is not None and again.maybe_applied:
                earlier = (attempt, verdict)
            if again is None:
                return self._settle(verdict, earlier, attempt, started, "")
            if stop():
                return self._settle(verdict, earlier, attempt, started, _STOPPED)
            if verdict.http_status == 429:
                waited = time.monotonic() - started + self._gate.waiting()
                if waited <= self.rate_limit_patience:
                    continue  # the gate waits
                tail = (
                    f"; gave up after {attempt} attempt{'s' * (attempt != 1)}: waiting on would "
                    f"pass the {self.rate_limit_patience:g} s allowed for the service's rate limit"
                )
                return self._settle(verdict, earlier, attempt, started, tail)
            retries = attempt - fresh_nonce - limited
            if retries <= self.max_retries:
                if _pause(self._delay(retries, again.after), stop):
                    continue
                return self._settle(verdict, earlier, attempt, started, _STOPPED)
            tail = f"; gave up after {attempt} attempt{'s' * (attempt != 1)}"
            return self._settle(verdict, earlier, attempt, started, tail)

    def _limited(self, ticket: Ticket, verdict: Verdict) -> None:
        """Tell the gate about a 429 (``Retry-After`` capped, as for any wait)."""
        after = verdict.again.after if verdict.again is not None else None
        self._gate.limited(ticket, None if after is None else min(after, self.max_retry_after))

    @staticmethod
    def _settle(
        verdict: Verdict,
        earlier: tuple[int, Verdict] | None,
        attempts: int,
        started: float,
        tail: str,
    ) -> _Final:
        outcome, cause, reason = verdict.outcome, verdict.cause, f"{verdict.reason}{tail}"
        if verdict.outcome == "success":
            reason = None
        if earlier is not None and outcome == "failure":
            number, first = earlier
            what = f"HTTP {first.http_status}" if first.http_status else first.reason
            outcome, cause = "unknown", first.cause
            reason = f"attempt {number} ({what}) may have been acted on; then: {reason}"
        return _Final(
            outcome,
            cause,
            reason,
            verdict.http_status,
            attempts,
            time.monotonic() - started,
            verdict.data,
            verdict.problem,
        )

    # -- the listing -------------------------------------------------------------------------------

    def _listing(self, final: _Final) -> EntryList:
        where = self.host
        if final.outcome == "success":
            return EntryList(parse_listing(final.data, where), where)
        code = final.http_status
        if code in (404, 405) or (final.problem in ("not_json", "empty") and (code or 500) < 500):
            raise ListingUnsupportedError(
                f"the service at {where} offers no listing of the dictionary "
                f"(HTTP {code}: {final.reason})",
                cause=final.cause,
                http_status=code,
            )
        raise ServiceError(
            f"could not list the dictionary at {where}: {final.reason}",
            cause=final.cause,
            http_status=code,
        )


_WAITING = "while waiting for the service's rate limit"
_BEFORE_SENDING = "before it was sent (while its snapshot was saved)"


def _never_sent(started: float, when: str) -> _Final:
    """A request stopped before its first attempt went out."""
    reason = f"not attempted: stopped (Ctrl-C or cancel) {when}"
    return _Final("failure", Cause.NOT_ATTEMPTED, reason, None, 0, time.monotonic() - started)


class _StoppedBeforeSending(Exception):
    """Ctrl-C (or cancel) came while ``ready`` was waited for: the request is not sent."""


def _then_unless_stopped(
    ready: Callable[[], object], stop: Callable[[], bool]
) -> Callable[[], None]:
    """``ready()``, then a last look at ``stop()``: Ctrl-C pressed while a snapshot was being
    saved still stops the request, as no byte of it has gone out yet."""

    def before_sending() -> None:
        ready()
        if stop():
            raise _StoppedBeforeSending

    return before_sending


def _with_consequence(final: _Final, consequence: str) -> str | None:
    if final.outcome == "unknown":
        return f"{final.reason}{consequence}"
    return final.reason


def _pause(seconds: float, stop: Callable[[], bool]) -> bool:
    """Sleep ``seconds`` unless ``stop()`` turns true first (checked every 50 ms)."""
    end = time.monotonic() + seconds
    while not stop():
        left = end - time.monotonic()
        if left <= 0:
            return True
        time.sleep(min(0.05, left))
    return False
