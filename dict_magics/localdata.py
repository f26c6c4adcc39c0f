"""Where dict-magics keeps its own files: snapshots, the audit log, the nonce state.

``DICT_MAGICS_HOME`` names the folder; otherwise the platform's user data folder for
``dict-magics`` (platformdirs). The folder is 0700 and every file in it 0600, written atomically
(temporary file, fsync, rename), so a crash leaves the old file or the new one, never half of one.
Nothing here ever holds a secret.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["ENV_HOME", "atomic_write", "home", "location", "private_file", "private_folder"]

ENV_HOME = "DICT_MAGICS_HOME"


def location(*parts: str) -> Path:
    """Where ``home(*parts)`` is, without creating anything (a name for it, or a later use)."""
    given = os.environ.get(ENV_HOME, "").strip()
    if given:
        base = Path(given).expanduser()
    else:
        import platformdirs

        base = Path(platformdirs.user_data_dir("dict-magics", appauthor=False))
    return base.joinpath(*parts)


def home(*parts: str) -> Path:
    """The data folder (or a sub-folder of it), created 0700 if missing, the folder itself too."""
    private_folder(location())
    return private_folder(location(*parts))


def private_folder(path: Path) -> Path:
    """Create ``path`` (mode 0700) and its parents if missing; returns it. Raises ``OSError``."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def atomic_write(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` (mode 0600) so that readers see all of it or none of it."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
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
    _fsync_dir(path.parent)
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` as an empty 0600 file if it does not exist; returns it."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o600)
    os.close(fd)
    return path


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable (not possible on every platform; best effort there)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
