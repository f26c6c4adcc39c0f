"""One hierarchy of errors: a user's mistake, caught before anything is sent, or an operation
that did not succeed.

``DictMagicsError`` and its subclasses are mistakes the user can fix: the magics raise them as
IPython's one-line ``UsageError`` and the command line exits 2. ``OperationFailedError`` is raised
only on request (``raise_on_failure``) for a result that is not a success. Nothing here imports
a heavy module.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CredentialsError",
    "DeletionFailedError",
    "DictMagicsError",
    "InvalidBaseUrlError",
    "InvalidIdError",
    "ListingUnsupportedError",
    "OperationFailedError",
    "ServiceError",
    "UsageProblem",
]


class DictMagicsError(Exception):
    """A mistake the user can fix; its message says how. Nothing was sent."""


class UsageProblem(DictMagicsError):
    """A mistake in what was typed that the argument parser cannot see (exit code 2)."""


class InvalidIdError(DictMagicsError, ValueError):
    """An entry id that could change the request path or is not an id at all."""


class InvalidBaseUrlError(DictMagicsError, ValueError):
    """A base URL we refuse to send credentials to."""


class CredentialsError(DictMagicsError):
    """Credentials are missing, or the keyring cannot be used."""


class OperationFailedError(Exception):
    """An operation reached the service (or tried to) and did not succeed.

    The message is the rendered result (never a secret); ``result`` is the result object.
    """

    def __init__(self, result: Any) -> None:
        super().__init__(str(result))
        self.result = result


class DeletionFailedError(OperationFailedError):
    """A deletion did not succeed and ``DictMagics.raise_on_failure`` is set."""


class ServiceError(Exception):
    """A read-only request (the listing) that gave no answer we can use.

    ``cause`` is a ``dict_magics.service.models.Cause``; ``reason`` says the same in words.
    Nothing was changed by it, so the caller may simply try again later.
    """

    def __init__(self, reason: str, *, cause: object = None, http_status: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.cause = cause
        self.http_status = http_status


class ListingUnsupportedError(ServiceError):
    """The service has no listing endpoint (404, 405, or an answer that is not the listing)."""
