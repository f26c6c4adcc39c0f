"""The test suite never writes into the user's real data folder (issue 22, item 14).

A module-scoped fixture (such as the benchmark run of ``test_benchmarks_run.py``) is set up
before any per-test fixture, so the per-test private folder came too late for it: the README's
test command wrote snapshots and audit lines into the user's own folder. ``conftest.py`` now
points ``DICT_MAGICS_HOME`` at a temporary folder when it is imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from dict_magics import localdata

TEMP = Path(tempfile.gettempdir()).resolve()


@pytest.fixture(scope="module")
def seen_by_a_module_fixture() -> tuple[str, str]:
    """The variable, and where a subprocess started now would write (as the benchmarks do)."""
    code = "from dict_magics import localdata; print(localdata.location())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return os.environ.get(localdata.ENV_HOME, ""), out.stdout.strip()


def test_a_module_scoped_fixture_already_sees_a_temporary_data_folder(
    seen_by_a_module_fixture: tuple[str, str],
) -> None:
    variable, where = seen_by_a_module_fixture
    assert variable, "DICT_MAGICS_HOME is not set before the per-test fixtures"
    assert Path(variable).resolve().is_relative_to(TEMP)
    assert Path(where).resolve().is_relative_to(TEMP), where
