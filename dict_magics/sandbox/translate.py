"""``POST /api/v1/translate`` as a dictionary-only engine: it applies the user's entries under
the limit of 3 and leaves every other character as it was. Written apart from the client's
prediction (``models/textcheck.py``): sharing it would hide the client's bugs. Per unit (one
element of ``text``, the whole request, or one sentence):
- only entries of the pair (fromLang = sourceLang, toLang = targetLang) match;
- matches are taken earliest first; at one position a longer term first, then the lower id;
- a match overlapping a term already replaced is not applied (a shorter term inside a longer);
- the first 3 entries to match are applied; an applied entry counts once however often it
  occurs in the unit, and every occurrence of it (not overlapping another) is replaced.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable
from typing import Any

from ..models import Entry, codes
from ..models.terms import language_problem
from .checks import coded, parse_json
from .store import id_sort_key

LIMIT = 3
LIMIT_UNITS = ("element", "request", "sentence")
MAX_WORDS = 200
"""Words in one element of ``text``."""
MAX_TEXT_BYTES = 270 * 1024
"""The whole ``text`` array (its elements' UTF-8 bytes) stays under this."""

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = re.compile(f"[{_CJK}]|[^\\s\u3000-\u303f{_CJK}]+")
# A sentence ends at an ideographic full stop or a full-width ! ?, or at . ! ? before a space.
_SENTENCE_END = re.compile("[\u3002\uff01\uff1f]|[.!?](?=\\s|$)")


def word_count(text: str) -> int:
    """Words as the sandbox counts them: runs between spaces, and each CJK character."""
    return len(_WORD.findall(text))


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence (a space after its end starts the next one)."""
    spans, start = [], 0
    for end in _SENTENCE_END.finditer(text):
        spans.append((start, end.end()))
        start = end.end()
    if start < len(text) or not spans:
        spans.append((start, len(text)))
    return spans


def apply_entries(
    texts: list[str], entries: Iterable[Entry], unit: str, case_sensitive: bool
) -> tuple[list[str], tuple[Entry, ...]]:
    """Each text translated by the entries alone, and the entries applied (once, in order)."""
    flags = 0 if case_sensitive else re.IGNORECASE
    patterns = [(e, re.compile(f"(?=({re.escape(e.from_text)}))", flags)) for e in entries]
    if unit == "sentence":
        units = [[(i, s, e)] for i, text in enumerate(texts) for s, e in sentences(text)]
    else:
        whole = [(i, 0, len(text)) for i, text in enumerate(texts)]
        units = [whole] if unit == "request" else [[span] for span in whole]
    replaced: list[list[tuple[int, int, Entry]]] = [[] for _ in texts]
    order: dict[Entry, None] = {}
    for spans in units:
        matches = sorted(
            (
                (i, m.start(1), m.end(1), entry)
                for i, start, end in spans
                for entry, pattern in patterns
                for m in pattern.finditer(texts[i], start, end)
                if m.end(1) > m.start(1)
            ),
            key=lambda m: (m[0], m[1], m[1] - m[2], id_sort_key(m[3].id)),
        )
        applied: list[Entry] = []
        for i, start, end, entry in matches:
            if any(s < end and start < e for s, e, _ in replaced[i]):
                continue  # inside (or across) a term already replaced
            if entry not in applied:
                if len(applied) == LIMIT:
                    continue
                applied.append(entry)
                order[entry] = None
            replaced[i].append((start, end, entry))
    results = []
    for text, done in zip(texts, replaced, strict=True):
        out, at = "", 0
        for start, end, entry in sorted(done, key=lambda span: span[0]):
            out, at = out + text[at:start] + entry.to_text, end
        results.append(out + text[at:])
    return results, tuple(order)


def parse_request(body: bytes) -> dict[str, Any]:
    """A translate request's body, checked as the vendor documents it."""
    data = parse_json(body)
    missing = [k for k in ("fieldId", "text", "sourceLang", "targetLang") if k not in data]
    if missing:
        raise coded(codes.MISSING_ARGUMENT, ", ".join(missing))
    texts = data["text"]
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise coded(codes.INVALID_TYPE, "text must be an array of strings")
    for key in ("fieldId", "sourceLang", "targetLang", "contractId"):
        value = data.get(key, "")
        if not isinstance(value, str) and not (key == "contractId" and type(value) is int):
            raise coded(codes.INVALID_TYPE, f"{key} must be text")
    if data["fieldId"] != "1":
        raise coded(codes.INVALID_PARAMETERS, "fieldId: the real-time engine is field '1'")
    for key in ("sourceLang", "targetLang"):
        problem = language_problem(data[key], key)
        if problem is not None:
            raise coded(codes.INVALID_PARAMETERS, problem.message)
    if not texts:
        raise coded(codes.MISSING_ARGUMENT, "text holds no element")
    for n, text in enumerate(texts, 1):
        if word_count(text) > MAX_WORDS:
            raise coded(codes.INVALID_PARAMETERS, f"element {n}: more than {MAX_WORDS} words")
    if sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) >= MAX_TEXT_BYTES:
        raise coded(codes.INVALID_PARAMETERS, f"text: {MAX_TEXT_BYTES} bytes or more")
    return data


def translate(
    request: dict[str, Any], entries: Iterable[Entry], unit: str, case_sensitive: bool
) -> tuple[dict[str, Any], tuple[Entry, ...]]:
    """The answer to a checked request, and the entries applied (each once, in order)."""
    texts, langs = request["text"], (request["sourceLang"], request["targetLang"])
    pair = [e for e in entries if (e.from_lang, e.to_lang) == langs]
    results, applied = apply_entries(texts, pair, unit, case_sensitive)
    answer = {
        "taskId": secrets.token_hex(8),
        "translationResult": [
            {"sourceText": s, "translatedText": t} for s, t in zip(texts, results, strict=True)
        ],
        "wordCount": sum(map(word_count, texts)),
    }
    return {"status": "success", "data": answer}, applied
