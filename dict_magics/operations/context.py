"""What every operation is given (its settings, the ids as typed, where a batch reports) and
what the process keeps for it: one client per credentials and settings, one listing per
dictionary. Ids are read here once (``split_args``, ``ids_from_bytes``) so an id list means the
same wherever it is typed. Standard library only at import: the magics import it at load.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
import re
import secrets
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .. import settings as limits
from ..errors import (
    DeletionFailedError,
    InvalidIdError,
    ListingUnsupportedError,
    Remedy,
    ServiceError,
    UsageProblem,
)
from ..models.entry import check_id, is_int

if TYPE_CHECKING:
    from ..models import BatchResult, DeleteResult, Entry, EntryList
    from ..profiles.credentials import Credentials
    from ..service.client import DictionaryClient


R = TypeVar("R", bound="DeleteResult | BatchResult")


@dataclass(frozen=True)
class OperationSettings:
    """Where requests go and how they are sent; ``UsageProblem`` when out of bounds.
    ``profile`` and ``base_url`` empty: the default profile and its own base URL."""

    profile: str | None = None
    base_url: str | None = None
    timeout: float = limits.TIMEOUT
    max_retries: int = limits.RETRIES
    workers: int = limits.WORKERS
    raise_on_failure: bool = False
    snapshots: bool = True
    """Keep the entries about to be deleted in a snapshot file before the first deletion."""
    auth: str | None = None
    """``signature`` (every request signed) or ``token`` (one token request, then Bearer);
    ``None``: ``$DICT_MAGICS_AUTH``, else ``signature``."""
    chunk_size: int = limits.BULK_CHUNK
    """Entries per bulk addition request (restore, sync)."""
    listing_max_age: float | None = None
    """Seconds a delete's snapshot may take its terms from this process's cached listing
    (``0``: always list afresh first); ``None``: ``$DICT_MAGICS_LISTING_MAX_AGE``, else 0."""

    def __post_init__(self) -> None:
        for name, low, high, option in (
            ("workers", limits.MIN_WORKERS, limits.MAX_WORKERS, Remedy.WORKERS),
            ("max_retries", limits.MIN_RETRIES, limits.MAX_RETRIES, Remedy.MAX_RETRIES),
            ("chunk_size", 1, limits.MAX_BULK_CHUNK, "chunk_size"),
        ):
            value = getattr(self, name)
            if not is_int(value) or not low <= value <= high:
                what = name.replace("_", " ")
                raise UsageProblem(
                    f"{what} must be {limits.span(low, high)}, not {value!r}.", option=option
                )
        if not _seconds(self.timeout) or not self.timeout > 0:
            raise UsageProblem(
                f"the timeout must be > 0 seconds, not {self.timeout!r}.", option=Remedy.TIMEOUT
            )
        auth = (self.auth or os.environ.get(AUTH_ENV, "") or limits.AUTH).strip().lower()
        if auth not in ("signature", "token"):
            shown = repr(self.auth) if self.auth else f"${AUTH_ENV}={os.environ.get(AUTH_ENV)!r}"
            raise UsageProblem(f"auth must be 'signature' or 'token', not {shown}.", option="auth")
        age, shown = self.listing_max_age, repr(self.listing_max_age)
        if age is None:
            raw = os.environ.get(LISTING_MAX_AGE_ENV, "").strip()
            shown = f"${LISTING_MAX_AGE_ENV}={raw!r}"
            try:
                age = float(raw) if raw else limits.LISTING_MAX_AGE
            except ValueError:
                age = math.nan
        if not _seconds(age):
            raise UsageProblem(
                f"listing_max_age must be a number of seconds >= 0 (0: list afresh before every "
                f"snapshot), not {shown}.",
                option="listing_max_age",
            )
        object.__setattr__(self, "auth", auth)
        object.__setattr__(self, "listing_max_age", float(age))


AUTH_ENV = "DICT_MAGICS_AUTH"
LISTING_MAX_AGE_ENV = "DICT_MAGICS_LISTING_MAX_AGE"


def _seconds(value: object) -> bool:
    """A finite number of seconds, 0 or more."""
    return (is_int(value) or isinstance(value, float)) and math.isfinite(value) and value >= 0


class ProgressSink(Protocol):
    """Where a batch reports itself: ``start`` before the first request, ``sink(done,
    total, result)`` after each result (one call at a time), ``stop`` after the last, always;
    optionally ``waiting(seconds, reason)`` (from a worker thread) while the rate limit holds."""

    def start(self, total: int, label: str) -> None: ...

    def __call__(self, done: int, total: int, result: DeleteResult) -> None: ...

    def stop(self) -> None: ...


Warn = Callable[[str], None] | None
"""Where an operation says something that is not an error (front ends print it)."""


def say(warn: Warn, message: str) -> None:
    """Hand ``message`` to the front end, if it listens."""
    if warn is not None:
        warn(message)


def finish(result: R, settings: OperationSettings) -> R:
    """The result, or ``DeletionFailedError`` for one that failed when the settings ask for it."""
    if settings.raise_on_failure and not result.done:
        raise DeletionFailedError(result)
    return result


# -- ids as people type them --------------------------------------------------------------------

ID_SEPARATORS = re.compile(r"[\s,]+", re.ASCII)  # a no-break space is no separator: refused
COMMENT = re.compile(r"(?:^|\s)#.*")
BOM = "\ufeff"


def split_args(values: Sequence[str], *, check: bool = True) -> list[str]:
    """The ids in each argument; an empty argument is refused (whoever typed it meant an
    id). ``check=False``: split only (the caller checks later)."""
    for value in values:
        if not value.strip():
            raise InvalidIdError(
                f"the argument {value!r} is not an entry id: an entry id cannot be empty; "
                "nothing was sent."
            )
    parts = [part for value in values for part in ID_SEPARATORS.split(value) if part]
    return [check_id(part) for part in parts] if check else parts


def ids_from_bytes(data: bytes, source: str) -> list[str]:
    """The ids in a UTF-8 file (other bytes: a ``UsageProblem`` naming ``source``): one a line
    (spaces or commas also separate, as when typed); blank lines, ``#`` comments (at the start
    of a line or after a space) and a leading BOM skipped."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 1].hex()
        line = data[: exc.start].count(b"\n") + 1
        raise UsageProblem(
            f"cannot read ids from {source}: it is not UTF-8 text (byte 0x{bad} on line {line}). "
            "Nothing was sent."
        ) from None
    lines = [COMMENT.sub("", line) for line in text.removeprefix(BOM).splitlines()]
    return [check_id(part) for line in lines for part in ID_SEPARATORS.split(line) if part]


# -- what the process keeps: clients and listings ---------------------------------------------
# A client is kept between cells (a new one pays a new TCP and TLS handshake); credentials are
# read for every operation, so a login or a ``%config`` change gets a fresh client.


CACHE_ENV = "DICT_MAGICS_CLIENT_CACHE"
_KEY = secrets.token_bytes(32)
"""Fingerprints are keyed with this random value of the process: one that leaked cannot be
checked against a guessed secret elsewhere."""


def fingerprint(access_key: str, secret_key: str) -> str:
    """A keyed hash standing for the pair of keys in cache keys; never the secret itself."""
    digest = hmac.new(_KEY, digestmod=hashlib.sha256)
    for part in (access_key, secret_key):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()[:32]


@dataclass(frozen=True)
class ClientKey:
    """Everything that makes two clients differ; equal keys share one client."""

    profile: str
    base_url: str
    credentials: str
    timeout: float
    max_retries: int
    auth: str = "signature"

    @classmethod
    def of(
        cls, creds: Credentials, *, timeout: float, max_retries: int, auth: str = "signature"
    ) -> ClientKey:
        stamp = fingerprint(creds.access_key, creds.secret_key)
        return cls(creds.profile, creds.base_url, stamp, float(timeout), max_retries, auth)


class ClientCache:
    """Clients by ``ClientKey``, least recently used first (at most ``size``); thread-safe."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._clients: OrderedDict[ClientKey, DictionaryClient] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, creds: Credentials, **options: Any) -> DictionaryClient:
        """The kept client for these credentials and settings, made on first use; the profile's
        clients of other credentials or another base URL are closed."""
        key = ClientKey.of(
            creds,
            timeout=options["timeout"],
            max_retries=options["max_retries"],
            auth=options.get("auth", "signature"),
        )
        with self._lock:
            client = self._clients.get(key)
            if client is not None:
                self._clients.move_to_end(key)
                return client
            stale = [
                self._clients.pop(k)
                for k in list(self._clients)
                if k.profile == key.profile
                and (k.base_url, k.credentials) != (key.base_url, key.credentials)
            ]
            client = self._clients[key] = client_from(creds, **options)
            while len(self._clients) > self.size:
                stale.append(self._clients.popitem(last=False)[1])
        for old in stale:
            old.close()
        return client

    def kept(self) -> list[DictionaryClient]:
        """The clients kept now, least recently used first."""
        with self._lock:
            return list(self._clients.values())

    def forget(self, profile: str | None = None) -> int:
        """Close the clients of ``profile`` (``None``: all); returns how many. After a logout
        no secret stays in memory for the profile."""
        with self._lock:
            keys = [k for k in self._clients if profile in (None, k.profile)]
            gone = [self._clients.pop(k) for k in keys]
        for client in gone:
            client.close()
        return len(gone)

    def _after_fork(self) -> None:
        # The child shares the parent's sockets: it drops them unused and makes its own.
        self._lock = threading.Lock()
        self._clients = OrderedDict()


CLIENTS = ClientCache()
if hasattr(os, "register_at_fork"):  # not on Windows
    os.register_at_fork(after_in_child=CLIENTS._after_fork)


@contextmanager
def lease(creds: Credentials, **options: Any) -> Iterator[DictionaryClient]:
    """A client for one operation: the kept one, or (cache off) a new one closed afterwards.
    ``options``: ``timeout``, ``max_retries``, ``auth``."""
    if os.environ.get(CACHE_ENV, "").strip().lower() not in ("0", "off", "no", "false"):
        yield CLIENTS.get(creds, **options)
        return
    client = client_from(creds, **options)
    try:
        yield client
    finally:
        client.close()


def close_all() -> None:
    """Close every kept client (``%unload_ext``)."""
    CLIENTS.forget()


def profile_of(settings: OperationSettings) -> str:
    """The profile the settings name, else ``$DICT_MAGICS_PROFILE``, else ``default``; checked."""
    from ..profiles import credentials  # on first use: ``%load_ext`` stays light

    return credentials.check_profile(settings.profile or credentials.default_profile())


def make_client(
    profile: str | None = None, *, base_url: str | None = None, **options: Any
) -> tuple[DictionaryClient, Credentials]:
    """A new client for ``profile`` (``base_url`` overrides the stored one) and its credentials;
    ``DictMagicsError`` before anything is sent. The caller closes the client."""
    from ..profiles import credentials

    creds = credentials.load(profile, base_url=base_url or None)
    return client_from(creds, **options), creds


def client_from(creds: Credentials, **options: Any) -> DictionaryClient:
    """A new client for ``creds``, told whether its service has bulk and PUT when ``probe``
    found out; ``options`` go to ``DictionaryClient``."""
    from ..models.probe import stored, stored_pace
    from ..service.client import DictionaryClient

    found = stored(creds.profile, creds.base_url)
    if found is not None:
        options.setdefault("bulk", found.bulk is not False)
        options.setdefault("update", found.update is not False)
    options.setdefault("pace", stored_pace(creds.profile, creds.base_url, creds.access_key))
    return DictionaryClient(creds.base_url, creds.access_key, creds.secret_key, **options)


@contextmanager
def connect(
    settings: OperationSettings,
    client: DictionaryClient | None = None,
    creds: Credentials | None = None,
) -> Iterator[tuple[DictionaryClient, str]]:
    """``(client, profile)`` for one operation: ``client`` when the front end keeps its own,
    else the one kept for ``creds`` (default: the profile's current ones) and the settings."""
    profile = profile_of(settings)
    if client is not None:
        yield client, profile
        return
    if creds is None:
        from ..profiles import credentials

        creds = credentials.load(profile, base_url=settings.base_url or None)
    with lease(
        creds,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        auth=settings.auth,
    ) as made:
        limit = made.rate_limit
        limited, pace = limit.limited, limit.rate
        try:
            yield made, profile
        finally:  # what the service's rate limit allowed: the next client starts at it
            found = limit.kept(limited, pace)
            if found is not None:
                from ..models.probe import save_pace

                with suppress(OSError):
                    save_pace(creds.profile, creds.base_url, creds.access_key, found)


# -- the listings kept for the operations --------------------------------------------------------

Key = tuple[str, str, str]


def cache_key(client: DictionaryClient, profile: str) -> Key:
    """(profile, base URL, access key): two keys on one host are two dictionaries, and so are
    two API prefixes on one host."""
    return (profile, client.base_url, client.access_key)


@dataclass
class _Held:
    entries: dict[str, Entry] | None
    """By id, in the service's order; ``None`` when the service has no listing."""
    host: str
    taken: float


class ListingCache:
    """One listing per (profile, base URL, access key), trusted for ``max_age`` seconds; safe
    to share between threads."""

    def __init__(self, max_age: float = 60.0, clock: Callable[[], float] = time.monotonic):
        self.max_age = max_age
        self._clock = clock
        self._held: dict[Key, _Held] = {}
        # Bumped by every change this process knows of (a delete, a purge, an invalidation): a
        # listing requested before one may hold what it changed, so it is not kept.
        self._changes: Counter[Key] = Counter()
        self._lock = threading.Lock()

    def fetch(self, client: DictionaryClient, profile: str) -> EntryList:
        """A fresh listing from the service, kept as the current one."""
        key = cache_key(client, profile)
        with self._lock:
            # Its age counts from the request: the service may have answered any time after.
            asked, seen = self._clock(), self._changes[key]
        try:
            listing = client.list_entries()
        except ListingUnsupportedError:
            with self._lock:
                self._held[key] = _Held(None, client.host, asked)
            raise
        except BaseException:
            self.forget(key)
            raise
        with self._lock:
            if self._changes[key] == seen:
                self._held[key] = _Held(listing.by_id(), listing.host, asked)
            else:
                # This process changed the dictionary while the listing was on its way: the
                # listing may predate that change, so the next use lists again.
                self._held.pop(key, None)
        return listing

    def current(self, client: DictionaryClient, profile: str) -> EntryList:
        """The whole listing: the cached one while it is fresh (kept current from what this
        tool deleted), else a new one. Raises as ``fetch`` does."""
        held = self.recent(client, profile)
        return self.fetch(client, profile) if held is None else held[0]

    def recent(
        self,
        client: DictionaryClient,
        profile: str,
        ids: Iterable[str] = (),
        max_age: float | None = None,
    ) -> tuple[EntryList, float] | None:
        """The cached listing and its age when at most ``max_age`` seconds old (``None``: the
        cache's) and holding every one of ``ids`` (one it lacks may be new); else ``None``."""
        from ..models import EntryList

        max_age = self.max_age if max_age is None else max_age

        key = cache_key(client, profile)
        with self._lock:
            held = self._held.get(key)
            if held is None or held.entries is None:
                return None
            age = self._clock() - held.taken
            if not 0 <= age <= max_age or not all(i in held.entries for i in ids):
                return None
            return EntryList(list(held.entries.values()), held.host), age

    def unsupported(self, client: DictionaryClient, profile: str) -> bool:
        """True when this service was found to have no listing less than ``max_age`` ago."""
        with self._lock:
            held = self._held.get(cache_key(client, profile))
            if held is None or held.entries is not None:
                return False
            return self._clock() - held.taken <= self.max_age

    def deleted(self, client: DictionaryClient, profile: str, ids: Iterable[str]) -> None:
        """These entries are known to be gone (deleted, or never there)."""
        key = cache_key(client, profile)
        with self._lock:
            self._changes[key] += 1
            held = self._held.get(key)
            if held is not None and held.entries is not None:
                for entry_id in ids:
                    held.entries.pop(entry_id, None)

    def emptied(self, client: DictionaryClient, profile: str) -> None:
        """Every entry is known to be gone (a purge succeeded)."""
        key = cache_key(client, profile)
        with self._lock:
            self._changes[key] += 1
            self._held[key] = _Held({}, client.host, self._clock())

    def forget(self, key: Key | None = None) -> None:
        """Drop one listing (``None``: all): the next use lists again."""
        with self._lock:
            for changed in [*{*self._held, *self._changes}] if key is None else [key]:
                self._changes[changed] += 1
                self._held.pop(changed, None)

    def invalidate(self, client: DictionaryClient, profile: str) -> None:
        """The listing of this client's dictionary can no longer be trusted (an addition, an
        outcome left unknown)."""
        self.forget(cache_key(client, profile))


CACHE = ListingCache()
"""The process's listings (a notebook kernel, a command-line run, a panel)."""


def listed_after(client: DictionaryClient, profile: str) -> tuple[EntryList | None, bool]:
    """A fresh listing to settle or name what was just sent (``None``: none to be had), and
    whether Ctrl-C ended the wait: the caller audits what it has, then passes it on."""
    try:
        return CACHE.fetch(client, profile), False
    except ServiceError:
        return None, False
    except KeyboardInterrupt:
        return None, True
