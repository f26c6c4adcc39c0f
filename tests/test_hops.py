"""The path of one ``%dict_delete 17`` (issue 29), traced as ``python -m tools.hops`` prints it.

Structural, not timed: every call into the package on every thread is traced while the magic
runs in the real shell against a sandbox over loopback (dataclass records count: their generated
code runs in their module). No call may come back into a module already lower on the same stack,
and the number of modules entered may not grow. Issue 29 asks for 12 with the front ends' two
(magics, commands); below the front ends the path is now 10 modules: context, models.entry,
delete, profiles.credentials, service.client, http (the wire: who signs what is sent, and what
an answer means), models.records, snapshots, localdata, audit (20 in version 3).
"""

from __future__ import annotations

from typing import Any

from tools.hops import trace_delete

BELOW_FRONT_ENDS = 10
"""Modules below the front ends that one delete enters today."""
FRONT_ENDS = ["dict_magics.frontends.magics", "dict_magics.frontends.commands"]
"""The front ends' share: the magic, and its row of the commands table (parser, operation)."""


def test_one_delete_calls_nothing_back_and_stays_within_its_modules(ip: Any) -> None:
    order, back = trace_delete("17", shell=ip)
    assert order[0] == "dict_magics.frontends.magics", order
    assert [name for name in order if ".frontends." in name] == FRONT_ENDS, order
    for part in ("operations.delete", "service.http", "operations.snapshots", "operations.audit"):
        assert f"dict_magics.{part}" in order, (part, order)
    assert back == [], f"calls back into a module already on the stack: {sorted(set(back))}"
    below = [name for name in order if not name.startswith("dict_magics.frontends.")]
    assert len(below) <= BELOW_FRONT_ENDS, f"{len(below)} modules: {below}"
    assert len(order) - len(below) <= 2, order  # the front ends' share


def test_the_tracer_sees_the_call_backs_a_batch_makes(ip: Any) -> None:
    """A test of the test: a batch hands its requests (``service.client``) and its progress
    sink (``operations.delete``) to the batch engine, which calls them back, and the tracer
    says so (by design there: a batch reports each result as it comes)."""
    order, back = trace_delete("17 18 19", shell=ip)
    assert ("dict_magics.service.batch", "dict_magics.service.client") in back, back
    assert "dict_magics.frontends.output" in order  # the bar a batch shows
