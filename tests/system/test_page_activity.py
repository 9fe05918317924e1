"""What kind of busy on the page, in real Chromium: the GPU card's activity bars and the verdict's words, following the
load; a GPU without activity counters says why (fakes shaped from one H200: tests/fixtures/nvml/h200-gpm.json)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from tests.conftest import nvidia_selection
from tests.fakes.fake_gpm import h200_load
from tests.fakes.fake_nvml import FakeNvml, gpm_card, load_dump
from tests.support.browser import CHROMIUM, chromium

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")]
WAIT_MS = 20_000  # a loaded 2-core machine


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert errors == []


def kind_text(page: Page, gpu: int) -> str:
    return page.locator(f"article.gpu[data-gpu='{gpu}'] [data-f='kind']").inner_text()


def test_the_card_shows_what_kind_of_busy_and_follows_the_load(make_app: Any, serve: Any, page: Page) -> None:
    plain = load_dump("h200x2-load")[0]  # the dumps hold no GPM answer: GPU 1 says why
    fake = FakeNvml([gpm_card("fp32_matmul"), plain])
    live = serve(make_app(nvidia_selection(fake)))
    page.goto(live.url)
    page.wait_for_function("() => (document.querySelector(\"article.gpu[data-gpu='0'] [data-f='kind']\") || {})"
                           ".textContent?.includes('FP32 math on the CUDA cores')", timeout=WAIT_MS)
    card = page.locator("article.gpu[data-gpu='0']")
    assert "TF32 or bf16 would run on the tensor cores" in kind_text(page, 0)
    bars = card.locator("[data-f='activity-bars'] .bar-row")
    assert bars.count() == 7
    labels = [bars.nth(i).locator("span").inner_text() for i in range(7)]
    assert labels == ["SM active", "Occupancy", "Tensor", "FP32", "FP64", "FP16", "DRAM"]
    assert bars.nth(3).locator("b").inner_text() == "76\u00a0%" and bars.nth(2).locator("b").inner_text() == "0\u00a0%"
    assert "FP32 math" in (page.locator("#verdict").inner_text())
    other = page.locator("article.gpu[data-gpu='1']")
    assert other.locator("[data-f='activity']").is_hidden()
    assert other.locator("[data-f='activity-why']").inner_text().startswith("N/A: not supported by this GPU")
    fake.set(0, "gpm", h200_load("d2d_copy"))
    page.wait_for_function("() => document.querySelector(\"article.gpu[data-gpu='0'] [data-f='kind']\")"
                           ".textContent.includes('Bound by memory bandwidth')", timeout=WAIT_MS)
    assert card.locator("[data-f='activity-bars'] .bar-row").nth(6).locator("b").inner_text() == "85\u00a0%"


def test_the_activity_counters_are_kept_in_history_and_charted(make_app: Any, serve: Any, page: Page) -> None:
    fake = FakeNvml([gpm_card("bf16_matmul"), load_dump("h200x2-load")[0]])
    live = serve(make_app(nvidia_selection(fake)))
    client = live.app.test_client()
    deadline_points: list[Any] = []
    for _ in range(200):  # until the writer has kept a few windows (a loaded machine: up to 20 s)
        deadline_points = [p for p in client.get("/api/gpu/history?gpu=0&metric=tensor_percent&since=-900s")
                           .get_json()["points"] if p[1] is not None]
        if len(deadline_points) >= 3:
            break
        page.wait_for_timeout(100)
    assert len(deadline_points) >= 3 and deadline_points[-1][1] == pytest.approx(89.57)
    other = client.get("/api/gpu/history?gpu=1&metric=tensor_percent&since=-900s").get_json()["points"]
    assert all(p[1] is None for p in other), "a GPU without counters keeps no activity, never zeros"
    page.goto(live.url)
    page.wait_for_selector("#chart-activity canvas", timeout=WAIT_MS)
    figure = page.locator("#chart-activity").locator("xpath=..")
    assert figure.is_visible() and "SM active" in page.locator("#chart-activity").inner_text()
    page.select_option("#history-gpu", "1")
    page.wait_for_function("() => document.getElementById('chart-activity').closest('figure').hidden", timeout=WAIT_MS)
