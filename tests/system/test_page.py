"""The page in real Chromium (Debian's, driven by Playwright), against `python -m app` on the simulated backend."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.conftest import nvidia_selection
from tests.fakes.fake_gpm import h200_load
from tests.fakes.fake_nvml import H200_LOAD_PID, FakeNvml, gpm_card, load_dump, scenario
from tests.support import png
from tests.support.browser import chromium
from tests.support.servers import free_port, served, start_server, stop, wait_healthy

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Dialog, ElementHandle, Page

from tests.support.browser import CHROMIUM

ROOT = Path(__file__).resolve().parent.parent.parent
PROBLEMS: dict[Page, list[str]] = {}  # what each open page reported: console errors and warnings, page errors, dialogs


def problems(page: Page) -> list[str]:
    return PROBLEMS[page]


def shown(page: Page, selector: str, timeout: float) -> ElementHandle:
    """The first element matching ``selector`` once it is visible (an assertion error if it never is)."""
    element = page.wait_for_selector(selector, timeout=timeout)
    assert element is not None, selector
    return element
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (make test installs it as root)"),
]
HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    # 30 top CPU users: on a busy machine the hostile process below is one busy process among many
    with served(FANWHY_ALERT_GPU_UTIL="1", FANWHY_ALERT_HOLD="0.5", FANWHY_SIM_GPUS="2", FANWHY_TOP_CPU="30") as url:
        yield url


@pytest.fixture(scope="module")
def hostile_process() -> Iterator[subprocess.Popen]:
    """A CPU user whose command line is HTML: it lands in the process table as a top CPU user."""
    code = "import time\nend=time.time()+120\nwhile time.time()<end: pass"
    proc = subprocess.Popen([sys.executable, "-c", code, HOSTILE])
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    found = PROBLEMS[page] = []

    def console(message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            found.append(f"console {message.type}: {message.text}")

    def dialog(box: Dialog) -> None:
        found.append(f"dialog: {box.message}")
        box.dismiss()

    page.on("console", console)
    page.on("pageerror", lambda error: found.append(f"page error: {error}"))
    page.on("dialog", dialog)
    yield page
    context.close()
    del PROBLEMS[page]


def test_the_page_loads_live_without_console_errors(server: str, page: Page) -> None:
    page.goto(server)
    page.wait_for_selector("#connection.pill-ok", timeout=10_000)
    page.wait_for_selector("article.gpu", timeout=10_000)
    assert page.locator("article.gpu").count() == 2
    first_tick = page.text_content("#timing")
    page.wait_for_function("t => document.querySelector('#timing').textContent !== t", arg=first_tick,
                           timeout=10_000)
    fanless = page.locator("article.gpu").nth(1).locator('[data-f="fan"]')
    assert fanless.text_content() == "N/A: passively cooled"
    assert "passively cooled" in (fanless.get_attribute("title") or "")
    rows = page.locator("#processes tbody tr")
    assert rows.count() >= 2
    assert "python train.py" in (page.text_content("#processes tbody") or "")  # the program, not `python`
    assert problems(page) == []


def test_an_alert_already_firing_is_shown_on_open(server: str, page: Page) -> None:
    page.goto(server)
    toast = shown(page, ".toast", timeout=20_000)
    assert "utilization" in (toast.text_content() or "")
    assert problems(page) == []


def open_then_alert(make_app: Any, serve: Any, page: Any) -> Any:
    """The page open on two H200s, then GPU 1 goes busy: an alert fires while the page watches."""
    fake = scenario("h200x2_load")
    fake.set(1, "utilization", {"gpu": 3, "memory": 1})
    live = serve(make_app(nvidia_selection(fake)))
    page.goto(live.url)
    page.wait_for_selector("#connection.pill-ok", timeout=10_000)
    page.wait_for_selector("article.gpu", timeout=10_000)
    assert page.locator(".toast").count() == 0
    fake.set(1, "utilization", {"gpu": 96, "memory": 30})
    return fake


def test_a_toast_appears_when_an_alert_fires_and_when_it_resolves(make_app: Any, serve: Any, page: Page) -> None:
    fake = open_then_alert(make_app, serve, page)
    toast = shown(page, ".toast-warning", timeout=10_000)
    assert "GPU 1 (NVIDIA H200) at 96 % utilization" in (toast.text_content() or "")
    fake.set(1, "utilization", {"gpu": 4, "memory": 1})
    resolved = shown(page, ".toast-ok", timeout=10_000)
    assert "back to 4 %" in (resolved.text_content() or "")
    assert page.locator(".toast-warning").count() == 1
    assert problems(page) == []


def test_hostile_process_names_stay_text(server: str, page: Page, hostile_process: subprocess.Popen) -> None:
    page.goto(server)
    # a new CPU user is named by the collector's next scan of every process: at once where the machine's CPU time is
    # otherwise explained, else within ProcessInspector's scan_every_s (30 s), as on a machine this busy beside it
    page.wait_for_function(
        "pid => document.querySelector(`#processes tr[data-pid='${pid}']`) !== null", arg=hostile_process.pid,
        timeout=60_000)
    row = page.locator(f"#processes tr[data-pid='{hostile_process.pid}']")
    assert HOSTILE in (row.text_content() or "")
    assert page.locator("#processes img").count() == 0
    time.sleep(0.5)
    assert problems(page) == []


def light_colour(name: str) -> tuple[int, int, int]:
    """The colour static/app.css gives ``--name`` in the light scheme (its first definition), as RGB."""
    css = (ROOT / "static" / "app.css").read_text()
    found = re.search(rf"--{name}:\s*#([0-9a-fA-F]{{3}}|[0-9a-fA-F]{{6}});", css)
    assert found, name
    digits = found.group(1) if len(found.group(1)) == 6 else "".join(c * 2 for c in found.group(1))
    red, green, blue = (int(digits[i:i + 2], 16) for i in (0, 2, 4))
    return red, green, blue


def test_screenshot(server: str, page: Page) -> None:
    """Writes the README's screenshot when FANWHY_SCREENSHOT names a file. What it shows is checked: the whole
    page (the image is the document's size), styled and live (the header, cut from it, is the card colour with the
    green "live" pill). Fails on an unstyled page, or one whose connection never came up."""
    target = os.environ.get("FANWHY_SCREENSHOT")
    page.goto(server)
    page.wait_for_selector("#processes tbody tr", timeout=10_000)
    page.wait_for_selector("#connection.pill-ok", timeout=10_000)
    time.sleep(1.5)
    size = "() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
    deadline = time.monotonic() + 30
    while True:  # a live page: a tick that adds a process row between the two measures is measured again
        document = page.evaluate(size)
        image = page.screenshot(full_page=True)
        if page.evaluate(size) == document or time.monotonic() > deadline:
            break
    assert list(png.size(image)) == document
    header = page.evaluate("() => { const r = document.querySelector('header').getBoundingClientRect();"
                           " return [r.width, r.height]; }")
    painted = png.colours(page.screenshot(clip={"x": 0, "y": 0, "width": header[0], "height": header[1]}))
    card, ok = (light_colour(name) for name in ("card", "ok"))
    assert painted.most_common(1)[0][0] == card and painted[ok] > 100, painted.most_common(5)
    if target:
        Path(target).write_bytes(image)


def test_the_page_reconnects_when_the_server_restarts(page: Page) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start_server(port)
    try:
        wait_healthy(url)
        page.goto(url)
        page.wait_for_selector("#connection.pill-ok", timeout=10_000)
        stop(proc)
        page.wait_for_selector("#connection:not(.pill-ok)", timeout=10_000)
        proc = start_server(port)
        wait_healthy(url)
        page.wait_for_selector("#connection.pill-ok", timeout=20_000)
        tick = page.text_content("#timing")
        page.wait_for_function("t => document.querySelector('#timing').textContent !== t", arg=tick,
                               timeout=10_000)
    finally:
        stop(proc)
    # Connection errors while the server was down are expected console noise; page errors are not.
    assert [p for p in problems(page) if p.startswith("page error")] == []


def test_unattributed_row_and_the_container_view(make_app: Any, serve: Any, page: Page, tmp_path: Path) -> None:
    from tests.fakes.docker_api import FakeDockerApi, container

    fake = scenario("h200x2_load")
    fake.set(1, "compute_processes", [])  # the case real GPUs showed: memory used, nobody listed
    sock = tmp_path / "docker.sock"
    with FakeDockerApi(sock, [container("e" * 64, HOSTILE, "ollama/ollama", gpu="device-request")]):
        live = serve(make_app(nvidia_selection(fake), docker_socket=str(sock)))
        page.goto(live.url)
        unattributed = shown(page, "#processes tr.unattributed", timeout=10_000)
        assert "unattributed" in (unattributed.text_content() or "")
        assert "PID namespace" in (unattributed.get_attribute("title") or "")
        estimate = page.locator(f"#processes tr[data-pid='{H200_LOAD_PID}']")
        assert "(estimate)" in (estimate.text_content() or "")
        page.click("#tab-containers")
        assert page.is_visible("#containers")
        assert not page.is_visible("#processes")
        idle = shown(page, "#containers tr[data-container]", timeout=10_000)
        text = idle.text_content() or ""
        assert HOSTILE in text and "no visible process" in text and "ollama/ollama" in text
        assert page.locator("#containers img").count() == 0
    assert problems(page) == []


def test_the_verdict_is_on_top_and_follows_the_load(make_app: Any, serve: Any, page: Page) -> None:
    fake = scenario("h200x2_load")
    live = serve(make_app(nvidia_selection(fake)))
    page.goto(live.url)
    page.wait_for_function(  # numbers keep their units with a no-break space
        "() => document.querySelector('#headline').textContent.replace(/\\u00a0/g, ' ')"
        ".includes('keeps 98 % of its SMs busy')", timeout=10_000)
    headline = (page.text_content("#headline") or "").replace("\xa0", " ")
    assert headline.startswith(f"GPU 1 is at 57 °C and 693 W because PID {H200_LOAD_PID}")
    assert "passively cooled" in headline
    page.click("#causes-box summary")
    causes = [(t or "").replace("\xa0", " ") for t in page.locator("#causes li").all_text_contents()]
    assert causes and not any(c.startswith(headline) for c in causes)  # the power cap; the headline not again
    assert "confidence" in (page.text_content("#confidence") or "")
    fake.set(1, "utilization", {"gpu": 0, "memory": 0})
    fake.end_process(1, H200_LOAD_PID)  # the job ends: no context left to hold the card in P0 (a context holder at
    fake.set(1, "power", 78_000)        # 0 % SM is a verdict of its own, which raced "Nothing is busy" here)
    # Idle GPUs: "Nothing is busy", or "No GPU is busy: the CPU ..." while another test's CPU burner runs.
    page.wait_for_function(
        "() => /^(Nothing is busy|No GPU is busy)/.test(document.querySelector('#headline').textContent)",
        timeout=10_000)
    assert problems(page) == []


def test_a_toast_leads_to_its_gpu(make_app: Any, serve: Any, page: Page) -> None:
    open_then_alert(make_app, serve, page)
    toast = shown(page, "button.toast-warning", timeout=10_000)
    toast.click()
    page.wait_for_selector("article.gpu[data-gpu='1'].flash", timeout=5_000)
    assert page.locator("button.toast-warning").count() == 0


def test_history_charts_load_and_grow_live(make_app: Any, serve: Any, page: Page) -> None:
    fake = scenario("h200x2_load")
    live = serve(make_app(nvidia_selection(fake)))
    live.collector.wait_frame(3, timeout=10)
    page.goto(live.url)
    page.wait_for_selector("#chart-utilization_percent canvas", timeout=10_000)
    assert page.locator(".charts canvas").count() >= 4
    count = "() => window.fanwhyHistory.charts['chart-utilization_percent'].data[0].length"
    first = page.evaluate(count)
    page.wait_for_function(f"() => ({count})() > {first} + 3", timeout=10_000)
    page.click("#ranges button[data-range='86400']")
    page.wait_for_function(
        "() => document.querySelector(\"#ranges button[data-range='86400']\").getAttribute('aria-pressed') === 'true'")
    page.select_option("#history-gpu", "1")
    page.wait_for_function("() => window.fanwhyHistory.gpu === 1")
    assert problems(page) == []


def test_a_recording_from_the_page(make_app: Any, serve: Any, page: Page) -> None:
    live = serve(make_app(nvidia_selection(scenario("h200x2_load"))))
    page.goto(live.url)
    page.wait_for_selector("#chart-utilization_percent canvas", timeout=10_000)
    page.fill("#rec-label", HOSTILE)
    page.click("#rec-start")
    page.wait_for_selector("#recordings tr[data-recording]", timeout=10_000)
    time.sleep(0.8)
    page.click("#rec-stop")
    page.wait_for_function(
        "() => document.querySelector('#recordings tr[data-recording]').textContent.includes('stopped')",
        timeout=10_000)
    row = page.text_content("#recordings tr[data-recording]") or ""
    assert HOSTILE in row and "GPU 0" in row and "GPU 1" in row and "98 %" in row
    assert page.locator("#recordings img").count() == 0
    assert problems(page) == []


def test_hostile_process_and_gpu_names_stay_text(make_app: Any, serve: Any, page: Page, tmp_path: Path) -> None:
    """A process whose very name is HTML (its executable is called that) on a GPU whose name is HTML."""
    exe = tmp_path / HOSTILE
    exe.symlink_to(sys.executable)
    proc = subprocess.Popen([str(exe), "-c", "import time; time.sleep(60)", HOSTILE])
    try:
        fake = scenario("h100_load")
        fake.set(0, "name", HOSTILE)
        fake.run_on(0, proc.pid)
        live = serve(make_app(nvidia_selection(fake)))
        page.goto(live.url)
        row = shown(page, f"#processes tr[data-pid='{proc.pid}']", timeout=10_000)
        cells = row.query_selector_all("td")
        assert cells[2].text_content() == HOSTILE  # the name column, shown as text
        assert HOSTILE in (page.text_content("article.gpu h3") or "")
        page.wait_for_function(
            "() => document.querySelector('#headline').textContent.includes('onerror')", timeout=10_000)
        time.sleep(0.5)
        assert page.locator("img").count() == 0
        assert problems(page) == []  # no dialog, no error
    finally:
        proc.kill()
        proc.wait()


def test_the_process_table_sorts_and_filters_and_the_gpu_selector(make_app: Any, serve: Any, page: Page) -> None:
    fake = scenario("h200x2_load")
    fake.set(0, "compute_processes", [{"pid": 9001, "usedGpuMemory": 2**30, "gpuInstanceId": 0,
                                       "computeInstanceId": 0}])
    live = serve(make_app(nvidia_selection(fake)))
    page.goto(live.url)
    page.wait_for_selector("#processes tr[data-pid='9001']", timeout=10_000)
    pids = "() => [...document.querySelectorAll('#processes tbody tr[data-pid]')].map(r => r.dataset.pid)"
    first = page.evaluate(pids)
    assert first.index(str(H200_LOAD_PID)) < first.index("9001")  # by GPU memory, largest first
    page.click("#processes th button[data-sort='pid']")
    assert page.get_attribute("#processes th:has(button[data-sort='pid'])", "aria-sort") == "ascending"
    ordered = [int(p) for p in page.evaluate(pids)]
    assert ordered == sorted(ordered)
    page.reload()  # the sort a user picked survives a reload
    page.wait_for_selector("#processes tr[data-pid='9001']", timeout=10_000)
    assert page.get_attribute("#processes th:has(button[data-sort='pid'])", "aria-sort") == "ascending"
    assert [int(p) for p in page.evaluate(pids)] == sorted(int(p) for p in page.evaluate(pids))
    page.fill("#proc-filter", "9001")
    page.wait_for_function(f"() => ({pids})().join() === '9001'", timeout=5_000)
    time.sleep(1.0)  # the filter survives live updates
    assert page.evaluate(pids) == ["9001"]
    page.fill("#proc-filter", "")
    page.select_option("#gpu-filter", "1")
    page.wait_for_function("() => document.querySelector(\"article.gpu[data-gpu='0']\").hidden", timeout=5_000)
    assert "9001" not in page.evaluate(pids)
    assert page.title().startswith("57 °C GPU 1")  # the hottest GPU in the title
    assert (page.get_attribute("link[rel=icon]", "href") or "").startswith("data:image/svg+xml")
    assert problems(page) == []


def test_a_toast_clears_by_itself(make_app: Any, serve: Any, page: Page) -> None:
    open_then_alert(make_app, serve, page)
    page.wait_for_selector(".toast-warning", timeout=10_000)
    page.wait_for_selector(".toast-warning", state="detached", timeout=15_000)


def test_phone_width_and_accessibility(server: str, browser: Browser) -> None:
    """A phone-width screenshot, and axe-core (vendored under tests/vendor) finds no serious violation."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, bypass_csp=True)
    page = context.new_page()
    try:
        page.goto(server)
        page.wait_for_selector("#processes tbody tr", timeout=10_000)
        page.wait_for_selector("#chart-utilization_percent canvas", timeout=10_000)
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 390 + 1, f"the page scrolls sideways at phone width ({width} px)"
        heads = page.evaluate("() => [...document.querySelectorAll('#processes thead th')]"
                              ".filter((th) => th.offsetParent !== null).map((th) => th.textContent.trim())")
        assert {"GPU", "GPU memory", "SM %", "CPU %", "Power"} <= set(heads), heads  # what a verdict quotes
        image = page.screenshot(full_page=True)
        target = os.environ.get("FANWHY_SCREENSHOT")
        if target:
            Path(target).with_name("screenshot-phone.png").write_bytes(image)
        page.evaluate((Path(__file__).parent.parent / "vendor" / "axe-core" / "axe.min.js").read_text())
        result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
        serious = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3]) for v in result["violations"]
                   if v["impact"] in ("serious", "critical")]
        assert serious == []
    finally:
        context.close()


def no_gpu_selection(tmp_path: Path) -> Any:
    from app.vendors.basic import BasicBackend
    from app.vendors.factory import Selection
    from app.vendors.nvidia_smi import NvidiaSmi

    backend = BasicBackend(sys_root=str(tmp_path), nvidia_smi=NvidiaSmi(str(tmp_path / "no-nvidia-smi"), 1.0))
    backend.open()
    return Selection(backend=backend, skipped={"nvidia": "NVMLError_LibraryNotFound: libnvidia-ml.so.1 not found "
                                                         "(no NVIDIA driver)"}, kinds={"nvidia": "no-driver"})


def test_the_no_gpu_page_earns_its_place(make_app: Any, serve: Any, page: Page, tmp_path: Path) -> None:
    """A plain sentence with the details folded away, CPU charts with data instead of empty GPU charts, GPU columns
    hidden, "while you were away" (a cause from the verdicts recorded: fails when it shows "Nothing recorded") and
    recordings working."""
    live = serve(make_app(no_gpu_selection(tmp_path)))
    live.collector.wait_frame(3, timeout=10)
    live.app.extensions["fanwhy"].history.flush()  # "while you were away" reads what is written
    page.goto(live.url)
    page.wait_for_function("() => document.body.classList.contains('no-gpu')", timeout=10_000)
    summary = page.text_content("#no-gpu-summary") or ""
    assert summary.startswith("No GPU found: no NVIDIA driver, no AMD or Intel card.")
    assert "NVMLError" not in summary and not page.is_visible("#no-gpu-reason")  # folded away
    page.click("#no-gpu summary")
    assert "NVMLError_LibraryNotFound" in (page.text_content("#no-gpu-reason") or "")
    assert page.is_visible("#chart-host-cpu_percent") and page.is_visible("#chart-host-memory_percent")
    assert not page.is_visible("#chart-utilization_percent") and not page.is_visible("#history-gpu")
    # the chart is made when its first history answer arrives, which may be after the panel shows
    page.wait_for_function("() => { const c = window.fanwhyHistory.charts['chart-host-cpu_percent'];"
                           " return c !== undefined && c.data[0].length >= 3; }", timeout=15_000)
    headers = page.evaluate("() => [...document.querySelectorAll('#processes th')]"
                            ".filter((th) => th.offsetParent !== null).map((th) => th.textContent.trim())")
    assert "GPU memory" not in headers and "SM %" not in headers and "CPU %" in headers
    # no GPU: the busiest on the CPU first, as the CPU % column says (a ranking the test reads back from the table)
    assert page.get_attribute("#processes th:has(button[data-sort='cpu'])", "aria-sort") == "descending"
    page.wait_for_function("() => document.querySelectorAll('#processes tbody tr[data-pid]').length >= 2",
                           timeout=15_000)
    rates = page.evaluate("""() => { const by = new Map(window.fanwhy.state.snap.processes
        .map((p) => [String(p.pid), p.cpu_percent || 0]));
        return [...document.querySelectorAll('#processes tbody tr[data-pid]')].map((r) => by.get(r.dataset.pid)); }""")
    assert all(a >= b for a, b in pairwise(rates)), rates
    page.wait_for_selector("#away-causes li", timeout=10_000)
    away = page.text_content("#away-causes") or ""  # the verdicts written before the page opened: one cause at least
    assert away and "Nothing recorded" not in away, away
    page.click("#rec-start")
    page.wait_for_selector("#rec-stop:not([disabled])", timeout=5_000)
    live.collector.wait_frame(live.collector.latest().seq + 2, timeout=10)
    page.click("#rec-stop")
    page.wait_for_function("() => (document.querySelector('#recordings tbody tr td:nth-child(5)') || {}).textContent"
                           " && document.querySelector('#recordings tbody tr td:nth-child(5)').textContent"
                           ".startsWith('host:')", timeout=10_000)
    receipt = page.text_content("#recordings tbody tr td:nth-child(6)") or ""
    assert receipt.startswith("0.00 Wh (idle 0.00 Wh apart)"), receipt  # no GPU: its receipt says so in numbers
    assert problems(page) == []


def test_the_x_axis_spans_the_chosen_range(make_app: Any, serve: Any, page: Page) -> None:
    """Three points in a fresh history still draw a 15-minute axis; 24 h draws a day, 7 d a week."""
    live = serve(make_app(nvidia_selection(scenario("h200x2_load"))))
    live.collector.wait_frame(3, timeout=10)
    page.goto(live.url)
    page.wait_for_selector("#chart-utilization_percent canvas", timeout=10_000)
    span = ("() => { const s = window.fanwhyHistory.charts['chart-utilization_percent'].scales.x; "
            "return s.max - s.min; }")
    assert abs(page.evaluate(span) - 900) < 5
    for seconds in (86400, 604800):
        page.click(f"#ranges button[data-range='{seconds}']")
        page.wait_for_function(f"() => Math.abs(({span})() - {seconds}) < 5", timeout=10_000)
    assert problems(page) == []


def test_a_stretch_with_no_history_is_a_gap_in_the_chart(make_app: Any, serve: Any, page: Page) -> None:
    """Samples 5 minutes ago, then none for 216 s, then more: the chart's line breaks across the stretch (a null
    in its data) instead of a ramp from one sample to the next."""
    from app.core.model import evolve

    app = make_app(nvidia_selection(scenario("h200x2_load")), start=False)
    fanwhy = app.extensions["fanwhy"]
    taken = fanwhy.collector.collect().snapshot
    now = time.time()
    for at in [*range(300, 295, -1), *range(80, 75, -1)]:
        fanwhy.history.write([evolve(taken, timestamp=now - at)])
    live = serve(app)
    page.goto(live.url)
    page.wait_for_selector("#chart-utilization_percent canvas", timeout=10_000)
    data = "window.fanwhyHistory.charts['chart-utilization_percent'].data"
    page.wait_for_function(f"() => {data}[0].length >= 11", timeout=10_000)
    xs, ys = page.evaluate(f"() => [{data}[0], {data}[1]]")
    holes = [xs[i] for i, y in enumerate(ys) if y is None]
    assert any(now - 296 < x < now - 80 for x in holes), (xs, ys)
    kept = [x for x, y in zip(xs, ys, strict=True) if y is not None and now - 302 < x < now - 294]
    assert len(kept) >= 4  # the samples themselves
    assert problems(page) == []


@pytest.mark.parametrize("width", [1400, 390])
def test_no_value_overflows_its_card_and_the_cards_use_the_width(browser: Browser, server: str, width: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        page.goto(server)
        page.wait_for_selector(".card .bar-row b", timeout=15_000)
        page.wait_for_function("() => document.querySelectorAll('#gpus .card').length === 2", timeout=10_000)
        overflow = page.evaluate("""() => {
          const out = [];
          document.querySelectorAll('.card').forEach((card) => {
            const box = card.getBoundingClientRect();
            card.querySelectorAll('*').forEach((el) => {
              if (el.closest('.table-wrap, .chart')) return;  // scroll regions and canvases: meant to scroll or clip
              const r = el.getBoundingClientRect();
              if (r.width && (r.right > box.right + 1 || r.left < box.left - 1)) out.push(el.textContent.slice(0, 40));
            });
          });
          return out;
        }""")
        assert overflow == []
        used = page.evaluate("""() => {
          const area = document.querySelector('#gpus').getBoundingClientRect().width;
          let sum = 0;
          document.querySelectorAll('#gpus .card').forEach((c) => { sum += c.getBoundingClientRect().width; });
          return sum / area;
        }""")
        assert used > (0.95 if width == 1400 else 0.9)  # side by side at 1400, stacked full-width on a phone
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
        wanted = ["PID", "User", "Name", "GPU memory", "SM %", "CPU %"]  # the columns that answer "who?"
        shown = page.evaluate("() => [...document.querySelectorAll('#processes th')].filter((th) => {"
                              " const r = th.getBoundingClientRect(); return r.width > 0 && r.right <= innerWidth; })"
                              ".map((th) => th.textContent.trim().replace(/ [▲▼]$/, ''))")
        assert all(any(s.startswith(w) for s in shown) for w in wanted), shown
    finally:
        context.close()


def test_commands_render_as_code_and_numbers_as_words(server: str, page: Page) -> None:
    page.goto(server)
    page.wait_for_selector("#headline code", timeout=15_000)  # the simulated GPUs are busy: a command is named
    page.wait_for_selector("#processes tbody tr", timeout=15_000)
    headline = page.text_content("#headline") or ""
    assert "`" not in headline
    # the command the verdict names (the simulated worker's; on a loaded machine the CPU's busiest), shown as code,
    # is one the process table lists
    named = page.text_content("#headline code") or ""
    assert named and named in (page.text_content("#processes") or ""), named
    page.click("#causes-box summary")
    # a GPU's load cause (the simulated load rises and falls over a minute; while it is low, the fans explain). The
    # causes are read in the same evaluation that finds it: read after the wait, a tick could have re-drawn them
    # without it (seen once: the CPU and the fans explained by then)
    numbers = page.wait_for_function(
        "() => document.querySelector(\"#causes li[data-kind='gpu_load'] small\") &&"
        " [...document.querySelectorAll('#causes li small')].map((small) => small.textContent).join(' ')",
        timeout=70_000).json_value()
    assert "utilization" in numbers and "\xa0W" in numbers and "°C" in numbers
    assert "_percent" not in numbers and "power_w" not in numbers and " = " not in numbers
    assert problems(page) == []


def test_the_fleet_page_without_prometheus_explains_and_is_linked_once_configured(
        make_app: Any, serve: Any, page: Page) -> None:
    plain = serve(make_app(nvidia_selection(scenario("h200x2_load"))))
    page.goto(plain.url)
    page.wait_for_selector("#headline", timeout=10_000)
    assert page.locator("#fleet-link").count() == 0
    page.goto(plain.url + "/fleet")
    assert "FANWHY_PROMETHEUS_URL" in (page.text_content("#fleet-setup") or "")
    assert (page.text_content("#fleet-status") or "") == "not configured"
    time.sleep(0.5)
    assert problems(page) == []  # no request that fails, no console error
    assert_stays_put(page, "#home-link", "#fleet-status")
    fleet = serve(make_app(nvidia_selection(scenario("h200x2_load")), prometheus_url="http://127.0.0.1:9"))
    page.goto(fleet.url)
    page.wait_for_selector("#connection.pill-ok", timeout=30_000)
    assert_stays_put(page, "#fleet-link", "#connection", "#host")
    with page.expect_navigation(url="**/fleet", timeout=60_000):  # waits from before the click: no race
        page.click("#fleet-link")


def assert_stays_put(page: Page, link: str, *live: str) -> None:
    """A link does not move when the header's live items change their text (the pill going live, a host's name, the
    alert button shown after the first alert): a link that moves under the pointer takes a click meant for it
    elsewhere, as a person's click or a test's."""
    before = page.locator(link).bounding_box()
    page.evaluate("""(live) => {
        for (const selector of live) document.querySelector(selector).textContent = "a much longer text than before";
        const button = document.querySelector("#notify-button");
        if (button) button.hidden = false;
    }""", list(live))
    assert page.locator(link).bounding_box() == before


NOTIFICATION_STUB = """
window.__notices = []; window.__asked = 0;
window.Notification = class { constructor(title, options) { window.__notices.push({title, body: options.body}); } };
window.Notification.permission = window.__permission || "default";
window.Notification.requestPermission = async () => {
  window.__asked += 1; window.Notification.permission = "granted"; return "granted"; };
Object.defineProperty(document, "visibilityState", { get: () => window.__visibility || "visible" });
"""


@pytest.mark.parametrize("hidden", [False, True])
def test_background_alerts_are_asked_for_on_a_click_and_shown_only_in_the_background(
        browser: Browser, make_app: Any, serve: Any, hidden: bool) -> None:
    fake = scenario("h200x2_load")
    live = serve(make_app(nvidia_selection(fake), alert_gpu_util_percent=50.0))
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(("window.__visibility = 'hidden';" if hidden else "") + NOTIFICATION_STUB)
    page = context.new_page()
    try:
        page.goto(live.url)
        page.wait_for_selector(".toast", timeout=20_000)  # GPU 1's load fires the utilization alert
        assert page.evaluate("window.__asked") == 0 and page.evaluate("window.__notices.length") == 0  # not asked yet
        assert page.text_content("#notify-button") == "Alert me in the background"
        page.click("#notify-button")
        page.wait_for_function("() => document.querySelector('#notify-button').disabled")
        assert page.evaluate("window.__asked") == 1 and page.text_content("#notify-button") == "Background alerts on"
        page.evaluate("() => document.querySelectorAll('.toast').forEach((t) => t.remove())")
        fake.set(0, "utilization", {"gpu": 93, "memory": 10})  # GPU 0 gets busy: a new alert, pushed live
        page.wait_for_selector(".toast", timeout=15_000)
        notices = page.evaluate("window.__notices")
        if hidden:
            assert notices and notices[0]["title"].startswith("FanWhy: ") and "GPU" in notices[0]["body"]
        else:
            assert notices == []  # a visible tab has its toasts
    finally:
        context.close()


def test_the_api_docs_page_works_offline(server: str, page: Page) -> None:
    """/api/docs renders the OpenAPI document with the page's own script: no CDN, so it works without a network."""
    requests_seen: list[str] = []
    page.on("request", lambda r: requests_seen.append(r.url))
    page.goto(server + "/api/docs")
    page.wait_for_selector("#getGpuSummary h3", timeout=10_000)
    assert page.text_content("#getGpuSummary h3") == "GET /api/gpu/summary"
    assert page.locator("#schema-Verdict").count() == 1 and "headline" in (page.text_content("#schema-Verdict") or "")
    assert all(url.startswith(server) for url in requests_seen)  # nothing fetched from elsewhere
    assert problems(page) == []


def test_the_by_pod_view(make_app: Any, serve: Any, page: Page, monkeypatch: Any, tmp_path: Path) -> None:
    """Processes placed in a pod (here: this test's own process, in a cgroupfs-driver pod path, named by a fake
    Kubernetes API) are grouped by namespace and pod in the page's third tab."""
    from tests.integration.test_kubernetes import POD_UID, app_with_a_pod

    app = app_with_a_pod(make_app, monkeypatch, tmp_path)
    live = serve(app)
    page.goto(live.url)
    page.wait_for_selector("#tab-pods:not([hidden])", timeout=10_000)
    page.click("#tab-pods")
    cells = page.locator(f"#pods tr[data-pod='{POD_UID}'] td").all_text_contents()
    assert cells[:3] == ["ml", "trainer-0", "trainer"] and cells[4] == "70" and cells[-1] == str(os.getpid())
    assert problems(page) == []


def test_the_fans_panel_shows_each_fan_its_state_and_source(server: str, page: Page) -> None:
    """The demo's machine: GPU 0's fan (floor and fan-stop), the board's CPU and case fans and an empty header, the
    chassis fans and the air from its BMC; a chart of one fan's speed against its source."""
    page.goto(server)
    shown(page, "#fans tbody tr", timeout=15_000)
    names = page.eval_on_selector_all("#fans tbody tr td:first-child", "els => els.map(e => e.textContent)")
    assert {"GPU 0 fan 0", "CPU fan (nct6798 fan2)", "Case fan (nct6798 fan1)", "FAN1 (BMC)"} <= \
        set(names), names
    cpu_fan = page.locator("#fans tr[data-fan='hwmon:nct6798/fan2']")
    assert "nct6798 CPUTIN" in cpu_fan.inner_text() and "(declared)" in cpu_fan.inner_text()
    assert "SmartFan IV" in cpu_fan.inner_text()
    assert page.inner_text("#fans-dead-summary") == "2 channels left out (not fans)"
    assert "Inlet Temp 24 °C" in page.inner_text("#fans-air")
    bmc_fan = page.inner_text("#fans tr[data-fan='bmc:FAN1']")  # thousands grouped, as the verdict writes them
    assert re.search(r"\d,\d{3}\sRPM", bmc_fan) and not re.search(r"\d{4}\sRPM", bmc_fan), bmc_fan
    page.select_option("#fan-pick", "hwmon:nct6798/fan2")  # its source is declared: its points have a temperature
    # its chart (another fan's may be drawn already when the page has run a while: wait for this one's caption)
    page.wait_for_function("() => document.querySelector('#fan-chart-caption').textContent.startsWith('CPU fan')"
                           " && document.querySelector('#chart-fan canvas') !== null", timeout=20_000)
    caption = page.inner_text("#fan-chart-caption")
    assert caption.startswith("CPU fan (nct6798 fan2): speed (%) against nct6798 CPUTIN (°C)"), caption
    assert "declared curve" in caption
    assert problems(page) == []


def test_a_hostile_fan_label_stays_text(make_app: Any, serve: Any, page: Page, tmp_path: Path) -> None:
    chip = tmp_path / "sys" / "class" / "hwmon" / "hwmon0"
    chip.mkdir(parents=True)
    for name, value in (("name", "nct6798"), ("fan1_input", "1200"), ("fan1_label", HOSTILE)):
        (chip / name).write_text(value + "\n")
    live = serve(make_app(nvidia_selection(scenario("h100_load")), sys_root=str(tmp_path / "sys"), bmc=False))
    page.goto(live.url)
    row = shown(page, "#fans tbody tr", timeout=10_000)
    assert row.query_selector_all("td")[0].text_content() == f"{HOSTILE} (nct6798 fan1)"
    time.sleep(0.5)
    assert page.locator("img").count() == 0 and problems(page) == []


def test_a_page_whose_session_the_server_closed_says_so(page: Page) -> None:
    """At its cap a loopback address makes room by closing its oldest session: that page says it was closed."""
    from tests.integration.test_sessions import raw_socket

    with served(FANWHY_CLIENT_SESSIONS="1") as url:
        page.goto(url)
        page.wait_for_selector("#connection.pill-ok", timeout=30_000)
        newcomer = raw_socket(int(url.rsplit(":", 1)[1]))  # from 127.0.0.1 too: the page's session is the oldest
        try:
            page.wait_for_function("() => document.querySelector('#connection').textContent.includes('closed by "
                                   "the server')", timeout=30_000)
            assert "pill-bad" in (page.get_attribute("#connection", "class") or "")
        finally:
            newcomer.close()


def test_the_page_still_goes_live_beside_a_thousand_loopback_sessions(page: Page) -> None:
    """1,000 WebSockets from 63 loopback addresses (FANWHY_MAX_SESSIONS, the default): the page opens, goes live and
    is pushed updates (room is made for it: the loopback range counts as one address)."""
    from tests.integration.test_sessions import raw_socket

    with served() as url:
        port = int(url.rsplit(":", 1)[1])
        held = [raw_socket(port, f"127.0.0.{2 + i % 63}") for i in range(1000)]
        try:
            page.goto(url)
            page.wait_for_selector("#connection.pill-ok", timeout=60_000)
            first = page.text_content("#timing")
            page.wait_for_function("t => document.querySelector('#timing').textContent !== t", arg=first,
                                   timeout=60_000)
        finally:
            for ws in held:
                ws.close()


# What kind of busy (fakes shaped from one H200: tests/fixtures/nvml/h200-gpm.json)
ACTIVITY_WAIT_MS = 20_000  # a loaded 2-core machine


def kind_text(page: Page, gpu: int) -> str:
    return page.locator(f"article.gpu[data-gpu='{gpu}'] [data-f='kind']").inner_text()


def test_the_card_shows_what_kind_of_busy_and_follows_the_load(make_app: Any, serve: Any, page: Page) -> None:
    plain = load_dump("h200x2-load")[0]  # the dumps hold no GPM answer: GPU 1 says why
    fake = FakeNvml([gpm_card("fp32_matmul"), plain])
    live = serve(make_app(nvidia_selection(fake)))
    page.goto(live.url)
    page.wait_for_function("() => (document.querySelector(\"article.gpu[data-gpu='0'] [data-f='kind']\") || {})"
                           ".textContent?.includes('FP32 math on the CUDA cores')", timeout=ACTIVITY_WAIT_MS)
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
                           ".textContent.includes('Bound by memory bandwidth')", timeout=ACTIVITY_WAIT_MS)
    assert card.locator("[data-f='activity-bars'] .bar-row").nth(6).locator("b").inner_text() == "85\u00a0%"
    assert problems(page) == []


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
    page.wait_for_selector("#chart-activity canvas", timeout=ACTIVITY_WAIT_MS)
    figure = page.locator("#chart-activity").locator("xpath=..")
    assert figure.is_visible() and "SM active" in page.locator("#chart-activity").inner_text()
    page.select_option("#history-gpu", "1")
    page.wait_for_function("() => document.getElementById('chart-activity').closest('figure').hidden",
                           timeout=ACTIVITY_WAIT_MS)
