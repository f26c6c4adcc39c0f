"""One dictionary entry, and the id rule (a module of its own: ``lint`` and ``textcheck`` use
it, and ``records.EntryList`` uses them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeGuard

MAX_ID = 2**63 - 1  # a signed 64-bit integer, as the service's ids are


@dataclass(frozen=True)
class Entry:
    """One dictionary entry: a source term the engine always translates to a target term."""

    id: str
    from_lang: str
    from_text: str
    to_lang: str
    to_text: str

    FIELDS = ("id", "fromLang", "fromText", "toLang", "toText")

    @classmethod
    def from_service(cls, data: Any) -> Entry:
        """Build from the service's JSON object; raises ``ValueError`` naming what is wrong."""
        if not isinstance(data, dict):
            raise ValueError(f"an entry must be a JSON object, not {type(data).__name__}")
        missing = [name for name in cls.FIELDS if name not in data]
        if missing:
            raise ValueError(f"an entry lacks {', '.join(missing)}")
        entry_id = data["id"]
        if isinstance(entry_id, bool) or not isinstance(entry_id, int | str):
            raise ValueError(f"an entry id must be a number or text, not {_short(entry_id)}")
        texts = [data[name] for name in cls.FIELDS[1:]]
        if not all(isinstance(t, str) for t in texts):
            raise ValueError(f"entry {_short(entry_id)} has a term or language that is not text")
        return cls(str(entry_id), *texts)

    def to_service(self, *, with_id: bool = True) -> dict[str, str]:
        """The service's field names (``POST`` takes them without ``id``)."""
        data = {
            "fromLang": self.from_lang,
            "fromText": self.from_text,
            "toLang": self.to_lang,
            "toText": self.to_text,
        }
        return {"id": self.id, **data} if with_id else data

    @property
    def terms(self) -> tuple[str, str, str, str]:
        """What makes two entries the same entry, whatever their ids."""
        return (self.from_lang, self.from_text, self.to_lang, self.to_text)

    def matches(
        self, match: str | None = None, from_lang: str | None = None, to_lang: str | None = None
    ) -> bool:
        """True when ``match`` is in either term (case-insensitive) and the languages agree."""
        if from_lang and self.from_lang.casefold() != from_lang.casefold():
            return False
        if to_lang and self.to_lang.casefold() != to_lang.casefold():
            return False
        if match:
            needle = match.casefold()
            return needle in self.from_text.casefold() or needle in self.to_text.casefold()
        return True

    @property
    def pair(self) -> str:
        """``ja→en``: the languages, as every message writes them."""
        return f"{self.from_lang}\u2192{self.to_lang}"

    def describe(self) -> str:
        """``金曜日 → FRI (ja→en)``: the entry as a person recognises it."""
        return f"{self.from_text} \u2192 {self.to_text} ({self.pair})"


def is_int(value: object) -> TypeGuard[int]:
    """An ``int`` that is not a ``bool``: ``True`` is neither an id nor a count."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_id(value: object) -> str:
    """``str(int(value))`` for an id written in ASCII digits (or an ``int`` >= 0), so ``017`` is
    entry 17 and no text can ever reach another path; ``InvalidIdError`` for anything else."""
    from ..errors import InvalidIdError, Remedy

    if is_int(value):
        number = int(value)
    elif isinstance(value, str) and 0 < len(value) <= 19 and value.isascii() and value.isdigit():
        number = int(str.__str__(value))
    else:
        number = -1
    if not 0 <= number <= MAX_ID:
        purge = isinstance(value, str) and value.strip().lower() == "dictionary-all"
        digits = number > MAX_ID or (isinstance(value, str) and value.isascii() and value.isdigit())
        rule = f"at most {MAX_ID:,}" if digits else "written in ASCII digits (0-9) only"
        raise InvalidIdError(
            f"{_short(value)} is not an entry id: ids are whole numbers {rule}; nothing was sent.",
            option=Remedy.PURGE if purge else None,  # the front ends name the purge command
        )
    return str(number)


def _short(value: object) -> str:
    """A bounded ``repr`` for messages (a value from outside may be megabytes)."""
    import reprlib

    shown = reprlib.Repr()
    shown.maxstring = shown.maxother = 60
    shown.maxlist = shown.maxdict = 4
    shown.maxlevel = 3
    return shown.repr(value)
