"""Ids are ASCII digits only: anything else is a usage error before any request, whichever way
it comes in (the operation, ``%dict_delete``, the command line), so no text can reach the purge
path; ``017`` is entry 17."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import point_at, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from IPython.core.error import UsageError

from dict_magics.errors import InvalidIdError
from dict_magics.models.entry import check_id
from dict_magics.operations.context import OperationSettings, split_args
from dict_magics.operations.delete import delete
from dict_magics.sandbox import SandboxServer

NOT_IDS = [
    "dictionary-all",
    "",
    " ",
    "+17",
    "-17",
    " 17",
    "1.5",
    "17.json",
    "\uff11\uff17",  # fullwidth digits
    "\u0661\u0667",  # Arabic-Indic digits
    "1_000",
    "0x11",
    "9" * 20,
]


@pytest.mark.parametrize("bad", [*NOT_IDS, True, False, 1.0, -1, 2**63, None, b"17"])
def test_check_id_refuses_all_but_ascii_digits(bad: object) -> None:
    with pytest.raises(InvalidIdError, match="is not an entry id: ids are whole numbers"):
        check_id(bad)


def test_a_too_big_id_says_the_bound_not_the_digits() -> None:
    for big in ("9" * 20, 2**63):
        with pytest.raises(InvalidIdError, match="at most 9,223,372,036,854,775,807"):
            check_id(big)


@pytest.mark.parametrize("typed", ["\u00a017", "17\u2003", "17\u3000", "17\u200b"])
def test_only_ascii_spaces_and_commas_separate_typed_ids(typed: str) -> None:
    assert split_args(["17 18,19\t20"]) == ["17", "18", "19", "20"]
    with pytest.raises(InvalidIdError, match="ASCII digits"):
        split_args([typed])


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30))
def test_any_text_is_an_id_only_when_it_is_ascii_digits(text: str) -> None:
    try:
        checked = check_id(text)
    except InvalidIdError:
        assert not (text.isascii() and text.isdigit() and len(text) <= 19)
    else:
        assert checked == str(int(text)) and checked.isdigit() and checked.isascii()


def test_leading_zeros_are_the_same_entry() -> None:
    assert check_id("017") == check_id(17) == "17" and check_id("0") == "0"


@pytest.mark.parametrize("bad", ["dictionary-all", "17.json", "\uff11\uff17", "+17"])
def test_the_operation_refuses_before_any_request(
    sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    point_at(monkeypatch, sandbox)
    with pytest.raises(InvalidIdError):
        delete(OperationSettings(), ["1", bad])
    assert sandbox.requests == [] and len(sandbox.entries) == 100


@pytest.mark.parametrize("bad", NOT_IDS[:-1])
def test_the_magic_refuses_before_any_request(ip: Any, env_creds: SandboxServer, bad: str) -> None:
    ip.user_ns["ids"] = ["2", bad]
    with pytest.raises(UsageError):
        ip.run_line_magic("dict_delete", "{ids}")
    assert env_creds.requests == [] and len(env_creds.entries) == 100


def test_017_deletes_entry_17_through_the_magic(ip: Any, env_creds: SandboxServer) -> None:
    ip.run_line_magic("dict_delete", "017")
    assert "17" not in env_creds.entries and len(env_creds.entries) == 99
    assert [r.path for r in env_creds.requests if r.method == "DELETE"] == ["/api/v1/dictionary/17"]


def test_the_command_line_refuses_with_exit_2_before_any_request(sandbox: SandboxServer) -> None:
    proc = run_cli(sandbox, "delete", "3", "dictionary-all")
    assert proc.returncode == 2 and "ASCII digits" in proc.stderr
    assert sandbox.requests == [] and len(sandbox.entries) == 100
