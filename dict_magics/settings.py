"""Every default and bound in one place, read by traitlets, argparse, the panel and the client.

A limit stated twice drifts; here it is stated once. Standard library only, so the front ends
can read it while ``%load_ext`` stays light.
"""

from __future__ import annotations

__all__ = [
    "AUTH",
    "BULK_CHUNK",
    "LISTING_MAX_AGE",
    "MAX_BULK_CHUNK",
    "MAX_ID_LENGTH",
    "MAX_RETRIES",
    "MAX_RETRY_AFTER",
    "MAX_WORKERS",
    "MIN_RETRIES",
    "MIN_WORKERS",
    "PURGE_WORD",
    "RETRIES",
    "TIMEOUT",
    "TOKEN_DURATION",
    "WORKERS",
    "span",
]

TIMEOUT = 15.0
"""Seconds for one attempt, from sending the request to the whole answer (any value > 0)."""
RETRIES = 3
"""Times a request that certainly was not acted on is sent again."""
WORKERS = 4
"""Requests in flight for several ids."""
LISTING_MAX_AGE = 0.0
"""Seconds a delete may take its snapshot's terms from this process's own listing (kept current
by its own deletes, adds and updates) instead of listing afresh: 0 = always list afresh, so the
snapshot holds the service's terms at the moment of the delete. More saves a round trip per
cell, at the price of missing an edit made elsewhere within that many seconds. A purge always
lists afresh."""

MIN_WORKERS = 1
MAX_WORKERS = 64
"""The most requests in flight any front end accepts: more only hurts the service."""
MIN_RETRIES = 0
MAX_RETRIES = 10
"""The most re-sends any front end accepts: beyond that, waiting only hides an outage."""
MAX_RETRY_AFTER = 30.0
"""The longest ``Retry-After`` the client honours before it waits this long instead."""
MAX_ID_LENGTH = 1000
"""The longest entry id accepted."""
VERSION = "4.0.0"
"""The package's version, its one source (pyproject.toml reads it; ``dict_magics.__version__``)."""
PURGE_WORD = "delete-all"
"""What a person types to confirm a purge (or the host it will hit)."""


def span(low: int, high: int) -> str:
    """A range as every message and help text writes it: ``1..64``."""
    return f"{low}..{high}"


AUTH = "signature"
"""How requests prove who sends them: ``signature`` (accessKey, nonce, signature on every
request) or ``token`` (one ``POST /api/v1/token``, then ``Authorization: Bearer``)."""
TOKEN_DURATION = 1800
"""Seconds a token is asked to last (the vendor documents 30 minutes; renewed before it ends)."""
BULK_CHUNK = 500
"""Entries per bulk ``POST``. Why 500: 10,000 entries go in 20 requests (the round trips, not
the bytes, cost the time: a typical entry is ~80 bytes of JSON, so a chunk is ~40 KB, and even
500 entries of 255-character CJK terms stay under 2 MB); a chunk whose answer is lost costs one
listing to settle, whatever its size; and chunks small enough that several workers share a
large restore and its progress moves. The vendor documents no limit; ``chunk_size`` changes it."""
MAX_BULK_CHUNK = 5000
"""The largest chunk accepted."""
