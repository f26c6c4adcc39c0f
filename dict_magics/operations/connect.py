"""One way to a client, for every front end and operation: credentials + settings -> the
client kept for them.

Every front end gets its client here, so they all resolve profiles, environment overrides and
the configured base URL the same way. Clients are kept between operations: one connection pool
per profile, service, credentials and settings, shared by every cell, the panel and every
operation. A client made for each command pays a new TCP connection (and TLS handshake) for
every cell: at 20 ms of round trip that doubles what a request on a kept-alive connection
costs. Credentials are still resolved for every operation: a login, a logout, another secret or
a ``%config`` change gives another key, so a fresh client, and the profile's previous client is
closed. Keys hold a hash of the access key and secret keyed by a random value of this process,
never the secret. At most ``MAX_CLIENTS`` are kept (the least recently used one is closed).
The number of workers is not part of the key: a client's pool serves up to 64 workers.

``DICT_MAGICS_CLIENT_CACHE=off`` makes ``lease`` build a client per operation and close it
after (the behaviour before this cache; the benchmarks measure both). Nothing heavy is imported
until a client is made.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..profiles import credentials
from ..settings import RETRIES, TIMEOUT, WORKERS

if TYPE_CHECKING:
    from ..profiles.credentials import Credentials
    from ..service.client import DictionaryClient
    from .context import OperationSettings

__all__ = [
    "CACHE_ENV",
    "MAX_CLIENTS",
    "ClientCache",
    "ClientKey",
    "client_from",
    "close_all",
    "connect",
    "enabled",
    "fingerprint",
    "forget",
    "lease",
    "make_client",
    "profile_of",
    "shared",
]

MAX_CLIENTS = 8
CACHE_ENV = "DICT_MAGICS_CLIENT_CACHE"
_OFF = frozenset({"0", "off", "no", "false"})
_KEY = secrets.token_bytes(32)
"""What credential fingerprints are keyed with: random per process, so a fingerprint that
leaked (a debugger, a crash dump) cannot be checked against a guessed secret elsewhere."""


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
    """Clients by ``ClientKey``, least recently used first; thread-safe."""

    def __init__(self, size: int = MAX_CLIENTS) -> None:
        if size < 1:
            raise ValueError(f"a client cache holds at least 1 client, not {size!r}")
        self.size = size
        self._clients: OrderedDict[ClientKey, DictionaryClient] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._clients)

    def __repr__(self) -> str:
        return f"ClientCache({len(self)} of {self.size})"

    def get(
        self,
        creds: Credentials,
        *,
        timeout: float,
        max_retries: int,
        workers: int,
        auth: str = "signature",
    ) -> DictionaryClient:
        """The kept client for these credentials and settings, made on first use, its pool big
        enough for ``workers``. Clients of the profile made from other credentials (or another
        base URL) are closed. ``workers`` is no part of the key."""
        key = ClientKey.of(creds, timeout=timeout, max_retries=max_retries, auth=auth)
        stale: list[DictionaryClient] = []
        with self._lock:
            client = self._clients.get(key)
            if client is not None:
                self._clients.move_to_end(key)
                return client
            client = client_from(
                creds, timeout=timeout, max_retries=max_retries, workers=workers, auth=auth
            )
            for old in [k for k in self._clients if _superseded(old=k, new=key)]:
                stale.append(self._clients.pop(old))
            self._clients[key] = client
            while len(self._clients) > self.size:
                stale.append(self._clients.popitem(last=False)[1])
        for old_client in stale:
            old_client.close()
        return client

    def kept(self) -> list[DictionaryClient]:
        """The clients kept now, least recently used first."""
        with self._lock:
            return list(self._clients.values())

    def forget(self, profile: str) -> int:
        """Close the clients of ``profile`` (after a logout: no secret stays in memory for
        it); returns how many."""
        with self._lock:
            keys = [k for k in self._clients if k.profile == profile]
            gone = [self._clients.pop(k) for k in keys]
        for client in gone:
            client.close()
        return len(gone)

    def close_all(self) -> None:
        """Close every kept client (``%unload_ext``)."""
        with self._lock:
            gone = list(self._clients.values())
            self._clients.clear()
        for client in gone:
            client.close()

    def _after_fork(self) -> None:
        # The child shares the parent's sockets: it drops them unused and makes its own.
        self._lock = threading.Lock()
        self._clients = OrderedDict()


def _superseded(*, old: ClientKey, new: ClientKey) -> bool:
    """The profile now resolves to other credentials or another service than ``old``'s."""
    same_profile = old.profile == new.profile
    return same_profile and (old.base_url != new.base_url or old.credentials != new.credentials)


CACHE = ClientCache()
if hasattr(os, "register_at_fork"):  # not on Windows
    os.register_at_fork(after_in_child=CACHE._after_fork)


def enabled() -> bool:
    """Whether clients are kept between operations (``DICT_MAGICS_CLIENT_CACHE``)."""
    return os.environ.get(CACHE_ENV, "").strip().lower() not in _OFF


def shared(
    creds: Credentials, *, timeout: float, max_retries: int, workers: int, auth: str = "signature"
) -> DictionaryClient:
    """The process's kept client for ``creds`` and these settings: the caller never closes it."""
    return CACHE.get(creds, timeout=timeout, max_retries=max_retries, workers=workers, auth=auth)


@contextmanager
def lease(
    creds: Credentials, *, timeout: float, max_retries: int, workers: int, auth: str = "signature"
) -> Iterator[DictionaryClient]:
    """A client for one operation: the kept one, or (cache off) a new one closed afterwards."""
    if enabled():
        yield shared(creds, timeout=timeout, max_retries=max_retries, workers=workers, auth=auth)
        return
    client = client_from(
        creds, timeout=timeout, max_retries=max_retries, workers=workers, auth=auth
    )
    try:
        yield client
    finally:
        client.close()


def forget(profile: str) -> int:
    """Close the kept clients of ``profile``; returns how many."""
    return CACHE.forget(profile)


def close_all() -> None:
    """Close every kept client."""
    CACHE.close_all()


def profile_of(settings: OperationSettings) -> str:
    """The profile the settings name, else ``$DICT_MAGICS_PROFILE``, else ``default``; checked."""
    return credentials.check_profile(settings.profile or credentials.default_profile())


def make_client(
    profile: str | None = None,
    *,
    base_url: str | None = None,
    timeout: float = TIMEOUT,
    max_retries: int = RETRIES,
    workers: int = WORKERS,
    **options: Any,
) -> tuple[DictionaryClient, credentials.Credentials]:
    """A client for ``profile`` and the credentials it was built from.

    ``base_url`` (from configuration) overrides the profile's stored one. Raises a
    ``DictMagicsError`` (missing credentials, keyring trouble, bad base URL or settings) before
    anything is sent; the caller closes the client. ``options`` go to ``DictionaryClient``.
    """
    creds = credentials.load(profile, base_url=base_url or None)
    return client_from(
        creds, timeout=timeout, max_retries=max_retries, workers=workers, **options
    ), creds


def client_from(creds: credentials.Credentials, **options: Any) -> DictionaryClient:
    """A new client for ``creds``; ``options`` go to ``DictionaryClient``."""
    from ..service.client import DictionaryClient

    return DictionaryClient(creds.base_url, creds.access_key, creds.secret_key, **options)


@contextmanager
def connect(
    settings: OperationSettings, client: DictionaryClient | None = None
) -> Iterator[tuple[DictionaryClient, str]]:
    """``(client, profile)`` for one operation: the client kept for the profile's current
    credentials and settings (``ClientCache``), so cells reuse its connections.

    Credentials are read again at each call, so a login, logout, other secret or ``%config``
    change gets a fresh client. A front end that keeps a client of its own passes it.
    """
    profile = profile_of(settings)
    if client is not None:
        yield client, profile
        return
    creds = credentials.load(profile, base_url=settings.base_url or None)
    with lease(
        creds,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        workers=settings.workers,
        auth=settings.auth or "signature",
    ) as made:
        yield made, profile
