"""Credential profiles on a real (in-memory) keyring backend: storage, overrides, clear errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail
from keyring.errors import InitError, KeyringLocked

from dict_magics.errors import CredentialsError, InvalidBaseUrlError
from dict_magics.profiles import credentials

SECRET = "s3cr\u00e9t-\u043a\u043b\u044e\u0447-" + "x" * 64


class BrokenKeyring(KeyringBackend):
    """A backend whose every call fails with ``error`` (locked, cannot open, ...)."""

    priority = -1

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    def get_password(self, service: str, username: str) -> str | None:
        raise self.error

    def set_password(self, service: str, username: str, password: str) -> None:
        raise self.error

    def delete_password(self, service: str, username: str) -> None:
        raise self.error


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> Iterator[None]:
    """Install the backend given by ``indirect`` parametrisation, restoring the previous one."""
    previous = keyring.get_keyring()
    keyring.set_keyring(request.param)
    try:
        yield
    finally:
        keyring.set_keyring(previous)


def test_store_and_load_round_trip(memory_keyring: Any) -> None:
    saved = credentials.store("work", "https://api.example.com/api/v1/", " AK-1234567 ", SECRET)
    assert saved.base_url == "https://api.example.com" and saved.access_key == "AK-1234567"
    assert memory_keyring.items == {
        ("dict-magics", "work:base_url"): "https://api.example.com",
        ("dict-magics", "work:access_key"): "AK-1234567",
        ("dict-magics", "work:secret_key"): SECRET,
    }
    loaded = credentials.load("work")
    assert loaded == saved and loaded.secret_key == SECRET
    assert loaded.sources == dict.fromkeys(credentials.ITEMS, "keyring")
    assert credentials.stored_base_url("work") == "https://api.example.com"
    assert credentials.stored_items("work") == dict.fromkeys(credentials.ITEMS, True)


def test_credentials_never_show_the_secret(memory_keyring: Any) -> None:
    creds = credentials.store("default", "https://api.example.com", "AK-1234567", SECRET)
    assert SECRET not in repr(creds) and SECRET not in str(creds)
    assert "secret_key=<hidden>" in repr(creds)
    assert creds.masked_access_key == "AK-1\u202667"


def test_mask() -> None:
    assert credentials.mask(None) == "(none)"
    assert credentials.mask("short") == "*****"
    assert credentials.mask("abcdefghijkl") == "abcd\u2026kl"


def test_store_refuses_what_it_cannot_use(memory_keyring: Any) -> None:
    with pytest.raises(InvalidBaseUrlError, match="plain http"):
        credentials.store("default", "http://api.example.com", "AK", SECRET)
    with pytest.raises(CredentialsError, match="both an access key and a secret key"):
        credentials.store("default", "https://api.example.com", "  ", SECRET)
    with pytest.raises(CredentialsError, match="both an access key and a secret key"):
        credentials.store("default", "https://api.example.com", "AK", "")
    for bad in ("", "  ", "a:b", "tab\there"):
        with pytest.raises(CredentialsError, match="not valid"):
            credentials.store(bad, "https://api.example.com", "AK", SECRET)
    assert memory_keyring.items == {}


def test_environment_overrides_only_its_own_profile(
    memory_keyring: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    credentials.store("default", "https://stored.example.com", "AK-stored-1", "stored-secret")
    credentials.store("other", "https://other.example.com", "AK-other-12", "other-secret")
    monkeypatch.setenv("DICT_MAGICS_ACCESS_KEY", "AK-from-env")
    monkeypatch.setenv("DICT_MAGICS_SECRET_KEY", "env-secret")

    mixed = credentials.load()
    assert (mixed.base_url, mixed.access_key, mixed.secret_key) == (
        "https://stored.example.com",
        "AK-from-env",
        "env-secret",
    )
    assert mixed.sources == {"base_url": "keyring", "access_key": "env", "secret_key": "env"}
    assert credentials.env_items() == {
        "access_key": "DICT_MAGICS_ACCESS_KEY",
        "secret_key": "DICT_MAGICS_SECRET_KEY",
    }
    assert credentials.load("other").secret_key == "other-secret"
    assert credentials.env_items("other") == {}

    monkeypatch.setenv("DICT_MAGICS_PROFILE", "other")
    assert credentials.default_profile() == "other"
    moved = credentials.load()
    assert moved.profile == "other" and moved.secret_key == "env-secret"
    assert credentials.load("default").secret_key == "stored-secret"


def test_configured_base_url_overrides_everything(
    memory_keyring: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    credentials.store("default", "https://stored.example.com", "AK-stored-1", SECRET)
    monkeypatch.setenv("DICT_MAGICS_BASE_URL", "https://env.example.com")
    assert credentials.load().base_url == "https://env.example.com"
    configured = credentials.load(base_url="http://127.0.0.1:9000/api/v1")
    assert configured.base_url == "http://127.0.0.1:9000"
    assert configured.sources["base_url"] == "config"


def test_missing_credentials_say_what_and_how(
    memory_keyring: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(CredentialsError) as missing:
        credentials.load()
    message = str(missing.value)
    assert "no base URL / access key / secret key for profile 'default'" in message
    assert "%dict_login -p default" in message and "dict-magics login" in message
    assert "DICT_MAGICS_BASE_URL, DICT_MAGICS_ACCESS_KEY, DICT_MAGICS_SECRET_KEY" in message

    monkeypatch.setenv("DICT_MAGICS_BASE_URL", "https://api.example.com")
    monkeypatch.setenv("DICT_MAGICS_ACCESS_KEY", "AK-1234567")
    with pytest.raises(CredentialsError, match=r"no secret key for profile 'default'"):
        credentials.load()
    with pytest.raises(CredentialsError) as other:
        credentials.load("team")
    assert "DICT_MAGICS_PROFILE=team with DICT_MAGICS_BASE_URL" in str(other.value)


def test_a_stored_unsafe_base_url_is_refused(memory_keyring: Any) -> None:
    memory_keyring.set_password("dict-magics", "default:base_url", "http://api.example.com")
    memory_keyring.set_password("dict-magics", "default:access_key", "AK-1234567")
    memory_keyring.set_password("dict-magics", "default:secret_key", SECRET)
    with pytest.raises(InvalidBaseUrlError, match="plain http"):
        credentials.load()


def test_delete_profile_removes_only_that_profile(memory_keyring: Any) -> None:
    credentials.store("a", "https://a.example.com", "AK-aaaaaaaa", "secret-a")
    credentials.store("b", "https://b.example.com", "AK-bbbbbbbb", "secret-b")
    assert credentials.delete_profile("a") == list(credentials.ITEMS)
    assert credentials.delete_profile("a") == []
    assert credentials.stored_items("a") == dict.fromkeys(credentials.ITEMS, False)
    assert credentials.stored_base_url("a") is None
    assert credentials.load("b").secret_key == "secret-b"


def test_backend_info_describes_the_backend(memory_keyring: Any) -> None:
    info = credentials.backend_info()
    assert info.name.endswith("MemoryKeyring") and info.available and not info.plaintext
    assert info.warning is None
    credentials.check_backend("default")  # nothing to complain about

    class PlaintextKeyring(type(memory_keyring)):  # type: ignore[misc]
        """Named like keyrings.alt's unencrypted file backend."""

    keyring.set_keyring(PlaintextKeyring())
    info = credentials.backend_info()
    assert info.plaintext and "plaintext file, unencrypted" in (info.warning or "")


@pytest.mark.parametrize("backend", [fail.Keyring()], indirect=True)
def test_no_backend_is_explained(backend: None, monkeypatch: pytest.MonkeyPatch) -> None:
    info = credentials.backend_info()
    assert not info.available and "no keyring backend" in (info.warning or "")
    expected = [
        "no keyring backend is available",
        "gnome-keyring",
        "DICT_MAGICS_SECRET_KEY",
    ]
    for call in (
        lambda: credentials.load("default"),
        lambda: credentials.store("default", "https://api.example.com", "AK", SECRET),
        lambda: credentials.delete_profile("default"),
        lambda: credentials.check_backend("default"),
    ):
        with pytest.raises(CredentialsError) as caught:
            call()
        assert all(part in str(caught.value) for part in expected), str(caught.value)
        assert SECRET not in str(caught.value)

    # With the variables set, nothing touches the keyring at all.
    monkeypatch.setenv("DICT_MAGICS_BASE_URL", "https://api.example.com")
    monkeypatch.setenv("DICT_MAGICS_ACCESS_KEY", "AK-1234567")
    monkeypatch.setenv("DICT_MAGICS_SECRET_KEY", SECRET)
    assert credentials.load().sources == dict.fromkeys(credentials.ITEMS, "env")


@pytest.mark.parametrize(
    ("backend", "expected"),
    [
        (BrokenKeyring(KeyringLocked("locked")), "the keyring is locked. Unlock it"),
        (BrokenKeyring(InitError("Prompt dismissed")), "could not be opened (InitError)"),
        (BrokenKeyring(RuntimeError(SECRET)), "the keyring backend failed (RuntimeError)"),
    ],
    indirect=["backend"],
)
def test_keyring_errors_become_one_clear_line(backend: None, expected: str) -> None:
    for call, action in (
        (lambda: credentials.load("work"), "read"),
        (lambda: credentials.store("work", "https://a.example.com", "AK", SECRET), "save"),
        (lambda: credentials.delete_profile("work"), "remove"),
    ):
        with pytest.raises(CredentialsError) as caught:
            call()
        message = str(caught.value)
        assert message.startswith(f"cannot {action} profile 'work': ")
        assert expected in message and "DICT_MAGICS_BASE_URL" in message
        assert SECRET not in message and "\n" not in message
        assert caught.value.__cause__ is None and caught.value.__suppress_context__


@pytest.mark.parametrize("backend", [fail.Keyring()], indirect=True)
def test_environment_hint_names_only_what_is_missing(
    backend: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DICT_MAGICS_BASE_URL", "https://api.example.com")
    monkeypatch.setenv("DICT_MAGICS_ACCESS_KEY", "AK-1234567")
    with pytest.raises(CredentialsError) as caught:
        credentials.load()
    assert "Meanwhile, set DICT_MAGICS_SECRET_KEY to work without" in str(caught.value)
    with pytest.raises(CredentialsError) as caught:
        credentials.load("other")
    assert "set DICT_MAGICS_PROFILE=other with DICT_MAGICS_BASE_URL" in str(caught.value)
