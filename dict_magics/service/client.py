"""The client: one method per endpoint, with retries and honest results.

It raises only for a caller's mistake (before any request) and for a listing or translation
it cannot produce; a change comes back as a result, noted in ``audit`` before it leaves.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import re
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, Protocol, TypeVar

from .. import errors, settings
from ..models import (
    AddBatch,
    AddResult,
    BatchResult,
    Cause,
    DeleteResult,
    Entry,
    EntryList,
    UpdateResult,
    codes,
)
from ..models.entry import check_id, is_int
from ..models.secret import Secret, Unpicklable, mask, redact
from ..models.terms import entry_problems
from . import batch, http

_R = TypeVar("_R")
log = logging.getLogger(__name__)

Stop = Callable[[], bool]  # true once a request must not be sent (again)
UpdateItem = tuple[str, Entry, Entry | None]  # (id, new terms, old terms if known)
Progress = Callable[[int, int, Any], None]  # (done, total, result), on the calling thread
WaitListener = Callable[[float, str], None]  # (seconds, reason): every worker waits so long
LIST_PATH = http.API_PREFIX.rstrip("/")
BULK_PATH = LIST_PATH + "/bulk"
PURGE_PATH = http.API_PREFIX + "dictionary-all"
TRANSLATE_PATH = "/api/v1/translate"
MAX_WORDS = 200
"""Words in one element of a translation request (the vendor's limit)."""
MAX_TEXT_BYTES = 270 * 1024
"""A translation request's elements together stay under this many bytes (UTF-8)."""
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = re.compile(f"[{_CJK}]|[^\\s\u3000-\u303f{_CJK}]+")
_UNKNOWN = {  # each follows ". The request may have reached the service, so "
    "delete": "the entry may be gone; sending it again is safe (it answers 'no such entry' if so)",
    "purge": "the entries may be gone; a listing shows what is left",
    "add": "the entry may have been added; it is not sent again blindly (a listing shows "
    "whether it is there)",
    "bulk": "the entries of this chunk may have been added; it is not sent again blindly (a "
    "listing settles it)",
    "update": "the entry may hold the new terms; sending it again is safe (an update does the "
    "same however often it is sent)",
}
_STOPPED = "; not sent again: stopped (Ctrl-C or cancel)"


class Audit(Protocol):
    """Where a change is noted: ``sending`` (on disk) before it leaves, ``ended`` after."""

    def sending(self, method: str, entry_id: str | None, entries: Sequence[Entry] = ()) -> str: ...

    def ended(self, key: str, results: Sequence[Any]) -> None: ...


class RequestInterrupted(KeyboardInterrupt):
    """Ctrl-C during one request, raised once it has ended with what it really did (``then``:
    what another SIGINT handler raised, held until the result was noted)."""

    def __init__(self, result: Any, then: BaseException | None = None) -> None:
        super().__init__()
        self.result = result
        self.then = then

    def passed_on(self, result: Any) -> BaseException:
        """What to raise once ``result`` is noted: the handler's own exception, else this."""
        return self.then if self.then is not None else RequestInterrupted(result)

    def __str__(self) -> str:
        return f"interrupted after the request in flight ended: {self.result}"


def defer_interrupt(send: Callable[[Stop], _R]) -> _R:
    """``send(stop)`` with Ctrl-C deferred on the main thread (it only sets ``stop``), then
    delivered as ``RequestInterrupted(result)``. An ignored Ctrl-C stays ignored, but a
    SIGTERM a front end passes on as Ctrl-C still stops."""
    found = None
    if threading.current_thread() is threading.main_thread():
        found = signal.getsignal(signal.SIGINT)
    if found is None:
        return send(lambda: False)
    stop = threading.Event()

    def noted(signum: int, frame: Any) -> None:
        if signum != signal.SIGINT or found is not signal.SIG_IGN:
            stop.set()

    signal.signal(signal.SIGINT, noted)
    try:
        result = send(stop.is_set)
    finally:
        signal.signal(signal.SIGINT, found)
    if not stop.is_set():
        return result
    if found is signal.default_int_handler or not callable(found):  # SIG_DFL, SIG_IGN
        raise RequestInterrupted(result)
    try:
        found(signal.SIGINT, None)
    except KeyboardInterrupt:
        raise RequestInterrupted(result) from None
    except BaseException as other:  # SystemExit, say: once the result is noted
        raise RequestInterrupted(result, then=other) from None
    return result


class RateLimit:
    """The pace every worker of a client keeps to, learned from 429 / 40103 answers (AIMD).

    Each refusal pauses every worker until its ``Retry-After`` (else 0.5 s doubling to 8 s) and
    halves the pace once per pause, not below 0.9 of what got through in the second before.
    Each answer let through adds 1 / pace (2 after the first refusal: it may follow a burst).
    ``rate``: a pace an earlier batch learned, kept to from the first request."""

    def __init__(self, rate: float | None = None) -> None:
        self._lock = threading.Lock()
        self.not_before = 0.0
        self.rate = rate
        self.limited = 0
        self.most = 0  # the most answers let through in one second
        self._cut: float | None = None  # the pace the last refusal of a pace in force set
        self._growing = False  # since the first refusal: the pace doubles while used
        self._set_at = 0.0  # when the pace in force took effect (the end of its pause)
        self._through = 0  # answers let through of requests sent at the pace in force
        self._last = 0.0  # when the last request went
        self._passed: deque[float] = deque()
        self._streak = 0
        self.listeners: list[WaitListener] = []

    @property
    def found(self) -> float | None:
        """The pace to remember: the one the last refusal of a pace in force set (not a first
        refusal, which may follow a mere burst), never more than ever got through in a second."""
        return None if self._cut is None else max(1.0, min(self._cut, self.most))

    def kept(self, limited: int, pace: float | None) -> float | None:
        """The pace to keep after an operation begun at ``limited`` refusals and ``pace``."""
        if self.limited != limited and self.found is not None:
            return self.found  # what its refusals found
        return float(self.most) if pace and self.most >= 1.05 * pace else None  # a low pace rises

    def waiting(self) -> float:
        """Seconds every worker still waits (0: not paused)."""
        return max(0.0, self.not_before - time.monotonic())

    def wait(self, stop: Stop) -> float | None:
        """When this request may go (waited for); ``None`` if ``stop()`` came first."""
        while not stop():
            with self._lock:
                now = time.monotonic()
                gap = 1.0 / self.rate if self.rate else 0.0
                slot = max(self.not_before, self._last + gap)
                if now >= slot:  # a sleep's overrun of up to one gap is made up
                    self._last = max(slot, now - gap)
                    return now
            time.sleep(min(slot - now, 0.05))
        return None

    def passed(self, sent_at: float) -> None:
        """An answer that was not 429: the pace let it through."""
        with self._lock:
            now = time.monotonic()
            self._streak = 0
            self._passed.append(now)
            while self._passed[0] < now - 1.0:
                self._passed.popleft()
            self.most = max(self.most, len(self._passed))
            if sent_at >= self._set_at:
                self._through += 1
                if self.rate is not None:
                    self.rate += 2.0 if self._growing else 1.0 / self.rate

    def limit(self, sent_at: float, retry_after: float | None, cap: float) -> None:
        """A 429 / 40103 for a request sent at ``sent_at``: pause everyone, slow down."""
        with self._lock:
            now = time.monotonic()
            self.limited += 1
            if retry_after is None:
                self._streak += 1
                retry_after = min(8.0, 0.5 * 2 ** (self._streak - 1))
            retry_after = min(retry_after, cap)
            told = now + retry_after > self.not_before + 0.05
            self.not_before = max(self.not_before, now + retry_after)
            if sent_at >= self._set_at and self._through:  # the pace in force was used: too fast
                since = max(now - 1.0, self._set_at)  # at the pace in force, lately
                passed = sum(1 for t in self._passed if t >= since)
                self._growing = self.rate is None
                self.rate = max(1.0, 0.9 * passed, (self.rate or 0.0) / 2)
                if not self._growing:
                    self._cut = self.rate
                self._set_at = self.not_before
                self._through = 0
            listeners = list(self.listeners) if told else []
        for listener in listeners:
            listener(retry_after, "the service's rate limit")


class DictionaryClient(Unpicklable):
    """Lists, deletes, adds and updates entries; translates. Not picklable: it holds the secret.

    ``auth="token"`` sends one shared token as Bearer, ``"signature"`` signs every request;
    ``bulk`` and ``update``: whether the service has those endpoints (``probe`` finds out);
    ``pace``: the requests a second its rate limit allowed an earlier batch."""

    def __init__(
        self,
        base_url: str,
        access_key: str,
        secret_key: str,
        *,
        timeout: float = settings.TIMEOUT,
        max_retries: int = settings.RETRIES,
        session: Any = None,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        nonces: Callable[[], str] | None = None,
        rate_limit_patience: float = 300.0,
        auth: str = settings.AUTH,
        bulk: bool = True,
        update: bool = True,
        pace: float | None = None,
    ) -> None:
        self.base_url = http.normalize_base_url(base_url)
        self.host = http.host_of(self.base_url)
        """Where requests go, for messages and confirmations."""
        problem = _problem(auth, access_key, secret_key, timeout, max_retries, pace)
        if problem:
            raise errors.DictMagicsError(
                problem, option="auth" if problem.startswith("auth") else None
            )
        self.access_key = access_key
        self.timeout = float(timeout)
        self.retry = http.RetryPolicy(
            int(max_retries), backoff, max_backoff, rate_limit_patience=rate_limit_patience
        )
        self.auth = auth
        self.bulk, self.update = bulk, update
        self.closed = False
        self.rate_limit = RateLimit(pace)
        self.requests_sent = 0
        """Attempts sent so far (counted without a lock: exact for one thread at a time)."""
        self._said_single = False
        self._secret = Secret(secret_key)
        self._tokens = (
            http.shared(self.base_url, access_key, self._secret) if auth == "token" else None
        )
        self._signature = http.SignatureAuth(
            access_key, self._secret, nonces or http.nonces_for(access_key)
        )
        self._http = http.HTTP(self.base_url, session)

    def with_auth(self, auth: str) -> DictionaryClient:
        """A client for the same service and keys, on the same connections, sending ``auth``."""
        return DictionaryClient(
            self.base_url,
            self.access_key,
            self._secret,
            timeout=self.timeout,
            max_retries=self.retry.total,
            session=self._http.session,
            nonces=self._signature.nonces,
            auth=auth,
        )

    def __repr__(self) -> str:
        return (
            f"DictionaryClient(base_url={self.base_url!r}, access_key={mask(self.access_key)!r}, "
            f"auth={self.auth!r})"
        )

    def close(self) -> None:
        """Close the connections (a request made afterwards opens a new one)."""
        self.closed = True
        self._http.session.close()

    def __enter__(self) -> DictionaryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the endpoints ----------------------------------------------------------------------

    def list_entries(self) -> EntryList:
        """Every entry; ``ListingUnsupportedError`` when the service has no listing."""
        final = self._exchange("GET", LIST_PATH, limit=http.LISTING_LIMIT)
        if final.outcome == "success":
            return EntryList(http.parse_listing(final.data, self.host), self.host)
        if final.http_status in (404, 405, 501):  # only "no such endpoint" means no listing
            what = f"the service at {self.host} offers no listing of the dictionary"
            why = f"HTTP {final.http_status}: {final.reason}"
            raise _failed(final, f"{what} ({why})", kind=errors.ListingUnsupportedError)
        raise _failed(final, f"could not list the dictionary at {self.host}: {final.reason}")

    def delete_entry(self, entry_id: str | int, *, audit: Audit | None = None) -> DeleteResult:
        """Delete one entry; ``InvalidIdError`` (before any request) for a bad id."""
        return defer_interrupt(partial(self._delete_one, check_id(entry_id), audit=audit))

    def delete_all(self, *, audit: Audit | None = None) -> DeleteResult:
        """Delete every entry of this account. Front ends confirm before calling this."""
        make = partial(DeleteResult, entry_id=None)
        return defer_interrupt(lambda stop: self._change("purge", PURGE_PATH, make, stop, audit)[1])

    def delete_entries(
        self,
        ids: Iterable[str | int],
        workers: int = settings.WORKERS,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        on_wait: WaitListener | None = None,
        *,
        audit: Audit | None = None,
    ) -> BatchResult:
        """Delete several entries on ``workers`` threads, each id once, results in input order."""
        if isinstance(ids, str | bytes | bytearray | Mapping):
            raise errors.InvalidIdError(
                f"delete_entries takes a list of ids, not {type(ids).__name__}; "
                "use delete_entry for one id."
            )
        texts = [check_id(i) for i in ids]
        unique = list(dict.fromkeys(texts))
        send = partial(self._delete_one, audit=audit)
        results, _, stopped = self._run_batch(unique, send, workers, on_wait, progress, cancel)
        by_id = dict(zip(unique, results, strict=True))
        return BatchResult([by_id[t] for t in texts], interrupted=stopped)

    def add_entry(self, entry: Entry, *, audit: Audit | None = None) -> AddResult:
        """Add ``entry`` with one ``POST``, never sent again once it may have arrived."""
        check_entries([entry])
        return defer_interrupt(partial(self._add_one, entry, audit=audit))

    def add_entries(
        self,
        entries: Iterable[Entry],
        *,
        chunk_size: int = settings.BULK_CHUNK,
        workers: int = settings.WORKERS,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        audit: Audit | None = None,
    ) -> AddBatch:
        """Add many entries in bulk ``POST``s of ``chunk_size``; a lost answer is not resent."""
        if isinstance(entries, Entry | str | bytes | Mapping):
            raise errors.DictMagicsError(
                "add_entries takes a list of Entry objects; use add_entry for one."
            )
        entries = list(entries)
        if not (is_int(chunk_size) and 1 <= chunk_size <= settings.MAX_BULK_CHUNK):
            raise errors.DictMagicsError(
                f"chunk_size must be {settings.span(1, settings.MAX_BULK_CHUNK)}, not "
                f"{chunk_size!r}.",
                option="chunk_size",
            )
        check_entries(entries)
        if not self.bulk:
            chunk_size = 1
        chunks = [entries[i : i + chunk_size] for i in range(0, len(entries), chunk_size)]
        done = itertools.count(1)

        def report(_: int, __: int, chunk: list[AddResult]) -> None:
            for result in chunk:  # progress counts entries, not chunks
                if progress is not None:
                    progress(next(done), len(entries), result)

        send = partial(self._add_chunk, audit=audit)
        outcomes, why, stopped = self._run_batch(
            chunks, send, workers, None, report, cancel, "bulk"
        )
        results = [result for outcome in outcomes for result in outcome]
        sent = sum(1 for outcome in outcomes if outcome[0].attempts)
        return AddBatch(results, interrupted=stopped, why=why, requests=sent)

    def update_entry(
        self,
        entry_id: str | int,
        entry: Entry,
        *,
        old: Entry | None = None,
        audit: Audit | None = None,
    ) -> UpdateResult:
        """Replace entry ``entry_id``'s terms in place (``PUT``); ``old`` goes into the result."""
        text, new = _checked_update(entry_id, entry)
        self.check_update()
        return defer_interrupt(partial(self._update_one, (text, new, old), audit=audit))

    def update_entries(
        self,
        updates: Iterable[tuple[str | int, Entry]],
        *,
        old: Mapping[str, Entry] | None = None,
        workers: int = settings.WORKERS,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        audit: Audit | None = None,
    ) -> tuple[list[UpdateResult], str, bool]:
        """Several ``(id, entry)`` updates on ``workers`` threads: the results, why the batch
        stopped early (``""``: it did not) and whether it was stopped."""
        if isinstance(updates, str | bytes | Mapping):
            raise errors.DictMagicsError("update_entries takes a list of (id, Entry) pairs.")
        old = old or {}
        items = [(t, new, old.get(t)) for t, new in (_checked_update(i, e) for i, e in updates)]
        self.check_update()
        send = partial(self._update_one, audit=audit)
        return self._run_batch(items, send, workers, None, progress, cancel, "update")

    def check_update(self) -> None:
        """``UsageProblem`` when the service has no PUT (a delete and an add change the id)."""
        if not self.update:
            raise errors.UsageProblem(
                f"the service at {self.host} has no PUT (as the probe found), so an entry cannot "
                "be changed in place: a delete and an add would give it a new id. Nothing was "
                "sent."
            )

    def translate(
        self,
        texts: Sequence[str],
        source_lang: str,
        target_lang: str,
        *,
        field_id: str = "1",
        contract_id: str | None = None,
    ) -> list[str]:
        """Each element of ``texts`` as the engine translates it (billed), in few requests."""
        sizes = check_translatable(texts)
        chunks: list[list[str]] = []
        total = MAX_TEXT_BYTES
        for text, size in zip(texts, sizes, strict=True):
            if total + size >= MAX_TEXT_BYTES:
                chunks.append([])
                total = 0
            chunks[-1].append(text)
            total += size
        asked = {"fieldId": field_id, "sourceLang": source_lang, "targetLang": target_lang}
        if contract_id:
            asked["contractId"] = contract_id
        out: list[str] = []
        for chunk in chunks:
            body = _body({**asked, "text": chunk})
            final = self._exchange("POST", TRANSLATE_PATH, body=body, limit=http.LISTING_LIMIT)
            inner = final.data.get("data") if isinstance(final.data, dict) else None
            found = inner.get("translationResult") if isinstance(inner, dict) else None
            items = found if isinstance(found, list) else []
            said = [i.get("translatedText") for i in items if isinstance(i, dict)]
            got = [text for text in said if isinstance(text, str)]
            if final.outcome != "success" or len(got) != len(chunk):
                why = final.reason or "the answer holds no translatedText for each element"
                cause = final.cause if final.reason else Cause.BAD_ANSWER
                raise _failed(final, f"could not translate at {self.host}: {why}", cause)
            out += got
        return out

    def attempt(
        self, method: str, path: str, *, nonce: str | None = None, forged: bool = False
    ) -> tuple[http.Verdict, str]:
        """One signed attempt, never re-sent, and its nonce: how ``probe`` asks what the service
        does with an old or reused ``nonce``, or a ``forged`` signature."""
        nonce = nonce or self._signature.nonces()
        secret = Secret(f"not-{self._secret}") if forged else self._secret
        auth = http.SignatureAuth(self.access_key, secret, lambda: nonce)
        self.requests_sent += 1
        answer = self._http.send(method, path, auth, timeout=self.timeout, limit=http.LISTING_LIMIT)
        return http.judge(
            method, answer, http.LISTING_LIMIT, host=self.host, timeout=self.timeout
        ), nonce

    # -- one request of each kind ------------------------------------------------------------

    def _change(
        self,
        kind: str,
        path: str,
        make: Callable[..., _R],
        stop: Stop,
        audit: Audit | None,
        *,
        about: str | None = None,
        entries: Sequence[Entry] = (),
    ) -> tuple[http.Verdict, _R]:
        """Send one change (``kind``: a key of ``_UNKNOWN``); ``make`` builds its result."""
        data = [e.to_service(with_id=False) for e in entries]
        body = _body(data if kind == "bulk" else data[0]) if data else None
        method = {"delete": "DELETE", "purge": "DELETE", "update": "PUT"}.get(kind, "POST")
        final = self._exchange(
            method, path, body=body, stop=stop, audit=audit, about=about, entries=entries
        )
        unknown = final.outcome == "unknown"
        result = make(
            status="success" if final.outcome == "success" else "failure",
            http_status=final.http_status,
            reason=f"{final.reason}. The request may have reached the service, so {_UNKNOWN[kind]}"
            if unknown
            else final.reason,
            outcome_unknown=unknown,
            attempts=final.attempts,
            elapsed=final.elapsed,
            cause=final.cause,
            code=final.code,
            vendor_message=final.vendor_message,
        )
        if audit is not None and final.key is not None:
            audit.ended(final.key, result if isinstance(result, list) else [result])
        return final, result

    def _delete_one(self, text: str, stop: Stop, audit: Audit | None) -> DeleteResult:
        make = partial(DeleteResult, entry_id=text)
        return self._change("delete", http.API_PREFIX + text, make, stop, audit, about=text)[1]

    def _update_one(self, item: UpdateItem, stop: Stop, audit: Audit | None) -> UpdateResult:
        text, new, old = item
        make = partial(UpdateResult, entry_id=text, new=new, old=old)
        path = http.API_PREFIX + text
        return self._change("update", path, make, stop, audit, about=text, entries=[new])[1]

    def _add_one(self, entry: Entry, stop: Stop, audit: Audit | None) -> AddResult:
        make = partial(AddResult, entry=entry)
        return self._change("add", LIST_PATH, make, stop, audit, entries=[entry])[1]

    def _add_chunk(
        self, chunk: list[Entry], stop: Stop, audit: Audit | None = None
    ) -> list[AddResult]:
        """One bulk POST (every entry ends as it did); after a 404 or 405 to it, one POST each."""
        if self.bulk:
            final, results = self._change(
                "bulk",
                BULK_PATH,
                lambda **fields: [AddResult(entry=e, **fields) for e in chunk],
                stop,
                audit,
                entries=chunk,
            )
            if final.outcome != "failure" or final.http_status not in (404, 405):
                return results
            self.bulk = False
        if not self._said_single:  # said once per client: slower, not an error
            self._said_single = True
            log.warning(
                "the service at %s has no bulk endpoint: adding one entry per POST", self.host
            )
        return [self._add_one(entry, stop, audit) for entry in chunk]

    def _run_batch(
        self,
        items: Sequence[Any],
        send: Callable[[Any, Stop], Any],
        workers: int,
        on_wait: WaitListener | None,
        progress: Progress | None,
        cancel: threading.Event | None,
        name: str = "batch",
    ) -> tuple[list[Any], str, bool]:
        """``batch.run`` (``on_wait`` told of rate-limit pauses meanwhile): the results (an
        item never sent: not attempted), why it stopped, whether it was stopped."""
        if not is_int(workers) or workers < 1:
            raise errors.DictMagicsError(f"workers must be at least 1, not {workers!r}.")
        listeners = self.rate_limit.listeners
        if on_wait is not None:
            listeners.append(on_wait)
        try:
            run = batch.run(
                items,
                send,
                workers=min(workers, max(1, len(items))),
                sent=lambda result: _first(result).attempts > 0,
                refused=self._refused,
                progress=progress,
                cancel=cancel,
                name=f"dict-magics-{name}",
            )
        finally:
            if on_wait is not None:
                listeners.remove(on_wait)
        results = [
            _not_attempted(run.why, item) if result is None else result
            for item, result in zip(items, run.results, strict=True)
        ]
        return results, run.why, run.interrupted or (cancel is not None and cancel.is_set())

    def _refused(self, result: Any) -> str:
        """What every later request would meet too (``token``, ``auth``), else empty."""
        if self._tokens is not None and self._tokens.failure:
            return "token"
        return "auth" if _first(result).cause in (Cause.AUTH, Cause.NONCE) else ""

    # -- one request, with retries ------------------------------------------------------------

    def _exchange(
        self,
        method: str,
        path: str,
        *,
        body: bytes | None = None,
        limit: int = http.ANSWER_LIMIT,
        stop: Stop = lambda: False,
        audit: Audit | None = None,
        about: str | None = None,
        entries: Sequence[Entry] = (),
        bare: bool = False,
    ) -> http.Verdict:
        """Send until the answer is final, the retry policy is spent, or ``stop()``; noted in
        ``audit`` right before the first attempt. ``bare``: no credentials (the token request)."""
        policy, started = self.retry, time.monotonic()
        attempts = retries = nonce_refusals = 0
        renewed = reused = False
        earlier: tuple[int, http.Verdict] | None = None  # an attempt that may have been acted on
        verdict: http.Verdict | None = None
        key: str | None = None

        def ended(tail: str) -> http.Verdict:
            """How the request ended: unknown when an earlier attempt may have acted."""
            assert verdict is not None
            hidden = (self._secret, getattr(auth, "token", None))  # a service may quote either
            outcome, cause = verdict.outcome, verdict.cause
            reason = None if outcome == "success" else f"{verdict.reason}{tail}"
            if earlier is not None and outcome == "failure":
                number, first = earlier
                what = f"HTTP {first.http_status}" if first.http_status else first.reason
                outcome, cause = "unknown", first.cause
                reason = f"attempt {number} ({what}) may have been acted on; then: {reason}"
            said = verdict.vendor_message
            return replace(
                verdict,
                outcome=outcome,
                cause=cause,
                reason=reason and redact(reason, *hidden),
                attempts=attempts,
                elapsed=time.monotonic() - started,
                key=key,
                vendor_message=said and redact(said, *hidden),
            )

        while True:
            auth: Any = http.BearerAuth() if bare else self._signature
            if self._tokens is not None and not bare:
                auth = self._bearer(stop)
                if isinstance(auth, http.Verdict):
                    return auth if verdict is None else ended(f"; then {auth.reason}")
            sent_at = self.rate_limit.wait(stop)
            if sent_at is None:
                if verdict is None:
                    reason = "not attempted: stopped (Ctrl-C or cancel) before it was sent"
                    return http.Verdict("failure", Cause.NOT_ATTEMPTED, reason, attempts=0)
                return ended(_STOPPED)
            if audit is not None and key is None:
                key = audit.sending(method, about, entries)
            attempts += 1
            self.requests_sent += 1
            answer = self._http.send(
                method, path, auth, body=body, timeout=self.timeout, limit=limit
            )
            verdict = http.judge(method, answer, limit, host=self.host, timeout=self.timeout)
            if verdict.rate_limited:
                self.rate_limit.limit(sent_at, verdict.retry_after, policy.max_retry_after)
            elif verdict.http_status is not None:
                self.rate_limit.passed(sent_at)
            if isinstance(auth, http.BearerAuth) and self._tokens and auth.token and not bare:
                if verdict.cause is Cause.AUTH and not renewed:
                    renewed = True
                    self._tokens.refused(auth.token)
                    continue
            if verdict.code == codes.NONCE_TOO_SMALL:  # not acted on: a fresh nonce at once
                nonce_refusals += 1
                if stop():
                    return ended(_STOPPED)
                if nonce_refusals <= policy.nonce_resends:
                    skip = getattr(self._signature.nonces, "skip_ahead", None)
                    if skip is not None and nonce_refusals >= 3:
                        skip(10 * 2 ** min(nonce_refusals - 3, 16))
                    continue
                return ended(f"; gave up after {nonce_refusals} fresh nonces were refused")
            if verdict.nonce_reused and not reused:
                reused = True  # maybe a gateway replayed it after the service acted
                earlier = (attempts, verdict)
                if method in http.IDEMPOTENT:
                    continue
                return ended("")
            if not verdict.again:
                return ended("")
            if verdict.outcome == "unknown":  # it may have been acted on
                earlier = (attempts, verdict)
            if stop():
                return ended(_STOPPED)
            if verdict.rate_limited:
                waited = time.monotonic() - started + self.rate_limit.waiting()
                if waited <= policy.rate_limit_patience:
                    continue
                patience = f"{policy.rate_limit_patience:g} s"
                return ended(
                    f"; gave up after {attempts} attempt{'s' * (attempts != 1)}: waiting on would "
                    f"pass the {patience} allowed for the service's rate limit"
                )
            retries += 1
            if retries > policy.total:
                return ended(f"; gave up after {attempts} attempt{'s' * (attempts != 1)}")
            end = time.monotonic() + policy.wait(retries, verdict.retry_after)
            while not stop() and time.monotonic() < end:
                time.sleep(min(0.05, max(0.0, end - time.monotonic())))
            if stop():
                return ended(_STOPPED)

    def _bearer(self, stop: Stop) -> http.BearerAuth | http.Verdict:
        """A Bearer auth with a good token, or how the token request failed."""
        assert self._tokens is not None

        def fetch() -> tuple[str, float] | http.Verdict:
            body = http.token_request_body(self.access_key, self._secret, settings.TOKEN_DURATION)
            final = self._exchange("POST", http.TOKEN_PATH, body=body, stop=stop, bare=True)
            inner = final.data.get("data") if isinstance(final.data, dict) else None
            token = inner.get("encodedJWT") if isinstance(inner, dict) else None
            if final.outcome == "success" and isinstance(token, str) and token.strip():
                return token.strip(), float(settings.TOKEN_DURATION)
            why = final.reason or "the answer holds no data.encodedJWT"
            return replace(
                final,
                outcome="failure",
                cause=final.cause if final.outcome != "success" else Cause.BAD_ANSWER,
                reason=f"could not get a token from {self.host}: {why}; this request was not sent",
                data=None,
            )

        got = self._tokens.current(fetch)
        return got if isinstance(got, http.Verdict) else http.BearerAuth(got)


def check_translatable(texts: Sequence[str]) -> list[int]:
    """Each element's size in bytes; ``UsageProblem`` for the first over the engine's limits."""
    sizes = [len(t.encode("utf-8", "surrogatepass")) for t in texts]
    for number, (text, size) in enumerate(zip(texts, sizes, strict=True), 1):
        words = len(_WORD.findall(text))
        if words > MAX_WORDS or size >= MAX_TEXT_BYTES:
            what = f"{words} words" if words > MAX_WORDS else f"{size:,} bytes"
            raise errors.UsageProblem(
                f"element {number} has {what}: the engine takes at most {MAX_WORDS} words an "
                f"element, under {MAX_TEXT_BYTES // 1024} KB a request. Split it; nothing was "
                "sent."
            )
    return sizes


def _problem(
    auth: str, access_key: Any, secret_key: Any, timeout: Any, retries: int, pace: Any = None
) -> str | None:
    """What is wrong with a client's settings, in words, or ``None``."""
    if auth not in http.AUTH_MODES:
        return f"auth must be {' or '.join(map(repr, http.AUTH_MODES))}, not {auth!r}."
    if not isinstance(access_key, str) or not isinstance(secret_key, str):
        return "the access key and the secret key must be text (str)."
    if not access_key or not secret_key:
        return "both an access key and a secret key are needed."
    for name, value in (("access key", access_key), ("secret key", secret_key)):
        if not value.isascii() and any("\ud800" <= ch <= "\udfff" for ch in value):
            return f"the {name} is not valid UTF-8 text."
    if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0):
        return f"timeout must be a positive number of seconds, not {timeout!r}."
    if retries < 0:
        return f"max_retries must be 0 or more, not {retries!r}."
    if pace is not None and not (isinstance(pace, int | float) and 1 <= pace <= settings.MAX_PACE):
        return (
            f"pace must be {settings.span(1, settings.MAX_PACE)} requests a second, not {pace!r}."
        )
    return None


def check_entries(entries: Sequence[Entry]) -> None:
    """``InvalidEntryError`` naming the first entry the service would refuse, and why."""
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, Entry):
            raise errors.DictMagicsError(
                f"an add or update needs an Entry, not {type(entry).__name__}."
            )
        problems = entry_problems(*entry.terms)
        if problems:
            where = f"entry {number} of {len(entries)}" if len(entries) > 1 else "the entry"
            shown = f"{entry.from_lang!r:.20} {entry.from_text!r:.40} -> {entry.to_lang!r:.20}"
            why = "; ".join(p.message for p in problems)
            raise errors.InvalidEntryError(f"{where} ({shown}): {why}. Nothing was sent.")


def _failed(
    final: http.Verdict, message: str, cause: Cause | None = None, kind: type = errors.ServiceError
) -> errors.ServiceError:
    return kind(
        message,
        cause=cause or final.cause,
        http_status=final.http_status,
        code=final.code,
        vendor_message=final.vendor_message,
    )


def _body(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


def _checked_update(entry_id: str | int, entry: Entry) -> tuple[str, Entry]:
    text = check_id(entry_id)
    check_entries([entry])
    return text, Entry(text, *entry.terms)


def _first(result: Any) -> Any:
    """A batch item's result (a bulk chunk's: its first entry's)."""
    return result[0] if isinstance(result, list) else result


def _not_attempted(why: str, item: Any) -> Any:
    """The result of an item a batch never sent (a bulk chunk: one per entry), saying why."""
    what = "update" if isinstance(item, tuple) else "entry"  # an update is (id, new, old)
    reasons = {
        "interrupted": f"not attempted: the batch was interrupted (Ctrl-C) before this {what} "
        "was sent",
        "auth": "not attempted: the service refused the credentials (or their nonces) for "
        f"{batch.AUTH_STOP_AFTER} requests in a row, so the rest were not sent (check the access "
        "key, the secret key, and this computer's clock)",
        "token": f"not attempted: no token could be had for {batch.AUTH_STOP_AFTER} requests in "
        "a row (the token endpoint is not asked again at once), so the rest were not sent",
        "error": "not attempted: the batch stopped on an unexpected error",
    }
    reason = reasons.get(why, f"not attempted: the batch stopped before this {what} was sent")
    fields: dict[str, Any] = {"reason": reason, "attempts": 0, "cause": Cause.NOT_ATTEMPTED}
    if isinstance(item, list):  # a bulk chunk
        return [AddResult("failure", entry=entry, **fields) for entry in item]
    if isinstance(item, tuple):
        entry_id, new, old = item
        return UpdateResult("failure", entry_id, new, old=old, **fields)
    return DeleteResult("failure", entry_id=item, **fields)
