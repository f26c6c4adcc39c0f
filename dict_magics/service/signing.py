"""The one signing helper every request goes through, and the nonces it signs with.

The service authenticates a request by ``signature = hex(HMAC-SHA256(secret, nonce + path))``,
as its own client samples compute it. Keeping this in one place means the magics, the panel,
the command line and the sandbox can never disagree about what a valid request is.

The vendor documents that each request's nonce must be greater than the last one the service
accepted for the access key (40005 otherwise), and a user may run several processes with one
key at once (two terminals, two kernels). So a nonce is drawn as late as possible (the transport
draws it once connected, right before the request's first byte goes out, through
``SignedAuth.stamp``), and in sending order: one draw at a time per key across every thread and
process on this machine (a lock and a file lock), held until a small request's bytes are
written. Parallel connections can still deliver requests out of order; the client answers a
40005 by sending again with a fresh, larger nonce.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Any

from requests import PreparedRequest
from requests.auth import AuthBase

from .. import localdata
from ..models.codes import MAX_NONCE
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

RESERVE_TIMEOUT_S = 5.0
"""The longest one nonce waits for the file lock; past it the source falls back to this
process alone (with the one warning) rather than hold up every request."""
FAR_AHEAD_MS = 86_400_000
"""A shared value further ahead of the clock than this is worth one warning (the values still
go on from it: going back below it would be refused by the service until the clock caught up)."""
MAX_SKIP_MS = 60_000
"""The most ``skip_ahead`` moves the values past the clock at once."""

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

    def draw_above(self, floor: int) -> int:
        """The next value, and at least ``floor``."""
        now = _now_ms()
        with self._lock:
            self._last = max(now, self._last + 1, floor)
            return self._last

    @contextlib.contextmanager
    def lease(self) -> Iterator[str]:
        """The next value, with this source held until the block ends: nothing else is drawn
        from it (in this process) until the request signed with it has gone out."""
        with self._lock:
            self._last = max(_now_ms(), self._last + 1)
            yield str(self._last)

    def _after_fork(self) -> None:
        self._lock = threading.Lock()


next_nonce = NonceSource()
"""The process-wide nonce source: one sequence for every client, so nonces never repeat."""


def _key_digest(access_key: str) -> str:
    """A file name for an access key that does not reveal the key."""
    data = ("dict-magics nonces\0" + access_key).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:32]


class SharedNonceSource:
    """Nonces for one access key, increasing across every process on this machine using it.

    The processes share a state file under ``DICT_MAGICS_HOME/nonces`` (named by a hash of the
    key) holding the last value any of them drew. Each draw takes the file lock, reads it, draws
    the next value above it (and above the clock, and above anything this process drew), and
    writes it back: no value is ever below one another process already drew, and values come
    out in the order they are drawn. ``lease()`` keeps the locks until the request signed with
    the value has been written, so values also go out in that order. One draw costs a file lock
    (about 0.1-0.3 ms: see benchmarks/nonce_cost.py), nothing next to a round trip.

    Values are also drawn through ``local`` (by default the process-wide ``next_nonce``), so
    they never repeat a value any other source in this process handed out. When the state file
    cannot be used (a read-only data folder; a symbolic link or anything but a regular file of
    this user in its place; a lock not free within ``RESERVE_TIMEOUT_S``), the source falls back
    to ``local`` alone, with one warning. A damaged state (not a number, or beyond the largest
    nonce the service takes) is rewritten from the clock, with one warning.
    """

    def __init__(self, access_key: str, *, local: NonceSource | None = None) -> None:
        self._name = _key_digest(access_key)
        self._folder = localdata.location("nonces")
        self._local = local or next_nonce
        self._lock = threading.Lock()
        self._file_lock: Any = None
        self._shared = True
        self._floor = 0
        self._damage_seen = False
        self._ahead_seen = False
        _forkable.add(self)

    def __repr__(self) -> str:
        state = "shared" if self._shared else "this process only"
        return f"SharedNonceSource({self._name[:12]}\u2026, {state})"

    @property
    def state_path(self) -> Path:
        """The file the processes share (it holds a number, no secret)."""
        return self._folder / f"{self._name}.nonce"

    def __call__(self) -> str:
        with self.lease() as value:
            return value

    @contextlib.contextmanager
    def lease(self) -> Iterator[str]:
        """Draw the next value and hold every other draw of this key (threads and processes)
        until the block ends: sign and write the request inside it."""
        with self._lock:
            if self._shared:
                try:
                    lock = self._locked()
                    if lock.is_locked:  # a Ctrl-C inside the last release left it held
                        lock.release(force=True)
                    held = lock.acquire(timeout=RESERVE_TIMEOUT_S)
                except OSError as exc:  # a read-only folder, a symbolic link, a lock held
                    self._shared = False
                    _warn_once(self._folder, exc)
                else:
                    try:
                        value = self._draw_shared()
                    except OSError as exc:
                        held.__exit__(None, None, None)
                        self._shared = False
                        _warn_once(self._folder, exc)
                    except BaseException:  # Ctrl-C mid-draw: a kernel lives on, so must the lock
                        held.__exit__(None, None, None)
                        raise
                    else:
                        try:
                            yield str(value)
                        finally:
                            held.__exit__(None, None, None)
                        return
            yield str(self._local.draw_above(self._floor))

    def skip_ahead(self, ms: int) -> None:
        """Make the next values at least ``ms`` past the clock (at most ``MAX_SKIP_MS``): the
        service keeps refusing values as too small, so it accepted larger ones (another machine
        with a clock ahead, say)."""
        self._floor = max(self._floor, _now_ms() + min(ms, MAX_SKIP_MS))

    def _draw_shared(self) -> int:
        """Under the file lock: the next value above the state's, written back."""
        fd = localdata.open_private(self.state_path, os.O_RDWR | os.O_CREAT)
        try:
            now = _now_ms()
            last = _parse_state(os.read(fd, 64))
            if last is None:
                self._note_damage(self.state_path)
                last = 0
            elif last - now > FAR_AHEAD_MS:
                self._note_far_ahead(self.state_path, last - now)
            value = self._local.draw_above(max(last + 1, self._floor))
            _write_state(fd, value)
            return value
        finally:
            os.close(fd)

    def _locked(self) -> Any:
        """The file lock of this key's state file, made (with its folder) on first use."""
        if self._file_lock is None:
            from filelock import FileLock

            localdata.private_folder(self._folder.parent)  # the data folder, 0700 too
            localdata.private_folder(self._folder)
            path = self._folder / f"{self._name}.lock"
            # One lease at a time per source (``_lock``): a hold seen at the next lease, from
            # any thread, is a leftover to release.
            self._file_lock = FileLock(path, mode=0o600, thread_local=False)
        return self._file_lock

    def _note_damage(self, path: Path) -> None:
        if not self._damage_seen:
            self._damage_seen = True
            log.warning("the nonce state %s was damaged: nonces go on from the clock", path)

    def _note_far_ahead(self, path: Path, ahead_ms: int) -> None:
        if not self._ahead_seen:
            self._ahead_seen = True
            log.warning(
                "the nonce state %s is %.1f hours ahead of this computer's clock (was the clock "
                "wrong?): nonces go on from it, as the service refuses smaller ones",
                path,
                ahead_ms / 3_600_000,
            )

    def _after_fork(self) -> None:
        self._lock = threading.Lock()
        self._file_lock = None


def _write_state(fd: int, value: int) -> None:
    """Fixed width, in place: a reader never sees a shorter, older value (no fsync: after a
    crash of the machine its clock has long passed anything drawn). Whatever followed it (a
    longer, damaged content) is cut off."""
    data = b"%020d\n" % value
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, data)
    os.ftruncate(fd, len(data))


def _parse_state(data: bytes) -> int | None:
    """The last value drawn so far, or ``None`` when the file is damaged: not a number, or
    beyond the largest nonce the service takes."""
    if not data:
        return 0
    try:
        value = int(data.decode("ascii"))
    except ValueError:
        return None
    return None if not 0 <= value < MAX_NONCE else value


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
    """Signs requests over their exact ``path_url``, with a nonce drawn at send time.

    The transport calls ``prepare`` when requests prepares the request (the fixed headers) and
    ``stamp`` once connected, right before the first byte goes out: the nonce is drawn then, in
    sending order (see ``SharedNonceSource.lease``), and the signature covers the path byte for
    byte as it goes on the wire. Called directly (as a requests auth), it does both at once.
    Every attempt takes a fresh nonce, so a retried request is a new, validly signed request
    and never a replay. Nonces come from ``nonces_for(access_key)`` unless ``nonces`` is given.
    It cannot be pickled; a copy shares the original's nonce source (a copied source would
    repeat its values).
    """

    def __init__(
        self, access_key: str, secret_key: str, nonces: Callable[[], str] | None = None
    ) -> None:
        self.access_key = access_key
        self._secret_key = secret_key if isinstance(secret_key, Secret) else Secret(secret_key)
        self._nonces = nonces if nonces is not None else nonces_for(access_key)

    def __call__(self, request: PreparedRequest) -> PreparedRequest:
        self.prepare(request)
        with self.stamp(request.headers, request.path_url, hold=False):
            pass
        return request

    def prepare(self, request: PreparedRequest) -> None:
        """The headers that do not change between draws."""
        request.headers["Content-Type"] = "application/json"
        request.headers["accessKey"] = self.access_key

    @contextlib.contextmanager
    def stamp(
        self, headers: MutableMapping[str, Any], path: str, *, hold: bool = True
    ) -> Iterator[str]:
        """Draw a nonce and sign ``path`` with it into ``headers``; with ``hold``, no other
        request of this key is signed until the block ends (write the request inside it)."""
        lease = getattr(self._nonces, "lease", None)
        if lease is None:  # a plain callable given by the caller
            drawn: Any = contextlib.nullcontext(self._nonces())
        else:
            drawn = lease()
        with drawn as nonce:
            headers["nonce"] = nonce
            headers["signature"] = sign(path, self._secret_key, nonce)
            if hold:
                yield nonce
                return
        yield nonce

    def nonce_refused(self, times: int) -> None:
        """The service refused a nonce as too small ``times`` times in a row for one request:
        from the third, move the values ahead of the clock (10 ms, doubling each time), in case
        it accepted larger ones from elsewhere."""
        skip = getattr(self._nonces, "skip_ahead", None)
        if skip is not None and times >= 3:
            skip(10 * 2 ** min(times - 3, 16))

    def __copy__(self) -> SignedAuth:
        return SignedAuth(self.access_key, self._secret_key, self._nonces)

    def __deepcopy__(self, memo: dict[int, Any]) -> SignedAuth:
        return self.__copy__()

    def __repr__(self) -> str:
        return f"SignedAuth(access_key={self.access_key!r}, secret_key=<hidden>)"
