"""Snapshots on disk: the exact format, private modes, atomic writes, listing, bad files.

Also the text and HTML of the snapshot list and of a restore's result.
"""

from __future__ import annotations

import json
import re
import signal
import stat
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from dict_magics import localdata
from dict_magics.errors import DictMagicsError, UsageProblem
from dict_magics.models import Entry, RestoreResult, SnapshotList
from dict_magics.operations import snapshots
from dict_magics.operations.snapshots import (
    FORMAT,
    latest_snapshot,
    list_snapshots,
    read_snapshot,
    write_snapshot,
)

ENTRIES = [
    Entry("17", "ja", "金曜日", "en", "FRI"),
    Entry("007", "de", "Straße \u00df", "fr", "rue \u00e9 \U0001f600"),
    Entry("a b/c", "zh", "行\n换\t\x1b[31m", "en", 'say "hi" \\ {}'),
]
SERVICE = {"profile": "default", "host": "127.0.0.1:8080", "base_url": "http://127.0.0.1:8080"}


def _write(entries=ENTRIES, operation="delete", **overrides) -> snapshots.Snapshot:
    return read_snapshot(write_snapshot(entries, operation=operation, **{**SERVICE, **overrides}))


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# -- the format --------------------------------------------------------------------------------


def test_file_is_exactly_the_design_format() -> None:
    before = datetime.now(timezone.utc)
    snap = _write(operation="purge")
    raw = snap.path.read_bytes()
    data = json.loads(raw.decode("utf-8"))
    assert list(data) == [
        "format",
        "taken_at",
        "profile",
        "host",
        "base_url",
        "operation",
        "added",
        "entries",
    ]
    assert data["format"] == "dict-magics-snapshot/2"
    assert data["added"] == []
    assert data["profile"] == "default"
    assert data["host"] == "127.0.0.1:8080"
    assert data["base_url"] == "http://127.0.0.1:8080"
    assert data["operation"] == "purge"
    taken_at = datetime.fromisoformat(data["taken_at"])
    assert taken_at.utcoffset() == timedelta(0)
    assert before - timedelta(seconds=1) <= taken_at <= datetime.now(timezone.utc)
    assert taken_at == snap.taken_at
    assert len(data["entries"]) == len(ENTRIES)
    for written, entry in zip(data["entries"], ENTRIES, strict=True):
        assert list(written) == ["id", "fromLang", "fromText", "toLang", "toText"]
        assert written == {
            "id": entry.id,
            "fromLang": entry.from_lang,
            "fromText": entry.from_text,
            "toLang": entry.to_lang,
            "toText": entry.to_text,
        }
    # UTF-8 as is (not \u escapes), so the file reads like the terms it keeps.
    assert "金曜日".encode() in raw
    assert "\U0001f600".encode() in raw


def test_round_trip_keeps_every_field_and_non_ascii_term() -> None:
    snap = _write()
    back = read_snapshot(snap.path)
    assert back.entries == ENTRIES
    assert (back.profile, back.host, back.base_url, back.operation) == (
        "default",
        "127.0.0.1:8080",
        "http://127.0.0.1:8080",
        "delete",
    )
    assert back.taken_at == snap.taken_at
    assert back.path == snap.path
    assert read_snapshot(str(snap.path)).entries == ENTRIES


def test_lone_surrogate_from_a_service_round_trips() -> None:
    odd = Entry.from_service(
        json.loads(
            '{"id": 5, "fromLang": "ja", "fromText": "a\\ud800b", "toLang": "en", "toText": "x"}'
        )
    )
    snap = _write(entries=[odd])
    snap.path.read_bytes().decode("utf-8")  # valid UTF-8
    assert read_snapshot(snap.path).entries == [odd]
    assert list_snapshots()[0].count == 1


def test_empty_snapshot_round_trips() -> None:
    snap = _write(entries=[])
    assert read_snapshot(snap.path).entries == []
    assert list_snapshots()[0].count == 0


def test_file_name_says_when_where_and_what() -> None:
    snap = _write(profile="team/a b", host="[::1]:8443", operation="purge")
    assert snap.path.parent == localdata.home("snapshots")
    assert re.fullmatch(
        r"\d{8}T\d{12}Z-team_a_b-1_8443-purge-n\d+-[0-9a-f]{6}\.json", snap.path.name
    ), snap.path.name
    assert snap.profile == "team/a b" and snap.host == "[::1]:8443"


def test_modes_are_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "not" / "yet" / "there"
    monkeypatch.setenv(localdata.ENV_HOME, str(home))
    snap = _write()
    assert _mode(snap.path) == 0o600
    assert _mode(snap.path.parent) == 0o700
    assert _mode(home) == 0o700
    assert not list(snap.path.parent.glob(".*")), "no temporary file is left behind"


def test_no_secret_or_key_in_the_file(sandbox) -> None:
    from dict_magics.service.client import DictionaryClient

    entries = [Entry(i, "ja", f"語{i}", "en", f"word {i}") for i in ("1", "2")]
    with DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key) as client:
        snap = write_snapshot(
            entries, profile="default", host=client.host, base_url=sandbox.url, operation="delete"
        )
        assert client.delete_entries([e.id for e in entries]).ok
    text = snap.read_text(encoding="utf-8")
    assert sandbox.secret_key not in text
    assert sandbox.access_key not in text
    assert "secret" not in text.lower() and "key" not in text.lower()


def test_operation_must_be_purge_or_delete() -> None:
    with pytest.raises(ValueError, match="operation"):
        _write(operation="add")
    assert list_snapshots() == []


# -- atomicity ---------------------------------------------------------------------------------

KILLED_WRITER = textwrap.dedent(
    """
    import resource, signal, sys
    from dict_magics.operations.snapshots import write_snapshot
    from dict_magics.models import Entry

    # Python ignores SIGXFSZ; restore the default so that passing the size limit kills the
    # process in the middle of its write, with no chance to clean up, like a power cut would.
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))
    entries = [Entry(str(i), "ja", "語" * 20, "en", "word" * 10) for i in range(20_000)]
    write_snapshot(entries, profile="default", host="h", base_url="http://h", operation="purge")
    print("finished")
    """
)


def test_writer_killed_mid_write_leaves_nothing_listed_or_restorable() -> None:
    kept = _write(profile="default", host="h")
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_WRITER], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == -signal.SIGXFSZ, proc.stderr
    assert "finished" not in proc.stdout
    folder = kept.path.parent
    leftovers = [p for p in folder.iterdir() if p != kept.path]
    assert len(leftovers) == 1, leftovers
    (short,) = leftovers
    assert short.stat().st_size == 200_000, "the writer died mid-write"
    assert short.read_bytes().startswith(b'{"format": "dict-magics-snapshot/2"')
    assert [i.path for i in list_snapshots()] == [kept.path]
    assert latest_snapshot("default", "h").path == kept.path
    with pytest.raises(UsageProblem, match=r"cut short .*nothing was deleted after it"):
        read_snapshot(short)
    newer = _write(profile="default", host="h")
    assert latest_snapshot("default", "h").path == newer.path


def test_listing_ignores_temporary_files_even_when_whole() -> None:
    kept = _write()
    folder = kept.path.parent
    (folder / f".{kept.path.name[:-5]}-x.json.abc123.tmp").write_bytes(kept.path.read_bytes())
    (folder / ".hidden.json").write_bytes(kept.path.read_bytes())
    assert [i.path for i in list_snapshots()] == [kept.path]


# -- listing -----------------------------------------------------------------------------------


def test_a_stray_file_nested_too_deep_to_parse_is_left_out() -> None:
    kept = _write()
    depth = 5_000  # past the JSON parser's recursion limit, within the header line's
    line = '{"format": ' + "[" * depth + "]" * depth + ', "entries": [\n'
    (kept.path.parent / "stray.json").write_text(line + "]}\n")
    (kept.path.parent / "stray-2.json").write_text("[" * depth + "]" * depth)
    assert [i.path for i in list_snapshots()] == [kept.path]
    assert latest_snapshot(kept.profile, kept.host).path == kept.path


def test_listing_is_newest_first_and_filters_by_profile_and_host() -> None:
    written = [
        _write(profile="default", host="a.example", entries=ENTRIES[:1]),
        _write(profile="team", host="a.example", entries=ENTRIES[:2], operation="purge"),
        _write(profile="default", host="b.example", entries=[]),
        _write(profile="default", host="a.example", entries=ENTRIES),
    ]
    listed = list_snapshots()
    assert [i.path for i in listed] == [s.path for s in reversed(written)]
    assert [i.count for i in listed] == [3, 0, 2, 1]
    assert [i.operation for i in listed] == ["delete", "delete", "purge", "delete"]
    assert listed[0].taken_at == written[-1].taken_at
    assert listed[0].base_url == SERVICE["base_url"]
    assert [i.path for i in list_snapshots(profile="default")] == [
        written[3].path,
        written[2].path,
        written[0].path,
    ]
    assert [i.path for i in list_snapshots(host="a.example")] == [
        written[3].path,
        written[1].path,
        written[0].path,
    ]
    assert [i.path for i in list_snapshots(profile="team", host="a.example")] == [written[1].path]
    assert list_snapshots(profile="nobody") == []
    assert latest_snapshot("default", "a.example").path == written[3].path
    assert latest_snapshot("team", "b.example") is None


def test_listing_orders_by_taken_at_not_by_file_name() -> None:
    old = _write(entries=ENTRIES[:1])
    data = json.loads(old.path.read_text(encoding="utf-8"))
    data["taken_at"] = "2001-01-01T00:00:00Z"
    renamed = old.path.with_name("99999999T999999999999Z-default-h-delete-ffffff.json")
    renamed.write_text(json.dumps(data), encoding="utf-8")
    old.path.unlink()
    new = _write()
    assert [i.path for i in list_snapshots()] == [new.path, renamed]


def test_listing_counts_files_in_another_layout_and_skips_non_snapshots() -> None:
    ours = _write()
    folder = ours.path.parent
    pretty = folder / "pretty.json"
    data = json.loads(ours.path.read_text(encoding="utf-8"))
    pretty.write_text(json.dumps(data, indent=2, ensure_ascii=True), encoding="utf-8")
    # Our header line, but an entries section edited by hand: parsed whole, counted right.
    edited = folder / "edited.json"
    lines = ours.path.read_text(encoding="utf-8").splitlines()
    edited.write_text(lines[0] + "\n" + " ".join(lines[1:]), encoding="utf-8")
    (folder / "notes.json").write_text('{"hello": "world"}', encoding="utf-8")
    (folder / "broken.json").write_bytes(b'{"format": "dict-magics-snapshot/1", "entr')
    (folder / "readme.txt").write_text("not a snapshot", encoding="utf-8")
    (folder / "sub.json").mkdir()
    listed = {i.path.name: i.count for i in list_snapshots()}
    assert listed == {ours.path.name: 3, "pretty.json": 3, "edited.json": 3}
    assert read_snapshot(pretty).entries == ENTRIES


def test_listing_does_not_parse_entries_of_files_in_our_layout() -> None:
    snap = _write()
    raw = snap.path.read_bytes()
    header, _, rest = raw.partition(b"\n")
    # Break every entry but keep one per line: the listing still counts them from the layout,
    # while reading the file reports the bad entry.
    broken = header + b"\n" + rest.replace(b'"fromLang"', b'"from_lang"')
    snap.path.write_bytes(broken)
    assert list_snapshots()[0].count == 3
    with pytest.raises(UsageProblem, match="entry #1: an entry lacks fromLang"):
        read_snapshot(snap.path)


# -- bad files ---------------------------------------------------------------------------------

GOOD = {
    "format": FORMAT,
    "taken_at": "2024-05-01T12:00:00Z",
    "profile": "default",
    "host": "h",
    "base_url": "http://h",
    "operation": "delete",
    "entries": [{"id": 1, "fromLang": "ja", "fromText": "金", "toLang": "en", "toText": "FRI"}],
}


def _with(**changes) -> bytes:
    data = {**GOOD, **changes}
    return json.dumps({k: v for k, v in data.items() if v is not ...}).encode()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "not valid JSON"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b"[1, 2]", "not a JSON object"),
        (b"[" * 100_000, "not valid JSON"),
        (json.dumps({"entries": []}).encode(), "not a dict-magics snapshot"),
        (_with(format="something-else/1"), "not a dict-magics snapshot"),
        (_with(format="dict-magics-snapshot/3"), "cannot read.*upgrade"),
        (
            _with(format="dict-magics-snapshot/1", operation="sync"),
            "operation 'sync' is not one of 'purge', 'delete'",
        ),
        (_with(format="dict-magics-snapshot/2", added={}), "'added' is not a list"),
        (
            _with(format="dict-magics-snapshot/2", added=[{"fromLang": "ja"}]),
            "added #1: an entry lacks",
        ),
        (_with(host=...), "'host' is missing or not text"),
        (_with(profile=3), "'profile' is missing or not text"),
        (_with(operation="rename"), "operation 'rename'"),
        (_with(taken_at="yesterday"), "taken_at 'yesterday'"),
        (_with(entries={"id": 1}), "'entries' is not a list"),
        (_with(entries=[{"id": 1, "fromLang": "ja"}]), "entry #1: an entry lacks fromText"),
        (_with(entries=[GOOD["entries"][0], "x"]), "entry #2: an entry must be a JSON object"),
        (_with(entries=[{**GOOD["entries"][0], "id": True}]), "entry #1: an entry id"),
        (_with(entries=[{**GOOD["entries"][0], "toText": 5}]), "entry #1: .*not text"),
    ],
)
def test_bad_file_is_a_clear_usage_problem(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(UsageProblem, match=message) as caught:
        read_snapshot(path)
    assert str(path) in str(caught.value)
    assert isinstance(caught.value, DictMagicsError)
    assert caught.value.__cause__ is None


def test_good_file_from_elsewhere_reads(tmp_path: Path) -> None:
    path = tmp_path / "good.json"
    path.write_bytes(_with())
    snap = read_snapshot(path)
    assert snap.entries == [Entry("1", "ja", "金", "en", "FRI")]
    assert snap.taken_at == datetime(2024, 5, 1, 12, tzinfo=timezone.utc)


def test_missing_file_and_folder_are_clear(tmp_path: Path) -> None:
    with pytest.raises(UsageProblem, match=r"no snapshot at .*nope") as missing:
        read_snapshot(tmp_path / "nope.json")
    assert missing.value.option == "snapshots"  # the front end names its snapshots command
    with pytest.raises(UsageProblem, match="is a folder"):
        read_snapshot(tmp_path)


def test_unreadable_path_is_clear(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file.json"
    blocker.write_bytes(_with())
    with pytest.raises(UsageProblem, match=r"cannot read the snapshot .*: Not a directory"):
        read_snapshot(blocker / "inside.json")


# -- rendering ---------------------------------------------------------------------------------


def test_snapshot_list_text_and_html() -> None:
    _write(profile="<b>p</b>", host="evil\x1b[2J.example", entries=ENTRIES[:2], operation="purge")
    _write()
    infos = SnapshotList(list_snapshots())
    text = str(infos)
    lines = text.splitlines()
    assert lines[0] == "2 snapshots, newest first"
    assert lines[1].split() == ["when", "host", "profile", "operation", "holds", "path"]
    assert str(infos[0].path) in lines[2] and "127.0.0.1:8080" in lines[2]
    assert "evil\\x1b[2J.example" in lines[3] and "\x1b" not in text
    assert " purge " in lines[3] and " 2 entries " in lines[3]
    html = infos._repr_html_()
    assert "&lt;b&gt;p&lt;/b&gt;" in html and "<b>p</b>" not in html
    assert infos[0].path.name in html and str(infos[0].path) in html
    assert html.count("<tr>") == 3
    assert "No snapshots yet" in str(SnapshotList())
    assert "No snapshots yet" in SnapshotList()._repr_html_()


def test_restore_text_says_what_was_added_skipped_failed_and_unknown() -> None:
    a, b, c = ENTRIES
    result = RestoreResult(added=[a], skipped=[b], failed=[(c, "HTTP 400: bad <term>")])
    text = str(result)
    assert text.splitlines()[0] == (
        "\u2717 restored 1 of 2 entries; 1 already present (skipped); 1 not restored"
    )
    assert "\u2717 行\\n换\\t\\x1b[31m" in text and "HTTP 400: bad <term>" in text
    assert f"\u2713 added entry {a.id}: 金曜日 \u2192 FRI (ja\u2192en)" in text
    assert str(result) == text
    html = result._repr_html_()
    assert "bad &lt;term&gt;" in html and "<term>" not in html
    assert result._repr_html_() == html
    unknown = str(RestoreResult(added=[a], unknown=[b]))
    assert unknown.startswith("? restored 1 of 2 entries; 1 with unknown outcome")
    assert "may or may not have been added" in unknown
    assert str(RestoreResult(added=[a, b], skipped=[c])).startswith(
        "\u2713 restored 2 entries; 1 already present (skipped)"
    )
    assert "nothing to restore" in str(RestoreResult())


def test_restore_dry_run_says_would_add_and_long_lists_are_cut() -> None:
    many = [Entry(str(i), "ja", f"語{i}", "en", f"w{i}") for i in range(25)]
    text = str(RestoreResult(added=many, skipped=ENTRIES[:1], dry_run=True))
    lines = text.splitlines()
    assert lines[0] == (
        "\u2713 would add 25 entries; 1 already present (skipped) "
        "(dry run: nothing that changes the dictionary was sent)"
    )
    assert lines[1] == "  \u2713 would add 語0 \u2192 w0 (ja\u2192en)"
    assert len(lines) == 1 + 20 + 1 and lines[-1] == "  \u2026 and 5 more"
    assert "restored" not in text and "added " not in text
    assert "would add 25 entries" in RestoreResult(added=many, dry_run=True)._repr_html_()
    # Put-backs and removals are counted past the first 20 too (they were cut silently).
    undo = str(RestoreResult(put_back=many, removed=many[:22])).splitlines()
    assert undo.count("  \u2026 and 5 more") == 1 and undo.count("  \u2026 and 2 more") == 1
    assert len(undo) == 1 + 20 + 1 + 20 + 1


# -- format 2 ------------------------------------------------------------------------------------


def test_version_1_snapshots_stay_readable(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps({**GOOD, "format": "dict-magics-snapshot/1"}), encoding="utf-8")
    snap = read_snapshot(path)
    assert (snap.format, snap.operation, snap.added) == ("dict-magics-snapshot/1", "delete", [])
    assert [e.terms for e in snap.entries] == [("ja", "金", "en", "FRI")]


@pytest.mark.parametrize("operation", ["update", "sync"])
def test_format_2_keeps_what_was_changed_and_what_was_added(operation: str) -> None:
    from dict_magics.operations.snapshots import write_snapshot

    old = [Entry("7", "en", "Monday", "de", "Montag"), Entry("9", "en", 'x\n"y', "de", "z")]
    added = [Entry("", "en", "new", "de", "neu"), Entry("", "en", "new", "de", "neu")]
    snap = write_snapshot(
        old, profile="p", host="h", base_url="http://h", operation=operation, added=added
    )
    back = read_snapshot(snap)
    assert back.operation == operation and back.format == "dict-magics-snapshot/2"
    assert back.entries == old
    assert [e.terms for e in back.added] == [e.terms for e in added]
    (info,) = list_snapshots()
    assert (info.operation, info.count) == (operation, 2)


def test_latest_follows_the_order_snapshots_were_taken_not_their_clock() -> None:
    """A snapshot taken while the clock was a day ahead must not hide a later one (issue 22,
    item 10): "latest" follows a sequence in the file name, not ``taken_at``."""
    ahead = _write(operation="purge")
    text = ahead.path.read_text("utf-8")
    tomorrow = (ahead.taken_at + timedelta(days=1)).isoformat(timespec="microseconds")
    ahead.path.write_text(text.replace(ahead.taken_at.isoformat(timespec="microseconds"), tomorrow))
    later = _write(ENTRIES[:1], operation="purge")
    assert read_snapshot(ahead.path).taken_at > later.taken_at  # the clock says otherwise
    latest = latest_snapshot(SERVICE["profile"], SERVICE["host"])
    assert latest is not None and latest.path == later.path
    assert [i.path for i in list_snapshots()] == [later.path, ahead.path]


def test_a_sequence_file_that_went_missing_starts_above_the_snapshots_there() -> None:
    first = _write(operation="purge")
    (first.path.parent.parent / "snapshot-sequence").unlink()
    second = _write(operation="purge")
    assert [i.path for i in list_snapshots()] == [second.path, first.path]
