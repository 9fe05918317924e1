"""On a real NVIDIA GPU without fans (the H100s and H200s lent here are passive): NVML counts 0 fans, FanWhy makes no
per-fan call and reports the fans absent with the reason, and every per-fan call it knows answers a clean NVML error
through the one call path (none raises past it). Prints what each call answered."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pynvml
import pytest

from app.vendors.nvidia import NvidiaBackend
from app.vendors.nvml_calls import nvml_calls
from app.vendors.nvml_fans import PASSIVELY_COOLED

pytestmark = pytest.mark.gpu
FAN_CALLS = ("nvmlDeviceGetFanSpeed", "nvmlDeviceGetFanSpeed_v2", "nvmlDeviceGetTargetFanSpeed",
             "nvmlDeviceGetFanSpeedRPM", "nvmlDeviceGetMinMaxFanSpeed", "nvmlDeviceGetFanControlPolicy_v2",
             "nvmlDeviceGetCoolerInfo")


class Counting:
    """pynvml, with every call counted by name."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        value = getattr(pynvml, name)
        if not callable(value) or not name.startswith("nvml"):
            return value

        def counted(*args: Any) -> Any:
            self.calls[name] += 1
            return value(*args)
        return counted


def test_no_fans_no_per_fan_call_and_the_reason() -> None:
    nvml = Counting()
    backend = NvidiaBackend(nvml=nvml)
    backend.open()
    try:
        for _ in range(3):
            gpus = backend.sample()
    finally:
        backend.close()
    assert gpus and all(g.error is None for g in gpus)
    assert nvml.calls["nvmlDeviceGetNumFans"] == len(gpus)  # once per GPU, at open
    assert not [name for name in FAN_CALLS if nvml.calls[name]], nvml.calls
    for gpu in gpus:
        assert gpu.fans == () and gpu.passively_cooled
        assert gpu.unsupported["fan_speed_percent"] == PASSIVELY_COOLED == gpu.unsupported["fan_rpm"]


def test_every_per_fan_call_answers_through_the_call_path() -> None:
    pynvml.nvmlInit()
    answers: dict[str, str] = {}
    try:
        calls = nvml_calls(pynvml)
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        assert pynvml.nvmlDeviceGetNumFans(handle) == 0
        for name in FAN_CALLS:
            args: tuple[object, ...] = (handle, 0) if name in ("nvmlDeviceGetFanSpeed_v2",
                                                                "nvmlDeviceGetTargetFanSpeed",
                                                                "nvmlDeviceGetFanControlPolicy_v2") else (handle,)
            why: dict[str, str] = {}
            value = calls.get(why, "x", name, *args)  # a fatal error would raise GpuFailed here
            answers[name] = f"value {value!r}" if value is not None else why["x"]
    finally:
        pynvml.nvmlShutdown()
    print(json.dumps(answers, indent=1))
    out = os.environ.get("FANWHY_GPU_OUT")
    if out:
        Path(out, "fan-calls.json").write_text(json.dumps(answers, indent=1) + "\n")
    assert set(answers) == set(FAN_CALLS)


def test_the_fan_wing_on_a_passive_card_finds_no_fan_of_its_own_and_nothing_wrong() -> None:
    """The live verdict's fan findings on the real card: NVML gives no fan (its fan calls answer NotSupported, the
    card says it is a data-center one), so the wing finds a GPU with no fan reading, no cause, and the card's own
    temperature as the hottest read (nvidia-smi(1): fan.speed [N/A] where the board has none)."""
    from app import build_collector
    from app.collect.settings import Settings

    collector = build_collector(Settings(backend="nvidia", db="none"))
    try:
        frame = collector.collect()
    finally:
        collector.backend.close()
    assert frame is not None and frame.snapshot.verdict is not None
    snap = frame.snapshot
    found = snap.verdict.fan_findings
    print(json.dumps([{"kind": f.kind, "subjects": f.subjects, "facts": dict(f.facts)} for f in found]))
    unreported = [f for f in found if f.kind == "gpu-fan-unreported"]
    # cards alike are one finding (one line, one way of reading no fan): every card is among its subjects
    assert sorted(int(k.removeprefix("nvidia/gpu")) for f in unreported for k in f.subjects) == \
        sorted(g.index for g in snap.gpus)
    assert not [f for f in found if f.cause], found  # nothing wrong with a passive card's cooling is read
    hottest = next(f for f in found if f.kind == "hottest")
    assert hottest.facts["celsius"] == max(g.temperature_c or 0 for g in snap.gpus)
