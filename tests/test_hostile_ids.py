"""Hostile ids: thousands of generated ids, each refused or delivered as exactly one segment.

Whatever the id, the sandbox either receives one request whose single path segment decodes to
exactly that id, or nothing at all; the delete-everything endpoint is never reached.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dict_magics.errors import InvalidIdError
from dict_magics.sandbox import SandboxServer
from dict_magics.service.client import DictionaryClient
from dict_magics.service.paths import API_PREFIX

PURGE = "dictionary-all"


@st.composite
def purge_lookalikes(draw: st.DrawFn) -> str:
    """``dictionary-all`` in any letter case, partly percent-encoded, padded or decorated."""
    word = "".join(draw(st.sampled_from([c.lower(), c.upper()])) for c in PURGE)
    encoded = "".join(
        quote(c, safe="") if not draw(st.booleans()) else f"%{ord(c):02X}" for c in word
    )
    variants = [
        word,
        encoded,
        encoded.replace("%", "%25"),
        f" {word}\t",
        f"{word}/",
        f"/{word}",
        f"./{word}",
        f"{word}/..",
        f"{word}?",
        f"{word}#",
        f"{word}%00",
        word.replace("-", "\u2010"),
    ]
    return draw(st.sampled_from(variants))


HOSTILE = st.one_of(
    st.text(),
    st.text(st.characters(codec="utf-8"), min_size=1, max_size=20),
    st.text(st.sampled_from("/\\.%?#&;= \t\n\r\x00\x7f"), max_size=12),
    st.text(st.sampled_from("./%2Ef"), max_size=8),
    st.text(min_size=900, max_size=1100),
    purge_lookalikes(),
)


@pytest.fixture(scope="module")
def hostile_sandbox() -> Iterator[SandboxServer]:
    with SandboxServer(0, max_log=10) as server:
        yield server


def check_delivery(sandbox: SandboxServer, entry_id: str, refused: bool) -> None:
    """Assert the sandbox saw nothing (refused), or one request for exactly this id."""
    log = sandbox.requests
    assert all(r.operation != "purge" for r in log), log
    if refused:
        assert log == []
        return
    [record] = log
    assert record.operation == "delete", record
    assert record.entry_id == entry_id.strip()
    assert "/" not in record.path[len(API_PREFIX) :] and "?" not in record.path


def sent_or_refused(
    sandbox: SandboxServer, entry_id: str, send: Callable[[str], object], refusal: type
) -> None:
    """Send ``entry_id``; assert it was refused with nothing sent, or arrived exactly once."""
    sandbox.clear_log()
    try:
        result = send(entry_id)
    except refusal as exc:
        assert str(exc)
        check_delivery(sandbox, entry_id, refused=True)
        return
    check_delivery(sandbox, entry_id, refused=False)
    assert result.entry_id == entry_id.strip()


@settings(
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(HOSTILE)
def test_client_delivers_or_refuses(hostile_sandbox: SandboxServer, entry_id: str) -> None:
    sent_or_refused(
        hostile_sandbox, entry_id, _client(hostile_sandbox).delete_entry, InvalidIdError
    )


def test_every_purge_spelling_is_refused_or_harmless(hostile_sandbox: SandboxServer) -> None:
    client = _client(hostile_sandbox)
    hostile_sandbox.add_entries(["keep-me"])
    for word in ["dictionary-all", "DICTIONARY-ALL", "dIcTiOnArY-aLl", " dictionary-all\n"]:
        with pytest.raises(InvalidIdError, match="delete-everything"):
            client.delete_entry(word)
    for word in ["%64ictionary-all", "dictionary%2Dall", "dictionary-all/", "./dictionary-all"]:
        hostile_sandbox.clear_log()
        client.delete_entry(word)
        check_delivery(hostile_sandbox, word, refused=False)
    assert "keep-me" in hostile_sandbox.entries


_clients: dict[str, DictionaryClient] = {}


def _client(sandbox: SandboxServer) -> DictionaryClient:
    """One client per sandbox, so 2,000 examples reuse one connection."""
    if sandbox.url not in _clients:
        _clients[sandbox.url] = DictionaryClient(
            sandbox.url, sandbox.access_key, sandbox.secret_key
        )
    return _clients[sandbox.url]


@settings(
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(HOSTILE)
def test_dict_delete_magic_delivers_or_refuses(
    ip, monkeypatch: pytest.MonkeyPatch, hostile_sandbox: SandboxServer, entry_id: str
) -> None:
    from IPython.core.error import UsageError

    for name, value in hostile_sandbox.env().items():
        monkeypatch.setenv(name, value)
    ip.user_ns["hostile_ids"] = [entry_id]
    sent_or_refused(
        hostile_sandbox,
        entry_id,
        lambda _: ip.run_line_magic("dict_delete", "{hostile_ids}"),
        UsageError,
    )


@pytest.mark.parametrize(
    "line", ["dictionary-all", "1 DICTIONARY-ALL", "1,dictionary-all", "..", "a/../dictionary-all"]
)
def test_typed_lines_never_reach_the_purge(
    ip, monkeypatch: pytest.MonkeyPatch, hostile_sandbox: SandboxServer, line: str
) -> None:
    from IPython.core.error import UsageError

    for name, value in hostile_sandbox.env().items():
        monkeypatch.setenv(name, value)
    hostile_sandbox.clear_log()
    try:
        ip.run_line_magic("dict_delete", line)
    except UsageError:
        assert hostile_sandbox.requests == []
        return
    assert all(r.operation == "delete" for r in hostile_sandbox.requests)
    assert [r.entry_id for r in hostile_sandbox.requests] == [line]
