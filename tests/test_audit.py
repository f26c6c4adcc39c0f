"""The audit log: DESIGN's line format, private modes, whole lines under concurrent appends from
threads and processes, batched flushing, and reading the tail of a long or damaged log.
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

import pytest

from dict_magics import localdata
from dict_magics.models import AddResult, AuditTable, Cause, DeleteResult, Entry
from dict_magics.operations.audit import (
    AuditLine,
    AuditLog,
    audit_line,
    audit_path,
    read_audit,
)
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
]
FRIDAY = Entry("17", "ja", "金曜日", "en", "FRI")
WHERE = {"profile": "default", "host": "api.example"}


def _lines(path: Path | None = None) -> list[dict]:
    raw = (path or audit_path()).read_bytes()
    assert raw.endswith(b"\n")
    return [json.loads(line) for line in raw.decode("utf-8").splitlines()]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# -- the line format ---------------------------------------------------------------------------


def test_delete_line_has_design_fields_in_order() -> None:
    snap = write_snapshot([FRIDAY], base_url="https://api.example", operation="delete", **WHERE)
    before = datetime.now(timezone.utc)
    with AuditLog() as log:
        log.record(
            DeleteResult("success", "17", 200, attempts=2, entry=FRIDAY),
            operation="delete",
            snapshot=snap,
            **WHERE,
        )
    (line,) = _lines()
    assert list(line) == FIELDS
    when = datetime.fromisoformat(line.pop("time"))
    assert when.utcoffset() == timedelta(0)
    assert before - timedelta(seconds=1) <= when <= datetime.now(timezone.utc)
    assert line == {
        "profile": "default",
        "host": "api.example",
        "operation": "delete",
        "entry_id": "17",
        "entry": {"fromLang": "ja", "fromText": "金曜日", "toLang": "en", "toText": "FRI"},
        "outcome": "success",
        "http_status": 200,
        "attempts": 2,
        "reason": None,
        "snapshot": str(snap.path),
    }
    assert "金曜日".encode() in audit_path().read_bytes()


def test_unknown_purge_and_add_lines() -> None:
    unknown = DeleteResult(
        "failure", "9", None, "no answer within 15 s", outcome_unknown=True, cause=Cause.TIMEOUT
    )
    purge = DeleteResult("success", None, 200)
    added = AddResult("failure", FRIDAY, 400, "refused: bad language", cause=Cause.REFUSED)
    log = AuditLog()
    log.record_many([unknown], operation="delete", snapshot="/snap/a.json", **WHERE)
    log.record_many([purge], operation="purge", **WHERE)
    log.record_many([added], operation="add", snapshot=Path("/snap/b.json"), **WHERE)
    first, second, third = _lines()
    assert [list(x) for x in (first, second, third)] == [FIELDS] * 3
    assert (first["entry_id"], first["entry"], first["outcome"], first["http_status"]) == (
        "9",
        None,
        "unknown",
        None,
    )
    assert (first["reason"], first["snapshot"]) == ("no answer within 15 s", "/snap/a.json")
    assert (second["operation"], second["entry_id"], second["entry"]) == ("purge", None, None)
    assert (second["outcome"], second["snapshot"]) == ("success", None)
    # An add: the service returns no id, so entry_id is null and the terms say what it was.
    assert (third["operation"], third["entry_id"], third["outcome"]) == ("add", None, "failure")
    assert third["entry"] == FRIDAY.to_service(with_id=False)
    assert third["snapshot"] == "/snap/b.json"


def test_lone_surrogate_keeps_the_line_valid() -> None:
    odd = Entry("5", "ja", "a\ud800b", "en", "x")
    with AuditLog() as log:
        log.record(DeleteResult("success", "5", 200, entry=odd), operation="delete", **WHERE)
    assert _lines()[0]["entry"]["fromText"] == "a\ud800b"
    assert read_audit()[0].entry == odd


def test_operation_is_checked() -> None:
    with pytest.raises(ValueError, match="operation"):
        audit_line(DeleteResult("success", "1"), operation="rename", **WHERE)


def test_modes_are_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "fresh"
    monkeypatch.setenv(localdata.ENV_HOME, str(home))
    with AuditLog() as log:
        log.record(DeleteResult("success", "1"), operation="delete", **WHERE)
    assert audit_path() == home / "audit.jsonl"
    assert _mode(home) == 0o700
    assert _mode(audit_path()) == 0o600
    lock = home / "audit.jsonl.lock"
    if lock.exists():
        assert _mode(lock) == 0o600


def test_a_symbolic_link_in_the_logs_place_is_refused(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("do not touch\n")
    audit_path().symlink_to(victim)
    log = AuditLog()
    with pytest.raises(OSError, match="symbolic link"):  # each line is written as it comes
        log.record(DeleteResult("success", "1"), operation="delete", **WHERE)
    with pytest.raises(OSError, match="symbolic link"):
        log.flush()
    assert victim.read_text() == "do not touch\n"


def test_the_safeguards_trail_says_why_a_linked_log_is_not_written(tmp_path: Path) -> None:
    from dict_magics.operations.safeguards import Trail

    victim = tmp_path / "victim.txt"
    victim.write_text("do not touch\n")
    audit_path().symlink_to(victim)
    said: list[str] = []
    with Trail(profile="p", host="h", operation="delete", snapshot=None, warn=said.append) as trail:
        trail.record(DeleteResult("success", "1", attempts=1))
    assert victim.read_text() == "do not touch\n"
    assert len(said) == 1 and "symbolic link" in said[0], said


def test_no_secret_or_key_in_the_log(sandbox) -> None:
    from dict_magics.service.client import DictionaryClient

    with DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key) as client:
        batch = client.delete_entries(["1", "2", "nope"])
        with AuditLog() as log:
            log.record_many(batch.results, profile="default", host=client.host, operation="delete")
    text = audit_path().read_text(encoding="utf-8")
    assert [line["outcome"] for line in _lines()] == ["success", "success", "failure"]
    assert sandbox.secret_key not in text and sandbox.access_key not in text


# -- batching ----------------------------------------------------------------------------------


def test_lines_wait_for_a_flush_and_are_never_lost_on_exit() -> None:
    with AuditLog(flush_every=5, flush_after=3600) as log:
        for i in range(4):
            log.record(DeleteResult("success", str(i)), operation="delete", **WHERE)
        assert not audit_path().exists() or audit_path().stat().st_size == 0
        log.record(DeleteResult("success", "4"), operation="delete", **WHERE)
        assert [x["entry_id"] for x in _lines()] == ["0", "1", "2", "3", "4"]
        log.record(DeleteResult("success", "5"), operation="delete", **WHERE)
        assert len(_lines()) == 5
    assert [x["entry_id"] for x in _lines()] == [str(i) for i in range(6)]


def test_a_slow_batch_is_flushed_by_time() -> None:
    log = AuditLog(flush_every=1000, flush_after=0)
    log.record(DeleteResult("success", "1"), operation="delete", **WHERE)
    assert [x["entry_id"] for x in _lines()] == ["1"]


def test_a_torn_last_line_does_not_swallow_the_next_one() -> None:
    with AuditLog() as log:
        log.record(DeleteResult("success", "1"), operation="delete", **WHERE)
    with audit_path().open("ab") as handle:
        handle.write(b'{"time": "2024-05-01T00:00:00Z", "profile": "def')  # a crash mid-line
    with AuditLog() as log:
        log.record(DeleteResult("success", "2"), operation="delete", **WHERE)
    raw = audit_path().read_bytes().splitlines()
    assert len(raw) == 3 and json.loads(raw[2])["entry_id"] == "2"
    tail = read_audit(10)
    assert [x.entry_id for x in tail] == ["1", "2"]
    assert tail.skipped == 1


# -- concurrency -------------------------------------------------------------------------------

REASON = "x" * 1500  # long lines: a torn or interleaved write would show


def _check_whole(expected: dict[str, int]) -> None:
    """Every line is whole JSON, every writer's lines are all there, in the writer's order."""
    raw = audit_path().read_bytes()
    assert raw.endswith(b"\n")
    seen: dict[str, list[int]] = {}
    for text in raw.split(b"\n")[:-1]:
        line = json.loads(text)
        assert list(line) == FIELDS and line["reason"] == REASON
        writer, number = line["entry_id"].split(":")
        seen.setdefault(writer, []).append(int(number))
    assert {w: len(n) for w, n in seen.items()} == expected
    assert all(numbers == list(range(len(numbers))) for numbers in seen.values())


def _failure(writer: str, i: int) -> DeleteResult:
    return DeleteResult("failure", f"{writer}:{i}", 404, REASON, entry=FRIDAY)


@pytest.mark.parametrize("shared", [True, False], ids=["one-log", "log-per-thread"])
def test_eight_threads_append_whole_lines(shared: bool) -> None:
    common = AuditLog(flush_every=7)
    start = threading.Barrier(8)

    def work(writer: str) -> None:
        log = common if shared else AuditLog(flush_every=7)
        start.wait()
        for i in range(200):
            log.record(_failure(writer, i), operation="delete", **WHERE)
        log.flush()

    threads = [threading.Thread(target=work, args=(f"t{n}",)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    _check_whole({f"t{n}": 200 for n in range(8)})


PROCESS_WRITER = textwrap.dedent(
    """
    import sys
    from dict_magics.operations.audit import AuditLog
    from dict_magics.models import DeleteResult, Entry

    writer, reason = sys.argv[1], "x" * 1500
    entry = Entry("17", "ja", "金曜日", "en", "FRI")
    sys.stdin.readline()  # start together
    with AuditLog(flush_every=5) as log:
        for i in range(300):
            result = DeleteResult("failure", f"{writer}:{i}", 404, reason, entry=entry)
            log.record(result, profile="default", host="api.example", operation="delete")
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
        with AuditLog(flush_every=3) as log:
            for i in range(300):
                log.record(_failure("main", i), operation="delete", **WHERE)

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
    """``count`` lines with ids 0.. (one line made by ``audit_line``, the rest copied from it)."""
    one = audit_line(
        DeleteResult("success", "ID", 200, entry=FRIDAY), operation="delete", **WHERE
    ).encode("utf-8")
    body = b"".join(one.replace(b'"ID"', b'"%d"' % i) for i in range(count))
    audit_path().write_bytes(prefix + body)


def test_read_audit_reads_only_the_end_of_a_long_log() -> None:
    # 50,000 lines after a first part that no reader could parse: had read_audit read it, it
    # would count those lines as skipped (or fail on the bytes that are not UTF-8).
    garbage = b"\xff\xfe not json at all {{{\n" * 2000 + b"\x00" * 100_000 + b"\n"
    _write_log(50_000, prefix=garbage)
    tail = read_audit(20)
    assert [x.entry_id for x in tail] == [str(i) for i in range(49_980, 50_000)]
    assert tail.skipped == 0
    assert isinstance(tail[0], AuditLine) and tail[0].entry == Entry("49980", *FRIDAY.terms)
    assert read_audit(1)[0].entry_id == "49999"
    assert read_audit(2000)[0].entry_id == "48000"


def test_read_audit_skips_and_counts_garbled_lines() -> None:
    good = [
        audit_line(DeleteResult("success", str(i), 200), operation="delete", **WHERE)
        for i in range(3)
    ]
    wrong_types = json.loads(good[0])
    wrong_types["outcome"] = "maybe"
    bad = [
        b"{not json}\n",
        b"\xff\xfe\n",
        b"[1, 2]\n",
        json.dumps(wrong_types).encode() + b"\n",
        json.dumps({**json.loads(good[0]), "attempts": "two"}).encode() + b"\n",
        json.dumps({**json.loads(good[0]), "entry": {"fromLang": "ja"}}).encode() + b"\n",
        b"   \n",
    ]
    content = good[0].encode() + b"".join(bad[:3]) + good[1].encode()
    content += b"".join(bad[3:]) + good[2].encode() + b'{"time": "20'
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
    with AuditLog() as log:
        log.record(
            DeleteResult("success", "17", 200, entry=FRIDAY),
            operation="delete",
            snapshot="/s/one.json",
            **WHERE,
        )
        log.record(
            DeleteResult("failure", "<i>9</i>", None, "timed out <b>", outcome_unknown=True),
            operation="delete",
            **WHERE,
        )
        log.record(DeleteResult("success", None, 200), operation="purge", **WHERE)
        log.record(
            AddResult("failure", Entry("1", "en", "a\x1b[2Jb", "fr", "c"), 400, "refused"),
            operation="add",
            **WHERE,
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
