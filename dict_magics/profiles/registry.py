"""Which profiles are stored: names and where they point, never a secret.

Most keyring backends cannot list their items, so the names are kept beside the profiles: item
``profiles`` of keyring service ``dict-magics``, a JSON list (a profile name never holds ``:``,
so it cannot collide with ``<profile>:<item>``). Login adds a name, logout removes it. The list
is an index, not the truth: each name is checked, and ``default`` and ``$DICT_MAGICS_PROFILE``
are looked at too. Two logins at the same instant may lose one name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..errors import CredentialsError
from ..models.secret import mask
from . import credentials

ITEM = "profiles"


@dataclass(frozen=True)
class StoredProfile:
    """A profile found in the keyring: where it points and which items it has (no secret);
    ``default``: the profile used when none is named."""

    name: str
    base_url: str | None
    masked_access_key: str | None
    items: dict[str, bool]
    default: bool

    @property
    def complete(self) -> bool:
        return all(self.items.values())

    @property
    def missing(self) -> list[str]:
        return [item for item, present in self.items.items() if not present]


def _keyring(verb: str, action: str, *args: str) -> Any:
    """``keyring.<action>(SERVICE, *args)``; a failure says it could not ``verb`` the list."""
    import keyring

    try:
        return getattr(keyring, action)(credentials.SERVICE, *args)
    except Exception as exc:
        raise CredentialsError(
            f"cannot {verb} the list of profiles: the keyring backend failed "
            f"({type(exc).__name__})."
        ) from None


def recorded() -> list[str]:
    """The names in the index, as stored (an unreadable index counts as empty)."""
    raw = _keyring("read", "get_password", ITEM)
    try:
        names = json.loads(raw) if raw else []
    except ValueError:
        return []
    return [n for n in names if isinstance(n, str) and n] if isinstance(names, list) else []


def _save(names: list[str]) -> None:
    if names:
        _keyring("update", "set_password", ITEM, json.dumps(sorted(set(names))))
    elif _keyring("update", "get_password", ITEM) is not None:
        _keyring("update", "delete_password", ITEM)


def remember(profile: str) -> None:
    """Record ``profile`` as stored (after a login)."""
    profile, names = credentials.check_profile(profile), recorded()
    if profile not in names:
        _save([*names, profile])


def forget(profile: str) -> None:
    """Drop ``profile`` from the index (after a logout)."""
    profile, names = credentials.check_profile(profile), recorded()
    if profile in names:
        _save([n for n in names if n != profile])


def stored_profiles() -> list[StoredProfile]:
    """Every profile with at least one item in the keyring, by name; ``CredentialsError``
    when no keyring backend is available or it fails."""
    backend = credentials.backend_info()
    if not backend.available:
        raise CredentialsError(f"cannot list the stored profiles: {backend.warning}.")
    current = credentials.default_profile()
    found = []
    for name in sorted(set(recorded()) | {"default", current}):
        try:
            name = credentials.check_profile(name)
        except CredentialsError:
            continue  # a name someone wrote into the index by hand
        items = credentials.stored_items(name)
        if any(items.values()):
            key = _keyring("read", "get_password", f"{name}:access_key")
            base_url = credentials.stored_base_url(name)
            masked = mask(key) if key else None
            found.append(StoredProfile(name, base_url, masked, items, name == current))
    return found
