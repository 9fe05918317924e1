"""History: write, read, downsample, retention, size cap, corruption, a full disk, kill -9, recordings."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import requests

from app.application import receipt_meter
from app.core.jsonvalue import Json
from app.store.history import History
from app.store.historyfile import HistoryFile
from app.store.queries import HistoryError
from app.store.recordings import Recorder
from app.store.schema import ForeignFile, ownership
from app.verdict.changes import VerdictChanges
from tests.fakes.fake_nvml import H200_LOAD_PID
from tests.support.history import GIB, T0, Clock, feed, snap  # GIB: for the tests below
from tests.support.servers import free_port, start_server, stop, wait_for, wait_healthy


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def history(tmp_path: Path, clock: Clock) -> Any:
    h = History(tmp_path / "h.db", retention_hours=24, clock=clock, keep=VerdictChanges().row).open()
    yield h
    h.close()


def test_write_and_read_at_full_rate(history: History, clock: Clock) -> None:
    feed(history, clock, 120)
    win = history.window(T0 + 60, T0 + 70, step=1)
    assert win.source == "raw"
    points = history.gpu_series(0, "utilization_percent", win)
    assert [p[0] for p in points] == [T0 + 60 + i for i in range(11)]
    assert [p[1] for p in points] == [60 + i for i in range(11)]


def test_a_step_buckets_with_mean_min_max(history: History, clock: Clock) -> None:
    feed(history, clock, 60)
    points = history.gpu_series(0, "utilization_percent", history.window(T0, T0 + 59, step=10))
    assert points[0] == [T0, 4.5, 0, 9]
    assert len(points) == 6


def test_a_stretch_with_no_sample_is_a_gap_not_a_slope(history: History, clock: Clock) -> None:
    """FanWhy stopped for 209 s: the series says so (a point of nulls where the stretch starts, and the stretch in
    ``gaps``) instead of a line drawn from the last sample to the next. Samples a second apart are no gap."""
    from app.store.queries import gapped, gaps

    feed(history, clock, 60, util=lambda t: 10)
    feed(history, clock, 60, util=lambda t: 90, start=T0 + 59 + 209)
    win = history.window(T0, T0 + 59 + 209 + 59, step=1, interval_s=1)
    points = history.gpu_series(0, "utilization_percent", win)
    marked = gapped(points, win)
    assert len(marked) == len(points) + 1
    hole = next(i for i, p in enumerate(marked) if p[1] is None)
    assert marked[hole] == [T0 + 60, None, None, None] and marked[hole - 1][1] == 10 and marked[hole + 1][1] == 90
    assert gaps(points, win) == [[T0 + 60, T0 + 59 + 209]]
    steady = history.window(T0, T0 + 59, step=1, interval_s=1)
    assert gaps(history.gpu_series(0, "utilization_percent", steady), steady) == []
    coarse = history.window(T0, T0 + 59 + 209 + 59, step=5, interval_s=1)  # buckets of 5 s: 15 s is the gap
    assert gaps(history.gpu_series(0, "utilization_percent", coarse), coarse) == [[T0 + 60, T0 + 265]]


def test_minutes_are_rolled_up_and_raw_rows_trimmed_after_an_hour(history: History, clock: Clock) -> None:
    feed(history, clock, 2 * 3600 + 120, util=lambda t: float(t // 60 % 2) * 100, every=4)  # 0/100 each minute
    with history.reader() as db:
        assert db.execute("SELECT min(ts) FROM gpu_raw").fetchone()[0] >= clock.now - 3600 - 60
        minutes = db.execute("SELECT count(*) FROM gpu_minute").fetchone()[0]
    assert minutes == 2 * 60 + 1  # every complete minute
    win = history.window(T0, T0 + 600, step=None)
    assert win.source == "minute" and win.step == 60
    points = history.gpu_series(0, "utilization_percent", win)
    assert [p[1] for p in points[:4]] == [0.0, 100.0, 0.0, 100.0]
    assert points[1][2:] == [100.0, 100.0]
    step300 = history.gpu_series(0, "utilization_percent", history.window(T0, T0 + 600, step=300))
    assert step300[0][1:] == [40.0, 0.0, 100.0]  # 5 minutes: 0,100,0,100,0 -> mean 40


def test_the_host_has_series_of_its_own_even_without_a_gpu(history: History, clock: Clock) -> None:
    span = 2 * 3600 + 120  # a sample every 4 s, then every second for the last 10 s (the raw rows read below)
    feed(history, clock, span - 10, util=lambda t: float(t // 60 % 2) * 100, gpus=False, every=4)
    feed(history, clock, 10, util=lambda t: float((t + span - 10) // 60 % 2) * 100, gpus=False, start=T0 + span - 10)
    raw = history.host_series("cpu_percent", history.window(clock.now - 5, clock.now, step=1))
    assert len(raw) == 6 and {p[1] for p in raw} <= {0.0, 50.0}
    minutes = history.host_series("cpu_percent", history.window(T0, T0 + 600, step=None))
    assert [p[1] for p in minutes[:4]] == [0.0, 50.0, 0.0, 50.0]  # rolled up per minute, then raw rows trimmed
    assert [p[1] for p in history.host_series("fan_rpm", history.window(T0, T0 + 120, step=60))][:2] == [1000, 2000]
    assert history.host_series("memory_percent", history.window(T0, T0 + 60, step=60))[0][1] == 25.0
    assert history.host_series("load1", history.window(T0 + 60, T0 + 119, step=60))[0][1] == 2.0
    with pytest.raises(HistoryError, match="cpu_percent, load1"):
        history.host_series("utilization_percent", history.window(T0, T0 + 60, step=60))


def test_each_fan_has_its_series_raw_then_per_minute(history: History, clock: Clock) -> None:
    """A fan's speed and the temperature it follows, kept like a GPU's: raw for the raw horizon, then per minute."""
    feed(history, clock, 2 * 3600 + 120, util=lambda t: float(t // 60 % 2) * 100, every=4)
    fan = "hwmon:it8720/fan1"
    minutes = history.fan_series(fan, "rpm", history.window(T0, T0 + 180, step=60))
    assert [p[1] for p in minutes[:3]] == [1000.0, 2000.0, 1000.0]
    source = history.fan_series(fan, "source_c", history.window(T0, T0 + 120, step=60))
    assert [p[1] for p in source[:2]] == [40.0, 50.0]
    raw = history.fan_series(fan, "rpm", history.window(clock.now - 8, clock.now, step=1))
    assert raw and all(p[1] in (1000.0, 2000.0) for p in raw)
    assert history.fan_series("hwmon:it8720/fan9", "rpm", history.window(T0, T0 + 120, step=60)) == []
    with pytest.raises(HistoryError, match="rpm, percent, source_c"):
        history.fan_series(fan, "utilization_percent", history.window(T0, T0 + 60, step=60))
    with history.reader() as db:
        assert db.execute("SELECT min(ts) FROM fan_raw").fetchone()[0] >= clock.now - 3600 - 60  # trimmed


def test_retention_drops_old_minutes(history: History, clock: Clock) -> None:
    feed(history, clock, 180)
    feed(history, clock, 120, start=T0 + 25 * 3600)  # a day later: past the 24 h retention
    with history.reader() as db:
        oldest = db.execute("SELECT min(minute) FROM gpu_minute").fetchone()[0]
    assert oldest >= clock.now - 24 * 3600


def test_the_size_cap_drops_the_oldest_data(tmp_path: Path, clock: Clock) -> None:
    empty = History(tmp_path / "empty.db", clock=clock).open()
    with empty.reader() as db:
        base = db.execute("PRAGMA page_count").fetchone()[0] * db.execute("PRAGMA page_size").fetchone()[0]
    empty.close()
    cap = base + 48 * 1024
    history = History(tmp_path / "h.db", retention_hours=1000, max_bytes=cap, clock=clock).open()
    try:
        feed(history, clock, 12 * 3600, every=30)  # 12 hours, a sample every 30 s: 720 minutes
        with history.reader() as db:
            first, last = db.execute("SELECT min(minute), max(minute) FROM gpu_minute").fetchone()
            pages, size, free = (db.execute(f"PRAGMA {p}").fetchone()[0]
                                 for p in ("page_count", "page_size", "freelist_count"))
        assert first > T0 + 3600  # the oldest data went first
        assert last >= clock.now - 120  # the newest stayed
        assert (pages - free) * size <= cap + 64 * 1024  # within one trim of the cap
    finally:
        history.close()


def test_bad_windows_are_refused(history: History) -> None:
    for since, until, step, words in [(T0, T0 - 1, 1, "before"), (T0 - 30 * 86400, T0, 3600, "retention"),
                                      (T0 - 3600, T0, 0.01, "more than"), (T0 - 60, T0, -1, "positive")]:
        with pytest.raises(HistoryError, match=words):
            history.window(since, until, step)
    with pytest.raises(HistoryError, match="unknown metric"):
        history.gpu_series(0, "fan; DROP TABLE gpu_raw", history.window(T0 - 60, T0, 1))


def test_process_and_container_series(history: History, clock: Clock) -> None:
    feed(history, clock, 30, pid=42, sm=80.0)
    points = history.process_series("sm_percent", history.window(T0, T0 + 29, step=10), pid=42)
    assert [p[1] for p in points] == [80.0, 80.0, 80.0]


def test_a_corrupt_history_is_moved_aside_and_a_new_one_started(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    History(path).open().close()
    with open(path, "r+b") as handle:  # its pages broken, its header (whose file it is) intact
        handle.seek(100)
        handle.write(b"this is not a database" * 100)
    assert ownership(path) == "ours"
    history = History(path).open()
    try:
        assert history.moved_aside is not None and history.moved_aside.exists()
        assert history.moved_aside.read_bytes()[100:].startswith(b"this is not a database")
        assert history.integrity() == "ok" and ownership(path) == "ours"
    finally:
        history.close()


@pytest.mark.parametrize("content", [b"this is not a database" * 100, b"SQLite format 3\x00" + b"\x00" * 52
                                     + (1234).to_bytes(4, "big") + b"\x00" * 28])
def test_another_programs_file_is_never_moved_or_written(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "h.db"
    path.write_bytes(content)
    with pytest.raises(ForeignFile, match="not a FanWhy history"):
        History(path).open()
    assert path.read_bytes() == content and sorted(p.name for p in tmp_path.iterdir()) == ["h.db"]


def test_a_full_disk_is_recorded_and_writing_goes_on_afterwards(history: History, clock: Clock,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    feed(history, clock, 5)
    assert history._write is not None
    pages = history._write.execute("PRAGMA page_count").fetchone()[0]
    connect = HistoryFile.connect

    def full(self: HistoryFile) -> sqlite3.Connection:  # SQLite's own "database or disk is full", on every
        connection = connect(self)                  # connection: the writer reconnects while failing
        connection.execute(f"PRAGMA max_page_count = {pages}")
        return connection

    monkeypatch.setattr(HistoryFile, "connect", full)
    history._write.execute(f"PRAGMA max_page_count = {pages}")
    feed(history, clock, 2000, start=T0 + 10)
    assert history.write_failures > 0 and "full" in (history.error or "")
    assert (history.error or "").count("history write failed") == 1
    monkeypatch.setattr(HistoryFile, "connect", connect)  # space again: the next reconnect writes
    feed(history, clock, 10, start=T0 + 3000)
    assert history.error is None
    assert "history was not writable; reopened" in history.recent_faults()


def test_recording_statistics_match_hand_computed_values(tmp_path: Path, clock: Clock) -> None:
    history = History(tmp_path / "h.db", clock=clock).open()
    history.start()
    recorder = Recorder(history, receipt_meter)
    try:
        recorder.start("r1", "train", [0], 2.0, T0)
        for t, util in enumerate([10, 20, 30, 40, 50, 60]):  # sampled every 2 s: 10, 30, 50
            history.submit(snap(T0 + t, util, temp=40 + t))
        result = recorder.stop("r1", T0 + 6)
    finally:
        history.close()
    assert result["sample_count"] == 3 and result["duration_s"] == 6.0 and result["state"] == "stopped"
    assert result["gpu_stats"] is not None
    stats = result["gpu_stats"]["0"]
    assert stats["samples"] == 3
    assert stats["utilization_percent"] == {"min": 10.0, "max": 50.0, "mean": 30.0}
    assert stats["temperature_c"] == {"min": 40.0, "max": 44.0, "mean": 42.0}
    # and its receipt, from every tick (not only the sampled ones): 5 one-second steps after the first snapshot
    receipt = result["receipt"]
    assert isinstance(receipt, dict) and receipt["seconds"] == 5.0
    gpus = receipt["gpus"]
    assert isinstance(gpus, dict) and gpus["0"]["peak_temperature_c"] == 45.0  # tick 5: no sample, but counted
    assert stats["power_w"] == {"min": 110.0, "max": 150.0, "mean": 130.0}
    assert stats["memory_percent"] == {"min": 25.0, "max": 25.0, "mean": 25.0}
    assert stats["memory_used_bytes"]["max"] == GIB


def test_kill_9_while_writing_then_restart(tmp_path: Path) -> None:
    """A real server killed with SIGKILL mid-write: the file is intact and holds the data up to the last flush."""
    db = tmp_path / "history.db"
    port = free_port()
    proc = start_server(port, FANWHY_DB=str(db), FANWHY_INTERVAL="0.1")
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url)

        def written_ticks() -> int:
            return int(requests.get(f"{url}/api/health", timeout=5).json()["history"]["written_ticks"])

        wait_for(lambda: written_ticks() > 5)
        written = written_ticks()
        seen = requests.get(f"{url}/api/gpu/metrics", timeout=5).json()["timestamp"]
        wait_for(lambda: written_ticks() >= written + 3)  # what the API showed is committed by now
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        stop(proc)
    assert written > 5
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        newest = connection.execute("SELECT max(ts) FROM gpu_raw").fetchone()[0]
        rows = connection.execute("SELECT count(DISTINCT ts) FROM gpu_raw").fetchone()[0]
    assert newest >= seen - 0.2  # at most one interval behind what the API showed before the kill
    assert rows >= written
    port = free_port()
    again = start_server(port, FANWHY_DB=str(db))
    try:
        health = wait_healthy(f"http://127.0.0.1:{port}")
        assert health["history"]["moved_aside"] is None and health["history"]["error"] is None
        body = requests.get(f"http://127.0.0.1:{port}/api/gpu/history?gpu=0&since=-10m&step=0.1",
                            timeout=5).json()
        assert body["source"] == "raw" and len(body["points"]) >= written  # the first run's data is there
    finally:
        stop(again)


def test_a_second_fanwhy_on_the_same_history_is_refused_with_one_line(tmp_path: Path) -> None:
    """Two servers on one history file would interleave their pasts: the second is refused at start (exit 2, one
    line naming the first's PID and what to do), the first goes on; once the first ends, the file is free again."""
    from app.store.lock import HistoryInUse

    db = tmp_path / "history.db"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    first = start_server(port, FANWHY_DB=str(db))
    try:
        wait_healthy(url)
        second = start_server(free_port(), FANWHY_DB=str(db))
        out, _ = second.communicate(timeout=120)
        lines = [line for line in out.splitlines() if line.strip()]
        assert second.returncode == 2, out
        assert len(lines) == 1 and "another FanWhy (PID" in lines[0] and "FANWHY_DB" in lines[0], out
        with pytest.raises(HistoryInUse):  # the worker's own open, should one start between the check and it
            History(db).open()
        from app.collect.assemble import open_history
        from app.collect.settings import Settings

        assert open_history(Settings(db=str(db))) is None  # that worker serves without a history, saying why
        assert requests.get(f"{url}/api/health", timeout=5).status_code == 200
    finally:
        stop(first)
    History(db).open().close()  # free once the first has ended


def test_history_endpoints_and_their_errors(make_app: Any, fake_nvml: Any) -> None:
    from tests.conftest import nvidia_selection

    app = make_app(nvidia_selection(fake_nvml), start=False)
    fanwhy = app.extensions["fanwhy"]
    for _ in range(3):
        fanwhy.history.write([fanwhy.collector.collect().snapshot])
    client = app.test_client()
    body = client.get("/api/gpu/history?gpu=1&metric=power_w&since=-5m&step=1").get_json()
    assert body["source"] == "raw" and body["columns"] == ["t", "mean", "min", "max"] and body["points"]
    assert body["points"][-1][1] == pytest.approx(693.481)
    by_pid = client.get(f"/api/gpu/history?pid={H200_LOAD_PID}&metric=sm_percent&since=-5m").get_json()
    assert by_pid["points"][-1][1] == 98.0
    host = client.get("/api/gpu/history?host=1&metric=memory_used_bytes&since=-5m&step=1").get_json()
    assert host["host"] is True and host["points"] and host["points"][-1][1] > 0
    for url, words in [
        ("/api/gpu/history?host=1&metric=power_w", "unknown metric"),
        ("/api/gpu/history?host=1&gpu=0", "exactly one"),
        ("/api/gpu/history?gpu=0&metric=nope", "unknown metric"),
        ("/api/gpu/history?gpu=0&since=-1h&until=-2h", "before"),
        ("/api/gpu/history?gpu=0&since=-30d", "retention"),
        ("/api/gpu/history?gpu=0&since=-1h&step=0.01", "more than"),
        ("/api/gpu/history?gpu=0&since=yesterday", "invalid since"),
        ("/api/gpu/history?gpu=0&step=-5", "invalid step"),
        ("/api/gpu/history?gpu=0&pid=3", "exactly one"),
        ("/api/gpu/history", "exactly one"),
        ("/api/gpu/history?gpu=x", "invalid gpu"),
    ]:
        response = client.get(url)
        assert response.status_code == 400, url
        assert words in response.get_json()["error"], (url, response.get_json())


def test_recording_endpoints(make_app: Any, fake_nvml: Any) -> None:
    from tests.conftest import nvidia_selection

    app = make_app(nvidia_selection(fake_nvml))
    client = app.test_client()
    app.extensions["fanwhy"].collector.wait_frame(0, timeout=5)
    started = client.post("/api/recordings", json={"label": "job", "gpus": [1], "interval": 0.1})
    assert started.status_code == 201
    rec = started.get_json()
    assert rec["state"] == "recording" and rec["gpus"] == [1] and rec["label"] == "job"
    # asked 10 times a second: within the server's 30 a second per client, however long the samples take
    wait_for(lambda: client.get(f"/api/recordings/{rec['id']}").get_json()["sample_count"] >= 3, every=0.1)
    stopped = client.post(f"/api/recordings/{rec['id']}/stop").get_json()
    assert stopped["state"] == "stopped" and stopped["sample_count"] >= 3
    assert list(stopped["gpu_stats"]) == ["1"]
    assert stopped["gpu_stats"]["1"]["utilization_percent"]["max"] == 98.0
    assert client.get(f"/api/recordings/{rec['id']}").get_json()["gpu_stats"] == stopped["gpu_stats"]
    assert [r["id"] for r in client.get("/api/recordings").get_json()["recordings"]] == [rec["id"]]
    for body, status, words in [
        ({"gpus": [7]}, 404, "no GPU 7"), ({"gpus": "all"}, 400, "invalid gpus"), ({"interval": 0}, 400, "interval"),
        ({"interval": "fast"}, 400, "interval"), ({"colour": 1}, 400, "unknown field"), ([1, 2], 400, "JSON object"),
        ({"label": "x" * 500}, 400, "label"),
    ]:
        response = client.post("/api/recordings", json=body)
        assert response.status_code == status and words in response.get_json()["error"], body
    bad = client.post("/api/recordings", data="{not json", content_type="application/json")
    assert bad.status_code == 400 and "JSON" in bad.get_json()["error"]
    assert client.post("/api/recordings/nope/stop").status_code == 404
    assert client.get("/api/recordings/nope").status_code == 404


def test_while_you_were_away(history: History, clock: Clock) -> None:
    from app.verdict.explain import explain

    for t in range(600):
        clock.now = T0 + t
        busy = 100 <= t < 400
        base = snap(clock.now, 95 if busy else 0, pid=42 if busy else None, sm=95 if busy else 0)
        history.write([__import__("dataclasses").replace(base, verdict=explain(base))])
    rows = history.verdicts(T0, T0 + 600)
    assert rows[0][1].startswith("Nothing is busy") and any("keeps 95 %" in r[1] for r in rows)
    top = history.top_processes(T0, T0 + 600)
    assert top[0]["pid"] == 42 and top[0]["energy_wh"] == pytest.approx(299.0)
    assert top[0]["name"] == "python train.py"  # "Most GPU energy" names the job, not the interpreter
    assert json.loads(json.dumps(top))  # JSON-ready


def test_the_python_helper_records_a_block(live_server: Any) -> None:
    from app.client import FanWhyError, record

    live_server.collector.wait_frame(0, timeout=5)
    with record("block", gpus=[1], interval=0.1, url=live_server.url) as rec:
        wait_for(lambda: requests.get(f"{rec.url}/api/recordings/{rec.id}", timeout=5).json()["sample_count"] >= 2)
    assert rec.result["state"] == "stopped" and rec.result["label"] == "block"
    assert rec.result["sample_count"] >= 2 and rec.result["gpu_stats"]["1"]["utilization_percent"]["mean"] == 98.0
    with pytest.raises(FanWhyError, match="404 no GPU 9"), record("x", gpus=[9], url=live_server.url):
        pass


def test_while_you_were_away_merges_each_cause_into_one_line(tmp_path: Path) -> None:
    """Ten minutes recorded: a training run on GPU 0, then a CPU load that moves between six worker PIDs of one
    program at 80-100 %, then idle. One line per cause, with its total time and peak, busiest first."""
    from dataclasses import replace

    from app.verdict.away import group
    from app.verdict.explain import explain
    from tests.support.builders import gpu as egpu
    from tests.support.builders import proc as eproc
    from tests.support.builders import snap as esnap

    clock = Clock()
    history = History(tmp_path / "h.db", clock=clock, keep=VerdictChanges().row).open()
    try:
        for t in range(600):
            clock.now = T0 + t
            if t < 300:
                s = esnap([egpu(util=90 + t % 6, temp=70, power=300)], [eproc(42, "python3 train.py", sm=90)],
                          timestamp=clock.now)
            elif t < 420:
                worker = eproc(100 + t % 6, "python3 -m worker --shard 3", user="bob", gpu_index=None,
                               cpu=80 + t % 21)
                s = esnap([egpu(util=0)], [worker], cpu=80 + t % 21, timestamp=clock.now)
            else:
                s = esnap([egpu(util=0)], timestamp=clock.now)
            history.write([replace(s, verdict=explain(s))])
        lines = group(history.verdicts(T0, T0 + 600), T0 + 600)
    finally:
        history.close()
    assert [line["sentence"] for line in lines] == [
        "GPU 0: `python3 train.py` (alice) kept it busy",
        "The CPU: `python3 -m worker` (bob) kept it busy",
        "Nothing was busy",
    ]
    assert [round(line["seconds"]) for line in lines] == [300, 120, 180]
    assert lines[0]["peak"] == 95 and lines[0]["unit"] == "%" and lines[1]["peak"] == 100
    assert lines[1]["headline"].startswith("No GPU is busy: the CPU is at")


def test_while_you_were_away_fits_a_screen() -> None:
    from app.verdict.away import SCREENFUL, group

    rows: list[tuple[float, str, dict[str, Json]]] = [
        (float(t), f"GPU {t}", {"busy": True, "cause": {"kind": "gpu_load", "gpu": t, "who": None}}) for t in range(20)]
    lines = group(rows, 20.0)
    assert len(lines) == SCREENFUL and all(line["seconds"] == 1.0 for line in lines)


def test_most_gpu_energy_groups_a_program_restarted_under_a_new_pid(history: History, clock: Clock) -> None:
    """The job ran as PID 42, then (restarted) as PID 43: one line, its energy summed, not two half-lines."""
    from app.verdict.explain import explain

    for t in range(400):
        clock.now = T0 + t
        pid = None if t < 100 else 42 if t < 250 else 43
        base = snap(clock.now, 95 if pid else 0, pid=pid, sm=95 if pid else 0)
        history.write([__import__("dataclasses").replace(base, verdict=explain(base))])
    (top,) = history.top_processes(T0, T0 + 400)
    assert (top["name"], top["pid"], top["pids"]) == ("python train.py", 43, 2)
    assert top["energy_wh"] == pytest.approx(149.0 + 149.0)


def test_while_you_were_away_writes_a_fan_cause_in_full() -> None:
    from app.verdict.away import group

    said = ("The cpu_fan (it8720 fan1) runs at 2,000 RPM, following it8720 CPU at 60 °C: `python train.py` (alice) "
            "uses 80 % of the CPU.")
    rows: list[tuple[float, str, dict[str, Json]]] = [
        (T0, said, {"busy": True, "cause": {"kind": "fan", "fan": "hwmon:it8720/fan1", "said": said}}),
        (T0 + 60, "Nothing is busy.", {"busy": False, "cause": None})]
    (fan, idle) = group(rows, T0 + 120)
    assert fan["sentence"] == said.rstrip(".") and fan["seconds"] == 60
    assert idle["sentence"] == "Nothing was busy"
