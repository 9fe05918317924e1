"""The one-line mistakes a fan rule can hide behind, each with the test that catches it: at rest under a small
duty, a lowest speed outside manual control, the wrong bit of ``auto_channels_temp``, a faulted input kept, two
drivers that agree called disagreeing, "at rest" beside a fan at its floor, a target at the floor called below it,
a guessed source named under the confidence floor, a daemon's tolerance widened, a fan-stop called while the driver
aims at a speed. Each is documented behaviour (kernel hwmon sysfs ABI, nct6775.rst, NVML), not one machine's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.collect.fanlearn import Fit
from app.collect.fans import FanService
from app.collect.hwmon import chip_temperatures, read_fans
from app.core.fan import CONFIDENCE_FLOOR, Fan
from app.fans.adapt import fan_fact
from app.fans.answer import findings
from app.fans.facts import Machine, TempFact
from app.vendors.nvidia import NvidiaBackend
from tests.fakes.fake_nvml import FakeNvml, captured_card
from tests.support.builders import snap
from tests.support.fan_checks import nvidia_smi_table
from tests.support.hwmon import judged_fans


def chip(root: Path, name: str, files: dict[str, object]) -> Path:
    folder = root / "class" / "hwmon" / "hwmon0"
    folder.mkdir(parents=True)
    (folder / "name").write_text(name + "\n")
    for file, value in files.items():
        (folder / file).write_text(f"{value}\n")
    return folder


def test_a_fan_at_0_rpm_under_a_small_duty_is_not_at_rest(tmp_path: Path) -> None:
    """Zero-RPM means the duty asks for nothing: pwm 25 of 255 asks for a little, so 0 RPM is not a rest (the card
    at 40 °C, cool enough for its zero-RPM)."""
    chip(tmp_path, "amdgpu", {"fan1_input": 0, "pwm1": 25, "pwm1_enable": 2, "temp1_input": 40000,
                              "temp1_label": "edge"})
    (fan,) = judged_fans(tmp_path)
    assert not fan.stopped and fan.state != "stopped"
    (tmp_path / "class" / "hwmon" / "hwmon0" / "pwm1").write_text("0\n")
    (fan,) = judged_fans(tmp_path)
    assert fan.stopped and fan.state == "stopped"  # the duty asks for nothing: at rest


def test_a_lowest_speed_is_learned_only_under_manual_control(tmp_path: Path) -> None:
    """A duty of 0 that still turns is the fan's lowest speed only where the 0 was written (pwm_enable 1); under
    the chip's automatic mode the pwm register is the curve's, not a floor."""
    folder = chip(tmp_path, "nct6798", {"fan1_input": 900, "pwm1": 0, "pwm1_enable": 5})
    (fan,) = read_fans(tmp_path)
    assert fan.floor_rpm is None
    (folder / "pwm1_enable").write_text("1\n")
    (fan,) = read_fans(tmp_path)
    assert fan.floor_rpm == 900


def test_auto_channels_temp_names_its_lowest_bit(tmp_path: Path) -> None:
    """Documentation/hwmon/sysfs-interface.rst: pwmN_auto_channels_temp is a bitfield, bit 0 temp1; with temp2 and
    temp3 both selected the source read first is temp2."""
    chip(tmp_path, "nct6775", {"fan1_input": 1200, "pwm1": 128, "pwm1_enable": 5, "pwm1_auto_channels_temp": 6,
                               "temp2_input": 45000, "temp2_label": "SYSTIN", "temp3_input": 50000,
                               "temp3_label": "CPUTIN"})
    (fan,) = read_fans(tmp_path)
    assert fan.source == "SYSTIN" and fan.source_c == 45.0


def test_an_input_the_driver_marks_faulted_is_left_out(tmp_path: Path) -> None:
    folder = chip(tmp_path, "nct6798", {"temp1_input": 45000, "temp1_fault": 1, "temp2_input": 40000})
    found, left_out, _ = chip_temperatures(folder)
    assert [s.label for s in found] == ["temp2"] and "fault" in left_out["nct6798 temp1"]


def _fan(chip_name: str, channel: int, **values: Any) -> Fan:
    return Fan(id=f"hwmon:{chip_name}/fan{channel}", chip=chip_name, channel=channel, label=None, **values)


def _kinds(*fans: Fan, temps: tuple[TempFact, ...] = ()) -> dict[str, tuple[str, ...]]:
    """The fan wing's findings on these live fans (and temperatures): each kind with its subjects."""
    return {f.kind: f.subjects for f in findings(Machine(tuple(map(fan_fact, fans)), temps))}


def test_two_drivers_of_one_chip_that_agree_are_not_said_to_disagree() -> None:
    assert "drivers-disagree" not in _kinds(_fan("nct6683", 1, rpm=900), _fan("nct6687", 1, rpm=905))
    assert _kinds(_fan("nct6683", 1, rpm=900), _fan("nct6687", 1, rpm=0))["drivers-disagree"] == \
        ("nct6683", "nct6687")


def test_fans_are_at_rest_only_when_every_one_is() -> None:
    """A card in zero-RPM beside a board fan at its floor: the card's fan rests, the board's does not."""
    resting = _fan("amdgpu", 1, rpm=0, percent=0.0, stopped=True, state="stopped")
    at_its_floor = _fan("nct6798", 2, rpm=700, percent=31.0, floor_percent=30.0, state="floor")
    edge = (TempFact("amdgpu/edge", "amdgpu", "edge", 40.0, 40.0, role="gpu"),)
    found = _kinds(resting, at_its_floor, temps=edge)
    assert found["at-rest"] == ("amdgpu/fan1",) and "nct6798/fan2" not in found["at-rest"]
    turning = _fan("amdgpu", 1, rpm=700)  # a card that rests by design, turning with no duty read: not at rest
    assert "at-rest" not in _kinds(turning, temps=edge)


def test_a_target_at_the_floor_is_not_below_it() -> None:
    """NVML's target at its minimum duty (within half a point: it counts whole percents) is at the floor; under it,
    asked below what manual control accepts."""
    def held(target: float) -> str:
        fan = _fan("GPU 0", 0, rpm=1500, percent=30.0, target_percent=target, floor_percent=30.0, control="manual",
                   gpu_index=0)
        facts = Machine((fan_fact(fan),))
        floor = next(f for f in findings(facts) if f.kind == "firmware-floor")
        return str(floor.facts["held"])

    assert held(30.0) == held(29.5) == "floor"
    assert held(0.0) == held(29.0) == "asked-below"


def test_a_learned_source_is_named_only_above_the_confidence_floor(tmp_path: Path) -> None:
    service = FanService(sys_root=str(tmp_path), etc_root=str(tmp_path), bmc_run="none here", every_s=0)
    try:
        fan = _fan("nct6798", 2, rpm=1200)
        weak = Fit("nct6798 CPUTIN", 10.0, (), None, None, None, None, CONFIDENCE_FLOOR - 0.05, 0.5, None)
        service._fits[fan.id] = weak
        assert service._sourced(fan, {}, ()).source_from is None
        service._fits[fan.id] = Fit("nct6798 CPUTIN", 10.0, (), None, None, None, None, CONFIDENCE_FLOOR, 0.8, None)
        assert service._sourced(fan, {}, ()).source_from == "learned"
    finally:
        service.close()


def test_a_card_ten_points_off_the_daemons_last_setting_is_not_following_it(tmp_path: Path) -> None:
    """The daemon logged 40 % then 30 %; the card reads 40 %: ten points off what was last set is not following."""
    log = tmp_path / "log.txt"
    log.write_text("Updated GPU 0: Temp=40°C, Fan Speed=40%\nUpdated GPU 0: Temp=40°C, Fan Speed=30%\n" +
                   nvidia_smi_table("| 40%   32C    P8    12W / 120W |      2MiB /  6144MiB |      0%      Default |"))
    from app.cli.replay import answer, replayed

    snap, replay = replayed([log])
    assert replay.notes and "not following it" in answer(snap, replay.notes)[0]
    log.write_text(log.read_text().replace("| 40%   32C", "| 33%   32C"))
    snap, replay = replayed([log])
    assert "not following it" not in answer(snap, replay.notes)[0]  # 3 points off: the daemon's own step


def test_an_nvml_fan_at_0_while_the_driver_aims_at_60_is_not_fan_stop() -> None:
    """NVML: fan-stop is the driver intending 0 % and aiming at 0 %; 0 % while the target is 60 % is a fan that
    does not reach what it is asked, and the fan wing says so."""
    fake = FakeNvml([captured_card("rtx3090-idle")])
    fake.set(0, "fan_target_0", 60)
    backend = NvidiaBackend(nvml=fake)
    backend.open()
    (gpu,) = backend.sample()
    (fan,) = gpu.fans
    assert fan.percent == 0 and fan.target_percent == 60
    found = findings(Machine(fans=(fan_fact(fan),)))
    assert found[0].kind == "target-not-met" and found[0].facts["target_percent"] == 60
    assert "at-rest" not in {f.kind for f in found}
    host = snap([gpu]).host  # as the fan service judges it, with the card's own temperature (cool: fan-stop's range)
    (judged,) = FanService(sys_root="/nonexistent", etc_root="/nonexistent").read([gpu], host)[0]
    assert judged.state == "stalled" and judged.alarm_kind == "stalled" and not judged.stopped
    assert "asked for 60 % and reads 0" in (judged.alarm or "")
