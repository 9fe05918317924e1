"""Alert hold time and hysteresis, with a fake clock."""

from __future__ import annotations

from app.alerts import AlertEngine
from app.model import GpuSample


def gpu(util: float | None, index: int = 0, error: str | None = None) -> GpuSample:
    return GpuSample(vendor="nvidia", index=index, uuid=f"GPU-{index}", name="Test", utilization_percent=util,
                     error=error)


def run(engine: AlertEngine, values: list[float | None], start: float = 0.0) -> list[tuple[float, str]]:
    events = []
    for step, value in enumerate(values):
        _, fired = engine.evaluate([gpu(value)], start + step)
        events.extend((start + step, e.state) for e in fired)
    return events


def test_fires_only_after_the_hold_time() -> None:
    engine = AlertEngine(gpu_util_percent=50, hold_s=3, hysteresis_percent=5)
    assert run(engine, [60, 60, 60, 60, 60]) == [(3.0, "firing")]
    active, _ = engine.evaluate([gpu(60)], 5)
    assert len(active) == 1 and active[0].rule == "gpu_utilization" and active[0].since == 0.0


def test_a_short_spike_does_not_fire() -> None:
    engine = AlertEngine(gpu_util_percent=50, hold_s=3, hysteresis_percent=5)
    assert run(engine, [60, 60, 40, 60, 60, 40]) == []


def test_hovering_at_the_threshold_fires_once_and_resolves_once() -> None:
    engine = AlertEngine(gpu_util_percent=50, hold_s=2, hysteresis_percent=5)
    values = [55, 55, 55, 48, 52, 47, 51, 49, 44, 30]
    assert run(engine, values) == [(2.0, "firing"), (8.0, "resolved")]


def test_unknown_utilization_keeps_the_state() -> None:
    engine = AlertEngine(gpu_util_percent=50, hold_s=1, hysteresis_percent=5)
    assert run(engine, [90, 90, None, None, 90]) == [(1.0, "firing")]


def test_per_gpu_and_a_vanished_gpu_resolves() -> None:
    engine = AlertEngine(gpu_util_percent=50, hold_s=0, hysteresis_percent=5)
    active, events = engine.evaluate([gpu(90, 0), gpu(10, 1)], 0)
    assert [a.gpu_index for a in active] == [0] and len(events) == 1
    assert "GPU 0" in events[0].message and events[0].value == 90
    active, events = engine.evaluate([gpu(10, 1)], 1)
    assert active == () and [(e.gpu_index, e.state) for e in events] == [(0, "resolved")]
