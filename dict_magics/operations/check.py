"""Do the credentials work? One listing (the only request that changes nothing) tells; where
the service has no listing the check says it cannot tell rather than send anything else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import ListingUnsupportedError, ServiceError
from .context import OperationSettings, connect
from .listing import list_entries

if TYPE_CHECKING:
    from ..profiles.credentials import Credentials
    from ..service.client import DictionaryClient


@dataclass(frozen=True)
class CredentialsCheck:
    """What the one listing said: ``works`` is True (listed), False (refused) or None (cannot
    tell: no listing, no answer, an answer we cannot read)."""

    works: bool | None
    message: str
    http_status: int | None = None
    entries: int | None = None
    """How many entries the listing held, when it worked."""

    @property
    def line(self) -> str:
        """The message after a mark every front end shows the same way."""
        mark = "\u2713" if self.works else "\u2717" if self.works is False else "?"
        return f"{mark} {self.message}"


def check_credentials(
    settings: OperationSettings, *, client: DictionaryClient | None = None
) -> CredentialsCheck:
    """List the dictionary once with the settings' profile (or ``client``) and say what that
    proves. Raises ``DictMagicsError`` only for credentials that cannot be loaded (no request)."""
    try:
        listing = list_entries(settings, client=client)
    except ListingUnsupportedError as exc:
        no_listing = "this service has no listing; cannot check without deleting"
        return CredentialsCheck(None, no_listing, exc.http_status)
    except ServiceError as exc:
        cause = getattr(exc.cause, "value", exc.cause)
        if cause == "auth" or exc.http_status in (401, 403):
            message = f"credentials refused (HTTP {exc.http_status}): {exc.reason}"
            return CredentialsCheck(False, message, exc.http_status)
        message = f"could not check the credentials: {exc.reason}"
        return CredentialsCheck(None, message, exc.http_status)
    count = len(listing)
    listed = f"listed {count:,} entr{'y' if count == 1 else 'ies'} at {listing.host}"
    return CredentialsCheck(True, f"credentials work: {listed}", 200, count)


def check_stored(settings: OperationSettings, stored: Credentials) -> CredentialsCheck:
    """``check_credentials`` for exactly ``stored`` (what a login just saved), whatever the
    environment or ``%config`` would otherwise put in front of it, with the settings' auth."""
    with connect(settings, creds=stored) as (client, _):
        return check_credentials(settings, client=client)
