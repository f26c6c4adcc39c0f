"""Where a profile's settings come from, gathered without sending anything or holding a secret."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..errors import DictMagicsError, Notice
from ..models.probe import ProbeResult, stored, stored_pace
from ..models.text import COLOUR, MARK, Rendered, escape, html_row, html_table, shown
from . import credentials

_SOURCE_WORDS = {"keyring": "keyring", "config": "%config DictMagics.base_url"}


@dataclass(frozen=True)
class ProfileStatus(Rendered):
    """Where a profile's settings come from; holds no secret, only where the secret is kept."""

    profile: str
    base_url: str | None = None
    masked_access_key: str | None = None
    sources: dict[str, str] = field(default_factory=dict)
    env_vars: dict[str, str] = field(default_factory=dict)
    backend: credentials.BackendInfo | None = None
    problem: str | None = None
    probe: ProbeResult | None = None  # what ``probe`` last found here, if it ran
    pace: float | None = None  # requests a second a limited batch found (``stored_pace``)

    @property
    def ready(self) -> bool:
        """Whether a client could be built for this profile."""
        return self.problem is None

    @property
    def secret_location(self) -> str:
        """Which place holds the secret key, in words."""
        source = self.sources.get("secret_key")
        if source == "env":
            return f"environment variable {credentials.ENV_SECRET_KEY}"
        if source == "keyring":
            return f"keyring backend {self.backend.name if self.backend else 'the keyring'}"
        return "not found"

    @property
    def warnings(self) -> list[str]:
        """What the user should know: a plaintext or missing keyring backend."""
        backend = self.backend
        if backend is None or backend.warning is None:
            return []
        if not backend.available and self.sources.get("secret_key") == "env":
            return [
                "no keyring backend is available: the environment variables are used, "
                "and no profile can be stored in the keyring until one is installed"
            ]
        # Without a backend, a problem already says what is missing and how to fix it.
        return [] if not backend.available and self.problem else [backend.warning]

    def rows(self) -> list[tuple[str, str]]:
        """The status as (label, value) pairs, shared by the text and HTML views."""

        def origin(item: str) -> str:
            source = self.sources.get(item)
            if source == "env":
                source = self.env_vars.get(item, "the environment")
            return f" (from {_SOURCE_WORDS.get(source, source)})" if source else ""

        held = "secret_key" in self.sources
        where = f"set, never shown (in the {self.secret_location})" if held else "not found"
        backend = self.backend.name if self.backend else "unknown"
        if self.backend and not self.backend.available:
            backend += " (not available)"
        rows = [
            ("profile", self.profile),
            ("base URL", (self.base_url or "not found") + origin("base_url")),
            ("access key", (self.masked_access_key or "not found") + origin("access_key")),
            ("secret key", where),
        ]
        if self.probe is not None:
            rows.append(("probe", self.probe.summary()))
        if self.pace is not None:
            rows.append(("rate limit", f"{self.pace:g} requests a second, kept for a day"))
        rows.append(("keyring backend", backend))
        if self.problem:
            rows.append(("problem", self.problem))
        rows.extend(("warning", text) for text in self.warnings)
        return rows

    def worded(self, words: Callable[[str], str]) -> ProfileStatus:
        """This status with its problem in a front end's words (what would help, as its own)."""
        return self if self.problem is None else replace(self, problem=words(self.problem))

    def _head(self) -> str:
        return (
            f"{MARK['success' if self.ready else 'failure']} dict-magics profile {self.profile!r}"
        )

    def __str__(self) -> str:
        rows = self.rows()
        width = max(len(label) for label, _ in rows) + 2
        lines = [f"  {label + ':':<{width}}{shown(value)}" for label, value in rows[1:]]
        return "\n".join([self._head(), *lines])

    __repr__ = __str__

    def _repr_html_(self) -> str:
        warn = f' style="color:{COLOUR["unknown"]}"'
        rows = [html_row(row, warn if row[0] == "warning" else "") for row in self.rows()]
        colour = COLOUR["success" if self.ready else "failure"]
        return (
            f'<div class="dict-magics-status"><b style="color:{colour}">{escape(self._head())}'
            f"</b>{html_table((), rows)}</div>"
        )


def profile_status(profile: str | None = None, *, base_url: str | None = None) -> ProfileStatus:
    """Describe ``profile`` without sending anything; keyring trouble becomes ``problem``."""
    profile = credentials.check_profile(profile or credentials.default_profile())
    env_vars = credentials.env_items(profile)
    try:
        backend: credentials.BackendInfo | None = credentials.backend_info()
    except Exception:  # a broken PYTHON_KEYRING_BACKEND must not hide the rest
        backend = None
    try:
        creds = credentials.load(profile, base_url=base_url or None)
    except DictMagicsError as exc:
        # The error's remedy kept (``Notice.option``): each front end words it its own way.
        problem = Notice(str(exc), option=exc.option, profile=exc.profile)
        return ProfileStatus(profile, env_vars=env_vars, backend=backend, problem=problem)
    key, sources = creds.masked_access_key, dict(creds.sources)
    found = stored(profile, creds.base_url)
    pace = stored_pace(profile, creds.base_url, creds.access_key)
    return ProfileStatus(
        profile, creds.base_url, key, sources, env_vars, backend, probe=found, pace=pace
    )
