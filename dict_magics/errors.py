"""One tree of errors, so every front end can tell a user's mistake from an outage.

``DictMagicsError`` branches by who can fix it: ``UsageProblem`` (the user; exit 2),
``ServiceFailure`` (the service or the network; exit 1) and ``LocalDataError`` (this computer
could not keep a copy first; exit 1). Lower layers name what would help as a ``Remedy``; each
front end words it, so no message below them names a magic, a subcommand or a flag.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

EXIT_FAILED = 1
EXIT_USAGE = 2


class Remedy(str, Enum):
    """What would help, named neutrally for each front end to word (a ``str``)."""

    LOGIN = "login"  # log the profile in (``exc.profile`` names it)
    RELOGIN = "relogin"  # log out, then in again (a keyring write left it half changed)
    RESTORE = "restore"  # put a snapshot back
    SNAPSHOTS = "snapshots"  # list the snapshots kept
    PURGE = "purge"  # the delete-everything operation, asked for by its own name
    NO_SNAPSHOT = "no_snapshot"  # go ahead without keeping a snapshot first
    QUIET_NO_COPY = "quiet_no_copy"  # ask for no copy: silences "deleted without a copy"
    WORKERS = "workers"  # the number of requests in flight
    MAX_RETRIES = "max_retries"  # how many times a request is tried again
    TIMEOUT = "timeout"  # how long a request may take
    PAIR = "pair"  # the language pair of a file's source and target columns
    FORMAT = "format"  # a glossary file's format, named rather than read from its extension
    YES = "yes"  # go ahead without the question (for scripts)
    OVERWRITE = "overwrite"  # replace an existing file
    SKIP_INVALID = "skip_invalid"  # apply the valid rows of a file only
    DELETE_MISSING = "delete_missing"  # a sync also deletes what the file's pairs lack
    SHEET = "sheet"  # name the sheet of a workbook to read

    def __str__(self) -> str:
        return self.value


class Notice(str):
    """A warning naming what would help as ``option``, as an error does; else plain text."""

    option: str | None
    profile: str | None

    def __new__(cls, text: str, *, option: str | None = None, profile: str | None = None) -> Notice:
        notice = super().__new__(cls, text)
        notice.option = option
        notice.profile = profile
        return notice


class DictMagicsError(Exception):
    """The root of every error dict-magics raises on purpose. ``option``: what would get past
    this (a ``Remedy``); ``profile``: the profile it is about, when the words need it."""

    exit_code = EXIT_FAILED

    def __init__(self, *args: Any, option: str | None = None, profile: str | None = None) -> None:
        super().__init__(*args)
        self.option = option
        self.profile = profile


class UsageProblem(DictMagicsError):
    """A mistake the user can fix; its message says how. Nothing was sent (exit code 2)."""

    exit_code = EXIT_USAGE


class InvalidIdError(UsageProblem, ValueError):
    """An entry id that is not a whole number in ASCII digits."""


class InvalidBaseUrlError(UsageProblem, ValueError):
    """A base URL we refuse to send credentials to."""


class CredentialsError(UsageProblem):
    """Credentials are missing, or the keyring cannot be used."""


class InvalidEntryError(UsageProblem, ValueError):
    """Terms or language codes the service would refuse (checked before anything is sent)."""


class ServiceFailure(DictMagicsError):
    """The service (or the way to it) did not give what was needed; ``cause`` says why."""

    def __init__(
        self,
        reason: str,
        *,
        cause: object = None,
        http_status: int | None = None,
        code: int | None = None,
        vendor_message: str | None = None,
        option: str | None = None,
    ) -> None:
        super().__init__(reason, option=option)
        self.reason = reason
        self.cause = cause
        self.http_status = http_status
        self.code = code
        self.vendor_message = vendor_message

    def facts(self) -> dict[str, Any]:
        """The facts to pass on to an error that says what this meant for an operation."""
        return {k: getattr(self, k) for k in ("cause", "http_status", "code", "vendor_message")}


class ServiceError(ServiceFailure):
    """A read-only request (the listing) that gave no answer we can use; try again later."""


class ListingUnsupportedError(ServiceError):
    """The service has no listing endpoint (404, 405 or 501)."""


class OperationFailedError(ServiceFailure):
    """An operation did not succeed, raised only on request (``raise_on_failure``)."""

    def __init__(self, result: Any) -> None:
        super().__init__(str(result))
        self.result = result


class DeletionFailedError(OperationFailedError):
    """A deletion did not succeed and ``DictMagics.raise_on_failure`` is set."""


class LocalDataError(DictMagicsError):
    """What must be kept on this computer first (a snapshot, the audit log) could not be."""


def exit_code(exc: BaseException) -> int:
    """The command line's exit code for ``exc``: 2 for a usage problem, else 1."""
    return getattr(exc, "exit_code", EXIT_FAILED)
