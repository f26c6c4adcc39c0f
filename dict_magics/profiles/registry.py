"""Which profiles are stored: names and where they point, never a secret.

Most keyring backends cannot enumerate their items, so the names are recorded where the profiles
themselves live: one more, non-secret item of the ``dict-magics`` keyring service, username
``profiles``, holding a JSON list of names. It cannot collide with a profile's items
(``<profile>:<item>``: a profile name never contains ``:``). Login adds the name, logout removes
it (the item goes when the list is empty). Kept beside the credentials rather than in the data
folder, so every ``DICT_MAGICS_HOME`` sees the same profiles, and wiping the keyring wipes both.

The list is an index, not the truth: ``stored_profiles`` checks each name against its items, and
always looks at ``default`` and ``$DICT_MAGICS_PROFILE`` too (profiles stored before the index
existed). Two logins at the same instant may lose one name; logging in again records it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..errors import CredentialsError
from ..models.secret import mask
from . import credentials

__all__ = ["ITEM", "StoredProfile", "forget", "recorded", "remember", "stored_profiles"]

ITEM = "profiles"
"""The keyring username (service ``dict-magics``) of the list of profile names."""


@dataclass(frozen=True)
class StoredProfile:
    """A profile found in the keyring: where it points and which items it has (no secret)."""

    name: str
    base_url: str | None
    masked_access_key: str | None
    items: dict[str, bool]
    default: bool
    """True for the profile used when none is named (``$DICT_MAGICS_PROFILE`` or default)."""

    @property
    def complete(self) -> bool:
        """True when all three items are stored."""
        return all(self.items.values())

    @property
    def missing(self) -> list[str]:
        """The items that are not stored."""
        return [item for item, present in self.items.items() if not present]


def _keyring() -> Any:
    import keyring

    return keyring


def _failed(exc: Exception, action: str) -> CredentialsError:
    return CredentialsError(
        f"cannot {action} the list of profiles: the keyring backend failed ({type(exc).__name__})."
    )


def recorded() -> list[str]:
    """The names in the index, as stored (an unreadable index counts as empty)."""
    try:
        raw = _keyring().get_password(credentials.SERVICE, ITEM)
    except Exception as exc:
        raise _failed(exc, "read") from None
    try:
        names = json.loads(raw) if raw else []
    except ValueError:
        return []
    if not isinstance(names, list):
        return []
    return [n for n in names if isinstance(n, str) and n]


def _save(names: list[str]) -> None:
    keyring = _keyring()
    try:
        if names:
            keyring.set_password(credentials.SERVICE, ITEM, json.dumps(sorted(set(names))))
        elif keyring.get_password(credentials.SERVICE, ITEM) is not None:
            keyring.delete_password(credentials.SERVICE, ITEM)
    except Exception as exc:
        raise _failed(exc, "update") from None


def remember(profile: str) -> None:
    """Record ``profile`` as stored (after a login)."""
    profile = credentials.check_profile(profile)
    names = recorded()
    if profile not in names:
        _save([*names, profile])


def forget(profile: str) -> None:
    """Drop ``profile`` from the index (after a logout)."""
    profile = credentials.check_profile(profile)
    names = recorded()
    if profile in names:
        _save([n for n in names if n != profile])


def _access_key(profile: str) -> str | None:
    try:
        value = _keyring().get_password(credentials.SERVICE, f"{profile}:access_key")
    except Exception as exc:
        raise _failed(exc, "read") from None
    return mask(value) if value else None


def stored_profiles() -> list[StoredProfile]:
    """Every profile with at least one item in the keyring, by name; holds no secret.

    Raises ``CredentialsError`` when no keyring backend is available or it fails.
    """
    backend = credentials.backend_info()
    if not backend.available:
        raise CredentialsError(f"cannot list the stored profiles: {backend.warning}.")
    current = credentials.default_profile()
    names = set(recorded()) | {"default", current}
    found = []
    for name in sorted(names):
        try:
            name = credentials.check_profile(name)
        except CredentialsError:
            continue  # a name someone wrote into the index by hand
        items = credentials.stored_items(name)
        if not any(items.values()):
            continue
        found.append(
            StoredProfile(
                name,
                credentials.stored_base_url(name),
                _access_key(name),
                items,
                name == current,
            )
        )
    return found
