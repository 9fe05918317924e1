"""Socket.IO through a real python-socketio client over loopback, against the app served for real."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any, Callable

import pytest
import requests
import socketio

from tests.conftest import LiveServer, nvidia_selection
from tests.fakes.fake_nvml import FakeNvml


class Recorder:
    """A connected client that keeps every event it receives."""

    def __init__(self) -> None:
        self.client = socketio.Client(reconnection=False)
        self.events: list[tuple[str, Any]] = []
        self._changed = threading.Condition()
        self.client.on("*", self._record)

    def _record(self, event: str, data: Any = None) -> None:
        with self._changed:
            self.events.append((event, data))
            self._changed.notify_all()

    def of(self, name: str) -> list[Any]:
        return [data for event, data in self.events if event == name]

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"timed out; events so far: {[e for e, _ in self.events]}")
                self._changed.wait(remaining)


def ticks(rec: Recorder, n: int) -> None:
    """A window measured in collector ticks, not seconds (a loaded machine only makes it longer): ``n`` more
    updates reach the client. For what must *not* happen in that window."""
    seen = len(rec.of("gpu_status_update"))
    rec.wait_for(lambda: len(rec.of("gpu_status_update")) >= seen + n)


@pytest.fixture
def connect() -> Iterator[Callable[..., Recorder]]:
    clients: list[Recorder] = []

    def make(server: LiveServer, **kwargs: Any) -> Recorder:
        # Polling unless a test asks for WebSocket: under Werkzeug's dev server a WebSocket close takes
        # the client 3 s (the close frame is read as a new HTTP request). `python -m app` serves through
        # gunicorn, where WebSocket is tested in test_server_process.py and closes at once.
        kwargs.setdefault("transports", ["polling"])
        recorder = Recorder()
        recorder.client.connect(server.url, wait_timeout=5, **kwargs)
        clients.append(recorder)
        return recorder

    yield make
    for recorder in clients:
        recorder.client.disconnect()


@pytest.mark.parametrize("transport", ["websocket", "polling"])
def test_gpu_status_on_connect_then_an_update_each_tick(live_server: LiveServer, connect: Any, transport: str) -> None:
    rec = connect(live_server, transports=[transport])
    rec.wait_for(lambda: len(rec.of("gpu_status")) == 1)
    first = rec.of("gpu_status")[0]
    assert [g["name"] for g in first["gpus"]] == ["NVIDIA H200", "NVIDIA H200"]
    rec.wait_for(lambda: len(rec.of("gpu_status_update")) >= 3)
    ticks = [u["timing"]["tick"] for u in rec.of("gpu_status_update")]
    assert ticks == sorted(ticks) and len(set(ticks)) == len(ticks)
    assert ticks[0] >= first["timing"]["tick"]


def test_one_collection_per_tick_whatever_the_number_of_clients(live_server: LiveServer, connect: Any,
                                                                fake_nvml: FakeNvml) -> None:
    clients = [connect(live_server) for _ in range(5)]
    for rec in clients:
        rec.wait_for(lambda rec=rec: len(rec.of("gpu_status_update")) >= 3)
    ticks = live_server.collector.latest().snapshot.timing.tick
    assert fake_nvml.calls["utilization"] == pytest.approx(2 * ticks, abs=4)  # 2 GPUs, once each per tick


def test_a_connecting_client_is_sent_the_frame_taken_and_starts_no_collection(make_app: Any, serve: Any,
                                                                              fake_nvml: FakeNvml,
                                                                              connect: Any) -> None:
    """The collector runs on its own clock, not per client: with a one-hour interval (and no gap asked between
    early ticks), six clients connecting each get the frame already taken, and nothing is collected again. The test
    above counts calls against ticks, which rise together; this one fails on the mutant that collects (or asks for
    an early tick) when a client connects."""
    server = serve(make_app(nvidia_selection(fake_nvml), interval_s=3600.0, min_tick_gap_s=0.0))
    first = connect(server)
    first.wait_for(lambda: len(first.of("gpu_status")) == 1)
    calls, seq = fake_nvml.calls["utilization"], server.collector.latest().seq
    clients = [connect(server) for _ in range(5)]
    for rec in clients:
        rec.wait_for(lambda rec=rec: len(rec.of("gpu_status")) == 1)
    time.sleep(1.0)  # room for a collection the connects would have started (asked of the collector's thread)
    assert [rec.of("gpu_status")[0]["timing"]["tick"] for rec in clients] == [seq] * 5
    assert server.collector.latest().seq == seq and fake_nvml.calls["utilization"] == calls
    assert first.of("gpu_status_update") == []


def test_high_usage_alert_fires_once_and_resolves_once(make_app: Any, serve: Any, connect: Any,
                                                       fake_nvml: FakeNvml) -> None:
    fake_nvml.set(1, "utilization", {"gpu": 5, "memory": 1})
    server = serve(make_app(nvidia_selection(fake_nvml)))
    rec = connect(server)
    rec.wait_for(lambda: len(rec.of("gpu_status_update")) >= 2)
    fake_nvml.set(1, "utilization", {"gpu": 97, "memory": 30})
    rec.wait_for(lambda: len(rec.of("high_gpu_usage_alert")) == 1)
    (alert,) = rec.of("high_gpu_usage_alert")
    assert alert["gpu_index"] == 1 and alert["value"] == 97 and alert["threshold"] == 50
    assert "GPU 1" in alert["message"]
    summary = requests.get(f"{server.url}/api/gpu/summary", timeout=5).json()
    assert [a["id"] for a in summary["alerts"]] == [alert["id"]]
    ticks(rec, 4)  # stays high for four more ticks: no second alert
    fake_nvml.set(1, "utilization", {"gpu": 48, "memory": 30})  # inside the hysteresis band: still firing
    ticks(rec, 3)
    assert rec.of("alert_resolved") == []
    fake_nvml.set(1, "utilization", {"gpu": 10, "memory": 30})
    rec.wait_for(lambda: len(rec.of("alert_resolved")) == 1)
    ticks(rec, 3)
    assert len(rec.of("high_gpu_usage_alert")) == 1 and len(rec.of("alert_resolved")) == 1
    assert rec.of("alert_resolved")[0]["id"] == alert["id"]


def test_request_gpu_update_is_answered_at_once(live_server: LiveServer, connect: Any) -> None:
    rec = connect(live_server)
    rec.wait_for(lambda: len(rec.of("gpu_status")) == 1)
    answer = rec.client.call("request_gpu_update", timeout=5)
    assert answer["seq"] >= 1
    rec.wait_for(lambda: len(rec.of("gpu_status")) == 2)


def test_early_ticks_are_rate_limited(make_app: Any, serve: Any, fake_nvml: FakeNvml, connect: Any) -> None:
    server = serve(make_app(nvidia_selection(fake_nvml), interval_s=5.0, min_tick_gap_s=1.0))
    rec = connect(server)
    rec.wait_for(lambda: len(rec.of("gpu_status")) == 1)
    answers = [rec.client.call("request_gpu_update", timeout=5)["early_tick"] for _ in range(5)]
    assert answers[0] is True and answers[1:] == [False] * 4
    rec.wait_for(lambda: len(rec.of("gpu_status_update")) >= 1, timeout=3)  # the early tick went to everyone


def test_the_cached_frame_is_sent_to_a_client_at_most_once_a_tick(make_app: Any, serve: Any, fake_nvml: FakeNvml,
                                                                   connect: Any) -> None:
    """However often a client asks, it is sent each frame once: five asks within one slow tick (and the one early
    tick they may start) bring one gpu_status per frame, not five."""
    server = serve(make_app(nvidia_selection(fake_nvml), interval_s=60.0, min_tick_gap_s=60.0))
    rec = connect(server)
    rec.wait_for(lambda: len(rec.of("gpu_status")) == 1)
    seqs = {rec.client.call("request_gpu_update", timeout=5)["seq"] for _ in range(5)}
    rec.wait_for(lambda: len(rec.of("gpu_status")) >= 2)  # each answer's emit comes before its acknowledgement
    assert 2 <= len(rec.of("gpu_status")) <= 1 + len(seqs), (len(rec.of("gpu_status")), seqs)
    assert len(seqs) <= 2  # the first frame, and at most one early tick


def test_a_foreign_origin_is_refused(live_server: LiveServer) -> None:
    client = socketio.Client(reconnection=False)
    with pytest.raises(socketio.exceptions.ConnectionError):
        client.connect(live_server.url, headers={"Origin": "http://evil.example"}, transports=["websocket"],
                       wait_timeout=5)
    response = requests.get(f"{live_server.url}/socket.io/?EIO=4&transport=polling",
                            headers={"Origin": "http://evil.example"}, timeout=5)
    assert response.status_code == 403
    same = requests.get(f"{live_server.url}/socket.io/?EIO=4&transport=polling",
                        headers={"Origin": live_server.url}, timeout=5)
    assert same.status_code == 200


def test_socket_needs_the_token_when_one_is_set(make_app: Any, serve: Any, fake_nvml: FakeNvml, connect: Any) -> None:
    server = serve(make_app(nvidia_selection(fake_nvml), token="tok-123"))
    for refused_with in ({}, {"auth": {"token": "tok-123"}}, {"headers": {"Authorization": "Bearer wrong"}}):
        # the token must come with the HTTP request, before any session: the auth payload arrives too late
        refused = socketio.Client(reconnection=False)
        with pytest.raises(socketio.exceptions.ConnectionError):
            refused.connect(server.url, wait_timeout=5, **refused_with)
    answer = requests.get(f"{server.url}/socket.io/?EIO=4&transport=polling", timeout=5)
    assert answer.status_code == 401 and answer.json()["error"] == "unauthorized"
    for transport in ("polling", "websocket"):
        rec = connect(server, headers={"Authorization": "Bearer tok-123"}, transports=[transport])
        rec.wait_for(lambda rec=rec: len(rec.of("gpu_status")) == 1)
    rec = connect(server, headers={"Cookie": "fanwhy_token=tok-123"})
    rec.wait_for(lambda: len(rec.of("gpu_status")) == 1)
    by_query = socketio.Client(reconnection=False)  # ?token= on the URL, long-polling: its POSTs carry no token
    got: list[Any] = []
    by_query.on("gpu_status_update", got.append)
    by_query.connect(f"{server.url}?token=tok-123", transports=["polling"], wait_timeout=5)
    try:
        deadline = time.monotonic() + 10
        while not got and time.monotonic() < deadline:
            time.sleep(0.05)
        assert got, "a polling client that gave its token on the URL gets updates"
    finally:
        by_query.disconnect()


def test_alert_events_of_frames_a_slow_reader_missed_are_kept_but_not_the_frames(fake_nvml: FakeNvml) -> None:
    """The broadcaster sends the newest view and the alert events of every frame since its last one."""
    from app import build_collector
    from app.collect.settings import Settings
    from tests.conftest import nvidia_selection

    collector = build_collector(Settings(db="none", alert_hold_s=0, alert_gpu_util_percent=50),
                            nvidia_selection(fake_nvml))
    first = collector.collect()  # GPU 1 at 98 %: fires
    assert first is not None
    fake_nvml.set(1, "utilization", {"gpu": 2, "memory": 0})
    for _ in range(3):
        last = collector.collect()  # resolves on the first of these
    assert last is not None and last.seq == first.seq + 3
    events = collector.alert_events(0, last.seq)
    assert [(e.rule, e.state) for e in events if e.gpu_index == 1] == [("gpu_utilization", "firing"),
                                                                       ("gpu_utilization", "resolved")]
    assert [e.state for e in collector.alert_events(first.seq, last.seq) if e.gpu_index == 1] == ["resolved"]
    assert collector.alert_events(first.seq + 1, last.seq) == []
    assert collector.wait_frame(first.seq, timeout=0) is last  # the newest frame, not the ones between
    assert collector.wait_frame(last.seq, timeout=0.01) is None


def test_the_collector_tells_its_listeners_of_each_frame_and_a_failing_one_stops_nothing(fake_nvml: FakeNvml) -> None:
    from app import build_collector
    from app.collect.settings import Settings

    collector = build_collector(Settings(db="none"), nvidia_selection(fake_nvml))
    told: list[int] = []

    def broken() -> None:
        raise RuntimeError("a listener's own failure")

    unsubscribe_broken = collector.subscribe(broken)
    unsubscribe = collector.subscribe(lambda: told.append(collector.latest().seq))
    first = collector.collect()
    second = collector.collect()
    assert first is not None and second is not None and told == [first.seq, second.seq]
    unsubscribe()
    unsubscribe_broken()
    collector.collect()
    assert told == [first.seq, second.seq]


@pytest.mark.parametrize("kind", ["threads", "gevent"])
def test_a_wake_from_a_native_thread_reaches_its_waiter_at_once_and_a_notify_is_kept(kind: str) -> None:
    """The broadcaster's wake: the collector's thread notifies, the broadcaster (a greenlet under gevent) wakes
    without a native thread waiting for it; a notify while it works is kept for its next wait."""
    from app.web.concurrency import Concurrency, GeventConcurrency

    concurrency = GeventConcurrency() if kind == "gevent" else Concurrency()
    results: list[tuple[bool, float]] = []

    def waiter() -> None:
        wake = concurrency.wake()  # made by its waiter (under gevent: on the loop that waits)
        holder.append(wake)
        try:
            for _ in range(2):
                began = time.monotonic()
                results.append((wake.wait(5.0), time.monotonic() - began))
            began = time.monotonic()
            results.append((wake.wait(0.05), time.monotonic() - began))  # nobody notifies: the timeout
        finally:
            wake.close()

    holder: list[Any] = []

    def notifier() -> None:
        while not holder:
            time.sleep(0.01)
        time.sleep(0.1)
        holder[0].notify()
        while len(results) < 1:
            time.sleep(0.01)
        holder[0].notify()  # before the second wait may have begun: kept for it

    thread = threading.Thread(target=notifier)
    thread.start()
    if kind == "gevent":
        import gevent

        gevent.spawn(waiter).join(timeout=10)
    else:
        waiter()
    thread.join(5)
    assert [fired for fired, _ in results] == [True, True, False]
    assert all(took < 1.0 for _, took in results[:2]), results


def test_the_packets_skip_the_binary_walk_and_encode_a_view_as_socketio_does(fake_nvml: FakeNvml) -> None:
    """Everything FanWhy emits is plain JSON: its packets skip python-socketio's walk for binary parts and encode
    exactly as python-socketio's own packets do."""
    from socketio.packet import EVENT, Packet

    from app import build_collector
    from app.collect.settings import Settings
    from app.web.realtime import JsonPacket

    frame = build_collector(Settings(db="none"), nvidia_selection(fake_nvml)).collect()
    assert frame is not None
    data = ["gpu_status_update", frame.view]
    assert JsonPacket(EVENT, data=data).encode() == Packet(EVENT, data=data).encode()
    assert not JsonPacket.data_is_binary(data)
