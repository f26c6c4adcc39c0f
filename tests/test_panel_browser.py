"""The panel in a real JupyterLab, clicked in Debian's Chromium, deleting from a real sandbox.

This proves what the Python-level tests cannot: the widgets render in the browser, typed values
and clicks reach the kernel, and results set from the panel's background thread show up.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import pytest
from conftest import require, require_program

from dict_magics.sandbox import SandboxServer

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
UI_TIMEOUT_MS = 60_000


def test_panel_confirm_and_cancel_in_jupyterlab(
    tmp_path: Path, record_property: pytest.RecordProperty
) -> None:
    require_program("chromium")
    needed = ("jupyterlab", "playwright", "nbformat", "ipykernel")
    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    require(not missing, f"{', '.join(missing)} not importable")
    from browser.chromium import chromium_page, open_and_run_all
    from browser.jupyter import jupyter_lab
    from browser.notebook import write_panel_notebook
    from playwright.sync_api import expect

    timings: dict[str, float] = {}
    started = time.monotonic()
    with SandboxServer(20) as sandbox, jupyter_lab(tmp_path) as lab:
        timings["server_up_s"] = time.monotonic() - started
        kernel = lab.api("/api/kernelspecs")["kernelspecs"]["python3"]
        assert kernel["spec"]["argv"][0] == sys.executable  # the kernel runs this venv
        write_panel_notebook(lab.root, sandbox.env())
        host = f"127.0.0.1:{sandbox.port}"

        with chromium_page() as (page, guard):
            mark = time.monotonic()
            open_and_run_all(page, f"{lab.url}/lab/tree/panel.ipynb?token={lab.token}")
            output = page.locator(".jp-OutputArea-output")
            ids = output.get_by_placeholder("entry ids, separated by spaces or commas")
            expect(ids).to_be_visible(timeout=UI_TIMEOUT_MS)
            expect(output.locator(".dict-magics-header")).to_contain_text(host)
            timings["panel_visible_s"] = time.monotonic() - mark

            mark = time.monotonic()
            confirm_row = output.locator(".widget-html", has_text="on " + host)
            ids.fill("7")
            output.get_by_role("button", name="Delete", exact=True).click()
            expect(confirm_row).to_contain_text(f"Delete entry '7' on {host}?")
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "panel-confirm.png"))
            assert sandbox.requests == []
            output.get_by_role("button", name="Confirm", exact=True).click()
            success = output.locator(".dict-magics-result.dict-magics-success").first
            expect(success).to_contain_text("deleted entry '7'", timeout=UI_TIMEOUT_MS)
            assert [(r.method, r.path) for r in sandbox.requests] == [
                ("DELETE", "/api/v1/dictionary/7")
            ]
            assert "7" not in sandbox.entries

            expect(ids).to_have_value("")
            ids.fill("8")
            output.get_by_role("button", name="Delete", exact=True).click()
            expect(confirm_row).to_contain_text(f"Delete entry '8' on {host}?")
            output.get_by_role("button", name="Cancel", exact=True).click()
            expect(output.locator(".dict-magics-status")).to_have_text(
                "Cancelled: nothing was sent.", timeout=UI_TIMEOUT_MS
            )
            expect(confirm_row).to_be_hidden()
            assert len(sandbox.requests) == 1
            assert "8" in sandbox.entries
            timings["clicks_s"] = time.monotonic() - mark

            page.screenshot(path=str(ARTIFACTS / "panel.png"))
            assert output.locator('[data-mime-type="application/vnd.jupyter.stderr"]').count() == 0
            assert "Traceback" not in " ".join(output.all_inner_texts())
            assert sandbox.secret_key not in page.content()
            assert guard.blocked == [], f"requests left 127.0.0.1: {guard.blocked}"
    timings["total_s"] = time.monotonic() - started
    for name, seconds in timings.items():
        record_property(name, round(seconds, 2))
    print(f"timings: {timings}")
