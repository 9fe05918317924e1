"""The JSON view: per-type converters made from the model's annotations must give exactly what a plain
recursive conversion gives, for every model type a snapshot holds."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from collections.abc import Mapping
from typing import Any

import pytest

from app import build_collector
from app.collect.serialize import EXTRAS, snapshot_view, to_json
from app.collect.settings import Settings
from app.core.model import GpuSample, ProcessSample, evolve
from tests.conftest import nvidia_selection
from tests.fakes.fake_nvml import scenario


def reference(value: Any) -> Any:
    """The slow, obvious conversion: every field, recursively."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: reference(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for name in EXTRAS.get(type(value), ()):
            extra = getattr(value, name)
            out[name] = round(extra, 2) if isinstance(extra, float) else reference(extra)
        return out
    if isinstance(value, (list, tuple)):
        return [reference(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): reference(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize("name", ["h200x2_load", "h100_idle", "desktop_fan", "eight_gpus"])
def test_the_view_equals_a_plain_recursive_conversion(name: str) -> None:
    fake = scenario(name)
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        fake.run_on(0, sleeper.pid, sm_percent=95)  # a process row, alerts and a verdict with causes
        fake.set(0, "utilization", {"gpu": 95, "memory": 30})
        settings = Settings(db="none", alert_hold_s=0, alert_gpu_util_percent=1)
        collector = build_collector(settings, nvidia_selection(fake))
        collector.collect()
        snapshot = collector.collect().snapshot
        assert snapshot.processes and snapshot.verdict is not None and snapshot.verdict.causes and snapshot.alerts
        view = to_json(snapshot)
        assert view == reference(snapshot)
        assert json.loads(json.dumps(view)) == view  # plain JSON all the way down
        assert "alert_events" not in snapshot_view(snapshot)
    finally:
        sleeper.kill()
        sleeper.wait()


def test_the_simulated_backend_view_matches_too() -> None:
    collector = build_collector(Settings(db="none", backend="simulated"))
    try:
        collector.collect()
        snapshot = collector.collect().snapshot
        assert to_json(snapshot) == reference(snapshot)
    finally:
        collector.stop()


def test_a_value_of_another_type_than_annotated_still_converts() -> None:
    """The per-type converter copies fields annotated as plain; everything else goes through to_json."""
    gpu = GpuSample(vendor="nvidia", index=0, temperatures={"hotspot": 71.0}, throttle_reasons=("sw_power_cap",))
    assert to_json(gpu) == reference(gpu)
    out = to_json(gpu)
    assert isinstance(out, dict) and out["temperatures"] == {"hotspot": 71.0}
    assert out["throttle_reasons"] == ["sw_power_cap"]


def test_evolve_equals_replace_and_refuses_unknown_fields() -> None:
    row = ProcessSample(pid=7, name="python3", user="ann", command="python3 t.py", start_time=1.0,
                        cpu_percent=3.0, rss_bytes=10)
    changed = evolve(row, power_w=120.5, energy_wh=0.25)
    assert changed == dataclasses.replace(row, power_w=120.5, energy_wh=0.25)
    assert row.power_w is None  # the original is untouched
    assert hash(changed) == hash(dataclasses.replace(row, power_w=120.5, energy_wh=0.25))
    with pytest.raises(dataclasses.FrozenInstanceError):
        changed.pid = 8  # type: ignore[misc]  # the point: a frozen dataclass refuses it
    with pytest.raises(TypeError, match="no field watts"):
        evolve(row, watts=1.0)




def test_a_value_with_no_json_form_is_refused_not_passed_on() -> None:
    with pytest.raises(TypeError, match="set has no JSON form"):
        to_json({1, 2})
