"""GPU picking (the GPU Resource Tracking seed): rank GPUs by free memory and idleness, return the best N.

score = app.core.vocabulary.gpu_score: 0.6 x free/total + 0.4 x (100 - utilization)/100. A caller may pass parallel
sizes instead of a count: world size = tp x pp x max(dp, cp, dcp).
"""

from __future__ import annotations

import threading
import time

from flask import Blueprint, Flask, Response, jsonify, request

from ..collect.collector import Collector
from ..collect.frames import Frame
from ..core.model import GpuSample
from ..core.record import record
from ..core.snapshot import Snapshot
from ..core.vocabulary import gpu_score
from .concurrency import Concurrency
from .rest import ApiError, allow_only, arg
from .services import services

bp = Blueprint("picking", __name__, url_prefix="/api")
MIB = 1024 * 1024
MAX_WAIT_S = 300.0
WAITERS_PER_CLIENT = 4
WAITERS_IN_ALL = 64
POLL_S = 0.25


class WaitSlots:
    """How many ``wait`` requests may be waiting at once, per client address and in all. A waiter polls the
    latest frame with a cooperative sleep: under gevent it holds a greenlet, never a native thread."""

    def __init__(self, per_client: int = WAITERS_PER_CLIENT, in_all: int = WAITERS_IN_ALL):
        self.per_client, self.in_all = per_client, in_all
        self._held: dict[str, int] = {}
        self._lock = threading.Lock()

    def take(self, client: str) -> bool:
        with self._lock:
            if self._held.get(client, 0) >= self.per_client or sum(self._held.values()) >= self.in_all:
                return False
            self._held[client] = self._held.get(client, 0) + 1
            return True

    def held(self) -> int:
        """How many wait requests are waiting now."""
        with self._lock:
            return sum(self._held.values())

    def give_back(self, client: str) -> None:
        with self._lock:
            self._held[client] -= 1
            if not self._held[client]:
                del self._held[client]


@record
class Candidate:
    gpu: GpuSample
    score: float
    free_mb: float


def score(gpu: GpuSample) -> float | None:
    available = gpu.memory_available_bytes
    if gpu.error or available is None or not gpu.memory_total_bytes:
        return None
    util = gpu.utilization_percent if gpu.utilization_percent is not None else 100.0
    return gpu_score(available / gpu.memory_total_bytes, util)


def world_size(tp: int = 1, pp: int = 1, dp: int = 1, cp: int = 1, dcp: int = 1) -> int:
    return tp * pp * max(dp, cp, dcp)


def pick(snap: Snapshot, count: int, min_memory_mb: float = 0.0, max_utilization: float = 100.0
         ) -> tuple[list[Candidate], str | None]:
    """The best ``count`` GPUs, best first, or ([], why not)."""
    fitting, reasons = [], []
    for gpu in snap.gpus:
        value, available = score(gpu), gpu.memory_available_bytes
        if value is None or available is None:
            reasons.append(f"GPU {gpu.index}: {gpu.error or 'memory not reported'}")
            continue
        free_mb = available / MIB
        if free_mb < min_memory_mb:
            reasons.append(f"GPU {gpu.index}: {free_mb:.0f} MB free < {min_memory_mb:g} MB")
            continue
        if (gpu.utilization_percent or 0.0) > max_utilization:
            reasons.append(f"GPU {gpu.index}: {gpu.utilization_percent:.0f} % busy > {max_utilization:g} %")
            continue
        fitting.append(Candidate(gpu, round(value, 4), round(free_mb, 1)))
    fitting.sort(key=lambda c: (-c.score, c.gpu.index))
    if len(fitting) < count:
        why = f"{len(fitting)} of {len(snap.gpus)} GPUs fit, {count} needed"
        return [], "; ".join([why, *reasons])
    return fitting[:count], None


@bp.get("/gpu/available")
def available() -> tuple[Response, int]:
    allow_only(("count", "min_memory_mb", "max_utilization", "wait", "tp", "pp", "dp", "cp", "dcp"))
    sizes = {k: arg(k, int, 1, lambda v: 1 <= v <= 4096, "a positive integer")
             for k in ("tp", "pp", "dp", "cp", "dcp")}
    parallel = any(k in request.args for k in sizes)
    count = arg("count", int, 1, lambda v: 1 <= v <= 4096, "a positive integer")
    if parallel:
        if "count" in request.args:
            raise ApiError(400, "pass either count or parallel sizes (tp, pp, dp, cp, dcp), not both")
        count = world_size(**sizes)
    min_memory = arg("min_memory_mb", float, 0.0, lambda v: 0 <= v < 1e9, "megabytes, 0 or more")
    max_util = arg("max_utilization", float, 100.0, lambda v: 0 <= v <= 100, "a percentage, 0-100")
    wait = arg("wait", float, 0.0, lambda v: 0 <= v <= MAX_WAIT_S, f"seconds, 0-{MAX_WAIT_S:g}")
    fanwhy = services()
    frame = fanwhy.collector.latest()
    chosen, why = pick(frame.snapshot, count, min_memory, max_util) if frame else ([], "no snapshot yet")
    if frame is not None and count > len(frame.snapshot.gpus):
        wait = 0.0  # more GPUs than the machine has: waiting cannot help
    if why and wait > 0:
        slots = fanwhy.wait_slots
        client = request.remote_addr or "?"
        if not slots.take(client):
            raise ApiError(429, "too many waiting requests",
                           f"at most {slots.per_client} waiting requests per client and {slots.in_all} in all")
        try:
            frame, chosen, why = _wait_for_gpus(fanwhy.collector, fanwhy.concurrency, frame, wait, count, min_memory,
                                                max_util)
        finally:
            slots.give_back(client)
    if not why and frame is not None:
        return jsonify(_answer(chosen, count, frame.snapshot.timestamp)), 200
    detail: dict[str, object] = {"count": count, "min_memory_mb": min_memory, "max_utilization": max_util,
                              "waited_s": wait}
    return jsonify({"error": "not enough GPUs available", "detail": {**detail, "reason": why}}), 409


def _wait_for_gpus(collector: Collector, concurrency: Concurrency, frame: Frame | None, wait: float, count: int,
                   min_memory: float, max_util: float) -> tuple[Frame | None, list[Candidate], str | None]:
    """Look at each new frame until ``count`` GPUs fit or ``wait`` seconds pass."""
    deadline = time.monotonic() + wait
    seq = frame.seq if frame else 0
    chosen: list[Candidate] = []
    why: str | None = "no snapshot yet"
    while (remaining := deadline - time.monotonic()) > 0:
        concurrency.sleep(min(POLL_S, remaining))
        latest = collector.latest()
        if latest is None or latest.seq == seq:
            continue
        frame, seq = latest, latest.seq
        chosen, why = pick(frame.snapshot, count, min_memory, max_util)
        if not why:
            break
    return frame, chosen, why


def _answer(chosen: list[Candidate], count: int, timestamp: float) -> dict[str, object]:
    return {"timestamp": timestamp, "count": count, "gpu_ids": [c.gpu.index for c in chosen],
            "gpus": [{"index": c.gpu.index, "uuid": c.gpu.uuid, "name": c.gpu.name, "score": c.score,
                      "memory_free_mb": c.free_mb, "utilization_percent": c.gpu.utilization_percent}
                     for c in chosen],
            "cuda_visible_devices": ",".join(str(c.gpu.index) for c in chosen)}


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
