"""The history file breaks while FanWhy runs: detected, reported by /api/health, recovered without a restart.
And the store is bounded: live recordings, samples per recording, and the size cap counts everything."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
import requests

import app.store.recordings as recordings_module
from app.application import receipt_meter
from app.store.history import History
from app.store.historyfile import FAULT_SHOWN_S
from app.store.recordings import MAX_LIVE_RECORDINGS, Recorder, RecordingsFull
from tests.conftest import nvidia_selection
from tests.support.history import T0, Clock, feed, snap
from tests.support.servers import free_port, start_server, stop, wait_for, wait_healthy


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def history(tmp_path: Path, clock: Clock) -> Iterator[History]:
    h = History(tmp_path / "h.db", retention_hours=24, clock=clock).open()
    yield h
    h.close()


def garbage(path: Path) -> None:
    """Overwrite the file's pages in place (same inode), as a disk fault would; the 100-byte header, which says
    whose file it is, stays, with its change counter moved on so that open connections drop their page cache."""
    with open(path, "r+b") as handle:
        handle.seek(24)
        counter = int.from_bytes(handle.read(4), "big")
        handle.seek(24)
        handle.write((counter + 1).to_bytes(4, "big"))
        handle.seek(100)
        handle.write(b"this is not a database" * 400)


def overwrite_with_random_bytes(path: Path, pages: int = 49) -> None:
    """``dd if=/dev/urandom of=PATH bs=4096 count=49 conv=notrunc``: the header (and with it the application id that
    says whose file it is) is gone; the inode stays."""
    with open(path, "r+b") as handle:
        handle.write(os.urandom(4096 * pages))


def test_a_history_overwritten_with_garbage_while_running_is_moved_aside(history: History, clock: Clock) -> None:
    feed(history, clock, 120)  # several pages
    overwrite_with_random_bytes(history.path)
    feed(history, clock, 3, start=T0 + 200)
    assert history.moved_aside is not None and history.moved_aside.name.startswith("h.db.corrupt-")
    assert any("moved aside" in f for f in history.recent_faults())
    assert history.error is None and history.integrity() == "ok"
    assert history.gpu_series(0, "utilization_percent", history.window(T0 + 199, T0 + 203, step=1))


def test_a_recovered_fault_is_shown_for_ten_minutes(history: History, clock: Clock) -> None:
    feed(history, clock, 120)
    overwrite_with_random_bytes(history.path)
    feed(history, clock, 1, start=T0 + 200)
    assert any("moved aside" in f for f in history.recent_faults())
    clock.now += FAULT_SHOWN_S - 1
    assert any("moved aside" in f for f in history.recent_faults())  # still said, for health's "degraded"
    clock.now += 2
    assert history.recent_faults() == []


def test_a_history_overwritten_with_garbage_is_moved_aside_by_a_fresh_start(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "h.db"
    first = History(path, clock=clock).open()
    feed(first, clock, 120)
    first.close()
    overwrite_with_random_bytes(path)
    again = History(path, clock=clock).open()  # a new server: only the marker beside the file says it was ours
    try:
        assert again.moved_aside is not None and any("moved aside" in f for f in again.recent_faults())
        feed(again, clock, 3, start=T0 + 200)
        assert again.error is None and again.integrity() == "ok"
    finally:
        again.close()


def test_garbage_after_a_read_only_episode_is_moved_aside(history: History, clock: Clock) -> None:
    feed(history, clock, 60)
    with read_only(history.path):
        feed(history, clock, 3, start=T0 + 100)
        assert history.error is not None
    overwrite_with_random_bytes(history.path)
    clock.now += 10  # past the reconnect delay
    feed(history, clock, 3, start=T0 + 200)
    assert history.moved_aside is not None and history.error is None, history.error
    assert history.gpu_series(0, "utilization_percent", history.window(T0 + 199, T0 + 203, step=1))


def test_a_deleted_folder_is_made_again_and_reads_never_come_from_the_deleted_file(tmp_path: Path,
                                                                                   clock: Clock) -> None:
    folder = tmp_path / "data" / "fanwhy"
    history = History(folder / "history.db", clock=clock).open()
    try:
        feed(history, clock, 5)
        shutil.rmtree(tmp_path / "data")
        with pytest.raises(sqlite3.OperationalError, match="deleted or replaced"):
            history.gpu_series(0, "utilization_percent", history.window(T0, T0 + 5, step=1))
        feed(history, clock, 3, start=T0 + 10)
        assert (folder / "history.db").exists() and history.error is None
        assert any("made again" in f for f in history.recent_faults())
        points = history.gpu_series(0, "utilization_percent", history.window(T0, T0 + 13, step=1))
        assert [p[0] for p in points] == [T0 + 10, T0 + 11, T0 + 12]  # only what the new file holds
    finally:
        history.close()


def test_a_fresh_server_on_a_garbage_history_serves_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    History(path).open().close()
    overwrite_with_random_bytes(path, pages=2)
    port = free_port()
    proc = start_server(port, FANWHY_DB=str(path))
    url = f"http://127.0.0.1:{port}"
    try:
        health = wait_healthy(url)
        assert health["status"] == "degraded" and any("moved aside" in r for r in health["reasons"]), health
        assert requests.get(f"{url}/api/gpu/history?host=1&metric=cpu_percent&since=-1m", timeout=5).status_code == 200
        assert list(tmp_path.glob("history.db.corrupt-*"))
    finally:
        stop(proc)


def test_the_journal_maps_no_shared_memory_file(history: History) -> None:
    """WAL's -shm is mapped into memory; a fault in it (made immutable while running) killed the worker with
    SIGBUS. The rollback journal maps nothing."""
    assert history._write is not None
    assert history._write.execute("PRAGMA journal_mode").fetchone()[0] == "truncate"


def test_a_file_corrupted_in_place_is_moved_aside_and_replaced_while_running(history: History,
                                                                             clock: Clock) -> None:
    feed(history, clock, 5)
    garbage(history.path)
    feed(history, clock, 3, start=T0 + 10)  # the first write fails, the file is moved aside, the next ones land
    assert history.moved_aside is not None and history.moved_aside.read_bytes()[100:].startswith(b"this is not")
    assert any("moved aside" in f for f in history.recent_faults())
    assert history.error is None and history.integrity() == "ok"
    points = history.gpu_series(0, "utilization_percent", history.window(T0 + 9, T0 + 13, step=1))
    assert [p[0] for p in points] == [T0 + 11, T0 + 12]  # written to the new file


def test_a_file_replaced_by_another_programs_is_left_alone(history: History, clock: Clock, tmp_path: Path) -> None:
    """Only a file FanWhy recognises as its own history is ever moved aside: another file put at its path is
    neither renamed nor written; writing resumes once it is gone."""
    feed(history, clock, 3)
    other = tmp_path / "other"
    other.write_bytes(b"junk" * 1000)
    os.replace(other, history.path)  # a new inode at our path: our open connection would not notice by itself
    feed(history, clock, 2, start=T0 + 10)
    assert history.moved_aside is None and history.path.read_bytes() == b"junk" * 1000
    assert "not a FanWhy history" in (history.error or "")
    history.path.unlink()
    clock.now += 10  # past the reconnect delay
    feed(history, clock, 2, start=T0 + 30)
    assert history.error is None
    assert history.gpu_series(0, "utilization_percent", history.window(T0 + 29, T0 + 32, step=1))


def test_a_replacement_that_is_a_history_is_kept(history: History, clock: Clock, tmp_path: Path) -> None:
    History(tmp_path / "backup.db", clock=clock).open().close()  # an empty but valid history
    feed(history, clock, 2)
    os.replace(tmp_path / "backup.db", history.path)
    feed(history, clock, 2, start=T0 + 10)
    assert history.moved_aside is None and any("reopened" in f for f in history.recent_faults())


def test_a_reader_meeting_a_broken_file_gets_503_json_and_the_writer_recovers(make_app: Any, fake_nvml: Any) -> None:
    app = make_app(nvidia_selection(fake_nvml), rate_limit_per_s=0.0)
    services = app.extensions["fanwhy"]
    client = app.test_client()
    services.collector.wait_frame(0, timeout=5)
    services.history.flush()
    garbage(services.history.path)
    answer = client.get("/api/gpu/history?gpu=0&since=-1m")
    assert answer.status_code in (200, 503), answer.get_data(as_text=True)
    if answer.status_code == 503:
        assert answer.get_json()["error"] == "history unavailable"
    deadline = time.monotonic() + 60  # the writer's next batch meets the broken file: on a loaded 2-core machine
    while time.monotonic() < deadline and services.history.moved_aside is None:  # beside other workers, seconds
        time.sleep(0.1)
    assert services.history.moved_aside is not None
    health = client.get("/api/health").get_json()
    assert health["status"] == "degraded" and any("moved aside" in r for r in health["reasons"])
    assert client.get("/api/gpu/history?gpu=0&since=-1m").status_code == 200


def _immutable(path: Path, on: bool) -> bool:
    """Make ``path`` unwritable even for root (chattr +i); as another user, chmod does. False when impossible."""
    if os.geteuid() != 0:
        path.chmod(0o444 if on else 0o644)
        return True
    try:
        subprocess.run(["chattr", "+i" if on else "-i", str(path)], check=True, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return True


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` unwritable while the block runs (skips the test where that cannot be done)."""
    if not _immutable(path, True):
        pytest.skip("neither chattr nor chmod can make the file read-only here")
    try:
        yield
    finally:
        _immutable(path, False)


def test_a_read_only_period_recovers_once_writable(history: History, clock: Clock) -> None:
    feed(history, clock, 3)
    with read_only(history.path):
        feed(history, clock, 20, start=T0 + 10)
        assert history.error is not None and "readonly" in history.error.replace("read-only", "readonly")
    feed(history, clock, 10, start=T0 + 40)  # the writer reconnects every few seconds
    assert history.error is None
    points = history.gpu_series(0, "utilization_percent", history.window(T0 + 44, T0 + 49, step=1))
    assert len(points) == 6


def test_a_fault_in_the_shared_memory_file_never_kills_the_worker(tmp_path: Path) -> None:
    port = free_port()
    db = tmp_path / "history.db"
    proc = start_server(port, FANWHY_DB=str(db), FANWHY_INTERVAL="0.2")
    url = f"http://127.0.0.1:{port}"
    shm = Path(f"{db}-shm")
    try:
        wait_healthy(url)
        worker = psutil.Process(proc.pid).children()[0]
        shm.write_bytes(b"\0" * 4096)
        if not _immutable(shm, True):
            pytest.skip("chattr is not available here")
        before = requests.get(f"{url}/api/health", timeout=5).json()["history"]["written_ticks"]
        time.sleep(3)
        health = requests.get(f"{url}/api/health", timeout=5).json()
        assert psutil.Process(proc.pid).children()[0].pid == worker.pid  # the same worker: it did not die
        assert health["history"]["written_ticks"] > before and health["history"]["error"] is None
        assert requests.get(f"{url}/api/gpu/history?gpu=0&since=-1m", timeout=5).status_code == 200
    finally:
        with contextlib.suppress(Exception):
            _immutable(shm, False)
        assert "Traceback" not in stop(proc)


# -- bounded storage -------------------------------------------------------------------------------------
def test_live_recordings_are_capped(history: History) -> None:
    recorder = Recorder(history, receipt_meter)
    for n in range(MAX_LIVE_RECORDINGS):
        recorder.start(f"r{n}", "x", None, 1.0, T0)
    with pytest.raises(RecordingsFull):
        recorder.start("one-too-many", "x", None, 1.0, T0)
    recorder.stop("r0", T0 + 1)
    recorder.start("now-fits", "x", None, 1.0, T0)


def test_the_cap_on_live_recordings_is_a_429_through_rest(make_app: Any, fake_nvml: Any) -> None:
    app = make_app(nvidia_selection(fake_nvml), rate_limit_per_s=0.0)
    client = app.test_client()
    app.extensions["fanwhy"].collector.wait_frame(0, timeout=5)
    codes = [client.post("/api/recordings", json={"label": f"r{n}"}).status_code
             for n in range(MAX_LIVE_RECORDINGS + 3)]
    assert codes == [201] * MAX_LIVE_RECORDINGS + [429] * 3
    refused = client.post("/api/recordings", json={})
    assert refused.get_json()["error"] == "too many recordings"


def test_a_recording_stops_itself_at_its_sample_cap(history: History, clock: Clock,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recordings_module, "MAX_RECORDING_SAMPLES", 4)
    recorder = Recorder(history, receipt_meter)
    recorder.start("capped", "x", None, 1.0, T0)
    feed(history, clock, 10)
    found = recorder.get("capped")
    assert found is not None and found["state"] == "stopped" and found["sample_count"] == 4
    assert found["gpu_stats"] is not None and found["gpu_stats"]["0"]["samples"] == 4
    assert "capped" not in recorder._live


def test_recordings_count_toward_the_size_cap_and_health_says_so(tmp_path: Path, clock: Clock) -> None:
    history = History(tmp_path / "h.db", retention_hours=24, clock=clock, max_bytes=256 * 1024).open()
    try:
        recorder = Recorder(history, receipt_meter)
        for n in range(MAX_LIVE_RECORDINGS):
            recorder.start(f"r{n}", "x" * 150, None, 1.0, T0)
        feed(history, clock, 1800)  # 16 recordings x 1,800 samples would be far above 256 KiB
        with sqlite3.connect(history.path) as db:
            pages, size, free = (db.execute(f"PRAGMA {p}").fetchone()[0]
                                 for p in ("page_count", "page_size", "freelist_count"))
            samples = db.execute("SELECT count(*) FROM recording_samples").fetchone()[0]
        assert (pages - free) * size <= 256 * 1024 * 1.5  # trimmed once a minute: one minute over at most
        assert 0 < samples < 16 * 1800
        assert any("reached its 0.25 MB cap" in f for f in history.recent_faults())
    finally:
        history.close()


def test_health_degrades_while_the_cap_is_being_hit(make_app: Any, fake_nvml: Any) -> None:
    app = make_app(nvidia_selection(fake_nvml), rate_limit_per_s=0.0)
    history = app.extensions["fanwhy"].history
    history.file.fault("history reached its 5 MB cap (FANWHY_DB_MAX_MB): data before ... was dropped")
    app.extensions["fanwhy"].collector.wait_frame(0, timeout=5)
    health = app.test_client().get("/api/health").get_json()
    assert health["status"] == "degraded" and any("cap" in r for r in health["reasons"])


def test_a_flush_without_a_writer_thread_commits_the_queue_itself(history: History) -> None:
    """Opened, not started (tests, one-shot tools): a flush used to wait its whole timeout for a thread that was
    never there; it commits what is queued in the caller and returns at once."""
    history.submit(snap(T0, 40.0))
    began = time.monotonic()
    assert history.flush(timeout=5.0)
    assert time.monotonic() - began < 1.0
    with history.reader() as db:
        assert db.execute("SELECT count(*) FROM gpu_raw").fetchone()[0] == 1


def test_recordings_cut_by_a_crash_are_closed_interrupted_at_restart(tmp_path: Path) -> None:
    """kill -9 leaves recordings open in the file; the next server closes them "interrupted" at their last sample,
    their samples kept, and they no longer count as running (a new one starts, stop answers what was kept)."""
    db = tmp_path / "history.db"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start_server(port, FANWHY_DB=str(db), FANWHY_INTERVAL="0.2")
    try:
        wait_healthy(url)
        ids = [requests.post(f"{url}/api/recordings", json={"label": f"job {n}"}, timeout=30).json()["id"]
               for n in range(MAX_LIVE_RECORDINGS)]
        wait_for(lambda: all(requests.get(f"{url}/api/recordings/{i}", timeout=30).json()["sample_count"] >= 3
                             for i in ids), timeout=60, every=0.3)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        stop(proc)  # its log read and closed
    with sqlite3.connect(db) as con:
        kept = dict(con.execute("SELECT rec, count(DISTINCT ts) FROM recording_samples GROUP BY rec").fetchall())
        last = dict(con.execute("SELECT rec, max(ts) FROM recording_samples GROUP BY rec").fetchall())
    proc = start_server(port, FANWHY_DB=str(db), FANWHY_INTERVAL="0.2")
    try:
        wait_healthy(url)
        for rec_id in ids:
            found = requests.get(f"{url}/api/recordings/{rec_id}", timeout=30).json()
            assert found["state"] == "interrupted" and found["stopped_at"] == last[rec_id]
            assert found["sample_count"] == kept[rec_id] >= 3 and found["gpu_stats"]["0"]["samples"] >= 3
            assert requests.post(f"{url}/api/recordings/{rec_id}/stop", timeout=30).json()["state"] == "interrupted"
        time.sleep(1.0)  # ticks go on: an interrupted recording is not sampled again
        assert requests.get(f"{url}/api/recordings/{ids[0]}", timeout=30).json()["sample_count"] == kept[ids[0]]
        assert requests.post(f"{url}/api/recordings", json={"label": "after"}, timeout=30).status_code == 201
    finally:
        assert "Traceback" not in stop(proc)


def test_a_recordings_gpus_are_each_kept_once(make_app: Any, fake_nvml: Any) -> None:
    app = make_app(nvidia_selection(fake_nvml), rate_limit_per_s=0.0)
    client = app.test_client()
    app.extensions["fanwhy"].collector.wait_frame(0, timeout=5)
    answer = client.post("/api/recordings", json={"gpus": [1, 0] * 10_000 + [0]})  # 20,001 indices in 60 KB
    assert answer.status_code == 201 and answer.get_json()["gpus"] == [0, 1]
