"""What people type: ids separated by spaces or commas, and the word that confirms a purge.

The magics, the panel and the command line all read input through here, so an id list or a
purge confirmation means the same thing wherever it is typed. Standard library only.
"""

from __future__ import annotations

import re

from ..service.paths import check_id
from ..settings import MAX_RETRIES, MAX_WORKERS, PURGE_WORD

__all__ = [
    "ID_SEPARATORS",
    "MAX_RETRIES",
    "MAX_WORKERS",
    "PURGE_WORD",
    "purge_confirmed",
    "purge_question",
    "split_ids",
]

ID_SEPARATORS = re.compile(r"[\s,]+")


def split_ids(text: str) -> list[str]:
    """The ids in ``text``, in order, each checked; raises ``InvalidIdError`` for a bad one."""
    return [check_id(part) for part in ID_SEPARATORS.split(text) if part]


def purge_question(host: str) -> str:
    """The prompt that asks for the purge confirmation."""
    return f"Type {PURGE_WORD} (or {host}) to confirm, anything else cancels: "


def purge_confirmed(answer: str, host: str) -> bool:
    """A purge goes ahead only on the exact word, or the exact host it will hit."""
    return answer.strip() in (PURGE_WORD, host)
