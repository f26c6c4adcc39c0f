"""Every report true, every exit code right, no secret shown (issue 34, items 6-12).

Real parts only: the command line in a real subprocess and the magics in the real shell, against
the sandbox over loopback with its faults; Ctrl-C is a real SIGINT.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import paired_audit, run_cell, run_cli
from IPython.core.error import UsageError

from dict_magics.errors import CredentialsError, Remedy
from dict_magics.frontends.commands import PANEL
from dict_magics.sandbox import SandboxServer

JWT_START = "eyJ"  # every JWT's header starts so: {"alg" ... in base64url


def _started(box: SandboxServer, args: list[str], until: Callable[[], bool]) -> subprocess.Popen:
    """``dict-magics ARGS`` started against ``box``, once ``until()`` holds (checked every
    5 ms; a safety limit of 60 s, not a timing assertion)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "dict_magics", *args],
        env={**os.environ, **box.env()},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not until() and time.monotonic() < deadline:
        time.sleep(0.005)
    return proc


def test_a_bearer_token_quoted_in_a_refusal_reaches_neither_output_nor_audit(
    tmp_path: Path,
) -> None:
    """A service that quotes the request's Authorization header in its refusal (a gateway's
    error page, a debug message): the token is cut out of what is printed and audited."""
    with SandboxServer(10) as box:
        quoted = "invalid token in Authorization: {authorization} (expired?)"
        box.inject("coded", 4, code=40001, method="DELETE", message=quoted)
        done = run_cli(box, "delete", "3", "--auth", "token")
        as_json = run_cli(box, "delete", "4", "--auth", "token", "--json")
    audit = Path(os.environ["DICT_MAGICS_HOME"], "audit.jsonl")
    assert [line["outcome"] for line in paired_audit(audit)] == ["failure", "failure"]
    for shown in (done.stdout, done.stderr, as_json.stdout, audit.read_text(encoding="utf-8")):
        assert JWT_START not in shown
    assert done.returncode == 1 and "Bearer <hidden>" in done.stdout
    assert "invalid token in Authorization" in done.stdout  # the service's words, less the token
    result = json.loads(as_json.stdout)["results"][0]
    assert "Bearer <hidden>" in result["vendor_message"]


def _token_batch_meets(
    faults: list[dict[str, Any]], *options: str
) -> tuple[subprocess.CompletedProcess[str], int, SandboxServer]:
    """A 300-id ``delete --auth token`` batch that meets ``faults`` once 20 entries are gone:
    the process's outcome and the token requests the sandbox received after that."""
    with SandboxServer(300, latency=0.01) as box:
        ids = [str(i) for i in range(1, 301)]
        args = ["delete", "--auth", "token", "-w", "4", *options, *ids]
        proc = _started(box, args, lambda: len(box.entries) <= 280)
        seen = len(box.received)
        for fault in faults:
            box.inject(**fault)
        out, err = proc.communicate(timeout=300)
        tokens = sum(1 for r in box.received[seen:] if r.path.endswith("/token"))
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), tokens, box


def test_a_token_endpoint_that_refuses_the_keys_stops_the_batch() -> None:
    """Mid-batch the service refuses the token and then every token request (40001): the batch
    stops as it does for a refused signature, instead of asking for a token per entry (878
    refused token requests, an account-lockout risk)."""
    done, tokens, box = _token_batch_meets([dict(kind="coded", count=10**6, code=40001)])
    assert done.returncode == 1
    assert tokens <= 3, tokens
    assert len(box.entries) > 200  # the rest were not sent
    assert "refused the credentials" in done.stdout and "not sent" in done.stdout


def test_a_token_endpoint_that_fails_is_not_asked_again_per_request() -> None:
    """The token is refused once, then the token endpoint answers 503: a few token requests,
    then the batch stops, saying why (on main: 1,767 token requests in 262 s)."""
    faults = [
        dict(kind="coded", count=1, code=40001, method="DELETE"),
        dict(kind="status", count=10**6, status=503, method="POST"),
    ]
    done, tokens, box = _token_batch_meets(faults, "--max-retries", "1")
    assert done.returncode == 1
    assert tokens <= 2, tokens  # one token request and its one retry
    assert len(box.entries) > 200
    assert "could not get a token" in done.stdout and "not sent" in done.stdout


def _glossary(box: SandboxServer, path: Path) -> None:
    """A file that changes the targets of entries 1-300, adds 20 and lacks entries 301-600."""
    rows = [("fromLang", "fromText", "toLang", "toText")]
    for entry_id in range(1, 301):
        e = box.entries[str(entry_id)]
        rows.append((e.from_lang, e.from_text, e.to_lang, e.to_text + "-NEW"))
    rows += [("en", f"added {i}", "de", f"neu {i}") for i in range(20)]
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)


def test_ctrl_c_during_a_syncs_updates_says_what_was_done_and_that_running_it_again_finishes_it(
    tmp_path: Path,
) -> None:
    """Ctrl-C while a sync sends its PUTs: exit 130, the word "interrupted", per kind what was
    done of what was planned (deletions first, all done; additions last, not started), what
    was not sent, and that the same sync run again finishes it, which it then does."""
    path = tmp_path / "glossary.csv"
    with SandboxServer(600, latency=0.02) as box:
        _glossary(box, path)
        argv = ["sync", str(path), "--delete-missing", "--apply", "--yes", "-w", "2"]
        plan = json.loads(run_cli(box, *argv[:3], "--json").stdout)["counts"]
        assert plan["adds"] == 20 and plan["updates"] == 300 and plan["deletes"] > 100
        proc = _started(box, argv, lambda: sum(r.method == "PUT" for r in box.requests) >= 20)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        updated = sum(e.to_text.endswith("-NEW") for e in box.entries.values())
        assert proc.returncode == 130, (out, err)
        assert 0 < updated < 300
        first = out.splitlines()[0]
        assert "interrupted" in first
        n = plan["deletes"]
        assert f"0/20 added, {updated}/300 updated, {n}/{n} deleted" in first
        assert f"not sent: 20 adds, {300 - updated} updates" in first
        assert "the same sync run again finishes it" in first
        assert len(out.splitlines()) < 10  # the requests never sent are counted, not listed
        again = run_cli(box, *argv, "--json")
        data = json.loads(again.stdout)
        assert again.returncode == 0 and data["ok"] and data["verified"]
        assert data["counts"]["adds"] == 20 and data["counts"]["updates"] == 300 - updated
        assert sorted(box.entries, key=int) == [str(i) for i in range(1, 301)] + sorted(
            (i for i in box.entries if int(i) > 600), key=int
        )
        assert all(box.entries[str(i)].to_text.endswith("-NEW") for i in range(1, 301))


def test_ctrl_c_during_a_delete_batch_says_that_running_it_again_finishes_it() -> None:
    """It does: the entries already gone are then absent (not sent again), the rest deleted."""
    with SandboxServer(300, latency=0.02) as box:
        ids = [str(i) for i in range(1, 301)]
        proc = _started(box, ["delete", "-w", "2", *ids], lambda: len(box.entries) <= 280)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=120)
        gone = 300 - len(box.entries)
        assert proc.returncode == 130 and 0 < gone < 300
        assert "interrupted" in out.splitlines()[0]
        assert "the same deletion run again finishes it" in out.splitlines()[0]
        again = run_cli(box, "delete", *ids, "--json")
        data = json.loads(again.stdout)
        assert again.returncode == 0 and not box.entries
        assert (data["deleted"], data["absent"]) == (300 - gone, gone)


def test_a_sync_no_listing_could_verify_exits_1_as_unknown(tmp_path: Path) -> None:
    """Applied, but the listing afterwards fails: 0 needs a verifying listing, so 1 (unknown)."""
    path = tmp_path / "new.csv"
    path.write_text("fromLang,fromText,toLang,toText\nen,pear,de,Birne\n", encoding="utf-8")
    with SandboxServer(10) as box:
        box.inject("hang", delay=1.0, method="POST")  # held while the listing is made to fail
        args = ["sync", str(path), "--apply", "--json", "--max-retries", "0"]
        proc = _started(box, args, lambda: any(r.method == "POST" for r in box.received))
        box.inject("status", 100, status=503, method="GET")
        out, err = proc.communicate(timeout=120)
        assert ("en", "pear", "de", "Birne") in box.terms  # it was done
    data = json.loads(out)
    assert proc.returncode == 1, (out, err)
    assert data["applied"] and data["verified"] is None and data["ok"] is False
    assert "no listing after the sync could verify it" in err


def test_an_id_not_in_the_dictionary_one_rule_and_fields_that_agree() -> None:
    """The rule: the exit code says whether what was asked for holds. An entry to delete that
    is not there is gone already (absent: nothing sent, exit 0); an entry to update that is
    not there cannot hold the new terms (a usage error: nothing sent, exit 2)."""
    with SandboxServer(10) as box:
        deleted = run_cli(box, "delete", "9999", "--json")
        said = run_cli(box, "delete", "9999")
        updated = run_cli(box, "update", "9999", "--to-text", "X", "--json")
        changes = [r for r in box.requests if r.method != "GET"]
    result = json.loads(deleted.stdout)["results"][0]
    assert deleted.returncode == 0 and said.returncode == 0
    assert (result["status"], result["outcome"], result["ok"]) == ("absent", "absent", True)
    assert result["cause"] == "absent" and result["attempts"] == 0
    assert "9999" in said.stdout and "absent (not in the dictionary)" in said.stdout
    error = json.loads(updated.stdout)
    assert updated.returncode == error["exit"] == 2
    assert "not in the dictionary" in error["error"] and "nothing was sent" in error["error"]
    assert changes == []


def test_an_add_only_syncs_snapshot_says_what_it_holds(ip: Any, env_creds, tmp_path) -> None:
    """It holds no entry as it was, and the 3 terms it added (what a restore removes)."""
    path = tmp_path / "new.csv"
    rows = [f"en,fruit {i},de,Frucht {i}" for i in range(3)]
    path.write_text("\n".join(["fromLang,fromText,toLang,toText", *rows]) + "\n", "utf-8")
    applied, _, _ = run_cell(ip, f"%dict_sync {path} --apply")
    assert applied.ok
    kept, _, _ = run_cell(ip, "%dict_snapshots")
    assert "0 entries, 3 added" in str(kept).splitlines()[2]
    assert "0 entries, 3 added" in kept._repr_html_()
    listed = run_cli(env_creds, "snapshots", "--json")
    assert json.loads(listed.stdout)["snapshots"][0]["added"] == 3


def test_status_check_marks_nothing_a_success_before_the_check(tmp_path: Path) -> None:
    """Refused credentials: no ✓ above "✗ ... refused"; the first mark is the check's."""
    with SandboxServer(3) as box:
        env = {**os.environ, **box.env(), "DICT_MAGICS_SECRET_KEY": "sandbox-secret-wrong-one"}
        done = subprocess.run(
            [sys.executable, "-m", "dict_magics", "status", "--check"],
            capture_output=True,
            env=env,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert done.stdout.startswith("\u2717") and "\u2713" not in done.stdout
    assert "refused the credentials" in done.stdout


def test_without_credentials_each_front_end_says_how_to_try_without_an_account(
    ip: Any,
) -> None:
    """A new user with no account yet: the error names the sandbox and the demo."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DICT_MAGICS_")}
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"  # a keyring, empty
    done = subprocess.run(
        [sys.executable, "-m", "dict_magics", "list"],
        capture_output=True,
        env={**env, "DICT_MAGICS_HOME": os.environ["DICT_MAGICS_HOME"]},
        stdin=subprocess.DEVNULL,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "no base URL" in done.stderr
    assert "`dict-magics demo`" in done.stderr and "`dict-magics sandbox`" in done.stderr
    with pytest.raises(UsageError, match=r"use_sandbox\(\) in a cell"):
        run_cell(ip, "%dict_list")
    assert "use_sandbox()" in PANEL.message(CredentialsError("no key", option=Remedy.LOGIN))


HOSTILE = "\x1b]0;pwned\x07\x1b[2Jgloss\u202eyrassol"  # a title, a clear screen, a bidi flip


@pytest.mark.parametrize("case", ["missing", "folder", "exists"])
def test_a_path_in_an_error_is_shown_terminal_safe(
    case: str, ip: Any, env_creds: SandboxServer, tmp_path: Path
) -> None:
    """ "no file at …", "… is a folder", "… already exists": ESC and U+202E of a path are
    shown as escapes by the command line and the magics, escaped in the panel's HTML."""
    path = tmp_path / f"{HOSTILE}.csv"
    if case == "folder":
        path.mkdir()
    elif case == "exists":
        path.write_text("fromLang,fromText,toLang,toText\n", encoding="utf-8")
    args = ["export", str(path)] if case == "exists" else ["sync", str(path)]
    done = run_cli(env_creds, *args)
    words = {"missing": "no file at", "folder": "is a folder", "exists": "already exists"}
    assert done.returncode == 2 and words[case] in done.stderr
    assert "\x1b" not in done.stderr and "\u202e" not in done.stderr
    assert "\\x1b]0;pwned" in done.stderr and "\\u202e" in done.stderr
    with pytest.raises(UsageError) as raised:
        run_cell(ip, f"%dict_{args[0]} {path}")
    assert words[case] in str(raised.value)
    assert "\x1b" not in str(raised.value) and "\u202e" not in str(raised.value)
