"""Debian's Chromium through Playwright, as every browser test launches it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless Chromium, closed afterwards (the tests skip, saying why, where CHROMIUM is None)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright, launched(playwright) as browser:
        yield browser


@contextmanager
def launched(playwright: Playwright, executable: str | None = None, args: tuple[str, ...] = ()) -> Iterator[Browser]:
    """A headless Chromium of an open Playwright (one a thread), closed afterwards. ``executable`` runs it another
    way (inside another host: tests/support/netns.py), ``args`` are added to ARGS."""
    browser = playwright.chromium.launch(executable_path=executable or CHROMIUM, args=[*ARGS, *args])
    try:
        yield browser
    finally:
        browser.close()
