"""``listing_max_age``: the user's choice of a cached listing for a delete's snapshot (issue 22,
item 6).

By default every delete that keeps a snapshot lists afresh first
(``test_listing_trust.py::test_a_snapshot_holds_the_terms_the_service_has_at_the_delete``).
With ``listing_max_age`` > 0 a delete may take its snapshot's terms from this process's cached
listing while it is that young and holds every id: one round trip less per cell, and an edit
made elsewhere within that window is not in the snapshot. A purge always lists afresh. Against
the real sandbox over loopback; requests are counted in its log.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from conftest import run_cell

from dict_magics.errors import UsageProblem
from dict_magics.models import DryRunResult, Entry
from dict_magics.operations.context import OperationSettings
from dict_magics.operations.delete import delete
from dict_magics.operations.purge import purge
from dict_magics.operations.restore import restore
from dict_magics.operations.snapshots import read_snapshot
from dict_magics.sandbox import SandboxServer

EDITED = Entry("6", "en", "edited elsewhere", "de", "anderswo bearbeitet")


def methods(server: SandboxServer) -> list[str]:
    # 40005: a nonce overtaken on another connection, not acted on and sent again at once.
    return [r.method for r in server.requests if r.code != 40005]


def header(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        return json.loads(handle.readline()[:-1] + "]}")


# -- the cached listing, when allowed ------------------------------------------------------------


def test_a_loop_of_one_id_deletes_sends_one_listing(ip: Any, env_creds: SandboxServer) -> None:
    run_cell(ip, "%config DictMagics.listing_max_age = 60")
    before = dict(env_creds.entries)
    for entry_id in range(1, 21):
        result, _, _ = run_cell(ip, f"%dict_delete {entry_id}")
        assert result.ok and result.snapshot is not None
        kept = read_snapshot(result.snapshot)
        assert kept.entries == [before[str(entry_id)]]
    assert methods(env_creds).count("GET") == 1
    assert methods(env_creds).count("DELETE") == 20


def test_the_snapshot_holds_the_cached_terms_and_says_how_old(env_creds: SandboxServer) -> None:
    settings = OperationSettings(listing_max_age=60)
    original = env_creds.entries["6"]
    first = delete(settings, ["5"])
    assert header(first.snapshot)["listing_age"] == 0  # listed afresh: nothing cached yet
    env_creds.add_entries([EDITED])  # another client edits entry 6 within the window
    env_creds.clear_log()
    result = delete(settings, ["6"])
    assert methods(env_creds) == ["DELETE"]  # no listing: the cached one stood in
    kept = read_snapshot(result.snapshot)
    assert kept.entries == [original]  # the cached terms: the edit elsewhere is not in it
    assert kept.listing_age is not None and kept.listing_age > 0
    assert header(result.snapshot)["listing_age"] == kept.listing_age
    undone = restore(OperationSettings())
    assert undone.ok and original.terms in env_creds.terms
    assert undone.listing_age == kept.listing_age
    assert "s before the delete (the listing_max_age setting" in str(undone)


def test_the_default_lists_before_every_delete(env_creds: SandboxServer) -> None:
    assert OperationSettings().listing_max_age == 0
    for entry_id in ("1", "2", "3"):
        result = delete(OperationSettings(), [entry_id])
        assert read_snapshot(result.snapshot).listing_age == 0
    assert methods(env_creds).count("GET") == 3


def test_a_batch_takes_the_cached_listing_too(env_creds: SandboxServer) -> None:
    settings = OperationSettings(listing_max_age=60, workers=4)
    assert delete(settings, ["1"]).ok
    env_creds.clear_log()
    result = delete(settings, [str(i) for i in range(2, 12)])
    assert result.ok and len(read_snapshot(result.snapshot).entries) == 10
    assert methods(env_creds) == ["DELETE"] * 10


def test_an_id_the_cache_lacks_lists_afresh(env_creds: SandboxServer) -> None:
    settings = OperationSettings(listing_max_age=60)
    assert delete(settings, ["1"]).ok
    added = Entry("777", "en", "added elsewhere", "de", "anderswo")
    env_creds.add_entries([added])
    env_creds.clear_log()
    result = delete(settings, ["777"])
    assert methods(env_creds) == ["GET", "DELETE"]  # someone else added it: listed again
    assert read_snapshot(result.snapshot).entries == [added]
    assert read_snapshot(result.snapshot).listing_age == 0


def test_the_environment_sets_it(monkeypatch: pytest.MonkeyPatch, env_creds: SandboxServer) -> None:
    monkeypatch.setenv("DICT_MAGICS_LISTING_MAX_AGE", "60")
    assert OperationSettings().listing_max_age == 60.0
    assert OperationSettings(listing_max_age=0).listing_max_age == 0  # given wins
    assert delete(OperationSettings(), ["1"]).ok and delete(OperationSettings(), ["2"]).ok
    assert methods(env_creds).count("GET") == 1


def test_a_purge_always_lists_afresh(env_creds: SandboxServer) -> None:
    settings = OperationSettings(listing_max_age=3600)
    assert delete(settings, ["1"]).ok
    env_creds.add_entries([EDITED])
    env_creds.clear_log()
    result = purge(settings, yes=True)
    assert methods(env_creds)[0] == "GET"
    assert EDITED in read_snapshot(result.snapshot).entries


def test_the_dry_run_shows_the_cached_terms_it_would_keep(env_creds: SandboxServer) -> None:
    settings = OperationSettings(listing_max_age=60)
    original = env_creds.entries["6"]
    assert delete(settings, ["1"]).ok
    env_creds.add_entries([EDITED])
    env_creds.clear_log()
    shown = delete(settings, ["6"], dry_run=True)
    assert isinstance(shown, DryRunResult) and shown.entries == [original]
    assert shown.listing_age is not None and shown.listing_age > 0
    assert "listing_max_age" in str(shown) and original.from_text in str(shown)
    assert EDITED.from_text not in str(shown)
    assert methods(env_creds) == []
    result = delete(settings, ["6"])
    assert read_snapshot(result.snapshot).entries == shown.entries  # what it said it would keep


def test_a_fresh_dry_run_says_nothing_of_an_age(env_creds: SandboxServer) -> None:
    shown = delete(OperationSettings(), ["6"], dry_run=True)
    assert shown.listing_age == 0 and "listing_max_age" not in str(shown)


# -- refused values ------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [-1, -0.5, math.nan, math.inf, -math.inf, True, "60"])
def test_a_bad_value_is_a_usage_problem(value: Any) -> None:
    with pytest.raises(UsageProblem, match="listing_max_age must be a number of seconds >= 0"):
        OperationSettings(listing_max_age=value)


@pytest.mark.parametrize("raw", ["-1", "nan", "inf", "soon", "1e999"])
def test_a_bad_environment_value_is_a_usage_problem(
    monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv("DICT_MAGICS_LISTING_MAX_AGE", raw)
    with pytest.raises(UsageProblem, match="DICT_MAGICS_LISTING_MAX_AGE") as caught:
        OperationSettings()
    assert caught.value.option == "listing_max_age"


@pytest.mark.parametrize("statement", ["-1", "float('nan')", "float('inf')", "1e400", "True"])
def test_config_refuses_a_bad_value(ip: Any, statement: str) -> None:
    magics = ip.magics_manager.registry["DictMagics"]
    run_cell(ip, "%config DictMagics.listing_max_age = 30")
    _, stdout, stderr = run_cell(ip, f"%config DictMagics.listing_max_age = {statement}")
    assert magics.listing_max_age == 30
    assert stderr.startswith("UsageError: DictMagics.listing_max_age must be")
    assert stderr.rstrip().endswith("The setting is unchanged.") and stdout == ""


def test_a_bad_environment_value_stops_a_magic(
    ip: Any, monkeypatch: pytest.MonkeyPatch, env_creds: SandboxServer
) -> None:
    from IPython.core.error import UsageError

    monkeypatch.setenv("DICT_MAGICS_LISTING_MAX_AGE", "-5")
    with pytest.raises(UsageError, match="listing_max_age"):
        run_cell(ip, "%dict_delete 1")
    assert methods(env_creds) == [] and "1" in env_creds.entries


# -- an update takes its old terms afresh, whatever listing_max_age says ---------------------------


def test_an_update_keeps_and_sends_the_terms_the_service_has(env_creds: SandboxServer) -> None:
    """The fields an update does not name come from the listing; a listing cached a moment ago
    (a list, a delete) would send another client's edit back over it and keep the old terms in
    the snapshot: that edit would be lost for good."""
    from dict_magics.operations.listing import list_entries
    from dict_magics.operations.update import update

    settings = OperationSettings(listing_max_age=60)  # allowed for deletes, not for an update
    list_entries(settings)  # the listing is cached
    env_creds.add_entries([EDITED])  # another client edits entry 6 meanwhile
    result = update(settings, "6", to_text="mine")
    assert result.ok
    assert read_snapshot(result.snapshot).entries == [EDITED]
    assert env_creds.entries["6"] == Entry("6", "en", EDITED.from_text, "de", "mine")


def test_a_listing_answered_before_this_clients_update_is_not_kept_after_it(
    monkeypatch: pytest.MonkeyPatch, env_creds: SandboxServer
) -> None:
    """A listing in flight (the panel's refresh, another thread) that the service answered
    before this client's update, and that arrives after it, must not become the cached one:
    a delete allowed a cached listing would keep the terms from before the update."""
    import threading

    from editing_proxy import EditingProxy

    from dict_magics.operations.listing import list_entries
    from dict_magics.operations.update import update

    answered, release = threading.Event(), threading.Event()
    held = []

    def hold_the_first(data: dict) -> dict:
        if not held:
            held.append(data)
            answered.set()  # the service has answered: its terms are those before the update
            assert release.wait(60)  # a safety limit, not a timing assertion
        return data

    with EditingProxy(env_creds.url, hold_the_first) as proxy:
        monkeypatch.setenv("DICT_MAGICS_BASE_URL", proxy.url)
        settings = OperationSettings(listing_max_age=60)
        slow = threading.Thread(target=list_entries, args=(settings,))
        slow.start()
        assert answered.wait(60)
        updated = update(OperationSettings(), "6", to_text="mine")
        assert updated.ok
        release.set()
        slow.join(60)
        result = delete(settings, ["6"])
    kept = read_snapshot(result.snapshot).entries
    assert [e.to_text for e in kept] == ["mine"]
