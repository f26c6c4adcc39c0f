"""The ``dict-magics`` command, run as a real subprocess against the sandbox over loopback.

Credentials come from the DICT_MAGICS_* variables or from a real keyring backend shared with
the child through a file (``tests/file_keyring.py``); terminals are real pseudo-terminals.
Every run checks that no secret appears in anything the command printed.
"""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from file_keyring import ENV_FILE, read_items

from dict_magics import __version__
from dict_magics.sandbox import SandboxServer

CLI = [sys.executable, "-m", "dict_magics"]
TESTS_DIR = Path(__file__).resolve().parent
FAIL_BACKEND = "keyring.backends.fail.Keyring"
FILE_BACKEND = "file_keyring.FileKeyring"
RESULT_KEYS = {
    "status",
    "ok",
    "outcome",
    "entry_id",
    "entry",
    "http_status",
    "reason",
    "cause",
    "code",
    "vendor_message",
    "outcome_unknown",
    "verified",
    "attempts",
    "elapsed",
    "snapshot",
}
BATCH_KEYS = {"results", "ok", "succeeded", "failed", "unknown", "interrupted", "snapshot"}
BATCH_KEYS |= {"warnings", "deleted", "absent"}
COMMANDS = [
    "login",
    "logout",
    "status",
    "profiles",
    "list",
    "delete",
    "purge",
    "restore",
    "snapshots",
    "log",
    "lint",
    "check",
    "sandbox",
    "demo",
]
CLOSED_PORT_URL = "http://127.0.0.1:9"  # discard port: nothing listens, connections are refused


class Cli:
    """Runs the command with a clean environment and checks its output never holds a secret."""

    def __init__(self, sandbox: SandboxServer, tmp_path: Path) -> None:
        self.sandbox = sandbox
        self.keyring_file = tmp_path / "keyring.json"
        self.secrets = [sandbox.secret_key]
        home = tmp_path / "home"
        home.mkdir()
        # DICT_MAGICS_HOME (set per test by conftest) passes through: the child keeps its
        # snapshots and audit log where this test can read them.
        base = {
            k: v
            for k, v in os.environ.items()
            if (not k.startswith("DICT_MAGICS_") or k == "DICT_MAGICS_HOME")
            and k != "PYTHON_KEYRING_BACKEND"
        }
        pythonpath = os.pathsep.join(filter(None, [str(TESTS_DIR), base.get("PYTHONPATH")]))
        base.update(
            HOME=str(home),
            XDG_CONFIG_HOME=str(home / ".config"),
            XDG_DATA_HOME=str(home / ".local" / "share"),
            PYTHONPATH=pythonpath,
            PYTHONIOENCODING="utf-8",
            PYTHON_KEYRING_BACKEND=FAIL_BACKEND,
        )
        base[ENV_FILE] = str(self.keyring_file)
        self.base_env = base

    def env(self, *, credentials: bool = True, keyring: bool = False, **extra: str) -> dict:
        """The child's environment: sandbox credentials in DICT_MAGICS_* unless told not to."""
        env = dict(self.base_env)
        if credentials:
            env.update(self.sandbox.env())
        if keyring:
            env["PYTHON_KEYRING_BACKEND"] = FILE_BACKEND
        env.update(extra)
        return env

    def check_no_secret(self, *texts: str) -> None:
        for text in texts:
            for secret in self.secrets:
                assert secret not in text

    def run(self, *args: str, input: str | None = None, env: dict | None = None, **kw):
        proc = subprocess.run(
            [*CLI, *args],
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            encoding="utf-8",
            env=env if env is not None else self.env(**kw),
            timeout=120,
        )
        self.check_no_secret(proc.stdout, proc.stderr)
        return proc


class Terminal:
    """A child process on a real pseudo-terminal (stdin and/or stderr), as a user's shell has.

    ``start_new_session`` keeps the child away from the developer's own terminal: getpass then
    uses the pseudo-terminal on stdin, with echo switched off.
    """

    def __init__(self, args: list[str], env: dict, *, stdin_tty: bool = True) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [*CLI, *args],
            stdin=slave if stdin_tty else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=slave,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self._screen = bytearray()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # EIO: the child closed the terminal
                return
            if not chunk:
                return
            with self._lock:
                self._screen += chunk

    @property
    def screen(self) -> str:
        with self._lock:
            return self._screen.decode("utf-8", errors="replace")

    def wait_for(self, text: str, limit: float = 60.0) -> None:
        """Wait (a safety limit, not a timing assertion) until ``text`` is on the terminal."""
        deadline = time.monotonic() + limit
        while text not in self.screen:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared; terminal shows {self.screen!r}")
            time.sleep(0.02)

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\r")

    def finish(self) -> tuple[int, str, str]:
        stdout, _ = self.proc.communicate(timeout=120)
        self._reader.join(timeout=10)
        os.close(self.master)
        return self.proc.returncode, stdout.decode(), self.screen


@pytest.fixture
def cli(sandbox: SandboxServer, tmp_path: Path) -> Cli:
    return Cli(sandbox, tmp_path)


def deletes(sandbox: SandboxServer) -> list[tuple[str, str | None, int | None]]:
    """The DELETE requests (the listing that takes a snapshot first is left out)."""
    return [
        (r.operation, r.entry_id, r.http_status)
        for r in sandbox.requests
        if r.method == "DELETE" and r.code != 40005  # a refused nonce is sent again at once
    ]


# -- help and usage ------------------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(cli: Cli, command: str) -> None:
    proc = cli.run(command, "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage:")
    if command == "sandbox":
        assert "--port" in proc.stdout and "127.0.0.1" in proc.stdout
    else:
        assert f"dict-magics {command}" in proc.stdout
    assert cli.sandbox.requests == []


def test_help_documents_exit_codes_and_stdin_secret(cli: Cli) -> None:
    top = cli.run("--help").stdout
    assert all(c in top for c in COMMANDS)
    assert "0 what was asked for holds" in top and "2 usage error" in top and "130" in top
    login = " ".join(cli.run("login", "--help").stdout.split())
    assert "secret key is read from the first line of stdin" in login
    assert "--secret" not in login
    assert "--yes" in cli.run("purge", "--help").stdout


def test_console_script_is_installed(cli: Cli) -> None:
    script = Path(sys.executable).with_name("dict-magics")
    assert script.exists(), "the dict-magics console script is not installed"
    proc = subprocess.run(
        [str(script), "--version"], capture_output=True, text=True, env=cli.env(), timeout=60
    )
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"dict-magics {__version__}"


def test_no_command_or_unknown_option_is_a_usage_error(cli: Cli) -> None:
    proc = cli.run()
    assert proc.returncode == 2 and "usage: dict-magics" in proc.stderr
    proc = cli.run("delete", "--bogus", "1")
    assert proc.returncode == 2 and "unrecognized arguments: --bogus" in proc.stderr
    proc = cli.run("delete")
    assert proc.returncode == 2 and "no entry ids given" in proc.stderr
    proc = cli.run("delete", "-w", "0", "1", "2")
    assert proc.returncode == 2 and "--workers" in proc.stderr
    proc = cli.run("delete", "--file", str(cli.keyring_file.parent / "no-such-file.txt"))
    assert proc.returncode == 2 and "cannot read ids from" in proc.stderr
    proc = cli.run("status", "--profile", "a:b")
    assert proc.returncode == 2 and "profile name 'a:b' is not valid" in proc.stderr
    assert cli.sandbox.requests == []
    assert "1" in cli.sandbox.entries


# -- delete --------------------------------------------------------------------------------


def test_delete_one_entry(cli: Cli) -> None:
    entry = cli.sandbox.entry("7")
    proc = cli.run("delete", "7")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"\u2713 deleted 7: {entry.describe()} (HTTP 200, 1 attempt")
    assert "7" not in cli.sandbox.entries and "8" in cli.sandbox.entries
    assert deletes(cli.sandbox) == [("delete", "7", 200)]
    assert cli.sandbox.requests[-1].path == "/api/v1/dictionary/7"


def test_delete_one_json_matches_the_sandbox(cli: Cli) -> None:
    proc = cli.run("--json", "delete", "12")
    assert proc.returncode == 0
    batch = json.loads(proc.stdout)
    assert set(batch) == BATCH_KEYS and len(batch["results"]) == 1
    data = batch["results"][0]
    assert set(data) == RESULT_KEYS
    assert data["status"] == "success" and data["ok"] is True
    assert data["entry_id"] == "12" and data["http_status"] == 200
    assert data["reason"] is None and data["outcome_unknown"] is False
    assert data["attempts"] == 1 and data["elapsed"] >= 0
    assert "12" not in cli.sandbox.entries

    again = cli.run("delete", "12", "--json")
    assert again.returncode == 0  # absent: nothing to delete is no failure (issue 22, item 17)
    gone = json.loads(again.stdout)["results"][0]
    assert gone["outcome"] == "absent" and gone["attempts"] == 0 and gone["http_status"] is None
    assert "the listing taken just before does not hold it" in gone["reason"]
    # Absent is not a failure, and every field says so (issue 34, item 8).
    assert gone["ok"] is True and gone["status"] == gone["cause"] == "absent"
    assert json.loads(again.stdout)["ok"] is True
    streamed = cli.run("delete", "12", "--jsonl")
    assert json.loads(streamed.stdout.splitlines()[0])["ok"] is True


def test_delete_several_reports_each_failure_and_exits_1(cli: Cli) -> None:
    # Without a snapshot there is no listing to show 99999 absent: it is sent, and refused.
    proc = cli.run("delete", "5,6", "7 99999", "--json", "--workers", "3", "--no-snapshot")
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert set(data) == BATCH_KEYS
    assert [r["entry_id"] for r in data["results"]] == ["5", "6", "7", "99999"]
    assert all(set(r) == RESULT_KEYS for r in data["results"])
    assert (data["ok"], data["succeeded"], data["failed"]) == (False, 3, 1)
    assert [r["ok"] for r in data["results"]] == [True, True, True, False]
    assert data["results"][3]["http_status"] == 404
    assert not {"5", "6", "7"} & set(cli.sandbox.entries)
    expected = [("delete", "5", 200), ("delete", "6", 200), ("delete", "7", 200)]
    assert sorted(deletes(cli.sandbox)) == sorted([*expected, ("delete", "99999", 404)])

    text = cli.run("delete", "8", "99999", "--no-snapshot")
    assert text.returncode == 1
    lines = text.stdout.splitlines()
    assert lines[0] == "\u2717 deleted 1 of 2 entries; 1 not deleted"
    assert lines[1] == "  \u2713 entry '8'"  # what was deleted is named
    assert lines[2] == "  \u2717 1 not deleted: refused by the service"
    assert lines[3].startswith("    \u2717 entry '99999' not deleted \u2014 ")
    assert "no such entry (HTTP 404, 1 attempt, " in lines[3]


def test_delete_reads_ids_from_stdin(cli: Cli) -> None:
    proc = cli.run("delete", "--file", "-", "30", input="31\n32, 33\n\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("\u2713 deleted 4 of 4 entries")
    assert not {"30", "31", "32", "33"} & set(cli.sandbox.entries)


@pytest.mark.parametrize("bad", ["dictionary-all", "Dictionary-ALL", "..", "."])
def test_bad_id_is_refused_before_any_request(cli: Cli, bad: str) -> None:
    proc = cli.run("delete", "1", bad, "2")
    assert proc.returncode == 2
    assert proc.stderr.startswith("dict-magics: error:") and "not an entry id" in proc.stderr
    assert proc.stdout == ""
    assert cli.sandbox.requests == []
    assert len(cli.sandbox.entries) == 100


def test_missing_credentials_is_a_usage_error(cli: Cli) -> None:
    proc = cli.run("delete", "1", credentials=False)
    assert proc.returncode == 2
    assert "no keyring backend is available" in proc.stderr
    assert "DICT_MAGICS_SECRET_KEY" in proc.stderr
    with_keyring = cli.run("--json", "delete", "1", credentials=False, keyring=True)
    assert with_keyring.returncode == 2
    assert "dict-magics login -p default" in with_keyring.stderr
    assert json.loads(with_keyring.stdout)["error"] in with_keyring.stderr
    assert cli.sandbox.requests == []


def test_service_failure_exits_1_with_the_reason(cli: Cli) -> None:
    cli.sandbox.fail_next(2, status=503, method="DELETE")
    proc = cli.run("delete", "40", "--max-retries", "1")
    assert proc.returncode == 1
    assert proc.stdout.startswith("\u2717 40: ") and "HTTP 503" in proc.stdout
    assert "gave up after 2 attempts" in proc.stdout
    assert "40" in cli.sandbox.entries
    assert deletes(cli.sandbox) == [("delete", "40", None)] * 2  # both met the fault


def test_no_answer_in_time_is_reported_as_unknown(cli: Cli) -> None:
    cli.sandbox.inject("hang", delay=5, method="DELETE")
    cli.sandbox.listing = False  # no listing can settle it afterwards
    proc = cli.run("delete", "41", "--timeout", "0.5", "--max-retries", "0", "--json")
    assert proc.returncode == 1
    data = json.loads(proc.stdout)["results"][0]
    assert data["outcome_unknown"] is True and data["ok"] is False
    assert "may have reached the service" in data["reason"]


def test_base_url_option_overrides_the_environment(cli: Cli) -> None:
    env = cli.env(DICT_MAGICS_BASE_URL=CLOSED_PORT_URL)
    proc = cli.run("delete", "50", "--base-url", cli.sandbox.url, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "50" not in cli.sandbox.entries
    status = json.loads(cli.run("status", "--json", "--base-url", cli.sandbox.url, env=env).stdout)
    assert status["base_url"] == cli.sandbox.url and status["sources"]["base_url"] == "config"


def test_plain_http_to_a_remote_host_is_refused(cli: Cli) -> None:
    proc = cli.run("delete", "1", "--base-url", "http://example.com")
    assert proc.returncode == 2 and "refusing plain http" in proc.stderr
    assert cli.sandbox.requests == []


def test_progress_bar_on_a_terminal_then_summary(cli: Cli) -> None:
    ids = [str(i) for i in range(1, 61)]
    term = Terminal(["delete", *ids, "99999", "--no-snapshot"], cli.env(), stdin_tty=False)
    code, stdout, screen = term.finish()
    cli.check_no_secret(stdout, screen)
    assert code == 1
    host = cli.sandbox.url.removeprefix("http://")
    assert f"\rDeleting 61 entries at {host} [{'#' * 30}] 61/61 (1 failed)" in screen, screen
    assert stdout.startswith("\u2717 deleted 60 of 61 entries; 1 not deleted")
    assert len(cli.sandbox.entries) == 40

    piped = cli.run("delete", "61", "62")
    assert piped.returncode == 0 and piped.stderr == ""  # no bar, and done before a log line


# -- purge ---------------------------------------------------------------------------------


def test_purge_without_yes_is_refused_when_stdin_is_not_a_terminal(cli: Cli) -> None:
    for stdin in (None, "delete-all\n"):
        proc = cli.run("purge", input=stdin)
        assert proc.returncode == 2
        assert "--yes" in proc.stderr and "Nothing was deleted" in proc.stderr
        assert proc.stdout == ""
    assert deletes(cli.sandbox) == []
    assert len(cli.sandbox.entries) == 100


def test_purge_with_yes(cli: Cli) -> None:
    proc = cli.run("purge", "--yes", "--json")
    assert proc.returncode == 0
    batch = json.loads(proc.stdout)
    assert set(batch) == BATCH_KEYS and batch["snapshot"]
    [data] = batch["results"]
    assert set(data) == RESULT_KEYS
    assert data["ok"] is True and data["entry_id"] is None and data["http_status"] == 200
    assert cli.sandbox.entries == {}
    assert [(r.method, r.path) for r in cli.sandbox.requests] == [
        ("GET", "/api/v1/dictionary"),  # the snapshot, before the first deleting request
        ("DELETE", "/api/v1/dictionary/dictionary-all"),
        ("GET", "/api/v1/dictionary"),  # anything added meanwhile is shown
    ]
    assert deletes(cli.sandbox) == [("purge", None, 200)]


def test_purge_on_a_terminal_needs_the_typed_word(cli: Cli) -> None:
    host = cli.sandbox.url.removeprefix("http://")
    wrong = Terminal(["purge"], cli.env())
    wrong.wait_for("to confirm, anything else cancels: ")
    assert f"This deletes all 100 entries on {host} (profile 'default')" in wrong.screen
    assert "(removed if you cancel; `dict-magics restore` puts them back)" in wrong.screen
    assert "%dict_" not in wrong.screen
    wrong.type("yes")
    code, stdout, screen = wrong.finish()
    assert code == 2 and "purge not confirmed: nothing was deleted" in screen and stdout == ""
    assert deletes(cli.sandbox) == [] and len(cli.sandbox.entries) == 100

    right = Terminal(["purge"], cli.env())
    right.wait_for(f"Type delete-all (or {host}) to confirm")
    right.type("delete-all")
    code, stdout, screen = right.finish()
    cli.check_no_secret(stdout, screen)
    assert code == 0, screen
    assert stdout.startswith("\u2713 deleted every entry (100 entries listed just before, kept)")
    assert cli.sandbox.entries == {}
    assert deletes(cli.sandbox) == [("purge", None, 200)]


def test_ctrl_c_at_the_purge_question_removes_the_snapshot_it_announced(cli: Cli) -> None:
    """The warning says the snapshot is "removed if you cancel": Ctrl-C at the question is a
    cancel too (nothing is sent), so the copy goes as it does for a wrong word."""
    folder = Path(cli.env()["DICT_MAGICS_HOME"]) / "snapshots"
    asked = Terminal(["purge"], cli.env())
    asked.wait_for("to confirm, anything else cancels: ")
    assert len(list(folder.glob("*-purge-*.json"))) == 1  # written before the question
    asked.proc.send_signal(signal.SIGINT)
    code, _, screen = asked.finish()
    assert code == 130 and "interrupted" in screen
    assert list(folder.glob("*-purge-*.json")) == []
    assert deletes(cli.sandbox) == [] and len(cli.sandbox.entries) == 100


# -- status, login, logout -----------------------------------------------------------------


def test_status_from_the_environment(cli: Cli) -> None:
    proc = cli.run("status")
    assert proc.returncode == 0
    assert proc.stdout.startswith("\u2713 dict-magics profile 'default'")
    assert f"base URL:        {cli.sandbox.url} (from DICT_MAGICS_BASE_URL)" in proc.stdout
    assert "access key:      sand\u2026ey (from DICT_MAGICS_ACCESS_KEY)" in proc.stdout
    assert "environment variable DICT_MAGICS_SECRET_KEY" in proc.stdout
    assert cli.sandbox.access_key not in proc.stdout
    data = json.loads(cli.run("status", "--json").stdout)
    assert data["ready"] is True and data["profile"] == "default"
    assert data["base_url"] == cli.sandbox.url and data["access_key"] == "sand\u2026ey"
    assert data["sources"] == dict.fromkeys(["base_url", "access_key", "secret_key"], "env")
    assert data["keyring_backend"] == FAIL_BACKEND and data["keyring_available"] is False
    assert cli.sandbox.requests == []


def test_login_from_stdin_then_every_command_uses_the_keyring_profile(cli: Cli) -> None:
    box = cli.sandbox
    login = cli.run(
        "login",
        "--profile",
        "work",
        "--base-url",
        box.url + "/api/v1/",
        "--access-key",
        box.access_key,
        input=box.secret_key + "\n",
        credentials=False,
        keyring=True,
    )
    assert login.returncode == 0, login.stderr
    assert login.stdout.startswith(f"Stored profile 'work' in the keyring ({FILE_BACKEND})")
    assert read_items(cli.keyring_file) == {
        ("dict-magics", "work:base_url"): box.url,
        ("dict-magics", "work:access_key"): box.access_key,
        ("dict-magics", "work:secret_key"): box.secret_key,
        ("dict-magics", "profiles"): '["work"]',
    }

    status = cli.run("status", "-p", "work", credentials=False, keyring=True)
    assert status.returncode == 0
    assert f"{box.url} (from keyring)" in status.stdout
    assert f"in the keyring backend {FILE_BACKEND}" in status.stdout

    use_keyring = {"credentials": False, "keyring": True}
    assert cli.run("delete", "-p", "work", "20", **use_keyring).returncode == 0
    assert cli.run("--profile", "work", "delete", "21", **use_keyring).returncode == 0
    assert not {"20", "21"} & set(box.entries)

    logout = cli.run("logout", "--profile", "work", "--json", credentials=False, keyring=True)
    assert logout.returncode == 0
    assert json.loads(logout.stdout) == {
        "profile": "work",
        "removed": ["base_url", "access_key", "secret_key"],
    }
    assert read_items(cli.keyring_file) == {}
    gone = cli.run("status", "-p", "work", credentials=False, keyring=True)
    assert gone.returncode == 2 and "problem:" in gone.stdout
    again = cli.run("logout", "-p", "work", credentials=False, keyring=True)
    assert again.returncode == 0 and "had nothing stored in the keyring" in again.stdout


def test_login_on_a_terminal_asks_without_echo(cli: Cli) -> None:
    secret = "typed-secret-\u00e9-1234"
    cli.secrets.append(secret)
    term = Terminal(["login"], cli.env(credentials=False, keyring=True))
    term.wait_for("Base URL")
    term.type(cli.sandbox.url)
    host = cli.sandbox.url.removeprefix("http://")
    term.wait_for(f"Access key for {host}: ")
    term.type("typed-access-key")
    term.wait_for(f"Secret key for {host} (hidden): ")
    term.type(secret)
    code, stdout, screen = term.finish()
    cli.check_no_secret(stdout, screen)
    assert code == 0, screen
    assert "typed-access-key" not in screen + stdout  # asked with getpass too
    assert "access key type\u2026ey" in stdout
    assert read_items(cli.keyring_file)[("dict-magics", "default:secret_key")] == secret


def test_login_without_a_terminal_needs_the_options(cli: Cli) -> None:
    proc = cli.run(
        "login", "--base-url", cli.sandbox.url, input="s3cr3t\n", credentials=False, keyring=True
    )
    assert proc.returncode == 2 and "--access-key" in proc.stderr
    empty = cli.run(
        "login",
        "--base-url",
        cli.sandbox.url,
        "--access-key",
        "ak",
        input="",
        credentials=False,
        keyring=True,
    )
    assert empty.returncode == 2 and "no secret key given" in empty.stderr
    assert read_items(cli.keyring_file) == {}


def test_login_refuses_plain_http_to_a_remote_host(cli: Cli) -> None:
    proc = cli.run(
        "login",
        "--base-url",
        "http://dictionary.example.com",
        "--access-key",
        "ak",
        input="s3cr3t\n",
        credentials=False,
        keyring=True,
    )
    assert proc.returncode == 2 and "refusing plain http" in proc.stderr
    assert read_items(cli.keyring_file) == {}


def test_login_without_a_keyring_says_how_to_work_meanwhile(cli: Cli) -> None:
    proc = cli.run(
        "login",
        "--base-url",
        cli.sandbox.url,
        "--access-key",
        "ak",
        input="s3cr3t\n",
        credentials=False,
    )
    assert proc.returncode == 2
    assert "no keyring backend is available" in proc.stderr
    assert "DICT_MAGICS_ACCESS_KEY" in proc.stderr
    assert "s3cr3t" not in proc.stderr + proc.stdout


# -- sandbox -------------------------------------------------------------------------------


def test_sandbox_command_serves_until_interrupted(cli: Cli) -> None:
    env = cli.env(credentials=False)
    proc = subprocess.Popen(
        [*CLI, "sandbox", "--port", "0", "--entries", "5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("Press Ctrl-C"):
                break
        exports = dict(re.findall(r"export (DICT_MAGICS_\w+)=(\S+)", "".join(lines)))
        assert set(exports) == {
            "DICT_MAGICS_BASE_URL",
            "DICT_MAGICS_ACCESS_KEY",
            "DICT_MAGICS_SECRET_KEY",
            "DICT_MAGICS_HOME",
        }
        assert exports["DICT_MAGICS_BASE_URL"].startswith("http://127.0.0.1:")
        home = Path(exports["DICT_MAGICS_HOME"])
        assert home.is_dir() and home != Path(env["DICT_MAGICS_HOME"])
        cli.secrets.append(exports["DICT_MAGICS_SECRET_KEY"])
        deleted = cli.run("delete", "3", "--json", env={**env, **exports})
        assert deleted.returncode == 0 and json.loads(deleted.stdout)["ok"] is True
        missing = cli.run("delete", "6", env={**env, **exports})
        assert missing.returncode == 0  # the sandbox holds only entries 1..5: 6 is absent
        assert "absent" in missing.stdout
        # Following the printed exports, the delete's snapshot lands in the sandbox's folder.
        assert list((home / "snapshots").glob("*.json"))
        assert not list(Path(env["DICT_MAGICS_HOME"]).glob("snapshots/*.json"))
    finally:
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert "Stopped." in rest and not home.exists()  # removed with the sandbox


# -- usage problems: one line, exit 2, nothing sent ------------------------------------------


def close_stdin() -> None:
    """Run in the child before exec: the command starts with no stdin at all (``<&-``)."""
    os.close(0)


def one_line_usage_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("dict-magics: error: ") and proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    return proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["purge"], "a typed confirmation is needed, but stdin is closed. Nothing was deleted."),
        (["delete", "-f", "-"], "cannot read ids from stdin: it is closed. Nothing was sent."),
        (
            ["login", "--base-url", "https://api.example.com", "--access-key", "AK"],
            "cannot read the secret key from stdin: it is closed. Nothing was stored.",
        ),
    ],
)
def test_a_closed_stdin_is_a_usage_error(cli: Cli, args: list[str], message: str) -> None:
    proc = subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        env=cli.env(),
        timeout=120,
        preexec_fn=close_stdin,
    )
    assert message in one_line_usage_error(proc)
    assert deletes(cli.sandbox) == [] and len(cli.sandbox.entries) == 100


def test_an_id_file_that_is_not_utf8_is_a_usage_error(cli: Cli, tmp_path: Path) -> None:
    ids = tmp_path / "ids.txt"
    ids.write_bytes(b"1\n2\n\xff\xfe3\n")
    proc = cli.run("delete", "-f", str(ids))
    assert "is not UTF-8 text (byte 0xff on line 3)" in one_line_usage_error(proc)
    piped = subprocess.run(
        [*CLI, "delete", "-f", "-"], input=b"4\n\x80\n", capture_output=True, env=cli.env()
    )
    assert piped.returncode == 2 and b"cannot read ids from stdin" in piped.stderr
    assert cli.sandbox.requests == []


def test_an_id_file_is_one_id_a_line_with_comments_and_a_bom(cli: Cli, tmp_path: Path) -> None:
    ids = tmp_path / "ids.txt"
    ids.write_bytes("\ufeff10\n# old entries\n\n11  # checked\r\n12\n".encode())
    proc = cli.run("delete", "--json", "-f", str(ids))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [r["entry_id"] for r in json.loads(proc.stdout)["results"]] == ["10", "11", "12"]
    assert sorted(i for _, i, _ in deletes(cli.sandbox)) == ["10", "11", "12"]


@pytest.mark.parametrize("empty", ["", " "])
def test_an_empty_id_given_explicitly_is_refused(cli: Cli, empty: str) -> None:
    proc = cli.run("delete", "5", empty)
    assert "an entry id cannot be empty" in one_line_usage_error(proc)
    assert cli.sandbox.requests == [] and "5" in cli.sandbox.entries


def test_the_purge_segment_refusal_names_this_command(cli: Cli) -> None:
    stderr = one_line_usage_error(cli.run("delete", "3", "dictionary-all"))
    assert "Use `dict-magics purge` if you mean to delete every entry." in stderr
    assert "%dict_purge" not in stderr
    assert cli.sandbox.requests == []


def test_one_distinct_id_is_one_entry_on_the_progress_bar(cli: Cli) -> None:
    term = Terminal(["delete", "7", "7"], cli.env(), stdin_tty=False)
    code, _, screen = term.finish()
    assert code == 0, screen
    host = cli.sandbox.url.removeprefix("http://")
    assert f"\rDeleting 1 entry at {host} " in screen and "entries at" not in screen
    assert deletes(cli.sandbox) == [("delete", "7", 200)]


# -- Ctrl-C ----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["text", "json", "jsonl"])
def test_ctrl_c_prints_what_was_done_then_exits_130(cli: Cli, mode: str) -> None:
    # The first DELETE is acted on, then its answer is held while we press Ctrl-C.
    cli.sandbox.inject("hang", delay=1.5, method="DELETE")
    ids = ["1", "2", "3", "4", "5"]
    options = [] if mode == "text" else [f"--{mode}"]
    proc = subprocess.Popen(
        [*CLI, "delete", "-w", "1", *options, *ids],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli.env(),
    )
    deadline = time.monotonic() + 60  # a safety limit, not a timing assertion
    while "1" in cli.sandbox.entries and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    cli.check_no_secret(stdout, stderr)
    sent = [i for _, i, _ in deletes(cli.sandbox)]
    never = len(ids) - len(sent)
    assert proc.returncode == 130, stdout + stderr
    assert never >= 1 and sent == ids[: len(sent)]
    assert stderr.strip().splitlines()[-1] == f"dict-magics: interrupted: {never} not attempted"
    if mode == "json":
        data = json.loads(stdout)
        assert data["interrupted"] is True and [r["entry_id"] for r in data["results"]] == ids
        assert [r["attempts"] == 0 for r in data["results"]] == [False] * len(sent) + [True] * never
    elif mode == "jsonl":
        *results, last = [json.loads(line) for line in stdout.splitlines()]
        assert sorted(r["entry_id"] for r in results) == ids  # the unsent ones too, at the end
        assert [r["cause"] for r in results[len(sent) :]] == ["not_attempted"] * never
        assert last["summary"]["interrupted"] is True and last["summary"]["total"] == 5
    else:
        assert stdout.startswith(f"\u2717 deleted {len(sent)} of 5 entries")


def test_auth_token_on_the_command_line(cli: Cli, sandbox: SandboxServer) -> None:
    proc = cli.run("delete", "--auth", "token", "1", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    assert sandbox.tokens_issued == 1 and "1" not in sandbox.entries
    dictionary = [r for r in sandbox.requests if r.path != "/api/v1/token"]
    assert dictionary and not any("signature" in r.headers for r in dictionary)
    refused = cli.run("delete", "--auth", "password", "3")
    assert refused.returncode == 2 and "invalid choice: 'password'" in refused.stderr
    by_env = cli.run("delete", "3", env=cli.env(DICT_MAGICS_AUTH="token"))
    assert by_env.returncode == 0 and sandbox.tokens_issued == 2  # another process, one token
    bad_env = cli.run("delete", "4", env=cli.env(DICT_MAGICS_AUTH="password"))
    assert bad_env.returncode == 2 and "4" in sandbox.entries
    assert (
        "auth must be 'signature' or 'token', not $DICT_MAGICS_AUTH='password'." in bad_env.stderr
    ), bad_env.stderr


@pytest.mark.parametrize("command", [["list"], ["check", "-"], ["lint"]])
def test_json_of_a_listing_holding_a_lone_surrogate_is_written(command: list[str]) -> None:
    """A service may send ``\\ud800`` in a term (valid JSON, not valid UTF-8): ``--json`` writes
    it as a ``\\u`` escape instead of dying with UnicodeEncodeError, and reads back the same."""
    from rawserver import RawServer, answer

    listing = (
        b'{"status":"success","data":{"entries":['
        b'{"id":1,"fromLang":"en","fromText":"bad\\ud800x","toLang":"ja","toText":"a"},'
        b'{"id":2,"fromLang":"en","fromText":"ok","toLang":"ja","toText":"\\udfff"}]}}'
    )
    server = RawServer(lambda conn, req, n: conn.sendall(answer("200 OK", listing)))
    env = dict(
        os.environ,
        DICT_MAGICS_BASE_URL=server.url,
        DICT_MAGICS_ACCESS_KEY="k",
        DICT_MAGICS_SECRET_KEY="s",
    )
    try:
        out = subprocess.run(
            [sys.executable, "-m", "dict_magics", "--json", *command],
            input=b"ok here.",
            env=env,
            capture_output=True,
            timeout=120,
        )
    finally:
        server.close()
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    assert b"Traceback" not in out.stderr
    data = json.dumps(json.loads(out.stdout), ensure_ascii=False)
    assert ("\udfff" in data) if command[0] != "lint" else ("ud800" in data)


def test_delete_text_ends_with_the_snapshot_and_the_command_that_restores(cli: Cli) -> None:
    one = cli.run("delete", "42")
    assert one.returncode == 0, one.stderr
    last = one.stdout.strip().splitlines()[-1]
    assert last.startswith("  Snapshot kept at ") and last.endswith(
        ": `dict-magics restore` puts it back."
    )
    assert Path(last.split("Snapshot kept at ", 1)[1].split(": `dict-magics")[0]).is_file()
    several = cli.run("delete", "1", "2")
    assert several.stdout.rstrip().endswith("`dict-magics restore` puts them back.")
    shown = json.loads(cli.run("delete", "3", "4", "--json").stdout)
    assert set(shown) == BATCH_KEYS and Path(shown["snapshot"]).is_file()


def test_restore_dry_run_says_only_nothing_that_changes_the_dictionary_was_sent(
    cli: Cli, sandbox: SandboxServer
) -> None:
    # The dry run lists the dictionary (a request), so "nothing was sent" was untrue.
    assert cli.run("delete", "42").returncode == 0
    shown = cli.run("restore", "--dry-run")
    assert shown.returncode == 0, shown.stderr
    assert "(dry run: nothing that changes the dictionary was sent)" in shown.stdout
    assert "nothing was sent" not in shown.stdout
    assert sandbox.entry("42") is None
