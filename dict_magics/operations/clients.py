"""The clients kept between operations: one connection pool per profile, service, credentials
and settings, shared by every cell, the panel and every operation.

A client made for each command pays a new TCP connection (and TLS handshake) for every cell:
at 20 ms of round trip that doubles what a request on a kept-alive connection costs. Credentials
are still resolved for every operation, by the caller: a login, a logout, another secret or a
``%config`` change gives another key, so a fresh client, and the profile's previous client is
closed. Keys hold a hash of the access key and secret keyed by a random value of this process,
never the secret. At most ``MAX_CLIENTS`` are kept (the least recently used one is closed).

``DICT_MAGICS_CLIENT_CACHE=off`` makes ``lease`` build a client per operation and close it
after (the behaviour before this cache; the benchmarks measure both).
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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..profiles.credentials import Credentials
    from ..service.client import DictionaryClient

__all__ = [
    "CACHE_ENV",
    "MAX_CLIENTS",
    "ClientCache",
    "ClientKey",
    "close_all",
    "enabled",
    "fingerprint",
    "forget",
    "lease",
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
    workers: int
    auth: str = "signature"

    @classmethod
    def of(
        cls,
        creds: Credentials,
        *,
        timeout: float,
        max_retries: int,
        workers: int,
        auth: str = "signature",
    ) -> ClientKey:
        stamp = fingerprint(creds.access_key, creds.secret_key)
        return cls(creds.profile, creds.base_url, stamp, float(timeout), max_retries, workers, auth)


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
        """The kept client for these credentials and settings, made on first use. Clients of
        the profile made from other credentials (or another base URL) are closed."""
        key = ClientKey.of(
            creds, timeout=timeout, max_retries=max_retries, workers=workers, auth=auth
        )
        stale: list[DictionaryClient] = []
        with self._lock:
            client = self._clients.get(key)
            if client is not None:
                self._clients.move_to_end(key)
                return client
            from .session import client_from

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
    from .session import client_from

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
