"""The documentation: a short README that CI runs word for word, every setting on the
configuration page, a changelog entry for this version, and the site built strictly and shown in
a real browser with nothing loaded from another host (screenshots in ``test-artifacts/``)."""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import require, require_program

from dict_magics.frontends.magics import DictMagics
from dict_magics.settings import VERSION

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
ARTIFACTS = ROOT / "test-artifacts"
README = (ROOT / "README.md").read_text(encoding="utf-8")
QUICK_START = (
    "python3 -m venv .venv && .venv/bin/pip install '.[demo]' && .venv/bin/dict-magics demo",
    "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/python -m pytest",
)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_readme_is_short_and_keeps_the_quick_start_verbatim() -> None:
    assert len(README.splitlines()) <= 200
    for command in QUICK_START:
        assert command in README
    assert QUICK_START[1] in (ROOT / ".ci" / "run").read_text(encoding="utf-8")  # CI runs it


@pytest.mark.parametrize("page", ["README.md", *sorted(p.name for p in DOCS.glob("*.md"))])
def test_every_relative_link_leads_to_a_file(page: str) -> None:
    path = ROOT / page if page == "README.md" else DOCS / page
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        target = target.split("#", 1)[0]
        if target and not re.match(r"[a-z]+:", target):
            assert (path.parent / target).exists(), f"{page}: {target}"


def test_every_setting_and_variable_is_on_the_configuration_page() -> None:
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    settings = [f"DictMagics.{name}" for name in DictMagics.class_trait_names(config=True)]
    source = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "dict_magics").rglob("*.py"))
    variables = sorted(set(re.findall(r"DICT_MAGICS_[A-Z][A-Z_]*[A-Z]", source)))
    assert "DICT_MAGICS_HOME" in variables and "DictMagics.timeout" in settings
    assert [name for name in settings + variables if f"`{name}" not in page] == []


def test_the_changelog_has_this_version_and_every_earlier_one() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", text, flags=re.MULTILINE)
    assert versions[0] == VERSION
    assert [v.split(".")[0] for v in versions] == ["4", "3", "2", "1"]


@contextmanager
def serving(folder: Path) -> Iterator[str]:
    """``folder`` over HTTP on 127.0.0.1 (a free port), until the block ends."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=folder))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.mark.browser
def test_the_site_builds_strictly_and_needs_nothing_from_another_host(tmp_path: Path) -> None:
    require_program("chromium")
    missing = [m for m in ("mkdocs", "material", "playwright") if not importlib.util.find_spec(m)]
    require(not missing, f"{', '.join(missing)} not importable: pip install -e '.[test]'")
    from browser.chromium import chromium_page
    from playwright.sync_api import expect

    site = tmp_path / "site"
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr[-4000:]
    assert "WARNING" not in build.stderr, build.stderr

    ARTIFACTS.mkdir(exist_ok=True)
    pages = {
        "home": ("", "dict-magics"),
        "getting-started": ("getting-started/", "Getting started"),
        "lint-and-check": ("lint-and-check/", "Lint and check"),
        "panel": ("panel/", "The panel"),
    }
    with serving(site) as url, chromium_page(1280, 900) as (page, guard):
        for name, (path, title) in pages.items():
            page.goto(url + path)
            expect(page.locator("article h1")).to_contain_text(title)
            page.wait_for_load_state("networkidle")
            page.screenshot(path=str(ARTIFACTS / f"docs-{name}.png"), full_page=name == "home")
        images = page.locator("article img")
        assert images.count() == 2
        for n in range(images.count()):  # the panel's screenshots are there and drawn
            assert images.nth(n).evaluate("img => img.complete && img.naturalWidth > 0")
        # The search runs in the page, on the index the build wrote.
        page.locator("input.md-search__input").click()
        page.keyboard.type("probe", delay=50)  # the search listens to keys, not to a fill
        result = page.locator(".md-search-result__item").first
        expect(result).to_contain_text("Probe your service", timeout=20_000)
        page.screenshot(path=str(ARTIFACTS / "docs-search.png"))
    assert guard.blocked == []
