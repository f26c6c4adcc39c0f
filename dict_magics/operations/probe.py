"""Ask the service what its rules are, changing nothing that was there.

Requests that may be refused are read-only listings (an old or reused nonce, a wrong signature)
or aimed at the probe's own marker entries; the listings before and after must match. A probe
stopped early names the markers it leaves.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import DictMagicsError, ServiceError, UsageProblem
from ..models import Entry
from ..models.probe import ProbeResult, save, stored
from ..models.textcheck import fold
from ..service.http import parse_listing
from .audit import AuditLog
from .context import OperationSettings, Warn, connect, profile_of, say
from .listing import CACHE
from .prompts import Prompter
from .settle import settle_deletes
from .textcheck import confirm_billed

if TYPE_CHECKING:
    from ..service.client import DictionaryClient
    from ..service.http import Verdict

LIST_PATH = "/api/v1/dictionary"
PAIR = ("ja", "en")
"""The markers' language pair: the engine's own worked example's."""
MARKERS = 6


def probe(
    settings: OperationSettings,
    *,
    translate: bool = False,
    yes: bool = False,
    prompter: Prompter | None = None,
    client: DictionaryClient | None = None,
    warn: Warn = None,
) -> ProbeResult:
    """Every rule DESIGN's probe names (with ``translate``, the limit's unit and case too), kept
    for the profile and service once the probe ends with the dictionary as it began."""
    with connect(settings, client) as (client, profile):
        if translate and not yes:
            confirm_billed(prompter, "a few marker words", client.host)
        run = _Probe(client, profile, warn)
        try:
            found = run.ask(translate)
        except (KeyboardInterrupt, DictMagicsError) as stop:
            if not run.left:  # nothing of the probe's is there: stopped as anything stops
                raise
            return run.stopped(stop)
        finally:
            CACHE.invalidate(client, profile)
        if found.unchanged:
            client.bulk, client.update = bool(found.bulk), bool(found.update)
            found = save(found)
    return found


def kept(settings: OperationSettings) -> ProbeResult | None:
    """The probe kept for the settings' profile and service; ``None`` when there is none (or
    no credentials to say which service)."""
    from ..profiles import credentials

    try:
        profile = profile_of(settings)
        creds = credentials.load(profile, base_url=settings.base_url or None)
    except DictMagicsError:
        return None
    return stored(profile, creds.base_url)


class _Probe:
    """One probe: what it found so far, and which markers of its own are (or may be) there."""

    def __init__(self, client: DictionaryClient, profile: str, warn: Warn) -> None:
        self.client, self.profile, self.warn = client, profile, warn
        self.found: dict[str, Any] = {}
        self.word = "dmp" + secrets.token_hex(4)
        source, target = PAIR
        self.markers = [
            Entry("", source, f"{self.word}{n}", target, f"tgt{self.word[3:]}{n}")
            for n in range(1, MARKERS + 1)
        ]
        self.left: list[Entry] = []
        self.extra = 0  # requests of other clients (the token's)
        self.sent = client.requests_sent

    def ask(self, translate: bool) -> ProbeResult:
        client = self.client
        verdict, nonce = self.attempt()
        before = self.listed(verdict)
        if any(self.word in e.from_text + e.to_text for e in before):
            raise UsageProblem(f"an entry already holds {self.word!r}: run the probe again.")
        self.found["listing"] = _entries(verdict.data)[0]
        below = self.attempt(str(int(nonce) - 1))[0].outcome == "success"
        reused = self.attempt(nonce)[0].outcome == "success"
        forged = self.attempt(forged=True)[0]
        self.found["nonce_rule"] = "none" if reused else "unique" if below else "increasing"
        self.found["errors"] = "plain" if forged.code is None else "coded"
        client.bulk = True
        self.left = list(self.markers)  # from here on they may be there
        with self.audit("add") as trail:
            added = client.add_entries(self.markers, workers=1, audit=trail)
        if added.interrupted:  # Ctrl-C stopped the batch (it returns what it did): stop too
            raise KeyboardInterrupt
        self.found["bulk"] = client.bulk
        verdict = self.attempt()[0]
        listed = {e.terms: e for e in self.listed(verdict)}
        maybe = {r.entry.terms for r in added.results if r.outcome != "failure"}
        self.left = [
            listed.get(m.terms, m) for m in self.markers if m.terms in listed.keys() | maybe
        ]
        if not all(m.terms in listed for m in self.markers):
            raise ServiceError("the service did not add every marker entry")
        ints = all(
            type(e.get("id")) is int for e in _entries(verdict.data)[1] if isinstance(e, dict)
        )
        self.found["ids"] = "integer" if ints else "string"
        self.found["update"] = self.update()
        token = client.with_auth("token")
        try:
            token.list_entries()
            self.found["token"] = True
        except ServiceError as refused:
            if refused.http_status is None:
                raise
            self.found["token"] = False
        finally:
            self.extra += token.requests_sent
        if translate:
            self.engine(before)
        markers = {e.id: e for e in self.left}
        with self.audit("delete", markers) as trail:
            gone = client.delete_entries(list(markers), workers=1, audit=trail)
            if gone.interrupted:
                raise KeyboardInterrupt
            after = client.list_entries()  # settles a deletion whose answer was lost
            held = {e.id: e for e in after}
            settled = settle_deletes(gone.results, markers, held)  # what the listing decided
            trail.record_all(s for r, s in zip(gone.results, settled, strict=True) if r is not s)
        self.left = [e for e in self.left if e.id in held]
        if self.left:
            raise ServiceError("the service did not delete every marker entry")
        same = sorted((e.id, e.terms) for e in after) == sorted((e.id, e.terms) for e in before)
        return self.result(unchanged=same)

    def attempt(self, nonce: str | None = None, forged: bool = False) -> tuple[Verdict, str]:
        """A read-only listing signed as asked; a rate-limited one is sent again after its
        wait (the same nonce: the service did not act on it)."""
        for _ in range(5):
            verdict, sent = self.client.attempt("GET", LIST_PATH, nonce=nonce, forged=forged)
            if not verdict.rate_limited:
                break
            time.sleep(min(verdict.retry_after or 1.0, 10.0))
        if verdict.outcome == "unknown" or verdict.http_status is None:
            raise ServiceError(f"the probe's listing failed: {verdict.reason}", cause=verdict.cause)
        return verdict, sent

    def listed(self, verdict: Verdict) -> list[Entry]:
        if verdict.outcome != "success":
            raise ServiceError(f"the probe's listing failed: {verdict.reason}", cause=verdict.cause)
        return parse_listing(verdict.data, self.client.host)

    def update(self) -> bool:
        """Change a marker's target in place (``PUT``): whether the service has PUT."""
        self.client.update = True
        old = self.left[0]
        new = replace(old, to_text=old.to_text + "u")
        with self.audit("update") as trail:
            result = self.client.update_entry(old.id, new, old=old, audit=trail)
        if result.ok:
            self.left[0] = new
        elif result.outcome_unknown or result.http_status not in (404, 405, 501):
            raise ServiceError(f"the probe's update of its own marker failed: {result.reason}")
        return result.ok

    def engine(self, before: list[Entry]) -> None:
        """One translation of the markers' words: element 1 holds marker 6 in capitals,
        element 2 markers 1-4 in two sentences, element 3 marker 5. The limit of 3 counts per
        sentence when marker 4 is applied, per element when marker 5 is, else per request."""
        words = {e.from_text[-1]: e.from_text for e in self.left}
        texts = [
            words["6"].upper(),
            f"{words['1']} {words['2']}\u3002{words['3']} {words['4']}\u3002",
            f"{words['5']}\u3002",
        ]
        joined = fold(" ".join(texts))
        pair = [e for e in before if (e.from_lang, e.to_lang) == PAIR and e.from_text]
        if any(fold(e.from_text) in joined for e in pair):
            say(self.warn, "an entry of the dictionary matches the probe's words: not translated")
            return
        out = " ".join(self.client.translate(texts, *PAIR))
        applied = {e.from_text[-1] for e in self.left if e.to_text in out}
        self.found["case_sensitive"] = "6" not in applied
        unit = "sentence" if "4" in applied else "element" if "5" in applied else "request"
        self.found["limit_unit"] = unit

    def audit(self, operation: str, entries: dict[str, Entry] | None = None) -> AuditLog:
        host, warn = self.client.host, self.warn
        return AuditLog(
            profile=self.profile, host=host, operation=operation, entries=entries, warn=warn
        )

    def result(self, **more: Any) -> ProbeResult:
        client = self.client
        return ProbeResult(
            **self.found,
            **more,
            requests=client.requests_sent - self.sent + self.extra,
            host=client.host,
            profile=self.profile,
            base_url=client.base_url,
            marker=self.word,
            left=self.left,
        )

    def stopped(self, stop: BaseException) -> ProbeResult:
        """What was found before ``stop``, and the markers it leaves."""
        done = getattr(stop, "result", None)  # a request Ctrl-C let end: did it delete?
        if getattr(done, "done", False):
            self.left = [e for e in self.left if e.id != getattr(done, "entry_id", None)]
        why = "interrupted (Ctrl-C)" if isinstance(stop, KeyboardInterrupt) else str(stop)
        return self.result(stopped=why)


def _entries(data: Any) -> tuple[str, Any]:
    """Where a listing's answer holds its entries (``data.entries`` or ``entries``), and them."""
    inner = data.get("data") if isinstance(data, dict) else None
    if isinstance(inner, dict) and "entries" in inner:
        return "data.entries", inner["entries"]
    return "entries", data.get("entries", []) if isinstance(data, dict) else []
