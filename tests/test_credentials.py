"""Credential profiles on a real (in-memory) keyring backend: storage, overrides, clear errors."""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail
from keyring.errors import InitError, KeyringLocked, PasswordDeleteError

from dict_magics.errors import CredentialsError, InvalidBaseUrlError
from dict_magics.frontends.commands import CLI, MAGIC
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
    assert missing.value.option == "login" and missing.value.profile == "default"
    assert "%dict_login -p default" in MAGIC.message(missing.value)
    assert "`dict-magics login -p default`" in CLI.message(missing.value)
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


# -- nothing that holds the secret can be pickled --------------------------------------------


def _holders() -> list[object]:
    from dict_magics.models.secret import Secret
    from dict_magics.service.http import SignatureAuth

    creds = credentials.Credentials("default", "https://api.example.com", "AK-1234567", SECRET)
    return [Secret(SECRET), creds, SignatureAuth("AK-1234567", SECRET, str)]


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_nothing_holding_the_secret_can_be_pickled(protocol: int) -> None:
    import requests

    for holder in _holders():
        with pytest.raises(TypeError, match="cannot be pickled: it holds a secret key"):
            pickle.dumps(holder, protocol=protocol)
        with pytest.raises(TypeError, match=type(holder).__name__):
            pickle.dumps({"inside": [holder]}, protocol=protocol)
    session = requests.Session()
    session.auth = _holders()[2]
    with pytest.raises(TypeError, match="SignatureAuth cannot be pickled"):
        pickle.dumps(session, protocol=protocol)


def test_copies_of_what_holds_the_secret_work() -> None:
    secret, creds, auth = _holders()
    assert copy.copy(secret) is secret and copy.deepcopy(secret) is secret
    for copied in (copy.copy(creds), copy.deepcopy(creds)):
        assert copied == creds and copied.secret_key == SECRET and repr(copied) == repr(creds)
    assert copy.deepcopy(creds).sources is not creds.sources
    assert type(creds.secret_key).__name__ == "Secret"
    for copied in (copy.copy(auth), copy.deepcopy(auth)):
        # The same object: a copied nonce source would hand out the same values again.
        assert copied is auth


# -- values that are not UTF-8 text are refused where they are read --------------------------

BAD_TEXT = "AK-\udcff\udcfe-0123456789"  # what os.environ gives for the bytes ff fe


@pytest.mark.parametrize(
    ("variable", "words"),
    [("DICT_MAGICS_SECRET_KEY", "secret key"), ("DICT_MAGICS_ACCESS_KEY", "access key")],
)
def test_environment_value_that_is_not_utf8_is_refused(
    memory_keyring: Any, monkeypatch: pytest.MonkeyPatch, variable: str, words: str
) -> None:
    monkeypatch.setenv("DICT_MAGICS_BASE_URL", "https://api.example.com")
    monkeypatch.setenv("DICT_MAGICS_ACCESS_KEY", "AK-1234567")
    monkeypatch.setenv("DICT_MAGICS_SECRET_KEY", SECRET)
    monkeypatch.setenv(variable, BAD_TEXT)
    with pytest.raises(CredentialsError) as caught:
        credentials.load()
    message = str(caught.value)
    assert message.startswith(f"the {words} in the environment ({variable}) is not valid UTF-8")
    assert "\n" not in message and "0123456789" not in message and "\\x" not in message
    assert "\udcff" not in message


@pytest.mark.parametrize("item", ["secret_key", "access_key"])
def test_keyring_value_that_is_not_utf8_is_refused(memory_keyring: Any, item: str) -> None:
    credentials.store("work", "https://api.example.com", "AK-1234567", SECRET)
    memory_keyring.set_password("dict-magics", f"work:{item}", BAD_TEXT)
    with pytest.raises(CredentialsError) as caught:
        credentials.load("work")
    message = str(caught.value)
    assert f"in the keyring item dict-magics / work:{item} is not valid UTF-8" in message
    assert "0123456789" not in message and "\udcff" not in message


def test_store_refuses_keys_that_are_not_utf8(memory_keyring: Any) -> None:
    for access_key, secret_key in ((BAD_TEXT, SECRET), ("AK-1234567", BAD_TEXT)):
        with pytest.raises(CredentialsError, match="given is not valid UTF-8") as caught:
            credentials.store("work", "https://api.example.com", access_key, secret_key)
        assert "0123456789" not in str(caught.value)
    assert memory_keyring.items == {}


def test_command_line_exits_2_on_a_secret_that_is_not_utf8(sandbox) -> None:
    env = {**os.environ, **sandbox.env(), "DICT_MAGICS_SECRET_KEY": "sk-\udcff-0123456789"}
    proc = subprocess.run(
        [sys.executable, "-m", "dict_magics", "delete", "1"],
        env=env,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert "DICT_MAGICS_SECRET_KEY" in proc.stderr and "not valid UTF-8" in proc.stderr
    assert "Traceback" not in proc.stderr and "0123456789" not in proc.stderr + proc.stdout
    assert sandbox.requests == []


# -- a failure part way through store() leaves the profile as it was -------------------------


class FlakyKeyring(KeyringBackend):
    """A keyring that keeps items in a dict and fails the ``fail_on``-th ``set_password``
    (and every later one with ``stay_failed``); 0 never fails."""

    priority = -1

    def __init__(self, fail_on: int, stay_failed: bool = False) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}
        self.sets: list[str] = []
        self.fail_on = fail_on
        self.stay_failed = stay_failed

    def get_password(self, service: str, username: str) -> str | None:
        return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.sets.append(username)
        count = len(self.sets)
        if count == self.fail_on or (self.stay_failed and 0 < self.fail_on < count):
            raise KeyringLocked("locked half way")
        self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.items.pop((service, username), None) is None:
            raise PasswordDeleteError(username)


@pytest.fixture
def flaky() -> Iterator[Callable[..., FlakyKeyring]]:
    """Install a ``FlakyKeyring`` failing the given call; the previous backend comes back."""
    previous = keyring.get_keyring()

    def install(fail_on: int, stay_failed: bool = False) -> FlakyKeyring:
        backend = FlakyKeyring(fail_on, stay_failed)
        keyring.set_keyring(backend)
        return backend

    try:
        yield install
    finally:
        keyring.set_keyring(previous)


OLD = {
    ("dict-magics", "work:secret_key"): "old-secret-0123456789",
    ("dict-magics", "work:access_key"): "AK-old-0001",
    ("dict-magics", "work:base_url"): "https://old.example.com",
}
ORDER = ["work:secret_key", "work:access_key", "work:base_url"]


def test_store_writes_the_keys_before_the_base_url(flaky: Any, known_secret: Any) -> None:
    backend = flaky(0)  # never fails
    credentials.store("work", "https://new.example.com", "AK-new-0002", known_secret(SECRET))
    assert backend.sets == ORDER
    assert backend.items[("dict-magics", "work:base_url")] == "https://new.example.com"


@pytest.mark.parametrize("fail_on", [1, 2, 3])
@pytest.mark.parametrize("existing", [OLD, {}], ids=["replacing", "new"])
def test_store_failing_part_way_leaves_the_profile_as_it_was(
    flaky: Any, known_secret: Any, fail_on: int, existing: dict[tuple[str, str], str]
) -> None:
    known_secret(OLD[("dict-magics", "work:secret_key")])
    backend = flaky(fail_on)
    backend.items.update(existing)
    with pytest.raises(CredentialsError, match="cannot save profile 'work': the keyring is locked"):
        credentials.store("work", "https://new.example.com", "AK-new-0002", known_secret(SECRET))
    assert backend.items == existing
    assert backend.sets[:fail_on] == ORDER[:fail_on]


def test_store_says_so_when_the_rollback_fails_too(flaky: Any, known_secret: Any) -> None:
    known_secret(OLD[("dict-magics", "work:secret_key")])
    backend = flaky(2, stay_failed=True)
    backend.items.update(OLD)
    with pytest.raises(CredentialsError) as caught:
        credentials.store("work", "https://new.example.com", "AK-new-0002", known_secret(SECRET))
    assert "could not be put back as it was" in str(caught.value)
    assert caught.value.option == "relogin"
    assert "`dict-magics logout -p work`" in CLI.message(caught.value)
    assert "%dict_logout -p work" in MAGIC.message(caught.value)
    assert SECRET not in str(caught.value)
