"""What every operation does before a request: credentials + settings -> a client.

Every front end gets its client here, so they all resolve profiles, environment overrides and
the configured base URL the same way. Nothing heavy is imported until a client is made.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..profiles import credentials
from ..settings import RETRIES, TIMEOUT, WORKERS

if TYPE_CHECKING:
    from ..service.client import DictionaryClient
    from .context import OperationSettings

__all__ = ["client_from", "connect", "make_client", "profile_of"]


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
    credentials and settings (``operations.clients``), so cells reuse its connections.

    Credentials are read again at each call, so a login, logout, other secret or ``%config``
    change gets a fresh client. A front end that keeps a client of its own passes it.
    """
    profile = profile_of(settings)
    if client is not None:
        yield client, profile
        return
    creds = credentials.load(profile, base_url=settings.base_url or None)
    from .clients import lease

    with lease(
        creds,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        workers=settings.workers,
        auth=settings.auth,
    ) as made:
        yield made, profile
