"""Shared fixtures: a real sandbox over loopback, an in-memory keyring, system-part gates."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError

from dict_magics.sandbox import SandboxServer

REQUIRE_ENV = "DICT_MAGICS_REQUIRE_SYSTEM_TESTS"


def require(condition: bool, reason: str) -> None:
    """Skip with ``reason`` on a user's machine; fail in CI, where every part must be there."""
    if condition:
        return
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1: this test must run here)")
    pytest.skip(reason)


def require_program(name: str) -> str:
    path = shutil.which(name)
    require(path is not None, f"{name} is not installed")
    return path or ""


class MemoryKeyring(KeyringBackend):
    """A real keyring backend that keeps items in a dict (priority -1: never auto-selected)."""

    priority = -1

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.items.pop((service, username), None) is None:
            raise PasswordDeleteError(username)


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    """Install an empty in-memory keyring for one test, restoring the previous backend."""
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's own DICT_MAGICS_* settings."""
    for var in (
        "DICT_MAGICS_BASE_URL",
        "DICT_MAGICS_ACCESS_KEY",
        "DICT_MAGICS_SECRET_KEY",
        "DICT_MAGICS_PROFILE",
    ):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def sandbox() -> Iterator[SandboxServer]:
    """A fresh sandbox with entries "1".."100" on 127.0.0.1."""
    with SandboxServer(100) as server:
        yield server


@pytest.fixture(scope="session")
def _shell():
    """One real IPython InteractiveShell for the whole run (IPython allows one per process)."""
    from IPython.testing.globalipapp import start_ipython

    return start_ipython()


@pytest.fixture
def ip(_shell, memory_keyring: MemoryKeyring):
    """The real shell with ``dict_magics`` freshly loaded and no ``%config`` left from others."""
    import dict_magics

    _shell.config.pop("DictMagics", None)
    dict_magics.load_ipython_extension(_shell)
    yield _shell
    _shell.config.pop("DictMagics", None)
