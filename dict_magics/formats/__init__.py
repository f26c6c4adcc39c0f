"""Glossary files: read rows from, and write entries to, csv, tsv, xlsx and tbx.

A layer above ``models`` and below ``operations``: it knows file layouts, never the service.
``read_glossary`` gives a ``models.Glossary`` (rows with their row numbers); ``write_glossary``
writes entries so that reading the file back gives exactly the same terms. Every reader is
bounded (file size, rows, an xlsx's uncompressed size) and the TBX reader expands no entity
and fetches nothing. Names load on first use, so importing this package costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:
    from .base import FORMATS, format_of, guard, parse_pair, unguard
    from .files import read_glossary, write_glossary

_WHERE = {
    "FORMATS": "base",
    "format_of": "base",
    "guard": "base",
    "parse_pair": "base",
    "unguard": "base",
    "read_glossary": "files",
    "write_glossary": "files",
}
__all__ = [
    "FORMATS",
    "format_of",
    "guard",
    "parse_pair",
    "read_glossary",
    "unguard",
    "write_glossary",
]

__getattr__, __dir__ = lazy_names(globals(), _WHERE)
