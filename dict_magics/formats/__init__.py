"""Glossary files: read rows from, and write entries to, csv, tsv, xlsx and tbx.

Above ``models``, below ``operations``: it knows file layouts, never the service. A file that
cannot be read as its author meant is refused, naming where; a write that could not be read
back as the same terms is refused, naming the entries. Every reader is bounded; the TBX reader
expands no entity and fetches nothing.
"""

from .base import FORMATS, format_of, guard, parse_pair, unguard
from .files import read_glossary, write_glossary

__all__ = ["FORMATS", "format_of", "guard", "parse_pair", "read_glossary", "unguard"]
__all__ += ["write_glossary"]
