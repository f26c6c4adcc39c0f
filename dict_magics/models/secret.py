"""A secret key that stays a ``str`` but never shows or stores itself: wrapped as soon as it is
read, it stays out of tracebacks, debuggers and reprs, and refuses to be pickled."""

from __future__ import annotations

import json
import re
from typing import Any, NoReturn
from urllib.parse import quote, quote_plus


class Unpicklable:
    """Refuses pickling with a ``TypeError`` that says why; for objects that hold a secret
    (each says how it is copied: copies do not pickle). Every pickler calls ``__reduce_ex__``."""

    __slots__ = ()

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise TypeError(f"{type(self).__name__} cannot be pickled: it holds a secret key")


class Secret(Unpicklable, str):
    """A ``str`` whose ``repr`` is ``<secret hidden>``; unpicklable, and its own copy."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<secret hidden>"

    def __copy__(self) -> Secret:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Secret:
        return self


def mask(value: str | None) -> str:
    """Enough of an access key to recognise it, never enough to use it."""
    if not value:
        return "(none)"
    if len(value) <= 8:
        return "*" * len(value)
    return f"{value[:4]}\u2026{value[-2:]}"


_TOKENS = re.compile(r"(?i)(\bbearer\s+)[^\s\"',;]+|\beyJ[\w-]{6,}(?:\.[\w-]*)*\u2026?")
"""A Bearer credential, or anything shaped like a JWT (its header starts ``eyJ``), whole or cut."""


def redact(text: str | None, *secrets: str | None) -> str | None:
    """``text`` (a service's words) without a token and without any of ``secrets``: as sent,
    JSON-escaped (``\\/`` too) or URL-encoded, also where an excerpt was cut inside one (``…``)."""
    if not text:
        return text
    text = _TOKENS.sub(lambda m: f"{m.group(1)}<hidden>" if m.group(1) else "<hidden>", text)
    for secret in (s for s in secrets if s and len(s) >= 6):  # shorter: no text would be left
        escaped = json.dumps(secret)[1:-1]
        forms = {secret, escaped, escaped.replace("/", "\\/"), quote(secret, safe="")}
        for form in sorted(forms | {quote_plus(secret)}, key=len, reverse=True):
            text = text.replace(form, "<hidden>")
            for size in range(len(form) - 1, 3, -1) if "\u2026" in text else ():
                text = text.replace(form[:size] + "\u2026", "<hidden>\u2026")
    return text
