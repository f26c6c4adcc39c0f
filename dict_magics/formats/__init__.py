"""Glossary files (csv, tsv, xlsx, tbx): file layouts, never the service. A file that cannot
be read as its author meant, or a write that could not be read back as the same terms, is
refused, naming where; every reader is bounded."""

from .base import FORMATS, format_of, guard, parse_pair, unguard
from .files import read_glossary, write_glossary

__all__ = ["FORMATS", "format_of", "guard", "parse_pair", "read_glossary", "unguard"]
__all__ += ["write_glossary"]
