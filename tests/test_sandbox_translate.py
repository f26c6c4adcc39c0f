"""The sandbox's translate endpoint: a dictionary-only engine under the limit of 3."""

from __future__ import annotations

import pytest
import requests
from test_sandbox import said, send, signed_headers

from dict_magics.models import Entry
from dict_magics.sandbox import SandboxServer

PATH = "/api/v1/translate"
ANIMALS = [
    Entry("1", "ja", "猫", "en", "Kitty"),
    Entry("2", "ja", "犬", "en", "Marutaro"),
    Entry("3", "ja", "ウサギ", "en", "Peter"),
    Entry("4", "ja", "クマ", "en", "Teddy"),
]
WORKED = ["これは猫です。それは犬です。ウサギとクマも動物です。", "ウサギとクマも可愛いです。"]
FIRST = "これはKittyです。それはMarutaroです。Peter{}も動物です。"
SECOND = "Peter{}も可愛いです。"


def translate(sandbox: SandboxServer, texts: list[str], src: str = "ja", dst: str = "en", **more):
    body = {"fieldId": "1", "text": texts, "sourceLang": src, "targetLang": dst, **more}
    return send(sandbox, PATH, "POST", json=body)


def translated(sandbox: SandboxServer, texts: list[str], src: str = "ja", dst: str = "en"):
    answer = translate(sandbox, texts, src, dst)
    assert answer.status_code == 200 and answer.json()["status"] == "success", answer.text
    results = answer.json()["data"]["translationResult"]
    assert [r["sourceText"] for r in results] == texts
    return [r["translatedText"] for r in results]


@pytest.mark.parametrize(
    "unit, first, second",
    [
        ("element", "とクマ", "とTeddy"),  # the vendor's own answer: クマ is past the limit in 1
        ("request", "とクマ", "とクマ"),  # 3 across the request: ウサギ again, クマ never
        ("sentence", "とTeddy", "とTeddy"),  # each sentence has its own 3
    ],
)
def test_the_vendors_worked_example_under_each_unit(unit: str, first: str, second: str) -> None:
    with SandboxServer(ANIMALS, limit_unit=unit) as sandbox:
        assert translated(sandbox, WORKED) == [FIRST.format(first), SECOND.format(second)]
        [logged] = sandbox.requests
        applied = {"element": "1234", "request": "123", "sentence": "1234"}[unit]
        assert logged.operation == "translate" and logged.code is None
        assert [e.id for e in logged.entries] == list(applied)


def test_the_default_unit_is_one_element() -> None:
    with SandboxServer(ANIMALS) as sandbox:
        assert translated(sandbox, WORKED) == [FIRST.format("とクマ"), SECOND.format("とTeddy")]
        answer = translate(sandbox, WORKED).json()["data"]
        assert (
            answer["taskId"] and answer["wordCount"] == 35
        )  # a word per CJK character; 。 is none


@pytest.mark.parametrize("case_sensitive", [True, False])
def test_case_sensitivity_both_ways(case_sensitive: bool) -> None:
    entries = [Entry("1", "en", "invoice", "de", "Rechnung")]
    with SandboxServer(entries, case_sensitive=case_sensitive) as sandbox:
        out = translated(sandbox, ["Invoice and INVOICE and invoice."], "en", "de")
    if case_sensitive:
        assert out == ["Invoice and INVOICE and Rechnung."]
    else:
        assert out == ["Rechnung and Rechnung and Rechnung."]


def test_an_applied_entry_counts_once_and_every_occurrence_is_replaced() -> None:
    entries = [Entry(str(n), "en", term, "de", term.upper()) for n, term in enumerate("abcd", 1)]
    with SandboxServer(entries) as sandbox:
        assert translated(sandbox, ["a b a c a d b"], "en", "de") == ["A B A C A d B"]


def test_longer_first_then_lower_id_and_no_term_inside_an_applied_one() -> None:
    entries = [
        Entry("1", "en", "York", "de", "Y"),
        Entry("2", "en", "New", "de", "N"),
        Entry("5", "en", "New York", "de", "NY"),
        Entry("9", "en", "and", "de", "und-9"),
        Entry("7", "en", "and", "de", "und-7"),  # the same term: the lower id wins
    ]
    with SandboxServer(entries) as sandbox:
        assert translated(sandbox, ["New York and York"], "en", "de") == ["NY und-7 Y"]
        [logged] = sandbox.requests
        assert [e.id for e in logged.entries] == ["5", "7", "1"]
        # Past the limit a longer term is not applied: the applied ones inside it still are.
        assert translated(sandbox, ["York and New New York"], "en", "de") == ["Y und-7 N N Y"]


def test_only_the_entries_of_the_language_pair_apply() -> None:
    entries = [Entry("1", "en", "cat", "de", "Katze"), Entry("2", "en", "cat", "fr", "chat")]
    entries += [Entry("3", "de", "cat", "en", "CAT")]
    with SandboxServer(entries) as sandbox:
        assert translated(sandbox, ["a cat"], "en", "fr") == ["a chat"]
        assert translated(sandbox, ["a cat"], "en", "ja") == ["a cat"]


@pytest.mark.parametrize(
    "body, code, words",
    [
        ({"text": ["x"], "sourceLang": "en", "targetLang": "de"}, 40200, "fieldId"),
        ({"fieldId": "1", "text": "x", "sourceLang": "en", "targetLang": "de"}, 40201, "array"),
        ({"fieldId": "1", "text": [5], "sourceLang": "en", "targetLang": "de"}, 40201, "array"),
        ({"fieldId": 1, "text": ["x"], "sourceLang": "en", "targetLang": "de"}, 40201, "fieldId"),
        ({"fieldId": "2", "text": ["x"], "sourceLang": "en", "targetLang": "de"}, 40202, "'1'"),
        ({"fieldId": "1", "text": ["x"], "sourceLang": "zh", "targetLang": "de"}, 40202, "zh-CN"),
        ({"fieldId": "1", "text": [], "sourceLang": "en", "targetLang": "de"}, 40200, "no element"),
        ({"fieldId": "1", "text": ["w " * 201], "sourceLang": "en", "targetLang": "de"}, 40202,
         "element 1: more than 200 words"),
        ({"fieldId": "1", "text": ["w"] * 10 + ["x" * 276_480], "sourceLang": "en",
          "targetLang": "de"}, 40202, "276480 bytes or more"),
    ],
)  # fmt: skip
def test_the_vendors_parameter_errors(body: dict, code: int, words: str) -> None:
    with SandboxServer(3) as sandbox:
        answer = send(sandbox, PATH, "POST", json=body)
        assert answer.status_code == 400 and answer.json()["data"]["code"] == code
        assert words in said(answer), said(answer)
        assert sandbox.requests[-1].operation == "rejected"


def test_the_limits_are_inclusive_where_the_vendor_says_at_most() -> None:
    with SandboxServer(3) as sandbox:
        assert translated(sandbox, ["w " * 200, "猫" * 200], "en", "de") == ["w " * 200, "猫" * 200]
        under = ["x" * (276_480 - 1)]
        assert translated(sandbox, under, "en", "de") == under
        answer = translate(sandbox, ["x"], "en", "de", contractId="c-1")
        assert answer.json()["status"] == "success"


def test_translate_wants_a_signature_or_a_token() -> None:
    with SandboxServer(ANIMALS) as sandbox:
        headers = signed_headers(sandbox, "/api/v1/dictionary")  # signed for another path
        body = {"fieldId": "1", "text": ["猫"], "sourceLang": "ja", "targetLang": "en"}
        answer = send(sandbox, PATH, "POST", json=body, headers=headers)
        assert answer.json()["data"]["code"] == 40006
        keys = {"accessKey": sandbox.access_key, "secretKey": sandbox.secret_key}
        token = requests.post(sandbox.url + "/api/v1/token", json=keys, timeout=5)
        bearer = {"Authorization": "Bearer " + token.json()["data"]["encodedJWT"]}
        answer = requests.post(sandbox.url + PATH, json=body, headers=bearer, timeout=5)
        assert answer.json()["data"]["translationResult"][0]["translatedText"] == "Kitty"


def test_sentences_end_at_a_stop_before_a_space_or_the_end() -> None:
    entries = [Entry(str(n), "en", term, "de", term.upper()) for n, term in enumerate("abcd", 1)]
    with SandboxServer(entries, limit_unit="sentence") as sandbox:
        texts = ["a b c. d a!", "a b c 3.5 d", "a b c? d", "a b c?d"]
        assert translated(sandbox, texts, "en", "de") == [
            "A B C. D A!",
            "A B C 3.5 d",  # no space after the dot: one sentence
            "A B C? D",
            "A B C?d",
        ]
