"""The real Linux keyring: gnome-keyring's Secret Service in a private D-Bus session.

Recipe from TESTING.md section 1: a throw-away HOME (so no existing keyring with another password
is found), the keyring password on the daemon's stdin, DISPLAY unset (no unlock prompt).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import require_program

ROOT = Path(__file__).resolve().parent.parent
CHILD = 'printf %s "$PW" | gnome-keyring-daemon --unlock --components=secrets >/dev/null; '
CHILD += 'exec "$CHILD_PYTHON" tests/secret_service_check.py'


@pytest.mark.secret_service
def test_profile_lives_in_the_real_secret_service(tmp_path: Path) -> None:
    dbus_run_session = require_program("dbus-run-session")
    require_program("gnome-keyring-daemon")

    # Non-ASCII and over 4 KB, random so that finding it anywhere means it leaked.
    secret = "cl\u00e9-\u043a\u043b\u044e\u0447-\u79d8\u5bc6-" + secrets.token_urlsafe(3200)
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("DICT_MAGICS_", "DBUS_", "GNOME_KEYRING"))
        and name not in ("DISPLAY", "WAYLAND_DISPLAY", "PYTHON_KEYRING_BACKEND", "XDG_RUNTIME_DIR")
    }
    home = tmp_path / "home"
    home.mkdir()
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CONFIG_HOME=str(home / ".config"),
        IPYTHONDIR=str(home / ".ipython"),
        PW=secrets.token_hex(16),
        SECRET_SERVICE_TEST_SECRET=secret,
        CHILD_PYTHON=sys.executable,
    )
    proc = subprocess.run(
        [dbus_run_session, "--", "bash", "-c", CHILD],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert secret not in proc.stdout and secret not in proc.stderr
    assert secret[:24] not in proc.stdout + proc.stderr
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    report = json.loads(proc.stdout.strip().splitlines()[-1])

    assert report["backend"] == "keyring.backends.SecretService.Keyring"
    assert report["round_trip"] is True and report["raw_read_matches"] is True
    assert report["secret_length"] == len(secret)
    assert report["stored_items"] == {"base_url": True, "access_key": True, "secret_key": True}

    assert report["errors"] == {
        "status": None,
        "batch": None,
        "single": None,
        "logout": None,
        "after_logout": "UsageError",
    }
    status = report["values"]["status"]
    assert "keyring backend keyring.backends.SecretService.Keyring" in status
    assert "(from keyring)" in status and "sand\u2026ey" in status
    assert "\u2713 deleted 3 of 3 entries" in report["values"]["batch"]
    assert "\u2713 deleted 4: Stra\u00dfe \u2192 street (de\u2192en)" in report["values"]["single"]
    assert "Removed profile 'pr\u00fcfung-\u00e9t\u00e9'" in report["outputs"]["logout"]
    assert "%dict_login -p pr\u00fcfung-\u00e9t\u00e9" in report["outputs"]["after_logout"]

    assert report["stored_after_logout"] == {
        "base_url": False,
        "access_key": False,
        "secret_key": False,
    }
    assert report["entries_left"] == [str(i) for i in range(5, 11)]
    deletes = [r for r in report["requests"] if r[0] != "list"]
    assert sorted(deletes) == [["delete", str(i), 200] for i in range(1, 5)]
    assert report["requests"][0] == ["list", None, 200]  # the batch's snapshot, listed once
