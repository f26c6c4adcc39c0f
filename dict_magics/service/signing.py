"""The one signing helper every request goes through, and the nonces it signs with.

The service authenticates a request by ``signature = hex(HMAC-SHA256(secret, nonce + path))``,
as its own client samples compute it. Keeping this in one place means the magics, the panel,
the command line and the sandbox can never disagree about what a valid request is.

The service rejects a nonce its access key has used before, and a user may run several
processes with one key at once (two terminals, two kernels). ``SignedAuth`` therefore takes its
nonces from a source shared by every process on the machine that uses the same access key.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from requests import PreparedRequest
from requests.auth import AuthBase

from .. import localdata
from ..models.secret import Secret, Unpicklable

__all__ = [
    "NonceSource",
    "SharedNonceSource",
    "SignedAuth",
    "next_nonce",
    "nonces_for",
    "sign",
]

log = logging.getLogger(__name__)

BLOCK = 64
"""Values a process reserves at least per file lock (taking the lock costs 0.1-0.2 ms)."""
WINDOW_MS = 250
"""Clock time a reservation covers when no process is ahead of the clock, so that a process
sending a request every few milliseconds takes the lock a few times a second, not per request."""
MAX_AHEAD_MS = 3_000
"""No nonce is ever handed out further ahead of the clock than this (the service allows 5
minutes); a process that would go further waits for the clock instead."""
MAX_WAIT_MS = 1_000
"""Further ahead than this the clock itself was set back: waiting for it could take up to a
minute, so the values go on from where they are (the service may refuse them until the clock
catches up)."""
MAX_LEAD_MS = 60_000
"""A reserved value further ahead of the clock than this is damage (written while the clock was
far wrong, or by hand): the service would refuse every value from there for as long (it allows
5 minutes), so the values restart from the clock, and the process's other keys are spared."""
RESERVE_TIMEOUT_S = 5.0
"""The longest one nonce waits for the file lock and the clock; past it the source falls back
to this process alone (with the one warning) rather than hold up every request."""

# Every source and lock a forked child must not share with its parent (see _after_fork).
_forkable: weakref.WeakSet[Any] = weakref.WeakSet()


def sign(path: str, secret_key: str, nonce: str) -> str:
    """Lowercase hex HMAC-SHA256 keyed by ``secret_key`` over ``nonce + path`` (UTF-8)."""
    message = (nonce + path).encode("utf-8")
    return hmac.new(secret_key.encode("utf-8"), message, hashlib.sha256).hexdigest()


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class NonceSource:
    """Unix time in milliseconds, strictly increasing across every caller of this instance.

    The service may reject a nonce it has seen; two requests in the same millisecond (several
    workers, a fast retry) must therefore still get different values. This source knows about
    this process only: ``SharedNonceSource`` also keeps apart other processes using one key.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last = 0
        _forkable.add(self)

    def __call__(self) -> str:
        now = _now_ms()
        with self._lock:
            self._last = max(now, self._last + 1)
            return str(self._last)

    @property
    def last(self) -> int:
        """The last value handed out (0 before the first)."""
        return self._last

    def take_within(self, floor: int, ceiling: int) -> int | None:
        """The next value if it can lie in ``[floor, ceiling]``, else ``None`` (nothing taken)."""
        now = _now_ms()
        with self._lock:
            value = max(now, self._last + 1, floor)
            if value > ceiling:
                return None
            self._last = value
            return value

    def _after_fork(self) -> None:
        self._lock = threading.Lock()


next_nonce = NonceSource()
"""The process-wide nonce source: one sequence for every client, so nonces never repeat."""


def _key_digest(access_key: str) -> str:
    """A file name for an access key that does not reveal the key."""
    data = ("dict-magics nonces\0" + access_key).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:32]


class SharedNonceSource:
    """Nonces for one access key, distinct across every process on this machine using it.

    The processes share a state file under ``DICT_MAGICS_HOME/nonces`` (named by a hash of the
    key) holding the highest value any of them has reserved. Under a file lock a process
    reserves the next block of values above it, and then hands them out with no lock at all:
    blocks never overlap, so no two processes can issue the same value, and each process's
    values strictly increase. Values follow the clock (a block starts at the clock when no
    process is ahead of it) and never run more than ``MAX_AHEAD_MS`` ahead of it (unless the
    clock itself is set back).

    Values are also drawn through ``local`` (by default the process-wide ``next_nonce``), so
    they never repeat a value any other source in this process handed out. When the state file
    cannot be used (a read-only data folder; a symbolic link or anything but a regular file of
    this user in its place; a lock or clock not free within ``RESERVE_TIMEOUT_S``), the source
    falls back to ``local`` alone, with one warning. A damaged state is rewritten clean.
    """

    def __init__(self, access_key: str, *, local: NonceSource | None = None) -> None:
        self._name = _key_digest(access_key)
        self._folder = localdata.location("nonces")
        self._local = local or next_nonce
        self._lock = threading.Lock()
        self._file_lock: Any = None
        self._start, self._limit = 0, -1  # this process's current block (none yet)
        self._shared = True
        self._damage_seen = False
        _forkable.add(self)

    def __repr__(self) -> str:
        state = "shared" if self._shared else "this process only"
        return f"SharedNonceSource({self._name[:12]}\u2026, {state})"

    def __call__(self) -> str:
        with self._lock:
            deadline = time.monotonic() + RESERVE_TIMEOUT_S
            while self._shared:
                value = self._local.take_within(self._start, self._limit)
                if value is not None:
                    return str(value)
                self._reserve(deadline)
            return self._local()

    def _reserve(self, deadline: float) -> None:
        """Reserve the next block of values above every process's, or stop sharing."""
        try:
            while (wait_ms := self._try_reserve(deadline)) > 0:
                if time.monotonic() + wait_ms / 1000 > deadline:
                    raise TimeoutError(f"no nonces free within {RESERVE_TIMEOUT_S:g} s")
                time.sleep(wait_ms / 1000)  # outside the file lock: others wait for the clock too
        except OSError as exc:  # a read-only folder, a symbolic link, a lock held, a timeout
            self._shared = False
            _warn_once(self._folder, exc)

    def _try_reserve(self, deadline: float) -> int:
        """Reserve a block under the file lock and return 0, or the ms to wait for the clock."""
        with self._locked().acquire(timeout=max(0.0, deadline - time.monotonic())):
            path = self._folder / f"{self._name}.nonce"
            fd = localdata.open_private(path, os.O_RDWR | os.O_CREAT)
            try:
                now = _now_ms()
                reserved = _parse_state(os.read(fd, 64), now)
                if reserved is None:
                    self._note_damage(path)
                    reserved = now + MAX_AHEAD_MS  # the highest any process can have reserved
                start = max(now, reserved + 1, self._local.last + 1)
                ceiling = now + MAX_AHEAD_MS
                limit = min(max(start + BLOCK, now + WINDOW_MS) - 1, ceiling)
                if start - ceiling > MAX_WAIT_MS:  # the clock was set back
                    limit = start + BLOCK - 1
                if limit < start:  # wait for the clock; the file holds a clean bound meanwhile
                    _write_state(fd, reserved)
                    return start - ceiling
                _write_state(fd, limit)
                self._start, self._limit = start, limit
                return 0
            finally:
                os.close(fd)

    def _locked(self) -> Any:
        """The file lock of this key's state file, made (with its folder) on first use."""
        if self._file_lock is None:
            from filelock import FileLock

            localdata.private_folder(self._folder.parent)  # the data folder, 0700 too
            localdata.private_folder(self._folder)
            path = self._folder / f"{self._name}.lock"
            self._file_lock = FileLock(path, mode=0o600)
        return self._file_lock

    def _note_damage(self, path: Path) -> None:
        if not self._damage_seen:
            self._damage_seen = True
            log.warning(
                "the nonce state %s was damaged or far ahead of the clock: nonces go on from "
                "the clock",
                path,
            )

    def _after_fork(self) -> None:
        # The parent's block is the parent's: a child reserves its own.
        self._lock = threading.Lock()
        self._file_lock = None
        self._start, self._limit = 0, -1


def _write_state(fd: int, value: int) -> None:
    """Fixed width, in place: a reader never sees a shorter, older value (no fsync: after a
    crash of the machine its clock has long passed anything reserved). Whatever followed it
    (a longer, damaged content) is cut off."""
    data = b"%020d\n" % value
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, data)
    os.ftruncate(fd, len(data))


def _parse_state(data: bytes, now: int) -> int | None:
    """The highest value reserved so far, or ``None`` when the file is damaged: not a number,
    or further ahead of the clock than ``MAX_LEAD_MS``."""
    if not data:
        return 0
    try:
        value = int(data.decode("ascii"))
    except ValueError:
        return None
    return None if value > now + MAX_LEAD_MS else value


_warned = False


def _warn_once(folder: Path, exc: OSError) -> None:
    global _warned
    if not _warned:
        _warned = True
        log.warning(
            "cannot keep nonces in %s (%s: %s): nonces are now unique within this process only, "
            "so another process using the same access key at the same time may have requests "
            "rejected as replayed",
            folder,
            type(exc).__name__,
            exc.strerror or exc,
        )


_sources: dict[tuple[Path, str], SharedNonceSource] = {}
_sources_lock = threading.Lock()


def nonces_for(access_key: str) -> SharedNonceSource:
    """The shared nonce source of ``access_key`` in this process (one per key and data folder)."""
    key = (localdata.location("nonces"), _key_digest(access_key))
    with _sources_lock:
        source = _sources.get(key)
        if source is None:
            source = _sources[key] = SharedNonceSource(access_key)
        return source


def _after_fork() -> None:
    global _sources_lock
    _sources_lock = threading.Lock()
    for item in list(_forkable):
        item._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


class SignedAuth(Unpicklable, AuthBase):
    """Signs the prepared request at send time, over its exact ``path_url``.

    Signing the prepared request rather than a path we built ourselves guarantees that what is
    signed is byte for byte what goes on the wire. Every call takes a fresh nonce, so a retried
    request is a new, validly signed request and never a replay. Nonces come from
    ``nonces_for(access_key)`` unless ``nonces`` is given. It cannot be pickled; a copy shares
    the original's nonce source (a copied source would repeat its values).
    """

    def __init__(
        self, access_key: str, secret_key: str, nonces: Callable[[], str] | None = None
    ) -> None:
        self.access_key = access_key
        self._secret_key = secret_key if isinstance(secret_key, Secret) else Secret(secret_key)
        self._nonces = nonces if nonces is not None else nonces_for(access_key)

    def __call__(self, request: PreparedRequest) -> PreparedRequest:
        nonce = self._nonces()
        request.headers["Content-Type"] = "application/json"
        request.headers["accessKey"] = self.access_key
        request.headers["nonce"] = nonce
        request.headers["signature"] = sign(request.path_url, self._secret_key, nonce)
        return request

    def __copy__(self) -> SignedAuth:
        return SignedAuth(self.access_key, self._secret_key, self._nonces)

    def __deepcopy__(self, memo: dict[int, Any]) -> SignedAuth:
        return self.__copy__()

    def __repr__(self) -> str:
        return f"SignedAuth(access_key={self.access_key!r}, secret_key=<hidden>)"
