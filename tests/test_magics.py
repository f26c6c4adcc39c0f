"""The magics on a real InteractiveShell, against the real sandbox over loopback.

Prompts are answered by replacing only the user's keyboard (``builtins.input`` and
``getpass.getpass``); a front end without stdin is simulated by raising what ipykernel raises.
Every "nothing was sent" claim is checked against the sandbox's own request log.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import keyring
import pytest
from IPython.core.error import StdinNotImplementedError, UsageError
from IPython.utils.capture import capture_output
from keyring.backend import KeyringBackend
from keyring.backends import fail
from keyring.errors import KeyringLocked

from dict_magics.frontends.magics import DeletionFailedError
from dict_magics.models import BatchResult, DeleteResult
from dict_magics.operations.listing import CACHE
from dict_magics.sandbox import SandboxServer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# -- helpers ----------------------------------------------------------------------------------


@dataclass
class Run:
    """What one cell did: its value, its error, and everything it printed."""

    result: Any
    error: BaseException | None
    stdout: str
    stderr: str
    displayed: list[str]

    @property
    def everything(self) -> str:
        """All the text a user could see, the returned value's text and HTML views included."""
        parts = [self.stdout, self.stderr, *self.displayed]
        if self.result is not None:
            parts.append(repr(self.result))
            html = getattr(self.result, "_repr_html_", None)
            if html:
                parts.append(html())
        if self.error is not None:
            parts.append(str(self.error))
        return "\n".join(parts)


def run(ip: Any, cell: str) -> Run:
    """Run ``cell`` as a user would, capturing stdout, stderr and display output."""
    with capture_output() as cap:
        res = ip.run_cell(cell)
    displayed = [str(value) for out in cap.outputs for value in out.data.values()]
    return Run(res.result, res.error_in_exec, cap.stdout, cap.stderr, displayed)


def usage_error(ip: Any, cell: str) -> str:
    """Run ``cell``, insist it failed with exactly IPython's UsageError, return its message."""
    outcome = run(ip, cell)
    assert type(outcome.error) is UsageError, (outcome.error, outcome.stdout, outcome.stderr)
    assert "UsageError" in outcome.stderr  # shown as IPython's one red line
    assert "Traceback" not in outcome.stdout + outcome.stderr
    return str(outcome.error)


class Keyboard:
    """The user's keyboard: answers prompts in order; an exception instance is raised instead.

    ``asked`` records ``(kind, prompt)`` with kind ``"input"`` or ``"getpass"``.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *answers: str | BaseException) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, str]] = []
        monkeypatch.setattr("builtins.input", lambda prompt="": self._answer("input", prompt))
        monkeypatch.setattr(
            "getpass.getpass",
            lambda prompt="Password: ", stream=None: self._answer("getpass", prompt),
        )

    def _answer(self, kind: str, prompt: str) -> str:
        self.asked.append((kind, prompt))
        if not self.answers:
            raise AssertionError(f"unexpected prompt {prompt!r}")
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer


class LockedKeyring(KeyringBackend):
    """A keyring backend that is installed but locked, as gnome-keyring is before unlocking."""

    priority = -1

    def get_password(self, service: str, username: str) -> str | None:
        raise KeyringLocked("the collection is locked")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise KeyringLocked("the collection is locked")

    def delete_password(self, service: str, username: str) -> None:
        raise KeyringLocked("the collection is locked")


@pytest.fixture
def no_keyring() -> Iterator[None]:
    """No keyring backend at all (what keyring picks on a headless Linux box)."""
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        yield
    finally:
        keyring.set_keyring(previous)


@pytest.fixture(autouse=True)
def _fresh_listings() -> None:
    """A sandbox on a port an earlier test used must not meet that test's cached listing."""
    CACHE.forget()


@pytest.fixture
def env_creds(monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer) -> SandboxServer:
    """The default profile's credentials come from DICT_MAGICS_* variables."""
    for name, value in sandbox.env().items():
        monkeypatch.setenv(name, value)
    return sandbox


def login(ip: Any, monkeypatch: pytest.MonkeyPatch, server: SandboxServer, profile: str) -> Run:
    """Store ``profile`` for ``server`` through %dict_login, typing the keys at the prompts
    and declining the check (no request)."""
    Keyboard(monkeypatch, server.access_key, server.secret_key, "n")
    outcome = run(ip, f"%dict_login -p {profile} --base-url {server.url}")
    assert outcome.error is None, outcome.stderr
    return outcome


def sent(server: SandboxServer) -> list[tuple[str, str | None]]:
    """(operation, entry id) of every request the server received."""
    # A request refused for a nonce overtaken on another connection (40005) is not acted on
    # and is sent again at once: it is not one of the requests that count here.
    return [
        (r.operation, r.entry_id) for r in server.requests if r.method != "GET" and r.code != 40005
    ]


# -- loading and configuration ----------------------------------------------------------------


def test_load_ext_imports_nothing_heavy() -> None:
    code = (
        "import sys, dict_magics, dict_magics.frontends.magics\n"
        "heavy = ('requests', 'urllib3', 'ipywidgets', 'keyring', 'getpass', 'html',\n"
        "         'ahocorasick')\n"
        "later = ('dict_magics.profiles.credentials', 'dict_magics.service.http',\n"
        "         'dict_magics.service.client')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy or m in later))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == "[]"


def test_config_sets_and_validates_traits(ip: Any, caplog: pytest.LogCaptureFixture) -> None:
    magics = ip.magics_manager.registry["DictMagics"]
    assert run(ip, "%config DictMagics.workers = 2").error is None
    assert magics.workers == 2
    assert run(ip, "%config DictMagics.workers").result == 2
    run(ip, "%config DictMagics.base_url = 'http://127.0.0.1:8080/api/v1/'")
    assert magics.base_url == "http://127.0.0.1:8080"
    run(ip, "%config DictMagics.raise_on_failure = True")
    assert magics.raise_on_failure is True

    refused = {
        "timeout = 0": ("timeout", 15.0, "> 0"),
        "timeout = float('inf')": ("timeout", 15.0, "> 0"),
        "workers = 0": ("workers", 2, "1..64"),
        "max_retries = -1": ("max_retries", 3, "0..10"),
        "base_url = 'http://example.com'": ("base_url", "http://127.0.0.1:8080", "plain http"),
        "profile = 'a:b'": ("profile", "", "not valid"),
        # A switch is no number: Float and Int would take True as 1.
        "timeout = True": ("timeout", 15.0, "seconds, not True"),
        "workers = True": ("workers", 2, "1..64, not True"),
        "max_retries = False": ("max_retries", 3, "0..10, not False"),
        "listing_max_age = True": ("listing_max_age", None, "seconds, not True"),
    }
    for statement, (trait, kept, message) in refused.items():
        caplog.clear()
        outcome = run(ip, f"%config DictMagics.{statement}")
        assert getattr(magics, trait) == kept, statement
        # One line, as IPython shows any UsageError; not the root logger's "ERROR:root:".
        assert outcome.stderr.startswith(f"UsageError: DictMagics.{trait}"), outcome.stderr
        assert outcome.stderr.count("\n") == 1 and message in outcome.stderr, statement
        assert outcome.stderr.rstrip().endswith("The setting is unchanged.")
        assert caplog.records == [] and outcome.stdout == "", statement


def test_a_bad_config_value_is_one_clean_line(ip: Any) -> None:
    outcome = run(ip, "%config DictMagics.workers = 'many'")
    assert outcome.error is None and outcome.stdout == ""
    assert outcome.stderr == (
        "UsageError: The 'workers' trait of a DictMagics instance expected an int, not the "
        "str 'many'. The setting is unchanged.\n"
    )
    assert ip.magics_manager.registry["DictMagics"].workers == 4


def test_reloading_keeps_one_configurable(ip: Any) -> None:
    import dict_magics

    dict_magics.load_ipython_extension(ip)
    dict_magics.load_ipython_extension(ip)
    mine = [c for c in ip.configurables if type(c).__name__ == "DictMagics"]
    assert mine == [ip.magics_manager.registry["DictMagics"]]
    run(ip, "%config DictMagics.timeout = 3.5")
    assert mine[0].timeout == 3.5


def test_help_lists_the_arguments(ip: Any) -> None:
    help_text = run(ip, "%dict_delete?").stdout
    assert "%dict_delete [-p PROFILE] [-w WORKERS] [--dry-run] [--no-snapshot]" in help_text
    assert "{found.ids}" in help_text and "{df['id']}" in help_text
    assert "spaces and/or commas" in help_text
    purge_help = run(ip, "%dict_purge?").stdout
    assert "-y, --yes" in purge_help and "delete-all" in purge_help
    assert "--dry-run" in purge_help and "--no-snapshot" in purge_help
    restore_help = run(ip, "%dict_restore?").stdout
    assert "[--dry-run] [-y] [SNAPSHOT]" in restore_help and "%dict_snapshots" in restore_help
    for magic in ("dict_list", "dict_snapshots", "dict_log"):
        assert "Docstring" in run(ip, f"%{magic}?").stdout
    login_help = run(ip, "%dict_login?").stdout
    assert "--access-key" in login_help and "--secret" not in login_help
    assert "[--check | --no-check]" in login_help


# -- login, logout, status --------------------------------------------------------------------


def test_login_asks_for_what_is_missing_and_stores_it(
    ip: Any, monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer, memory_keyring: Any
) -> None:
    typed = (sandbox.url + "/api/v1", sandbox.access_key, sandbox.secret_key, "")
    keys = Keyboard(monkeypatch, *typed)
    outcome = run(ip, "%dict_login")
    assert outcome.error is None, outcome.stderr
    assert [kind for kind, _ in keys.asked] == ["input", "getpass", "getpass", "input"]
    assert "Secret key" in keys.asked[2][1]
    assert keys.asked[3][1] == "Check these credentials now with one read-only request? [Y/n] "
    assert memory_keyring.items == {
        ("dict-magics", "default:base_url"): sandbox.url,
        ("dict-magics", "default:access_key"): sandbox.access_key,
        ("dict-magics", "default:secret_key"): sandbox.secret_key,
        ("dict-magics", "profiles"): '["default"]',  # the registry of names, no secret
    }
    assert "Stored profile 'default'" in outcome.stdout
    assert "sand\u2026ey" in outcome.stdout
    assert sandbox.secret_key not in outcome.everything
    host = sandbox.url.removeprefix("http://")
    assert outcome.stdout.endswith(f"\u2713 credentials work: listed 100 entries at {host}\n")
    assert [r.method for r in sandbox.requests] == ["GET"]  # Enter: one read-only request

    deleted = run(ip, "%dict_delete 7")
    assert isinstance(deleted.result, DeleteResult) and deleted.result.ok
    assert sent(sandbox) == [("delete", "7")]


def test_login_with_options_asks_only_for_the_secret(
    ip: Any, monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer, memory_keyring: Any
) -> None:
    keys = Keyboard(monkeypatch, "s3cret-typed", "n")
    outcome = run(ip, f"%dict_login -p work --base-url {sandbox.url} --access-key AK-12345678")
    assert outcome.error is None
    assert [kind for kind, _ in keys.asked] == ["getpass", "input"]
    assert memory_keyring.items[("dict-magics", "work:secret_key")] == "s3cret-typed"

    # Logging in again offers the stored base URL: an empty answer keeps it.
    keys = Keyboard(monkeypatch, "", "AK-other-key", "another-secret", "no")
    assert run(ip, "%dict_login -p work").error is None
    assert sandbox.url in keys.asked[0][1]
    assert memory_keyring.items[("dict-magics", "work:base_url")] == sandbox.url
    assert memory_keyring.items[("dict-magics", "work:access_key")] == "AK-other-key"
    assert sandbox.requests == []  # the check was declined both times


CHECK = "Check these credentials now with one read-only request? [Y/n] "


def test_login_check_with_good_keys_lists_once(
    ip: Any, monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer, memory_keyring: Any
) -> None:
    host = sandbox.url.removeprefix("http://")
    for answer in ("y", " YES "):
        keys = Keyboard(monkeypatch, sandbox.access_key, sandbox.secret_key, answer)
        outcome = run(ip, f"%dict_login -p work --base-url {sandbox.url}")
        assert outcome.error is None, outcome.stderr
        assert keys.asked[-1] == ("input", CHECK)
        lines = outcome.stdout.splitlines()
        assert lines[0].startswith("Stored profile 'work'")
        assert lines[-1] == f"\u2713 credentials work: listed 100 entries at {host}"
    assert [(r.method, r.path) for r in sandbox.requests] == [("GET", "/api/v1/dictionary")] * 2
    assert len(sandbox.entries) == 100


def test_login_check_with_a_wrong_secret_says_refused_and_keeps_the_profile(
    ip: Any, monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer, memory_keyring: Any
) -> None:
    Keyboard(monkeypatch, sandbox.access_key, "not-the-sandbox-secret", "")
    outcome = run(ip, f"%dict_login -p work --base-url {sandbox.url}")
    assert outcome.error is None, outcome.stderr  # a refusal is news, not a mistake to undo
    last = outcome.stdout.splitlines()[-1]
    assert last.startswith("\u2717 credentials refused (HTTP 401): ")
    assert "[40006] The signature is incorrect." in last
    assert memory_keyring.items[("dict-magics", "work:secret_key")] == "not-the-sandbox-secret"
    assert [r.method for r in sandbox.requests] == ["GET"] and len(sandbox.entries) == 100


def test_login_check_where_the_service_has_no_listing_deletes_nothing(
    ip: Any, monkeypatch: pytest.MonkeyPatch, memory_keyring: Any
) -> None:
    with SandboxServer(3, listing=False) as box:
        Keyboard(monkeypatch, box.access_key, box.secret_key, "")
        outcome = run(ip, f"%dict_login --base-url {box.url}")
        assert outcome.error is None, outcome.stderr
        assert outcome.stdout.splitlines()[-1] == (
            "? this service has no listing; cannot check without deleting"
        )
        assert [r.method for r in box.requests] == ["GET"] and len(box.entries) == 3


def test_login_check_declined_or_unaskable_sends_nothing(
    ip: Any, monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer, memory_keyring: Any
) -> None:
    no_stdin = (StdinNotImplementedError("no stdin"), EOFError())
    for answer in ("n", "No", "later", *no_stdin):
        keys = Keyboard(monkeypatch, sandbox.access_key, sandbox.secret_key, answer)
        outcome = run(ip, f"%dict_login --base-url {sandbox.url}")
        # Nobody to answer: the question is skipped silently; the profile is stored either way.
        assert outcome.error is None and outcome.stderr == "", (answer, outcome.stderr)
        assert keys.asked[-1] == ("input", CHECK)
        assert len(outcome.stdout.splitlines()) == 1 and "credentials" not in outcome.stdout
        assert memory_keyring.items[("dict-magics", "default:secret_key")] == sandbox.secret_key
    assert sandbox.requests == []


def test_login_check_options_skip_the_question(
    ip: Any, monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer, memory_keyring: Any
) -> None:
    keys = Keyboard(monkeypatch, sandbox.access_key, sandbox.secret_key)
    outcome = run(ip, f"%dict_login --base-url {sandbox.url} --no-check")
    assert outcome.error is None and keys.asked[-1][0] == "getpass"
    assert sandbox.requests == []

    keys = Keyboard(monkeypatch, sandbox.access_key, sandbox.secret_key)
    outcome = run(ip, f"%dict_login --base-url {sandbox.url} --check")
    assert outcome.error is None and keys.asked[-1][0] == "getpass"
    assert "\u2713 credentials work: listed 100 entries" in outcome.stdout
    assert [r.method for r in sandbox.requests] == ["GET"]


def test_login_check_tries_what_was_typed_not_the_environment(
    ip: Any, monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer, memory_keyring: Any
) -> None:
    monkeypatch.setenv("DICT_MAGICS_ACCESS_KEY", "AK-from-the-environment")
    Keyboard(monkeypatch, sandbox.access_key, sandbox.secret_key)
    outcome = run(ip, f"%dict_login --base-url {sandbox.url} --check")
    assert "DICT_MAGICS_ACCESS_KEY set in the environment override" in outcome.stdout
    assert "\u2713 credentials work" in outcome.stdout  # the stored keys, as the question says
    assert {r.headers["accessKey"] for r in sandbox.requests} == {sandbox.access_key}


def test_login_and_logout_mention_environment_overrides(
    ip: Any, monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer, memory_keyring: Any
) -> None:
    monkeypatch.setenv("DICT_MAGICS_ACCESS_KEY", "AK-from-the-environment")
    stored = login(ip, monkeypatch, sandbox, "default")
    assert "DICT_MAGICS_ACCESS_KEY set in the environment override" in stored.stdout
    # The listing taken for the snapshot is refused first: nothing is deleted, one line says why.
    refused = "[40002] Access key does not exist (check the access key"
    assert refused in usage_error(ip, "%dict_delete 1")
    assert run(ip, "%dict_delete --no-snapshot 1").result.reason == (
        "the service refused the credentials: [40002] Access key does not exist "
        "(check the access key and the secret key)"
    )
    removed = run(ip, "%dict_logout")
    assert "DICT_MAGICS_ACCESS_KEY still set" in removed.stdout
    assert login(ip, monkeypatch, sandbox, "other").stdout.count("Note:") == 0


def test_login_refuses_bad_input_before_storing(
    ip: Any, monkeypatch: pytest.MonkeyPatch, memory_keyring: Any
) -> None:
    keys = Keyboard(monkeypatch)
    message = usage_error(ip, "%dict_login --base-url http://example.com")
    assert "plain http" in message and keys.asked == []  # refused before any key is typed

    Keyboard(monkeypatch, "AK-1", "")
    assert "no secret key" in usage_error(ip, "%dict_login --base-url https://api.example.com")
    Keyboard(monkeypatch, "")
    assert "no base URL" in usage_error(ip, "%dict_login")
    assert "not valid" in usage_error(ip, "%dict_login -p bad:name")
    assert memory_keyring.items == {}


@pytest.mark.parametrize("raised", [StdinNotImplementedError("no stdin"), EOFError()])
def test_login_without_stdin_names_the_environment_variables(
    ip: Any, monkeypatch: pytest.MonkeyPatch, memory_keyring: Any, raised: BaseException
) -> None:
    Keyboard(monkeypatch, raised)
    message = usage_error(ip, "%dict_login --base-url https://api.example.com")
    assert "no stdin" in message
    assert "DICT_MAGICS_ACCESS_KEY" in message and "DICT_MAGICS_SECRET_KEY" in message
    assert memory_keyring.items == {}


def test_login_without_keyring_backend_says_how_to_fix(
    ip: Any, monkeypatch: pytest.MonkeyPatch, no_keyring: None
) -> None:
    keys = Keyboard(monkeypatch)
    message = usage_error(ip, "%dict_login")
    assert "no keyring backend is available" in message
    assert "gnome-keyring" in message and "DICT_MAGICS_SECRET_KEY" in message
    assert keys.asked == []  # nobody types a secret that could not be kept


def test_logout_removes_only_that_profile(
    ip: Any, monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer, memory_keyring: Any
) -> None:
    login(ip, monkeypatch, sandbox, "a")
    login(ip, monkeypatch, sandbox, "b")
    outcome = run(ip, "%dict_logout -p a")
    assert "Removed profile 'a'" in outcome.stdout
    assert {user for _, user in memory_keyring.items} == {
        "b:base_url",
        "b:access_key",
        "b:secret_key",
        "profiles",
    }
    assert memory_keyring.items[("dict-magics", "profiles")] == '["b"]'
    assert "nothing stored" in run(ip, "%dict_logout -p a").stdout
    message = usage_error(ip, "%dict_delete -p a 1")
    assert "profile 'a'" in message and "%dict_login -p a" in message
    assert "DICT_MAGICS_PROFILE=a" in message and "DICT_MAGICS_SECRET_KEY" in message
    assert run(ip, "%dict_delete -p b 1").result.ok
    assert sent(sandbox) == [("delete", "1")]


def test_status_shows_where_things_are_but_never_the_secret(
    ip: Any, monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer
) -> None:
    login(ip, monkeypatch, sandbox, "default")
    outcome = run(ip, "%dict_status")
    text = repr(outcome.result)
    assert "profile 'default'" in text
    assert f"{sandbox.url} (from keyring)" in text
    assert "sand\u2026ey (from keyring)" in text
    assert "keyring backend " in text and "MemoryKeyring" in text
    assert sandbox.access_key not in text and sandbox.secret_key not in outcome.everything
    assert "<table>" in outcome.result._repr_html_()
    assert sandbox.requests == []


def test_status_warns_about_a_plaintext_backend(
    ip: Any, monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer, memory_keyring: Any
) -> None:
    class PlaintextKeyring(type(memory_keyring)):  # type: ignore[misc]
        """Named like keyrings.alt's unencrypted file backend."""

    previous = keyring.get_keyring()
    keyring.set_keyring(PlaintextKeyring())
    try:
        stored = login(ip, monkeypatch, sandbox, "default")
        status = repr(run(ip, "%dict_status").result)
    finally:
        keyring.set_keyring(previous)
    assert "plaintext file, unencrypted" in stored.stdout
    assert "warning:" in status and "plaintext file, unencrypted" in status


def test_status_reports_problems_instead_of_failing(ip: Any) -> None:
    missing = repr(run(ip, "%dict_status -p nobody").result)
    assert "\u2717 dict-magics profile 'nobody'" in missing
    assert "%dict_login -p nobody" in missing

    previous = keyring.get_keyring()
    keyring.set_keyring(LockedKeyring())
    try:
        locked = repr(run(ip, "%dict_status").result)
    finally:
        keyring.set_keyring(previous)
    assert "keyring is locked" in locked


# -- credentials from the environment, with no keyring at all ---------------------------------


def test_env_credentials_work_without_any_keyring_backend(
    ip: Any, env_creds: SandboxServer, no_keyring: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    status = repr(run(ip, "%dict_status").result)
    assert "\u2713 dict-magics profile 'default'" in status
    assert "(from DICT_MAGICS_BASE_URL)" in status
    assert "environment variable DICT_MAGICS_SECRET_KEY" in status
    assert "keyring.backends.fail.Keyring (not available)" in status
    assert "no keyring backend is available: the environment variables are used" in status

    batch = run(ip, "%dict_delete 1, 2 3").result
    assert isinstance(batch, BatchResult) and batch.ok and batch.succeeded == 3
    assert not {"1", "2", "3"} & set(env_creds.entries)

    message = usage_error(ip, "%dict_delete -p other 4")
    assert "no keyring backend" in message and "DICT_MAGICS_ACCESS_KEY" in message
    Keyboard(monkeypatch)
    assert "no keyring backend" in usage_error(ip, "%dict_login -p other")
    assert len(sent(env_creds)) == 3


def test_dict_magics_profile_variable_picks_the_profile(
    ip: Any, env_creds: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DICT_MAGICS_PROFILE", "ci")
    assert "profile 'ci'" in repr(run(ip, "%dict_status").result)
    assert run(ip, "%dict_delete 9").result.ok
    # The environment belongs to its own profile; another one still needs the keyring.
    assert "profile 'default'" in usage_error(ip, "%dict_delete -p default 10")


# -- deleting ---------------------------------------------------------------------------------


def test_delete_one_entry_returns_a_rendered_result(ip: Any, env_creds: SandboxServer) -> None:
    outcome = run(ip, "%dict_delete 42")
    result = outcome.result
    assert isinstance(result, DeleteResult) and result.ok and result.entry_id == "42"
    terms = "conseil d'administration \u2192 board of directors (fr\u2192en)"
    assert f"\u2713 deleted 42: {terms}" in outcome.stdout  # shown as the cell's output
    assert "dict-magics-success" in result._repr_html_()
    assert "42" not in env_creds.entries
    assert sent(env_creds) == [("delete", "42")]


def test_delete_several_shows_progress_and_lists_every_failure(
    ip: Any, env_creds: SandboxServer
) -> None:
    # Without a snapshot no listing shows "99998" and "99999" absent: they are sent, and refused.
    outcome = run(ip, "%dict_delete -w 3 --no-snapshot 1,2, 3 99998 2 99999")
    batch = outcome.result
    assert isinstance(batch, BatchResult)
    assert [r.entry_id for r in batch.results] == ["1", "2", "3", "99998", "2", "99999"]
    assert (batch.succeeded, batch.failed, batch.ok) == (4, 2, False)
    assert "Deleting 5 entries at 127.0.0.1:" in outcome.stdout
    assert "5/5 (2 failed)" in outcome.stdout
    text = str(batch)
    assert "entry '99998' not deleted" in text and "entry '99999' not deleted" in text
    assert text.count("no such entry") == 2
    assert sorted(i for _, i in sent(env_creds)) == ["1", "2", "3", "99998", "99999"]


def test_delete_expands_variables_and_collections(ip: Any, env_creds: SandboxServer) -> None:
    ip.user_ns.update(
        one="11", text="12,13", listed=["14", 15], spaced=range(16, 18), who="default"
    )
    assert run(ip, "%dict_delete $one").result.entry_id == "11"
    assert [r.entry_id for r in run(ip, "%dict_delete {text}").result.results] == ["12", "13"]
    assert [r.entry_id for r in run(ip, "%dict_delete {listed}").result.results] == ["14", "15"]
    batch = run(ip, "%dict_delete -p {who} {spaced} {int(one) + 7}").result
    assert [r.entry_id for r in batch.results] == ["16", "17", "18"] and batch.ok
    cell = (
        "def delete_mine():\n"
        "    mine = ('19', '20')\n"
        "    return get_ipython().run_line_magic('dict_delete', '{mine}')\n"
        "delete_mine()"
    )
    assert [r.entry_id for r in run(ip, cell).result.results] == ["19", "20"]

    class Column:
        """Like a numpy array or pandas Series: items are not ``int``, ``tolist()`` gives ints."""

        def __iter__(self) -> Iterator[object]:
            return iter([object(), object()])

        def tolist(self) -> list[int]:
            return [21, 22]

        def __str__(self) -> str:
            return "0    21\n1    22\nName: id, dtype: int64"

    ip.user_ns["column"] = Column()
    assert [r.entry_id for r in run(ip, "%dict_delete {column}").result.results] == ["21", "22"]
    # List items are ids as they are: leading zeros name the same entry, anything else is refused.
    ip.user_ns["padded"] = ["023", 24]
    batch = run(ip, "%dict_delete {padded}").result
    assert [r.entry_id for r in batch.results] == ["23", "24"] and batch.ok
    assert len(sent(env_creds)) == 14


def test_collections_must_stand_alone(ip: Any, env_creds: SandboxServer) -> None:
    ip.user_ns.update(ids=["1", "2"], who=["default"])
    for line in ("x{ids}", "{ids}x", "'{ids}'", "-p {who} 3", "-w {ids} 3"):
        assert "must stand alone" in usage_error(ip, f"%dict_delete {line}"), line

    class Table:
        """Like a pandas DataFrame: iterating it gives column names, not ids."""

        columns = ("id",)

        def __iter__(self) -> Iterator[str]:
            return iter(["0"])

    ip.user_ns["df"] = Table()
    assert "pass one column" in usage_error(ip, "%dict_delete {df}")
    assert env_creds.requests == []


def test_bad_ids_are_refused_before_any_request(ip: Any, env_creds: SandboxServer) -> None:
    assert "'dictionary-all' is not an entry id" in usage_error(ip, "%dict_delete 1 dictionary-all")
    assert "'..'" in usage_error(ip, "%dict_delete 2,..,3")
    assert "'.'" in usage_error(ip, "%dict_delete .")
    ip.user_ns["ids"] = ["4", "DICTIONARY-ALL"]
    assert "DICTIONARY-ALL" in usage_error(ip, "%dict_delete {ids}")
    ip.user_ns["ids"] = ["5", "\uff17"]  # a fullwidth 7
    assert "ASCII digits" in usage_error(ip, "%dict_delete {ids}")
    ip.user_ns["ids"] = [6, 7.0]
    assert "7.0" in usage_error(ip, "%dict_delete {ids}")
    assert "NameError" in usage_error(ip, "%dict_delete {not_defined}")
    assert "no entry id" in usage_error(ip, "%dict_delete ,,")
    assert "no entry id given" in usage_error(ip, "%dict_delete")
    ip.user_ns["ids"] = []
    assert "no entry id given" in usage_error(ip, "%dict_delete {ids}")
    assert "No closing quotation" in usage_error(ip, "%dict_delete 'unbalanced")
    assert "workers must be 1..64, not 0. Set -w/--workers" in usage_error(
        ip, "%dict_delete -w 0 1 2"
    )
    assert "invalid int value" in usage_error(ip, "%dict_delete -w many 1 2")
    assert env_creds.requests == []


def test_a_repeated_id_is_one_entry_and_one_line(ip: Any, env_creds: SandboxServer) -> None:
    outcome = run(ip, "%dict_delete --no-snapshot 99998 99998 99998")
    assert isinstance(outcome.result, BatchResult) and len(outcome.result) == 3
    host = env_creds.url.removeprefix("http://")
    assert f"Deleting 1 entry at {host}" in outcome.stdout
    # The magic itself prints nothing per id: one line names the id, in the rendered result.
    assert len([line for line in outcome.stdout.splitlines() if "'99998'" in line]) == 1
    assert sent(env_creds) == [("delete", "99998")]


def test_unsafe_base_url_is_refused_before_any_request(
    ip: Any, env_creds: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DICT_MAGICS_BASE_URL", "http://dictionary.example.com")
    assert "refusing plain http" in usage_error(ip, "%dict_delete 1")
    assert "refusing plain http" in usage_error(ip, "%dict_purge --yes")
    assert env_creds.requests == []


def test_missing_locked_and_absent_keyrings_are_usage_errors(ip: Any) -> None:
    message = usage_error(ip, "%dict_delete 1")
    assert "profile 'default'" in message and "%dict_login" in message
    assert "DICT_MAGICS_ACCESS_KEY" in message

    previous = keyring.get_keyring()
    try:
        keyring.set_keyring(LockedKeyring())
        assert "the keyring is locked" in usage_error(ip, "%dict_delete 1")
        assert "the keyring is locked" in usage_error(ip, "%dict_logout")
        keyring.set_keyring(fail.Keyring())
        message = usage_error(ip, "%dict_purge --yes")
        assert "no keyring backend is available" in message and "DICT_MAGICS_" in message
    finally:
        keyring.set_keyring(previous)


def test_service_failures_are_returned_or_raised_when_configured(
    ip: Any, env_creds: SandboxServer
) -> None:
    env_creds.fail_next(1, status=500, method="DELETE")
    failed = run(ip, "%dict_delete 1")
    assert failed.error is None
    assert isinstance(failed.result, DeleteResult) and not failed.result.ok
    assert "HTTP 500" in failed.stdout

    run(ip, "%config DictMagics.raise_on_failure = True")
    env_creds.fail_next(1, status=500, method="DELETE")
    raised = run(ip, "%dict_delete 2")
    assert type(raised.error) is DeletionFailedError
    assert str(raised.error) == str(raised.error.result)
    assert "2: invoice \u2192 Rechnung (en\u2192de) not deleted" in str(raised.error)

    raised = run(ip, "%dict_delete --no-snapshot 3 99997")
    assert type(raised.error) is DeletionFailedError
    assert isinstance(raised.error.result, BatchResult)
    assert "entry '99997' not deleted" in str(raised.error)
    assert run(ip, "%dict_delete 6 99997").error is None  # listed as absent: no failure
    assert run(ip, "%dict_delete 4 5").error is None  # all went well: nothing raised


def test_config_reaches_the_client(ip: Any, env_creds: SandboxServer) -> None:
    run(ip, "%config DictMagics.max_retries = 0")
    env_creds.fail_next(1, status=503, method="DELETE")
    result = run(ip, "%dict_delete 1").result
    assert result.attempts == 1 and "gave up after 1 attempt" in result.reason

    run(ip, "%config DictMagics.timeout = 0.3")
    env_creds.inject("hang", delay=3, method="DELETE")
    result = run(ip, "%dict_delete 3").result
    # No answer within 0.3 s; the listing afterwards shows the entry gone.
    assert result.ok and result.verified and "verified by listing" in result.reason
    assert "answer was lost (timeout)" in result.reason

    with SandboxServer(5, secret_key=env_creds.secret_key) as other:
        run(ip, f"%config DictMagics.base_url = '{other.url}'")
        assert run(ip, "%dict_delete 2").result.ok
        assert sent(other) == [("delete", "2")]
    assert sent(env_creds) == [("delete", "1"), ("delete", "3")]


# -- purge ------------------------------------------------------------------------------------


def test_purge_cancelled_sends_nothing(
    ip: Any, env_creds: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    host = env_creds.url.removeprefix("http://")
    for answer in ("no", "", "delete all", "DELETE-ALL "):
        keys = Keyboard(monkeypatch, answer)
        outcome = run(ip, "%dict_purge")
        # Not confirmed is a user's decision: a UsageError (exactly that class, which IPython
        # shows as one line), so a "Run All" stops here too, without a traceback.
        assert type(outcome.error) is UsageError and outcome.result is None
        assert outcome.stderr == (
            "UsageError: Cancelled \u2014 purge not confirmed: nothing was deleted "
            f"(profile 'default', {host}).\n"
        )
        stated = f"This deletes all 100 entries on {host} (profile 'default'); a snapshot is kept"
        assert stated in outcome.stdout
        # The file it names is removed on cancel, and the warning says so (no dangling path).
        named = outcome.stdout.split("a snapshot is kept at ")[1].split(" (removed if")[0]
        assert named.endswith(".json") and "purge" in os.path.basename(named)
        assert "(removed if you cancel; %dict_restore puts them back)." in outcome.stdout
        assert not os.path.exists(named) and "`dict-magics" not in outcome.stdout
        assert "delete-all" in keys.asked[0][1] and host in keys.asked[0][1]
    # Only the listing went out, and the snapshot taken for a purge never confirmed is gone.
    assert sent(env_creds) == [] and len(env_creds.entries) == 100
    assert {r.method for r in env_creds.requests} == {"GET"}
    assert run(ip, "%dict_snapshots").result == []


def test_purge_confirmed_then_unlistable_is_not_called_cancelled(
    ip: Any, env_creds: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a yes, the purge lists again for a fresh snapshot; that listing refused is a
    failure to say as it is, not a cancellation."""

    def yes_then_refuse(prompt: str = "") -> str:
        env_creds.fail_next(1, status=401, method="GET")
        return "delete-all"

    monkeypatch.setattr("builtins.input", yes_then_refuse)
    message = usage_error(ip, "%dict_purge")
    assert not message.startswith("Cancelled") and "no snapshot could be taken" in message
    assert sent(env_creds) == [] and len(env_creds.entries) == 100


@pytest.mark.parametrize("word", ["delete-all", " delete-all ", "host"])
def test_purge_confirmed_by_typing_the_word_or_host(
    ip: Any, env_creds: SandboxServer, monkeypatch: pytest.MonkeyPatch, word: str
) -> None:
    if word == "host":
        word = env_creds.url.removeprefix("http://")
    Keyboard(monkeypatch, word)
    result = run(ip, "%dict_purge").result
    assert isinstance(result, DeleteResult) and result.ok and result.entry_id is None
    assert sent(env_creds) == [("purge", None)] and env_creds.entries == {}


def test_purge_yes_skips_the_question(
    ip: Any, env_creds: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = Keyboard(monkeypatch)
    outcome = run(ip, "%dict_purge -y")
    assert outcome.result.ok and keys.asked == []
    assert "deleted every entry" in outcome.stdout
    assert sent(env_creds) == [("purge", None)]


@pytest.mark.parametrize("raised", [StdinNotImplementedError("no stdin"), EOFError()])
def test_purge_without_stdin_names_yes(
    ip: Any,
    env_creds: SandboxServer,
    monkeypatch: pytest.MonkeyPatch,
    raised: BaseException,
) -> None:
    Keyboard(monkeypatch, raised)
    message = usage_error(ip, "%dict_purge")
    assert "--yes" in message and "Nothing was deleted" in message
    assert sent(env_creds) == [] and len(env_creds.entries) == 100


def test_purge_without_credentials_never_asks(ip: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    keys = Keyboard(monkeypatch)
    assert "%dict_login" in usage_error(ip, "%dict_purge")
    assert keys.asked == []


def test_purge_failure_raises_only_when_configured(ip: Any, env_creds: SandboxServer) -> None:
    env_creds.fail_next(1, status=500, method="DELETE")
    assert not run(ip, "%dict_purge --yes").result.ok
    run(ip, "%config DictMagics.raise_on_failure = True")
    env_creds.fail_next(1, status=500, method="DELETE")
    raised = run(ip, "%dict_purge --yes").error
    assert type(raised) is DeletionFailedError and "every entry not deleted" in str(raised)
    assert len(env_creds.entries) == 100


# -- profiles ---------------------------------------------------------------------------------


def test_profiles_are_kept_apart(
    ip: Any, monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer
) -> None:
    with SandboxServer(10, access_key="second-access-key") as second:
        login(ip, monkeypatch, sandbox, "first")
        login(ip, monkeypatch, second, "second")
        assert run(ip, "%dict_delete -p first 1").result.ok
        assert run(ip, "%dict_delete -p second 2 3").result.ok
        run(ip, "%config DictMagics.profile = 'second'")
        assert run(ip, "%dict_delete 4").result.ok
        assert sent(sandbox) == [("delete", "1")]
        assert sorted(sent(second)) == [("delete", "2"), ("delete", "3"), ("delete", "4")]
        assert {r.headers["accessKey"] for r in second.requests} == {"second-access-key"}
        assert second.url in repr(run(ip, "%dict_status").result)
        assert sandbox.url in repr(run(ip, "%dict_status -p first").result)

        # The wrong secret for a profile is the service's answer, not a leak of the other's.
        Keyboard(monkeypatch, "wrong-secret", "n")
        run(ip, f"%dict_login -p first --base-url {sandbox.url} --access-key {sandbox.access_key}")
        refused = run(ip, "%dict_delete -p first 5")  # its listing is refused: nothing sent
        assert refused.result is None
        assert "[40006] The signature is incorrect." in str(refused.error)


# -- panel ------------------------------------------------------------------------------------


def test_panel_is_built_from_the_same_credentials(ip: Any, env_creds: SandboxServer) -> None:
    from dict_magics.frontends.panel import DictPanel

    run(ip, "%config DictMagics.workers = 3")
    panel = run(ip, "%dict_panel").result
    try:
        assert isinstance(panel, DictPanel)
        assert panel.profile == "default" and panel.workers == 3
        assert panel._client.base_url == env_creds.url
        assert panel.wait(30)
    finally:
        panel.close()
    assert "profile 'nobody'" in usage_error(ip, "%dict_panel -p nobody")
    assert [(r.method, r.operation) for r in env_creds.requests] == [("GET", "list")]


# -- progress displays ------------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _result(ok: bool) -> DeleteResult:
    return DeleteResult("success" if ok else "failure", "x", reason=None if ok else "no")


def test_text_progress_redraws_in_a_terminal_and_writes_lines_in_a_log() -> None:
    from dict_magics.frontends.output import TextProgress

    terminal = _Terminal()
    bar = TextProgress(terminal)
    bar.start(4, "Deleting")
    for done, ok in enumerate([True, False, True, True], start=1):
        bar(done, 4, _result(ok))
    bar.stop()
    text = terminal.getvalue()
    assert text.count("\r") == 5 and text.endswith("4/4 (1 failed)\n")
    assert "[###############...............] 2/4 (1 failed)" in text

    log = io.StringIO()  # a line at each quarter, never one per entry
    bar = TextProgress(log)
    bar.start(200, "Deleting")
    for done in range(1, 201):
        bar(done, 200, _result(True))
    bar.stop()
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue()
    ends = [line.rsplit(" ", 1)[-1] for line in lines]
    assert ends == ["0/200", "50/200", "100/200", "150/200", "200/200"]

    timed = io.StringIO()  # the command line's logs: a line every interval while it runs
    bar = TextProgress(timed, every=0.05)
    bar.start(200, "Deleting")
    for done in range(1, 201):
        bar(done, 200, _result(done != 7))
        if done % 50 == 0:
            time.sleep(0.12)
    bar.stop()
    lines = timed.getvalue().splitlines()
    assert 2 <= len(lines) < 50
    assert all(
        re.fullmatch(r"Deleting: \d+/200 done, [\d.]+/s, [01] failed", x) for x in lines[:-1]
    )
    last = r"Deleting: 200/200 done, [\d.]+/s, 1 failed, finished in [\d.]+ s"
    assert re.fullmatch(last, lines[-1])

    quick = io.StringIO()  # a batch over before the first interval writes nothing
    bar = TextProgress(quick, every=60)
    bar.start(2, "Deleting")
    bar(2, 2, _result(True))
    bar.stop()
    assert quick.getvalue() == ""


def test_widget_progress_tracks_values_and_outcome() -> None:
    from dict_magics.frontends.output import WidgetProgress, progress_for

    bar = WidgetProgress()
    bar.start(3, "Deleting 3 entries")
    assert bar.plain().startswith("Deleting 3 entries: 0/3 (running; a progress bar widget")
    bar(1, 3, _result(True))
    bar(2, 3, _result(False))
    assert (bar.bar.value, bar.bar.max, bar.bar.bar_style) == (2, 3, "warning")
    assert "2/3, 1 failed" in bar.text.value
    bar(3, 3, _result(True))
    bar.stop()
    assert bar.bar.bar_style == "danger"
    # What a viewer that draws no widgets (GitHub) shows: words, not HBox(children=...).
    assert bar.plain().startswith("Deleting 3 entries: 3/3, 1 failed (finished;")
    bar.box.close()

    clean = WidgetProgress()
    clean.start(2, "Deleting 2 entries")
    clean(1, 2, _result(True))
    clean(2, 2, _result(True))
    clean.stop()
    assert clean.bar.bar_style == "success"
    clean.box.close()
    assert type(progress_for(None)).__name__ == "TextProgress"  # no kernel: text


# -- a real notebook front end: widgets and no stdin ------------------------------------------


def test_headless_notebook_run(
    tmp_path: Any, env_creds: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a real kernel run by nbclient (no stdin): a widget bar, and prompts become errors."""
    import nbclient
    import nbformat

    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    cells = [
        "%load_ext dict_magics",
        "r = %dict_delete 1 2 3 99998\nr",
        "%dict_purge",
        "%dict_login -p other --base-url https://api.example.com",
        "%dict_status",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    client = nbclient.NotebookClient(
        nb, kernel_name="python3", allow_errors=True, timeout=120, resources={}
    )
    client.execute(cwd=ROOT)

    delete_out = nb.cells[1].outputs
    views = [
        o for o in delete_out if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    assert len(views) == 1, delete_out
    result = next(o for o in delete_out if o.output_type == "execute_result")
    assert "deleted 3 of 4 entries" in result.data["text/html"]
    assert "entry &#x27;99998&#x27; absent" in result.data["text/html"]  # not in the listing
    states = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    bars = [s["state"] for s in states.values() if s["model_name"] == "IntProgressModel"]
    assert [(b["value"], b["max"], b["bar_style"]) for b in bars] == [(3, 3, "success")]

    def text_of(index: int) -> str:
        return json.dumps(nb.cells[index].outputs)

    assert "UsageError" in text_of(2) and "--yes" in text_of(2) and "no stdin" in text_of(2)
    assert "UsageError" in text_of(3) and "DICT_MAGICS_SECRET_KEY" in text_of(3)
    assert "environment variable DICT_MAGICS_SECRET_KEY" in text_of(4)
    assert sorted(i for _, i in sent(env_creds)) == ["1", "2", "3"]
    assert env_creds.secret_key not in nbformat.writes(nb)


# -- the secret, everywhere -------------------------------------------------------------------


def test_the_secret_never_appears_in_anything_shown(
    ip: Any, monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer
) -> None:
    secret = sandbox.secret_key
    seen: list[str] = []

    def show(cell: str, *answers: str | BaseException) -> Run:
        Keyboard(monkeypatch, *answers)
        outcome = run(ip, cell)
        seen.append(outcome.everything)
        return outcome

    show("%dict_login", sandbox.url, sandbox.access_key, secret, "y")
    show(f"%dict_login -p two --base-url {sandbox.url}", sandbox.access_key, "wrong-secret", "")
    show(f"%dict_login -p two --base-url {sandbox.url} --check", sandbox.access_key, secret)
    show("%dict_login -p three", StdinNotImplementedError("no stdin"))
    show("%dict_status")
    show("%dict_status -p two")
    show("%dict_delete 1")
    show("%dict_delete 2 3 99997 4")
    show("%dict_delete dictionary-all")
    sandbox.inject("drop_after")
    show("%dict_delete 5")
    show("%dict_purge", "no")
    show("%dict_purge", EOFError())
    show("%dict_panel").result.close()
    run(ip, "%config DictMagics.raise_on_failure = True")
    run(ip, "%xmode Verbose")  # tracebacks that print local variables
    try:
        sandbox.fail_next(1, status=500, method="DELETE")
        assert type(show("%dict_delete 6").error) is DeletionFailedError
        sandbox.fail_next(1, status=500, method="DELETE")
        assert type(show("%dict_purge --yes").error) is DeletionFailedError
    finally:
        run(ip, "%xmode Context")
    show("%dict_purge", "delete-all")
    show("%dict_logout -p two")
    with monkeypatch.context() as env:
        for name, value in sandbox.env().items():
            env.setenv(name, value)
        previous = keyring.get_keyring()
        keyring.set_keyring(fail.Keyring())
        try:
            show("%dict_status")
            show("%dict_delete 7")
            show("%dict_login -p other")
        finally:
            keyring.set_keyring(previous)

    assert len(seen) == 20 and all(seen)
    leaks = [text for text in seen if secret in text]
    assert leaks == []
    assert any("Traceback" in text and "DeletionFailedError" in text for text in seen)
    assert any("deleted every entry" in text for text in seen)
    assert any("credentials refused (HTTP 401)" in text for text in seen)


def test_the_auth_setting_picks_token_auth(ip: Any, env_creds: SandboxServer) -> None:
    ip.run_line_magic("config", 'DictMagics.auth = "token"')
    assert run(ip, "%dict_delete 1 2").result.ok and env_creds.tokens_issued == 1
    assert run(ip, "%dict_delete 3").result.ok and env_creds.tokens_issued == 1  # kept
    refused = run(ip, '%config DictMagics.auth = "password"')
    assert refused.stderr.startswith(
        "UsageError: DictMagics.auth must be 'signature' or 'token', not 'password'."
    ), refused.stderr
    ip.run_line_magic("config", 'DictMagics.auth = "signature"')
    assert run(ip, "%dict_delete 4").result.ok and env_creds.tokens_issued == 1
    assert "signature" in env_creds.requests[-1].headers


def test_delete_results_end_with_the_snapshot_and_the_magic_that_puts_them_back(
    ip: Any, env_creds: SandboxServer
) -> None:
    # Sync and purge say where their snapshot is; a delete said nothing of how to undo it.
    one = run(ip, "%dict_delete 42").result
    assert isinstance(one, DeleteResult) and one.ok and one.snapshot
    text = str(one)
    assert text.endswith(f"Snapshot kept at {one.snapshot}: %dict_restore puts it back.")
    html = one._repr_html_()
    assert "%dict_restore puts it back" in html and one.snapshot in html
    batch = run(ip, "%dict_delete 1 2 99998").result
    assert isinstance(batch, BatchResult) and batch.snapshot
    assert str(batch).endswith(f"Snapshot kept at {batch.snapshot}: %dict_restore puts them back.")
    assert "%dict_restore puts them back" in batch._repr_html_()
    # Nothing deleted: nothing to undo, so no such line.
    none = run(ip, "%dict_delete 99998").result
    assert "Snapshot kept" not in str(none)
