"""Every process in reach: ``/api/gpu/processes`` lists every process of this machine (not only the snapshot's five
busiest CPU users), honours ``limit`` up to its ceiling and pages with ``offset``, on real processes of this machine."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.attribution.listing import CEILING
from app.attribution.processes import ProcessInspector
from tests.fakes.fake_nvml import H200_LOAD_PID
from tests.support.builders import snap
from tests.support.children import start_sleeping
from tests.support.cpu import Share, spinner

SLEEPERS = 12


@pytest.fixture
def sleepers() -> Iterator[list[int]]:
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for i in range(SLEEPERS):
            procs.append(start_sleeping(f"sleeper-{i}", seconds=600))
        yield [p.pid for p in procs]
    finally:
        for p in procs:
            p.kill()
            p.wait()


def every_pid() -> set[int]:
    """The programs of this machine now (kernel threads have no command line)."""
    found = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if f.read(1):
                        found.add(int(name))
            except OSError:
                pass
    return found


def test_every_process_is_listed_beyond_the_snapshots_five(client: Any, sleepers: list[int]) -> None:
    before = every_pid()
    body = client.get(f"/api/gpu/processes?kind=all&limit={CEILING}").get_json()
    after = every_pid()
    listed = {p["pid"] for p in body["processes"]}
    assert body["count"] == len(body["processes"]) > 5 + SLEEPERS
    assert set(sleepers) <= listed and H200_LOAD_PID in listed  # every other process, and the snapshot's GPU user
    assert (before & after) - listed <= {os.getpid()}  # what lived through the call is there (kernel threads aside)
    row = next(p for p in body["processes"] if p["pid"] == sleepers[3])
    assert row["command"].endswith("sleeper-3") and row["user"] and row["status"] == "ok" and row["rss_bytes"] > 0
    assert body["next"] is None


def _walk(client: Any) -> list[int]:
    pages: list[int] = []
    offset: int | None = 0
    while offset is not None:
        body = client.get(f"/api/gpu/processes?kind=cpu&sort=pid&limit=7&offset={offset}").get_json()
        assert len(body["processes"]) <= 7 and body["offset"] == offset
        pages.extend(p["pid"] for p in body["processes"])
        offset = body["next"]
    return pages


def test_pages_are_disjoint_and_cover_the_listing(client: Any, sleepers: list[int]) -> None:
    """Each page is read from a fresh scan, as offset paging over live processes must be: a process below the
    offset that ends between two pages shifts the rest down one, so one row goes unseen. The walk is judged strictly
    when no process ended while it ran (tried a few times: other tests start and end processes), else no more rows
    are missed than processes ended."""
    for _ in range(8):
        before = every_pid()
        pages = _walk(client)
        ended = len(before - every_pid())
        assert pages == sorted(pages) and len(pages) == len(set(pages))  # by PID, nothing twice
        assert H200_LOAD_PID not in pages  # kind=cpu: no GPU user
        missed = set(sleepers) - set(pages)
        if ended == 0:
            assert not missed
            return
        assert len(missed) <= ended


def test_a_burner_is_placed_by_its_own_share_in_the_cpu_sort() -> None:
    """The CPU sort puts a burner where its own share places it: first on an idle machine, below only processes
    that burn as much on a busy one (beside four busy loops, or other tests, it is not among the first three, and
    that is right); its share is its own, measured against this listing's baseline."""
    from app.attribution.listing import ProcessListing

    inspector = ProcessInspector()
    inspector.collect(())  # the scan: the baseline the listing measures against
    listing = ProcessListing(inspector)
    with spinner("listing-burner") as burner:
        share = Share(burner.pid)
        listing.page(snap([]), "cpu", "cpu", 0, 1)  # this listing's own baseline
        time.sleep(1.5)
        count, rows = listing.page(snap([]), "cpu", "cpu", 0, 100_000)
        truth = share.percent()
    assert count > 3 and len(rows) == count and burner.pid in [r.pid for r in rows]
    at = next(n for n, r in enumerate(rows) if r.pid == burner.pid)
    row = rows[at]
    assert row.cpu_percent is not None and abs(row.cpu_percent - truth) < 25, (row.cpu_percent, truth)
    assert all((r.cpu_percent or 0.0) >= row.cpu_percent for r in rows[:at]), [r.cpu_percent for r in rows[:at + 1]]
    assert all((r.cpu_percent or 0.0) <= row.cpu_percent for r in rows[at + 1:])
    assert row.command is not None and row.command.endswith("listing-burner")


@pytest.mark.parametrize(("query", "message"), [
    (f"limit={CEILING + 1}", "invalid limit"),
    ("offset=-1", "invalid offset"),
    ("offset=x", "invalid offset"),
])
def test_bad_paging_is_a_400(client: Any, query: str, message: str) -> None:
    response = client.get(f"/api/gpu/processes?{query}")
    assert response.status_code == 400 and message in response.get_json()["error"]


def test_an_offset_past_the_end_is_an_empty_page(client: Any) -> None:
    body = client.get("/api/gpu/processes?offset=1000000").get_json()
    assert body["processes"] == [] and body["count"] > 0 and body["next"] is None


def test_any_process_can_be_looked_up_with_its_whole_masked_command(client: Any) -> None:
    secret = "hunter2-" + "x" * 20
    long_tail = "a" * 5000
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "--password", secret, long_tail])
    try:
        deadline = time.monotonic() + 30
        while not Path(f"/proc/{proc.pid}/cmdline").read_bytes().endswith(long_tail.encode() + b"\0"):
            assert time.monotonic() < deadline, "the process never ran its command"
            time.sleep(0.05)
        one = client.get(f"/api/gpu/processes/{proc.pid}").get_json()
        assert one["pid"] == proc.pid and one["status"] == "ok"
        assert one["command_full"].endswith(long_tail) and secret not in one["command_full"]
        assert secret not in one["command"] and len(one["command"]) < len(one["command_full"])
    finally:
        proc.kill()
        proc.wait()
    assert client.get(f"/api/gpu/processes/{proc.pid}").status_code == 404  # it ended
