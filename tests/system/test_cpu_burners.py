"""The CPU side on real burners on this machine: one and two processes that each keep a core busy are the cause of
the answer (`fanwhy snapshot --json`, the basic backend: no GPU), named or grouped, never "Nothing is busy". Each
answer is asked for again until it shows the burners or a deadline sized for a loaded 2-core machine passes: a
busy machine slows the burners' share, not the rule. In the system tier (one test at a time): another test's
burners beside these would be part of the load they judge."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from itertools import pairwise
from typing import Any

import requests

from tests.integration.test_cli import ROOT
from tests.support.cpu import spinner

Verdict = dict[str, Any]
DUTY = "import time\nwhile True:\n    end = time.monotonic() + 0.088\n    while time.monotonic() < end: pass\n" \
    "    time.sleep(0.012)\n"  # 88 % of a core: on two cores, a machine at 44 %

DEADLINE_S = 90.0


def _answer_until(accept: Callable[[Verdict], bool]) -> Verdict:
    """The answers of `fanwhy snapshot --json --watch 1`, one a second, until one is accepted: from the third on,
    so that FanWhy's own start-up is out of the machine's CPU average."""
    deadline, last = time.monotonic() + DEADLINE_S, {"headline": "(none)"}
    watch = subprocess.Popen([sys.executable, "-m", "app", "snapshot", "--json", "--watch", "1"], cwd=ROOT, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             env={**os.environ, "FANWHY_DB": "none", "FANWHY_BACKEND": "basic"})
    try:
        assert watch.stdout is not None
        for n, line in enumerate(watch.stdout):
            last = json.loads(line)["verdict"]
            if n >= 2 and accept(last):
                return last
            if time.monotonic() > deadline:
                break
    finally:
        watch.kill()
        watch.wait()
        if watch.stdout is not None:
            watch.stdout.close()
    raise AssertionError(f"no answer named the burners in {DEADLINE_S:.0f} s; the last: {last['headline']}")


def _names(pid: int) -> Callable[[Verdict], bool]:
    def names_it(verdict: Verdict) -> bool:
        cpu = [c for c in verdict["causes"] if c["kind"] == "cpu_load"]
        return bool(cpu) and cpu[0]["pid"] == pid
    return names_it


def test_one_burner_is_the_cause_and_is_named() -> None:
    with spinner() as burner:
        verdict = _answer_until(_names(burner.pid))
    assert "`python" in verdict["headline"] and "% of a core" in verdict["headline"], verdict["headline"]
    assert not verdict["headline"].startswith("Nothing is busy")


def test_a_process_at_most_of_a_core_is_a_cause_under_the_machines_average_of_50() -> None:
    """88 % of one core is under half of a 2-core machine, and still a core's worth of heat."""
    with spinner(code=DUTY) as burner:
        verdict = _answer_until(_names(burner.pid))
    assert "keeps one of the CPU's" in verdict["headline"] or "because of" in verdict["headline"], \
        verdict["headline"]


def test_as_many_burners_as_cores_are_the_cause() -> None:
    cores = os.cpu_count() or 1
    with ExitStack() as stack:
        pids = {stack.enter_context(spinner(str(i))).pid for i in range(min(cores, 2))}

        def cpu_leads(verdict: Verdict) -> bool:
            cpu = [c for c in verdict["causes"] if c["kind"] == "cpu_load"]
            return bool(cpu) and (cpu[0]["pid"] in pids or "spread over" in verdict["headline"])
        verdict = _answer_until(cpu_leads)
    assert not verdict["headline"].startswith("Nothing is busy"), verdict["headline"]


def _duty(low: float, high: float = 0.0, every_s: float = 3.0) -> str:
    """A burner at ``low`` of a core, or alternating between ``low`` and ``high`` every ``every_s`` seconds."""
    high = high or low
    return ("import time\nwhile True:\n"
            f"    share = {low} if int(time.monotonic() / {every_s}) % 2 == 0 else {high}\n"
            "    end = time.monotonic() + 0.1 * share\n    while time.monotonic() < end: pass\n"
            "    time.sleep(0.1 * (1 - share))\n")


def _form(verdict: Verdict) -> tuple[str, object]:
    """The form of a CPU answer: whom it names and how, without its numbers."""
    cpu = next((c for c in verdict["causes"] if c["kind"] == "cpu_load"), {"pid": None})
    for form in ("because of", "keeps one of", "spread over many", "spread over", "Nothing is busy"):
        if form in verdict["headline"]:
            return form, cpu["pid"]
    return verdict["headline"], cpu["pid"]


def test_a_steady_load_near_the_naming_threshold_keeps_one_headline_form_for_60_s() -> None:
    """Two burners on a 2-core machine at 52-65 %: one at 55 % of a core, one moving between 50 and 75 % every 3 s,
    so the busiest holds about half the load, where a name is given or withheld, and which one is busiest changes.
    Read each second for 60 s, the answer keeps one form and one name (named once, it stays named while it keeps
    its share); the first two answers, FanWhy's own start-up in them, are not read."""
    forms: list[tuple[str, object]] = []
    with ExitStack() as stack:
        for code in (_duty(0.55), _duty(0.5, 0.75)):
            stack.enter_context(spinner(code=code))
        start = time.monotonic()

        def collect(verdict: Verdict) -> bool:
            forms.append(_form(verdict))
            return time.monotonic() - start >= 60.0 and len(forms) >= 30
        _answer_until(collect)
    changes = [(n, a, b) for n, (a, b) in enumerate(pairwise(forms)) if a != b]
    assert changes == [], (len(forms), changes)


def _shape(headline: str) -> str:
    """A headline without its numbers, its code marks or its line breaks: what must hold while the load holds."""
    return re.sub(r"\d[\d.,]*", "#", " ".join(headline.replace("`", "").split()))


def test_the_page_the_api_and_top_keep_one_headline_for_60_s() -> None:
    """A load whose machine average crosses the 50 % line every 3 s, served (the basic backend: no GPU) and read each
    second in three places at once: `/api/gpu/summary`, the page in Chromium and `fanwhy top --server` in a
    pseudo-terminal. Each keeps one headline (numbers aside) over 60 s, and the three say the same."""
    from tests.support.browser import chromium
    from tests.support.servers import free_port, start_server, stop, wait_healthy
    from tests.system.test_top import top

    token = "7d3e9a1c5b8f4e2a9c6d0b1e3f5a7c9e"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start_server(port, FANWHY_BACKEND="basic", FANWHY_INTERVAL="1", FANWHY_TOKEN=token)
    seen: dict[str, list[str]] = {"api": [], "page": [], "top": []}
    facts: list[object] = []  # the CPU cause's numbers behind each API headline: what a change rested on
    try:
        wait_healthy(url, headers={"Authorization": f"Bearer {token}"})
        with ExitStack() as stack:
            # the machine moves between about 45 % and 60 % every 3 s: under the 50 % that makes the CPU a cause,
            # over the 40 % a cause holds its place down to; the one named (75 % of a core, under the 80 % that makes
            # a core's worth a cause on its own) keeps most of the load throughout: its facts hold. (With the named
            # one halving its own use instead, a full run once named the group: the facts behind the name changed.)
            for code in (_duty(0.75), _duty(0.15, 0.45)):
                stack.enter_context(spinner(code=code))
            browser = stack.enter_context(chromium())
            page = browser.new_page()
            page.goto(f"{url}/?token={token}")
            page.wait_for_selector("#connection.pill-ok", timeout=30_000)
            tui = stack.enter_context(top("--server", url, cols=200, env={"FANWHY_TOKEN": token}))
            tui.wait(lambda t: "PID" in t)
            # not read: the first answers, with the start-up of the server, Chromium and top in the machine's CPU (a
            # first run read "spread over many processes" for 4 s while they started, then the burners)
            time.sleep(10)
            start = time.monotonic()
            while time.monotonic() - start < 60:
                summary = requests.get(f"{url}/api/gpu/summary", headers={"Authorization": f"Bearer {token}"},
                                       timeout=10).json()
                seen["api"].append(_shape(summary["verdict"]["headline"]))
                facts.append(next((c.get("numbers") for c in summary["verdict"].get("causes", [])
                                   if c.get("kind") == "cpu_load"), None))
                seen["page"].append(_shape(page.text_content("#headline") or ""))
                tui.pump()
                lines = tui.screen.display[1:4]
                seen["top"].append(_shape(" ".join(line for line in lines if not line.startswith("CPU "))))
                time.sleep(1)
    finally:
        stop(server)
    for where, shapes in seen.items():
        changes = [(n, a, b) for n, (a, b) in enumerate(pairwise(shapes)) if a != b]
        around = [facts[max(n - 1, 0):n + 3] for n, _, _ in changes] if where == "api" else []
        assert len(shapes) >= 30 and changes == [], (where, changes, around)
    assert seen["api"][-1] == seen["page"][-1] and seen["top"][-1].startswith(seen["api"][-1][:60]), seen
