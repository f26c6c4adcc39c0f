"""The process's helper threads: one single-thread executor per job, made on first use.

A forked child has none of its parent's threads, so it forgets them and makes its own.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

__all__ = ["helper"]

_helpers: dict[str, ThreadPoolExecutor] = {}
_lock = threading.Lock()
if hasattr(os, "register_at_fork"):  # not on Windows
    os.register_at_fork(after_in_child=_helpers.clear)


def helper(name: str) -> ThreadPoolExecutor:
    """The one thread named ``dict-magics-<name>`` (work submitted to it runs in order)."""
    with _lock:
        found = _helpers.get(name)
        if found is None:
            found = _helpers[name] = ThreadPoolExecutor(1, thread_name_prefix=f"dict-magics-{name}")
        return found
