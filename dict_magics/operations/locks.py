"""One restore at a time per profile and host, and none before an earlier one's additions land.

A restore decides what to add from a listing. Two restores at once would both see the same
entries missing and both add them; so each holds ``RestoreLock`` (a ``filelock`` lock file in
``<DICT_MAGICS_HOME>/locks``, released by the system when its process dies) from that listing to
its last answer.

A process killed mid-restore leaves POSTs in flight: a slow service may still add those entries
a moment later, after the lock is gone. Before each POST the holder notes in a small file beside
the lock the time by which that request's answer is due (one ``pwrite``, no sync: the file only
has to outlive the process, not the machine). A finished restore removes the note; the next
holder that finds one waits until that time has passed (at most one request deadline) before it
lists, so it sees those additions rather than adding them again.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from .. import localdata
from .context import Warn, say

_WIDTH = 24


class RestoreLock:
    """The restore lock of one profile and host; a context manager."""

    def __init__(self, profile: str, host: str, timeout: float, warn: Warn = None) -> None:
        digest = hashlib.sha256(f"{profile}\0{host}".encode("utf-8", "surrogatepass")).hexdigest()
        self.name = f"restore-{digest[:24]}"
        self.timeout = timeout
        self._warn = warn
        self._lock = None
        self._note: int | None = None
        self._due = 0.0
        self.waited = 0.0
        """Seconds spent waiting for an earlier restore's additions to land."""

    def _paths(self) -> tuple[Path, Path]:
        folder = localdata.home("locks")
        return folder / f"{self.name}.lock", folder / f"{self.name}.sending"

    def __enter__(self) -> RestoreLock:
        from filelock import FileLock, Timeout

        lock_path, note_path = self._paths()
        self._lock = FileLock(str(lock_path), mode=0o600)
        try:
            self._lock.acquire(timeout=0.2)
        except Timeout:
            say(self._warn, "another restore of this profile and host is running: waiting for it")
            self._lock.acquire()
        try:
            self._wait_for_an_earlier_run(note_path)
            self._note = localdata.open_private(note_path, os.O_RDWR | os.O_CREAT)
        except BaseException:
            self._lock.release()
            raise
        return self

    def _wait_for_an_earlier_run(self, note_path: Path) -> None:
        """Sleep until the answers of a dead restore's last POSTs were due (bounded)."""
        try:
            fd = localdata.open_private(note_path, os.O_RDONLY)
        except FileNotFoundError:
            return
        try:
            raw = os.read(fd, _WIDTH)
        finally:
            os.close(fd)
        try:
            due = float(raw.decode("ascii").strip() or 0)
        except (UnicodeDecodeError, ValueError):
            due = time.time() + self.timeout + 1  # torn: assume the worst, still bounded
        wait = min(due - time.time(), self.timeout + 1)
        if wait > 0:
            say(
                self._warn,
                f"an earlier restore stopped with additions in flight: waiting {wait:.1f} s "
                "for them to land before listing",
            )
            time.sleep(wait)
            self.waited = wait

    def sending(self) -> None:
        """A POST is about to leave: its answer is due within one deadline from now."""
        if self._note is None:
            return
        due = time.time() + self.timeout + 1
        if due - self._due < 0.05:
            return  # noted a moment ago
        self._due = due
        os.pwrite(self._note, f"{due:<{_WIDTH - 1}.3f}\n".encode("ascii"), 0)

    def __exit__(self, *exc_info: object) -> None:
        # Reached only once every request this process sent was answered or gave up.
        try:
            if self._note is not None:
                os.close(self._note)
                self._note = None
                self._paths()[1].unlink(missing_ok=True)
        finally:
            if self._lock is not None:
                self._lock.release()
