"""The path of one ``%dict_delete 17`` (issue 21), traced as ``python -m tools.hops`` prints it.

Structural, not timed: every call into the package on every thread is traced while the magic
runs in the real shell against a sandbox over loopback. No call may come back into a module
already lower on the same stack (a hook or closure handed down and called back), and the
number of modules entered may not grow past the figure docs/architecture.md gives.
"""

from __future__ import annotations

from typing import Any

from tools.hops import trace_delete

MODULES = 21
"""The modules one delete enters today (docs/architecture.md, "The path of one %dict_delete")."""
FRONT_ENDS = ["dict_magics.frontends.magics", "dict_magics.frontends.commands"]
"""The front ends' share: the magic, and its row of the commands table (parser, operation)."""


def test_one_delete_calls_nothing_back_and_stays_within_its_modules(
    _shell: Any, memory_keyring: Any
) -> None:
    order, back = trace_delete("17", shell=_shell)
    # It traced the delete itself: from the magic down to the request and its audit line.
    assert order[0] == "dict_magics.frontends.magics", order
    assert [name for name in order if ".frontends." in name] == FRONT_ENDS, order
    for part in ("operations.delete", "service.transport", "operations.snapshots", "audit"):
        assert any(name.endswith(part) for name in order), (part, order)
    assert back == [], f"calls back into a module already on the stack: {sorted(set(back))}"
    assert len(order) <= MODULES, f"{len(order)} modules (docs say {MODULES}): {order}"


def test_the_tracer_sees_the_call_backs_a_batch_makes(_shell: Any, memory_keyring: Any) -> None:
    """A test of the test: a batch of three hands its progress sink (``operations.delete``) and
    its requests (``service.client``) to the batch engine, which calls them back, and the
    tracer says so (by design there: a batch reports each result as it comes)."""
    order, back = trace_delete("17 18 19", shell=_shell)
    assert ("dict_magics.service.batch", "dict_magics.operations.delete") in back, back
    assert "dict_magics.frontends.output" in order  # the bar a batch shows
