"""Every fan of a machine through the fan service: hwmon trees and BMC listings of real machines
(tests/fixtures/hwmon/, tests/fixtures/bmc/), fan daemons' configurations, the BMC on its own clock with a timeout,
learned sources, and health (off target, full speed for no heat, a failed BMC fan)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from app.collect.bmc import ipmitool
from app.collect.config import ConfigError, load_settings
from app.collect.fans import FanService
from app.core.model import HostSample, HostSensor
from app.fans.rules import SPIN_UP_S
from tests.fakes.fake_nvml import FakeNvml, captured_card
from tests.support.hwmon import hwmon_tree
from tests.support.servers import wait_for

BMC = Path(__file__).resolve().parent.parent / "fixtures" / "bmc"
DEMO_CPU = HostSample(hostname="h", cpu_percent=10.0, cpu_count=4, load_average=None, memory_used_bytes=None,
                      memory_total_bytes=None)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def host(*sensors: HostSensor) -> HostSample:
    return HostSample(hostname="h", cpu_percent=10.0, cpu_count=4, load_average=None, memory_used_bytes=None,
                      memory_total_bytes=None, temperatures=sensors)


def listing(name: str) -> str:
    return (BMC / f"{name}.txt").read_text()


def test_a_thinkpad_fan_under_its_ec_has_a_speed_and_no_duty(tmp_path: Path) -> None:
    """thinkpad_acpi.c (fan_pwm1_show): under the EC (pwm1_enable 2) pwm1 shows the level kept for manual control,
    255 until one is set, not the fan's: the fan turns at its speed, with no duty and not "full"."""
    root = hwmon_tree(tmp_path, "thinkpad-t420")
    service = FanService(sys_root=str(root), etc_root=str(tmp_path / "etc"))
    (fan,), air = service.read([], host())
    assert fan.rpm == 3855 and fan.percent is None and fan.control == "automatic"
    assert "embedded controller" in (fan.controller or "") and fan.state != "full" and air == ()
    (root / "class" / "hwmon" / "hwmon1" / "pwm1_enable").write_text("1\n")  # set by hand: pwm1 is its level, 7
    (fan,), _ = FanService(sys_root=str(root), etc_root=str(tmp_path / "etc")).read([], host())
    assert fan.percent == 100.0 and fan.control == "manual" and fan.state == "full"


def test_a_desktop_fan_follows_what_its_chip_declares(tmp_path: Path) -> None:
    """The AB350 capture (SmartFan IV on pwm2, pwm2_temp_sel 2) had its name, tachometer and temperature lines cut;
    the test adds them as the driver names them."""
    root = hwmon_tree(tmp_path, "nct-ab350-smartfan4")
    chip = root / "class" / "hwmon" / "hwmon1"
    for name, value in (("name", "nct6779"), ("fan2_input", "1850"), ("temp2_input", "82000"),
                        ("temp2_label", "CPUTIN")):
        (chip / name).write_text(value + "\n")
    service = FanService(sys_root=str(root), etc_root=str(tmp_path / "etc"))
    fans, _ = service.read([], host(HostSensor("nct6779", "CPUTIN", 82.0)))
    fan = next(f for f in fans if f.channel == 2)
    assert (fan.source, fan.source_c, fan.source_from) == ("nct6779 CPUTIN", 82.0, "declared")
    assert fan.floor_percent == 64.7 and fan.curve[-1] == (70.0, 100.0) and "SmartFan IV" in (fan.controller or "")


def test_a_fancontrol_declaration_names_the_daemon_and_the_source_by_chip(tmp_path: Path) -> None:
    """/etc/fancontrol of a real nct6799 + amdgpu + k10temp desktop: the case fan (pwm6) follows the GPU."""
    sys_root = tmp_path / "sys"
    for n, (name, files) in enumerate((("amdgpu", {"temp1_input": "61000", "temp1_label": "edge"}),
                                       ("nct6799", {"fan6_input": "1200", "pwm6": "128", "pwm6_enable": "1",
                                                    "fan5_input": "900", "pwm5": "60", "pwm5_enable": "1"}),
                                       ("k10temp", {"temp1_input": "55000", "temp1_label": "Tctl"}))):
        chip = sys_root / "class" / "hwmon" / f"hwmon{n + 2}"  # not the numbers the config names: they renumber
        chip.mkdir(parents=True)
        for file, value in {"name": name, **files}.items():
            (chip / file).write_text(value + "\n")
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "fancontrol").write_text((Path(__file__).parent.parent / "fixtures" / "fancontrol" /
                                     "nct6799-amdgpu-k10temp.txt").read_text())
    service = FanService(sys_root=str(sys_root), etc_root=str(etc))
    fans, _ = service.read([], host(HostSensor("amdgpu", "edge", 61.0), HostSensor("k10temp", "Tctl", 55.0)))
    by_channel = {f.channel: f for f in fans if f.chip == "nct6799"}
    assert by_channel[6].source == "amdgpu edge" and by_channel[6].source_c == 61.0
    assert by_channel[5].source == "k10temp Tctl" and by_channel[5].source_c == 55.0
    assert by_channel[6].controller is not None and by_channel[6].controller.startswith("fancontrol")
    assert by_channel[6].curve == ((40.0, 9.4), (80.0, 75.3)) and by_channel[6].source_from == "declared"


def test_a_broken_daemon_configuration_is_named_not_fatal(tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "thinkfan.yaml").write_text("sensors: [\n")
    service = FanService(sys_root=str(hwmon_tree(tmp_path, "thinkpad-t420")), etc_root=str(etc))
    (fan,), _ = service.read([], host())
    assert fan.source_from is None and "not YAML" in service.config_errors[str(etc / "thinkfan.yaml")]


def test_the_gpus_own_fans_follow_their_gpu(tmp_path: Path) -> None:
    from app.vendors.nvidia import NvidiaBackend

    backend = NvidiaBackend(nvml=FakeNvml([captured_card("rtx3090-load-shaped", fans=2)]))
    backend.open()
    gpus = backend.sample()
    fans, _ = FanService(sys_root=str(tmp_path), etc_root=str(tmp_path)).read(gpus, host())
    assert [f.id for f in fans] == ["nvml:0/fan0", "nvml:0/fan1"]
    assert all(f.source == "GPU 0" and f.source_c == 78.0 and f.state == "running" for f in fans)


def test_bmc_fans_and_air_come_from_their_own_thread(tmp_path: Path) -> None:
    calls = []

    def run() -> str:
        calls.append(time.monotonic())
        return listing("supermicro-sdr")

    service = FanService(sys_root=str(tmp_path), etc_root=str(tmp_path), bmc_run=run, bmc_every_s=3600,
                         threaded=True)
    wait_for(lambda: calls and service.read([], host())[0])
    fans, air = service.read([], host())
    live = [f for f in fans if f.state != "dead"]
    assert [(f.label, f.rpm) for f in live] == [("FAN1", 3400), ("FAN2", 3400), ("FANA", 3500)]
    assert {f.label for f in fans if f.state == "dead"} == {"FAN3", "FAN4", "FAN5", "FAN6", "FANB"}
    assert all(f.dead and "no reading" in f.dead for f in fans if f.state == "dead")
    assert [(a.role, a.label, a.temperature_c) for a in air[:2]] == [("cpu", "CPU1 Temp", 29.0),
                                                                     ("cpu", "CPU2 Temp", 29.0)]
    assert "MB_10G Temp" not in {a.label for a in air}  # no reading: no probe
    assert {a.role for a in air} == {"cpu", "other"}  # this board names no inlet or exhaust
    service.close()
    assert len(calls) == 1  # every bmc_every_s, not every tick


def test_a_slow_bmc_never_holds_a_tick(tmp_path: Path) -> None:
    release = threading.Event()

    def slow() -> str:
        release.wait(30)
        return listing("supermicro-sdr")

    service = FanService(sys_root=str(tmp_path), etc_root=str(tmp_path), bmc_run=slow, bmc_every_s=3600,
                         threaded=True)
    started = time.monotonic()
    fans, _ = service.read([], host())
    assert time.monotonic() - started < 0.5 and fans == ()
    release.set()
    service.close()


def test_a_failed_bmc_fan_is_an_alarm_and_a_bmc_error_is_kept(tmp_path: Path) -> None:
    service = FanService(sys_root=str(tmp_path), etc_root=str(tmp_path),
                         bmc_run=lambda: listing("dell-r320-failed-fans-sdr"), bmc_every_s=3600, threaded=True)
    wait_for(lambda: service.read([], host())[0])
    failed = [f for f in service.read([], host())[0] if f.state == "failed"]
    assert failed and all("critical" in (f.alarm or "") for f in failed)
    service.close()

    def broken() -> str:
        raise OSError("ipmi device busy")

    service = FanService(sys_root=str(tmp_path), etc_root=str(tmp_path), bmc_run=broken, bmc_every_s=3600,
                         threaded=True)
    wait_for(lambda: service.read([], host()) == ((), ()) and service.problems())
    assert service.problems() == ["fan source the BMC (ipmitool sdr elist): ipmi device busy"]
    service.close()


def test_no_ipmitool_or_no_device_is_a_reason_and_the_setting_turns_it_off(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert ipmitool(1.0) == "no BMC read: ipmitool is not installed"
    tool = tmp_path / "ipmitool"
    tool.write_text("#!/bin/sh\nsleep 5\n")
    tool.chmod(0o755)
    reason = ipmitool(1.0)
    if not any(os.path.exists(p) for p in ("/dev/ipmi0", "/dev/ipmi/0", "/dev/ipmidev/0")):
        assert isinstance(reason, str) and "no IPMI device" in reason
    assert load_settings({"FANWHY_BMC": "off"}).bmc is False
    try:
        load_settings({"FANWHY_BMC_INTERVAL": "0.1"})
    except ConfigError as error:
        assert "FANWHY_BMC_INTERVAL" in str(error)
    else:
        raise AssertionError("a BMC read every 0.1 s was accepted")


def test_a_fan_far_from_its_target_longer_than_a_spin_up_is_off_target(tmp_path: Path) -> None:
    root = hwmon_tree(tmp_path, "amdgpu-rx9070xt")
    chip = next((root / "class" / "hwmon").iterdir())
    (chip / "name").write_text("it8792\n")  # a chip whose fan1_target is a target (amdgpu's repeats the reading)
    clock = Clock()
    service = FanService(sys_root=str(root), etc_root=str(tmp_path / "etc"), every_s=0, clock=clock)
    (fan,), _ = service.read([], host())
    assert fan.alarm is None and fan.state in ("running", "floor")
    (chip / "fan1_target").write_text("2400\n")  # asked for 2,400 RPM; the fan stays at 896
    (fan,), _ = service.read([], host())
    assert fan.alarm is None  # spinning up
    clock.now += SPIN_UP_S + 1
    (fan,), _ = service.read([], host())
    assert fan.state == "off-target" and "896 RPM against a target of 2,400 RPM" in (fan.alarm or "")
    (chip / "fan1_input").write_text("2350\n")  # it caught up
    (fan,), _ = service.read([], host())
    assert fan.alarm is None


def test_full_speed_while_its_source_is_cool_is_an_alarm(tmp_path: Path) -> None:
    root = hwmon_tree(tmp_path, "nct-ab350-smartfan4")
    chip = root / "class" / "hwmon" / "hwmon1"
    for name, value in (("name", "nct6779"), ("fan2_input", "2600"), ("temp2_input", "35000"), ("pwm2", "255"),
                        ("pwm2_enable", "1"), ("temp2_label", "CPUTIN")):
        (chip / name).write_text(value + "\n")
    service = FanService(sys_root=str(root), etc_root=str(tmp_path / "etc"))
    fan = next(f for f in service.read([], host())[0] if f.channel == 2)
    assert fan.state == "full" and fan.alarm is not None
    assert "full speed while CPUTIN (nct6779) is at 35 °C: a manual override or lost control" in fan.alarm


def test_an_undeclared_fan_learns_its_source_from_history(tmp_path: Path) -> None:
    """A case fan that software drives after GPU 0's heat, five seconds late; two other temperatures move too."""
    from app.core.model import GpuSample

    root = tmp_path / "sys"
    chip = root / "class" / "hwmon" / "hwmon1"
    chip.mkdir(parents=True)
    (chip / "name").write_text("nct6798\n")
    (chip / "pwm1_enable").write_text("1\n")
    clock = Clock()
    service = FanService(sys_root=str(root), etc_root=str(tmp_path / "etc"), every_s=0, clock=clock)
    gpu_c = [40 + 30 * ((t // 90) % 2) * min(1, (t % 90) / 30) for t in range(400)]
    fan = None
    for t in range(400):
        duty = max(30.0, min(100.0, 30 + (gpu_c[max(0, t - 5)] - 40) * 2))
        (chip / "pwm1").write_text(f"{round(duty * 2.55)}\n")
        (chip / "fan1_input").write_text(f"{round(400 + 12 * duty)}\n")
        gpus = [GpuSample(vendor="nvidia", index=0, temperature_c=gpu_c[t])]
        sensors = (HostSensor("k10temp", "Tctl", 45 + 10 * ((t // 37) % 2)), HostSensor("nvme", "Composite",
                                                                                          38 + (t % 50) / 10))
        (fan,), _ = service.read(gpus, host(*sensors))
        clock.now += 1
    assert fan is not None and fan.source == "GPU 0" and fan.source_from == "learned"
    assert fan.confidence is not None and fan.confidence > 0.8 and fan.curve
    assert fan.floor_percent is not None and abs(fan.floor_percent - 30) < 2
