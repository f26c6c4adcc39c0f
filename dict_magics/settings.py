"""Every default and bound in one place (a limit stated twice drifts). Standard library only,
so ``%load_ext`` stays light."""

from __future__ import annotations

TIMEOUT = 15.0
"""Seconds for one attempt, from sending the request to the whole answer (any value > 0)."""
RETRIES = 3
"""Times a request that certainly was not acted on is sent again."""
WORKERS = 4
"""Requests in flight for several ids."""
LISTING_MAX_AGE = 0.0
"""Seconds a delete may take its snapshot's terms from this process's own listing instead of
listing afresh (0: always afresh). More saves a round trip per cell, at the price of missing an
edit made elsewhere within that many seconds."""

MIN_WORKERS = 1
MAX_WORKERS = 64
"""The most requests in flight any front end accepts: more only hurts the service."""
MIN_RETRIES = 0
MAX_RETRIES = 10
"""The most re-sends any front end accepts: beyond that, waiting only hides an outage."""
MAX_PACE = 10_000
"""The fastest pace (requests a second) a client starts at: more is no pace a service keeps."""
MAX_RETRY_AFTER = 30.0
"""The longest ``Retry-After`` the client honours before it waits this long instead."""
VERSION = "4.0.0"
"""The package's version, its one source (pyproject.toml reads it; ``dict_magics.__version__``)."""
PURGE_WORD = "delete-all"
"""What a person types to confirm a purge (or the host it will hit)."""


def span(low: int, high: int) -> str:
    """A range as every message and help text writes it: ``1..64``."""
    return f"{low}..{high}"


AUTH = "signature"
"""``signature`` (every request signed) or ``token`` (one token, sent as Bearer)."""
TOKEN_DURATION = 1800
"""Seconds a token is asked to last (the vendor documents 30 minutes; renewed before it ends)."""
BULK_CHUNK = 500
"""Entries per bulk ``POST``: few round trips, yet several workers share a large restore."""
MAX_BULK_CHUNK = 5000
"""The largest chunk accepted."""
