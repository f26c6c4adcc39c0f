"""The data folder: every level dict-magics makes is 0700, its own folders found wider are
tightened, the user's folders around it are left alone, and its files are never reached through
a symbolic link planted in their place."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from dict_magics import localdata


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The common umask, under which ``mkdir -p`` makes parents 0755."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.usefixtures("umask_022")
def test_every_missing_level_is_made_0700(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "made" / "by-us" / "dm"
    monkeypatch.setenv(localdata.ENV_HOME, str(home))
    assert localdata.home("snapshots") == home / "snapshots"
    for level in (tmp_path / "made", tmp_path / "made" / "by-us", home, home / "snapshots"):
        assert _mode(level) == 0o700, level


@pytest.mark.usefixtures("umask_022")
def test_a_sub_folder_made_before_the_data_folder_does_not_open_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "dm"
    monkeypatch.setenv(localdata.ENV_HOME, str(home))
    localdata.private_folder(localdata.location("nonces"))  # the data folder made as a parent
    assert _mode(home) == 0o700 and _mode(home / "nonces") == 0o700


def test_our_folders_found_open_are_tightened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "dm"
    (home / "snapshots").mkdir(parents=True)
    # e.g. made by hand, or under another umask: the case under test
    os.chmod(home, 0o777)  # noqa: S103
    os.chmod(home / "snapshots", 0o777)  # noqa: S103
    monkeypatch.setenv(localdata.ENV_HOME, str(home))
    localdata.home("snapshots")
    assert _mode(home) == 0o700 and _mode(home / "snapshots") == 0o700


def test_the_users_folders_around_ours_are_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "projects"
    outside.mkdir()
    os.chmod(outside, 0o755)  # noqa: S103 - the user's, as it often is
    monkeypatch.setenv(localdata.ENV_HOME, str(outside / "dm"))
    localdata.home("snapshots")
    localdata.atomic_write(outside / "export.json", b"{}")
    os.close(localdata.open_private(outside / "notes.txt", os.O_CREAT | os.O_WRONLY))
    assert _mode(outside) == 0o755


def test_open_private_refuses_a_symbolic_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own file\n")
    os.chmod(victim, 0o644)
    link = tmp_path / "dm" / "audit.jsonl"
    link.parent.mkdir()
    link.symlink_to(victim)
    with pytest.raises(OSError, match="symbolic link"):
        localdata.open_private(link, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    assert victim.read_text() == "the user's own file\n" and _mode(victim) == 0o644


def test_open_private_refuses_anything_but_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "state"
    os.mkfifo(fifo, 0o600)
    with pytest.raises(OSError, match="not a regular file"):
        localdata.open_private(fifo, os.O_RDWR | os.O_CREAT)
    fd = localdata.open_private(tmp_path / "fresh", os.O_RDWR | os.O_CREAT)
    os.close(fd)
    assert _mode(tmp_path / "fresh") == 0o600


def test_write_new_makes_a_private_file_and_never_writes_over_or_through_anything(
    tmp_path: Path,
) -> None:
    made = localdata.write_new(tmp_path / "new.json", b"whole\n")
    assert made.read_bytes() == b"whole\n" and _mode(made) == 0o600
    with pytest.raises(FileExistsError):
        localdata.write_new(made, b"again\n")
    assert made.read_bytes() == b"whole\n"
    victim = tmp_path / "victim.txt"
    victim.write_text("do not touch\n")
    (tmp_path / "link.json").symlink_to(victim)
    with pytest.raises(FileExistsError):
        localdata.write_new(tmp_path / "link.json", b"planted\n")
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "not-there.txt")
    with pytest.raises(FileExistsError):
        localdata.write_new(dangling, b"planted\n")
    assert victim.read_text() == "do not touch\n"
    assert not (tmp_path / "not-there.txt").exists()


def test_home_tightens_a_folder_opened_after_it_was_first_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "dm"
    monkeypatch.setenv(localdata.ENV_HOME, str(home))
    assert localdata.home("snapshots") == home / "snapshots"
    os.chmod(home / "snapshots", 0o755)  # noqa: S103 - opened by hand: the case under test
    localdata.home("snapshots")
    assert _mode(home / "snapshots") == 0o700
    (home / "snapshots").rmdir()
    assert localdata.home("snapshots").is_dir()


@pytest.mark.parametrize("name", ["snapshots", "nonces", "locks"])
def test_a_folder_of_ours_that_is_a_symbolic_link_is_not_followed(
    name: str, tmp_path: Path
) -> None:
    """``snapshots/`` (or ``nonces/``) planted as a link to another folder: refused, nothing
    written there, and that folder's mode left as it was (issue 22, item 11)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    os.chmod(elsewhere, 0o755)  # noqa: S103 - a folder that is not ours, as found
    localdata.home()
    (localdata.location() / name).symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(OSError, match="symbolic link"):
        localdata.home(name)
    with pytest.raises(OSError, match="symbolic link"):
        localdata.private_folder(localdata.location() / name)
    assert stat.S_IMODE(elsewhere.stat().st_mode) == 0o755 and list(elsewhere.iterdir()) == []


def test_no_snapshot_goes_through_a_linked_snapshots_folder(tmp_path: Path) -> None:
    from dict_magics.errors import LocalDataError
    from dict_magics.models import Entry
    from dict_magics.operations.snapshots import write_snapshot as take_snapshot

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    os.chmod(elsewhere, 0o755)  # noqa: S103 - a folder that is not ours, as found
    localdata.home()
    (localdata.location() / "snapshots").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(LocalDataError, match="symbolic link"):
        take_snapshot(
            [Entry("1", "en", "a", "de", "b")],
            profile="p",
            host="h",
            base_url="http://127.0.0.1:1",
            operation="delete",
        )
    assert stat.S_IMODE(elsewhere.stat().st_mode) == 0o755 and list(elsewhere.iterdir()) == []


def test_the_nonce_state_does_not_go_through_a_linked_nonces_folder(tmp_path: Path) -> None:
    from dict_magics.sandbox import SandboxServer
    from dict_magics.service.client import DictionaryClient

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    os.chmod(elsewhere, 0o755)  # noqa: S103 - a folder that is not ours, as found
    localdata.home()
    (localdata.location() / "nonces").symlink_to(elsewhere, target_is_directory=True)
    with SandboxServer(3) as box:
        client = DictionaryClient(box.url, box.access_key, box.secret_key)
        try:
            try:
                client.delete_entry("1")
            except OSError as exc:
                assert "symbolic link" in str(exc)
        finally:
            client.close()
    assert stat.S_IMODE(elsewhere.stat().st_mode) == 0o755 and list(elsewhere.iterdir()) == []
