"""Where dict-magics keeps its own files: snapshots, the audit log, the nonce state.

``DICT_MAGICS_HOME`` names the folder, else the platform's user data folder. Folders are 0700,
files 0600, written atomically, and opened without following a symbolic link (a planted link
would send our writes elsewhere).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat
import tempfile
from pathlib import Path

ENV_HOME = "DICT_MAGICS_HOME"


def location(*parts: str) -> Path:
    """Where ``home(*parts)`` is, without creating anything (a name for it, or a later use)."""
    env = os.environ
    base = _base(env.get(ENV_HOME, "").strip(), env.get("XDG_DATA_HOME"), env.get("HOME"))
    return base.joinpath(*parts) if parts else base


@functools.lru_cache(maxsize=8)
def _base(given: str, xdg_data_home: str | None, user_home: str | None) -> Path:
    """The data folder for these variables (kept: every operation asks for it)."""
    if given:
        return Path(given).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("dict-magics", appauthor=False))


def home(*parts: str) -> Path:
    """The data folder (or a sub-folder of it), each level created 0700 or tightened to 0700."""
    base = location()
    levels = [base.joinpath(*parts[:n]) for n in range(len(parts) + 1)]
    if all(_is_private_folder(p, follow=n == 0) for n, p in enumerate(levels)):
        return levels[-1]  # the common case: one stat a level, nothing to change
    path = private_folder(base)
    for part in parts:
        path = private_folder(path / part)
    return path


def _is_private_folder(path: Path, *, follow: bool = False) -> bool:
    try:
        info = os.stat(path) if follow else os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and not stat.S_IMODE(info.st_mode) & 0o077


def private_folder(path: Path) -> Path:
    """``path`` as a folder only this user can enter (created or tightened to 0700); a symbolic
    link is refused, except the data folder itself (the user chose it)."""
    make_folders(path)
    if Path(path) == location():
        if stat.S_IMODE(os.stat(path).st_mode) & 0o077:
            os.chmod(path, 0o700)
        return path
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(path):
            message = "it is a symbolic link, which dict-magics does not follow"
            raise OSError(errno.ELOOP, message, str(path)) from None
        raise
    try:
        info = os.fstat(fd)
        if info.st_uid != _uid():
            raise OSError(errno.EPERM, "it is not a folder of this user", str(path))
        if stat.S_IMODE(info.st_mode) & 0o077:
            os.fchmod(fd, 0o700)
    finally:
        os.close(fd)
    return path


def make_folders(path: Path) -> None:
    """Create the missing levels of ``path``, each 0700 (those there may be the user's)."""
    for level in [*reversed(path.parents), path]:
        if not level.is_dir():
            try:
                os.mkdir(level, 0o700)
            except FileExistsError:  # made meanwhile by another process, or a file in the way
                if not level.is_dir():
                    raise


def open_private(path: Path, flags: int) -> int:
    """A descriptor of ``path`` (created 0600), refusing all but a regular file of this user."""
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_NONBLOCK", 0)  # a FIFO put in its place must not block the open
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            message = "it is a symbolic link, which dict-magics does not follow"
            raise OSError(errno.ELOOP, message, str(path)) from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != _uid():
        os.close(fd)
        raise OSError(errno.EPERM, "it is not a regular file of this user", str(path))
    return fd


def read_private(path: Path, limit: int = 1 << 20) -> bytes:
    """At most ``limit`` bytes of ``path``, a regular file of this user (a FIFO or a link put
    in its place is refused, never waited on or followed)."""
    fd = open_private(path, os.O_RDONLY)
    try:
        return os.read(fd, limit)
    finally:
        os.close(fd)


def _uid() -> int:
    return os.getuid() if hasattr(os, "getuid") else 0


def atomic_write(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` (mode 0600) so that readers see all of it or none of it."""
    make_folders(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    with contextlib.suppress(OSError):  # the rename made durable (best effort: not everywhere)
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return path


def write_new(path: Path, data: bytes) -> Path:
    """Create ``path`` (0600, never over anything) holding ``data``, ``fdatasync``ed: one
    journal commit, for new files (snapshots); readers check how a file ends."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        getattr(os, "fdatasync", os.fsync)(fd)
    except BaseException as exc:
        path.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(path)
        raise
    finally:
        os.close(fd)
    return path
