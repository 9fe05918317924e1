"""The GPU Fleet Manager seed's endpoint, in its JSON format, kept for its clients.

``GET /api/v1/monitoring/gpu-metrics``: timestamp, and per GPU id "gpu-N", name, uuid, utilization (%),
memory {total, used, free} in MB, temperature (°C), power_usage (W), clock_speeds {graphics, memory} (MHz).
Values the hardware does not report are null.
"""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Blueprint, Flask, Response, jsonify

from ..core.model import GpuSample
from ..core.snapshot import Snapshot
from .rest import ApiError, allow_only
from .services import services

bp = Blueprint("fleet_manager", __name__, url_prefix="/api/v1")
MB = 1024 * 1024


def _mb(value: int | None) -> float | None:
    return round(value / MB, 1) if value is not None else None


def fleet_manager_gpu(gpu: GpuSample) -> dict[str, object]:
    free = gpu.memory_available_bytes
    return {
        "id": f"gpu-{gpu.index}",
        "name": gpu.name,
        "uuid": gpu.uuid,
        "utilization": gpu.utilization_percent,
        "memory": {"total": _mb(gpu.memory_total_bytes), "used": _mb(gpu.memory_used_bytes), "free": _mb(free)},
        "temperature": gpu.temperature_c,
        "power_usage": gpu.power_w,
        "clock_speeds": {"graphics": gpu.clock_sm_mhz, "memory": gpu.clock_memory_mhz},
    }


def fleet_manager_view(snap: Snapshot) -> dict[str, object]:
    stamp = datetime.fromtimestamp(snap.timestamp, tz=UTC).isoformat().replace("+00:00", "Z")
    return {"timestamp": stamp, "gpus": [fleet_manager_gpu(g) for g in snap.gpus]}


@bp.get("/monitoring/gpu-metrics")
def gpu_metrics() -> Response:
    allow_only(())
    frame = services().collector.latest()
    if frame is None:
        raise ApiError(503, "no data yet", "the collector has not finished its first snapshot")
    return jsonify(fleet_manager_view(frame.snapshot))


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
