"""Errors for a user's mistakes, caught before any request is sent.

They carry plain, one-line messages: the magics turn them into IPython ``UsageError`` and the
command line into exit code 2. Nothing here imports a heavy module.
"""

from __future__ import annotations

__all__ = ["CredentialsError", "DictMagicsError", "InvalidBaseUrlError", "InvalidIdError"]


class DictMagicsError(Exception):
    """A mistake the user can fix; its message says how."""


class InvalidIdError(DictMagicsError, ValueError):
    """An entry id that could change the request path or is not an id at all."""


class InvalidBaseUrlError(DictMagicsError, ValueError):
    """A base URL we refuse to send credentials to."""


class CredentialsError(DictMagicsError):
    """Credentials are missing, or the keyring cannot be used."""
