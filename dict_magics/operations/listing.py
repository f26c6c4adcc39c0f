"""The dictionary as it is: a filtered listing for people, and a cached one for the operations.

``list_entries`` always asks the service. ``ListingCache`` keeps one listing per profile, base URL
and access key for this process, kept current from what
this tool deletes, so a loop of one-id deletes does not list the whole dictionary each time. A
listing is fetched again when it is older than ``MAX_AGE`` seconds, when an id asked about is not
in it (someone else may have added it), or after an addition (whose new id is never returned).
A delete that keeps a snapshot lists afresh, unless the ``listing_max_age`` setting lets it take
a cached listing younger than that (``recent``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import ListingUnsupportedError, ServiceError
from .connect import connect
from .context import OperationSettings

if TYPE_CHECKING:
    from ..models import Entry, EntryList
    from ..service.client import DictionaryClient

__all__ = [
    "CACHE",
    "MAX_AGE",
    "ListingCache",
    "cache_key",
    "check_language_filter",
    "list_entries",
    "listed_after",
]

MAX_AGE = 60.0
"""Seconds a cached listing is trusted for."""

Key = tuple[str, str, str]


def list_entries(
    settings: OperationSettings,
    *,
    match: str | None = None,
    from_lang: str | None = None,
    to_lang: str | None = None,
    client: DictionaryClient | None = None,
) -> EntryList:
    """The dictionary's entries whose terms contain ``match`` (any case) in the languages given.

    Raises ``DictMagicsError`` before any request, ``ListingUnsupportedError`` where the service
    has no listing and ``ServiceError`` for a listing it cannot give; ``str(exc)`` is one line.
    """
    with connect(settings, client) as (client, profile):
        listing = CACHE.fetch(client, profile)
    check_language_filter(listing, from_lang, to_lang)
    return listing.filter(match=match, from_lang=from_lang, to_lang=to_lang)


def check_language_filter(listing: EntryList, from_lang: str | None, to_lang: str | None) -> None:
    """``UsageProblem`` naming the codes the service takes when a filter's language code is
    not one of them, in any case (filters ignore case: ``JA`` finds ``ja``), and no listed entry
    has it: ``zh`` for ``zh-CN`` would otherwise list nothing, silently. (A listed entry with
    such a code, which lint reports, is still found by it.)"""
    from ..errors import UsageProblem
    from ..models.terms import LANGUAGE_CODES, language_hint, language_problem

    known = {c.casefold() for c in LANGUAGE_CODES}
    for code, field in ((from_lang, "fromLang"), (to_lang, "toLang")):
        if not code or code.casefold() in known:
            continue
        if listing.filter(**{_FIELDS[field]: code}).entries:
            continue
        problem = language_problem(code, field)
        assert problem is not None
        valid = _VALID_CODES if not language_hint(code) else ""
        raise UsageProblem(f"{problem.message}{valid}; no entry has it, so none was listed.")


_FIELDS = {"fromLang": "from_lang", "toLang": "to_lang"}
_VALID_CODES = (
    ": the service takes ISO 639-1 codes (en, ja, de, ...), and zh-CN or zh-TW for Chinese"
)


def cache_key(client: DictionaryClient, profile: str) -> Key:
    """(profile, base URL, access key): two keys on one host are two dictionaries, and so are
    two API prefixes on one host."""
    return (profile, client.base_url, client.access_key)


@dataclass
class _Held:
    entries: dict[str, Entry] | None
    """By id, in the service's order; ``None`` when the service has no listing."""
    host: str
    taken: float
    unsupported: ListingUnsupportedError | None = None


class ListingCache:
    """One listing per (profile, base URL, access key), safe to share between threads."""

    def __init__(self, max_age: float = MAX_AGE, clock: Callable[[], float] = time.monotonic):
        self.max_age = max_age
        self._clock = clock
        self._held: dict[Key, _Held] = {}
        # Bumped by every change this process knows of (a delete, a purge, an invalidation): a
        # listing requested before one may hold what it changed, so it is not kept.
        self._changes: dict[Key, int] = {}
        self._lock = threading.Lock()

    def _fresh(self, key: Key) -> _Held | None:
        """What is held for ``key`` while younger than ``max_age`` (call it under the lock)."""
        held = self._held.get(key)
        return held if held is not None and self._clock() - held.taken <= self.max_age else None

    def fetch(self, client: DictionaryClient, profile: str) -> EntryList:
        """A fresh listing from the service, kept as the current one."""
        key = cache_key(client, profile)
        with self._lock:
            # Its age counts from the request: the service may have answered any time after.
            asked, seen = self._clock(), self._changes.get(key, 0)
        try:
            listing = client.list_entries()
        except ListingUnsupportedError as exc:
            with self._lock:
                self._held[key] = _Held(None, client.host, asked, exc)
            raise
        except BaseException:
            self.forget(key)
            raise
        with self._lock:
            if self._changes.get(key, 0) == seen:
                self._held[key] = _Held(listing.by_id(), listing.host, asked)
            else:
                # This process changed the dictionary while the listing was on its way: the
                # listing may predate that change, so the next use lists again.
                self._held.pop(key, None)
        return listing

    def current(self, client: DictionaryClient, profile: str) -> EntryList:
        """The whole listing: the cached one while it is fresh (kept current from what this
        tool deleted), else a new one. Raises as ``fetch`` does."""
        from ..models import EntryList

        key = cache_key(client, profile)
        with self._lock:
            held = self._fresh(key)
            if held is not None and held.entries is not None:
                return EntryList(list(held.entries.values()), held.host)
        return self.fetch(client, profile)

    def recent(
        self, client: DictionaryClient, profile: str, ids: Iterable[str], max_age: float
    ) -> tuple[EntryList, float] | None:
        """The cached listing and its age in seconds, when it is at most ``max_age`` seconds old
        (whatever ``self.max_age``) and holds every one of ``ids``; else ``None`` (an id it
        lacks may have been added elsewhere since: only a new listing can tell). No request."""
        from ..models import EntryList

        key = cache_key(client, profile)
        with self._lock:
            held = self._held.get(key)
            if held is None or held.entries is None:
                return None
            age = self._clock() - held.taken
            if not 0 <= age <= max_age or not all(i in held.entries for i in ids):
                return None
            return EntryList(list(held.entries.values()), held.host), age

    def lookup(
        self, client: DictionaryClient, profile: str, ids: Iterable[str] = ()
    ) -> dict[str, Entry]:
        """The entries of ``ids`` that the dictionary holds, by id: from the cached listing when
        it is fresh and holds every one of them, else from a new one. Only those entries are
        copied, so a loop of one-id cells costs the same whatever the dictionary's size. Raises
        as ``DictionaryClient.list_entries`` does (a service without a listing is remembered as
        such for ``max_age``)."""
        key = cache_key(client, profile)
        wanted = list(ids)
        with self._lock:
            held = self._fresh(key)
            if held is not None:
                if held.unsupported is not None:
                    was = held.unsupported
                    raise ListingUnsupportedError(
                        was.reason, cause=was.cause, http_status=was.http_status
                    )
                assert held.entries is not None
                if all(i in held.entries for i in wanted):
                    return {i: held.entries[i] for i in wanted}
        fresh = self.fetch(client, profile).by_id()
        return {i: fresh[i] for i in wanted if i in fresh}

    def cached(
        self, client: DictionaryClient, profile: str, ids: Iterable[str] | None = None
    ) -> dict[str, Entry]:
        """What a fresh cached listing holds of ``ids`` (``None``: all of it), without any
        request (empty when there is none)."""
        key = cache_key(client, profile)
        with self._lock:
            held = self._fresh(key)
            if held is None or held.entries is None:
                return {}
            if ids is None:
                return dict(held.entries)
            return {i: held.entries[i] for i in ids if i in held.entries}

    def unsupported(self, client: DictionaryClient, profile: str) -> bool:
        """True when this service was found to have no listing less than ``max_age`` ago."""
        key = cache_key(client, profile)
        with self._lock:
            held = self._fresh(key)
            return held is not None and held.unsupported is not None

    def deleted(self, client: DictionaryClient, profile: str, ids: Iterable[str]) -> None:
        """These entries are known to be gone (deleted, or never there)."""
        key = cache_key(client, profile)
        with self._lock:
            self._changed(key)
            held = self._held.get(key)
            if held is not None and held.entries is not None:
                for entry_id in ids:
                    held.entries.pop(entry_id, None)

    def emptied(self, client: DictionaryClient, profile: str) -> None:
        """Every entry is known to be gone (a purge succeeded)."""
        key = cache_key(client, profile)
        with self._lock:
            self._changed(key)
            self._held[key] = _Held({}, client.host, self._clock())

    def forget(self, key: Key | None = None) -> None:
        """Drop one listing (``None``: all): the next use lists again."""
        with self._lock:
            for changed in {*self._held, *self._changes} if key is None else [key]:
                self._changed(changed)
            if key is None:
                self._held.clear()
            else:
                self._held.pop(key, None)

    def _changed(self, key: Key) -> None:
        """A listing of ``key`` requested before now may predate a change (under the lock)."""
        self._changes[key] = self._changes.get(key, 0) + 1

    def invalidate(self, client: DictionaryClient, profile: str) -> None:
        """The listing of this client's dictionary can no longer be trusted (an addition, an
        outcome left unknown)."""
        self.forget(cache_key(client, profile))


CACHE = ListingCache()
"""The process's listings (a notebook kernel, a command-line run, a panel)."""


def listed_after(client: DictionaryClient, profile: str) -> tuple[EntryList | None, bool]:
    """A fresh listing to settle or name what was just sent, and whether Ctrl-C ended the wait
    for it. ``None`` when the service gives none (then outcomes stay as they are). Ctrl-C here
    must not lose what was sent: the caller audits the results it has, then passes the
    interrupt on with them."""
    try:
        return CACHE.fetch(client, profile), False
    except ServiceError:
        return None, False
    except KeyboardInterrupt:
        return None, True
