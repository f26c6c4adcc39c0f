"""One tree of errors, so every front end can tell a user's mistake from an outage.

``DictMagicsError`` is the root. Its three branches say who can fix what went wrong:

- ``UsageProblem``: the user's mistake (a bad id, option, term, missing credentials, a purge not
  confirmed), caught before anything was sent. The magics raise IPython's one-line
  ``UsageError``; the command line exits 2.
- ``ServiceFailure``: the service or the network did not give what was needed (a listing
  refused, no answer, a coded failure), or an operation did not succeed and the caller asked
  for an exception (``OperationFailedError``). Exit 1: trying again later may work.
- ``LocalDataError``: this computer could not keep what must be kept first (a snapshot on a
  full disk, an unreadable data folder). Exit 1; nothing was sent after it.

Lower layers raise these with the facts (``option`` names what would help, by its neutral
name: a ``Remedy``); each front end words the hint its own way (``frontends/hints.py``), so no
message below the front ends names a magic, a subcommand or a flag. Nothing here imports a
heavy module.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

__all__ = [
    "CredentialsError",
    "DeletionFailedError",
    "DictMagicsError",
    "InvalidBaseUrlError",
    "InvalidEntryError",
    "InvalidIdError",
    "ListingUnsupportedError",
    "LocalDataError",
    "Notice",
    "OperationFailedError",
    "Remedy",
    "ServiceError",
    "ServiceFailure",
    "UsageProblem",
    "exit_code",
]

EXIT_FAILED = 1
EXIT_USAGE = 2


class Remedy(str, Enum):
    """What would help, named neutrally; each front end words it (``%dict_restore``,
    ``dict-magics restore``, the panel's Undo). A ``str``, so ``exc.option == "yes"`` holds."""

    LOGIN = "login"
    """Log the profile in (``exc.profile`` names it)."""
    RELOGIN = "relogin"
    """Log the profile out, then in again (a keyring write left it half changed)."""
    RESTORE = "restore"
    """Put a snapshot back."""
    SNAPSHOTS = "snapshots"
    """List the snapshots kept."""
    PURGE = "purge"
    """The delete-everything operation, asked for by its own name."""
    NO_SNAPSHOT = "no_snapshot"
    """Go ahead without keeping a snapshot first (the ``snapshots`` setting off)."""
    QUIET_NO_COPY = "quiet_no_copy"
    """A delete that went ahead without a copy said so; asking for no copy silences that."""
    WORKERS = "workers"
    """The number of requests in flight."""
    MAX_RETRIES = "max_retries"
    """How many times a request is tried again."""
    TIMEOUT = "timeout"
    """How long a request may take."""
    PAIR = "pair"
    """The language pair of a file's source and target columns."""
    FORMAT = "format"
    """A glossary file's format, named rather than read from its extension."""
    YES = "yes"
    """Go ahead without the question (for scripts)."""
    OVERWRITE = "overwrite"
    """Replace an existing file."""
    SKIP_INVALID = "skip_invalid"
    """Apply the valid rows of a file only."""
    DELETE_MISSING = "delete_missing"
    """Have a sync also delete the entries of the file's pairs that the file lacks."""
    SHEET = "sheet"
    """Name the sheet of a workbook to read."""

    def __str__(self) -> str:
        return self.value


class Notice(str):
    """A warning (not an error) that names what would help as ``option``, like an error does:
    the front end appends its own words for it. Everywhere else it is the plain text."""

    option: str | None
    profile: str | None

    def __new__(cls, text: str, *, option: str | None = None, profile: str | None = None) -> Notice:
        notice = super().__new__(cls, text)
        notice.option = option
        notice.profile = profile
        return notice


class DictMagicsError(Exception):
    """The root of every error dict-magics raises on purpose; ``exit_code`` for the CLI.

    ``option`` names what would get past this (a ``Remedy``: ``"no_snapshot"``,
    ``"workers"``, ``"login"`` ...), for the front end to word as its command, flag or button;
    ``None`` when nothing would. ``profile``: the profile it is about, when the words need it.
    """

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
    """The service (or the way to it) did not give what was needed; nothing was changed by the
    request that raised it unless the message says so.

    ``cause`` is a ``dict_magics.models.Cause``; ``reason`` says the same in words; ``code`` and
    ``vendor_message`` are the service's own error code and words when it sent them.
    """

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
        """The cause, HTTP status and the vendor's code and words, to pass on to an error that
        says what this failure meant for an operation."""
        return {
            "cause": self.cause,
            "http_status": self.http_status,
            "code": self.code,
            "vendor_message": self.vendor_message,
        }


class ServiceError(ServiceFailure):
    """A read-only request (the listing) that gave no answer we can use; try again later."""


class ListingUnsupportedError(ServiceError):
    """The service has no listing endpoint (404, 405 or 501)."""


class OperationFailedError(ServiceFailure):
    """An operation reached the service (or tried to) and did not succeed, raised only on
    request (``raise_on_failure``).

    The message is the rendered result (never a secret); ``result`` is the result object.
    """

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
