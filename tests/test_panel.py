"""The confirm-then-delete panel, driven like a user would: clicks and typed values.

Every test talks to the real sandbox over loopback and checks both the widgets and what the
server actually received, so "nothing was sent" is proven by the server's own log.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest
import requests

from dict_magics.errors import CredentialsError, DictMagicsError
from dict_magics.frontends.panel import DictPanel, parse_ids
from dict_magics.profiles import credentials
from dict_magics.render import batch_html, result_html
from dict_magics.sandbox import LoggedRequest, SandboxServer
from dict_magics.service.client import DictionaryClient
from dict_magics.settings import PURGE_WORD

WAIT_S = 30.0


def make_panel(sandbox: SandboxServer, **client_options: object) -> DictPanel:
    client = DictionaryClient(
        sandbox.url, sandbox.access_key, sandbox.secret_key, backoff=0.01, **client_options
    )
    return DictPanel(client, profile="default", workers=4)


@pytest.fixture
def panel(sandbox: SandboxServer) -> Iterator[DictPanel]:
    built = make_panel(sandbox)
    yield built
    built.close()


def deletes(sandbox: SandboxServer) -> list[LoggedRequest]:
    return [r for r in sandbox.requests if r.method == "DELETE"]


def visible(widget) -> bool:
    return widget.layout.display != "none"


def action_buttons(panel: DictPanel) -> list:
    return [
        panel.delete_button,
        panel.delete_all_button,
        panel.confirm_button,
        panel.cancel_button,
    ]


def arm(panel: DictPanel, ids: str) -> None:
    panel.ids_text.value = ids
    panel.delete_button.click()


def confirm_and_wait(panel: DictPanel) -> None:
    panel.confirm_button.click()
    assert panel.wait(WAIT_S)


def assert_idle(panel: DictPanel) -> None:
    assert panel.state == "idle"
    assert not panel.delete_button.disabled
    assert not panel.delete_all_button.disabled
    assert not panel.ids_text.disabled
    assert not visible(panel.confirm_box)


def everything_shown(panel: DictPanel) -> str:
    """Every synced value of every widget in the panel, and the panel's repr."""

    def walk(widget) -> Iterator:
        yield widget
        for child in getattr(widget, "children", ()):
            yield from walk(child)

    states = [json.dumps(w.get_state(), default=str) for w in walk(panel)]
    return "\n".join([*states, repr(panel)])


def test_parse_ids_splits_on_spaces_and_commas_and_drops_duplicates() -> None:
    assert parse_ids(" 1, 2 3,,4\n5\t2 ") == ["1", "2", "3", "4", "5"]
    assert parse_ids(" , ") == []


def test_header_names_profile_host_and_masked_access_key(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    header = panel.header.value
    assert "default" in header
    assert f"127.0.0.1:{sandbox.port}" in header
    assert credentials.mask(sandbox.access_key) in header
    assert sandbox.access_key not in header
    assert panel.delete_all_button.button_style == "danger"
    assert panel.confirm_button.button_style == "danger"
    assert_idle(panel)


def test_delete_arms_a_confirmation_naming_ids_and_host_and_sends_nothing(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    arm(panel, "7")
    assert panel.state == "armed"
    assert visible(panel.confirm_box)
    assert "&#x27;7&#x27;" in panel.confirm_message.value
    assert f"127.0.0.1:{sandbox.port}" in panel.confirm_message.value
    assert not visible(panel.purge_word_text)
    assert not panel.confirm_button.disabled and not panel.cancel_button.disabled
    # What is named is what will be sent: the field and the other actions are locked.
    assert panel.ids_text.disabled and panel.delete_button.disabled
    assert panel.delete_all_button.disabled
    assert deletes(sandbox) == []
    assert "7" in sandbox.entries


def test_what_is_confirmed_is_what_is_sent(panel: DictPanel, sandbox: SandboxServer) -> None:
    arm(panel, "7")
    arm(panel, "8")  # programmatic clicks on the locked controls change nothing
    panel.delete_all_button.click()
    assert "&#x27;7&#x27;" in panel.confirm_message.value
    assert "&#x27;8&#x27;" not in panel.confirm_message.value
    confirm_and_wait(panel)
    assert [r.entry_id for r in deletes(sandbox)] == ["7"]
    assert "8" in sandbox.entries


def test_confirm_deletes_and_renders_the_result_like_the_magics(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    arm(panel, "7")
    confirm_and_wait(panel)
    sent = deletes(sandbox)
    assert [(r.path, r.outcome) for r in sent] == [("/api/v1/dictionary/7", "success")]
    assert "7" not in sandbox.entries
    (result,) = panel.history
    assert result.ok and result.entry_id == "7"
    assert panel.result.value == result_html(result)
    assert "dict-magics-success" in panel.result.value
    assert panel.ids_text.value == ""
    assert_idle(panel)


def test_cancel_sends_nothing_and_returns_to_idle(panel: DictPanel, sandbox: SandboxServer) -> None:
    arm(panel, "8 9")
    panel.cancel_button.click()
    assert_idle(panel)
    assert "Cancelled" in panel.status.value
    # Confirm is hidden now; even a programmatic click has nothing armed to send.
    panel.confirm_button.click()
    assert panel.wait(WAIT_S)
    assert deletes(sandbox) == []
    assert {"8", "9"} <= sandbox.entries.keys()
    assert list(panel.history) == []


def test_bad_ids_are_reported_before_anything_is_armed(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    arm(panel, "5, dictionary-all ..")
    assert_idle(panel)
    status = panel.status.value
    assert "dict-magics-status-error" in status
    assert "dictionary-all" in status and "&#x27;..&#x27;" in status
    panel.confirm_button.click()
    arm(panel, " , ")
    assert "Type one or more entry ids" in panel.status.value
    assert_idle(panel)
    assert deletes(sandbox) == []
    assert "5" in sandbox.entries


def test_purge_needs_the_typed_word_before_confirm(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    panel.delete_all_button.click()
    assert panel.state == "armed"
    assert visible(panel.purge_word_text)
    message = panel.confirm_message.value
    assert "EVERY entry" in message and PURGE_WORD in message
    assert f"127.0.0.1:{sandbox.port}" in message
    assert panel.confirm_button.disabled

    panel.purge_word_text.value = "delete all"
    assert panel.confirm_button.disabled
    panel.confirm_button.click()  # a click the browser would not even send
    assert panel.wait(WAIT_S)
    assert panel.state == "armed"
    assert "dict-magics-status-error" in panel.status.value
    assert deletes(sandbox) == []
    assert len(sandbox.entries) == 100

    panel.purge_word_text.value = PURGE_WORD
    assert not panel.confirm_button.disabled
    confirm_and_wait(panel)
    assert [(r.operation, r.path) for r in deletes(sandbox)] == [
        ("purge", "/api/v1/dictionary/dictionary-all")
    ]
    assert sandbox.entries == {}
    assert panel.history[-1].entry_id is None
    assert "every entry" in panel.result.value
    assert_idle(panel)
    assert not visible(panel.purge_word_text)


def test_purge_is_confirmed_by_the_same_answers_as_everywhere(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    host = f"127.0.0.1:{sandbox.port}"
    panel.delete_all_button.click()
    assert host in panel.confirm_message.value
    for answer in ("DELETE-ALL", "delete-all!", "127.0.0.1"):
        panel.purge_word_text.value = answer
        assert panel.confirm_button.disabled, answer
    panel.purge_word_text.value = f" {host} "  # the host it will hit, as %dict_purge accepts
    assert not panel.confirm_button.disabled
    confirm_and_wait(panel)
    assert [r.operation for r in deletes(sandbox)] == ["purge"] and sandbox.entries == {}
    assert panel.history[-1].ok and panel.history[-1].entry_id is None


def test_cancelled_purge_sends_nothing_and_forgets_the_word(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    panel.delete_all_button.click()
    panel.purge_word_text.value = PURGE_WORD
    panel.cancel_button.click()
    assert_idle(panel)
    panel.delete_all_button.click()
    assert panel.purge_word_text.value == ""
    assert panel.confirm_button.disabled
    assert deletes(sandbox) == []


def test_double_click_on_confirm_sends_one_request(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    sandbox.pause()  # holds the request in flight while we click again
    arm(panel, "3")
    panel.confirm_button.click()
    # click() came back while the request is still in flight: it runs on another thread.
    assert panel.state == "running"
    assert "Deleting &#x27;3&#x27; on 127.0.0.1:" in panel.status.value
    assert all(button.disabled for button in action_buttons(panel))
    assert panel.ids_text.disabled
    panel.confirm_button.click()
    panel.delete_button.click()
    panel.delete_all_button.click()
    sandbox.resume()
    assert panel.wait(WAIT_S)
    assert [r.entry_id for r in deletes(sandbox)] == ["3"]
    assert len(panel.history) == 1
    panel.confirm_button.click()  # after the fact: nothing is armed any more
    assert [r.entry_id for r in deletes(sandbox)] == ["3"]
    assert_idle(panel)


def test_service_failure_is_rendered_and_the_panel_stays_usable(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    sandbox.fail_next(5, 500)
    arm(panel, "4")
    confirm_and_wait(panel)
    result = panel.history[-1]
    assert not result.ok and result.http_status == 500
    assert panel.result.value == result_html(result)
    assert "dict-magics-failure" in panel.result.value and "HTTP 500" in panel.result.value
    assert "4" in sandbox.entries
    assert panel.ids_text.value == "4"  # kept, so the user can try again
    assert_idle(panel)


def test_unknown_id_is_a_rendered_failure(panel: DictPanel, sandbox: SandboxServer) -> None:
    arm(panel, "no-such-id")
    confirm_and_wait(panel)
    result = panel.history[-1]
    assert not result.ok and result.http_status == 404
    assert "not deleted" in panel.result.value
    assert len(deletes(sandbox)) == 1
    assert_idle(panel)


def test_several_ids_show_progress_and_a_batch_summary(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    seen: list[tuple[int, int]] = []
    panel.progress.observe(lambda c: seen.append((c["new"], panel.progress.max)), names="value")
    arm(panel, "1, 2 3,,4\n5 2")
    message = panel.confirm_message.value
    assert "5 entries" in message
    assert all(f"&#x27;{i}&#x27;" in message for i in "12345")
    confirm_and_wait(panel)
    assert [value for value, _ in seen] == [1, 2, 3, 4, 5]
    assert {top for _, top in seen} == {5}
    assert visible(panel.progress)
    assert panel.progress.description == "5 / 5"
    assert sorted(r.entry_id for r in deletes(sandbox)) == ["1", "2", "3", "4", "5"]
    batch = panel.history[-1]
    assert batch.succeeded == 5
    assert panel.result.value == batch_html(batch)
    assert "deleted 5 of 5 entries" in panel.result.value


def test_a_batch_with_a_missing_id_lists_the_failure(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    arm(panel, "10 nope 11")
    confirm_and_wait(panel)
    batch = panel.history[-1]
    assert (batch.succeeded, batch.failed) == (2, 1)
    assert "deleted 2 of 3 entries" in panel.result.value
    assert "&#x27;nope&#x27; not deleted" in panel.result.value
    assert "10" not in sandbox.entries and "11" not in sandbox.entries


def test_an_exception_in_the_background_is_shown_and_the_panel_recovers(
    sandbox: SandboxServer,
) -> None:
    session = requests.Session()
    session.trust_env = False

    def broken_hook(response: requests.Response, **_kwargs: object) -> None:
        session.hooks["response"].remove(broken_hook)  # a bug that bites once
        raise RuntimeError("boom in a response hook")

    session.hooks["response"].append(broken_hook)
    client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key, session=session)
    panel = DictPanel(client, profile="default")
    try:
        arm(panel, "8")
        confirm_and_wait(panel)
        status = panel.status.value
        assert "dict-magics-status-error" in status
        assert "RuntimeError: boom in a response hook" in status
        assert "may or may not have reached the service" in status
        assert list(panel.history) == []
        assert_idle(panel)

        arm(panel, "9")
        confirm_and_wait(panel)
        assert panel.history[-1].ok
        assert panel.status.value == ""
        assert [r.entry_id for r in deletes(sandbox)] == ["8", "9"]
    finally:
        panel.close()


def test_a_closed_port_is_a_rendered_failure(sandbox: SandboxServer) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = DictionaryClient(f"http://127.0.0.1:{port}", "some-access-key", "s3cret", timeout=2)
    panel = DictPanel(client, profile="default")
    try:
        arm(panel, "1")
        confirm_and_wait(panel)
        result = panel.history[-1]
        assert not result.ok
        assert result.reason and f"127.0.0.1:{port}" in result.reason
        assert "not deleted" in panel.result.value
        assert_idle(panel)
    finally:
        panel.close()


def test_history_keeps_the_last_ten_results_newest_first(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    for entry_id in range(1, 13):
        arm(panel, str(entry_id))
        confirm_and_wait(panel)
    assert [r.entry_id for r in panel.history] == [str(i) for i in range(3, 13)]
    view = panel.history_view.value
    assert view.count("<li>") == 10
    assert view.index("&#x27;12&#x27;") < view.index("&#x27;3&#x27;")
    assert "&#x27;2&#x27;" not in view


def test_the_secret_key_never_appears_in_any_widget_or_repr(
    panel: DictPanel, sandbox: SandboxServer
) -> None:
    arm(panel, "1 2")
    confirm_and_wait(panel)
    sandbox.fail_next(1, 500)
    arm(panel, "3")
    confirm_and_wait(panel)
    panel.delete_all_button.click()
    panel.purge_word_text.value = "nope"
    shown = everything_shown(panel)
    assert sandbox.secret_key not in shown
    assert sandbox.access_key not in shown
    assert credentials.mask(sandbox.access_key) in shown


def test_from_profile_reads_the_environment(
    sandbox: SandboxServer, memory_keyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in sandbox.env().items():
        monkeypatch.setenv(name, value)
    panel = DictPanel.from_profile(workers=2, timeout=5)
    try:
        assert panel.workers == 2 and panel.profile == "default"
        assert f"127.0.0.1:{sandbox.port}" in panel.header.value
        arm(panel, "6")
        confirm_and_wait(panel)
        assert panel.history[-1].ok
        assert "6" not in sandbox.entries
        assert sandbox.secret_key not in everything_shown(panel)
    finally:
        panel.close()


def test_from_profile_reads_a_keyring_profile(sandbox: SandboxServer, memory_keyring) -> None:
    credentials.store("work", sandbox.url, sandbox.access_key, sandbox.secret_key)
    panel = DictPanel.from_profile("work")
    try:
        assert "<code>work</code>" in panel.header.value
        panel.delete_all_button.click()
        assert "<code>work</code>" in panel.confirm_message.value
    finally:
        panel.close()


def test_from_profile_without_credentials_says_what_is_missing(memory_keyring) -> None:
    with pytest.raises(CredentialsError, match="dict_login"):
        DictPanel.from_profile("nobody")


def test_workers_below_one_are_refused(sandbox: SandboxServer) -> None:
    client = DictionaryClient(sandbox.url, sandbox.access_key, sandbox.secret_key)
    with pytest.raises(DictMagicsError, match="workers"):
        DictPanel(client, profile="default", workers=0)
    client.close()


def test_dict_panel_magic_returns_a_working_panel(
    request: pytest.FixtureRequest, sandbox: SandboxServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    ip = request.getfixturevalue("ip")
    for name, value in sandbox.env().items():
        monkeypatch.setenv(name, value)
    panel = ip.run_line_magic("dict_panel", "")
    try:
        assert isinstance(panel, DictPanel)
        arm(panel, "12")
        confirm_and_wait(panel)
        assert [r.entry_id for r in deletes(sandbox)] == ["12"]
    finally:
        panel.close()
