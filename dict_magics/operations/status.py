"""Where requests would go and with which key; sends nothing, never holds the secret."""

from __future__ import annotations

from ..profiles.status import ProfileStatus, profile_status
from .context import OperationSettings, profile_of


def status(settings: OperationSettings) -> ProfileStatus:
    """The status of the settings' profile, with the configured base URL applied;
    ``DictMagicsError`` only for a profile name that cannot exist."""
    return profile_status(profile_of(settings), base_url=settings.base_url)
