"""Nonces: numeric, strictly increasing per access key across the threads and processes here.

The service refuses a nonce not greater than the last one it accepted for the key (40005), and a
user may run two kernels or a kernel and the command line with one key. So each key's last nonce
is kept in ``<DICT_MAGICS_HOME>/nonces/<hash of the key>.nonce``, read and written under
``flock`` on a descriptor this process keeps open: a few system calls a nonce. Requests sent in
parallel can still arrive out of order; the client re-sends a refused one with a fresh nonce.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time

from .. import localdata
from ..models.codes import MAX_NONCE

__all__ = ["NonceSource", "nonces_for"]

log = logging.getLogger(__name__)
MAX_SKIP_MS = 60_000
"""The most ``skip_ahead`` moves the values past the clock at once."""

try:
    import fcntl
except ImportError:  # Windows: nonces are shared by this process's threads only
    fcntl = None  # type: ignore[assignment]


class NonceSource:
    """Unix time in milliseconds, each value above every value drawn before for this key."""

    def __init__(self, access_key: str) -> None:
        digest = hashlib.sha256(("dict-magics nonces\0" + access_key).encode("utf-8", "replace"))
        self.path = localdata.location("nonces", digest.hexdigest()[:32] + ".nonce")
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._pid = 0
        self._last = 0
        self._floor = 0
        self._shared = fcntl is not None

    def __repr__(self) -> str:
        return f"NonceSource({self.path.name[:12]}\u2026)"

    def __call__(self) -> str:
        with self._lock:
            value = max(time.time_ns() // 1_000_000, self._last + 1, self._floor)
            if self._shared:
                try:
                    value = self._draw_shared(value)
                except OSError as exc:
                    self._shared = False
                    log.warning(
                        "cannot keep nonces in %s (%s): they are now unique within this process "
                        "only, so another process using this access key may be refused",
                        self.path.parent,
                        exc.strerror or exc,
                    )
            self._last = value
            return str(value)

    def skip_ahead(self, ms: int) -> None:
        """Make the next values at least ``ms`` (at most ``MAX_SKIP_MS``) past the clock: the
        service keeps refusing them as too small, so it accepted larger ones elsewhere."""
        self._floor = max(self._floor, time.time_ns() // 1_000_000 + min(ms, MAX_SKIP_MS))

    def _draw_shared(self, value: int) -> int:
        """Above the state file's value too, written back (under ``flock``)."""
        if self._fd is None or self._pid != os.getpid():  # a forked child opens its own
            localdata.home("nonces")
            self._fd = localdata.open_private(self.path, os.O_RDWR | os.O_CREAT)
            self._pid = os.getpid()
        fd = self._fd
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            raw = os.pread(fd, 32, 0)
            last = int(raw) if raw.strip().isdigit() and int(raw) < MAX_NONCE else 0
            value = max(value, last + 1)
            os.pwrite(fd, b"%020d\n" % value, 0)
            if len(raw) > 21:  # a damaged, longer content: cut off
                os.ftruncate(fd, 21)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
        return value


_sources: dict[tuple[str, str], NonceSource] = {}
_sources_lock = threading.Lock()


def nonces_for(access_key: str) -> NonceSource:
    """The one nonce source of ``access_key`` (and data folder) in this process."""
    key = (str(localdata.location()), access_key)
    with _sources_lock:
        source = _sources.get(key)
        if source is None:
            source = _sources[key] = NonceSource(access_key)
        return source
