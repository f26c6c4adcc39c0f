"""Child of ``test_secret_service.py``: runs inside a private D-Bus session with gnome-keyring.

It stores a profile in the real Secret Service keyring, reads it back, runs ``%dict_status``,
``%dict_delete`` and ``%dict_logout`` through a real InteractiveShell against a sandbox, and
prints one JSON report. The secret comes from ``$SECRET_SERVICE_TEST_SECRET``; the parent checks
that it appears nowhere in what this process printed.
"""

from __future__ import annotations

import json
import os
import sys

PROFILE = "pr\u00fcfung-\u00e9t\u00e9"


def main() -> int:
    import keyring
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    from dict_magics.profiles import credentials
    from dict_magics.sandbox import SandboxServer

    secret = os.environ["SECRET_SERVICE_TEST_SECRET"]
    report: dict[str, object] = {"backend": credentials.backend_info().name}
    if not report["backend"].endswith("SecretService.Keyring"):  # type: ignore[union-attr]
        print(json.dumps(report))
        return 3

    with SandboxServer(10, secret_key=secret) as sandbox:
        saved = credentials.store(PROFILE, sandbox.url, sandbox.access_key, secret)
        loaded = credentials.load(PROFILE)
        report["round_trip"] = loaded == saved and loaded.secret_key == secret
        report["secret_length"] = len(loaded.secret_key)
        report["raw_read_matches"] = (
            keyring.get_password("dict-magics", f"{PROFILE}:secret_key") == secret
        )
        report["stored_items"] = credentials.stored_items(PROFILE)

        shell = InteractiveShell.instance()
        shell.run_line_magic("load_ext", "dict_magics")
        cells = {
            "status": f"%dict_status -p {PROFILE}",
            "batch": f"%dict_delete -p {PROFILE} 1 2,3",
            "single": f"%dict_delete -p {PROFILE} 4",
            "logout": f"%dict_logout -p {PROFILE}",
            "after_logout": f"%dict_delete -p {PROFILE} 5",
        }
        outputs: dict[str, str] = {}
        errors: dict[str, str | None] = {}
        values: dict[str, str] = {}
        for name, cell in cells.items():
            with capture_output() as cap:
                result = shell.run_cell(cell)
            outputs[name] = cap.stdout + cap.stderr
            errors[name] = type(result.error_in_exec).__name__ if result.error_in_exec else None
            values[name] = str(result.result)
        report.update(outputs=outputs, errors=errors, values=values)
        report["stored_after_logout"] = credentials.stored_items(PROFILE)
        report["entries_left"] = sorted(sandbox.entries, key=int)
        report["requests"] = [
            [r.operation, r.entry_id, r.http_status]
            for r in sandbox.requests
            if r.code != 40005  # a nonce refused and sent again at once: it changed nothing
        ]
    print(json.dumps(report, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
