"""The operations layer on its own: settings, a scripted prompter, a recording progress sink.

Every front end (magics, panel, command line) is thin glue over these functions, so the policy
lives here and is tested here once: bounds, the purge confirmation, what login asks and in which
order, what a batch reports. Requests go to the real sandbox over loopback.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from dict_magics import settings as limits
from dict_magics.errors import (
    CredentialsError,
    DeletionFailedError,
    InvalidIdError,
    UsageProblem,
)
from dict_magics.models import BatchResult, DeleteResult, PurgePlan
from dict_magics.operations.context import (
    OperationSettings,
    ids_from_bytes,
    split_args,
)
from dict_magics.operations.delete import delete, interruption
from dict_magics.operations.listing import CACHE
from dict_magics.operations.login import LoginResult, login, logout
from dict_magics.operations.prompts import ScriptedPrompter
from dict_magics.operations.purge import purge
from dict_magics.operations.status import status
from dict_magics.sandbox import SandboxServer
from dict_magics.service.client import DictionaryClient


class Recorder:
    """A ``ProgressSink`` that keeps every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.lock = threading.Lock()

    def start(self, total: int, label: str) -> None:
        self.calls.append(("start", total, label))

    def __call__(self, done: int, total: int, result: DeleteResult) -> None:
        with self.lock:
            self.calls.append(("update", done, total, result.entry_id))

    def stop(self) -> None:
        self.calls.append(("stop",))


@pytest.fixture(autouse=True)
def _fresh_listings() -> None:
    """A sandbox on a port an earlier test used must not meet that test's cached listing."""
    CACHE.forget()


@pytest.fixture
def env_creds(monkeypatch: pytest.MonkeyPatch, sandbox: SandboxServer) -> Iterator[SandboxServer]:
    for name, value in sandbox.env().items():
        monkeypatch.setenv(name, value)
    yield sandbox


def sent(server: SandboxServer) -> list[tuple[str, str | None]]:
    # 40005: a nonce overtaken on another connection, not acted on and sent again at once.
    return [
        (r.operation, r.entry_id) for r in server.requests if r.method != "GET" and r.code != 40005
    ]


# -- settings ---------------------------------------------------------------------------------


def test_settings_default_to_the_one_place_defaults_live() -> None:
    settings = OperationSettings()
    assert (settings.timeout, settings.max_retries, settings.workers) == (
        limits.TIMEOUT,
        limits.RETRIES,
        limits.WORKERS,
    )
    assert (settings.profile, settings.base_url, settings.raise_on_failure) == (None, None, False)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"workers": 0}, "workers must be 1..64, not 0."),
        ({"workers": 65}, "workers must be 1..64, not 65."),
        ({"workers": True}, "workers must be 1..64, not True."),
        ({"max_retries": -1}, "max retries must be 0..10, not -1."),
        ({"max_retries": 11}, "max retries must be 0..10, not 11."),
        ({"timeout": 0}, "the timeout must be > 0 seconds, not 0."),
        ({"timeout": math.inf}, "the timeout must be > 0 seconds, not inf."),
        ({"timeout": math.nan}, "the timeout must be > 0 seconds, not nan."),
    ],
)
def test_settings_out_of_bounds_are_refused_naming_the_range(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(UsageProblem) as refused:
        OperationSettings(**options)
    assert str(refused.value) == message


# -- delete -----------------------------------------------------------------------------------


def test_delete_one_id_is_one_request_and_no_progress(env_creds: SandboxServer) -> None:
    bar = Recorder()
    result = delete(OperationSettings(), ["7"], progress=bar)
    assert isinstance(result, DeleteResult) and result.ok and result.entry_id == "7"
    assert bar.calls == [] and sent(env_creds) == [("delete", "7")]


def test_delete_several_reports_progress_per_distinct_id(env_creds: SandboxServer) -> None:
    bar = Recorder()
    result = delete(OperationSettings(workers=2), ["3", "4", "3", "99999"], progress=bar)
    assert isinstance(result, BatchResult)
    assert [r.entry_id for r in result.results] == ["3", "4", "3", "99999"]
    # 99999 is in no listing: absent, not sent, and not a failure (issue 22, item 17).
    assert (result.succeeded, result.failed, result.absent) == (3, 0, 1)
    assert result.results[3].outcome == "absent" and not result.interrupted
    host = env_creds.url.removeprefix("http://")
    assert bar.calls[0] == ("start", 2, f"Deleting 2 entries at {host}")
    assert [c[1] for c in bar.calls[1:-1]] == [1, 2] and bar.calls[-1] == ("stop",)
    assert sorted(i for _, i in sent(env_creds)) == ["3", "4"]
    assert interruption(result) is None


def test_one_distinct_id_is_one_entry_not_one_entries(env_creds: SandboxServer) -> None:
    bar = Recorder()
    result = delete(OperationSettings(), ["5", "5", "5"], progress=bar)
    host = env_creds.url.removeprefix("http://")
    assert bar.calls[0] == ("start", 1, f"Deleting 1 entry at {host}")
    assert isinstance(result, BatchResult) and len(result) == 3
    assert sent(env_creds) == [("delete", "5")]


def test_delete_refuses_before_any_request(
    env_creds: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(UsageProblem, match="no entry ids given"):
        delete(OperationSettings(), [])
    with pytest.raises(InvalidIdError, match="ASCII digits"):
        delete(OperationSettings(), ["1", "Dictionary-All"])
    monkeypatch.delenv("DICT_MAGICS_SECRET_KEY")
    with pytest.raises(CredentialsError):
        delete(OperationSettings(), ["1"])
    assert env_creds.requests == []


def test_raise_on_failure_raises_the_result(env_creds: SandboxServer) -> None:
    assert not delete(OperationSettings(), ["99999"]).ok
    delete(OperationSettings(raise_on_failure=True), ["99999"])  # absent: not a failure
    env_creds.inject("status", status=500, method="DELETE")
    with pytest.raises(DeletionFailedError) as raised:
        delete(OperationSettings(raise_on_failure=True, workers=1), ["2", "1"])
    assert isinstance(raised.value.result, BatchResult) and raised.value.result.succeeded == 1


def test_a_client_of_the_front_end_is_used_as_it_is(sandbox: SandboxServer) -> None:
    """The panel keeps its own client: the operation uses it and leaves it open."""
    client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key)
    try:
        assert delete(OperationSettings(profile="panel"), ["1"], client=client).ok
        assert client.delete_entry("2").ok  # still usable afterwards
    finally:
        client.close()
    assert sent(sandbox) == [("delete", "1"), ("delete", "2")]


def test_interruption_counts_the_ids_never_sent() -> None:
    never = DeleteResult("failure", "3", reason="not attempted", attempts=0)
    batch = BatchResult(
        [DeleteResult("success", "1"), never, never, DeleteResult("failure", "4", attempts=0)],
        interrupted=True,
    )
    assert interruption(batch) == "interrupted: 2 not attempted"
    assert interruption(BatchResult(batch.results)) is None
    assert interruption(DeleteResult("success", "1")) is None


def test_a_cancelled_batch_comes_back_interrupted(env_creds: SandboxServer) -> None:
    stop = threading.Event()
    stop.set()
    batch = delete(OperationSettings(), ["1", "2", "3"], cancel=stop)
    assert isinstance(batch, BatchResult) and batch.interrupted
    assert interruption(batch) == "interrupted: 3 not attempted"
    assert sent(env_creds) == [] and len(env_creds.entries) == 100


# -- purge: one policy ------------------------------------------------------------------------


@pytest.mark.parametrize("answer", ["delete-all", "  delete-all\t", "host"])
def test_purge_goes_ahead_on_the_word_or_the_host(env_creds: SandboxServer, answer: str) -> None:
    host = env_creds.url.removeprefix("http://")
    prompter = ScriptedPrompter([host if answer == "host" else answer])
    result = purge(OperationSettings(), prompter)
    assert result.ok and result.entry_id is None
    (kind, warning), (_, question) = prompter.asked
    assert kind == "warning"
    assert warning.startswith(f"This deletes all 100 entries on {host} (profile 'default'); ")
    assert question == f"Type delete-all (or {host}) to confirm, anything else cancels: "
    assert sent(env_creds) == [("purge", None)]


@pytest.mark.parametrize("answer", ["", "yes", "delete all", "DELETE-ALL", "delete-all!"])
def test_anything_else_cancels_the_purge(env_creds: SandboxServer, answer: str) -> None:
    host = env_creds.url.removeprefix("http://")
    with pytest.raises(UsageProblem) as refused:
        purge(OperationSettings(), ScriptedPrompter([answer]))
    assert str(refused.value) == (
        f"purge not confirmed: nothing was deleted (profile 'default', {host})."
    )
    assert sent(env_creds) == [] and len(env_creds.entries) == 100


def test_purge_with_nobody_to_ask_says_why_and_names_yes(env_creds: SandboxServer) -> None:
    with pytest.raises(UsageProblem) as refused:
        purge(OperationSettings(), ScriptedPrompter(reason="stdin is not a terminal"))
    message = str(refused.value)
    assert "but stdin is not a terminal. Nothing was deleted." in message
    assert refused.value.option == "yes"  # each front end words it (-y, --yes)
    prompter = ScriptedPrompter()
    assert purge(OperationSettings(), prompter, yes=True).ok
    assert prompter.asked == []
    assert sent(env_creds) == [("purge", None)]


def test_the_policy_itself() -> None:
    plan = PurgePlan(host="h:1", profile="p", count=3)
    assert plan.accepts(" delete-all\n") and plan.accepts("h:1")
    assert not plan.accepts("h:2") and not plan.accepts("delete-all h:1")


# -- login, logout, status --------------------------------------------------------------------


def test_login_asks_for_what_is_missing_in_order(sandbox: SandboxServer, memory_keyring) -> None:
    prompter = ScriptedPrompter([sandbox.url + "/api/v1", "AK-typed-1234", sandbox.secret_key])
    done = login(OperationSettings(profile="work"), prompter)
    assert [kind for kind, _ in prompter.asked] == ["ask", "ask_secret", "ask_secret"]
    assert prompter.asked[0][1] == "Base URL (https://host[:port]): "
    host = sandbox.url.removeprefix("http://")
    assert prompter.asked[2][1] == f"Secret key for {host} (hidden): "
    assert isinstance(done, LoginResult) and done.base_url == sandbox.url
    assert done.lines == [
        f"Stored profile 'work' in the keyring (conftest.MemoryKeyring): base URL {sandbox.url}, "
        "access key AK-t\u202634, secret key saved (not shown)."
    ]
    assert memory_keyring.items[("dict-magics", "work:secret_key")] == sandbox.secret_key
    assert sandbox.secret_key not in repr(done) + "".join(done.lines)

    again = ScriptedPrompter(["", "AK-other-5678", "other-secret"])
    login(OperationSettings(profile="work"), again)
    assert again.asked[0][1] == f"Base URL [{sandbox.url}]: "  # an empty answer keeps it
    assert memory_keyring.items[("dict-magics", "work:base_url")] == sandbox.url


def test_login_with_nobody_to_ask(sandbox: SandboxServer, memory_keyring) -> None:
    nobody = ScriptedPrompter(reason="no stdin here")
    with pytest.raises(UsageProblem) as refused:
        login(OperationSettings(), nobody, base_url=sandbox.url)
    message = str(refused.value)
    assert message.startswith("cannot ask for the access key: no stdin here.")
    assert "DICT_MAGICS_ACCESS_KEY" in message and "Nothing was stored." in message
    # Given everything but the secret key, which a script may hand over (piped, never typed).
    done = login(
        OperationSettings(),
        nobody,
        base_url=sandbox.url,
        access_key="AK-piped",
        secret_key="piped-secret",
    )
    assert done.profile == "default" and memory_keyring.items
    with pytest.raises(UsageProblem, match="no secret key given; nothing was stored"):
        login(OperationSettings(), nobody, base_url=sandbox.url, access_key="AK", secret_key="")


def test_logout_and_status(
    sandbox: SandboxServer, memory_keyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompter = ScriptedPrompter([sandbox.secret_key])
    login(OperationSettings(), prompter, base_url=sandbox.url, access_key=sandbox.access_key)
    found = status(OperationSettings(base_url="http://127.0.0.1:1"))
    assert found.ready and found.base_url == "http://127.0.0.1:1"
    assert found.sources["base_url"] == "config"
    monkeypatch.setenv("DICT_MAGICS_ACCESS_KEY", "AK-env")
    gone = logout(OperationSettings())
    assert gone.lines == [
        "Removed profile 'default' from the keyring (base_url, access_key, secret_key).",
        "Note: DICT_MAGICS_ACCESS_KEY still set in the environment for profile 'default'.",
    ]
    assert logout(OperationSettings(profile="default")).lines[0] == (
        "Profile 'default' had nothing stored in the keyring."
    )
    assert sandbox.requests == []


# -- ids as typed and in files ----------------------------------------------------------------


def test_an_argument_without_an_id_is_refused() -> None:
    assert split_args(["1,2", " 3 ", ","]) == ["1", "2", "3"]  # a comma only separates
    for empty in ("", " ", "\t"):
        with pytest.raises(InvalidIdError, match="cannot be empty"):
            split_args(["5", empty])


def test_id_files_one_a_line_with_comments_blank_lines_and_a_bom() -> None:
    text = "\ufeff10\n# a comment\n\n  11  # trailing\r\n12, 13\n014\n   # indented\n"
    assert ids_from_bytes(text.encode("utf-8"), "ids.txt") == ["10", "11", "12", "13", "14"]
    with pytest.raises(UsageProblem) as refused:
        ids_from_bytes(b"1\n2\n\xff3\n", "'ids.txt'")
    assert str(refused.value) == (
        "cannot read ids from 'ids.txt': it is not UTF-8 text (byte 0xff on line 3). "
        "Nothing was sent."
    )
    with pytest.raises(InvalidIdError):
        ids_from_bytes(b"1\ndictionary-all\n", "ids.txt")
