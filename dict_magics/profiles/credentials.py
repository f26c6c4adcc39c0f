"""Credential profiles: OS keyring items, environment overrides, and clear errors.

A profile is three items of keyring service ``dict-magics`` (``<profile>:access_key`` ...);
``DICT_MAGICS_*`` variables override them for the environment's profile, so scripts and CI need
no keyring.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import CredentialsError, Remedy
from ..models.secret import Secret, Unpicklable, mask
from ..service.http import normalize_base_url

SERVICE = "dict-magics"
ENV_BASE_URL = "DICT_MAGICS_BASE_URL"
ENV_ACCESS_KEY = "DICT_MAGICS_ACCESS_KEY"
ENV_SECRET_KEY = "DICT_MAGICS_SECRET_KEY"  # noqa: S105 (a variable name)
ENV_PROFILE = "DICT_MAGICS_PROFILE"
ITEMS = ("base_url", "access_key", "secret_key")
REGISTRY_ITEM = "profiles"
"""The stored profiles' names (most backends cannot list their items): an index, not the truth
(each name is checked). A name never holds ``:``, so it cannot collide with an item."""
_WORDS = {"base_url": "base URL", "access_key": "access key", "secret_key": "secret key"}
_ENV_OF = {"base_url": ENV_BASE_URL, "access_key": ENV_ACCESS_KEY, "secret_key": ENV_SECRET_KEY}


def default_profile() -> str:
    """The profile used when none is named: ``$DICT_MAGICS_PROFILE`` or ``default``."""
    return os.environ.get(ENV_PROFILE, "").strip() or "default"


def check_profile(profile: str) -> str:
    """Return the stripped profile name, or raise: it becomes part of a keyring user name."""
    profile = (profile or "").strip()
    if not profile or ":" in profile or any(not ch.isprintable() for ch in profile):
        raise CredentialsError(
            f"profile name {profile!r} is not valid: use letters, digits, '-' or '_'."
        )
    return profile


@dataclass(frozen=True)
class Credentials(Unpicklable):
    """What a client needs, and where each part came from (``env``, ``keyring``, ``config``);
    no pickling (``%store`` would write the secret in clear)."""

    profile: str
    base_url: str
    access_key: str
    secret_key: str = field(repr=False)
    sources: dict[str, str] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.secret_key, Secret):
            object.__setattr__(self, "secret_key", Secret(self.secret_key))

    def __copy__(self) -> Credentials:
        return dataclasses.replace(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> Credentials:
        return dataclasses.replace(self, sources=copy.deepcopy(self.sources, memo))

    @property
    def masked_access_key(self) -> str:
        return mask(self.access_key)

    def __repr__(self) -> str:
        return (
            f"Credentials(profile={self.profile!r}, base_url={self.base_url!r}, "
            f"access_key={self.masked_access_key!r}, secret_key=<hidden>)"
        )


@dataclass(frozen=True)
class BackendInfo:
    """Which keyring backend holds the secrets, and whether it encrypts them."""

    name: str
    available: bool
    plaintext: bool

    @property
    def warning(self) -> str | None:
        """What the user should know about this backend, if anything."""
        if not self.available:
            return (
                "no keyring backend is available: install and unlock one (e.g. gnome-keyring), "
                f"or set {ENV_ACCESS_KEY} / {ENV_SECRET_KEY} / {ENV_BASE_URL}"
            )
        if self.plaintext:
            return "this keyring backend stores secrets in a plaintext file, unencrypted"
        return None


def _keyring() -> Any:
    import keyring

    return keyring


def backend_info() -> BackendInfo:
    """The active keyring backend; ``CredentialsError`` when none can be loaded."""
    keyring = _keyring()
    from keyring.backends import fail

    try:
        backend = keyring.get_keyring()
    except Exception as exc:
        raise CredentialsError(
            f"the keyring backend could not be loaded ({type(exc).__name__}): check "
            "PYTHON_KEYRING_BACKEND and the keyring's configuration."
        ) from None
    members = list(getattr(backend, "backends", None) or [backend])
    names = [f"{type(b).__module__}.{type(b).__qualname__}" for b in members]
    plaintext = any(
        "plaintext" in n.lower() or (n.startswith("keyrings.alt") and "crypt" not in n.lower())
        for n in names
    )
    available = not all(isinstance(b, fail.Keyring) for b in members)
    return BackendInfo(" + ".join(names), available, plaintext)


def _env_hint(profile: str) -> str:
    """How to do without the keyring for ``profile``, naming only what is not set yet."""
    unset = [var for var in _ENV_OF.values() if not os.environ.get(var, "").strip()]
    if profile != default_profile():
        unset = [f"{ENV_PROFILE}={profile} with {ENV_BASE_URL}, {ENV_ACCESS_KEY}", ENV_SECRET_KEY]
    elif not unset:
        return "Meanwhile, the DICT_MAGICS_* variables set in the environment are used."
    return f"Meanwhile, set {' and '.join(unset)} to work without the keyring."


def _no_backend(action: str, profile: str) -> CredentialsError:
    return CredentialsError(
        f"cannot {action} profile {profile!r}: no keyring backend is available. "
        "Install and start one (on Linux: gnome-keyring with a D-Bus session; see the "
        f"README's troubleshooting). {_env_hint(profile)}"
    )


def check_backend(profile: str, action: str = "store") -> None:
    """Raise the no-backend error before the user types a secret that could not be kept."""
    if not backend_info().available:
        raise _no_backend(action, check_profile(profile))


def _translate(exc: Exception, action: str, profile: str) -> CredentialsError:
    """A keyring exception as one clear line that never quotes a secret."""
    from keyring import errors

    if isinstance(exc, errors.NoKeyringError):
        return _no_backend(action, profile)
    why = f"the keyring backend failed ({type(exc).__name__})."
    if isinstance(exc, errors.KeyringLocked):
        why = (
            "the keyring is locked. Unlock it (log in to your desktop, or unlock gnome-keyring) "
            "and try again."
        )
    elif isinstance(exc, errors.InitError):
        why = f"the keyring could not be opened ({type(exc).__name__})."
    return CredentialsError(f"cannot {action} profile {profile!r}: {why} {_env_hint(profile)}")


def _read(profile: str, item: str, action: str = "read") -> Secret | None:
    """A keyring item, a ``Secret`` from the moment it is read (it may be the secret key)."""
    try:
        value = _keyring().get_password(SERVICE, f"{profile}:{item}")
    except Exception as exc:
        raise _translate(exc, action, profile) from None
    return None if value is None else Secret(value)


def _checked(item: str, value: str, where: str) -> str:
    """``value``, refused (unquoted) if it holds bytes that are not UTF-8."""
    if not value.isascii() and any("\ud800" <= ch <= "\udfff" for ch in value):
        raise CredentialsError(
            f"the {_WORDS[item]} {where} is not valid UTF-8 text (it holds bytes that are "
            "not characters): set it again."
        )
    return value if item == "secret_key" else str(value)


def load(profile: str | None = None, *, base_url: str | None = None) -> Credentials:
    """Credentials for ``profile``; ``base_url`` (from configuration) overrides the stored one.
    No local here holds the secret as a plain ``str`` (tracebacks show locals)."""
    profile = check_profile(profile or default_profile())
    values: dict[str, str] = {}
    sources: dict[str, str] = {}
    if base_url:
        values["base_url"], sources["base_url"] = base_url, "config"
    if profile == default_profile():
        for item, var in _ENV_OF.items():
            if item in values:
                continue
            found = _checked(
                item, Secret(os.environ.get(var, "").strip()), f"in the environment ({var})"
            )
            if found:
                values[item], sources[item] = found, "env"
    for item in ITEMS:
        if item in values:
            continue
        where = f"in the keyring item {SERVICE} / {profile}:{item}"
        if found := _checked(item, _read(profile, item) or "", where):
            values[item], sources[item] = found, "keyring"
    missing = [item for item in ITEMS if item not in values]
    if missing:
        env = ", ".join(_ENV_OF[m] for m in missing)
        if profile != default_profile():
            env = f"{ENV_PROFILE}={profile} with {env}"
        raise CredentialsError(
            f"no {' / '.join(_WORDS[m] for m in missing)} for profile {profile!r}: log it in, "
            f"or set {env}.",
            option=Remedy.LOGIN,
            profile=profile,
        )
    url = normalize_base_url(values["base_url"])
    return Credentials(profile, url, values["access_key"], values["secret_key"], sources)


def env_items(profile: str | None = None) -> dict[str, str]:
    """The items the environment sets for ``profile`` (item -> variable name), as ``load``."""
    if check_profile(profile or default_profile()) != default_profile():
        return {}
    return {item: var for item, var in _ENV_OF.items() if os.environ.get(var, "").strip()}


def stored_base_url(profile: str) -> str | None:
    """The base URL kept in the keyring for ``profile`` (it is not a secret), or ``None``."""
    found = _read(check_profile(profile), "base_url")
    return str(found) if found else None


def stored_items(profile: str) -> dict[str, bool]:
    """Which of the profile's keyring items exist (values are not returned)."""
    profile = check_profile(profile)
    return {item: bool(_read(profile, item)) for item in ITEMS}


def store(profile: str, base_url: str, access_key: str, secret_key: str) -> Credentials:
    """Save a profile in the keyring, all or nothing (a failure part way puts items back)."""
    secret_key = Secret(secret_key)  # the plain str parameter is gone from this frame
    profile = check_profile(profile)
    base_url = normalize_base_url(base_url)
    values = {"secret_key": secret_key, "access_key": access_key.strip(), "base_url": base_url}
    if not values["access_key"] or not values["secret_key"]:
        raise CredentialsError("both an access key and a secret key are needed.")
    for item in ("secret_key", "access_key"):
        _checked(item, values[item], "given")
    previous = {item: _read(profile, item, "save") for item in values}
    keyring = _keyring()
    written: list[str] = []
    try:
        for item, value in values.items():
            keyring.set_password(SERVICE, f"{profile}:{item}", value)
            written.append(item)
    except Exception as exc:
        error = _translate(exc, "save", profile)
        if not _roll_back(keyring, profile, written, previous):
            error = CredentialsError(
                f"{error} The profile could not be put back as it was: log it out, and in again.",
                option=Remedy.RELOGIN,
                profile=profile,
            )
        raise error from None
    sources = dict.fromkeys(ITEMS, "keyring")
    return Credentials(profile, base_url, values["access_key"], secret_key, sources)


def _roll_back(
    keyring: Any, profile: str, written: list[str], previous: dict[str, Secret | None]
) -> bool:
    """Put ``written`` items back to ``previous`` (removing new ones); False if any could not."""
    from keyring.errors import PasswordDeleteError

    restored = True
    for item in reversed(written):
        try:
            if previous[item] is None:
                keyring.delete_password(SERVICE, f"{profile}:{item}")
            else:
                keyring.set_password(SERVICE, f"{profile}:{item}", previous[item])
        except PasswordDeleteError:
            continue
        except Exception:
            restored = False
    return restored


def delete_profile(profile: str) -> list[str]:
    """Remove the profile's keyring items; returns the items that existed."""
    profile = check_profile(profile)
    keyring = _keyring()
    from keyring.errors import PasswordDeleteError

    removed = []
    for item in ITEMS:
        try:
            keyring.delete_password(SERVICE, f"{profile}:{item}")
        except PasswordDeleteError:
            continue
        except Exception as exc:
            raise _translate(exc, "remove", profile) from None
        removed.append(item)
    return removed


@dataclass(frozen=True)
class StoredProfile:
    """A profile found in the keyring: where it points and which items it has (no secret)."""

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


def _registry(verb: str, action: str, *args: str) -> Any:
    """``keyring.<action>(SERVICE, *args)``; a failure says it could not ``verb`` the list."""
    try:
        return getattr(_keyring(), action)(SERVICE, *args)
    except Exception as exc:
        raise CredentialsError(
            f"cannot {verb} the list of profiles: the keyring backend failed "
            f"({type(exc).__name__})."
        ) from None


def recorded() -> list[str]:
    """The names in the index, as stored (an unreadable index counts as empty)."""
    raw = _registry("read", "get_password", REGISTRY_ITEM)
    try:
        names = json.loads(raw) if raw else []
    except ValueError:
        return []
    return [n for n in names if isinstance(n, str) and n] if isinstance(names, list) else []


def record(profile: str, stored: bool = True) -> None:
    """Add ``profile`` to the index (after a login), or drop it (``stored=False``, a logout)."""
    profile, names = check_profile(profile), recorded()
    if (profile in names) == stored:
        return
    names = [*names, profile] if stored else [n for n in names if n != profile]
    if names:
        _registry("update", "set_password", REGISTRY_ITEM, json.dumps(sorted(set(names))))
    else:
        _registry("update", "delete_password", REGISTRY_ITEM)


def stored_profiles() -> list[StoredProfile]:
    """Every profile with at least one item in the keyring, by name."""
    backend = backend_info()
    if not backend.available:
        raise CredentialsError(f"cannot list the stored profiles: {backend.warning}.")
    current = default_profile()
    found = []
    for name in sorted(set(recorded()) | {"default", current}):
        try:
            name = check_profile(name)
        except CredentialsError:
            continue  # a name someone wrote into the index by hand
        values = {item: _read(name, item) for item in ITEMS}
        if any(values.values()):
            key, url = values["access_key"], values["base_url"]
            items = {item: bool(value) for item, value in values.items()}
            masked = mask(key) if key else None
            found.append(StoredProfile(name, url and str(url), masked, items, name == current))
    return found
