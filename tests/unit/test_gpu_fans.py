"""A GPU's fans through NVML, on cards shaped from what nvidia-smi said of real ones (tests/fixtures/gpu-fans/):
fan-stop at 0 %, the 30 % floor, a blower, a passive card that says "N/A" and one that says "0 %"."""

from __future__ import annotations

import pynvml
import pytest

from app.collect.fans import FanService
from app.core.fan import Fan, fan_state
from app.core.model import GpuSample
from app.vendors.nvidia import NvidiaBackend
from app.vendors.nvml_fans import PASSIVELY_COOLED, cools
from tests.fakes.fake_nvml import FakeNvml, captured_card, load_dump
from tests.support.builders import snap


def sample(fake: FakeNvml):
    backend = NvidiaBackend(nvml=fake)
    backend.open()
    (gpu,) = backend.sample()
    return gpu


def judged(gpu: GpuSample) -> tuple[Fan, ...]:
    """A card's fans as the fan service gives them: NVML's facts judged by the fan wing with the card's temperature."""
    return FanService(sys_root="/nonexistent", etc_root="/nonexistent").read([gpu], snap([gpu]).host)[0]


def test_a_geforce_at_rest_is_stopped_not_passive() -> None:
    gpu = sample(FakeNvml([captured_card("rtx3090-idle", fans=2)]))
    assert not gpu.passively_cooled and len(gpu.fans) == 2
    assert not any(f.stopped for f in gpu.fans)  # the reader reads; whether 0 % is a rest is the wing's judgement
    for fan in judged(gpu):
        assert fan.percent == 0 and fan.target_percent == 0 and fan.stopped
        assert fan.floor_percent == 30 and fan.state == "stopped"
        assert fan.control == "automatic" and "temperature curve" in (fan.controller or "")
        assert fan.gpu_index == 0 and fan.cools == "the GPU" and fan.source == "GPU 0" and fan.source_from == "design"


def test_a_card_at_its_floor_and_one_above_it() -> None:
    at_floor = sample(FakeNvml([captured_card("rtx2080-floor")])).fans[0]
    assert at_floor.percent == 31 and not at_floor.stopped and fan_state(at_floor) == "floor"
    blower = sample(FakeNvml([captured_card("a5000-blower")])).fans[0]
    assert blower.percent == 30 and fan_state(blower) == "floor"
    loaded = sample(FakeNvml([captured_card("rtx3090-load-shaped")])).fans[0]
    assert loaded.percent == 65 and loaded.target_percent == 65 and fan_state(loaded) == "running"


def test_a_passive_card_makes_no_per_fan_call() -> None:
    fake = FakeNvml([captured_card("t4-passive")])
    gpu = sample(fake)
    assert gpu.fans == () and gpu.passively_cooled and gpu.unsupported["fan_speed_percent"] == PASSIVELY_COOLED
    assert not [key for key in fake.calls if key.startswith(("fan_", "cooler"))]


def test_the_h100_as_measured_has_no_fans_and_nothing_raises() -> None:
    gpu = sample(FakeNvml(load_dump("h100-idle")[:1]))  # the real dump: 0 fans, the per-fan calls InvalidArgument
    assert gpu.fans == () and gpu.passively_cooled and gpu.fan_rpm is None
    assert gpu.unsupported["fan_rpm"] == PASSIVELY_COOLED


def test_a_passive_card_that_reports_zero_percent_is_told_as_such() -> None:
    """An A10G says "0 %" though it has no fan: with no target and no range, FanWhy cannot tell fan-stop from that,
    and says so instead of choosing."""
    fake = FakeNvml([captured_card("a10g-passive")])
    for key in ("fan_target_0", "fan_min_max", "cooler", "fan_policy_0"):
        fake.set(0, key, pynvml.NVMLError_NotSupported())
    (fan,) = judged(sample(fake))
    assert fan.percent == 0 and fan.floor_percent is None and fan.control == "unknown"
    assert not fan.stopped and fan.state == "unknown"  # fan-stop or no fan at all: neither is chosen
    assert "passive card that reports 0 %" in fan.unsupported["stopped"]
    assert fan.unsupported["target_percent"] == "not supported by this GPU"


def test_manual_policy_target_apart_from_speed_and_rpm_of_fan_zero_only() -> None:
    fake = FakeNvml([captured_card("rtx3090-load-shaped", fans=2)])
    fake.set(0, "fan_policy_1", 1)
    fake.set(0, "fan_target_1", 80)
    fake.set(0, "fan_rpm", 1710)
    first, second = sample(fake).fans
    assert first.rpm == 1710 and second.rpm is None and "first fan only" in second.unsupported["rpm"]
    assert second.control == "manual" and second.target_percent == 80 and second.percent == 65
    assert first.control == "automatic"


def test_a_lost_gpu_during_a_fan_call_fails_the_gpu_not_the_collector() -> None:
    fake = FakeNvml([captured_card("rtx2080-floor")])
    backend = NvidiaBackend(nvml=fake)
    backend.open()
    fake.set(0, "fan_target_0", pynvml.NVMLError_GpuIsLost())
    (gpu,) = backend.sample()
    assert gpu.error and "GpuIsLost" in gpu.error


def test_cooler_targets_in_words() -> None:
    assert cools(2) == "the GPU"
    assert cools(2 | 4 | 8) == "the GPU, its memory and its power supply"
    assert cools(1) is None  # NONE


@pytest.mark.parametrize(("fan", "state"), [
    (Fan("a", "c", 1, None, dead="0 RPM"), "dead"),
    (Fan("a", "c", 1, None, percent=50, alarm="the BMC reports it critical", alarm_kind="failed"), "failed"),
    (Fan("a", "c", 1, None, percent=50, alarm="off target: 40 % short", alarm_kind="off-target"), "off-target"),
    (Fan("a", "c", 1, None, percent=0, stopped=True), "stopped"),
    (Fan("a", "c", 1, None, percent=95), "full"),
    (Fan("a", "c", 1, None, percent=94, floor_percent=30), "running"),
    (Fan("a", "c", 1, None, percent=33, floor_percent=30), "floor"),
    (Fan("a", "c", 1, None, percent=34, floor_percent=30), "running"),
    (Fan("a", "c", 1, None, rpm=1000, floor_rpm=960), "floor"),
    (Fan("a", "c", 1, None, rpm=1100, floor_rpm=1000), "running"),
    (Fan("a", "c", 1, None, rpm=4800, max_rpm=5000), "full"),
    (Fan("a", "c", 1, None, rpm=0), "unknown"),  # 0 RPM, no duty: at rest or a tachometer that does not report
    (Fan("a", "c", 1, None), "unknown"),
])
def test_fan_state_in_a_word(fan: Fan, state: str) -> None:
    assert fan_state(fan) == state


def test_a_fan_names_itself_and_its_speed() -> None:
    fan = Fan("hwmon:nct6798/fan2", "nct6798", 2, "CPU fan", rpm=1850)
    assert fan.name == "CPU fan (nct6798 fan2)" and fan.speed == "1,850 RPM"
    assert Fan("x", "nct6798", 2, None, percent=65.0, rpm=1400).speed == "65 % (1,400 RPM)"
    assert Fan("x", "nct6798", 2, None).name == "nct6798 fan2"


def test_raw_nvml_fan_values_out_of_range_are_not_readings() -> None:
    """A garbled intended speed (255 % on a card whose range tops at 100), a target past it and an RPM of 70,000 are
    left out with the raw value as the reason; the card's declared top (110 %) is in range (fails without
    ``checked`` in nvml_fans)."""
    fake = FakeNvml([captured_card("rtx3090-load-shaped", fans=2)])
    fake.set(0, "fan_v2_0", 255)
    fake.set(0, "fan_target_1", 4000)
    fake.set(0, "fan_rpm", 70000)
    first, second = sample(fake).fans
    assert first.percent is None and "read 255" in first.unsupported["percent"]
    assert first.rpm is None and "read 70000" in first.unsupported["rpm"]
    assert second.target_percent is None and "read 4000" in second.unsupported["target_percent"]
    assert second.percent == 65
    fake = FakeNvml([captured_card("rtx3090-load-shaped")])
    fake.set(0, "fan_min_max", [30, 110])
    fake.set(0, "fan_v2_0", 110)
    assert sample(fake).fans[0].percent == 110
