"""Defects a reviewer and a new user found: a re-run add or update that has nothing to do, ids
named with the noun that agrees with them, hints for a Chinese code, truthful words for a request
that never connected, token auth in the credentials check, the views of an ``AddBatch``, a late
service after a timeout, and ``--json`` that keeps terminal-steering characters as escapes.

Real parts only: the sandbox over loopback, the command line as a subprocess, a real IPython
shell.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import point_at, run_cli
from IPython.utils.capture import capture_output

from dict_magics.models import AddResult, Entry, NoChange, UpdateResult
from dict_magics.operations.add import add
from dict_magics.operations.context import OperationSettings
from dict_magics.operations.listing import list_entries
from dict_magics.operations.update import update
from dict_magics.sandbox import SandboxServer

ONE = OperationSettings(workers=1)


def cli(server: SandboxServer, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(server, *args)


def changes(server: SandboxServer) -> list[str]:
    """The requests that could change the dictionary (everything but listings and tokens)."""
    return [f"{r.method} {r.path}" for r in server.requests if r.method not in ("GET",)]


@pytest.fixture
def three(monkeypatch: pytest.MonkeyPatch):
    with SandboxServer(3) as server:
        yield point_at(monkeypatch, server)


# -- 1. an exact duplicate is not added again; ids are counted in words -------------------------


def test_adding_the_same_four_terms_again_sends_nothing_and_names_the_entry(
    three: SandboxServer,
) -> None:
    first = add(ONE, "en", "Friday", "de", "Freitag")
    assert isinstance(first, AddResult) and first.ok
    three.clear_log()
    again = add(ONE, "en", "Friday", "de", "Freitag")
    assert isinstance(again, NoChange) and again.ok and again.ids == [first.entry.id]
    assert again.entry == first.entry  # its id, as after an add that was sent
    assert changes(three) == []  # no POST: a re-run cell is harmless
    text = str(again)
    assert f"entry {first.entry.id}" in text and "already holds" in text
    assert "duplicate" in text and "conflict" not in text and "nothing was sent" in text
    assert sum(e.terms == first.entry.terms for e in three.entries.values()) == 1
    # A dry run says the same, and so does the command line (exit 0, JSON outcome unchanged).
    assert isinstance(add(ONE, "en", "Friday", "de", "Freitag", dry_run=True), NoChange)
    proc = cli(three, "--json", "add", "en", "Friday", "de", "Freitag")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["outcome"] == "unchanged" and data["ok"] is True and data["id"] == first.entry.id
    assert data["attempts"] == 0 and changes(three) == []


def test_the_panel_may_still_add_a_copy_it_confirmed(three: SandboxServer) -> None:
    add(ONE, "en", "Friday", "de", "Freitag")
    said: list[str] = []
    copy = add(ONE, "en", "Friday", "de", "Freitag", duplicate=True, warn=said.append)
    assert isinstance(copy, AddResult) and copy.ok
    assert said and "holds these four terms" in said[0] and "duplicate" in said[0]


def test_a_conflict_warning_counts_the_entries_it_names(three: SandboxServer) -> None:
    said: list[str] = []
    a = add(ONE, "en", "Friday", "de", "Freitag")
    b = add(ONE, "en", "Friday", "de", "Freitag!", warn=said.append)
    assert b.ok and said == [
        f"entry {a.entry.id} already translates 'Friday' (en\u2192de) to another term; adding "
        "this one makes a conflict (an update changes an entry in place)"
    ]
    said.clear()
    add(ONE, "en", "Friday", "de", "Fr.", warn=said.append)
    assert said[0].startswith(f"entries {a.entry.id} and {b.entry.id} already translate 'Friday'")
    preview = add(ONE, "en", "Friday", "de", "Fri", dry_run=True)
    assert "entries" in str(preview) and "already hold this source term: a conflict" in str(preview)


def displayed(ip, name: str) -> dict[str, str]:
    """What a notebook shows for the variable ``name``: ``display()`` in the real shell."""
    with capture_output() as cap:
        ip.run_cell(f"from IPython.display import display\ndisplay({name})")
    (out,) = cap.outputs
    return out.data


def test_a_repeated_add_in_a_notebook_shows_what_is_already_there(ip, three: SandboxServer) -> None:
    point = 'en "purchase order" de Bestellung'
    ip.run_line_magic("dict_add", point)
    ip.run_cell(f"again = %dict_add {point}")
    assert isinstance(ip.user_ns["again"], NoChange)
    shown = displayed(ip, "again")
    assert "dict-magics-unchanged" in shown["text/html"] and "already holds" in shown["text/html"]
    assert "not added" in shown["text/plain"]


# -- 2. an update that changes nothing ----------------------------------------------------------


def test_the_same_update_twice_is_no_change_exit_0_without_a_put_or_snapshot(
    three: SandboxServer,
) -> None:
    from dict_magics.operations.snapshots import list_snapshots

    done = update(ONE, "2", to_text="Faktura")
    assert isinstance(done, UpdateResult) and done.ok
    kept = len(list_snapshots())
    three.clear_log()
    again = update(ONE, "2", to_text="Faktura")
    assert isinstance(again, NoChange) and again.ok and again.ids == ["2"]
    assert "no change" in str(again) and "entry 2" in str(again)
    assert changes(three) == [] and len(list_snapshots()) == kept
    proc = cli(three, "update", "2", "--to-text", "Faktura")
    assert proc.returncode == 0 and "no change" in proc.stdout, proc.stderr
    assert changes(three) == [] and len(list_snapshots()) == kept


def test_a_no_change_judged_on_a_stale_listing_is_checked_afresh(three: SandboxServer) -> None:
    """The cached listing says entry 2 already reads so; someone changed it since: the PUT goes."""
    update(ONE, "2", to_text="Faktura")
    list_entries(ONE)  # the cache now holds entry 2 as "Faktura"
    three.add_entries([Entry("2", "en", "invoice", "de", "Rechnung")])  # changed behind our back
    result = update(ONE, "2", to_text="Faktura")
    assert isinstance(result, UpdateResult) and result.ok
    assert three.entry("2").to_text == "Faktura"


def test_an_update_never_puts_back_stale_terms_from_the_cache(three: SandboxServer) -> None:
    """The cache holds entry 2 as listed; another client then changes its source term. Our
    update of the target term keeps their source term (the PUT sends every field), and the
    snapshot holds the entry as it was just before (undo brings back their version, not the
    cached one). Before: their change was reverted, and lost for good."""
    from pathlib import Path

    from dict_magics.operations.snapshots import read_snapshot

    list_entries(ONE)  # the cache now holds entry 2
    was = three.entry("2")
    assert was is not None
    theirs = Entry("2", was.from_lang, was.from_text + " (their edit)", was.to_lang, was.to_text)
    three.add_entries([theirs])  # changed by someone else since the listing
    result = update(ONE, "2", to_text="Faktura")
    assert isinstance(result, UpdateResult) and result.ok
    now = three.entry("2")
    assert now is not None and (now.from_text, now.to_text) == (theirs.from_text, "Faktura")
    assert result.snapshot is not None
    assert [e.terms for e in read_snapshot(Path(result.snapshot)).entries] == [theirs.terms]


# -- 8. --json keeps terminal-steering characters as escapes ------------------------------------


HOSTILE = Entry("9", "en", "bidi \u202eevil\u2066", "de", "c1 \x9b31m \x7f \u2028 \u200b \u91d1")


@pytest.mark.parametrize("args", [["--json", "list"], ["delete", "9", "--jsonl"]])
def test_json_output_escapes_bidi_and_control_characters(
    three: SandboxServer, args: list[str]
) -> None:
    three.add_entries([HOSTILE])
    proc = cli(three, *args)
    assert proc.returncode == 0, proc.stderr
    raw = ("\u202e", "\u2066", "\x9b", "\x7f", "\u2028", "\u200b")
    assert not any(ch in proc.stdout for ch in raw), ascii(proc.stdout)
    assert "\\u202e" in proc.stdout and "\u91d1" in proc.stdout  # readable text stays as is
    if "--json" in args:
        (got,) = [e for e in json.loads(proc.stdout)["entries"] if str(e["id"]) == "9"]
    else:
        got = next(json.loads(line) for line in proc.stdout.splitlines())["entry"]
    assert (got["fromText"], got["toText"]) == (HOSTILE.from_text, HOSTILE.to_text)


def test_the_lint_magic_json_escapes_bidi_too(ip, three: SandboxServer) -> None:
    three.add_entries([HOSTILE, Entry("10", *HOSTILE.terms)])  # a duplicate names its terms
    with capture_output() as cap:
        ip.run_line_magic("dict_lint", "--json")
    assert "\u202e" not in cap.stdout and "\\u202e" in cap.stdout
    assert json.loads(cap.stdout)["findings"]


# -- 3. a language filter the service would not know -------------------------------------------


def test_a_chinese_code_without_region_says_which_codes_are_valid(three: SandboxServer) -> None:
    from dict_magics.errors import UsageProblem
    from dict_magics.operations.textcheck import check_text

    with pytest.raises(UsageProblem, match=r"fromLang 'zh' is not a language code \(Chinese is "):
        list_entries(ONE, from_lang="zh")
    with pytest.raises(UsageProblem, match=r"did you mean zh-CN\?"):
        list_entries(ONE, to_lang="zh_cn")
    with pytest.raises(UsageProblem, match=r"ISO 639-1 codes \(en, ja, de, \.\.\.\), and zh-CN"):
        check_text(ONE, "金曜日です。", from_lang="xx")
    assert [e.id for e in list_entries(ONE, from_lang="zh-CN")] == ["3"]
    assert len(list_entries(ONE, from_lang="de")) == 0  # a valid code: an empty list, no error
    assert len(list_entries(ONE, from_lang="DE")) == 0  # filters ignore case: valid too
    proc = cli(three, "list", "--from-lang", "zh")
    assert proc.returncode == 2 and "zh-CN or zh-TW" in proc.stderr, proc.stderr


def test_a_listed_entry_with_a_bad_code_is_still_found_by_it(three: SandboxServer) -> None:
    """Lint reports entries with codes such as ``zh``; filtering by that code must find them."""
    three.add_entries([Entry("8", "zh", "你好", "en", "hello")])
    assert [e.id for e in list_entries(ONE, from_lang="zh")] == ["8"]


# -- 4. a request that never connected, tried four times ----------------------------------------


def test_a_refused_connection_tried_four_times_is_worded_truthfully() -> None:
    """The reason once said "nothing was sent; gave up after 4 attempts": four attempts were
    made, none reached the service. A closed port on loopback refuses every connection."""
    import socket

    from dict_magics.service.client import DictionaryClient

    with socket.socket() as probe:  # a port nothing listens on: bound, never listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        client = DictionaryClient(f"http://127.0.0.1:{port}", "a", "s", backoff=0.01)
        result = client.delete_entry("42")
    assert result.outcome == "failure" and result.attempts == 4, result
    assert "nothing was sent" not in result.reason
    assert result.reason == (
        f"could not connect to 127.0.0.1:{port} (connection refused), so the request never "
        "reached the service; gave up after 4 attempts"
    )


# -- 5. the credentials check after a login uses the auth asked for ------------------------------


def test_the_check_after_a_login_with_token_auth_uses_a_token(
    memory_keyring, sandbox: SandboxServer
) -> None:
    from dict_magics.operations.login import login
    from dict_magics.operations.prompts import ScriptedPrompter

    settings = OperationSettings(profile="tok", auth="token")
    sandbox.clear_log()
    result = login(
        settings,
        ScriptedPrompter([]),
        base_url=sandbox.url,
        access_key=sandbox.access_key,
        secret_key=sandbox.secret_key,
        check=True,
    )
    assert result.check is not None and result.check.works is True, result.check
    assert sandbox.tokens_issued == 1
    listings = [r for r in sandbox.requests if r.path == "/api/v1/dictionary"]
    assert listings and all("signature" not in r.headers for r in listings)
    assert all("Authorization" in r.headers for r in listings)  # the Bearer token (redacted)


# -- 6. an AddBatch shows itself like every other result ------------------------------------------


def test_an_add_batch_renders_in_a_real_shell_escaped(ip, sandbox: SandboxServer) -> None:
    from dict_magics.models import AddBatch
    from dict_magics.service.client import DictionaryClient

    hostile = Entry("", "en", "<b>bold</b> & co", "de", "fett")
    refused = Entry("", "en", "second", "de", "zweite")
    # The first bulk request is added; the second is refused with the vendor's code.
    sandbox.inject("coded", method="POST", code=40202, message="<i>invalid</i> \u202eparameter")
    with DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key) as client:
        batch = client.add_entries([refused, hostile], chunk_size=1, workers=1)
    assert isinstance(batch, AddBatch) and len(batch.added) == 1 and len(batch.failed) == 1
    ip.user_ns["batch"] = batch
    shown = displayed(ip, "batch")
    text, html = shown["text/plain"], shown["text/html"]
    assert text.startswith("\u2717 added 1 of 2 entries, 1 not added (2 requests)"), text
    assert "[40202]" in text and "second" in text
    assert 'class="dict-magics-add-batch dict-magics-failure"' in html
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; co" in html and "<b>bold" not in html
    assert "&lt;i&gt;invalid" in html and "<i>" not in html
    assert "\u202e" not in html and "\u202e" not in text
    assert repr(batch) == "AddBatch('added 1 of 2 entries, 1 not added (2 requests)')"


# -- 7. a service that acts after our deadline ----------------------------------------------------


def test_an_add_that_timed_out_is_not_called_a_failure_by_a_listing_taken_too_soon(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sandbox's slow service adds 1.5 s after the POST, long after the 0.5 s deadline and
    the listing that follows it: that listing proves nothing, and saying "not added, adding it
    again is safe" would have made a duplicate."""
    import time

    with SandboxServer(3, add_delay=1.5) as slow:
        point_at(monkeypatch, slow)
        result = add(OperationSettings(timeout=0.5, workers=1), "en", "late", "de", "sp\u00e4t")
        assert isinstance(result, AddResult)
        assert result.outcome == "unknown", result.reason
        assert "may still act" in result.reason and "list again before adding" in result.reason
        assert "safe" not in result.reason
        deadline = time.monotonic() + 10
        while not any(e.from_text == "late" for e in slow.entries.values()):
            assert time.monotonic() < deadline, "the slow service never added the entry"
            time.sleep(0.05)
