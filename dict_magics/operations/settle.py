"""Settling outcomes left unknown: the one helper lives in ``service.settle`` (the client
settles its own bulk additions with it); operations use it from there."""

from __future__ import annotations

from ..service.settle import settle_adds, settle_deletes, settle_purge, settle_updates

__all__ = ["settle_adds", "settle_deletes", "settle_purge", "settle_updates"]
