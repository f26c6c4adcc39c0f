"""What every operation does before a request: credentials + settings -> a client.

Every front end gets its client here, so they all resolve profiles, environment overrides and
the configured base URL the same way. Nothing heavy is imported until a client is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..profiles import credentials

if TYPE_CHECKING:
    from ..service.client import DictionaryClient

__all__ = ["make_client"]


def make_client(
    profile: str | None = None,
    *,
    base_url: str | None = None,
    timeout: float = 15.0,
    max_retries: int = 3,
    workers: int = 4,
    **options: Any,
) -> tuple[DictionaryClient, credentials.Credentials]:
    """A client for ``profile`` and the credentials it was built from.

    ``base_url`` (from configuration) overrides the profile's stored one. Raises a
    ``DictMagicsError`` (missing credentials, keyring trouble, bad base URL or settings) before
    anything is sent; the caller closes the client. ``options`` go to ``DictionaryClient``.
    """
    creds = credentials.load(profile, base_url=base_url or None)
    from ..service.client import DictionaryClient

    client = DictionaryClient(
        creds.base_url,
        creds.access_key,
        creds.secret_key,
        timeout=timeout,
        max_retries=max_retries,
        workers=workers,
        **options,
    )
    return client, creds
