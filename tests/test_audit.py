"""The audit log, written ahead: a "sending" line on disk before each request leaves, its
outcome after, paired by a request key; private modes; whole lines under concurrent appends from
threads and processes; reading the tail of a long or damaged log, lines of version 3 included.
"""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import textwrap
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from dict_magics import localdata
from dict_magics.models import AddResult, AuditTable, Cause, DeleteResult, Entry
from dict_magics.operations.audit import ENDED, AuditLine, AuditLog, audit_path, read_audit
from dict_magics.operations.history import audit
from dict_magics.operations.snapshots import write_snapshot

FIELDS = [
    "time",
    "profile",
    "host",
    "operation",
    "entry_id",
    "entry",
    "outcome",
    "http_status",
    "attempts",
    "reason",
    "snapshot",
    "request",
]
FRIDAY = Entry("17", "ja", "金曜日", "en", "FRI")
WHERE = {"profile": "default", "host": "api.example"}


def _log(operation: str = "delete", **options: Any) -> AuditLog:
    return AuditLog(operation=operation, **{**WHERE, **options})


def _lines(path: Path | None = None) -> list[dict]:
    raw = (path or audit_path()).read_bytes()
    assert raw.endswith(b"\n")
    return [json.loads(line) for line in raw.decode("utf-8").splitlines()]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# -- the line format ---------------------------------------------------------------------------


def test_a_request_has_a_sending_line_then_its_outcome_paired_by_key() -> None:
    snap = write_snapshot([FRIDAY], base_url="https://api.example", operation="delete", **WHERE)
    before = datetime.now(timezone.utc)
    with _log(snapshot=snap, entries={"17": FRIDAY}) as log:
        key = log.sending("DELETE", "17")
        (sending,) = _lines()  # on disk before the request leaves
        log.ended(key, [DeleteResult("success", "17", http_status=200, attempts=2)])
    sending, ended = _lines()
    assert list(sending) == FIELDS and list(ended) == FIELDS
    assert sending["request"] == ended["request"] == key
    when = datetime.fromisoformat(ended.pop("time"))
    assert before - timedelta(seconds=1) <= when <= datetime.now(timezone.utc)
    assert when.utcoffset() == timedelta(0)
    terms = {"fromLang": "ja", "fromText": "金曜日", "toLang": "en", "toText": "FRI"}
    assert (sending["outcome"], sending["attempts"], sending["entry"]) == ("sending", 0, terms)
    del ended["request"]
    assert ended == {
        "profile": "default",
        "host": "api.example",
        "operation": "delete",
        "entry_id": "17",
        "entry": terms,
        "outcome": "success",
        "http_status": 200,
        "attempts": 2,
        "reason": None,
        "snapshot": str(snap),
    }
    [line] = read_audit()
    assert (line.entry_id, line.outcome, line.attempts, line.entry) == ("17", "success", 2, FRIDAY)


def test_a_request_with_no_outcome_reads_as_unknown_the_process_ended() -> None:
    with _log() as log:
        log.sending("DELETE", "5")
        key = log.sending("DELETE", "6")
        log.ended(key, [DeleteResult("success", "6", http_status=200)])
    five, six = read_audit()
    assert (five.entry_id, five.outcome, five.reason) == ("5", "unknown", ENDED)
    assert (six.entry_id, six.outcome) == ("6", "success")


def test_a_settled_outcome_replaces_the_unknown_one() -> None:
    with _log() as log:
        key = log.sending("DELETE", "9")
        unknown = DeleteResult(
            "failure", "9", http_status=None, reason="lost", outcome_unknown=True
        )
        log.ended(key, [unknown])
        log.record(
            DeleteResult(
                "success", "9", http_status=None, reason="verified by listing", verified=True
            )
        )
    assert [x["outcome"] for x in _lines()] == ["sending", "unknown", "success"]
    [line] = read_audit()
    assert (line.outcome, line.reason) == ("success", "verified by listing")


def test_a_bulk_request_has_a_line_per_entry() -> None:
    added = [Entry("", "en", t, "de", t.upper()) for t in ("a", "b", "c")]
    with _log(operation="add") as log:
        key = log.sending("POST", None, added)
        assert len(_lines()) == 3  # one write, three lines
        log.ended(key, [AddResult("success", e, http_status=200) for e in added])
    lines = read_audit()
    assert [x.entry.from_text for x in lines] == ["a", "b", "c"]
    assert {x.outcome for x in lines} == {"success"} and {x.entry_id for x in lines} == {None}


def test_unknown_purge_and_add_lines() -> None:
    unknown = DeleteResult(
        "failure",
        "9",
        http_status=None,
        reason="no answer within 15 s",
        outcome_unknown=True,
        cause=Cause.TIMEOUT,
    )
    with _log(snapshot="/snap/a.json") as log:
        log.record(unknown)
    with _log(operation="purge") as log:
        log.record(DeleteResult("success", None, http_status=200))
    with _log(operation="add", snapshot=Path("/snap/b.json")) as log:
        log.record(
            AddResult(
                "failure",
                FRIDAY,
                http_status=400,
                reason="refused: bad language",
                cause=Cause.REFUSED,
            )
        )
    first, second, third = _lines()
    assert (first["entry_id"], first["entry"], first["outcome"]) == ("9", None, "unknown")
    assert (first["reason"], first["snapshot"]) == ("no answer within 15 s", "/snap/a.json")
    assert (second["operation"], second["entry_id"], second["entry"]) == ("purge", None, None)
    # An add: the service returns no id, so entry_id is null and the terms say what it was.
    assert (third["operation"], third["entry_id"], third["outcome"]) == ("add", None, "failure")
    assert third["entry"] == FRIDAY.to_service(with_id=False)
    assert third["snapshot"] == "/snap/b.json"


def test_lines_of_version_3_stay_readable() -> None:
    old = {
        "time": "2026-01-05T10:00:00.000+00:00",
        "profile": "default",
        "host": "api.example",
        "operation": "delete",
        "entry_id": "17",
        "entry": FRIDAY.to_service(with_id=False),
        "outcome": "success",
        "http_status": 200,
        "attempts": 1,
        "reason": None,
        "snapshot": None,
    }
    audit_path().write_text(json.dumps(old) + "\n" + json.dumps(old) + "\n")
    with _log() as log:
        log.ended(log.sending("DELETE", "18"), [DeleteResult("success", "18", http_status=200)])
    assert [(x.entry_id, x.outcome) for x in read_audit()] == [
        ("17", "success"),
        ("17", "success"),
        ("18", "success"),
    ]


def test_lone_surrogate_keeps_the_line_valid() -> None:
    odd = Entry("5", "ja", "a\ud800b", "en", "x")
    with _log() as log:
        log.record(DeleteResult("success", "5", http_status=200, entry=odd))
    assert _lines()[0]["entry"]["fromText"] == "a\ud800b"
    assert read_audit()[0].entry == odd


def test_operation_is_checked() -> None:
    with pytest.raises(ValueError, match="operation"):
        _log(operation="rename")


def test_modes_are_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "fresh"
    monkeypatch.setenv(localdata.ENV_HOME, str(home))
    with _log() as log:
        log.record(DeleteResult("success", "1"))
    assert audit_path() == home / "audit.jsonl"
    assert _mode(home) == 0o700 and _mode(audit_path()) == 0o600


def test_a_symbolic_link_in_the_logs_place_is_refused_with_one_warning(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("do not touch\n")
    audit_path().symlink_to(victim)
    said: list[str] = []
    with _log(warn=said.append) as log:
        log.ended(log.sending("DELETE", "1"), [DeleteResult("success", "1")])
        log.record(DeleteResult("success", "2"))
    assert victim.read_text() == "do not touch\n"
    assert len(said) == 1 and "symbolic link" in said[0], said


def test_no_secret_or_key_in_the_log(sandbox) -> None:
    from dict_magics.service.client import DictionaryClient

    with DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key) as client:
        with _log(host=client.host) as log:
            client.delete_entries(["1", "2", "99999"], audit=log)
    text = audit_path().read_text(encoding="utf-8")
    assert sorted(x.outcome for x in read_audit()) == ["failure", "success", "success"]
    assert len(_lines()) == 6
    assert sandbox.secret_key not in text and sandbox.access_key not in text


def test_a_torn_last_line_is_ended_once_and_does_not_swallow_the_next_one() -> None:
    with _log() as log:
        log.record(DeleteResult("success", "1"))
    with audit_path().open("ab") as handle:
        handle.write(b'{"time": "2024-05-01T00:00:00Z", "profile": "def')  # a crash mid-line
    with _log() as log:
        log.record(DeleteResult("success", "2"))
        log.record(DeleteResult("success", "3"))
    raw = audit_path().read_bytes().splitlines()
    assert len(raw) == 4 and json.loads(raw[2])["entry_id"] == "2"
    tail = read_audit(10)
    assert [x.entry_id for x in tail] == ["1", "2", "3"] and tail.skipped == 1


# -- concurrency -------------------------------------------------------------------------------

REASON = "x" * 1500  # long lines: a torn or interleaved write would show


def _check_whole(expected: dict[str, int]) -> None:
    """Every line is whole JSON, every writer's requests are all there, each with its sending
    line before its outcome, in the writer's order. An empty line may appear: a log opened
    while another process's write was still growing the file takes its last byte for a torn
    line and ends it first (readers skip empty lines; a record glued to a torn one would be
    lost instead)."""
    raw = audit_path().read_bytes()
    assert raw.endswith(b"\n")
    seen: dict[str, list[int]] = {}
    sent: set[str] = set()
    for text in raw.split(b"\n")[:-1]:
        if not text:
            continue
        line = json.loads(text)
        assert list(line) == FIELDS
        if line["outcome"] == "sending":
            sent.add(line["request"])
            continue
        assert line["reason"] == REASON and line["request"] in sent
        writer, number = line["entry_id"].split(":")
        seen.setdefault(writer, []).append(int(number))
    assert {w: len(n) for w, n in seen.items()} == expected
    assert all(numbers == list(range(len(numbers))) for numbers in seen.values())


def _one(log: AuditLog, writer: str, i: int) -> None:
    key = log.sending("DELETE", f"{writer}:{i}")
    log.ended(
        key,
        [DeleteResult("failure", f"{writer}:{i}", http_status=404, reason=REASON, entry=FRIDAY)],
    )


@pytest.mark.parametrize("shared", [True, False], ids=["one-log", "log-per-thread"])
def test_eight_threads_append_whole_lines(shared: bool) -> None:
    common = _log().__enter__()
    start = threading.Barrier(8)

    def work(writer: str) -> None:
        log = common if shared else _log().__enter__()
        start.wait()
        for i in range(200):
            _one(log, writer, i)

    threads = [threading.Thread(target=work, args=(f"t{n}",)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    _check_whole({f"t{n}": 200 for n in range(8)})


PROCESS_WRITER = textwrap.dedent(
    """
    import sys
    from dataclasses import replace
    from dict_magics.operations.audit import AuditLog
    from dict_magics.models import DeleteResult, Entry

    writer, reason = sys.argv[1], "x" * 1500
    entry = Entry("17", "ja", "金曜日", "en", "FRI")
    sys.stdin.readline()  # start together
    with AuditLog(profile="default", host="api.example", operation="delete") as log:
        for i in range(300):
            key = log.sending("DELETE", f"{writer}:{i}")
            failed = DeleteResult("failure", f"{writer}:{i}", reason=reason, entry=entry)
            log.ended(key, [replace(failed, http_status=404)])
    """
)


def test_processes_and_threads_append_whole_lines_together() -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", PROCESS_WRITER, f"p{n}"], stdin=subprocess.PIPE, text=True
        )
        for n in range(3)
    ]

    def work() -> None:
        with _log() as log:
            for i in range(300):
                _one(log, "main", i)

    thread = threading.Thread(target=work)
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.close()
    thread.start()
    for proc in procs:
        assert proc.wait(timeout=60) == 0
    thread.join()
    _check_whole({"p0": 300, "p1": 300, "p2": 300, "main": 300})


# -- reading the tail --------------------------------------------------------------------------


def _write_log(count: int, prefix: bytes = b"") -> None:
    """``count`` requests with ids 0.., each a sending and an outcome line."""
    with _log() as log:
        log.ended(
            log.sending("DELETE", "ID"),
            [DeleteResult("success", "ID", http_status=200, entry=FRIDAY)],
        )
    two = audit_path().read_bytes()
    body = b"".join(
        two.replace(b'"ID"', b'"%d"' % i).replace(b'-1"', b'-%d"' % i) for i in range(count)
    )
    audit_path().write_bytes(prefix + body)


def test_read_audit_reads_only_the_end_of_a_long_log() -> None:
    # 50,000 requests after a first part that no reader could parse: had read_audit read it,
    # it would count those lines as skipped (or fail on the bytes that are not UTF-8).
    garbage = b"\xff\xfe not json at all {{{\n" * 2000 + b"\x00" * 100_000 + b"\n"
    _write_log(50_000, prefix=garbage)
    tail = read_audit(20)
    assert [x.entry_id for x in tail] == [str(i) for i in range(49_980, 50_000)]
    assert tail.skipped == 0 and {x.outcome for x in tail} == {"success"}
    assert isinstance(tail[0], AuditLine) and tail[0].entry == Entry("49980", *FRIDAY.terms)
    assert read_audit(1)[0].entry_id == "49999"
    assert read_audit(2000)[0].entry_id == "48000"


def test_read_audit_skips_and_counts_garbled_lines() -> None:
    with _log() as log:
        for i in range(3):
            log.record(DeleteResult("success", str(i), http_status=200))
    good = audit_path().read_bytes().splitlines(keepends=True)
    wrong_types = json.loads(good[0])
    wrong_types["outcome"] = "maybe"
    bad = [
        b"{not json}\n",
        b"\xff\xfe\n",
        b"[1, 2]\n",
        json.dumps({**wrong_types, "request": "w"}).encode() + b"\n",
        json.dumps({**json.loads(good[0]), "attempts": "two", "request": "x"}).encode() + b"\n",
        json.dumps({**json.loads(good[0]), "entry": {"a": 1}, "request": "y"}).encode() + b"\n",
        b"   \n",
    ]
    content = good[0] + b"".join(bad[:3]) + good[1]
    content += b"".join(bad[3:]) + good[2] + b'{"time": "20'
    audit_path().write_bytes(content)
    tail = read_audit(2)
    assert [x.entry_id for x in tail] == ["1", "2"]
    assert tail.skipped == 4  # the torn end and the three bad lines after "1"
    every = read_audit(100)
    assert [x.entry_id for x in every] == ["0", "1", "2"]
    assert every.skipped == 7


def test_read_audit_of_no_log_or_nothing_asked() -> None:
    assert read_audit() == [] and read_audit().skipped == 0
    _write_log(3)
    assert read_audit(0) == []
    assert [x.entry_id for x in read_audit()] == ["0", "1", "2"]


# -- rendering ---------------------------------------------------------------------------------


def test_audit_text_and_html() -> None:
    with _log(snapshot="/s/one.json") as log:
        log.record(DeleteResult("success", "17", http_status=200, entry=FRIDAY))
    with _log() as log:
        log.record(
            DeleteResult(
                "failure",
                "<i>9</i>",
                http_status=None,
                reason="timed out <b>",
                outcome_unknown=True,
            )
        )
    with _log(operation="purge") as log:
        log.record(DeleteResult("success", None, http_status=200))
    with _log(operation="add") as log:
        log.record(
            AddResult(
                "failure",
                Entry("1", "en", "a\x1b[2Jb", "fr", "c"),
                http_status=400,
                reason="refused",
            )
        )
    with audit_path().open("ab") as handle:
        handle.write(b"garbage\n")
    lines = audit()
    text = str(lines)
    rows = text.splitlines()
    assert rows[0] == "last 4 requests (1 unreadable line skipped)"
    assert rows[1].split() == [
        "time",
        "profile",
        "host",
        "operation",
        "outcome",
        "HTTP",
        "tries",
        "target",
    ]
    assert "\u2713 success" in rows[2] and "17: 金曜日 \u2192 FRI (ja\u2192en)" in rows[2]
    assert rows[3] == "    snapshot /s/one.json"
    assert "? unknown" in rows[4] and rows[5] == "    timed out <b>"
    assert "purge" in rows[6] and "every entry" in rows[6]
    assert "\u2717 failure" in rows[7] and "a\\x1b[2Jb \u2192 c (en\u2192fr)" in rows[7]
    assert "\x1b" not in text and rows[8] == "    refused"
    html = lines._repr_html_()
    assert "timed out &lt;b&gt;" in html and "&lt;i&gt;9&lt;/i&gt;" in html
    assert "<b>" not in html and "<i>" not in html
    assert html.count("<tr") == 5 and "dict-magics-unknown" in html
    assert "/s/one.json" in html and "1 unreadable line skipped" in html
    assert "empty" in str(AuditTable()) and "empty" in AuditTable()._repr_html_()
