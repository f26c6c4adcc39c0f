"""One restore at a time per profile and host, and none before an earlier one's additions land.

Two restores at once would both list the same entries as missing and both add them. A killed
restore may leave POSTs in flight, so the holder notes when their answers are due in a file
beside the lock; the next holder waits until then (at most one deadline) before it lists.
"""

from __future__ import annotations

import hashlib
import os
import time
from typing import TYPE_CHECKING

from .. import localdata
from .context import Warn, say

if TYPE_CHECKING:
    from filelock import BaseFileLock

_WIDTH = 24


class RestoreLock:
    """The restore lock of one profile and host; a context manager."""

    def __init__(self, profile: str, host: str, timeout: float, warn: Warn = None) -> None:
        digest = hashlib.sha256(f"{profile}\0{host}".encode("utf-8", "surrogatepass")).hexdigest()
        self.name = f"restore-{digest[:24]}"
        self.timeout = timeout
        self._warn = warn
        self._lock: BaseFileLock | None = None
        self._note: int | None = None
        self._due = 0.0
        self.waited = 0.0
        """Seconds spent waiting for an earlier restore's additions to land."""

    def __enter__(self) -> RestoreLock:
        from filelock import FileLock, Timeout

        folder = localdata.home("locks")
        self._note_path = folder / f"{self.name}.sending"
        self._lock = lock = FileLock(str(folder / f"{self.name}.lock"), mode=0o600)
        try:
            lock.acquire(timeout=0.2)
        except Timeout:
            say(self._warn, "another restore of this profile and host is running: waiting for it")
            lock.acquire()
        try:
            self._note = localdata.open_private(self._note_path, os.O_RDWR | os.O_CREAT)
            self._wait_for_an_earlier_run(os.pread(self._note, _WIDTH, 0))
        except BaseException:  # the note stays: the next restore waits for it
            if self._note is not None:
                os.close(self._note)
            lock.release()
            raise
        return self

    def _wait_for_an_earlier_run(self, raw: bytes) -> None:
        """Sleep until the answers of a dead restore's last POSTs were due (bounded); ``raw``:
        the note a restore that died left (empty: none)."""
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
        due = time.time() + self.timeout + 1
        if self._note is None or due - self._due < 0.05:  # none, or noted a moment ago
            return
        self._due = due
        os.pwrite(self._note, f"{due:<{_WIDTH - 1}.3f}\n".encode("ascii"), 0)

    def __exit__(self, *exc_info: object) -> None:
        # Reached only once every request this process sent was answered or gave up.
        try:
            if self._note is not None:
                os.close(self._note)
                self._note = None
                self._note_path.unlink(missing_ok=True)
        finally:
            if self._lock is not None:
                self._lock.release()
