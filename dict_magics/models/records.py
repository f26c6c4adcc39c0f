"""What the service holds and what a request did: entries, and results reported truthfully
(success, failure and unknown never look alike)."""

from __future__ import annotations

import csv
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..errors import Remedy
from .entry import Entry
from .impact import ImpactMixin, after_change
from .text import (
    GREY,
    Outcomes,
    Rendered,
    bounded,
    capped,
    clip,
    count,
    dataframe,
    entries,
    escape,
    html_row,
    html_table,
    remedy,
    shown,
    text_table,
)

if TYPE_CHECKING:
    from .lint import LintReport
    from .textcheck import CheckReport

Outcome = Literal["success", "failure", "unknown", "absent"]
SHOWN = 20  # entries a result names one by one; the rest are counted


class Cause(str, Enum):
    """Why a request ended as it did, for programs (retry-failed, grouping; ``reason`` says the
    same in words and is never parsed), with the title of its group in a batch (``label``)."""

    OK = "ok", "not deleted"
    ABSENT = "absent", "not in the dictionary"  # nothing to do: nothing was sent
    REFUSED = "refused", "refused by the service"  # the service answered status: failure
    AUTH = "auth", "credentials refused"  # 401 / 403 or 40001 / 40002 / 40003 / 40006
    NONCE = "nonce"  # 40005 after every fresh nonce, or 40008
    INVALID = "invalid"  # 40200 / 40201 / 40202: the request's data; never worth re-sending
    NONCE_REUSED = "nonce_reused", "nonce already used (another process with the same key?)"
    BAD_ANSWER = "bad_answer", "unreadable answer"
    TOO_LARGE = "too_large", "answer too large"
    REDIRECT = "redirect", "redirected (not followed)"  # so the credentials went nowhere else
    RATE_LIMITED = "rate_limited", "rate-limited"  # 429 or 40103 until the patience ran out
    UNAVAILABLE = "unavailable", "service unavailable or unreachable"  # until retries ran out
    TIMEOUT = "timeout", "no answer in time"  # after the request was sent
    CONNECTION_LOST = "connection_lost", "connection lost"  # the request may have been sent
    GATEWAY = "gateway", "a gateway answered"  # 502 / 504: the service may have acted
    DNS = "dns", "host name not found"
    TLS = "tls", "TLS handshake failed"
    NOT_ATTEMPTED = "not_attempted", "not sent"  # Ctrl-C, Cancel, repeated auth failures
    ERROR = "error", "request error"  # anything else the network layer raised

    label: str

    def __new__(cls, value: str, label: str = "") -> Cause:
        member = str.__new__(cls, value)
        member._value_ = value
        member.label = label or value
        return member


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'")


def csv_cell(text: str) -> str:
    """``text`` with a leading ``'`` where a spreadsheet would run it as a formula, or where it
    starts with ``'`` (so ``formats.base.unguard`` gives every term back exactly)."""
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


@dataclass(frozen=True)
class EntryList(Rendered):
    """A listing of the dictionary (or part of it), in the service's order."""

    entries: list[Entry] = field(default_factory=list)
    host: str = ""

    @property
    def ids(self) -> list[str]:
        """The ids, ready for ``%dict_delete {listing.ids}``."""
        return [e.id for e in self.entries]

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    def __getitem__(self, index: int) -> Entry:
        return self.entries[index]

    def by_id(self) -> dict[str, Entry]:
        """Entries keyed by id (the last wins if the service repeats an id)."""
        return {e.id: e for e in self.entries}

    def filter(
        self, match: str | None = None, from_lang: str | None = None, to_lang: str | None = None
    ) -> EntryList:
        """The entries whose terms contain ``match`` and whose languages are the ones given."""
        kept = [e for e in self.entries if e.matches(match, from_lang, to_lang)]
        return EntryList(kept, self.host)

    def lint(self) -> LintReport:
        """Every problem the entries hold (``lint.KINDS``); offline."""
        from .lint import lint_entries

        return lint_entries(self.entries, self.host)

    def check(self, texts: str | Sequence[str], **how: Any) -> CheckReport:
        """Which entries would apply to each element of ``texts``; offline, nothing is sent."""
        from .textcheck import check_text

        return check_text(self.entries, texts, host=self.host, **how)

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` with the service's column names (pandas is optional)."""
        return dataframe((e.to_service() for e in self.entries), Entry.FIELDS, "EntryList")

    def to_csv(self, path: str | Path) -> Path:
        """Write the entries as CSV with the service's column names; returns the path. UTF-8
        with a BOM (so Excel reads Japanese), cells formula-guarded, a lone surrogate escaped."""
        path = Path(path)
        with path.open("w", encoding="utf-8-sig", errors="backslashreplace", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(Entry.FIELDS)
            writer.writerows([csv_cell(c) for c in (e.id, *e.terms)] for e in self.entries)
        return path

    def __repr__(self) -> str:
        return f"EntryList({len(self.entries)} entries, host={self.host!r})"

    _HEADINGS = ("id", "from", "source", "to", "target")
    _pretty = 200  # the first rows only, like the HTML

    def _title(self) -> str:
        where = f" at {shown(self.host)}" if self.host else ""
        return f"{entries(len(self)) if self.entries else 'no entries'}{where}"

    def _more(self, listed: int) -> str:
        return f"\u2026 and {len(self) - listed} more (total {len(self)})"

    def text(self, limit: int | None = None) -> str:
        """A title, then one aligned row per entry (the first ``limit``), shown safely."""
        listed = self.entries[:limit]
        if not listed:
            return self._title()
        rows = [self._HEADINGS, *([shown(v) for v in (e.id, *e.terms)] for e in listed)]
        lines = [self._title(), *("  " + line for line in text_table(rows, right=0))]
        if len(listed) < len(self):
            lines.append(self._more(len(listed)))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = bounded(html_row(clip(v) for v in (e.id, *e.terms)) for e in self.entries)
        more = f"<div>{escape(self._more(len(rows)))}</div>" if len(rows) < len(self) else ""
        return (
            f'<div class="dict-magics-entries"><div><b>{escape(self._title())}</b></div>'
            f"{html_table(self._HEADINGS, rows)}{more}</div>"
        )


@dataclass(frozen=True)
class _Answered(Outcomes):
    """What every one-request result (a deletion, an addition, an update) holds, told in one
    line. ``code`` and ``vendor_message``: the vendor's code and words of the last answer
    (escape them where shown); ``snapshot``: the file holding the entry as it was before (undo
    reads it); ``names``: a front end's words for the remedies it names."""

    status: Literal["success", "failure"]
    _: KW_ONLY
    http_status: int | None = None
    reason: str | None = None
    outcome_unknown: bool = False
    attempts: int = 1
    elapsed: float = 0.0
    verified: bool = False
    cause: Cause = Cause.OK
    code: int | None = None
    vendor_message: str | None = None
    snapshot: str | None = None
    names: Mapping[str, str] | None = field(default=None, repr=False, compare=False)
    _css = "result"

    @property
    def ok(self) -> bool:
        """True only when the service said so, or a listing showed it."""
        return self.status == "success"

    @property
    def outcome(self) -> Outcome:
        """``success``, ``failure`` or ``unknown``."""
        return "unknown" if self.outcome_unknown else self.status

    @property
    def gone(self) -> int:
        """1 when the change may have happened (done, or outcome unknown): a snapshot's."""
        return int(self.ok or self.outcome_unknown)

    def _headline(self) -> str:
        raise NotImplementedError

    def _details(self) -> str:
        http = "" if self.http_status is None else f"HTTP {self.http_status}, "
        return f"{http}{count(self.attempts, 'attempt')}, {self.elapsed:.2f} s"

    def item(self, details: bool = True) -> tuple[str, str, str]:
        """(outcome, what happened, why not) for an outline, ``(HTTP 200, 1 attempt, 0.03 s)``
        last."""
        why = self.reason if self.reason and not self.ok else ""
        tail = f" ({self._details()})" if details else ""
        if why:
            return self.outcome, self._headline(), why + tail
        return self.outcome, self._headline() + tail, ""

    def _kind(self) -> str:
        return self.outcome

    def _summary(self) -> str:
        _, what, why = self.item()
        return f"{what} \u2014 {why}" if why else what

    def _tail(self, html: bool) -> str:
        return _kept(self.snapshot, self.gone, self.names, html)


def _kept(snapshot: str | None, gone: int, names: Mapping[str, str] | None, html: bool) -> str:
    """Where the snapshot is and what puts back the ``gone`` entries (0, 1 or more)."""
    if snapshot is None or not gone:
        return ""
    undo = f"{remedy(names, Remedy.RESTORE)} puts {'it' if gone == 1 else 'them'} back"
    if not html:
        return f"\n  Snapshot kept at {shown(snapshot)}: {shown(undo)}."
    return (
        f'<div class="dict-magics-snapshot" style="color:{GREY}">Snapshot kept at '
        f"<code>{escape(snapshot)}</code>: {escape(undo)}.</div>"
    )


@dataclass(frozen=True)
class DeleteResult(_Answered):
    """The outcome of one request: one entry, or the purge (``entry_id is None``). ``success``
    only when the service said so (or a listing proved it: ``verified``), ``failure`` only when
    it certainly did not act, else ``unknown``; ``status`` keeps version 1's two values."""

    entry_id: str | None
    _: KW_ONLY
    entry: Entry | None = None
    purged: int | None = None
    """A purge that succeeded: how many entries the listing just before showed."""
    absent: bool = False
    """The entry was not there (nothing sent, or nothing deleted): not a failure."""

    @property
    def done(self) -> bool:
        """True when the entry is known to be gone: deleted now, or absent already."""
        return self.ok or self.absent

    @property
    def outcome(self) -> Outcome:
        """``success``, ``failure``, ``unknown`` or ``absent``: what a reader must tell apart."""
        if self.outcome_unknown:
            return "unknown"
        return "absent" if self.absent else self.status

    @property
    def target(self) -> str:
        """What was deleted, in words: the id (with its terms when known), or every entry."""
        if self.entry_id is None:
            if self.purged is None:
                return "every entry"
            kept = ", kept" if self.snapshot else ""
            return f"every entry ({entries(self.purged)} listed just before{kept})"
        if self.entry is not None:
            return f"{self.entry_id}: {self.entry.describe()}"
        return f"entry {self.entry_id!r}"

    def _headline(self) -> str:
        kind = self.outcome
        if kind == "success":
            return f"deleted {self.target}" + " (verified by a listing)" * self.verified
        if kind == "unknown":
            return f"outcome unknown for {self.target}: it may or may not have been deleted"
        if kind == "absent":
            return f"{self.target} absent (not in the dictionary)"
        return f"{self.target} not deleted"

    def _tail(self, html: bool) -> str:
        gone = self.gone * (1 if self.entry_id is not None else 2)  # a purge's: "them"
        return _kept(self.snapshot, gone, self.names, html)


@dataclass(frozen=True)
class AddResult(_Answered):
    """The outcome of one POST that adds ``entry`` (the service returns no new id); an
    ``unknown`` one is settled by a listing, never re-sent blindly."""

    entry: Entry

    def _headline(self) -> str:
        what = self.entry.describe()
        if self.outcome == "success":
            where = f"entry {self.entry.id}" if self.entry.id else "an entry (id not found)"
            return f"added {where}: {what}" + " (verified by a listing)" * self.verified
        if self.outcome == "unknown":
            return f"outcome unknown: {what} may or may not have been added"
        return f"not added: {what}"


@dataclass(frozen=True, repr=False)
class AddBatch(Outcomes):
    """What ``add_entries`` did: one ``AddResult`` per entry, in order."""

    results: list[AddResult] = field(default_factory=list)
    interrupted: bool = False
    why: str = ""
    requests: int = 0
    settled: tuple[int, ...] = ()
    after: list[Entry] | None = field(default=None, repr=False, compare=False)
    _css = "add-batch"

    @property
    def added(self) -> list[Entry]:
        return [r.entry for r in self.results if r.ok]

    @property
    def failed(self) -> list[AddResult]:
        return [r for r in self.results if r.outcome == "failure"]

    @property
    def unknown(self) -> list[AddResult]:
        return [r for r in self.results if r.outcome_unknown]

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    def __len__(self) -> int:
        return len(self.results)

    _SHOWN = 50

    def _summary(self) -> str:
        added, total = len(self.added), len(self.results)
        parts = [
            f"added {added:,} of {entries(total)}" if added != total else f"added {entries(total)}"
        ]
        if self.failed:
            parts.append(f"{len(self.failed):,} not added")
        if self.unknown:
            parts.append(f"{len(self.unknown):,} may or may not have been added")
        line = ", ".join(parts) + f" ({count(self.requests, 'request')})"
        if self.interrupted:
            line += f"; interrupted{': ' + shown(self.why) if self.why else ''}"
        return line

    def _kind(self) -> str:
        if self.ok:
            return "success"
        return "unknown" if self.unknown and not self.failed else "failure"

    def _items(self) -> list[tuple[str, str, str]]:
        items: list[tuple[str, str, str]] = []
        for results in ([r for r in self.results if r.ok], self.failed, self.unknown):
            items += capped([r.item(details=False) for r in results], self._SHOWN)
        return items


@dataclass(frozen=True)
class UpdateResult(_Answered):
    """The outcome of one PUT of ``new``'s terms under ``entry_id`` (``old``: as listed before).
    A PUT does the same however often it is sent, so it is retried like a DELETE."""

    entry_id: str
    new: Entry
    _: KW_ONLY
    old: Entry | None = None

    def _headline(self) -> str:
        new = self.new.describe()
        change = f"{self.old.describe()} \u21d2 {new}" if self.old is not None else new
        if self.outcome == "success":
            verified = " (verified by a listing)" * self.verified
            return f"updated entry {self.entry_id}: {change}{verified}"
        if self.outcome == "unknown":
            return f"outcome unknown for entry {self.entry_id}: it may or may not now read {new}"
        return f"entry {self.entry_id} not updated ({change})"


@dataclass(frozen=True)
class BatchResult(Outcomes):
    """The outcomes of several deletions, in the order given. ``interrupted``: Ctrl-C (or a
    cancel) stopped the batch after the requests sent; ids never sent are ``not_attempted``."""

    results: list[DeleteResult] = field(default_factory=list)
    interrupted: bool = False
    snapshot: str | None = None
    names: Mapping[str, str] | None = field(default=None, repr=False, compare=False)
    _css = "batch"

    @property
    def succeeded(self) -> int:
        return sum(1 for r in self.results if r.ok)

    @property
    def failed(self) -> int:
        """How many did not succeed (failures and unknown outcomes alike; absent ones aside)."""
        return len(self.results) - self.succeeded - self.absent

    @property
    def absent(self) -> int:
        return sum(1 for r in self.results if r.absent)

    @property
    def unknown(self) -> int:
        return sum(1 for r in self.results if r.outcome_unknown)

    @property
    def ok(self) -> bool:
        """True when every deletion succeeded or found its entry absent (at least one id)."""
        return bool(self.results) and self.failed == 0

    @property
    def done(self) -> bool:
        """The same as ``ok`` (one name for one result and a batch)."""
        return self.ok

    @property
    def failures(self) -> list[DeleteResult]:
        """The results that did not succeed (absent ones aside), in input order, each id once."""
        first: dict[str | None, DeleteResult] = {}
        for r in self.results:
            if not r.done:
                first.setdefault(r.entry_id, r)
        return list(first.values())

    def __len__(self) -> int:
        return len(self.results)

    @property
    def gone(self) -> int:
        return len({r.entry_id for r in self.results if r.gone})

    _EXAMPLES = 5  # results shown per group of failures

    def _summary(self) -> str:
        total = len(self.results)
        text = f"deleted {self.succeeded} of {total} entr{'y' if total == 1 else 'ies'}"
        repeats = total - len({r.entry_id for r in self.results})
        if repeats:
            text += f" ({repeats} repeated id{'' if repeats == 1 else 's'}, each sent once)"
        if self.absent:
            text += f"; {self.absent} absent (not in the dictionary, nothing to delete)"
        if self.failed:
            text += f"; {self.failed} not deleted"
            if self.unknown:
                text += f" ({self.unknown} with unknown outcome)"
        if self.interrupted:
            never = sum(1 for r in self.failures if r.cause is Cause.NOT_ATTEMPTED)
            text += f"; interrupted: {never} never sent" if never else "; interrupted"
            if self.snapshot:  # a listing comes first: what is gone is then absent, not sent
                text += "; the same deletion run again finishes it"
        return text

    def _kind(self) -> str:
        return "success" if self.ok else "failure"

    def _items(self) -> list[tuple[Any, ...]]:
        """What was deleted (each id once), then the rest grouped by outcome and cause, the
        largest group first, absent last."""
        done = list({r.entry_id: r for r in self.results if r.ok}.values())
        items = capped([("success", r.target, "") for r in done], SHOWN, "more deleted")
        groups: dict[tuple[str, Cause], list[DeleteResult]] = {}
        seen: set[str | None] = set()
        for result in [*self.failures, *(r for r in self.results if r.absent)]:
            if not (result.absent and result.entry_id in seen):
                seen.add(result.entry_id)
                groups.setdefault((result.outcome, result.cause), []).append(result)
        for (kind, cause), results in sorted(
            groups.items(), key=lambda group: (group[0][0] == "absent", -len(group[1]))
        ):
            what = "absent: not in the dictionary" if kind == "absent" else cause.label
            if kind != "absent":
                what = f"{'outcome unknown' if kind == 'unknown' else 'not deleted'}: {what}"
            under = capped([r.item() for r in results], self._EXAMPLES)
            items.append((kind, f"{len(results)} {what}", "", under))
        return items

    def _tail(self, html: bool) -> str:
        return _kept(self.snapshot, self.gone, self.names, html)


@dataclass(frozen=True)
class DryRunResult(ImpactMixin):
    """What a delete or purge would do, nothing sent: ``entries`` would go, ``missing`` ids are
    not listed; ``listed`` is False when the service offers no listing (only ids are known)."""

    operation: Literal["delete", "purge"]
    host: str
    profile: str
    entries: list[Entry] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    listed: bool = True
    listing_age: float | None = None
    """How old the listing the terms come from is (``listing_max_age`` may allow a cached one)."""

    _css = "dryrun"

    def _summary(self) -> str:
        return f"dry run: nothing that changes the dictionary was sent: {self._would()}"

    def _would(self) -> str:
        where = f"at {self.host} (profile {self.profile!r})"
        if self.operation == "purge":
            if not self.listed:
                return (
                    f"a purge would delete every entry {where}; how many is unknown "
                    "(the service offers no listing)"
                )
            return f"a purge would delete all {entries(len(self.entries))} {where}"
        if not self.listed:
            return (
                f"would send a deletion for {count(len(self.missing), 'id')} {where}; their "
                "terms are unknown (the service offers no listing), so it could not be undone"
            )
        text = f"would delete {entries(len(self.entries))} {where}"
        if self.missing:
            text += f"; {len(self.missing):,} not in the dictionary"
        if self.listing_age:
            text += (
                f"; terms from this session's listing of {self.listing_age:.1f} s ago (the "
                "listing_max_age setting): an edit made elsewhere since is not shown, and the "
                "snapshot would keep these terms"
            )
        return text

    def _items(self) -> list[tuple[Any, ...]]:
        items = capped([("", f"{e.id}: {e.describe()}", "") for e in self.entries], SHOWN)
        if self.missing:
            ids = ", ".join(repr(i) for i in self.missing[:SHOWN])
            if len(self.missing) > SHOWN:
                ids += f", \u2026 ({len(self.missing):,} in all)"
            label = "not in the dictionary (nothing to delete)" if self.listed else "ids"
            items.append(("", f"{label}: {ids}", ""))
        return items

    def _held(self) -> Sequence[Entry] | None:
        return self.entries if self.operation == "purge" else self.listing

    def _after(self, before: list[Entry]) -> list[Entry]:
        return [] if self.operation == "purge" else after_change(before, deletes=self.entries)


@dataclass(frozen=True)
class RestoreResult(Outcomes):
    """What a restore did (or would do): entries added back, ``put_back`` under their ids
    (``now``: what they read before), ``removed`` (the change had added them), ``skipped``
    (already back), ``changed`` since (what it would put back, as it is now; ``None``: gone),
    and those that did not go back. ``snapshot``: the restore's own, which undoes it."""

    added: list[Entry] = field(default_factory=list)
    skipped: list[Entry] = field(default_factory=list)
    failed: list[tuple[Entry, str]] = field(default_factory=list)
    unknown: list[Entry] = field(default_factory=list)
    dry_run: bool = False
    put_back: list[Entry] = field(default_factory=list)
    removed: list[Entry] = field(default_factory=list)
    listing_age: float | None = None
    """How long before the delete its terms were listed (``listing_max_age``)."""
    changed: list[tuple[Entry, Entry | None]] = field(default_factory=list)
    now: Mapping[str, Entry] = field(default_factory=dict)
    snapshot: str | None = None
    _css = "restore"

    @property
    def ok(self) -> bool:
        """True when nothing failed and nothing is left unknown."""
        return not self.failed and not self.unknown

    def _kind(self) -> str:
        return "failure" if self.failed else "unknown" if self.unknown else "success"

    def _summary(self) -> str:
        added, would = len(self.added), "would " * self.dry_run
        changed = len(self.put_back) + len(self.removed)
        total = added + len(self.failed) + len(self.unknown) + changed
        if total + len(self.skipped) + len(self.changed) == 0:
            return "nothing to restore: the snapshot holds no entries"
        text = f"{'would add' if would else 'restored'} {entries(added)}"
        text = text if total else "nothing to put back"
        if not self.ok:
            text = f"restored {added + changed} of {entries(total)}"
        if changed:  # the undo of an update or a sync: only what happens is said
            done = (
                ("put back", self.put_back, " under their ids"),
                ("re-add" if would else "re-added", self.added, ""),
                ("remove" if would else "removed", self.removed, " the change had added"),
            )
            said = [f"{would}{verb} {entries(len(es))}{tail}" for verb, es, tail in done if es]
            text = ("undo: " if self.ok or self.dry_run else f"{text}; ") + ", ".join(said)
        left = f"{entries(len(self.changed))} left as {'they are' if self.changed[1:] else 'it is'}"
        notes = [
            f"{len(self.skipped)} already present (skipped)" * bool(self.skipped),
            f"{left} (changed since)" * bool(self.changed),
            f"{len(self.failed)} not restored" * bool(self.failed),
            f"{len(self.unknown)} with unknown outcome" * bool(self.unknown),
            f"terms as listed {self.listing_age or 0:.1f} s before the delete (the listing_max_age"
            " setting: an edit made elsewhere in between is not in them)" * bool(self.listing_age),
        ]
        text += "".join(f"; {note}" for note in notes if note)
        return text + " (dry run: nothing that changes the dictionary was sent)" * self.dry_run

    def _items(self) -> list[tuple[str, str, str]]:
        items = [("failure", e.describe(), reason) for e, reason in self.failed]
        unknown = "outcome unknown: it may or may not have been added or put back (run the "
        unknown += "restore again: it sends only what is not back yet)"
        items += [("unknown", e.describe(), unknown) for e in self.unknown]
        for back, now in self.changed:
            if not back.id:
                what, note = back.describe(), "added by the change; no entry reads so now "
                note += "(changed or deleted since): not removed"
            else:
                what = f"entry {back.id} left as it is"
                note = f"changed since: now {now.describe() if now else 'deleted'} / will put "
                note += f"back {back.describe()}" + " (asked first; yes leaves it)" * self.dry_run
            items.append(("absent", what, note))
        for verb, done, past in (
            ("add", self.added, "added"),
            ("put back", self.put_back, "put back"),
            ("remove", self.removed, "removed"),
        ):
            said = f"would {verb}" if self.dry_run else past
            for e in done[:SHOWN]:
                named = verb != "add" or bool(e.id and not self.dry_run)  # a dry run has no new id
                was = self.now.get(e.id) if verb == "put back" else None
                text = f"{said} {f'entry {e.id}: ' * named}{e.describe()}"
                if was is not None and self.dry_run:
                    text = f"entry {e.id}: now {was.describe()} / will put back {e.describe()}"
                elif was is not None:
                    text += f" (was {was.describe()})"
                items.append(("success", text, ""))
            if len(done) > SHOWN:
                items.append(("", f"\u2026 and {len(done) - SHOWN:,} more", ""))
        if self.snapshot:
            kept = f"Kept first at {self.snapshot}: restoring that file undoes this restore."
            items.append(("", kept, ""))
        return items
