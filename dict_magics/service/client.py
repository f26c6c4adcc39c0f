"""The dictionary client: every operation of the service, with retries and honest results.

Every front end goes through ``DictionaryClient``. It holds no display logic: it sends through
``transport`` (one attempt, one deadline), reads each answer with ``answers`` (which also says
whether to try again), keeps Ctrl-C from cutting a request off (``batch.HeldCtrlC``), and words
what happened. A deletion or an addition always comes back as a result whose ``outcome`` is
``success`` only when the service said so, ``failure`` only when the service certainly did not
act, and ``unknown`` otherwise. It raises only for a caller's mistake (a bad id, base URL or
option), before any request, and for a listing it cannot produce (``ServiceError``).
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from .. import settings
from ..errors import (
    DictMagicsError,
    InvalidEntryError,
    InvalidIdError,
    ListingUnsupportedError,
    ServiceError,
)
from ..models import (
    AddBatch,
    AddResult,
    BatchResult,
    Cause,
    DeleteResult,
    Entry,
    EntryList,
    Outcome,
    UpdateResult,
)
from ..models.secret import Secret, Unpicklable, mask
from ..models.terms import entry_problems
from . import batch
from .answers import IDEMPOTENT, Verdict, delay, judge, parse_listing
from .auth import AUTH_MODES, TOKEN_PATH, PlainJSON, TokenAuth, shared, token_request_body
from .batch import AUTH_STOP_AFTER, HeldCtrlC, RequestInterrupted
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
from .settle import settle_adds
from .signing import SignedAuth
from .transport import ANSWER_LIMIT, LISTING_LIMIT, Gate, NotSent, Transport

if TYPE_CHECKING:
    import requests

__all__ = ["BatchResult", "DeleteResult", "DictionaryClient", "Progress", "RequestInterrupted"]

_T = TypeVar("_T")
_R = TypeVar("_R")

Progress = Callable[[int, int, DeleteResult], None]
"""``progress(done, total, result)``, called after each result of a batch."""
AddProgress = Callable[[int, int, AddResult], None]
"""``progress(done, total, result)``, called after each entry's result of ``add_entries``."""
log = logging.getLogger(__name__)

LIST_PATH = API_PREFIX.rstrip("/")
"""The collection: ``GET`` lists it, ``POST`` adds to it."""
BULK_PATH = LIST_PATH + "/bulk"
"""``POST`` a JSON array of entries: all added, or none."""
NONCE_RETRIES = 25
"""How many times one request is sent again at once after 40005 ("nonce too small": not acted
on), each with a fresh, larger nonce; these do not count against ``max_retries``. Parallel
connections reorder a few requests; 25 in a row means something else is wrong."""
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
_UNKNOWN_BULK = (
    ". The request may have reached the service, so the entries of this chunk may have been "
    "added; it is not sent again blindly (a listing settles it)"
)
_UNKNOWN_UPDATE = (
    ". The request may have reached the service, so the entry may hold the new terms; sending "
    "it again is safe (an update does the same however often it is sent)"
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
    code: int | None = None
    vendor_message: str | None = None
    nonce_refusals: int = 0


class DictionaryClient(Unpicklable):
    """Deletes, lists, adds (one or in bulk) and updates user-dictionary entries.

    ``auth="signature"`` (the default) signs every request (accessKey, nonce, signature);
    ``auth="token"`` gets one token (``service.auth``: shared by every client of this service
    and keys in the process, asked to last ``token_duration`` seconds, renewed before it ends
    and once after a refusal) and sends it as ``Authorization: Bearer``. The client cannot be
    pickled: it holds the secret.

    ``timeout`` is one attempt's deadline, from sending to the last byte of the answer;
    ``max_retries`` is how many times a request is sent again when that is safe (see
    ``answers``), each time with a fresh nonce and signature; ``workers`` sizes the connection
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
        auth: str = settings.AUTH,
        token_duration: int = settings.TOKEN_DURATION,
    ) -> None:
        self.base_url = normalize_base_url(base_url)
        if auth not in AUTH_MODES:
            raise DictMagicsError(
                f"auth must be {' or '.join(map(repr, AUTH_MODES))}, not {auth!r}.", option="auth"
            )
        if not isinstance(token_duration, int) or token_duration < 1:
            raise DictMagicsError(
                f"token_duration must be a whole number of seconds >= 1, not {token_duration!r}."
            )
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
        self.auth = auth
        self.token_duration = token_duration
        self._secret = Secret(secret_key)
        self._tokens = shared(self.base_url, access_key, self._secret) if auth == "token" else None
        self._auth = (
            TokenAuth(self._tokens)
            if self._tokens is not None
            else SignedAuth(access_key, self._secret, nonces)
        )
        loopback = is_loopback(urlsplit(self.base_url).hostname or "")
        # A proxy from the environment must not see loopback traffic (the sandbox).
        self._transport = Transport(
            self._auth, session=session, trust_env=not loopback, workers=max(1, workers)
        )

    def __repr__(self) -> str:
        return (
            f"DictionaryClient(base_url={self.base_url!r}, access_key={mask(self.access_key)!r}, "
            f"auth={self.auth!r})"
        )

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
        self, entry_id: str | int, *, ready: Future[Any] | None = None
    ) -> DeleteResult:
        """Delete one entry. Raises ``InvalidIdError`` (before any request) for a bad id.

        Ctrl-C does not abandon a request in flight: the call waits for its answer (at most
        one deadline), then raises ``RequestInterrupted`` (a ``KeyboardInterrupt``) carrying
        the true result, so a loop stops and nothing is left unknown that need not be.

        ``ready`` (a ``concurrent.futures.Future``) must be done before each attempt's first
        byte goes out; it is waited for once connected and signed (so a snapshot being synced
        meanwhile costs no extra time). If it raised, that exception propagates and nothing
        was sent.
        """
        text = check_id(entry_id)
        with HeldCtrlC() as held:
            held.result = self._delete_one(text, held.stop.is_set, _gate(ready, held))
        return held.result

    def delete_all(self, *, ready: Future[Any] | None = None) -> DeleteResult:
        """Delete every entry of this account. Front ends confirm before calling this.

        Ctrl-C and ``ready`` behave as for ``delete_entry``.
        """
        with HeldCtrlC() as held:
            stop, gate = held.stop.is_set, _gate(ready, held)
            final = self._exchange("DELETE", purge_path(), stop=stop, gate=gate)
            held.result = self._delete_result(None, final)
        return held.result

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
        run = self._run_batch(
            unique,
            self._delete_one,
            workers=min(workers, max(1, len(unique))),
            on_wait=on_wait,
            sent=_was_sent,
            refused=_refused,
            progress=progress,
            cancel=cancel,
        )
        interrupted = run.interrupted or (cancel is not None and cancel.is_set())
        by_id = {
            t: r if r is not None else self._not_attempted(t, run.why)
            for t, r in zip(unique, run.results, strict=True)
        }
        return BatchResult([by_id[t] for t in texts], interrupted=interrupted)

    def list_entries(self) -> EntryList:
        """Every entry, from the signed ``GET`` listing (retried like a DELETE).

        Raises ``ListingUnsupportedError`` when the service has no listing (404, 405, 501) and
        ``ServiceError`` for a listing it cannot use (malformed, not JSON, refused, or no
        answer). Read-only, so Ctrl-C simply interrupts it.
        """
        final = self._exchange("GET", LIST_PATH, limit=LISTING_LIMIT)
        return self._listing(final)

    def add_entry(self, entry: Entry) -> AddResult:
        """Add ``entry`` (its four terms; the service picks the id) with one ``POST``.

        Raises ``InvalidEntryError`` (before any request) for terms or language codes the
        service would refuse. Never sent twice once it may have reached the service: such an
        outcome is ``unknown`` (a listing settles it). Ctrl-C behaves as for ``delete_entry``.
        """
        if not isinstance(entry, Entry):
            raise DictMagicsError(f"add_entry needs an Entry, not {type(entry).__name__}.")
        check_entries([entry])
        body = json.dumps(entry.to_service(with_id=False), ensure_ascii=False).encode("utf-8")
        with HeldCtrlC() as held:
            final = self._exchange("POST", LIST_PATH, body=body, stop=held.stop.is_set)
            held.result = _add_result(entry, final, _UNKNOWN_ADD)
        return held.result

    def add_entries(
        self,
        entries: Iterable[Entry],
        *,
        chunk_size: int = settings.BULK_CHUNK,
        workers: int = settings.WORKERS,
        progress: AddProgress | None = None,
        cancel: threading.Event | None = None,
        on_wait: WaitListener | None = None,
        before: Iterable[Entry] | None = None,
    ) -> AddBatch:
        """Add many entries with bulk ``POST``s of ``chunk_size`` entries on ``workers`` threads.

        Every entry is checked first: ``InvalidEntryError`` names the first one the service
        would refuse (its position, terms and why), and nothing is sent. A chunk whose answer
        is lost may have been added: it is never sent again; one listing after the batch
        settles it (counting terms, so identical entries are told apart), against ``before``
        (the listing the caller already has) or one this call takes before the first chunk.
        Outcomes the listings cannot decide stay ``unknown``. Results come back one per entry,
        in input order; ``progress(done, total, result)`` after each; Ctrl-C, ``cancel`` and
        refused credentials stop as in ``delete_entries`` (entries never sent are
        ``not_attempted``).
        """
        if isinstance(entries, Entry | str | bytes | Mapping):
            raise DictMagicsError(
                "add_entries takes a list of Entry objects; use add_entry for one."
            )
        entries = list(entries)
        if not all(isinstance(e, Entry) for e in entries):
            wrong = next(e for e in entries if not isinstance(e, Entry))
            raise DictMagicsError(f"add_entries needs Entry objects, not {type(wrong).__name__}.")
        if not (_is_int(chunk_size) and 1 <= chunk_size <= settings.MAX_BULK_CHUNK):
            raise DictMagicsError(
                f"chunk_size must be {settings.span(1, settings.MAX_BULK_CHUNK)}, not "
                f"{chunk_size!r}.",
                option="chunk_size",
            )
        if not _is_int(workers) or workers < 1:
            raise DictMagicsError(f"workers must be at least 1, not {workers!r}.")
        check_entries(entries)
        if not entries:
            return AddBatch([])
        cancel = cancel or threading.Event()
        known = self._listing_before(before)
        chunks = [entries[i : i + chunk_size] for i in range(0, len(entries), chunk_size)]
        total, done = len(entries), 0

        def report(_: int, __: int, chunk: list[AddResult]) -> None:
            nonlocal done
            for result in chunk:
                done += 1
                if progress is not None:
                    progress(done, total, result)

        run = self._run_batch(
            chunks,
            self._add_chunk,
            workers=min(workers, len(chunks)),
            on_wait=on_wait,
            sent=lambda chunk: chunk[0].attempts > 0,
            refused=lambda chunk: chunk[0].cause is Cause.AUTH,
            progress=report,
            cancel=cancel,
            name="dict-magics-bulk",
        )
        results: list[AddResult] = []
        for chunk, outcome in zip(chunks, run.results, strict=True):
            if outcome is not None:
                results.extend(outcome)
            else:
                reason = _never_sent_reason(run.why)
                results.extend(
                    AddResult("failure", e, reason=reason, attempts=0, cause=Cause.NOT_ATTEMPTED)
                    for e in chunk
                )
        requests = sum(1 for outcome in run.results if outcome is not None)
        lost = tuple(i for i, r in enumerate(results) if r.outcome_unknown)
        listed = False
        after = None
        if lost and known is not None:
            after = self._listing_or_none("after")
            if after is not None:
                listed = True
                results = _whole_chunks(settle_adds(results, known, after), chunks, lost)
        interrupted = run.interrupted or cancel.is_set()
        return AddBatch(
            results,
            interrupted=interrupted,
            why=run.why,
            requests=requests + listed,
            settled=lost if listed else (),
            after=after,
        )

    def update_entry(
        self, entry_id: str | int, entry: Entry, *, old: Entry | None = None
    ) -> UpdateResult:
        """Replace entry ``entry_id``'s terms with ``entry``'s (``PUT``), in place.

        Raises ``InvalidIdError`` / ``InvalidEntryError`` before any request. A PUT does the
        same however often it is sent, so it is retried like a DELETE; a lost answer leaves the
        outcome ``unknown`` (``service.settle.settle_updates`` decides it from a listing).
        ``old`` (the entry as listed before) is carried into the result. Ctrl-C behaves as for
        ``delete_entry``.
        """
        text, new = _checked_update(entry_id, entry)
        with HeldCtrlC() as held:
            held.result = self._update_one((text, new, old), held.stop.is_set)
        return held.result

    def update_entries(
        self,
        updates: Iterable[tuple[str | int, Entry]],
        *,
        old: Mapping[str, Entry] | None = None,
        workers: int = settings.WORKERS,
        progress: Callable[[int, int, UpdateResult], None] | None = None,
        cancel: threading.Event | None = None,
        on_wait: WaitListener | None = None,
    ) -> list[UpdateResult]:
        """Several ``(id, entry)`` updates on ``workers`` threads (the batch engine of
        ``delete_entries``): every one checked before the first request, results in input
        order, ``old[id]`` carried into each result; Ctrl-C, ``cancel`` and refused credentials
        stop as in ``delete_entries`` (updates never sent are ``not_attempted``)."""
        if isinstance(updates, str | bytes | Mapping):
            raise DictMagicsError("update_entries takes a list of (id, Entry) pairs.")
        old = old or {}
        checked = [_checked_update(i, e) for i, e in updates]
        items = [(text, new, old.get(text)) for text, new in checked]
        if not _is_int(workers) or workers < 1:
            raise DictMagicsError(f"workers must be at least 1, not {workers!r}.")
        if not items:
            return []
        run = self._run_batch(
            items,
            self._update_one,
            workers=min(workers, len(items)),
            on_wait=on_wait,
            sent=_was_sent,
            refused=_refused,
            progress=progress,
            cancel=cancel,
            name="dict-magics-update",
        )
        return [
            r
            if r is not None
            else UpdateResult(
                "failure",
                text,
                new,
                before,
                reason=_never_sent_reason(run.why, "update"),
                attempts=0,
                cause=Cause.NOT_ATTEMPTED,
            )
            for (text, new, before), r in zip(items, run.results, strict=True)
        ]

    def _update_one(
        self, item: tuple[str, Entry, Entry | None], stop: Callable[[], bool]
    ) -> UpdateResult:
        text, new, old = item
        body = json.dumps(new.to_service(with_id=False), ensure_ascii=False).encode("utf-8")
        final = self._exchange("PUT", entry_path(text), body=body, stop=stop)
        return UpdateResult(entry_id=text, new=new, old=old, **_answered(final, _UNKNOWN_UPDATE))

    def _add_chunk(self, chunk: list[Entry], stop: Callable[[], bool]) -> list[AddResult]:
        """One bulk POST: every entry of the chunk ends as the request did."""
        items = [e.to_service(with_id=False) for e in chunk]
        body = json.dumps(items, ensure_ascii=False).encode("utf-8")
        final = self._exchange("POST", BULK_PATH, body=body, stop=stop)
        return [_add_result(e, final, _UNKNOWN_BULK) for e in chunk]

    def _listing_before(self, before: Iterable[Entry] | None) -> list[Entry] | None:
        """What the dictionary held before the additions, to settle lost answers against:
        the caller's, or one listing (``None`` when the service gives none)."""
        if before is not None:
            return list(before)
        return self._listing_or_none("before")

    def _listing_or_none(self, when: str) -> list[Entry] | None:
        """A listing ``when`` ("before" / "after") the additions, ``None`` if there is none."""
        try:
            return list(self.list_entries())
        except ServiceError as exc:
            log.debug("no listing %s the additions (%s): lost answers stay unknown", when, exc)
            return None

    # -- batches -------------------------------------------------------------------------------

    def _run_batch(
        self,
        items: Sequence[_T],
        send: Callable[[_T, Callable[[], bool]], _R],
        *,
        workers: int,
        on_wait: WaitListener | None,
        **options: Any,
    ) -> batch.BatchRun[_R]:
        """``batch.run`` on a pool of ``workers`` connections, ``on_wait`` told of rate pauses:
        the one way deletes, additions and updates go out in batches."""
        self._transport.ensure_pool(workers)
        with self._gate.listen(on_wait):
            return batch.run(items, send, workers=workers, **options)

    @staticmethod
    def _not_attempted(text: str, why: str) -> DeleteResult:
        return DeleteResult(
            "failure", text, reason=_never_sent_reason(why), attempts=0, cause=Cause.NOT_ATTEMPTED
        )

    # -- one request, with retries ---------------------------------------------------------------

    def _delete_one(
        self, text: str, stop: Callable[[], bool], gate: Gate | None = None
    ) -> DeleteResult:
        final = self._exchange("DELETE", entry_path(text), stop=stop, gate=gate)
        return self._delete_result(text, final)

    @staticmethod
    def _delete_result(entry_id: str | None, final: _Final) -> DeleteResult:
        consequence = _UNKNOWN_PURGE if entry_id is None else _UNKNOWN_DELETE
        return DeleteResult(entry_id=entry_id, **_answered(final, consequence))

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """How long to wait before attempt ``attempt + 1``."""
        return delay(
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
        gate: Gate | None = None,
        bare: bool = False,
    ) -> _Final:
        """Send until the answer is final, the retry budget is spent, or ``stop()``.

        A 429 or 40103 spends the rate-limit patience (time), not ``max_retries``: the gate
        holds every worker until the service's ``Retry-After`` and paces them after it. A 40005
        (nonce too small: not acted on, whatever the method) is sent again at once with a fresh
        nonce, up to ``NONCE_RETRIES`` times, not counted against ``max_retries`` either. With
        token auth each attempt carries a token good for a while yet, and a refused token is
        renewed and the request sent once more (refused, it was not acted on). ``bare``: no
        credentials in the headers (the token request itself).
        """
        tokens = None if bare else self._tokens
        renewed = 0  # the one re-send after a refused token
        url = self.base_url + path
        started = time.monotonic()
        earlier: tuple[int, Verdict] | None = None  # an attempt that may have been acted on
        fresh_nonce = 0  # the one re-send after "nonce already used" (never acted on)
        limited = 0  # attempts answered 429 / 40103
        nonce_refusals = 0  # attempts answered 40005
        attempt = 0
        verdict: Verdict | None = None
        while True:
            if tokens is not None:
                refusal = self._use_token(stop)
                if refusal is not None and verdict is None:
                    return refusal
                if refusal is not None:
                    tail = f"; then {refusal.reason}"
                    return self._settle(verdict, earlier, attempt, started, tail)  # type: ignore[arg-type]
            ticket = self._gate.acquire(stop)
            if ticket is None:
                if verdict is None:
                    return _never_sent(started, _WAITING)
                return self._settle(verdict, earlier, attempt, started, _STOPPED)
            attempt += 1
            try:
                answer = self._transport.send(
                    method,
                    url,
                    body=body,
                    limit=limit,
                    timeout=self.timeout,
                    gate=gate,
                    auth=_PLAIN if bare else None,
                )
            except NotSent:
                attempt -= 1  # not one byte of it went out
                if verdict is None:
                    return _never_sent(started, _BEFORE_SENDING)
                return self._settle(verdict, earlier, attempt, started, _STOPPED)
            verdict = judge(method, answer, limit, host=self.host, timeout=self.timeout)
            if verdict.rate_limited:
                limited += 1
                self._limited(ticket, verdict)
            elif verdict.http_status is not None:
                self._gate.passed(ticket)
            if tokens is not None and verdict.cause is Cause.AUTH and not renewed:
                renewed = 1
                tokens.refused(self._auth.generation)  # type: ignore[union-attr]
                continue
            if verdict.nonce_too_small:
                nonce_refusals += 1
                if stop():
                    return self._settle(verdict, earlier, attempt, started, _STOPPED)
                if nonce_refusals <= NONCE_RETRIES:
                    refused = getattr(self._auth, "nonce_refused", None)
                    if refused is not None:
                        refused(nonce_refusals)
                    continue
                tail = f"; gave up after {nonce_refusals} fresh nonces were refused"
                return self._settle(verdict, earlier, attempt, started, tail, nonce_refusals)
            if verdict.nonce_reused and not fresh_nonce:
                fresh_nonce = 1
                # "Already used" can also mean a gateway replayed this very request after the
                # service acted on it: a later "no such entry" proves nothing, and a POST is
                # not sent again.
                earlier = (attempt, verdict)
                if method in IDEMPOTENT:
                    continue
                return self._settle(verdict, earlier, attempt, started, "")
            again = verdict.again
            if again is not None and again.maybe_applied:
                earlier = (attempt, verdict)
            if again is None:
                return self._settle(verdict, earlier, attempt, started, "")
            if stop():
                return self._settle(verdict, earlier, attempt, started, _STOPPED)
            if verdict.rate_limited:
                waited = time.monotonic() - started + self._gate.waiting()
                if waited <= self.rate_limit_patience:
                    continue  # the gate waits
                tail = (
                    f"; gave up after {attempt} attempt{'s' * (attempt != 1)}: waiting on would "
                    f"pass the {self.rate_limit_patience:g} s allowed for the service's rate limit"
                )
                return self._settle(verdict, earlier, attempt, started, tail)
            retries = attempt - fresh_nonce - limited - nonce_refusals - renewed
            if retries <= self.max_retries:
                if _pause(self._delay(retries, again.after), stop):
                    continue
                return self._settle(verdict, earlier, attempt, started, _STOPPED)
            tail = f"; gave up after {attempt} attempt{'s' * (attempt != 1)}"
            return self._settle(verdict, earlier, attempt, started, tail)

    def _use_token(self, stop: Callable[[], bool]) -> _Final | None:
        """Give this thread's next request a token (the shared one, or a new one); a failed
        ``_Final`` when none can be had (then the request is not sent)."""
        assert self._tokens is not None and isinstance(self._auth, TokenAuth)
        failed: list[_Final] = []

        def fetch() -> tuple[str, float]:
            body = token_request_body(self.access_key, self._secret, self.token_duration)
            final = self._exchange("POST", TOKEN_PATH, body=body, stop=stop, bare=True)
            inner = final.data.get("data") if isinstance(final.data, dict) else None
            token = inner.get("encodedJWT") if isinstance(inner, dict) else None
            if final.outcome == "success" and isinstance(token, str) and token.strip():
                return token.strip(), float(self.token_duration)
            failed.append(final)
            raise _NoToken

        try:
            token, generation = self._tokens.current(fetch)
        except _NoToken:
            final = failed[0]
            why = _hidden(final.reason, self._secret) or "the answer holds no data.encodedJWT"
            cause = final.cause if final.outcome != "success" else Cause.BAD_ANSWER
            reason = f"could not get a token from {self.host}: {why}; this request was not sent"
            return _Final(
                "failure",
                cause,
                reason,
                final.http_status,
                final.attempts,
                final.elapsed,
                code=final.code,
                vendor_message=_hidden(final.vendor_message, self._secret),
            )
        self._auth.use(token, generation)
        return None

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
        nonce_refusals: int = 0,
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
            verdict.code,
            verdict.vendor_message,
            nonce_refusals,
        )

    # -- the listing -------------------------------------------------------------------------------

    def _listing(self, final: _Final) -> EntryList:
        where = self.host
        if final.outcome == "success":
            return EntryList(parse_listing(final.data, where), where)
        code = final.http_status
        # Only "no such endpoint" means the service has no listing. Any other unreadable answer,
        # a 200 gateway page included, is a listing that failed this time: remembered as "no
        # listing", it would let deletes go ahead without a copy for a minute.
        if code in (404, 405, 501):
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
            code=final.code,
            vendor_message=final.vendor_message,
        )


def check_entries(entries: Sequence[Entry]) -> None:
    """``InvalidEntryError`` naming the first entry the service would refuse, and why."""
    for number, entry in enumerate(entries, 1):
        problems = entry_problems(*entry.terms)
        if problems:
            where = f"entry {number} of {len(entries)}" if len(entries) > 1 else "the entry"
            shown = f"{entry.from_lang!r:.20} {entry.from_text!r:.40} -> {entry.to_lang!r:.20}"
            why = "; ".join(p.message for p in problems)
            raise InvalidEntryError(f"{where} ({shown}): {why}. Nothing was sent.")


def _checked_update(entry_id: str | int, entry: Entry) -> tuple[str, Entry]:
    """The checked id and the new entry under it; raises before any request."""
    text = check_id(entry_id)
    if not isinstance(entry, Entry):
        raise DictMagicsError(f"an update needs an Entry, not {type(entry).__name__}.")
    check_entries([entry])
    return text, Entry(text, *entry.terms)


def _add_result(entry: Entry, final: _Final, consequence: str) -> AddResult:
    return AddResult(entry=entry, **_answered(final, consequence))


def _answered(final: _Final, consequence: str) -> dict[str, Any]:
    """The fields every result takes from how its request ended (``consequence``: what an
    unknown outcome means for this kind of request)."""
    return {
        "status": "success" if final.outcome == "success" else "failure",
        "http_status": final.http_status,
        "reason": _with_consequence(final, consequence),
        "outcome_unknown": final.outcome == "unknown",
        "attempts": final.attempts,
        "elapsed": final.elapsed,
        "cause": final.cause,
        "code": final.code,
        "vendor_message": final.vendor_message,
    }


def _hidden(text: str | None, secret: str) -> str | None:
    """``text`` (what the token endpoint answered) without the secret key: a server or a proxy
    page may echo the token request's body, which holds it. An excerpt cut in the middle of
    the secret loses its visible start too."""
    if not text:
        return text
    for form in dict.fromkeys((secret, json.dumps(secret)[1:-1])):
        text = text.replace(form, "<hidden>")
        for size in range(len(form) - 1, 3, -1):
            text = text.replace(form[:size] + "\u2026", "<hidden>\u2026")
    return text


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _was_sent(result: DeleteResult | AddResult | UpdateResult) -> bool:
    """Whether a batch's request went out (else it stopped while waiting at the rate gate)."""
    return result.attempts > 0


def _whole_chunks(
    results: list[AddResult], chunks: list[list[Entry]], lost: tuple[int, ...]
) -> list[AddResult]:
    """A bulk request whose answer was lost acted on all its entries or on none (the sandbox
    adds all or nothing, and the vendor documents nothing finer). When a listing shows some of
    a lost chunk's entries and not others, the ones it shows may be someone else's: they stay
    unknown rather than "verified"."""
    out = list(results)
    lost_set = set(lost)
    start = 0
    for chunk in chunks:
        span = [i for i in range(start, start + len(chunk)) if i in lost_set]
        start += len(chunk)
        seen = [out[i] for i in span]
        if any(r.ok for r in seen) and any(not r.ok and not r.outcome_unknown for r in seen):
            for i in span:
                if out[i].ok:
                    out[i] = replace(
                        out[i],
                        status="failure",
                        outcome_unknown=True,
                        verified=False,
                        reason="the answer to its bulk request was lost, and a listing "
                        "afterwards holds this entry but not others sent with it: the request "
                        "may not have acted, and this entry may be someone else's; not sent "
                        "again (a restore adds only what is missing)",
                    )
    return out


def _refused(result: DeleteResult | AddResult | UpdateResult) -> bool:
    """An answer that every later request would get too: refused credentials, or a nonce the
    service will not take (40008, or 40005 past its re-sends: the clock or the nonce state)."""
    return result.cause in (Cause.AUTH, Cause.NONCE)


def _never_sent_reason(why: str, what: str = "entry") -> str:
    """Why an item of a batch was never sent, from ``BatchRun.why``."""
    reasons = {
        "interrupted": f"not attempted: the batch was interrupted (Ctrl-C) before this {what} "
        "was sent",
        "auth": f"not attempted: the service refused the credentials (or their nonces) for the "
        f"first {AUTH_STOP_AFTER} requests, so the rest were not sent (check the access key, "
        "the secret key, and this computer's clock)",
        "error": "not attempted: the batch stopped on an unexpected error",
    }
    return reasons.get(why, f"not attempted: the batch was cancelled before this {what} was sent")


_WAITING = "while waiting for the service's rate limit"
_BEFORE_SENDING = "before it was sent (while its snapshot was saved)"


def _never_sent(started: float, when: str) -> _Final:
    """A request stopped before its first attempt went out."""
    reason = f"not attempted: stopped (Ctrl-C or cancel) {when}"
    return _Final("failure", Cause.NOT_ATTEMPTED, reason, None, 0, time.monotonic() - started)


class _NoToken(Exception):
    """The token request did not give a token (its ``_Final`` says why)."""


_PLAIN = PlainJSON()


def _gate(ready: Future[Any] | None, held: HeldCtrlC) -> Gate | None:
    """What the transport waits for before the first byte: ``ready`` done, then a last look at
    Ctrl-C (pressed while a snapshot was being saved, it still stops the request: no byte of it
    has gone out yet)."""
    return None if ready is None else Gate(ready, held.stop)


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
