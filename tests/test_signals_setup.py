"""The Ctrl-C tests work when the suite is started with SIGINT ignored (issue 22, item 21)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CTRL_C_TESTS = [
    "tests/test_client.py::test_a_request_on_the_main_thread_leaves_ctrl_c_as_it_found_it",
    "tests/test_nothing_lost.py::test_ctrl_c_while_the_snapshot_syncs_sends_nothing",
    "tests/test_concurrency.py::test_ctrl_c_during_a_batch_waits_for_the_requests_in_flight",
]


def test_ctrl_c_tests_pass_under_nohup() -> None:
    """As ``nohup`` starts it: SIGINT ignored, inherited by the suite and its children."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *CTRL_C_TESTS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert proc.returncode == 0, proc.stdout[-3000:]
