"""Store a profile's keys in the keyring, or remove them, and the lines every front end shows
afterwards. What the options do not give is asked through the ``Prompter``; the secret key is
typed only at a hidden prompt (or piped), never an option.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..errors import UsageProblem
from ..models.secret import Secret
from ..profiles import credentials
from ..service.http import host_of, normalize_base_url
from .check import CredentialsCheck, check_stored
from .context import CLIENTS, OperationSettings, profile_of
from .prompts import NoAnswer, Prompter

CHECK_QUESTION = "Check these credentials now with one read-only request? [Y/n] "


@dataclass(frozen=True)
class LoginResult:
    """What was stored (never the secret) and what the user should know about it."""

    profile: str
    base_url: str
    masked_access_key: str
    backend: str
    warning: str | None = None
    overridden: tuple[str, ...] = ()
    """The ``DICT_MAGICS_*`` variables that override what was stored."""
    check: CredentialsCheck | None = None
    """What one listing with the stored credentials said, when they were checked."""

    @property
    def lines(self) -> list[str]:
        """The report, one line each, as every front end shows it."""
        lines = [
            f"Stored profile {self.profile!r} in the keyring ({self.backend}): base URL "
            f"{self.base_url}, access key {self.masked_access_key}, secret key saved (not shown)."
        ]
        if self.warning:
            lines.append(f"Warning: {self.warning}.")
        if self.overridden:
            lines.append(
                f"Note: {', '.join(self.overridden)} set in the environment override the "
                f"stored values for profile {self.profile!r}."
            )
        if self.check is not None:
            lines.append(self.check.line)
        return lines


@dataclass(frozen=True)
class LogoutResult:
    """Which keyring items were removed, and what the environment still sets."""

    profile: str
    removed: tuple[str, ...] = ()
    overridden: tuple[str, ...] = ()

    @property
    def lines(self) -> list[str]:
        """The report, one line each, as every front end shows it."""
        if self.removed:
            lines = [
                f"Removed profile {self.profile!r} from the keyring ({', '.join(self.removed)})."
            ]
        else:
            lines = [f"Profile {self.profile!r} had nothing stored in the keyring."]
        if self.overridden:
            lines.append(
                f"Note: {', '.join(self.overridden)} still set in the environment for "
                f"profile {self.profile!r}."
            )
        return lines


def _ask(ask: Callable[[str], str], question: str, what: str, default: str = "") -> str:
    """An answer to ``question``; where nobody can answer, ``default`` or a message saying how
    to log in instead."""
    try:
        return ask(question) or default
    except NoAnswer as exc:
        if default:
            return default
        raise UsageProblem(
            f"cannot ask for the {what}: {exc.reason}. Log in where you can type, or set "
            f"{credentials.ENV_BASE_URL}, {credentials.ENV_ACCESS_KEY} and "
            f"{credentials.ENV_SECRET_KEY} instead. Nothing was stored."
        ) from None


def login(
    settings: OperationSettings,
    prompter: Prompter,
    *,
    base_url: str | None = None,
    access_key: str | None = None,
    secret_key: str | None = None,
    check: bool | None = False,
) -> LoginResult:
    """Store the profile of ``settings``, asking for what is not given (``DictMagicsError``
    with nothing stored). ``check``: True lists once with what was stored; None asks first
    (Enter means yes); False sends nothing."""
    profile = profile_of(settings)
    credentials.check_backend(profile, "store")  # before anyone types a secret in vain
    if not base_url:
        default = settings.base_url or credentials.stored_base_url(profile) or ""
        shown = f" [{default}]" if default else " (https://host[:port])"
        base_url = _ask(prompter.ask, f"Base URL{shown}: ", "base URL", default).strip() or default
    if not base_url:
        raise UsageProblem("no base URL given; nothing was stored.")
    base_url = normalize_base_url(base_url)
    host = host_of(base_url)
    if not access_key:
        access_key = _ask(prompter.ask_secret, f"Access key for {host}: ", "access key")
    if not access_key.strip():
        raise UsageProblem("no access key given; nothing was stored.")
    if secret_key is None:
        secret_key = _ask(prompter.ask_secret, f"Secret key for {host} (hidden): ", "secret key")
    secret_key = Secret(secret_key)
    if not secret_key:
        raise UsageProblem("no secret key given; nothing was stored.")
    saved = credentials.store(profile, base_url, access_key, secret_key)
    credentials.record(saved.profile)
    backend = credentials.backend_info()
    if check is None:  # Enter means yes; a front end that cannot ask means no
        try:
            check = prompter.ask(CHECK_QUESTION).strip().lower() in ("", "y", "yes")
        except NoAnswer:
            check = False
    return LoginResult(
        saved.profile,
        saved.base_url,
        saved.masked_access_key,
        backend.name,
        backend.warning,
        tuple(sorted(credentials.env_items(profile).values())),
        check_stored(settings, saved) if check else None,
    )


def logout(settings: OperationSettings) -> LogoutResult:
    """Remove the profile's keyring items; raises ``DictMagicsError`` for keyring trouble."""
    profile = profile_of(settings)
    removed = credentials.delete_profile(profile)
    credentials.record(profile, stored=False)
    CLIENTS.forget(profile)  # no client keeps the old secret in memory
    overridden = tuple(sorted(credentials.env_items(profile).values()))
    return LogoutResult(profile, tuple(removed), overridden)
