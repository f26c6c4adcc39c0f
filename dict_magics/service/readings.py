"""What a careless server might make of an entry id: its readings and their letter skeletons.

``paths.check_id`` refuses an id when any reading's skeleton is the purge word's. Only the
standard library is used, so the front ends can check input before loading ``requests``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import partial
from urllib.parse import unquote_to_bytes

from ..errors import InvalidIdError

__all__ = ["MAX_INTRICATE_LENGTH", "MAX_READINGS", "MAX_READING_GROWTH", "readings", "skeleton"]

# Bounds on the work per id (see ``readings``). Plain ASCII ids without "%" have few readings
# whatever their length; escapes and non-ASCII characters are what multiply them.
MAX_READINGS = 300
MAX_READING_GROWTH = 4
MAX_INTRICATE_LENGTH = 200


def readings(text: str) -> set[str]:
    """Every string a careless server might make of ``text``: the closure under ``_READINGS``.

    Each reading is applied to every string found so far until nothing new appears, so any
    combination, in any order and repeated, is covered. Invisible characters (format and
    default-ignorable code points) are dropped from every new reading at once: they are never
    separators, letters or ``%``, so keeping both variants would only multiply the work.

    The work is bounded: an id containing ``%`` or a non-ASCII character may be at most
    ``MAX_INTRICATE_LENGTH`` characters, and an id with more than ``MAX_READINGS`` readings, or
    a reading more than ``MAX_READING_GROWTH`` times its length (compatibility forms such as
    U+FDFA expand 18-fold), is refused as too intricate to check rather than checked in part.
    """
    if len(text) > MAX_INTRICATE_LENGTH and ("%" in text or not text.isascii()):
        raise InvalidIdError(
            f"entry id {text[:40]!r}... is {len(text)} characters long and contains '%' or "
            f"non-ASCII characters; such ids may be at most {MAX_INTRICATE_LENGTH} characters "
            "(a server could read them in too many ways to check)."
        )
    found = {text}
    pending = [text]
    longest = MAX_READING_GROWTH * max(len(text), 1)
    while pending:
        current = pending.pop()
        for read in _READINGS:
            reading = _visible(read(current))
            if reading in found:
                continue
            if len(found) >= MAX_READINGS or len(reading) > longest:
                raise InvalidIdError(
                    f"entry id {text[:40]!r} cannot be checked safely: a server could read it "
                    "in too many ways."
                )
            found.add(reading)
            pending.append(reading)
    return found


def skeleton(text: str) -> str:
    """``text`` as a transliterating or look-alike-blind reader sees it: ASCII letters and digits.

    Compatibility forms are decomposed, accents dropped, case folded, letters with a stroke or
    hook and Cyrillic/Greek look-alikes replaced by their Latin letter (as iconv ``//TRANSLIT``,
    unidecode or Rails' ``parameterize`` would), and then everything but ``a-z`` and ``0-9`` is
    dropped: any dash, space, punctuation or unknown character between the letters.
    """
    folded = _without_marks(unicodedata.normalize("NFKD", text)).casefold()
    folded = _without_marks(unicodedata.normalize("NFKD", folded)).translate(_LOOKALIKES)
    return _NOT_LETTER_OR_DIGIT.sub("", folded)


# Lower-case letters NFKD does not reduce to the Latin letters of "dictionary-all" (casefold
# runs first, so upper-case forms arrive here lower-cased).
_LOOKALIKES = str.maketrans(
    {
        **dict.fromkeys("ɑαаᴀ", "a"),
        **dict.fromkeys("ƈȼϲσсᴄ", "c"),
        **dict.fromkeys("đɗɖƌȡԁᴅ", "d"),
        **dict.fromkeys("ɇɛεеᴇ", "e"),
        **dict.fromkeys("ıɨɪιі", "i"),
        **dict.fromkeys("łƚɫɬɭȴʟӏ", "l"),
        **dict.fromkeys("ƞɲɳȵɴηпн", "n"),
        **dict.fromkeys("øɵοоᴏ", "o"),
        **dict.fromkeys("ɍɽɼɾʀгᴦ", "r"),
        **dict.fromkeys("ŧƫƭʈȶτтᴛ", "t"),
        **dict.fromkeys("ƴɏʏγуү", "y"),
    }
)
_NOT_LETTER_OR_DIGIT = re.compile("[^a-z0-9]+")


def _percent_decoded(text: str) -> str:
    """One round of percent-decoding, byte by byte as PHP's ``urldecode`` does.

    Bytes that are not (yet) UTF-8 stay as escaped bytes (lone surrogates), so a later round
    can complete them: ``%EF%BD%9%34`` decodes to EF BD ``%94``, then to the three bytes of a
    fullwidth t. ``_as_latin1`` reads whatever bytes are left as Latin-1 characters.
    """
    if "%" not in text:
        return text
    raw = unquote_to_bytes(text.encode("utf-8", "surrogateescape"))
    return raw.decode("utf-8", "surrogateescape")


def _percent_u_decoded(text: str) -> str:
    """``%uXXXX`` escapes decoded, as JavaScript's ``unescape`` and .NET's ``UrlDecode`` do.

    A surrogate pair becomes its character; a lone surrogate stays escaped.
    """
    return _PERCENT_U.sub(_percent_u_char, text) if "%" in text else text


def _percent_u_char(match: re.Match[str]) -> str:
    high, low, single = match.groups()
    if single is None:
        return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + int(low, 16) - 0xDC00)
    code = int(single, 16)
    return match.group() if 0xD800 <= code <= 0xDFFF else chr(code)


def _lax_utf8(text: str) -> str:
    """Undecoded byte sequences read by a UTF-8 decoder that allows overlong forms.

    Old IIS, Tomcat and hand-written C decoders read C1 A4 (an overlong ``d``) as ``d``.
    """
    return _OVERLONG.sub(_lax_utf8_char, text) if not text.isascii() else text


def _lax_utf8_char(match: re.Match[str]) -> str:
    raw = [ord(ch) - 0xDC00 for ch in match.group()]
    code = raw[0] & (0x7F >> len(raw))
    for byte in raw[1:]:
        code = code << 6 | byte & 0x3F
    return match.group() if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF else chr(code)


def _as_latin1(text: str) -> str:
    """Bytes left undecoded, read as Latin-1: ``%AA`` is ª, which NFKC makes a."""
    return text.translate(_LATIN1_BYTES)


def _visible(text: str) -> str:
    return text if text.isascii() else _INVISIBLE.sub("", text)


def _without_marks(text: str) -> str:
    """Without combining marks, as accent-insensitive comparisons and slugifiers read text."""
    if text.isascii():
        return text
    return "".join(ch for ch in text if unicodedata.category(ch) not in ("Mn", "Me"))


def _resolved(text: str) -> str:
    """Dot-segments resolved (RFC 3986 5.2.4), ``\\`` read as ``/``, empty segments merged."""
    kept: list[str] = []
    for segment in text.replace("\\", "/").split("/"):
        if segment == "..":
            if kept:
                kept.pop()
        elif segment not in ("", "."):
            kept.append(segment)
    return "/".join(kept)


def _last_segment(text: str) -> str:
    return text.replace("\\", "/").rstrip("/").rpartition("/")[2]


def _cut_at(mark: str) -> Callable[[str], str]:
    return lambda text: text.partition(mark)[0]


# Default-ignorable code points (Unicode's DerivedCoreProperties) and every format (Cf)
# character. tests/test_paths.py checks that every Cf character this Python knows is here.
_INVISIBLE = re.compile(
    "[\xad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4"
    "\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff"
    "\uffa0\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
_PERCENT_U = re.compile(
    "%[uU](D[89AB][0-9A-F]{2})%[uU](D[C-F][0-9A-F]{2})|%[uU]([0-9A-F]{4})", re.IGNORECASE
)
# Lead byte and continuation bytes, as ``_percent_decoded`` leaves them (U+DC80-U+DCFF).
_OVERLONG = re.compile(
    "[\udcc0-\udcdf][\udc80-\udcbf]|[\udce0-\udcef][\udc80-\udcbf]{2}"
    "|[\udcf0-\udcf7][\udc80-\udcbf]{3}"
)
_SEGMENT_PARAMS = re.compile(r";[^/\\]*")
_FORMAT_SUFFIX = re.compile(r"\.[^./\\]*$")
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")
_LATIN1_BYTES = {0xDC00 + byte: byte for byte in range(0x80, 0x100)}

_READINGS: tuple[Callable[[str], str], ...] = (
    _percent_decoded,  # repeated by the closure: %2564 -> %64 -> d
    _percent_u_decoded,  # %u0064 -> d (unescape, HttpUtility.UrlDecode)
    _lax_utf8,  # %C1%A4 -> d (overlong UTF-8)
    _as_latin1,  # %AA -> ª (NFKC: a)
    lambda text: text.replace("+", " "),  # form decoding
    partial(unicodedata.normalize, "NFKC"),  # fullwidth letters and hyphens
    partial(unicodedata.normalize, "NFKD"),
    partial(unicodedata.normalize, "NFC"),
    _without_marks,  # accent folding after NFKD: dictionäry -> dictionary, İ -> i
    lambda text: _CONTROLS.sub("", text),  # decoded %00, %09 ...
    lambda text: _SEGMENT_PARAMS.sub("", text),  # ;params in every segment: x/.;p/..
    _resolved,  # x/../dictionary-all
    _last_segment,  # a/dictionary-all, a\\dictionary-all
    str.strip,  # whitespace at either end
    lambda text: text.strip("+"),  # "+" at either end (a space once form-decoded)
    lambda text: text.rstrip("."),  # trailing dots: dictionary-all.
    lambda text: text.rstrip("/\\"),  # trailing slashes: dictionary-all/
    lambda text: _FORMAT_SUFFIX.sub("", text),  # a format suffix: .json (x/...json: x/..)
    _cut_at("."),  # an id ends at its first dot, as in Rails: .json, .tar.gz
    _cut_at(";"),  # ;params
    _cut_at(","),  # ,params
    _cut_at("?"),  # a query, once %3F is decoded
    _cut_at("#"),  # a fragment, once %23 is decoded
    _cut_at("\x00"),  # C strings end at NUL
)
