"""What people type as ids: on a line, as arguments, or in a file (one id a line).

The magics, the panel and the command line all read ids through here, so an id list means the
same thing wherever it is typed. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..errors import InvalidIdError, UsageProblem
from ..service.paths import check_id

__all__ = ["ID_SEPARATORS", "ids_from_bytes", "ids_from_text", "split_args", "split_ids"]

ID_SEPARATORS = re.compile(r"[\s,]+")
COMMENT = re.compile(r"(?:^|\s)#.*")
BOM = "\ufeff"


def split_ids(text: str) -> list[str]:
    """The ids in ``text``, in order, each checked; raises ``InvalidIdError`` for a bad one."""
    return [check_id(part) for part in ID_SEPARATORS.split(text) if part]


def split_args(values: Sequence[str]) -> list[str]:
    """The ids in each argument; an empty argument (``""``) is refused, since whoever typed it
    meant an id and would otherwise see it silently dropped."""
    for value in values:
        if not value.strip():
            raise InvalidIdError(
                f"the argument {value!r} is not an entry id: an entry id cannot be empty; "
                "nothing was sent."
            )
    return [i for value in values for i in split_ids(value)]


def ids_from_text(text: str) -> list[str]:
    """The ids in a file: one a line (spaces or commas also separate, as when typed); blank
    lines, ``#`` comments (at the start of a line or after a space) and a leading BOM skipped."""
    text = text.removeprefix(BOM)
    return [i for line in text.splitlines() for i in split_ids(COMMENT.sub("", line))]


def ids_from_bytes(data: bytes, source: str) -> list[str]:
    """``ids_from_text`` of UTF-8 ``data``; other bytes are a ``UsageProblem`` naming ``source``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 1].hex()
        line = data[: exc.start].count(b"\n") + 1
        raise UsageProblem(
            f"cannot read ids from {source}: it is not UTF-8 text (byte 0x{bad} on line {line}). "
            "Nothing was sent."
        ) from None
    return ids_from_text(text)
