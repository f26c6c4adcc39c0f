"""Shared fixtures: a real sandbox over loopback, an in-memory keyring, system-part gates."""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import keyring
import pytest
from IPython.utils.capture import capture_output
from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError

from dict_magics.sandbox import SandboxServer

pytest_plugins = ["pytester"]

# Before any fixture of any scope (a module-scoped one runs before the per-test fixtures below),
# and for every subprocess a test starts: the data folder is a private temporary one, never the
# user's own. Each test then gets a fresh one of its own (``_clean_env``).
_SESSION_HOME = tempfile.mkdtemp(prefix="dict-magics-test-home-")
os.environ["DICT_MAGICS_HOME"] = _SESSION_HOME
atexit.register(shutil.rmtree, _SESSION_HOME, ignore_errors=True)

# Ctrl-C as a terminal delivers it, even when the suite was started with SIGINT ignored (under
# ``nohup``, or by a CI runner): Python then installs no KeyboardInterrupt handler, and every
# child process would inherit "ignored". The Ctrl-C tests need the usual one, here and in the
# processes they start (a Python handler becomes the default one in a child, which Python then
# replaces with its own).
signal.signal(signal.SIGINT, signal.default_int_handler)

REQUIRE_ENV = "DICT_MAGICS_REQUIRE_SYSTEM_TESTS"
SANDBOX_SECRET = re.compile(r"sandbox-secret-[A-Za-z0-9_-]{8,}")


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
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No test sees the developer's own DICT_MAGICS_* settings or writes to their data folder."""
    for var in (
        "DICT_MAGICS_BASE_URL",
        "DICT_MAGICS_ACCESS_KEY",
        "DICT_MAGICS_SECRET_KEY",
        "DICT_MAGICS_PROFILE",
        "DICT_MAGICS_AUTH",
        "DICT_MAGICS_LISTING_MAX_AGE",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DICT_MAGICS_HOME", str(tmp_path_factory.mktemp("dict-magics-home")))
    # A sandbox on a port an earlier test used must not meet that test's cached listing.
    from dict_magics.operations.listing import CACHE

    CACHE.forget()


def point_at(monkeypatch: pytest.MonkeyPatch, server: SandboxServer) -> SandboxServer:
    """Point this test's ``DICT_MAGICS_*`` variables at ``server``."""
    for name, value in server.env().items():
        monkeypatch.setenv(name, value)
    return server


def run_cell(ip: Any, cell: str) -> tuple[Any, str, str]:
    """Run ``cell`` in the real shell: (its value, stdout, stderr); an error in it is raised."""
    with capture_output() as cap:
        result = ip.run_cell(cell)
    if result.error_in_exec is not None:
        raise result.error_in_exec
    return result.result, cap.stdout, cap.stderr


def run_cli(server: SandboxServer, *args: str, text: bool = True) -> subprocess.CompletedProcess:
    """``dict-magics ARGS`` in a real subprocess pointed at ``server``, with no stdin."""
    return subprocess.run(
        [sys.executable, "-m", "dict_magics", *args],
        capture_output=True,
        env={**os.environ, **server.env()},
        stdin=subprocess.DEVNULL,
        timeout=120,
        **({"text": True, "encoding": "utf-8"} if text else {}),
    )


@pytest.fixture
def env_creds(monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer) -> SandboxServer:
    """The sandbox, with the environment's credentials pointing at it."""
    return point_at(monkeypatch, sandbox)


@pytest.fixture
def sandbox() -> Iterator[SandboxServer]:
    """A fresh sandbox with entries "1".."100" on 127.0.0.1."""
    with SandboxServer(100) as server:
        yield server


@pytest.fixture(scope="session")
def _shell():
    """One real IPython InteractiveShell for the whole run (IPython allows one per process)."""
    from IPython.testing.globalipapp import start_ipython

    shell = start_ipython()
    # Render every mime type, as a notebook front end would (a terminal asks for text only).
    shell.display_formatter.active_types = shell.display_formatter.format_types
    _record_displays(shell)
    return shell


@pytest.fixture
def ip(_shell, memory_keyring: MemoryKeyring):
    """The real shell with ``dict_magics`` freshly loaded and no ``%config`` left from others."""
    import dict_magics

    _shell.config.pop("DictMagics", None)
    dict_magics.load_ipython_extension(_shell)
    yield _shell
    _shell.config.pop("DictMagics", None)


# -- secret hygiene: every test's output, logs and displays are searched for secrets ----------
#
# Known secrets are: any sandbox secret (they share a recognisable prefix), the secret key in
# the environment, every secret item in the in-memory keyring, and values a test registers with
# the ``known_secret`` fixture. A test that deliberately shows a secret says so with
# ``@pytest.mark.shows_secret``.

_registered: set[str] = set()
_displayed: dict[str, list[str]] = {}


@pytest.fixture
def known_secret():
    """Register a secret value the hygiene check must not find in this test's output."""
    added: list[str] = []

    def register(value: str) -> str:
        added.append(value)
        _registered.add(value)
        return value

    yield register
    _registered.difference_update(added)


def _current_secrets() -> set[str]:
    found = set(_registered)
    env_secret = os.environ.get("DICT_MAGICS_SECRET_KEY", "")
    if len(env_secret) >= 6:
        found.add(env_secret)
    backend = keyring.get_keyring()
    if isinstance(backend, MemoryKeyring):
        found.update(
            v
            for (_, user), v in backend.items.items()
            if user.endswith(":secret_key") and len(v) >= 6
        )
    return found


def _leaks(texts: list[str], secrets: set[str]) -> list[str]:
    hits = []
    for text in texts:
        hits.extend(m.group(0)[:24] + "..." for m in SANDBOX_SECRET.finditer(text))
        hits.extend(f"a known secret ({len(s)} chars)" for s in secrets if s in text)
    return hits


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    _displayed[item.nodeid] = []
    yield
    item.stash[_SECRETS_KEY] = _current_secrets()


_SECRETS_KEY = pytest.StashKey[set]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if call.when != "call" or item.get_closest_marker("shows_secret"):
        return
    texts = [content for _, content in report.sections]
    texts.extend(_displayed.pop(item.nodeid, []))
    leaks = _leaks(texts, item.stash.get(_SECRETS_KEY, set()))
    if leaks:
        report.outcome = "failed"
        report.longrepr = (
            "secret hygiene: a secret appeared in this test's output, logs or displays: "
            + ", ".join(sorted(set(leaks)))
        )


def _record_displays(shell) -> None:
    """Keep every mime bundle the shell formats, for the hygiene check."""
    formatter = shell.display_formatter
    if getattr(formatter, "_dict_magics_recording", False):
        return
    original = formatter.format

    def format_and_record(obj, include=None, exclude=None):
        data, metadata = original(obj, include=include, exclude=exclude)
        for bucket in _displayed.values():
            bucket.extend(str(v) for v in data.values())
        return data, metadata

    formatter.format = format_and_record
    formatter._dict_magics_recording = True


def paired_audit(path: Any = None) -> list[dict[str, Any]]:
    """The audit log's requests, one dict each as its last line says (in the order they ended);
    a request with only its "sending" line reads as unknown, as ``read_audit`` has it."""
    from dict_magics.operations.audit import audit_path

    path = Path(path) if path is not None else audit_path()
    if not path.exists():
        return []
    last: dict[str, dict[str, Any]] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines()):
        line = json.loads(raw)
        key = line.get("request") or f"line {number}"
        if line["outcome"] == "sending":
            line = {**line, "outcome": "unknown"}
        last.pop(key, None)
        last[key] = line
    return list(last.values())
