"""``dict-magics`` in scripts and daily use: JSON shapes, JSON lines, progress in logs, the new
commands (list, restore, snapshots, log, profiles), ``status --check`` and ``--retry-failed``.

Every run is a real subprocess against the sandbox over loopback (``Cli`` from test_cli: no
secret may appear in anything it prints); the child keeps its snapshots and audit log in this
test's ``DICT_MAGICS_HOME``.
"""

from __future__ import annotations

import csv
import io
import json
import queue
import re
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest
from file_keyring import read_items
from test_cli import BATCH_KEYS, CLI, RESULT_KEYS, Cli

from dict_magics.sandbox import SandboxServer

ENTRY_KEYS = {"id", "fromLang", "fromText", "toLang", "toText"}
NEW_COMMANDS = ["list", "restore", "snapshots", "log", "profiles"]


@pytest.fixture
def cli(sandbox: SandboxServer, tmp_path: Path) -> Cli:
    return Cli(sandbox, tmp_path)


def wait_until(condition: Callable[[], bool], what: str, limit: float = 30.0) -> None:
    """Wait (a safety limit, not a timing assertion) until ``condition()`` holds."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.01)


def _list_csv_into(cli: Cli, handle: IO[bytes]) -> subprocess.CompletedProcess[bytes]:
    """``dict-magics list --csv`` with its stdout a file (``>`` or ``>>`` in a shell)."""
    return subprocess.run(
        [*CLI, "list", "--csv"],
        stdout=handle,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=cli.env(),
        timeout=120,
    )


class Lines:
    """The lines of a child's pipe, read on a thread: a line that never comes fails the test
    (after a safety limit, not a timing assertion) instead of hanging it."""

    def __init__(self, pipe: IO[str]) -> None:
        self._queue: queue.Queue[str] = queue.Queue()
        self._thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self._thread.start()

    def _read(self, pipe: IO[str]) -> None:
        for line in pipe:
            self._queue.put(line)
        self._queue.put("")

    def next(self, limit: float = 30.0) -> str:
        try:
            return self._queue.get(timeout=limit)
        except queue.Empty:
            raise AssertionError("no line came from the child") from None

    def rest(self) -> list[str]:
        """Every remaining line, once the child has closed the pipe."""
        self._thread.join(timeout=60)
        lines = []
        while (line := self._queue.get_nowait()) != "":
            lines.append(line)
        return lines


def sent_deletes(box: SandboxServer) -> list[str | None]:
    """The entry ids of the DELETE requests the sandbox received, in order."""
    return [r.entry_id for r in box.requests if r.method == "DELETE"]


def one_line_error(proc: subprocess.CompletedProcess[str], code: int, usage: bool = False) -> dict:
    """The error of a ``--json`` run: one line on stderr (after argparse's usage line for a bad
    option), ``{"error", "exit"}`` on stdout."""
    assert proc.returncode == code, proc.stdout + proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == (2 if usage else 1) and "Traceback" not in proc.stderr, proc.stderr
    assert lines[-1].startswith("dict-magics: error: ")
    data = json.loads(proc.stdout)
    assert set(data) == {"error", "exit"} and data["exit"] == code
    return data


def host(box: SandboxServer) -> str:
    return box.url.removeprefix("http://")


# -- help ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command", ["login", "logout", "status", "delete", "purge", "demo", *NEW_COMMANDS]
)
def test_every_command_help_ends_with_examples(cli: Cli, command: str) -> None:
    proc = cli.run(command, "--help")
    assert proc.returncode == 0, proc.stderr
    tail = proc.stdout.rstrip("\n").split("\n\n")[-1].splitlines()
    assert tail[0] == "examples:" and 2 <= len(tail) - 1 <= 3, proc.stdout
    assert all(line.startswith("  ") and "dict-magics" in line for line in tail[1:])
    assert cli.sandbox.requests == []


# -- one JSON shape, whatever the number of ids ------------------------------------------------


def test_delete_json_has_one_shape_for_one_id_and_several(cli: Cli) -> None:
    one = cli.run("delete", "7", "--json")
    assert one.returncode == 0, one.stderr
    data = json.loads(one.stdout)
    assert set(data) == BATCH_KEYS
    assert (data["ok"], data["succeeded"], data["failed"], data["unknown"]) == (True, 1, 0, 0)
    [result] = data["results"]
    assert set(result) == RESULT_KEYS
    assert result["entry_id"] == "7" and result["outcome"] == "success"
    assert result["cause"] == "ok" and result["http_status"] == 200
    assert set(result["entry"]) == ENTRY_KEYS and result["entry"]["id"] == "7"
    assert data["snapshot"] and Path(data["snapshot"]).is_file()

    several = json.loads(cli.run("delete", "8", "9", "99999", "--json").stdout)
    assert set(several) == BATCH_KEYS
    assert [r["entry_id"] for r in several["results"]] == ["8", "9", "99999"]
    assert [r["outcome"] for r in several["results"]] == ["success", "success", "absent"]
    assert several["results"][2]["entry"] is None and several["results"][2]["attempts"] == 0
    assert (several["ok"], several["succeeded"], several["failed"]) == (True, 2, 0)
    assert (several["deleted"], several["absent"]) == (2, 1)


def test_purge_json_is_a_batch_of_one(cli: Cli) -> None:
    proc = cli.run("purge", "--yes", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert set(data) == BATCH_KEYS
    [result] = data["results"]
    assert set(result) == RESULT_KEYS and result["entry_id"] is None and result["ok"] is True
    assert (data["succeeded"], data["failed"]) == (1, 0)
    assert data["deleted"] == 100  # entries, not requests (issue 22, item 16)
    assert cli.sandbox.entries == {}


def test_errors_are_json_on_stdout_and_one_line_on_stderr(cli: Cli) -> None:
    bad_id = one_line_error(cli.run("--json", "delete", "3", "dictionary-all"), 2)
    assert "not an entry id" in bad_id["error"] and "`dict-magics purge`" in bad_id["error"]
    parse = one_line_error(cli.run("delete", "--bogus", "1", "--json"), 2, usage=True)
    assert parse["error"] == "unrecognized arguments: --bogus"
    both = one_line_error(cli.run("delete", "1", "--json", "--jsonl"), 2, usage=True)
    assert "--json and --jsonl" in both["error"]
    no_creds = one_line_error(cli.run("--json", "list", credentials=False), 2)
    assert "DICT_MAGICS_SECRET_KEY" in no_creds["error"]
    jsonl = cli.run("delete", "1", "..", "--jsonl")
    assert jsonl.returncode == 2 and json.loads(jsonl.stdout)["exit"] == 2
    assert jsonl.stdout.count("\n") == 1
    assert cli.sandbox.requests == []


def test_an_unknown_outcome_exits_1(cli: Cli) -> None:
    cli.sandbox.inject("hang", delay=3, method="DELETE")
    cli.sandbox.listing = False  # nothing can settle it afterwards
    proc = cli.run("delete", "41", "--timeout", "0.3", "--max-retries", "0", "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert data["unknown"] == 1 and data["results"][0]["outcome"] == "unknown"
    assert data["results"][0]["cause"] == "timeout"


# -- --jsonl: results as they arrive ---------------------------------------------------------


def test_jsonl_streams_each_result_as_it_arrives(cli: Cli) -> None:
    box = cli.sandbox
    box.inject("hang", delay=0.5, method="DELETE")  # entry 1 goes, its answer waits 0.5 s
    proc = subprocess.Popen(
        [*CLI, "delete", "-w", "1", "--jsonl", "1", "2", "3"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli.env(),
    )
    stdout = Lines(proc.stdout)
    try:
        wait_until(lambda: "1" not in box.entries, "entry 1 deleted")
        box.pause()  # the DELETE of entry 2 is held until we resume
        first = json.loads(stdout.next())
        assert first["entry_id"] == "1" and first["outcome"] == "success"
        assert set(first) == RESULT_KEYS
        assert proc.poll() is None and "2" in box.entries  # the batch has not ended
    finally:
        box.resume()
    proc.wait(timeout=60)
    rest = stdout.rest()
    stderr = proc.stderr.read()
    cli.check_no_secret(*rest, stderr)
    assert proc.returncode == 0, stderr
    lines = [json.loads(line) for line in rest]
    assert [r["entry_id"] for r in lines[:-1]] == ["2", "3"]
    summary = lines[-1]["summary"]
    assert set(lines[-1]) == {"summary"}
    assert (summary["ok"], summary["succeeded"], summary["failed"], summary["total"]) == (
        True,
        3,
        0,
        3,
    )
    assert summary["snapshot"] and "results" not in summary


def test_jsonl_for_one_id_and_for_failures(cli: Cli) -> None:
    one = cli.run("delete", "5", "--jsonl")
    assert one.returncode == 0
    lines = [json.loads(line) for line in one.stdout.splitlines()]
    assert len(lines) == 2 and lines[0]["entry_id"] == "5" and lines[1]["summary"]["total"] == 1
    mixed = cli.run("delete", "6", "6", "99998", "--jsonl", "--no-snapshot")
    assert mixed.returncode == 1
    lines = [json.loads(line) for line in mixed.stdout.splitlines()]
    assert sorted(r["entry_id"] for r in lines[:-1]) == ["6", "99998"]  # a repeated id once
    assert lines[-1]["summary"]["failed"] == 1 and lines[-1]["summary"]["ok"] is False


# -- progress when stderr is not a terminal --------------------------------------------------


def test_progress_lines_in_a_log_while_a_batch_is_stalled(cli: Cli) -> None:
    box = cli.sandbox
    where = re.escape(host(box))
    box.inject("hang", delay=0.5, method="DELETE")
    proc = subprocess.Popen(
        [*CLI, "delete", "-w", "1", "--progress-every", "0.05", "1", "2", "3"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli.env(),
    )
    stderr = Lines(proc.stderr)
    try:
        wait_until(lambda: "1" not in box.entries, "entry 1 deleted")
        box.pause()  # nothing more can answer: the lines that follow come from the clock
        stalled = re.compile(rf"Deleting 3 entries at {where}: (\d)/3 done, [\d.]+/s, 0 failed\n")
        seen = [stalled.fullmatch(stderr.next()) for _ in range(3)]
        assert all(seen) and proc.poll() is None
    finally:
        box.resume()
    assert proc.wait(timeout=60) == 0
    stdout = proc.stdout.read()
    last = stderr.rest()[-1]
    assert re.fullmatch(
        rf"Deleting 3 entries at {where}: 3/3 done, [\d.]+/s, 0 failed, finished in [\d.]+ s\n",
        last,
    ), last
    assert stdout.startswith("\u2713 deleted 3 of 3 entries")


def test_quiet_silences_progress_and_a_quick_batch_writes_none(cli: Cli) -> None:
    cli.sandbox.latency = 0.3  # two answers: longer than several progress intervals
    quiet = cli.run("delete", "-w", "1", "--quiet", "--progress-every", "0.05", "1", "2")
    assert quiet.returncode == 0 and quiet.stderr == ""
    cli.sandbox.latency = 0.0
    quick = cli.run("delete", "3", "4")  # over long before the first 5-second line
    assert quick.returncode == 0 and quick.stderr == ""
    bad = cli.run("delete", "5", "6", "--progress-every", "0")
    assert bad.returncode == 2 and "--progress-every" in bad.stderr


# -- list ------------------------------------------------------------------------------------


def test_list_as_text_json_and_csv_with_filters(cli: Cli) -> None:
    box = cli.sandbox
    text = cli.run("list")
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith(f"100 entries at {host(box)}")
    data = json.loads(cli.run("list", "--json").stdout)
    assert set(data) == {"entries", "total"} and data["total"] == 100
    assert {
        e["id"]: tuple(e[k] for k in ("fromLang", "fromText", "toLang", "toText"))
        for e in data["entries"]
    } == {i: e.terms for i, e in box.entries.items()}

    sample = box.entry("1")
    match = sample.from_text.upper()
    wanted = {
        i for i, e in box.entries.items() if e.matches(match, sample.from_lang, sample.to_lang)
    }
    filtered = cli.run(
        "list",
        "--json",
        "--match",
        match,
        "--from-lang",
        sample.from_lang,
        "--to-lang",
        sample.to_lang,
    )
    assert {e["id"] for e in json.loads(filtered.stdout)["entries"]} == wanted

    table = cli.run("list", "--csv")
    rows = list(csv.reader(io.StringIO(table.stdout)))
    assert rows[0] == ["id", "fromLang", "fromText", "toLang", "toText"]
    assert {r[0]: tuple(r[1:]) for r in rows[1:]} == {i: e.terms for i, e in box.entries.items()}
    assert [r.method for r in box.requests] == ["GET"] * 4


def test_list_csv_has_a_bom_in_a_file_and_none_in_a_pipe(cli: Cli, tmp_path: Path) -> None:
    # A pipe (cut -d, -f1) must see "id", not "\ufeffid"; `> out.csv` keeps the BOM so Excel
    # reads it as UTF-8 (issue 22, item 13).
    piped = cli.run("list", "--csv")
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.startswith("id,fromLang,")
    out = tmp_path / "out.csv"
    with out.open("wb") as handle:
        redirected = _list_csv_into(cli, handle)
    assert redirected.returncode == 0, redirected.stderr
    written = out.read_bytes()
    assert written.startswith(b"\xef\xbb\xbfid,fromLang,")
    rows = written.removeprefix(b"\xef\xbb\xbf").decode("utf-8").splitlines()
    assert rows == piped.stdout.splitlines()  # the same table, the BOM aside


def test_list_where_the_service_has_none_exits_1(cli: Cli) -> None:
    with SandboxServer(3, listing=False) as box:
        cli.secrets.append(box.secret_key)
        proc = cli.run("list", env={**cli.env(), **box.env()})
        assert proc.returncode == 1 and proc.stdout == ""
        assert proc.stderr.count("\n") == 1 and "offers no listing" in proc.stderr
        data = one_line_error(cli.run("list", "--json", env={**cli.env(), **box.env()}), 1)
        assert "offers no listing" in data["error"]


# -- status --check --------------------------------------------------------------------------


def test_status_check_with_working_keys(cli: Cli) -> None:
    proc = cli.run("status", "--check")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith(
        f"\u2713 credentials work: listed 100 entries at {host(cli.sandbox)}"
    )
    data = json.loads(cli.run("status", "--check", "--json").stdout)
    assert data["check"]["works"] is True and data["check"]["entries"] == 100
    assert [r.method for r in cli.sandbox.requests] == ["GET", "GET"]  # read-only, once each
    assert json.loads(cli.run("status", "--json").stdout).get("check") is None
    assert len(cli.sandbox.requests) == 2  # plain status sends nothing


def test_status_check_with_refused_keys(cli: Cli) -> None:
    wrong = "wrong-secret-key-123456"
    cli.secrets.append(wrong)
    proc = cli.run("status", "--check", env=cli.env(DICT_MAGICS_SECRET_KEY=wrong))
    assert proc.returncode == 1
    last = proc.stdout.rstrip().splitlines()[-1]
    assert last.startswith("\u2717 credentials refused (HTTP 401): ")
    assert "[40006] The signature is incorrect." in last
    data = json.loads(
        cli.run("status", "--check", "--json", env=cli.env(DICT_MAGICS_SECRET_KEY=wrong)).stdout
    )
    assert data["check"]["works"] is False and data["check"]["http_status"] == 401
    assert len(cli.sandbox.entries) == 100


def test_status_check_where_the_service_has_no_listing(cli: Cli) -> None:
    with SandboxServer(3, listing=False) as box:
        cli.secrets.append(box.secret_key)
        proc = cli.run("status", "--check", env={**cli.env(), **box.env()})
        assert proc.returncode == 1
        assert proc.stdout.rstrip().endswith(
            "? this service has no listing; cannot check without deleting"
        )
        assert [r.method for r in box.requests] == ["GET"] and len(box.entries) == 3
    missing = cli.run("status", "--check", credentials=False)
    assert missing.returncode == 2 and "credentials work" not in missing.stdout
    assert cli.sandbox.requests == []


# -- profiles --------------------------------------------------------------------------------


def _login(cli: Cli, profile: str, access_key: str) -> None:
    proc = cli.run(
        "login",
        "-p",
        profile,
        "--base-url",
        cli.sandbox.url,
        "--access-key",
        access_key,
        input=cli.sandbox.secret_key + "\n",
        credentials=False,
        keyring=True,
    )
    assert proc.returncode == 0, proc.stderr


def test_profiles_lists_what_login_stored_and_logout_removed(cli: Cli) -> None:
    use_keyring = {"credentials": False, "keyring": True}
    empty = cli.run("profiles", **use_keyring)
    assert empty.returncode == 0 and "No profile is stored" in empty.stdout
    _login(cli, "work", "work-access-key")
    _login(cli, "ci", "ci-access-key")
    assert json.loads(read_items(cli.keyring_file)[("dict-magics", "profiles")]) == ["ci", "work"]

    proc = cli.run("profiles", **use_keyring)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("2 stored profiles (file_keyring.FileKeyring)")
    assert re.match(rf"  ci\s+{re.escape(cli.sandbox.url)}\s+access key ci-a\u2026ey$", lines[1])
    assert lines[2].startswith("  work") and "work\u2026ey" in lines[2]
    assert "access-key" not in proc.stdout  # masked

    data = json.loads(cli.run("profiles", "--json", **use_keyring).stdout)
    assert [p["name"] for p in data["profiles"]] == ["ci", "work"]
    assert all(p["complete"] and not p["default"] for p in data["profiles"])

    assert cli.run("logout", "-p", "work", **use_keyring).returncode == 0
    after = json.loads(cli.run("profiles", "--json", **use_keyring).stdout)
    assert [p["name"] for p in after["profiles"]] == ["ci"]
    assert cli.run("logout", "-p", "ci", **use_keyring).returncode == 0
    assert read_items(cli.keyring_file) == {}  # the list goes with the last profile


def test_profiles_without_a_keyring_lists_none_and_says_what_to_do(cli: Cli) -> None:
    # Without a keyring nothing can be stored: an empty list (exit 0), not an error whose hint
    # (DICT_MAGICS_* variables) could never list a profile.
    shown = cli.run("profiles", credentials=False)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("No keyring on this system: no stored profiles.")
    assert "install and unlock a keyring" in shown.stdout and shown.stderr == ""
    data = json.loads(cli.run("profiles", "--json", credentials=False).stdout)
    assert data["profiles"] == [] and data["keyring_available"] is False


@pytest.mark.parametrize("broken", ["fails", "cannot load"])
def test_profiles_with_a_keyring_that_fails_is_an_error(cli: Cli, broken: str) -> None:
    # Unlike no keyring at all, a keyring that is there and fails (here: its store is a
    # folder) or a PYTHON_KEYRING_BACKEND that names no backend is an error, said in one line
    # (the second was a traceback; found by review3).
    if broken == "fails":
        cli.keyring_file.mkdir()
        env = cli.env(credentials=False, keyring=True)
    else:
        env = cli.env(credentials=False, PYTHON_KEYRING_BACKEND="no_such_module.Keyring")
    shown = cli.run("profiles", env=env)
    assert shown.returncode == 2 and shown.stdout == "", shown.stderr
    assert "Traceback" not in shown.stderr and shown.stderr.count("\n") == 1
    assert "keyring" in shown.stderr
    data = json.loads(cli.run("profiles", "--json", env=env).stdout)
    assert data["exit"] == 2 and "keyring" in data["error"] and "profiles" not in data


def test_registry_in_the_keyring(memory_keyring, monkeypatch: pytest.MonkeyPatch) -> None:
    from dict_magics.profiles import credentials

    item = ("dict-magics", credentials.REGISTRY_ITEM)
    credentials.record("work")
    credentials.record("work")
    credentials.record("lab")
    assert json.loads(memory_keyring.items[item]) == ["lab", "work"]
    assert credentials.recorded() == ["lab", "work"]
    # Only "work" was stored for real; "default" was stored before the index existed.
    credentials.store("work", "https://api.example.com", "AK-work-1234", "s3cr3t-work")
    credentials.store("default", "https://other.example.com", "AK-default-1", "s3cr3t-default")
    found = credentials.stored_profiles()
    assert [(p.name, p.base_url, p.default) for p in found] == [
        ("default", "https://other.example.com", True),
        ("work", "https://api.example.com", False),
    ]
    assert found[1].masked_access_key == "AK-w\u202634" and found[1].complete
    assert all("s3cr3t" not in repr(p) for p in found)
    monkeypatch.setenv("DICT_MAGICS_PROFILE", "work")
    assert [p.default for p in credentials.stored_profiles()] == [False, True]

    memory_keyring.items.pop(("dict-magics", "work:secret_key"))
    assert credentials.stored_profiles()[1].missing == ["secret_key"]
    credentials.record("lab", stored=False)
    credentials.record("work", stored=False)
    assert item not in memory_keyring.items
    memory_keyring.items[item] = "not json"
    assert credentials.recorded() == []


# -- --retry-failed --------------------------------------------------------------------------


def test_retry_failed_resends_only_what_did_not_surely_go(cli: Cli, tmp_path: Path) -> None:
    box = cli.sandbox
    box.fail_next(1, status=503, method="DELETE")  # the first DELETE (entry 1) is refused
    first = cli.run("delete", "-w", "1", "--max-retries", "0", "1", "2", "99999", "--json")
    assert first.returncode == 1
    saved = tmp_path / "result.json"
    saved.write_text(first.stdout, encoding="utf-8")
    assert [r["outcome"] for r in json.loads(first.stdout)["results"]] == [
        "failure",
        "success",
        "absent",
    ]

    box.clear_log()
    again = cli.run("delete", "--retry-failed", str(saved), "--json")
    assert again.returncode == 0  # "99999" was absent: never retried (issue 22, item 17)
    assert sorted(sent_deletes(box)) == ["1"]
    data = json.loads(again.stdout)
    assert [(r["entry_id"], r["outcome"]) for r in data["results"]] == [("1", "success")]
    assert "1" not in box.entries and "2" not in box.entries


def test_retry_failed_reads_a_jsonl_stream_and_skips_what_succeeded(
    cli: Cli, tmp_path: Path
) -> None:
    box = cli.sandbox
    stream = tmp_path / "results.jsonl"
    box.fail_next(1, status=503, method="DELETE")  # the first DELETE (entry 10) is refused
    proc = cli.run(
        "delete",
        "-w",
        "1",
        "--max-retries",
        "0",
        "10",
        "11",
        "99999",
        "--jsonl",
        "--no-snapshot",
    )
    stream.write_text(proc.stdout, encoding="utf-8")
    box.clear_log()
    again = cli.run("delete", "--retry-failed", str(stream))
    assert again.returncode == 0, again.stdout + again.stderr
    # "99999" was refused as no such entry: sending it again can never succeed.
    assert sent_deletes(box) == ["10"]

    done = tmp_path / "done.json"
    done.write_text(cli.run("delete", "12", "--json").stdout, encoding="utf-8")
    box.clear_log()
    nothing = cli.run("delete", "--retry-failed", str(done))
    assert nothing.returncode == 0 and nothing.stdout.startswith("Nothing to retry")
    empty = json.loads(cli.run("delete", "--retry-failed", str(done), "--json").stdout)
    assert set(empty) == BATCH_KEYS and empty["results"] == [] and empty["ok"] is True
    [line] = cli.run("delete", "--retry-failed", str(done), "--jsonl").stdout.splitlines()
    assert json.loads(line)["summary"]["total"] == 0
    assert box.requests == []


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ('{"entries": []}', "it has no 'results' list"),
        ("just text\n", "line 1 is not JSON"),
        ('{"results": [{"entry_id": "1"}]}', "result 1 has neither 'outcome' nor 'ok'"),
        ('{"results": [{"entry_id": null, "ok": false}]}', "it is the result of a purge"),
        ('{"error": "no credentials", "exit": 2}', "it records an error"),
        ('{"results": [{"entry_id": "1", "outcome": "maybe"}]}', "unknown outcome 'maybe'"),
    ],
)
def test_retry_failed_refuses_what_is_not_a_result(
    cli: Cli, tmp_path: Path, content: str, why: str
) -> None:
    saved = tmp_path / "saved.json"
    saved.write_text(content, encoding="utf-8")
    proc = cli.run("delete", "--retry-failed", str(saved), "--json")
    error = one_line_error(proc, 2)["error"]
    assert "is not a saved `dict-magics delete --json` result" in error and why in error
    assert cli.sandbox.requests == []


# -- snapshots, dry runs, restore and the audit log ------------------------------------------


def test_delete_keeps_a_snapshot_that_restore_puts_back(cli: Cli) -> None:
    box = cli.sandbox
    before = box.terms
    dry = cli.run("delete", "20", "21", "99997", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    plan = json.loads(dry.stdout)
    assert plan["dry_run"] is True and plan["operation"] == "delete" and plan["listed"] is True
    assert [e["id"] for e in plan["entries"]] == ["20", "21"] and plan["missing"] == ["99997"]
    assert sent_deletes(box) == [] and box.terms == before

    gone = json.loads(cli.run("delete", "20", "21", "--json").stdout)
    snapshot = gone["snapshot"]
    assert snapshot and json.loads(Path(snapshot).read_text())["operation"] == "delete"
    assert {r["snapshot"] for r in gone["results"]} == {snapshot}

    listed = json.loads(cli.run("snapshots", "--json").stdout)["snapshots"]
    assert [(s["path"], s["count"], s["operation"]) for s in listed] == [(snapshot, 2, "delete")]
    assert cli.run("snapshots").stdout.startswith("1 snapshot, newest first")

    preview = json.loads(cli.run("restore", "--dry-run", "--json").stdout)
    assert preview["dry_run"] is True and len(preview["added"]) == 2
    assert len(box.entries) == 98
    restored = cli.run("restore", "--json")
    assert restored.returncode == 0, restored.stderr
    data = json.loads(restored.stdout)
    assert len(data["added"]) == 2 and data["ok"] is True
    assert sorted(box.terms) == sorted(before)
    twice = json.loads(cli.run("restore", snapshot, "--json").stdout)
    assert twice["added"] == [] and len(twice["skipped"]) == 2

    log = json.loads(cli.run("log", "-n", "3", "--json").stdout)
    assert [line["operation"] for line in log["lines"]] == ["delete", "add", "add"]
    assert log["lines"][0]["snapshot"] == snapshot and log["lines"][0]["outcome"] == "success"
    assert "delete" in cli.run("log").stdout


def test_purge_dry_run_then_purge_then_restore(cli: Cli) -> None:
    box = cli.sandbox
    before = box.terms
    dry = json.loads(cli.run("purge", "--dry-run", "--json").stdout)
    assert dry["operation"] == "purge" and len(dry["entries"]) == 100
    assert sent_deletes(box) == []
    assert cli.run("purge", "--yes").returncode == 0
    assert box.entries == {}
    proc = cli.run("restore", "--yes", "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(box.terms) == sorted(before)


def test_no_snapshot_and_a_service_without_listing(cli: Cli) -> None:
    assert cli.run("delete", "30", "--no-snapshot").returncode == 0
    assert json.loads(cli.run("snapshots", "--json").stdout)["snapshots"] == []
    with SandboxServer(5, listing=False) as box:
        cli.secrets.append(box.secret_key)
        env = {**cli.env(), **box.env()}
        refused = cli.run("purge", "--yes", env=env)
        assert refused.returncode == 2 and "--no-snapshot" in refused.stderr
        assert box.entries and sent_deletes(box) == []
        warned = cli.run("delete", "1", "--json", env=env)
        assert warned.returncode == 0, warned.stderr
        assert "dict-magics: warning: " in warned.stderr
        assert json.loads(warned.stdout)["warnings"]
        assert cli.run("purge", "--yes", "--no-snapshot", env=env).returncode == 0
        assert box.entries == {}


def test_log_rejects_a_count_below_one(cli: Cli) -> None:
    proc = cli.run("log", "-n", "0")
    assert proc.returncode == 2 and "-n must be a whole number of lines" in proc.stderr


def test_sync_and_its_undo_refuse_without_a_terminal_naming_one_entry(
    cli: Cli, sandbox: SandboxServer, tmp_path: Path
) -> None:
    """Without a terminal, deleting the one entry a file lacks, and removing the one entry a
    sync added, are refused (exit 2, nothing sent) in words that count that one entry."""
    glossary = tmp_path / "glossary.csv"
    assert cli.run("export", str(glossary)).returncode == 0
    with glossary.open(encoding="utf-8-sig", newline="") as f:
        rows = [row for row in csv.reader(f) if row[0] != "1"]  # entry 1 goes missing
    rows.append(["", "en", "brand new", "de", "ganz neu"])
    with glossary.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows(rows)
    before = dict(sandbox.entries)
    refused = cli.run("sync", str(glossary), "--apply", "--delete-missing")
    assert refused.returncode == 2
    assert "refusing to delete 1 entry at " in refused.stderr, refused.stderr
    assert sandbox.entries == before
    assert "1" in sandbox.entries
    applied = cli.run("sync", str(glossary), "--apply")  # the add only: nothing to confirm
    assert applied.returncode == 0, applied.stderr
    assert len(sandbox.entries) == len(before) + 1
    undo = cli.run("restore")
    assert undo.returncode == 2
    assert "refusing to remove 1 entry at " in undo.stderr, undo.stderr
    assert len(sandbox.entries) == len(before) + 1


def test_a_delete_whose_listing_is_refused_for_the_keys_does_not_say_try_again(
    cli: Cli, sandbox: SandboxServer
) -> None:
    """Refused credentials stop the snapshot's listing: the error says so in the vendor's
    words and does not invite the same keys again; an unreachable service still does."""
    refused = cli.run("delete", "7", env=cli.env(DICT_MAGICS_SECRET_KEY="not-the-secret"))
    assert refused.returncode == 1
    assert "[40006]" in refused.stderr and "nothing was deleted." in refused.stderr
    assert "Try again" not in refused.stderr
    assert "7" in sandbox.entries and sent_deletes(sandbox) == []
    with socket.socket() as s:  # a port nobody listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    down = cli.run(
        "delete",
        "7",
        "--max-retries",
        "0",
        env=cli.env(DICT_MAGICS_BASE_URL=f"http://127.0.0.1:{port}"),
    )
    assert down.returncode == 1
    assert "nothing was deleted. Try again." in down.stderr, down.stderr


def test_list_csv_appended_to_a_file_has_no_bom_in_the_middle(cli: Cli, tmp_path: Path) -> None:
    # `>> all.csv` onto a file that already holds text: a BOM there is no BOM but a U+FEFF
    # glued to the next cell ("\ufeffid"); only a file that starts empty gets one (review3).
    out = tmp_path / "all.csv"
    out.write_bytes(b"earlier,line\n")
    with out.open("ab") as handle:
        appended = _list_csv_into(cli, handle)
    assert appended.returncode == 0, appended.stderr
    written = out.read_bytes()
    assert written.startswith(b"earlier,line\nid,fromLang,") and b"\xef\xbb\xbf" not in written
