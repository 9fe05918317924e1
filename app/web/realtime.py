"""Live push over Socket.IO: one broadcaster per server, started once.

Server -> client: ``gpu_status`` (on connect, and in answer to ``request_gpu_update``),
``gpu_status_update`` (each tick), ``high_gpu_usage_alert`` and ``alert_resolved``.
Client -> server: ``request_gpu_update`` (asks the collector for an early, rate-limited tick; the cached frame
is sent at most once a tick to each client). Every packet passes app.web.sessions first (per-connection limits).
Host, Origin, token and session limits are checked by app.web.gate before Engine.IO sees a request, so
Engine.IO's own CORS handling is off (``cors_allowed_origins=[]``: it never adds a header of its own).
Under gevent the broadcaster is a greenlet woken by the collector through the event loop (``Concurrency.wake``):
the collector and NVML never run on the event loop.
"""

from __future__ import annotations

import logging
import threading

from flask import Flask, request
from flask_socketio import SocketIO, emit
from socketio.packet import Packet

from ..collect.collector import Collector
from ..collect.serialize import to_json
from ..collect.settings import Settings
from ..core.snapshot import Alert
from .bodies import SOCKET_BODY_BYTES
from .concurrency import Concurrency, Wake
from .keepalive import ping_interval_s
from .security import TokenBuckets
from .sessions import Sessions

log = logging.getLogger(__name__)

class JsonPacket(Packet):  # type: ignore[misc]  # python-socketio ships no type hints
    """Socket.IO packets whose data is plain JSON. Everything FanWhy emits is made by app.collect.serialize (dicts,
    lists, strings, numbers: never bytes), so the check for binary parts, which walks the whole view on every emit
    (most of an emit's CPU), is skipped."""

    @classmethod
    def data_is_binary(cls, data: object) -> bool:
        return False


def alert_event_names(alert: Alert) -> tuple[str, ...]:
    """``alert_resolved`` for a resolution; ``alert`` for every alert that fires, and also the seed's
    ``high_gpu_usage_alert`` for GPU utilization."""
    if alert.state == "resolved":
        return ("alert_resolved",)
    if alert.rule == "gpu_utilization":
        return ("high_gpu_usage_alert", "alert")
    return ("alert",)


class Broadcaster:
    """Waits for each new frame and emits it to every client; started once, under a lock."""

    def __init__(self, socketio: SocketIO, collector: Collector, concurrency: Concurrency):
        self.socketio = socketio
        self.collector = collector
        self.concurrency = concurrency
        self._lock = threading.Lock()
        self._started = False
        self._stop = threading.Event()
        self.emitted = 0

    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
            self.socketio.start_background_task(self._run)

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        wake = self.concurrency.wake()  # made here: under gevent, on the loop that waits for it
        unsubscribe = self.collector.subscribe(wake.notify)
        try:
            self._broadcast(wake)
        finally:
            unsubscribe()
            wake.close()

    def _broadcast(self, wake: Wake) -> None:
        seq = 0
        while not self._stop.is_set():
            frame = self.collector.latest()
            if frame is None or frame.seq <= seq:
                wake.wait(1.0)  # the collector's wake after each new frame; the timeout only to notice a stop
                continue
            events = self.collector.alert_events(seq, frame.seq)  # of every frame, even one we were too slow for
            seq = frame.seq
            try:
                for alert in events:
                    payload = to_json(alert)
                    for name in alert_event_names(alert):
                        self.socketio.emit(name, payload)
                self.socketio.emit("gpu_status_update", frame.view)
                self.emitted += 1
            except Exception:  # one failed emit must not end the push for everyone
                log.exception("broadcast failed")


def init_app(app: Flask, collector: Collector, settings: Settings, concurrency: Concurrency, sessions: Sessions
             ) -> tuple[SocketIO, Broadcaster]:
    """Bind a SocketIO to ``app`` and register the events. One SocketIO per app, so that tests
    can serve several apps in one process. With ``message_queue`` (redis://), every server process
    that shares it delivers what any of them emits: the one running the collector broadcasts, the
    others (FANWHY_COLLECTOR=off) serve clients."""
    socketio = SocketIO()
    socketio.init_app(app, async_mode=concurrency.async_mode, cors_allowed_origins=[], logger=False,
                      engineio_logger=False, max_http_buffer_size=SOCKET_BODY_BYTES, serializer=JsonPacket,
                      # python-socketio's client gives up when it has sent nothing for max(ping interval, ping
                      # timeout) + 5 s, and it sends only its answers to pings: at a 5 s ping and a 10 s timeout a
                      # server may be 10 s late with a ping (busy, or stopped a moment) and keep its clients
                      ping_interval=ping_interval_s(settings.header_timeout_s), ping_timeout=10,
                      message_queue=settings.message_queue or None)
    sessions.install(socketio.server)  # per-connection packet limits, in front of Socket.IO's parser
    limiter = TokenBuckets(rate=2.0, burst=5.0)
    answered: dict[str, int] = {}  # Socket.IO sid -> the last frame request_gpu_update sent it

    @socketio.on("connect")  # type: ignore[untyped-decorator]  # flask_socketio ships no type hints
    def on_connect(auth: object = None) -> bool:
        frame = collector.latest()
        if frame is not None:
            emit("gpu_status", frame.view)
        return True

    @socketio.on("request_gpu_update")  # type: ignore[untyped-decorator]  # no type hints there
    def on_request_update(*_: object) -> dict[str, object]:
        if not limiter.allow(request.sid):  # type: ignore[attr-defined]  # Flask-SocketIO sets request.sid
            return {"error": "rate limited", "detail": "at most 2 requests a second per client"}
        accepted = collector.request_tick()
        frame = collector.latest()
        sid: str = request.sid  # type: ignore[attr-defined]  # Flask-SocketIO sets request.sid
        if frame is not None and answered.get(sid) != frame.seq:  # the cached frame, once a tick per client
            answered[sid] = frame.seq
            emit("gpu_status", frame.view)
        return {"early_tick": accepted, "seq": frame.seq if frame else None}

    @socketio.on("disconnect")  # type: ignore[untyped-decorator]  # no type hints there
    def on_disconnect(*_: object) -> None:
        answered.pop(request.sid, None)  # type: ignore[attr-defined]  # Flask-SocketIO sets request.sid

    return socketio, Broadcaster(socketio, collector, concurrency)
