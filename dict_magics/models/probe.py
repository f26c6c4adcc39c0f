"""What ``probe`` found out about a service's rules (``ProbeResult``), kept as one small JSON
file per profile and service, which ``check``, impact, the client and ``status`` read; and the
pace its rate limit allowed the last batch it slowed, which the next client starts at."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from typing import Any

from .entry import Entry
from .text import Outcomes, escape, shown

FOUND = ("listing", "ids", "nonce_rule", "errors", "bulk", "update", "token")
ASKED = ("limit_unit", "case_sensitive")
_MEANS: dict[str, dict[Any, str]] = {
    "listing": {"data.entries": "under data.entries", "entries": "at the top level"},
    "ids": {"string": "as text; read as numbers all the same"},
    "nonce_rule": {
        "increasing": "each nonce above the last one accepted",
        "unique": "any nonce not used before",
        "none": "any nonce, even one used before",
    },
    "errors": {"coded": "with the vendor's codes", "plain": "a status and a text, no code"},
    "bulk": {False: "entries are added one POST each"},
    "update": {False: "update and a sync's updates are refused before sending"},
    "token": {False: "every request is signed instead"},
    "limit_unit": {
        "element": "3 entries per element of a request",
        "request": "3 entries per request",
        "sentence": "3 entries per sentence",
    },
    "case_sensitive": {False: "a term applies in any case"},
}


@dataclass(frozen=True)
class ProbeResult(Outcomes):
    """Each rule found (``None``: not asked), whether the dictionary ended as it began
    (``unchanged``) and the ``requests`` sent; a probe that ``stopped`` early names the marker
    entries it leaves behind (``left``; id ``""`` when unknown), each holding ``marker``."""

    listing: str | None = None
    ids: str | None = None
    nonce_rule: str | None = None
    errors: str | None = None
    bulk: bool | None = None
    update: bool | None = None
    token: bool | None = None
    limit_unit: str | None = None
    case_sensitive: bool | None = None
    unchanged: bool | None = None
    requests: int = 0
    host: str = ""
    profile: str = ""
    base_url: str = ""
    date: str = ""
    stopped: str | None = None
    marker: str = ""
    left: list[Entry] = field(default_factory=list)
    names: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    _css = "probe"

    @property
    def ok(self) -> bool:
        return self.stopped is None and bool(self.unchanged)

    @property
    def interrupted(self) -> bool:
        return (self.stopped or "").startswith("interrupted")

    def summary(self) -> str:
        """One line of what was found, for ``status``."""
        said = [f"{label} {value.split(' (')[0]}" for label, value in self.rows()]
        when = f"{self.date[:16].replace('T', ' ')} UTC"
        return f"{when}: {', '.join(s for s in said if 'not ' not in s)}"

    def to_json(self) -> dict[str, Any]:
        """DESIGN's shape; a probe that stopped adds ``stopped`` and the markers ``left``."""
        data = {name: getattr(self, name) for name in (*FOUND, *ASKED, "unchanged", "requests")}
        if self.stopped is not None:
            data["stopped"] = self.stopped
            data["left"] = [e.to_service() for e in self.left]
        return data

    def removal(self) -> str:
        """What removes the markers left: a delete of their ids, or of those a listing finds."""
        names = {"delete": "`delete`", **self.names}

        def command(name: str, rest: str) -> str:  # `dict-magics delete 9 10`, %dict_delete 9 10
            spelled = names[name]
            quoted = spelled.startswith("`")
            return f"`{spelled.strip('`')} {rest}`" if quoted else f"{spelled} {rest}"

        ids = [e.id for e in self.left if e.id]
        said = [command("delete", " ".join(ids))] if ids else []
        if len(ids) < len(self.left):
            where = f"a listing shows holding {self.marker!r}"  # in a front end's words if named
            if "find_marker" in names:
                where = f"{command('find_marker', self.marker)} shows"
            said.append(f"a delete of each entry {where}")
        return ", and ".join(said)

    def rows(self) -> list[tuple[str, str]]:
        rows = []
        for name in (*FOUND, *ASKED):
            value = getattr(self, name)
            words = "not asked (asking needs a translation)" if name in ASKED else "not found"
            if value is not None:
                words = ("yes" if value else "no") if isinstance(value, bool) else value
                means = _MEANS.get(name, {}).get(value)
                words += f" ({means})" if means else ""
            rows.append((name.replace("_", " "), words))
        return rows

    def _kind(self) -> str:
        return "success" if self.stopped is None and self.unchanged else "failure"

    def _summary(self) -> str:
        where = f"{self.host} (profile {self.profile!r})" if self.profile else self.host
        if self.stopped is not None:
            return f"probe of {where} stopped: {self.stopped}"
        same = "unchanged" if self.unchanged else "NOT as it began"
        when = f", {self.date[:16].replace('T', ' ')} UTC" if self.date else ""
        return f"probe of {where}{when}: {self.requests} requests, the dictionary {same}"

    def _items(self) -> list[tuple[Any, ...]]:
        return [("", f"{label + ':':<16}{value}", "") for label, value in self.rows()]

    def _tail(self, html: bool) -> str:
        if not self.left:
            return ""
        said = f"its own marker entries ({len(self.left)}, holding {self.marker!r}) are still "
        said += f"there: remove them with {self.removal()}"
        return f"<div><b>{escape(said)}</b></div>" if html else f"\n{shown(said)}"


_NOT_KEPT = ("left", "names", "stopped", "marker")  # a stored probe is a finished one


def _path(folder: str, *key: str) -> Any:
    from .. import localdata  # when it is used: importing the models reads no file

    digest = hashlib.sha256("\0".join(key).encode("utf-8", "surrogatepass"))
    return localdata.location(folder, digest.hexdigest()[:24] + ".json")


def save(result: ProbeResult) -> ProbeResult:
    """Keep a finished probe for its profile and service (stamped with the time); returned."""
    from .. import localdata

    data = {k: v for k, v in asdict(result).items() if k not in _NOT_KEPT}
    data["date"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    localdata.home("probes")
    localdata.atomic_write(
        _path("probes", result.profile, result.base_url), json.dumps(data).encode()
    )
    return ProbeResult(**data)


def stored(profile: str, base_url: str) -> ProbeResult | None:
    """The last finished probe of this profile and service, if one is kept (and readable)."""
    from .. import localdata

    try:
        data = json.loads(localdata.read_private(_path("probes", profile, base_url)))
        known = {f.name for f in fields(ProbeResult)} - set(_NOT_KEPT)
        return ProbeResult(**{k: v for k, v in data.items() if k in known})
    except (OSError, ValueError, TypeError, AttributeError, RecursionError):
        return None


PACE_KEPT = 86_400.0
"""Seconds a learned pace is trusted: a service may allow more later, and a client only ever
creeps above the pace it starts at."""


def stored_pace(profile: str, base_url: str, access_key: str) -> float | None:
    """Requests a second the service's rate limit let through for this profile and key
    (learned within ``PACE_KEPT``), else ``None``: the limit is found again."""
    from .. import localdata, settings

    try:
        data = json.loads(localdata.read_private(_path("paces", profile, base_url, access_key)))
        rate, age = data["rate"], time.time() - data["at"]
    except (OSError, ValueError, TypeError, KeyError, OverflowError, RecursionError):
        return None
    ok = type(rate) in (int, float) and 1 <= rate <= settings.MAX_PACE and 0 <= age < PACE_KEPT
    return float(rate) if ok else None


def save_pace(profile: str, base_url: str, access_key: str, rate: float) -> None:
    from .. import localdata

    localdata.home("paces")
    data = json.dumps({"rate": round(rate, 2), "at": time.time()}).encode()
    localdata.atomic_write(_path("paces", profile, base_url, access_key), data)
