"""No thread dies in silence (app/core/threads.py): an exception a long-lived thread did not expect is logged once
with its cause, shown in /api/health (degraded, the thread and the reason), and the thread goes on; the history
writer stores a value SQLite cannot hold as NULL and loses nothing else."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.collect.bmc import BmcSource
from app.collect.sources import SourceClock
from app.core.threads import FAULTS, spawn, supervised
from app.store.history import History
from tests.conftest import nvidia_selection
from tests.support.builders import gpu, snap


@pytest.fixture(autouse=True)
def faults() -> Iterator[None]:
    FAULTS.clear()
    yield
    FAULTS.clear()


def until(condition: Callable[[], object], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def test_a_value_sqlite_cannot_hold_is_stored_as_null_and_the_writer_goes_on(tmp_path: Path) -> None:
    """One integer of 2^64 - 1 (a sensor's all-ones) once ended the writer: every later tick was dropped."""
    history = History(tmp_path / "h.db")
    history.start()
    try:
        history.submit(snap([gpu(clock_sm_mhz=2**64 - 1)], timestamp=1000.0))
        history.submit(snap([gpu(clock_sm_mhz=1500)], timestamp=1001.0))
        assert history.flush(30)
        assert history._thread is not None and history._thread.is_alive()
    finally:
        history.close()
    rows = sqlite3.connect(tmp_path / "h.db").execute("SELECT ts, clock_sm_mhz FROM gpu_raw ORDER BY ts")
    assert rows.fetchall() == [(1000.0, None), (1001.0, 1500)]
    assert history.error is None and FAULTS.recent() == []


def test_an_unexpected_fault_in_the_history_writer_is_logged_shown_and_writing_resumes(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    history = History(tmp_path / "h.db")
    real = history._insert
    failures = [RuntimeError("a bug nobody foresaw")] * 2

    def insert(db: sqlite3.Connection, one: Any) -> None:
        if failures:
            raise failures.pop()
        real(db, one)

    monkeypatch.setattr(history, "_insert", insert)
    history.start()
    try:
        with caplog.at_level(logging.ERROR, logger="app.core.threads"):
            written: list[float] = []
            for ts in (1000.0, 1001.0):  # the second is written by the thread started again after the first fault
                written.append(ts)
                history.submit(snap([gpu()], timestamp=ts))
                until(lambda: FAULTS.recent() and FAULTS.recent()[0]["count"] == len(written))
            history.submit(snap([gpu()], timestamp=1002.0))
            assert history.flush(30)
    finally:
        history.close()
    rows = sqlite3.connect(tmp_path / "h.db").execute("SELECT ts FROM gpu_raw").fetchall()
    assert (1002.0,) in rows
    (fault,) = FAULTS.recent()
    assert fault["thread"] == "fanwhy-history" and fault["count"] == 2
    assert fault["reason"] == "RuntimeError: a bug nobody foresaw"
    logged = [r for r in caplog.records if "fanwhy-history failed" in r.getMessage()]
    assert len(logged) == 1 and logged[0].exc_info is not None  # once, with its traceback


def test_the_bmc_source_goes_on_after_an_unexpected_fault() -> None:
    answers: list[Any] = [KeyError("odd listing"), "Fan1 | 30h | ok | 7.1 | 5000 RPM\n"]
    polled = threading.Event()

    def run() -> str:
        answer = answers.pop(0) if answers else "Fan1 | 30h | ok | 7.1 | 5000 RPM\n"
        if isinstance(answer, Exception):
            raise answer
        polled.set()
        return str(answer)

    clock = SourceClock(BmcSource(run, period_s=0.05))
    try:
        assert polled.wait(30)
        until(lambda: clock.latest and clock.latest.fans)
    finally:
        clock.stop()
    assert [f["thread"] for f in FAULTS.recent()] == ["fanwhy-bmc"]  # a bug's traceback is on record


def test_a_collector_fault_outside_its_tick_is_shown_in_health_and_it_goes_on(
        make_app: Callable[..., Any], fake_nvml: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(nvidia_selection(fake_nvml), start=False, interval_s=0.05)
    collector = app.extensions["fanwhy"].collector

    class FailingOnce(threading.Event):
        """The collector's wait between ticks, outside collect()'s own guard, fails once."""

        failed = False

        def wait(self, timeout: float | None = None) -> bool:
            if not self.failed:
                self.failed = True
                raise ValueError("clock went backwards")
            return super().wait(timeout)

    monkeypatch.setattr(collector, "_wake", FailingOnce())
    collector.start()
    until(lambda: collector._wake.failed and collector.latest() is not None)
    first = collector.latest().seq
    until(lambda: collector.latest().seq > first + 2)  # collecting again
    health = app.test_client().get("/api/health").json
    assert health["status"] == "degraded"
    assert any(r.startswith("thread fanwhy-collector failed (1×") and "ValueError: clock went backwards" in r
               for r in health["reasons"]), health["reasons"]
    assert health["thread_faults"][0]["thread"] == "fanwhy-collector"


def test_a_body_that_cannot_run_twice_is_recorded_and_ends() -> None:
    runs = []

    def body() -> None:
        runs.append(1)
        raise OSError("event set gone")

    spawn(body, "fanwhy-xid-test", restart=False).join(30)
    assert runs == [1] and FAULTS.recent()[0]["reason"] == "OSError: event set gone"


def test_the_backoff_doubles_to_a_minute_and_starts_over_after_a_quiet_minute() -> None:
    now = [0.0]
    waits: list[float] = []
    ran = [0]

    def body() -> None:
        ran[0] += 1
        if ran[0] == 9:
            now[0] += 61  # ran a minute before failing
        if ran[0] < 10:
            raise RuntimeError("again")

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    supervised(body, "t", sleep=sleep, clock=lambda: now[0])
    assert waits == [1, 2, 4, 8, 16, 32, 60, 60, 1]
    assert FAULTS.recent(within_s=1e9)[0]["count"] == 9


def test_a_notifier_thread_goes_on_after_an_unexpected_fault_and_delivers_the_next_alert() -> None:
    from app.verdict.notify import Notifier
    from tests.integration.test_notify import alert

    sent: list[bytes] = []

    def post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> None:
        if not sent and not FAULTS.recent():
            raise RuntimeError("renderer bug")  # not an OSError or a ValueError: the thread's own fault
        sent.append(body)

    notifier = Notifier([("webhook", "http://127.0.0.1:9/hook")], host="gpu-box", group_s=0.05, per_minute=0,
                        retries=(), post=post)
    notifier.start()
    try:
        notifier.submit([alert(0)])
        until(lambda: FAULTS.recent())
        notifier.submit([alert(1)])
        until(lambda: sent)
    finally:
        notifier.stop()
    (fault,) = FAULTS.recent()
    assert fault["thread"] == "fanwhy-notify-webhook #1" and fault["reason"] == "RuntimeError: renderer bug"
    assert b"gpu_utilization:0:1" in sent[0]


def test_the_xid_thread_that_fails_is_recorded_and_health_says_events_are_not_read(
        make_app: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.fakes.fake_nvml import scenario

    fake = scenario("h100_load")

    def broken(event_set: object, timeout_ms: int) -> object:
        raise RuntimeError("event data out of range")

    monkeypatch.setattr(fake, "nvmlEventSetWait_v2", broken)
    app = make_app(nvidia_selection(fake), interval_s=0.05)
    until(lambda: FAULTS.recent() and app.extensions["fanwhy"].collector.latest() is not None)  # past "starting"
    health = app.test_client().get("/api/health").json
    assert health["status"] == "degraded" and health["thread_faults"][0]["thread"] == "fanwhy-xid"
    assert health["xid_events"] == "stopped after a fault (RuntimeError: event data out of range)"


def test_the_kubernetes_refresher_goes_on_after_an_unexpected_fault(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.attribution.kubernetes import KubeClient

    client = KubeClient("https://127.0.0.1:9", lambda: "token", "node", refresh_s=0.05)
    calls: list[int] = []

    def refresh() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise KeyError("metadata")  # a pod list of an odd shape, not caught where it is read

    monkeypatch.setattr(client, "refresh", refresh)
    client.start()
    try:
        until(lambda: len(calls) >= 3)
    finally:
        client.stop(wait_s=5)
    assert [f["thread"] for f in FAULTS.recent()] == ["fanwhy-kubernetes"]
