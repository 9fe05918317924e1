"""Signing in as a person does it: the form, in real Chromium, on loopback, from another host (a network namespace
joined by a veth pair: tests/support/netns.py) and through docs/DEPLOYMENT.md's nginx block reached from that host by
its address and by a name. The container's sign-in is in tests/system/test_image.py.

Each visit types a wrong token first (the page's own message, still the sign-in page), then the right one (the live
page). A foreign site's form is refused, and so is a sandboxed page's ``Origin: null``."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import requests

from tests.support.browser import CHROMIUM, launched
from tests.support.netns import OtherHost, other_host, why_not
from tests.support.servers import free_port, served, start_server, stop, wait_healthy
from tests.system.test_reverse_proxy import NGINX, behind_nginx

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Playwright

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (make test installs it as root)"),
]
TOKEN = "5c0e8b1d7a4f92e63b7d0c1a8e5f4b29"
NAME = "gpu.fanwhy.test"  # the proxy's name, as the other host's resolver maps it


def sign_in(browser: Browser, url: str, screenshot: Path | None = None, token: str = TOKEN) -> list[str]:
    """Open ``url`` signed out, send a wrong token, then the right one, then sign out; the console's problems."""
    context = browser.new_context(ignore_https_errors=True, viewport={"width": 1000, "height": 700})
    page = context.new_page()
    found: list[str] = []
    page.on("console", lambda m: found.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: found.append(f"page error: {e}"))
    try:
        page.goto(url)
        page.wait_for_selector("form input[name=token]", timeout=20_000)
        assert page.url.endswith("/login"), page.url
        assert_styled(page)
        if screenshot is not None:
            page.screenshot(path=str(screenshot))
        page.fill("input[name=token]", "9" * 8 + token[8:])
        page.click("button[type=submit]")
        alert = page.wait_for_selector("[role=alert]", timeout=20_000)
        assert alert is not None and alert.text_content() == "That token is not right."
        assert page.url.endswith("/login") and page.locator("input[name=token]").count() == 1
        assert_styled(page)
        page.fill("input[name=token]", token)
        page.click("button[type=submit]")
        page.wait_for_selector("#connection.pill-ok", timeout=30_000)  # signed in: the page and its Socket.IO
        page.wait_for_selector("article.gpu", timeout=30_000)
        assert not page.url.endswith("/login")
        page.click("#sign-out button")  # and out again, by the header's button, wherever the page is served from
        page.wait_for_url("**/login", timeout=20_000)
        assert not any(c["name"] == "fanwhy_token" for c in context.cookies())
    finally:
        context.close()
    # the wrong token's 401 is the form's answer, shown as its message
    return [line for line in found if "401" not in line]


def assert_styled(page: Page) -> None:
    """The page's stylesheet applies to the sign-in page (it is served before the token). The form's answer is a new
    page, whose alert can be found before its stylesheet has loaded: the style is waited for, with a deadline."""
    from playwright.sync_api import expect

    expect(page.locator(".signin-box")).to_have_css("border-top-left-radius", "8px", timeout=20_000)
    expect(page.locator("button[type=submit]")).to_have_css("color", "rgb(255, 255, 255)", timeout=20_000)


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as running:
        yield running


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    with launched(playwright) as running:
        yield running


def test_the_form_signs_in_on_loopback(browser: Browser, tmp_path: Path) -> None:
    with served(FANWHY_TOKEN=TOKEN) as url:
        assert sign_in(browser, url + "/", screenshot=tmp_path / "sign-in.png") == []


def test_sign_out_clears_the_session_and_the_page_asks_again(browser: Browser) -> None:
    """Signed in, a person signs out: the sign-in page opens, the page and the API no longer answer without the
    token, and signing in again works. Without a token (loopback, FANWHY_TOKEN unset) there is nothing to leave."""
    with served(FANWHY_TOKEN=TOKEN) as url:
        context = browser.new_context()
        page = context.new_page()
        try:
            page.goto(url + "/")
            page.fill("input[name=token]", TOKEN)
            page.click("button[type=submit]")
            page.wait_for_selector("#connection.pill-ok", timeout=30_000)
            assert any(c["name"] == "fanwhy_token" for c in context.cookies())
            page.click("#sign-out button")
            page.wait_for_url(url + "/login", timeout=20_000)
            assert not any(c["name"] == "fanwhy_token" for c in context.cookies())
            page.goto(url + "/")
            page.wait_for_url(url + "/login", timeout=20_000)
            status = page.evaluate("async () => (await fetch('api/gpu/summary')).status")
            assert status == 401
            page.fill("input[name=token]", TOKEN)
            page.click("button[type=submit]")
            page.wait_for_selector("#sign-out button", timeout=30_000)
        finally:
            context.close()
    with served() as url:
        context = browser.new_context()
        page = context.new_page()
        try:
            page.goto(url + "/")
            page.wait_for_selector("#connection.pill-ok", timeout=30_000)
            assert page.locator("#sign-out").count() == 0
            assert requests.post(f"{url}/logout", timeout=5).status_code == 404  # no sign-in, no sign-out
        finally:
            context.close()


@contextmanager
def foreign_site(form_to: str) -> Iterator[str]:
    """Another origin (another port) whose page posts the right token to ``form_to`` by itself."""
    page = (f'<!doctype html><form id=f method=post action="{form_to}"><input name=token value="{TOKEN}"></form>'
            '<script>document.getElementById("f").submit()</script>').encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # the standard library's name for it
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_a_foreign_sites_form_and_a_null_origin_are_refused_and_on_record(browser: Browser) -> None:
    with served(FANWHY_TOKEN=TOKEN) as url, foreign_site(url + "/login") as site:
        context = browser.new_context()
        page = context.new_page()
        try:
            page.goto(site)
            page.wait_for_url(url + "/login", timeout=20_000)
            refused = page.text_content("body") or ""
            assert "foreign Origin" in refused and site.rstrip("/") in refused, refused
            assert page.context.cookies() == []  # not signed in
            page.goto("about:blank")
            page.set_content(f'<form id=f method=post action="{url}/login"><input name=token value="{TOKEN}">'
                             '</form>')  # about:blank's form: Origin null
            with page.expect_navigation(timeout=20_000):
                page.eval_on_selector("#f", "f => f.submit()")
            assert "browser hid where this request comes from" in (page.text_content("body") or "")
        finally:
            context.close()
        health = requests.get(url + "/api/health", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30).json()
        assert health["refusals"]["origin"] == 2, health["refusals"]


@pytest.fixture
def another_host() -> Iterator[OtherHost]:
    reason = why_not()
    if reason is not None:
        pytest.skip(reason)
    with other_host(tag=7) as host:
        yield host


def test_the_form_signs_in_from_another_host(another_host: OtherHost, playwright: Playwright, tmp_path: Path) -> None:
    port = free_port()
    proc = start_server(port, FANWHY_HOST=another_host.host_address, FANWHY_TOKEN=TOKEN)
    try:
        wait_healthy(f"http://{another_host.host_address}:{port}", headers={"Authorization": f"Bearer {TOKEN}"})
        with launched(playwright, another_host.wrapper(tmp_path, CHROMIUM or "chromium")) as browser:
            assert sign_in(browser, f"http://{another_host.host_address}:{port}/") == []
    finally:
        log = stop(proc)
    assert "refused (token, 401)" in log and f"from {another_host.address}" in log  # the wrong token, on record
    assert TOKEN not in log and TOKEN[8:] not in log


@pytest.mark.skipif(NGINX is None, reason="nginx (Debian package nginx-light) is needed")
def test_the_readmes_nginx_block_signs_in_from_another_host_by_address_and_by_name(
        another_host: OtherHost, playwright: Playwright, tmp_path: Path) -> None:
    """FanWhy on loopback behind nginx, as docs/DEPLOYMENT.md sets it: FANWHY_TRUSTED_PROXIES=127.0.0.1 and the proxy's
    names in FANWHY_ALLOWED_HOSTS; the browser on the other host reaches nginx by its address and by its name."""
    hosts = f"{NAME},{another_host.host_address}"
    with behind_nginx(tmp_path, listen=another_host.host_address, names=(NAME,), FANWHY_TOKEN=TOKEN,
                      FANWHY_ALLOWED_HOSTS=hosts) as (_, port, _):
        resolver = f"--host-resolver-rules=MAP {NAME} {another_host.host_address}"
        with launched(playwright, another_host.wrapper(tmp_path, CHROMIUM or "chromium"), (resolver,)) as browser:
            assert sign_in(browser, f"https://{another_host.host_address}:{port}/fanwhy/") == []
            assert sign_in(browser, f"https://{NAME}:{port}/fanwhy/") == []
