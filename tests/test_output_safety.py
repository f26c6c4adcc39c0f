"""What the service sends cannot crash, steer or poison our output (issue 22, items 7, 12, 13).

Terms with lone surrogates, terminal control sequences and spreadsheet formulas, served by the
real sandbox, through the real command line (a subprocess) and the operations.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest
from conftest import point_at, run_cli

from dict_magics.errors import UsageProblem
from dict_magics.models import Entry
from dict_magics.operations.context import OperationSettings
from dict_magics.operations.delete import delete
from dict_magics.operations.prompts import ScriptedPrompter
from dict_magics.operations.restore import restore
from dict_magics.sandbox import SandboxServer

LONE = Entry("66", "en", "half \ud800 pair", "de", "halb")
HOSTILE_TERMS = [
    Entry("71", "en", "\x1b]0;owned\x07title", "de", "\x1b[2Jclear"),
    Entry("72", "en", "csi \x9b31m c1", "de", "cr\rover"),
    Entry("73", "en", "bidi \u202eevil", "de", "ok"),
]
RAW = ("\x1b", "\x9b", "\r", "\u202e", "\x07")
FORMULAS = [
    Entry("81", "en", '=HYPERLINK("http://x")', "de", "+1"),
    Entry("82", "en", "-2", "de", "@SUM(A1)"),
    Entry("83", "en", "\tTAB", "de", "\rCR"),
    Entry("84", "ja", "金曜日", "en", "FRI"),
]


def cli(server: SandboxServer, *args: str) -> subprocess.CompletedProcess[bytes]:
    return run_cli(server, *args, text=False)


@pytest.fixture
def box(monkeypatch: pytest.MonkeyPatch) -> SandboxServer:
    with SandboxServer(5) as server:
        server.add_entries([LONE, *HOSTILE_TERMS, *FORMULAS])
        yield point_at(monkeypatch, server)


# -- 7. a lone surrogate ------------------------------------------------------------------------


def test_a_lone_surrogate_never_crashes_list_or_delete_output(box: SandboxServer) -> None:
    listed = cli(box, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    terms = {e["id"]: e["fromText"] for e in json.loads(listed.stdout)["entries"]}
    assert terms["66"] == LONE.from_text  # the escape reads back as the same term
    assert cli(box, "list", "--csv").returncode == 0
    assert cli(box, "list").returncode == 0
    deleted = cli(box, "delete", "66", "--json")
    assert deleted.returncode == 0, deleted.stderr
    [result] = json.loads(deleted.stdout)["results"]
    assert result["outcome"] == "success" and result["entry"]["fromText"] == LONE.from_text
    assert "66" not in box.entries


def test_a_restore_says_why_a_lone_surrogate_cannot_go_back(box: SandboxServer) -> None:
    assert delete(OperationSettings(), ["66", "1"]).ok
    result = restore(OperationSettings())
    [back] = result.added  # entry 1 went back, under the new id the listing names
    assert back.id not in ("", "1") and box.entry(back.id).terms == back.terms
    [(entry, why)] = result.failed
    assert entry == LONE and "lone surrogate (U+D800)" in why
    assert "lone surrogate" in str(result)
    proc = cli(box, "restore", "--yes", "--json")  # nothing else to add: still says why
    assert proc.returncode == 1 and b"lone surrogate" in proc.stdout


# -- 12. terminal control sequences -------------------------------------------------------------


def test_delete_results_show_control_characters_as_escapes(box: SandboxServer) -> None:
    for ids in (["71"], ["72", "73"]):
        proc = cli(box, "delete", *ids)
        assert proc.returncode == 0, proc.stderr
        out = proc.stdout.decode("utf-8")
        assert not any(ch in out for ch in RAW), out
        assert "\\x1b" in out or "\\x9b" in out or "\\u202e" in out
    text = str(delete(OperationSettings(), ["84", "2"]))
    assert "84: 金曜日 \u2192 FRI" in text


def test_the_restore_confirmation_shows_a_hostile_snapshot_host_as_escapes(
    box: SandboxServer,
) -> None:
    result = delete(OperationSettings(), ["1"])
    path = result.snapshot
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    host = box.url.removeprefix("http://")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text.replace(json.dumps(host), json.dumps("evil\x1b]0;x\x07\u202ehost"), 1))
    asker = ScriptedPrompter(["no"])
    with pytest.raises(UsageProblem):
        restore(OperationSettings(), path, prompter=asker)
    warning = asker.asked[0][1]
    assert "evil" in warning and not any(ch in warning for ch in RAW), warning


# -- 13. CSV ------------------------------------------------------------------------------------


def test_csv_export_has_a_bom_and_guards_formulas(box: SandboxServer) -> None:
    proc = cli(box, "list", "--csv")
    assert proc.returncode == 0, proc.stderr
    # Into a pipe no BOM (cut sees "id"); into a file one, so Excel reads UTF-8 (Japanese) as
    # such: test_cli_scripts.py::test_list_csv_has_a_bom_in_a_file_and_none_in_a_pipe.
    assert proc.stdout.startswith(b"id,")
    rows = list(csv.reader(io.StringIO(proc.stdout.decode("utf-8"), newline="")))
    assert rows[0] == list(Entry.FIELDS)
    cells = {row[0]: row[1:] for row in rows[1:]}
    assert cells["81"] == ["en", '\'=HYPERLINK("http://x")', "de", "'+1"]
    assert cells["82"] == ["en", "'-2", "de", "'@SUM(A1)"]
    assert cells["83"] == ["en", "'\tTAB", "de", "'\rCR"]
    assert cells["84"] == ["ja", "金曜日", "en", "FRI"]
    for row in rows[1:]:
        assert not any(c[:1] in ("=", "+", "-", "@", "\t", "\r") for c in row), row


# -- 12. bounded errors, memory and parsing --------------------------------------------------------


def _through_proxy(monkeypatch: pytest.MonkeyPatch, server: SandboxServer, edit):
    from editing_proxy import EditingProxy

    proxy = EditingProxy(server.url, edit).__enter__()
    point_at(monkeypatch, server)
    monkeypatch.setenv("DICT_MAGICS_BASE_URL", proxy.url)
    return proxy


def test_an_error_for_a_malformed_listing_quotes_a_bounded_excerpt(
    monkeypatch: pytest.MonkeyPatch, box: SandboxServer
) -> None:
    from dict_magics.errors import ServiceError

    bad = {"id": ["x" * 100] * 480, "fromLang": "en", "fromText": 1, "toLang": "de", "toText": 2}

    def malformed(data: dict) -> dict:
        return {**data, "data": {"entries": [bad, bad]}}  # about 100 KB

    proxy = _through_proxy(monkeypatch, box, malformed)
    try:
        with pytest.raises(ServiceError) as raised:
            delete(OperationSettings(), ["1"])
        proc = subprocess.run(
            [sys.executable, "-m", "dict_magics", "delete", "1"],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
    finally:
        proxy.__exit__(None, None, None)
    assert "malformed" in str(raised.value) and len(str(raised.value)) < 1000
    assert proc.returncode == 1 and len(proc.stderr) < 2000 and b"malformed" in proc.stderr
    assert "1" in box.entries


def test_a_gzip_listing_of_empty_objects_is_refused_before_it_is_parsed(
    monkeypatch: pytest.MonkeyPatch, box: SandboxServer
) -> None:
    import gzip

    bomb = gzip.compress(
        b'{"status": "success", "data": {"entries": [' + b"{}," * 12_000_000 + b"{}]}}", 6
    )
    assert len(bomb) < 100_000

    proxy = _through_proxy(monkeypatch, box, lambda data: bomb)
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                "import resource, subprocess, sys;"
                "p = subprocess.run([sys.executable, '-m', 'dict_magics', 'list'],"
                " capture_output=True, text=True);"
                "sys.stderr.write(p.stderr);"
                "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
            ],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=300,
        )
    finally:
        proxy.__exit__(None, None, None)
    code, peak_kib = (int(x) for x in proc.stdout.split())
    assert code == 1 and "larger than" in proc.stderr, proc.stderr
    assert peak_kib < 300 * 1024, f"peak RSS {peak_kib // 1024} MiB"


@pytest.mark.timeout(60)
def test_a_long_value_on_a_magic_line_is_read_in_linear_time(ip) -> None:
    """A 1.28-million-character value took 69 s to tokenise (quadratic); the bound here is a
    safety limit far above the linear time (milliseconds), not a speed target."""
    from IPython.utils._process_common import arg_split

    from dict_magics.frontends.magics import split_line

    value = '"' + "x" * 1_280_000 + '"'
    assert split_line(f"--dry-run {value}") == ["--dry-run", value]
    for line in ['a "b c" d', "'x y'z w", 'a"b c"', '"" x', "tab\there", "q\"uo'te"]:
        assert split_line(line) == arg_split(line, strict=True), line
    with pytest.raises(ValueError, match="No closing quotation"):
        split_line('a "b')
    outcome = ip.run_cell(f"%dict_restore --dry-run {value}")
    assert outcome.error_in_exec is not None  # no such snapshot file: refused, quickly
