"""TBX-Basic glossaries: one concept entry per dictionary entry, two language sections; v3
and v2 read, v3 written. Read with defusedxml: an entity or a reference outside the document
is refused. Without a pair the first language section is the source."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from ..errors import UsageProblem
from ..models.glossary import Glossary, GlossaryRow, InvalidRow
from ..models.records import Entry
from .base import MAX_ROWS, refuse_unwritable, too_many_rows

_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_CONCEPTS = ("conceptEntry", "termEntry")
_SECTIONS = ("langSec", "langSet")
_ID_PREFIX = "id-"
# What XML 1.0 cannot hold even escaped: C0 controls but tab, LF, CR; U+FFFE/FFFF; surrogates
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _local(tag: Any) -> str:
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


def _parse(path: Path) -> Any:
    import defusedxml.ElementTree as safe_tree
    from defusedxml import DefusedXmlException

    try:
        return safe_tree.parse(
            str(path), forbid_dtd=False, forbid_entities=True, forbid_external=True
        ).getroot()
    except DefusedXmlException as exc:
        raise UsageProblem(
            f"{path} is refused: it declares an entity or refers outside itself "
            f"({type(exc).__name__}); dict-magics expands no entity and fetches nothing."
        ) from None
    except safe_tree.ParseError as exc:
        raise UsageProblem(f"{path} is not well-formed XML ({exc}).") from None
    except OSError as exc:
        raise UsageProblem(f"cannot read {path}: {exc.strerror or exc}.") from None


def read(path: Path, kind: str, pair: tuple[str, str] | None, sheet: None = None) -> Glossary:
    """A TBX file's concept entries as rows (from 1), and those that cannot be one entry."""
    root = _parse(path)
    if _local(root.tag) not in ("tbx", "martif"):
        raise UsageProblem(f"{path} is not a TBX file (its root is <{_local(root.tag)}>).")
    rows: list[GlossaryRow] = []
    bad: list[InvalidRow] = []
    number = 0
    for concept in root.iter():
        if _local(concept.tag) not in _CONCEPTS:
            continue
        number += 1
        if number > MAX_ROWS:
            raise too_many_rows(path)
        sections = [
            (section.get(_XML_LANG) or "", _terms(section))
            for section in concept
            if _local(section.tag) in _SECTIONS
        ]
        found = _pick(sections, pair)
        if isinstance(found, str):  # its terms still name entries a sync must not delete
            bad.append(InvalidRow(number, found, tuple(t for _, terms in sections for t in terms)))
            continue
        (from_lang, from_text), (to_lang, to_text) = found
        raw_id = concept.get("id") or ""
        entry_id = raw_id[len(_ID_PREFIX) :] if raw_id.startswith(_ID_PREFIX) else None
        rows.append(GlossaryRow(number, from_lang, from_text, to_lang, to_text, id=entry_id))
    return Glossary(path, kind, rows, bad)


def _terms(section: Any) -> list[str]:
    return ["".join(term.itertext()) for term in section.iter() if _local(term.tag) == "term"]


def _pick(
    sections: list[tuple[str, list[str]]], pair: tuple[str, str] | None
) -> tuple[tuple[str, str], tuple[str, str]] | str:
    """(source, target) as (language, term), or the reason the concept is not one entry."""
    if pair is None:
        if len(sections) != 2:
            langs = ", ".join(lang or "?" for lang, _ in sections) or "none"
            return (
                f"the concept has {len(sections)} language sections ({langs}); one entry needs "
                "two (or a language pair, FROM:TO, to pick them)"
            )
        chosen = sections
    else:
        chosen = []
        for code in pair:
            matching = [s for s in sections if s[0].lower() == code.lower()]
            if not matching:
                return f"the concept has no term in {code}"
            chosen.append((code, matching[0][1]))
    picked = []
    for lang, terms in chosen:
        if len(terms) != 1:
            shown = lang or "?"
            return f"the concept holds {len(terms)} terms in {shown}; one per language is synced"
        picked.append((lang, terms[0]))
    return picked[0], picked[1]


def _not_xml(text: str) -> str:
    found = _NOT_XML.search(text)
    return f"U+{ord(found.group()):04X}, which XML cannot hold" if found else ""


def to_bytes(entries: list[Entry], kind: str = "tbx") -> bytes:
    """A TBX-Basic (v3, DCA style) document: one concept entry per entry."""
    refuse_unwritable(entries, "tbx", _not_xml, ".xlsx or .csv")
    lang = quoteattr(entries[0].from_lang) if entries else '"en"'
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<tbx type="TBX-Basic" style="dca" xml:lang={lang} xmlns="urn:iso:std:iso:30042:ed-2">',
        "<tbxHeader><fileDesc><sourceDesc><p>dict-magics</p></sourceDesc></fileDesc></tbxHeader>",
        "<text><body>",
    ]
    for entry in entries:
        plain = entry.id.isascii() and entry.id.isalnum()
        ident = f" id={quoteattr(_ID_PREFIX + entry.id)}" if plain else ""
        out.append(f"<conceptEntry{ident}>")
        for code, term in ((entry.from_lang, entry.from_text), (entry.to_lang, entry.to_text)):
            text = escape(term).replace("\r", "&#13;")  # a raw CR would be read as LF
            out.append(
                f"<langSec xml:lang={quoteattr(code)}><termSec><term>{text}</term></termSec>"
                "</langSec>"
            )
        out.append("</conceptEntry>")
    out += ["</body></text>", "</tbx>"]
    return ("\n".join(out) + "\n").encode("utf-8")
