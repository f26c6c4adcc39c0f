"""Glossary files: read rows from, and write entries to, csv, tsv, xlsx and tbx.

A layer above ``models`` and below ``operations``: it knows file layouts, never the service.
``read_glossary`` gives a ``models.Glossary`` (rows with their row numbers), or refuses a file
it cannot read as its author meant, naming where; ``write_glossary`` writes entries so that
reading the file back gives exactly the same terms, or refuses, naming the entries a format
cannot hold. Every reader is bounded (file size, rows, an xlsx's uncompressed size) and the TBX
reader expands no entity and fetches nothing. The readers of each format load on first use.
"""

from .base import FORMATS, format_of, guard, parse_pair, unguard
from .files import read_glossary, write_glossary

__all__ = [
    "FORMATS",
    "format_of",
    "guard",
    "parse_pair",
    "read_glossary",
    "unguard",
    "write_glossary",
]
