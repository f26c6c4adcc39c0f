"""What the service accepts as an entry's terms and languages: the vendor's rules and no more,
checked before sending, so whatever the service took an undo can send back."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

MAX_TERM_CHARS = 255  # the longest fromText / toText the service takes

_ISO_639_1 = """
aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da
de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz
ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln
lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi
pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti
tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zu
"""
LANGUAGE_CODES = frozenset(_ISO_639_1.split()) | {"zh-CN", "zh-TW"}  # zh only as these

# Characters that are invisible or steer the display: C0/C1 controls, format characters (zero
# width, bidi overrides, BOM), line and paragraph separators, private use.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs"})


@dataclass(frozen=True)
class Problem:
    """One reason the service would refuse a term (``field``: the service's name; ``kind``:
    ``empty``, ``too-long``, ``bad-language``, ``not-text``)."""

    field: str
    kind: str
    message: str


def language_problem(code: object, field: str = "fromLang") -> Problem | None:
    """Why ``code`` is not a language code the service takes, or ``None``."""
    if isinstance(code, str) and code in LANGUAGE_CODES:
        return None
    hint = language_hint(code)
    shown = repr(code)[:40]
    return Problem(field, "bad-language", f"{field} {shown} is not a language code{hint}")


def language_hint(code: object) -> str:
    """`` (did you mean zh-CN?)`` for a near miss of a code the service takes (another case,
    ``_`` for ``-``), `` (Chinese is zh-CN or zh-TW)`` for a bare Chinese code, else ``""``."""
    if not isinstance(code, str):
        return ""
    folded = code.strip().lower().replace("_", "-")
    if folded in ("zh", "cn", "tw", "zh-hans", "zh-hant", "chinese"):
        return " (Chinese is zh-CN or zh-TW)"
    spelled = _SPELLINGS.get(folded)
    return f" (did you mean {spelled}?)" if spelled is not None and spelled != code else ""


_SPELLINGS = {code.lower(): code for code in LANGUAGE_CODES}  # zh-cn, EN: near misses


def hidden_characters(text: str) -> list[str]:
    """The invisible or control characters in ``text`` as ``U+XXXX``: lint reports them."""
    if text.isprintable():  # the usual term: every hidden category is non-printable
        return []
    seen: dict[str, None] = {}
    for ch in text:
        if unicodedata.category(ch) in _HIDDEN_CATEGORIES:
            seen.setdefault(f"U+{ord(ch):04X}")
    return list(seen)


def term_problem(text: object, field: str = "fromText") -> Problem | None:
    """Why ``text`` cannot be sent as a term (empty, too long, a lone surrogate), or ``None``."""
    if not isinstance(text, str) or not text.strip():
        return Problem(field, "empty", f"{field} is empty")
    if len(text) > MAX_TERM_CHARS:
        said = f"{field} has {len(text)} characters; the service takes at most {MAX_TERM_CHARS}"
        return Problem(field, "too-long", said)
    lone = [f"U+{ord(ch):04X}" for ch in text if 0xD800 <= ord(ch) <= 0xDFFF]
    if lone:
        why = "which is not text: no request can carry it as UTF-8"
        said = f"{field} holds a lone surrogate ({', '.join(dict.fromkeys(lone))}), {why}"
        return Problem(field, "not-text", said)
    return None


def entry_problems(
    from_lang: object, from_text: object, to_lang: object, to_text: object
) -> list[Problem]:
    """Every reason the service would refuse these four terms (empty when it would take them)."""
    found = [
        language_problem(from_lang, "fromLang"),
        term_problem(from_text, "fromText"),
        language_problem(to_lang, "toLang"),
        term_problem(to_text, "toText"),
    ]
    return [p for p in found if p is not None]
