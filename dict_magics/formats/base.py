"""What every glossary format shares: names, limits, the formula guard and the column rules.
The guard's round trips are exact (``'x`` is written ``''x``); a hand-made ``'hello`` stays."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from ..errors import Remedy, UsageProblem
from ..models.glossary import GlossaryRow
from ..models.records import Entry, csv_cell
from ..models.terms import language_problem
from ..models.text import clip

FORMATS = ("csv", "tsv", "xlsx", "tbx")
MAX_FILE_BYTES = 64 * 1024 * 1024  # far beyond any user dictionary
MAX_ROWS = 200_000

_GUARDED = frozenset("=+-@\t\r'")  # what a leading ' guards (csv_cell's formula starts and ')
_SURROGATE = re.compile("[\ud800-\udfff]")


guard = csv_cell  # as EntryList.to_csv writes cells


def unguard(text: str) -> str:
    """Undo ``guard``: one leading ``'`` is dropped when the next character is one it guards."""
    if len(text) >= 2 and text[0] == "'" and text[1] in _GUARDED:
        return text[1:]
    return text


def format_of(path: str | Path, given: str | None = None) -> str:
    """The format named (``given``) or else the file's extension; ``UsageProblem`` if none."""
    if given:
        name = given.lower().lstrip(".")
        if name not in FORMATS:
            raise UsageProblem(f"unknown format {given!r}: use one of {', '.join(FORMATS)}.")
        return name
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix in FORMATS:
        return suffix
    raise UsageProblem(
        f"cannot tell the format of {str(path)!r} from its name (.csv, .tsv, .xlsx or .tbx).",
        option=Remedy.FORMAT,
    )


def parse_pair(text: str | None) -> tuple[str, str] | None:
    """``en:de`` -> ``("en", "de")``, both checked as language codes the service takes."""
    if text is None or not text.strip():
        return None
    parts = text.strip().split(":")
    if len(parts) != 2 or not all(parts):
        raise UsageProblem(f"the language pair must be FROM:TO, e.g. en:de, not {text!r}.")
    for code, field in zip(parts, ("fromLang", "toLang"), strict=True):
        problem = language_problem(code, field)
        if problem is not None:
            raise UsageProblem(f"the language pair: {problem.message}.")
    return parts[0], parts[1]


def check_size(path: Path) -> None:
    """A missing, unreadable or too large file stops here, before anything is parsed."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise UsageProblem(f"no file at {path}.") from None
    except OSError as exc:
        raise UsageProblem(f"cannot read {path}: {exc.strerror or exc}.") from None
    if path.is_dir():
        raise UsageProblem(f"{path} is a folder, not a glossary file.")
    if size > MAX_FILE_BYTES:
        raise UsageProblem(
            f"{path} is {size / 2**20:.0f} MiB; dict-magics reads glossary files of at most "
            f"{MAX_FILE_BYTES // 2**20} MiB."
        )


def too_many_rows(path: Path) -> UsageProblem:
    return UsageProblem(
        f"{path} has more than {MAX_ROWS:,} rows; dict-magics reads at most that many: split it."
    )


_TERMS = ("fromlang", "fromtext", "tolang", "totext")
_NAMES = ("id", *_TERMS, "source", "target")


class Columns:
    """Where the terms are in a table, from its header row (any case): ``fromLang, fromText,
    toLang, toText`` (and ``id``), or ``source, target`` with a pair; no column twice."""

    def __init__(self, path: Path, header: Sequence[str], pair: tuple[str, str] | None) -> None:
        self.path = path
        where: dict[str, int] = {}
        for i, name in enumerate(unguard(h).strip().lower() for h in header):
            if name in _NAMES and name in where:
                raise UsageProblem(
                    f"{path}: the column {header[i].strip()!r} appears twice (columns "
                    f"{where[name] + 1} and {i + 1}); rename or remove one."
                )
            where.setdefault(name, i)
        self.id, self.pair = where.get("id"), pair
        if all(name in where for name in _TERMS):
            if pair is not None:
                raise UsageProblem(
                    f"{path} names its languages (fromLang and toLang columns); a language pair "
                    "is for a file with two columns, source and target."
                )
            self.indices = [where[name] for name in _TERMS]
        elif "source" in where and "target" in where:
            if pair is None:
                raise UsageProblem(
                    f"{path} has source and target columns but no languages.",
                    option=Remedy.PAIR,
                )
            self.indices = [where["source"], where["target"]]
        else:
            shown = ", ".join(repr(h) for h in header[:8]) or "nothing"
            raise UsageProblem(
                f"{path}: the first row must name the columns fromLang, fromText, toLang, "
                "toText (and optionally id), or source, target with a language pair; it holds "
                f"{shown}."
            )

    @staticmethod
    def named(header: Sequence[str]) -> bool:
        """Whether ``header`` names the term columns (either way)."""
        names = {unguard(h).strip().lower() for h in header}
        return set(_TERMS) <= names or {"source", "target"} <= names

    def rows(self, records: Iterable[tuple[int, Sequence[str]]]) -> Iterator[GlossaryRow]:
        """A ``GlossaryRow`` per record that is not blank, cells unguarded, ``MAX_ROWS`` at most."""
        guarded = _GUARDED
        count = 0
        for number, record in records:
            # unguard() inlined: one call per cell costs a third of reading a large file
            cells = [c[1:] if c[:1] == "'" and c[1:2] in guarded else c for c in record]
            if not any(c.strip() for c in cells):
                continue
            count += 1
            if count > MAX_ROWS:
                raise too_many_rows(self.path)

            def at(index: int | None, cells: list[str] = cells) -> str:
                return cells[index] if index is not None and index < len(cells) else ""

            entry_id = at(self.id).strip() or None
            if self.pair is None:
                from_lang, from_text, to_lang, to_text = (at(i) for i in self.indices)
            else:
                (from_lang, to_lang), (from_text, to_text) = self.pair, map(at, self.indices)
            yield GlossaryRow(number, from_lang, from_text, to_lang, to_text, id=entry_id)


def refuse_unwritable(
    entries: Iterable[Entry],
    kind: str,
    cannot: Callable[[str], str] | None = None,
    instead: str = "",
) -> None:
    """Refuse, naming the entries, when terms hold what a ``kind`` file cannot: a lone surrogate,
    or what ``cannot(term)`` names (``instead``: the formats that can hold it)."""
    found, surrogates = [], 0
    for entry in entries:
        for text in entry.terms:
            why = "a lone surrogate" if _SURROGATE.search(text) else cannot and cannot(text)
            if why:
                found.append(f"entry {entry.id} ({clip(text, 40)!r}: {why})")
                surrogates += why == "a lone surrogate"
                break
    if found:
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        other = f", or export to {instead}" if surrogates < len(found) else ""
        raise UsageProblem(
            f"a .{kind} file cannot hold what {len(found)} "
            f"entr{'y holds' if len(found) == 1 else 'ies hold'}: "
            f"{'; '.join(found[:3])}{more}; nothing was written. Fix those entries{other}."
        )
