"""The dictionary client: signed DELETE requests, retries, timeouts and honest results.

Every front end (magics, panel, command line) goes through ``DictionaryClient``; it holds no
display logic and returns ``DeleteResult`` / ``BatchResult`` for every outcome the network can
produce. It raises only for a caller's mistake (a bad id or base URL), before any request.
"""

from __future__ import annotations

import email.utils
import json
import math
import random
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import requests
import urllib3.exceptions
from requests.adapters import HTTPAdapter
from urllib3.exceptions import ConnectTimeoutError, MaxRetryError, ReadTimeoutError

from ..errors import DictMagicsError
from ..profiles.secret import Secret, mask
from .models import BatchResult, DeleteResult
from .paths import (
    check_id,
    entry_path,
    host_of,
    is_loopback,
    normalize_base_url,
    purge_path,
)
from .signing import SignedAuth

__all__ = ["BatchResult", "DeleteResult", "DictionaryClient", "Progress"]

Progress = Callable[[int, int, DeleteResult], None]
"""``progress(done, total, result)``, called after each result of a batch."""

RETRY_STATUSES = frozenset({429, 502, 503, 504})
# 502 and 504 come from a gateway: the service behind it may have acted on the request.
MAYBE_APPLIED_STATUSES = frozenset({502, 504})
MAX_BODY_BYTES = 64 * 1024
# The body is read raw (to bound its size and time), so ask for it uncompressed.
_HEADERS = {"Accept-Encoding": "identity"}
EXCERPT_CHARS = 160


@dataclass
class _Attempt:
    """What one attempt produced: a final result, or a reason to try again."""

    result: DeleteResult | None = None
    retry_after: float | None = None
    retry_reason: str = ""
    maybe_applied: bool = False


def _excerpt(text: str) -> str:
    """A short, single-line, printable excerpt of something a server sent."""
    cleaned = "".join(ch if ch.isprintable() else " " for ch in text)
    cleaned = " ".join(cleaned.split())
    if len(cleaned) > EXCERPT_CHARS:
        cleaned = cleaned[:EXCERPT_CHARS] + "\u2026"
    return cleaned


def _parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), else ``None``."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class DictionaryClient:
    """Deletes user-dictionary entries with signed requests.

    ``timeout`` bounds connecting and each read, and reading a whole answer; ``max_retries`` is
    how many times a request that certainly was not acted on (connection refused, 429, 503, ...)
    is sent again, each time with a fresh nonce and signature.
    """

    def __init__(
        self,
        base_url: str,
        access_key: str,
        secret_key: str,
        *,
        timeout: float = 15.0,
        max_retries: int = 3,
        session: requests.Session | None = None,
        workers: int = 8,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        max_retry_after: float = 30.0,
    ) -> None:
        self.base_url = normalize_base_url(base_url)
        if not isinstance(access_key, str) or not isinstance(secret_key, str):
            raise DictMagicsError("the access key and the secret key must be text (str).")
        if not access_key or not secret_key:
            raise DictMagicsError("both an access key and a secret key are needed.")
        if not (math.isfinite(timeout) and timeout > 0):
            raise DictMagicsError(f"timeout must be a positive number of seconds, not {timeout!r}.")
        if max_retries < 0:
            raise DictMagicsError(f"max_retries must be 0 or more, not {max_retries!r}.")
        self.access_key = access_key
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self._auth = SignedAuth(access_key, Secret(secret_key))
        self._session = session or requests.Session()
        if session is None and is_loopback(urlsplit(self.base_url).hostname or ""):
            # A proxy from the environment must not see loopback traffic (the sandbox).
            self._session.trust_env = False
        self._pool_lock = threading.Lock()
        self._pool_size = 0
        self._ensure_pool(workers)

    def __repr__(self) -> str:
        return f"DictionaryClient(base_url={self.base_url!r}, access_key={mask(self.access_key)!r})"

    def close(self) -> None:
        """Close the connection pool."""
        self._session.close()

    def __enter__(self) -> DictionaryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def host(self) -> str:
        """Where requests go, for messages and confirmations."""
        return host_of(self.base_url)

    def _ensure_pool(self, workers: int) -> None:
        """Size the connection pool so every worker keeps its own connection alive."""
        with self._pool_lock:
            if workers <= self._pool_size:
                return
            previous = self._session.adapters.get("https://")
            adapter = HTTPAdapter(pool_connections=1, pool_maxsize=workers, max_retries=0)
            self._session.mount("http://", adapter)
            self._session.mount("https://", adapter)
            self._pool_size = workers
            if previous is not None:
                previous.close()

    # -- public operations ---------------------------------------------------------------

    def delete_entry(self, entry_id: str | int) -> DeleteResult:
        """Delete one entry. Raises ``InvalidIdError`` (before any request) for a bad id."""
        text = check_id(entry_id)
        return self._delete(entry_path(text), text)

    def delete_all(self) -> DeleteResult:
        """Delete every entry of this account. Front ends confirm before calling this."""
        return self._delete(purge_path(), None)

    def delete_entries(
        self,
        ids: Iterable[str | int],
        workers: int = 4,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
    ) -> BatchResult:
        """Delete several entries on ``workers`` threads; results come back in input order.

        Every id is checked before the first request, duplicates are deleted once, and
        ``progress`` is called after each result. If ``cancel`` is set (or the caller presses
        Ctrl-C) no new request starts; ids not attempted are reported as not deleted.
        """
        texts = [check_id(i) for i in ids]
        unique = list(dict.fromkeys(texts))
        if workers < 1:
            raise DictMagicsError(f"workers must be at least 1, not {workers!r}.")
        workers = min(workers, max(1, len(unique)))
        self._ensure_pool(workers)
        by_id = self._run_batch(unique, workers, progress, cancel or threading.Event())
        return BatchResult([by_id[t] for t in texts])

    # -- batch machinery -----------------------------------------------------------------

    def _run_batch(
        self,
        unique: list[str],
        workers: int,
        progress: Progress | None,
        cancel: threading.Event,
    ) -> dict[str, DeleteResult]:
        results: dict[str, DeleteResult] = {}
        pending = iter(unique)
        take_lock = threading.Lock()
        done_lock = threading.Lock()
        errors: list[BaseException] = []
        total = len(unique)

        def work() -> None:
            while not cancel.is_set():
                with take_lock:
                    text = next(pending, None)
                if text is None:
                    return
                try:
                    result = self._delete(entry_path(text), text)
                except BaseException as exc:  # a bug: re-raised in the caller's thread
                    errors.append(exc)
                    cancel.set()
                    return
                with done_lock:
                    results[text] = result
                    if progress is not None:
                        progress(len(results), total, result)

        threads = [threading.Thread(target=work, daemon=True) for _ in range(workers)]
        for thread in threads:
            thread.start()
        try:
            for thread in threads:
                while thread.is_alive():
                    thread.join(0.1)
        except KeyboardInterrupt:
            cancel.set()
            for thread in threads:
                thread.join()
        if errors:
            raise errors[0]
        for text in unique:
            if text not in results:
                results[text] = DeleteResult(
                    "failure", text, reason="not attempted: the batch was cancelled", attempts=0
                )
        return results

    # -- one request, with retries ---------------------------------------------------------

    def _delete(self, path: str, entry_id: str | None) -> DeleteResult:
        url = self.base_url + path
        started = time.monotonic()
        maybe_applied = ""
        attempt = 0
        while True:
            attempt += 1
            outcome = self._attempt(url, entry_id, attempt, started)
            if outcome.result is not None:
                result = outcome.result
                if maybe_applied and not result.ok and not result.outcome_unknown:
                    result = self._unknown(
                        entry_id,
                        f"{maybe_applied}; a retry then answered: {result.reason}",
                        attempt,
                        started,
                        result.http_status,
                    )
                return result
            if outcome.maybe_applied:
                maybe_applied = f"attempt {attempt} answered {outcome.retry_reason}"
            if attempt > self.max_retries:
                reason = f"{outcome.retry_reason}; gave up after {attempt} attempts"
                if maybe_applied:
                    return self._unknown(entry_id, reason, attempt, started, None)
                return DeleteResult(
                    "failure",
                    entry_id,
                    reason=reason,
                    attempts=attempt,
                    elapsed=time.monotonic() - started,
                )
            time.sleep(self._delay(attempt, outcome.retry_after))

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Exponential backoff with full jitter, or the server's ``Retry-After`` (capped)."""
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        ceiling = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        return random.uniform(ceiling / 2, ceiling)

    def _unknown(
        self,
        entry_id: str | None,
        why: str,
        attempts: int,
        started: float,
        http_status: int | None,
    ) -> DeleteResult:
        return DeleteResult(
            "failure",
            entry_id,
            http_status=http_status,
            reason=(
                f"{why}. The request may have reached the service, so the entry may be gone; "
                "sending it again is safe (it answers 'no such entry' if so)"
            ),
            outcome_unknown=True,
            attempts=attempts,
            elapsed=time.monotonic() - started,
        )

    def _attempt(self, url: str, entry_id: str | None, attempt: int, started: float) -> _Attempt:
        try:
            response = self._session.delete(
                url,
                auth=self._auth,
                headers=_HEADERS,
                timeout=(self.timeout, self.timeout),
                allow_redirects=False,
                stream=True,
            )
        except requests.ConnectionError as exc:
            handshake = _tls_handshake_failure(exc)
            if handshake:
                reason = f"TLS handshake with {self.host} failed ({handshake}); nothing was sent"
                return _Attempt(_failure(entry_id, reason, None, attempt, started))
            where = self.host
            if isinstance(exc, requests.exceptions.ProxyError):
                where = f"the proxy for {self.host}"
            if isinstance(_cause(exc), urllib3.exceptions.NameResolutionError):
                reason = f"could not resolve the host name of {where}; nothing was sent"
                return _Attempt(_failure(entry_id, reason, None, attempt, started))
            if _not_sent(exc):
                return _Attempt(retry_reason=f"could not connect to {where}")
            why = "the connection was dropped before an answer came"
            return _Attempt(self._unknown(entry_id, why, attempt, started, None))
        except requests.Timeout:
            why = f"no answer within the {self.timeout:g} s timeout"
            return _Attempt(self._unknown(entry_id, why, attempt, started, None))
        except requests.RequestException as exc:
            reason = f"request failed: {type(exc).__name__}"
            return _Attempt(_failure(entry_id, reason, None, attempt, started))
        with response:
            return self._read(response, entry_id, attempt, started)

    def _read(
        self, response: requests.Response, entry_id: str | None, attempt: int, started: float
    ) -> _Attempt:
        code = response.status_code
        if 300 <= code < 400:
            target = host_of(response.headers.get("Location", "")) or "an unnamed location"
            reason = (
                f"HTTP {code}: the service redirected to {target}; not followed, "
                "so the credentials went nowhere else"
            )
            return _Attempt(_failure(entry_id, reason, code, attempt, started))
        if code in RETRY_STATUSES:
            return _Attempt(
                retry_after=_parse_retry_after(response.headers.get("Retry-After")),
                retry_reason=f"HTTP {code}",
                maybe_applied=code in MAYBE_APPLIED_STATUSES,
            )
        try:
            body = self._read_body(response)
        except _BodyTooSlow:
            why = f"HTTP {code}, but the answer did not arrive within {self.timeout:g} s"
            return _Attempt(self._unknown(entry_id, why, attempt, started, code))
        except requests.RequestException:
            why = f"HTTP {code}, but the connection broke while the answer was read"
            return _Attempt(self._unknown(entry_id, why, attempt, started, code))
        if body is None:
            reason = f"HTTP {code} with an answer larger than {MAX_BODY_BYTES // 1024} KiB"
            return _Attempt(_failure(entry_id, reason, code, attempt, started))
        return _Attempt(_interpret(entry_id, code, body, attempt, started))

    def _read_body(self, response: requests.Response) -> bytes | None:
        """Read at most ``MAX_BODY_BYTES`` within ``timeout`` seconds; ``None`` if larger."""
        deadline = time.monotonic() + self.timeout
        raw = response.raw
        read = getattr(raw, "read1", None) or raw.read
        chunks: list[bytes] = []
        size = 0
        try:
            while True:
                if time.monotonic() > deadline:
                    raise _BodyTooSlow
                chunk = read(8192)
                if not chunk:
                    return b"".join(chunks)
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    return None
                chunks.append(chunk)
        except (ReadTimeoutError, TimeoutError):
            raise _BodyTooSlow from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise requests.ConnectionError(type(exc).__name__) from None


class _BodyTooSlow(Exception):
    """The answer's body did not arrive in time."""


def _cause(exc: requests.ConnectionError) -> object:
    """The urllib3 error behind a requests error (through MaxRetryError and ProxyError)."""
    reason = exc.args[0] if exc.args else None
    if isinstance(reason, MaxRetryError):
        reason = reason.reason
    if isinstance(reason, urllib3.exceptions.ProxyError):
        reason = reason.original_error
    return reason


def _not_sent(exc: requests.ConnectionError) -> bool:
    """True when the request certainly never left: refused, unresolvable, or connect timeout
    (to the service or to a proxy on the way)."""
    return isinstance(exc, requests.ConnectTimeout) or isinstance(_cause(exc), ConnectTimeoutError)


_HANDSHAKE_REASONS = ("CERTIFICATE_VERIFY_FAILED", "WRONG_VERSION_NUMBER", "HANDSHAKE")


def _tls_handshake_failure(exc: requests.ConnectionError) -> str | None:
    """A short description when TLS failed while connecting, before anything was sent.

    A certificate that does not verify, or a server that does not speak TLS at all, fails the
    handshake: retrying would not help, and the service never saw the request.
    """
    if not isinstance(exc, requests.exceptions.SSLError):
        return None
    cause = _cause(exc)
    inner = cause.args[0] if isinstance(cause, Exception) and cause.args else cause
    if isinstance(inner, ssl.SSLCertVerificationError):
        return f"certificate not trusted: {inner.verify_message}"
    reason = getattr(inner, "reason", None) or ""
    if any(word in reason for word in _HANDSHAKE_REASONS):
        return reason.replace("_", " ").lower()
    return None


def _failure(
    entry_id: str | None, reason: str, code: int | None, attempt: int, started: float
) -> DeleteResult:
    return DeleteResult(
        "failure",
        entry_id,
        http_status=code,
        reason=reason,
        attempts=attempt,
        elapsed=time.monotonic() - started,
    )


def _interpret(
    entry_id: str | None, code: int, body: bytes, attempt: int, started: float
) -> DeleteResult:
    """Success only for a 2xx answer whose JSON ``status`` is ``success``."""
    text = body.decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        excerpt = _excerpt(text)
        reason = f"HTTP {code} with an answer that is not JSON" + (
            f": {excerpt!r}" if excerpt else " (empty body)"
        )
        return _failure(entry_id, reason, code, attempt, started)
    status = data.get("status") if isinstance(data, dict) else None
    if status == "success" and 200 <= code < 300:
        return DeleteResult(
            "success",
            entry_id,
            http_status=code,
            attempts=attempt,
            elapsed=time.monotonic() - started,
        )
    if status is None:
        reason = f"HTTP {code} with a JSON answer that has no status: {_excerpt(text)!r}"
    elif status in ("success", "failure"):
        reason = f"HTTP {code}, the service answered status {status!r}"
        detail = next(
            (
                data[k]
                for k in ("message", "error", "msg", "detail")
                if isinstance(data.get(k), str)
            ),
            None,
        )
        if detail:
            reason += f": {_excerpt(detail)}"
        if code in (401, 403):
            reason += " (check the access key, the secret key, and this computer's clock)"
    else:
        reason = f"HTTP {code} with an unexpected status {_excerpt(str(status))!r}"
    return _failure(entry_id, reason, code, attempt, started)
