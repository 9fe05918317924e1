"""The first five minutes, as a newcomer lives them: a fresh clone, the README's `make run`, the page in Chromium.

Within 60 s of `make run` on a machine without a GPU the page must show the plain reason, CPU charts with data and a
verdict. The screenshots in docs/ (the no-GPU page; the demo at desktop and phone width) are made here, so they
show the page as it is: into docs/screenshots/ with ``FANWHY_UPDATE_SCREENSHOTS=1`` (then commit them), else into a
folder of the test's own, so that ``make test`` leaves the clone as it found it. The clone uses this checkout's
virtual environment (VENV=...): `make run` still checks it against the clone's requirements.txt, and the packages
themselves are what `make test` installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.browser import chromium
from tests.support.servers import free_port, stop, wait_healthy
from tests.system.test_page import CHROMIUM

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

ROOT = Path(__file__).resolve().parent.parent.parent
DOCS = ROOT / "docs" / "screenshots"


# what a screenshot shows, in words: the page's visible headings, table columns and buttons. Kept beside each picture
# in docs/screenshots/ (NAME.json) when it is taken; every other run compares today's page with it, so a picture
# of a page that has changed since (a column gone, a heading renamed) fails until it is taken again
DESCRIBED = """() => {
  const seen = (el) => el.offsetParent !== null || getComputedStyle(el).position === 'fixed';
  const words = (sel) => [...document.querySelectorAll(sel)].filter(seen)
    .map((el) => el.textContent.replace(/[▲▼]/g, '').replace(/\\s+/g, ' ').trim()).filter((t) => t);
  return {headings: words('h1, h2'), columns: words('#processes thead th, #fans thead th'),
          buttons: [...new Set(words('button'))].sort()};
}"""


def described(page: Page, shots: Path, name: str) -> None:
    """Writes what ``page`` shows beside its picture when the pictures are taken for docs/; else checks that the
    committed picture shows the page as it is now."""
    now = page.evaluate(DESCRIBED)
    if shots == DOCS:
        (DOCS / f"{name}.json").write_text(json.dumps(now, indent=1, ensure_ascii=False) + "\n")
        return
    committed = json.loads((DOCS / f"{name}.json").read_text())
    assert now == committed, (f"docs/screenshots/{name}.png shows another page than today's: take it again with "
                              f"FANWHY_UPDATE_SCREENSHOTS=1 (then commit it): {now} != {committed}")


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots go: docs/screenshots/ when asked for, else a temporary folder."""
    return DOCS if os.environ.get("FANWHY_UPDATE_SCREENSHOTS") == "1" else tmp_path_factory.mktemp("screenshots")

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (make test installs it when run as root)"),
    pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs git and a clone"),
]


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("newcomer") / "fanwhy"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(where)], check=True, timeout=120)
    return where


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def make(clone: Path, target: str, tmp_path: Path, **env: str) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    full = {**os.environ, "FANWHY_PORT": str(port), "XDG_DATA_HOME": str(tmp_path), "PYTHONUNBUFFERED": "1", **env}
    full.pop("FANWHY_DB", None)  # the newcomer's default history, in tmp_path
    with open(tmp_path / f"make-{target}.log", "w") as log:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen(["make", "-s", target, f"VENV={ROOT / '.venv'}"], cwd=clone, env=full, text=True,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    return proc, f"http://127.0.0.1:{port}"


def test_make_run_on_a_machine_without_a_gpu(clone: Path, browser: Browser, tmp_path: Path, shots: Path) -> None:
    if Path("/dev/nvidiactl").exists():
        pytest.skip("this machine has an NVIDIA GPU: the no-GPU first run is for machines without one")
    started = time.monotonic()
    proc, url = make(clone, "run", tmp_path)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        wait_healthy(url, timeout=45)
        page = context.new_page()
        page.goto(url)
        page.wait_for_function("() => document.body.classList.contains('no-gpu')", timeout=15_000)
        assert (page.text_content("#no-gpu-summary") or "").startswith("No GPU found")
        assert "Error" not in (page.text_content("#no-gpu-summary") or "")
        page.wait_for_function(
            "() => window.fanwhyHistory.charts['chart-host-cpu_percent'] &&"
            " window.fanwhyHistory.charts['chart-host-cpu_percent'].data[0].length >= 2",
            timeout=max(1_000, int((60 - (time.monotonic() - started)) * 1000)))
        headline = page.text_content("#headline") or ""
        assert headline and "Waiting" not in headline
        assert time.monotonic() - started < 60
        shots.mkdir(exist_ok=True)
        page.screenshot(path=str(shots / "no-gpu.png"), full_page=True)
        assert (shots / "no-gpu.png").stat().st_size > 10_000
        described(page, shots, "no-gpu")
    finally:
        context.close()
        stop(proc)
    assert (tmp_path / "fanwhy" / "history.db").exists()  # the real default history, made by make run


@pytest.mark.parametrize(("name", "width"), [("demo-desktop", 1400), ("demo-phone", 390)])
def test_the_demo_screenshots(clone: Path, browser: Browser, tmp_path: Path, shots: Path, name: str,
                              width: int) -> None:
    proc, url = make(clone, "demo", tmp_path)
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        wait_healthy(url, timeout=45)
        page = context.new_page()
        page.goto(url)
        page.wait_for_selector("#gpus .card", timeout=15_000)
        page.wait_for_function("() => window.fanwhyHistory.charts['chart-utilization_percent'] &&"
                               " window.fanwhyHistory.charts['chart-utilization_percent'].data[0].length >= 3",
                               timeout=20_000)
        shots.mkdir(exist_ok=True)
        page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
        assert (shots / f"{name}.png").stat().st_size > 10_000
        described(page, shots, name)
    finally:
        context.close()
        stop(proc)
    assert not (tmp_path / "fanwhy" / "history.db").exists()  # the demo kept to its own file
