"""FanWhy behind a real nginx (Debian's package): TLS ended at nginx, served under /fanwhy/, the WebSocket upgraded
through it, and every client counted as itself (FANWHY_TRUSTED_PROXIES), never as the proxy's one address.

Every client here is on loopback, but on its own address (127.0.0.2, 127.0.0.3, ...: the whole of 127/8 is this
machine): nginx sees each one apart and says so in X-Forwarded-For; FanWhy trusts only nginx's own 127.0.0.1."""

from __future__ import annotations

import concurrent.futures
import http.client
import json
import re
import shutil
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.servers import free_port, start_server, stop, wait_healthy

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(NGINX is None or shutil.which("openssl") is None,
                                reason="nginx (Debian package nginx-light) and openssl are needed")



def documented_location(app: int) -> str:
    """The nginx block docs/DEPLOYMENT.md gives (its ``location``; the ``map`` line goes in ``http``), pointed at
    ``app``: the test runs what a reader copies."""
    page = (Path(__file__).resolve().parent.parent.parent / "docs" / "DEPLOYMENT.md").read_text()
    (block,) = re.findall(r"```nginx\n(.*?)```", page, re.S)
    location = block[block.index("location /fanwhy/"):]
    assert "proxy_pass http://127.0.0.1:8090/;" in location
    return location.replace("127.0.0.1:8090", f"127.0.0.1:{app}")


def nginx_conf(tmp: Path, port: int, app: int, listen: str = "127.0.0.1") -> str:
    user = "user root;\n" if subprocess.run(["id", "-u"], capture_output=True, text=True).stdout.strip() == "0" else ""
    return f"""{user}worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 512; }}
http {{
    access_log {tmp}/access.log;
    client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy; fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi; scgi_temp_path {tmp}/scgi;
    map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
    server {{
        listen {listen}:{port} ssl;
        ssl_certificate {tmp}/cert.pem;
        ssl_certificate_key {tmp}/key.pem;
{documented_location(app)}
    }}
}}
"""


@contextmanager
def behind_nginx(tmp: Path, listen: str = "127.0.0.1", names: tuple[str, ...] = (),
                 **env: str) -> Iterator[tuple[str, int, int]]:
    """(https URL of FanWhy through nginx, nginx's port, FanWhy's own port): nginx listens on ``listen``, with a
    certificate for it and ``names``; FanWhy on 127.0.0.1 trusts it, with docs/DEPLOYMENT.md's settings (``env``
    added)."""
    alt = ",".join([f"IP:{listen}", *(f"DNS:{name}" for name in names)])
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={listen}",
                    "-addext", f"subjectAltName={alt}", "-keyout", str(tmp / "key.pem"), "-out",
                    str(tmp / "cert.pem")], check=True, capture_output=True, timeout=60)
    app, port = free_port(), free_port()
    server = start_server(app, FANWHY_TRUSTED_PROXIES="127.0.0.1", FANWHY_SIM_GPUS="1", **env)
    (tmp / "nginx.conf").write_text(nginx_conf(tmp, port, app, listen))
    assert NGINX is not None
    proxy = subprocess.Popen([NGINX, "-p", str(tmp), "-c", str(tmp / "nginx.conf"), "-g", "daemon off;"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        token = env.get("FANWHY_TOKEN")
        wait_healthy(f"http://127.0.0.1:{app}", headers={"Authorization": f"Bearer {token}"} if token else None)
        deadline = time.monotonic() + 20
        # through: FanWhy's answer (a 401 where it has a token), not nginx's 502 nor no answer
        while time.monotonic() < deadline and get(port, "/fanwhy/api/health", to=listen)[0] not in (200, 401):
            time.sleep(0.2)
        yield f"https://{listen}:{port}/fanwhy/", port, app
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)
        stop(server)


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int, int]]:
    """Behind nginx with a low rate limit (5 requests a second per client), to see who is counted as whom."""
    with behind_nginx(tmp_path_factory.mktemp("nginx"), FANWHY_RATE_LIMIT="5") as where:
        yield where


def get(port: int, path: str, source: str = "127.0.0.1", tls: bool = True,
        headers: dict[str, str] | None = None, to: str = "127.0.0.1") -> tuple[int, dict]:
    """GET ``path`` at ``to`` from the address ``source`` (a loopback address of its own)."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    source = source if to.startswith("127.") else ""
    conn: http.client.HTTPConnection = http.client.HTTPSConnection(
        to, port, source_address=(source, 0), context=context, timeout=10) if tls else \
        http.client.HTTPConnection(to, port, source_address=(source, 0), timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        body = response.read()
        try:
            return response.status, json.loads(body or b"{}")
        except ValueError:
            return response.status, {"text": body.decode(errors="replace")}
    except OSError:
        return 0, {}
    finally:
        conn.close()


def test_thirty_clients_through_the_proxy_are_counted_one_by_one(proxied: tuple[str, int, int]) -> None:
    """5 requests a second per client (10 in a burst): 30 clients asking 4 times each pass; were they counted as
    the proxy's one address, 110 of the 120 would be refused."""
    _, port, _ = proxied
    time.sleep(2.5)  # the burst of each bucket back
    answers = [get(port, "/fanwhy/api/gpu/summary", source=f"127.0.0.{2 + i}")[0] for i in range(30) for _ in range(4)]
    assert answers.count(200) == 120, answers


def test_a_spoofed_forwarded_for_buys_no_one_a_new_address(proxied: tuple[str, int, int]) -> None:
    """Through nginx, a client's own X-Forwarded-For is left of what nginx appends: FanWhy takes nginx's word. Sent
    straight to FanWhy from an address it does not trust, the header is ignored."""
    _, port, app = proxied
    time.sleep(2.5)
    # 30 at once, so they arrive within the limit's second however busy the machine (one after another, a TLS
    # handshake each, they could be slower than 5 a second and all pass whatever the limit counts)
    spoofed = at_once(30, lambda i: get(port, "/fanwhy/api/gpu/summary", source="127.0.0.40",
                                        headers={"X-Forwarded-For": f"198.51.100.{i}"})[0])
    assert spoofed.count(429) >= 5, spoofed  # one client however many it claims (believed, none would be)
    time.sleep(2.5)
    direct = at_once(30, lambda i: get(app, "/api/gpu/summary", source="127.0.0.41", tls=False,
                                       headers={"X-Forwarded-For": f"198.51.100.{i}"})[0])
    assert direct.count(429) >= 5, direct


def at_once(count: int, call: Callable[[int], int]) -> list[int]:
    """``call(i)`` for i < count, each on its own thread, released together."""
    start = threading.Barrier(count)

    def one(i: int) -> int:
        start.wait(timeout=60)
        return call(i)

    with concurrent.futures.ThreadPoolExecutor(count) as pool:
        return list(pool.map(one, range(count)))


def test_the_prefix_reaches_every_part_and_the_host_checks_apply_to_the_forwarded_host(
        proxied: tuple[str, int, int]) -> None:
    _, port, _ = proxied
    time.sleep(2.5)
    status, page = get(port, "/fanwhy/", source="127.0.0.50")
    assert status == 200 and "/fanwhy/static/app.js" in page["text"]  # the page's own files under the prefix
    for path in ("/fanwhy/static/app.js", "/fanwhy/api/health", "/fanwhy/metrics", "/fanwhy/api/docs",
                 "/fanwhy/api/openapi.json"):
        assert get(port, path, source="127.0.0.51")[0] == 200, path
    time.sleep(2.5)
    status, body = get(port, "/fanwhy/api/health", source="127.0.0.52", headers={"Host": "evil.example"})
    assert status == 400 and "evil.example" in body.get("detail", ""), body  # nginx forwards that Host: refused


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_chromium_gets_live_updates_through_the_proxy_over_a_websocket(tmp_path: Path) -> None:
    """The browser runs on nginx's own address (127.0.0.1), so it is counted as the proxy: the default limits."""
    with behind_nginx(tmp_path) as (url, _, _):
        found, sockets, failed = chromium_visit(url)
    assert found == [], (found, failed)  # which request failed, and how, to tell a console error's cause
    assert any(s.startswith("wss://127.0.0.1:") and "/fanwhy/socket.io/" in s for s in sockets), sockets


def chromium_visit(url: str) -> tuple[list[str], list[str], list[str]]:
    """Console problems, WebSocket URLs and failed requests (each with Chromium's reason) of a visit to the page and
    the API docs at ``url``. A failed request alone is not a problem (leaving a page cancels what it had in flight);
    it names the resource behind a console error, which does not (once: ERR_TOO_MANY_RETRIES, no URL)."""
    from playwright.sync_api import sync_playwright

    found: list[str] = []
    sockets: list[str] = []
    failed: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            context = browser.new_context(ignore_https_errors=True, viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.on("console", lambda m: found.append(f"{m.type}: {m.text}") if m.type in ("error", "warning")
                    else None)
            page.on("pageerror", lambda e: found.append(f"page error: {e}"))
            page.on("websocket", lambda ws: sockets.append(ws.url))
            page.on("requestfailed", lambda r: failed.append(f"{r.method} {r.url}: {r.failure}"))
            page.goto(url)
            page.wait_for_selector("#connection.pill-ok", timeout=15_000)
            first = page.text_content("#timing")
            page.wait_for_function("t => document.querySelector('#timing').textContent !== t", arg=first,
                                   timeout=15_000)
            assert page.locator("article.gpu").count() == 1
            page.goto(url + "api/docs")
            page.wait_for_selector("#operations > *", timeout=10_000)  # the document was read
        finally:
            browser.close()
    return found, sockets, failed
