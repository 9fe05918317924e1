"""The page's small things, in real Chromium at 1400 and 390 px wide, light and dark: names wrap between words,
numbers keep their units, the filter box follows the theme, stacked charts have legends, Recordings has an empty
state, the icon is served, "Nothing is busy" claims no confidence and the causes do not repeat the headline, and
when the server stops everything shown is greyed and said to be stale."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
import requests

from tests.support.browser import chromium
from tests.support.servers import free_port, served, start_server, stop, wait_healthy

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

from tests.support.browser import CHROMIUM

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served(FANWHY_SIM_GPUS="4", FANWHY_TOP_CPU="8",
                FANWHY_DB=str(tmp_path_factory.mktemp("h") / "history.db")) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def opened(browser: Browser, url: str, width: int, scheme: str) -> tuple[Page, list[str]]:
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)  # type: ignore[arg-type]  # playwright's Literal
    page = context.new_page()
    found: list[str] = []
    page.on("console", lambda m: found.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: found.append(f"page error: {e}"))
    page.goto(url)
    page.wait_for_selector("#connection.pill-ok", timeout=15_000)
    page.wait_for_selector("#processes tbody tr:nth-child(4)", timeout=15_000)
    return page, found


# every word of every process name on one line: a word cut in two has two boxes
SPLIT_WORDS = """() => {
  const cut = [];
  document.querySelectorAll('#processes tbody td:nth-child(3)').forEach((td) => {
    const node = (td.querySelector('span.name') || td).firstChild; if (!node || !td.offsetParent) return;
    const text = node.textContent; let at = 0;
    for (const word of text.split(/[\\s\\u00a0]+/)) {
      const start = text.indexOf(word, at); at = start + word.length;
      if (!word) continue;
      const range = document.createRange(); range.setStart(node, start); range.setEnd(node, start + word.length);
      const lines = new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top)));
      if (lines.size > 1) cut.push(word);
    }
  });
  return cut;
}"""


@pytest.mark.parametrize("width", [1400, 390])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_small_things(server: str, browser: Browser, width: int, scheme: str) -> None:
    page, found = opened(browser, server, width, scheme)
    try:
        assert page.evaluate(SPLIT_WORDS) == []
        shown = page.evaluate("() => Array.from(document.querySelectorAll('main td, main dd, #headline, #causes li'))"
                              ".filter((e) => e.offsetParent).map((e) => e.textContent).join('\\n')")
        import re

        assert not re.search(r"\d (%|°C|W\b|GiB|MiB|RPM)", shown), re.findall(r".{12}\d (?:%|°C|W|GiB|RPM).{4}", shown)
        colors = page.evaluate("""() => {
            const input = document.querySelector('.filter input'), body = getComputedStyle(document.body);
            return [getComputedStyle(input).backgroundColor, getComputedStyle(input).color, body.color];
        }""")
        background, text, page_text = colors
        dark = scheme == "dark"
        assert (background == "rgb(255, 255, 255)") is not dark, colors  # white only in light
        assert text == page_text, colors  # the box's text is the page's own colour
        empty = page.wait_for_selector("#recordings tbody td.empty", state="attached", timeout=15_000)
        assert empty is not None and (empty.text_content() or "").startswith("No recordings yet")
        icon = requests.get(server + "/favicon.ico", timeout=5)  # what a browser asks for before any script runs
        assert icon.status_code == 200 and icon.headers["Content-Type"] == "image/x-icon"
        page.wait_for_selector("#chart-proc-sm .u-legend", state="attached", timeout=20_000)  # the stacked chart's
        # every process is plainly visible here: "Seen as" says nothing, so it is not shown
        assert page.evaluate("() => getComputedStyle(document.querySelector('#processes th:nth-child(10)')).display")\
            == "none"
    finally:
        page.context.close()
    assert found == []


@pytest.mark.parametrize("width", [1400, 390])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_nothing_is_busy_claims_no_confidence_and_the_causes_do_not_repeat_the_headline(
        server: str, browser: Browser, width: int, scheme: str) -> None:
    page, _ = opened(browser, server, width, scheme)
    try:
        busy = page.evaluate("() => [document.querySelector('#headline').textContent, "
                             "Array.from(document.querySelectorAll('#causes li')).map((li) => li.textContent)]")
        assert all(not cause.startswith(busy[0]) for cause in busy[1]), busy  # the headline is not a cause again
        idle: dict[str, Any] = {"headline": "Nothing is busy: the fans are on their idle curve.", "causes": [],
                                "confidence": 0.9, "busy": False}
        page.evaluate("""(verdict) => {
            window.fanwhy.socket.disconnect();  // no live update may replace it before it is read
            const snap = structuredClone(window.fanwhy.state.snap); snap.verdict = verdict;
            window.fanwhy.socket.listeners('gpu_status_update').forEach((f) => f(snap));
        }""", idle)
        assert page.text_content("#headline") == idle["headline"]
        assert page.text_content("#confidence") == ""
    finally:
        page.context.close()


@pytest.mark.parametrize("width", [1400, 390])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_stopped_server_leaves_everything_greyed_and_said_to_be_stale(browser: Browser, tmp_path: Any, width: int,
                                                                        scheme: str) -> None:
    port = free_port()
    proc = start_server(port, FANWHY_DB=str(tmp_path / "history.db"))
    try:
        wait_healthy(f"http://127.0.0.1:{port}")
        page, _ = opened(browser, f"http://127.0.0.1:{port}", width, scheme)
        assert page.evaluate("getComputedStyle(document.querySelector('#verdict')).opacity") == "1"
    finally:
        stop(proc)
    try:
        page.wait_for_selector("#connection.pill-bad, #connection.pill-wait", timeout=15_000)
        page.wait_for_selector("#stale:not([hidden])", timeout=15_000)
        assert page.text_content("#stale").startswith("Not live: the server is unreachable")  # type: ignore[union-attr]  # shown: not None
        deadline = time.monotonic() + 5
        while page.evaluate("() => getComputedStyle(document.querySelector('#verdict')).opacity") != "0.5":
            assert time.monotonic() < deadline, "the verdict was not greyed"
            time.sleep(0.1)
        assert "grayscale" in page.evaluate("getComputedStyle(document.querySelector('.cards')).filter")
    finally:
        page.context.close()


def test_without_a_gpu_no_gpu_column_is_shown_in_either_table(browser: Browser, tmp_path: Any) -> None:
    """On a machine without a GPU (this one: every backend finds none) the page shows the CPU side only."""
    port = free_port()
    proc = start_server(port, FANWHY_BACKEND="auto", FANWHY_DB=str(tmp_path / "history.db"), FANWHY_TOP_CPU="8")
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url)
        if requests.get(url + "/api/health", timeout=5).json().get("gpu_count"):
            pytest.skip("this machine has a GPU")
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector("#connection.pill-ok", timeout=15_000)
        page.wait_for_selector("#processes tbody tr", timeout=15_000)
        shown = page.evaluate("""() => ['processes', 'containers'].map((id) => Array.from(
            document.querySelectorAll('#' + id + ' thead th')).filter((th) => getComputedStyle(th).display !== 'none')
            .map((th) => th.textContent.trim()))""")
        for headers in shown:
            assert not {"GPU", "GPU memory", "SM %", "Power", "Seen as"} & set(headers), shown
        context.close()
    finally:
        stop(proc)


FANS_PANEL = """() => {
  const rows = Array.from(document.querySelectorAll('#fans tbody tr'));
  const wrap = document.querySelector('#fans').closest('.table-wrap');
  const within = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.left >= 0 &&
                                     r.right <= document.documentElement.clientWidth + 1; };
  return {
    sideways: wrap.scrollWidth - wrap.clientWidth,
    page: document.documentElement.scrollWidth,
    rows: rows.map((tr) => ({name: tr.cells[0].textContent, speed: tr.cells[1].textContent,
                              state: tr.cells[2].textContent,
                              seen: within(tr.cells[0]) && within(tr.cells[1]) && within(tr.cells[2]),
                              meter: tr.querySelector('meter') ? tr.querySelector('meter').value : null,
                              hasMeter: !!tr.querySelector('meter')})),
    system: Array.from(document.querySelectorAll('#system dt')).map((dt) => [dt.textContent,
              dt.nextElementSibling ? dt.nextElementSibling.textContent : '']),
  };
}"""


@pytest.mark.parametrize("width", [1400, 390])
def test_the_fans_panel_at_phone_and_desk_width(browser: Browser, server: str, width: int) -> None:
    """Each fan's name, speed and state in view without sideways scrolling; a bar only where the speed has a scale
    (never an empty one); a fan at rest says so and no floor beside it; the System card counts what the panel
    lists. Screenshots at both widths were looked at when this was written."""
    page, found = opened(browser, server, width, "light")
    page.wait_for_selector("#fans tbody tr:nth-child(4)", timeout=20_000)
    panel = page.evaluate(FANS_PANEL)
    assert panel["sideways"] <= 1 and panel["page"] <= width + 1, panel
    assert all(row["seen"] for row in panel["rows"]), panel["rows"]
    assert all(row["meter"] > 0 or row["state"] == "stopped" for row in panel["rows"] if row["hasMeter"])
    for row in panel["rows"]:
        if row["state"] == "stopped":
            assert "stopped (fan-stop)" in row["speed"] and "floor" not in row["speed"], row
    fans_line = dict(panel["system"])["Fans"]
    assert fans_line.startswith(f"{len(panel['rows'])} (see Fans)"), (fans_line, len(panel["rows"]))
    assert found == []
    page.context.close()
