"""The curation panel in a real JupyterLab 4 and a real Notebook 7, clicked in Debian's Chromium,
deleting from and restoring to a real sandbox.

This proves what the Python-level tests cannot: the widgets render in both front ends, typed
searches, ticks and clicks reach the kernel, and what the panel's background thread sets shows
up. The sandbox runs in this process, so every step is checked against what it really holds.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import pytest
from conftest import require, require_program

from dict_magics.models import Entry
from dict_magics.sandbox import SandboxServer
from dict_magics.settings import PURGE_WORD

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
UI_TIMEOUT_MS = 60_000
EXPECT_TIMEOUT_MS = 20_000
ENTRIES = 20


def _require_parts(app: str) -> None:
    require_program("chromium")
    needed = ("jupyterlab", "playwright", "nbformat", "ipykernel", "ipywidgets")
    if app == "notebook":
        needed += ("notebook",)
    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    require(not missing, f"{', '.join(missing)} not importable")


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_panel_deletes_undoes_purges_and_restores(
    app: str, tmp_path: Path, record_property: pytest.RecordProperty
) -> None:
    _require_parts(app)
    from browser.chromium import chromium_page, open_and_run_all
    from browser.jupyter import jupyter_lab
    from browser.notebook import write_panel_notebook
    from playwright.sync_api import expect

    expect.set_options(timeout=EXPECT_TIMEOUT_MS)  # a kernel round trip on a busy machine

    timings: dict[str, float] = {}
    started = time.monotonic()
    with SandboxServer(ENTRIES) as sandbox, jupyter_lab(tmp_path, app) as server:
        timings["server_up_s"] = time.monotonic() - started
        kernel = server.api("/api/kernelspecs")["kernelspecs"]["python3"]
        assert kernel["spec"]["argv"][0] == sys.executable  # the kernel runs this venv
        env = {**sandbox.env(), "DICT_MAGICS_HOME": str(tmp_path / "dict-magics-home")}
        write_panel_notebook(server.root, env)
        host = f"127.0.0.1:{sandbox.port}"
        original = set(sandbox.terms)
        matching = [e for e in sandbox.entries.values() if e.matches("meeting")]
        meetings = matching[:2]
        assert len(matching) > 2

        with chromium_page() as (page, guard):
            mark = time.monotonic()
            open_and_run_all(page, server.notebook_url("panel.ipynb"))
            output = page.locator(".jp-OutputArea-output")
            count = output.locator(".dict-magics-count")
            expect(count).to_contain_text(f"{ENTRIES} entries at {host}", timeout=UI_TIMEOUT_MS)
            expect(output.locator(".dict-magics-header")).to_contain_text(host)
            timings["panel_listed_s"] = time.monotonic() - mark

            def button(name: str):
                return output.get_by_role("button", name=name, exact=True)

            latest = output.locator(".dict-magics-latest")

            def result(text: str) -> None:
                expect(latest).to_contain_text(text, timeout=UI_TIMEOUT_MS)
                expect(output.locator(".dict-magics-status-busy")).to_have_count(0)

            ARTIFACTS.mkdir(exist_ok=True)
            mark = time.monotonic()
            # Search, tick two entries, Delete selected: the confirmation names both terms.
            output.get_by_placeholder("search either term").fill("meeting")
            expect(count).to_contain_text("matches of")
            for entry in meetings:
                output.get_by_role("checkbox", name=entry.id, exact=True).check()
            expect(count).to_contain_text("2 selected")
            button("Delete selected (2)").click()
            confirmation = output.locator(".dict-magics-confirm")
            for entry in meetings:
                expect(confirmation).to_contain_text(entry.describe())
            page.screenshot(path=str(ARTIFACTS / f"panel-{app}-confirm.png"))
            assert [r.method for r in sandbox.requests] == ["GET"]  # the listing only

            button("Confirm").click()
            result("deleted 2 of 2 entries")
            for entry in meetings:
                expect(latest).to_contain_text(entry.from_text)
                assert entry.terms not in set(sandbox.terms)
            page.screenshot(path=str(ARTIFACTS / f"panel-{app}-deleted.png"))

            button("Undo").click()
            result("restored 2 entries")
            assert set(sandbox.terms) == original

            # Delete all needs the word; then Restore… puts everything back.
            button("Delete all\u2026").click()
            expect(confirmation).to_contain_text(f"all {ENTRIES} entries")
            expect(button("Confirm")).to_be_disabled()
            output.get_by_placeholder(f"type {PURGE_WORD}").fill(PURGE_WORD)
            expect(button("Confirm")).to_be_enabled()
            button("Confirm").click()
            result("deleted every entry")
            assert sandbox.entries == {}
            expect(count).to_contain_text("no entries")

            button("Restore\u2026").click()
            expect(confirmation).to_contain_text(f"purge \u00b7 {ENTRIES} entries")
            button("Confirm").click()
            result(f"restored {ENTRIES} entries")
            assert set(sandbox.terms) == original
            # Listed again: the search still applies to the entries put back.
            expect(count).to_contain_text(f"{len(matching)} matches of {ENTRIES} entries")

            timings["clicks_s"] = time.monotonic() - mark

            page.screenshot(path=str(ARTIFACTS / f"panel-{app}.png"), full_page=True)
            assert output.locator('[data-mime-type="application/vnd.jupyter.stderr"]').count() == 0
            assert "Traceback" not in " ".join(output.all_inner_texts())
            assert sandbox.secret_key not in page.content()
            assert guard.blocked == [], f"requests left 127.0.0.1: {guard.blocked}"
    timings["total_s"] = time.monotonic() - started
    for name, seconds in timings.items():
        record_property(name, round(seconds, 2))
    print(f"timings ({app}): {timings}")


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_panel_table_sorts_and_an_edit_of_a_japanese_term_is_undone(
    app: str, tmp_path: Path
) -> None:
    _require_parts(app)
    from browser.chromium import chromium_page, open_and_run_all
    from browser.jupyter import jupyter_lab
    from browser.notebook import write_panel_notebook
    from playwright.sync_api import expect

    expect.set_options(timeout=EXPECT_TIMEOUT_MS)  # a kernel round trip on a busy machine

    with SandboxServer(ENTRIES) as sandbox, jupyter_lab(tmp_path, app) as server:
        env = {**sandbox.env(), "DICT_MAGICS_HOME": str(tmp_path / "dict-magics-home")}
        write_panel_notebook(server.root, env)
        host = f"127.0.0.1:{sandbox.port}"
        original = set(sandbox.terms)
        with chromium_page() as (page, guard):
            open_and_run_all(page, server.notebook_url("panel.ipynb"))
            output = page.locator(".jp-OutputArea-output")
            count = output.locator(".dict-magics-count")
            expect(count).to_contain_text(f"{ENTRIES} entries at {host}", timeout=UI_TIMEOUT_MS)
            confirmation = output.locator(".dict-magics-confirm")
            latest = output.locator(".dict-magics-latest")

            def button(name: str):
                return output.get_by_role("button", name=name, exact=True)

            def result(text: str) -> None:
                expect(latest).to_contain_text(text, timeout=UI_TIMEOUT_MS)
                expect(output.locator(".dict-magics-status-busy")).to_have_count(0)

            ARTIFACTS.mkdir(exist_ok=True)
            # The table: a row per entry; a click on a column's header sorts by it, again the
            # other way. The Japanese, Chinese and Korean terms are in the screenshot (CI has a
            # CJK font: fonts-noto-cjk).
            table = output.locator(".dict-magics-entries")
            expect(table.locator(".dict-magics-row")).to_have_count(ENTRIES)
            by_source = sorted(
                sandbox.entries.values(), key=lambda e: (e.from_text.casefold(), e.to_text)
            )
            button("source").click()
            expect(table.locator(".dict-magics-source").first).to_have_text(by_source[0].from_text)
            button("source \u25b2").click()
            expect(table.locator(".dict-magics-source").first).to_have_text(by_source[-1].from_text)
            expect(table.locator('.dict-magics-source[lang="ja"]')).to_have_count(
                sum(e.from_lang == "ja" for e in sandbox.entries.values())
            )
            page.screenshot(path=str(ARTIFACTS / f"panel-{app}-table.png"))

            # Edit a Japanese term in place: old -> new confirmed, PUT; Undo puts it back.
            output.get_by_placeholder("search either term").fill("会議")
            expect(table.locator(".dict-magics-row")).to_have_count(1)
            (kaigi,) = [e for e in sandbox.entries.values() if e.from_text == "会議"]
            output.get_by_role("checkbox", name=kaigi.id, exact=True).check()
            button("Edit selected\u2026").click()
            edit = output.locator(".dict-magics-edit")
            source = edit.get_by_role("textbox", name="Source")
            expect(source).to_have_value("会議")
            source.fill("定例会議")
            button("Review change\u2026").click()
            expect(confirmation.locator(".dict-magics-old")).to_have_text("会議")
            expect(confirmation.locator(".dict-magics-new")).to_have_text("定例会議")
            page.screenshot(path=str(ARTIFACTS / f"panel-{app}-edit-confirm.png"))
            assert not [r for r in sandbox.requests if r.method == "PUT"]  # arming sent nothing
            button("Confirm").click()
            result(f"updated entry {kaigi.id}")
            assert sandbox.entry(kaigi.id).from_text == "定例会議"
            output.get_by_placeholder("search either term").fill("定例")
            expect(table.locator(".dict-magics-source")).to_have_text(["定例会議"])
            page.screenshot(path=str(ARTIFACTS / f"panel-{app}-edited.png"))
            button("Undo").click()
            result("put back 1 entry")
            assert sandbox.entry(kaigi.id) == kaigi  # the same id, its old terms
            expect(table.locator(".dict-magics-row")).to_have_count(0)
            output.get_by_placeholder("search either term").fill("会議")
            expect(table.locator(".dict-magics-source")).to_have_text(["会議"])
            assert set(sandbox.terms) == original

            page.screenshot(path=str(ARTIFACTS / f"panel-{app}-undone.png"), full_page=True)
            assert output.locator('[data-mime-type="application/vnd.jupyter.stderr"]').count() == 0
            assert sandbox.secret_key not in page.content()
            assert guard.blocked == [], f"requests left 127.0.0.1: {guard.blocked}"


@pytest.mark.parametrize("app", ["lab", "notebook"])
def test_panel_adds_finds_problems_syncs_a_file_and_checks_a_text(app: str, tmp_path: Path) -> None:
    _require_parts(app)
    from browser.chromium import chromium_page, open_and_run_all
    from browser.jupyter import jupyter_lab
    from browser.notebook import write_panel_notebook
    from playwright.sync_api import expect

    expect.set_options(timeout=EXPECT_TIMEOUT_MS)  # a kernel round trip on a busy machine

    with SandboxServer(ENTRIES) as sandbox, jupyter_lab(tmp_path, app) as server:
        (kaigi,) = [e for e in sandbox.entries.values() if e.from_text == "会議"]
        sandbox.add_entries(
            [
                Entry("901", *kaigi.terms),  # a duplicate of 会議 -> meeting
                Entry("902", "ja", "見積書", "en", "quotation"),
                Entry("903", "ja", "納品書", "en", "delivery note"),
            ]
        )
        env = {**sandbox.env(), "DICT_MAGICS_HOME": str(tmp_path / "dict-magics-home")}
        write_panel_notebook(server.root, env)
        host = f"127.0.0.1:{sandbox.port}"
        with chromium_page() as (page, guard):
            open_and_run_all(page, server.notebook_url("panel.ipynb"))
            output = page.locator(".jp-OutputArea-output")
            count = output.locator(".dict-magics-count")
            expect(count).to_contain_text(f"{ENTRIES + 3} entries at {host}", timeout=UI_TIMEOUT_MS)
            confirmation = output.locator(".dict-magics-confirm")
            latest = output.locator(".dict-magics-latest")
            table = output.locator(".dict-magics-entries")

            def button(name: str):
                return output.get_by_role("button", name=name, exact=True)

            def result(text: str) -> None:
                expect(latest).to_contain_text(text, timeout=UI_TIMEOUT_MS)
                expect(output.locator(".dict-magics-status-busy")).to_have_count(0)

            def open_tool(title: str) -> None:
                output.get_by_text(title, exact=True).click()

            ARTIFACTS.mkdir(exist_ok=True)
            # Add: two language pickers, two terms, a confirmation, then the new entry listed.
            open_tool("Add an entry")
            add = output.locator(".dict-magics-add")
            add.get_by_role("combobox", name="To").select_option("zh-CN")
            add.get_by_role("textbox", name="Source").fill("見積依頼")
            add.get_by_role("textbox", name="Target").fill("询价")
            button("Add\u2026").click()
            expect(confirmation).to_contain_text("見積依頼 \u2192 询价")
            button("Confirm").click()
            result("added")
            assert ("ja", "見積依頼", "zh-CN", "询价") in set(sandbox.terms)
            output.get_by_placeholder("search either term").fill("询价")
            expect(table.locator(".dict-magics-target")).to_have_text(["询价"])
            page.screenshot(path=str(ARTIFACTS / f"panel-{app}-added.png"))
            output.get_by_placeholder("search either term").fill("")

            # Problems: the duplicate is found, "Select duplicate (1)" ticks the copy.
            open_tool("Problems")
            button("Find problems").click()
            expect(button("Select duplicate (1)")).to_be_visible(timeout=UI_TIMEOUT_MS)
            button("Select duplicate (1)").click()
            expect(count).to_contain_text("1 selected")
            button("Delete selected (1)").click()
            expect(confirmation).to_contain_text("id 901")
            page.screenshot(path=str(ARTIFACTS / f"panel-{app}-problems.png"))
            button("Confirm").click()
            result("deleted 901")
            assert sandbox.entry("901") is None and sandbox.entry(kaigi.id) == kaigi
            expect(button("Select duplicate (1)")).to_have_count(0)
            button("Undo").click()  # the copy comes back (the snapshot counts copies)
            result("restored 1 entry")
            assert list(sandbox.terms).count(kaigi.terms) == 2
            expect(button("Select duplicate (1)")).to_be_visible()

            # Sync: upload a CSV, see the plan, apply it, Undo.
            before = set(sandbox.terms)
            open_tool("Sync a glossary file")
            (bill,) = [e for e in sandbox.entries.values() if e.from_text == "請求書"]
            csv = "fromLang,fromText,toLang,toText\nja,請求書,en,bill\nja,稟議,en,approval\n"
            with page.expect_file_chooser() as chooser:  # the widget's own file dialog
                output.locator(".dict-magics-sync .widget-upload").click()
            chooser.value.set_files(
                files=[{"name": "glossary.csv", "mimeType": "text/csv", "buffer": csv.encode()}]
            )
            expect(output.locator(".dict-magics-sync .widget-upload")).to_contain_text("(1)")
            button("Plan\u2026").click()
            expect(confirmation).to_contain_text("1 add, 1 update", timeout=UI_TIMEOUT_MS)
            page.screenshot(path=str(ARTIFACTS / f"panel-{app}-sync-plan.png"))
            assert sandbox.entry(bill.id) == bill  # the plan sent nothing
            button("Confirm").click()
            result("1/1 added, 1/1 updated")
            assert sandbox.entry(bill.id).to_text == "bill"
            button("Undo").click()
            result("put back 1 entry")
            assert set(sandbox.terms) == before

            # Check: one element (the limit's unit) with the entries that apply, past the third
            # not applied; the duplicate 会議 that came back is covered by the first.
            open_tool("Check a text")
            output.locator(".dict-magics-check textarea").fill(
                "会議の請求書と見積書と納品書。金曜日。"
            )
            button("Check").click()
            report = output.locator(".dict-magics-check .dict-magics-check")
            expect(report.locator("mark")).to_have_count(5, timeout=UI_TIMEOUT_MS)
            expect(report).to_contain_text("3 applied, 3 never applied (limit 3 per element)")
            expect(report).to_contain_text("not applied (covered by entry")
            expect(report).to_contain_text("not applied (limit 3 per element)")
            page.screenshot(path=str(ARTIFACTS / f"panel-{app}-check.png"), full_page=True)

            assert output.locator('[data-mime-type="application/vnd.jupyter.stderr"]').count() == 0
            assert sandbox.secret_key not in page.content()
            assert guard.blocked == [], f"requests left 127.0.0.1: {guard.blocked}"
