"""Debian's Chromium through Playwright, allowed to reach 127.0.0.1 and nothing else."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
]
LOCAL_SCHEMES = frozenset({"data", "blob", "about"})

# The toolbar's indicator says idle while the kernel is still "No Kernel": ask the session.
KERNEL_READY = """() => {
  const widget = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const context = widget && widget.sessionContext;
  const kernel = context && context.session && context.session.kernel;
  return !!(context && context.isReady && kernel && kernel.status === 'idle'
            && kernel.connectionStatus === 'connected');
}"""
RUN_ALL = "() => window.jupyterapp.commands.execute('notebook:run-all-cells')"


@dataclass
class Guard:
    """Every request that tried to leave 127.0.0.1 (each was aborted)."""

    blocked: list[str] = field(default_factory=list)

    def route(self, route) -> None:
        parts = urlsplit(route.request.url)
        if parts.scheme in LOCAL_SCHEMES or parts.hostname == "127.0.0.1":
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()


@contextmanager
def chromium_page(width: int = 1280, height: int = 900) -> Iterator[tuple[object, Guard]]:
    """A fresh page in headless Chromium, with the loopback-only guard installed."""
    from playwright.sync_api import sync_playwright

    guard = Guard()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            context = browser.new_context(viewport={"width": width, "height": height})
            context.route("**/*", guard.route)
            yield context.new_page(), guard
        finally:
            browser.close()


def open_and_run_all(page, url: str, timeout_ms: float = 90_000) -> None:
    """Open a notebook (JupyterLab or Notebook 7), wait until its kernel is ready, run all cells.

    Run All goes through the application's command, the same in both front ends (the menus
    differ, and the toolbar's fast-forward button restarts the kernel first).
    """
    page.goto(url)
    page.wait_for_function(KERNEL_READY, timeout=timeout_ms, polling=200)
    page.evaluate(RUN_ALL)
