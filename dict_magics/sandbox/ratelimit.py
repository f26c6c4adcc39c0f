"""The sandbox's rate limit: one token bucket that every request draws from."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["TokenBucket"]


class TokenBucket:
    """``rate`` tokens a second, refilled continuously, at most ``burst`` held; a request
    takes one. Starts full, so a burst right after start passes, as a real service allows."""

    def __init__(
        self, rate: float, burst: int, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if not rate > 0:
            raise ValueError(f"rate limit must be above 0 requests a second, not {rate!r}")
        if burst < 1:
            raise ValueError(f"burst must be at least 1, not {burst!r}")
        self.rate = float(rate)
        self.burst = burst
        self._clock = clock
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._at = clock()

    def take(self) -> bool:
        """Take a token if one is there: True if the request may pass."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
            self._at = now
            if self._tokens < 1:
                return False
            self._tokens -= 1
            return True
