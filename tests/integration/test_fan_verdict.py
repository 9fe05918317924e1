"""The verdict names the fan and the chain from its speed to the process, on machines built from real captures: a
desktop board, a ThinkPad, an amdgpu card resting in zero-RPM, a GeForce at its floor and under load, a blower
workstation card, and a passive datacenter card in a server whose chassis fans the BMC reports."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pynvml

from app.collect.fans import FanService
from app.core.model import GpuSample, HostSensor
from app.core.snapshot import Snapshot
from app.vendors.nvidia import NvidiaBackend
from app.verdict.explain import explain
from tests.fakes.fake_nvml import FakeNvml, captured_card
from tests.support.builders import gpu as make_gpu
from tests.support.builders import proc, snap
from tests.support.hwmon import hwmon_tree
from tests.support.servers import wait_for

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def with_fans(base: Snapshot, service: FanService, sensors: tuple[HostSensor, ...] = ()) -> Snapshot:
    host = replace(base.host, temperatures=sensors)
    fans, air = service.read(base.gpus, host)
    return replace(base, host=host, fans=fans, air=air)


def nvml_gpus(key: str, fans: int = 1, idle: bool = False) -> list[GpuSample]:
    fake = FakeNvml([captured_card(key, fans=fans)])
    if idle:
        fake.set(0, "utilization", {"gpu": 0, "memory": 0})
        fake.set(0, "pstate", 8)
    backend = NvidiaBackend(nvml=fake)
    backend.open()
    return backend.sample()


def test_a_desktop_cpu_fan_and_the_process_behind_its_source(tmp_path: Path) -> None:
    """The AB350's SmartFan IV tree (its cut name, tachometer and temperature lines added), at the point of its curve
    that 82 °C reaches."""
    root = hwmon_tree(tmp_path, "nct-ab350-smartfan4")
    chip = root / "class" / "hwmon" / "hwmon1"
    for name, value in (("name", "nct6798"), ("fan2_input", "1850"), ("temp2_input", "82000"),
                        ("temp2_label", "CPUTIN"), ("pwm2", "255")):
        (chip / name).write_text(value + "\n")
    service = FanService(sys_root=str(root), etc_root=str(tmp_path / "etc"))
    train = proc(7, "python train.py", gpu_index=None, cpu=244.0)
    cpu = (HostSensor("nct6798", "CPUTIN", 82.0),)
    verdict = explain(with_fans(snap([], [train], cpu=62.0, cores=4), service, cpu))
    assert verdict.headline == ("The CPU fan (nct6798 fan2) runs at 100 % (1,850 RPM), 35 points above its 65 % floor, "
                                "following nct6798 CPUTIN at 82 °C: `python train.py` (alice) uses 244 % of a core.")
    assert verdict.causes[0].kind == "fan" and verdict.causes[0].numbers["fan"] == "hwmon:nct6798/fan2"


def test_a_thinkpad_fan_driven_by_thinkfan_from_its_hottest_sensor(tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "thinkfan.yaml").write_text((FIXTURES / "fandaemons" / "thinkfan-e540-limits.yaml").read_text())
    root = hwmon_tree(tmp_path, "thinkpad-t420")
    # thinkfan sets the fan's level by hand (thinkfan(1): "level N" to /proc/acpi/ibm/fan), so pwm1_enable reads 1
    (root / "class" / "hwmon" / "hwmon1" / "pwm1_enable").write_text("1\n")
    service = FanService(sys_root=str(root), etc_root=str(etc))
    build = proc(9, "make -j8", user="bob", gpu_index=None, cpu=180.0)
    verdict = explain(with_fans(snap([], [build], cpu=95.0, cores=2), service,
                                (HostSensor("coretemp", "Package id 0", 69.0),)))
    assert verdict.headline.startswith("The CPU fan (thinkpad fan1) runs at 100 % (3,855 RPM), following the hottest "
                                       "of coretemp temp1, acpitz temp1, the NVIDIA GPU at 01:00.0")
    assert verdict.headline.endswith(": `make` (bob) uses 180 % of a core.")


def test_an_amdgpu_card_at_rest_in_zero_rpm(tmp_path: Path) -> None:
    service = FanService(sys_root=str(hwmon_tree(tmp_path, "amdgpu-rx7900xtx")), etc_root=str(tmp_path / "etc"))
    card = make_gpu(util=0, temp=53, power=12, fan=0.0, fan_id="hwmon:amdgpu/fan1")  # as the sysfs backend reads it
    state = with_fans(snap([card]), service, (HostSensor("amdgpu", "edge", 53.0),))
    (fan,) = state.fans
    assert fan.state == "stopped" and fan.source == "amdgpu edge" and fan.rpm == 0 and fan.target_rpm is None
    verdict = explain(state)
    lead = verdict.fan_findings[0]  # zero-RPM by the card's design, with the edge read cooler than it rests at
    assert (lead.kind, lead.confidence, lead.subjects, lead.facts["source_c"]) == \
        ("at-rest", "likely", ("amdgpu/fan1",), 53.0)
    assert verdict.headline.startswith("Nothing is busy (GPU 0 idles at 53 °C). The amdgpu fan1 reads 0 RPM"), \
        verdict.headline
    assert "at rest by its controller's design" in verdict.headline


def test_a_geforce_at_its_floor_and_under_load(tmp_path: Path) -> None:
    service = FanService(sys_root=str(tmp_path), etc_root=str(tmp_path))
    idle = explain(with_fans(snap(nvml_gpus("rtx2080-floor", idle=True)), service))
    lead = idle.fan_findings[0]  # NVML's minimum duty is the floor the card's fan idles at
    assert (lead.kind, lead.facts["floor"], lead.facts["held"]) == ("firmware-floor", 30.0, "floor"), lead
    assert idle.headline.startswith("Nothing is busy (GPU 0 idles at 15 °C). The fan 0 of GPU 0 is at 31 %"), \
        idle.headline
    assert "it idles at its floor" in idle.headline
    train = proc(11, "python train.py", sm=97.0, memory=8 << 30)
    loaded = with_fans(snap(nvml_gpus("rtx3090-load-shaped", fans=2), [train]), service)
    verdict = explain(loaded)
    assert verdict.headline == ("GPU 0's fans run at 65 % (target 65 %), 35 points above their 30 % floor, following "
                                "the GPU at 78 °C: `python train.py` (alice) draws 310 W.")
    load = next(c for c in verdict.causes if c.kind == "gpu_load")
    assert "its fans run at 65 % (target 65 %)" in load.summary


def test_a_blower_workstation_card_idles_at_its_floor(tmp_path: Path) -> None:
    service = FanService(sys_root=str(tmp_path), etc_root=str(tmp_path))
    state = with_fans(snap(nvml_gpus("a5000-blower", idle=True)), service)
    assert state.fans[0].state == "floor"
    idle = explain(state)
    assert (idle.fan_findings[0].kind, idle.fan_findings[0].facts["held"]) == ("firmware-floor", "floor")
    assert "the lowest duty its controller runs it at (30 %): it idles at its floor" in idle.headline, idle.headline
    busy = proc(3, "python render.py", sm=60.0)
    cards = nvml_gpus("a5000-blower")
    loaded = explain(with_fans(snap(cards, [busy]), service))
    assert "its fan idles at the floor (30 % is this card's minimum)" in loaded.headline


R320 = (FIXTURES / "bmc" / "dell-r320-failed-fans-sdr.txt").read_text()


def r320(rpm: int) -> str:
    """The R320's listing (its names, statuses, inlet and the two failed fans) with the healthy fans at ``rpm``."""
    return re.sub(r"\| \d{4} RPM", f"| {rpm} RPM", R320)


def test_a_passive_datacenter_card_in_a_server_with_bmc_fans(tmp_path: Path) -> None:
    """Four passive cards heat up; the chassis fans (the BMC's) rise from 3,000 to 9,600 RPM, the range an R720xd's
    owner measured. Before their floor is known the verdict says what the BMC reads; once learned, the chain."""
    listing = {"text": r320(3000)}
    clock = {"now": 1000.0}
    service = FanService(sys_root=str(tmp_path), etc_root=str(tmp_path), bmc_run=lambda: listing["text"],
                         bmc_every_s=0.001, every_s=0, clock=lambda: clock["now"])
    cards = [GpuSample(**{**make_gpu(i, util=0, temp=30, power=60, fan=None).__dict__}) for i in range(4)]
    job = proc(21, "torchrun train.py", sm=95.0)
    wait_for(lambda: service.read(cards, snap([]).host)[0])
    first = explain(with_fans(snap([replace(cards[0], utilization_percent=95.0, power_w=300.0), *cards[1:]], [job]),
                              service))
    assert "it has no fan of its own (passively cooled): the chassis fans run at 7,560 RPM (inlet 32 °C)" not in \
        first.headline  # the healthy fans read 3,000 now
    assert "the chassis fans run at 3,000 RPM (inlet 32 °C)" in first.headline
    for t in range(300):  # the cards heat for five minutes; the fans follow them
        celsius = 30 + min(45.0, t * 0.3)
        rpm = int(3000 + (celsius - 30) * 146)
        listing["text"] = r320(rpm)
        hot = [replace(c, temperature_c=celsius, utilization_percent=95.0, power_w=690.0) for c in cards]
        state = with_fans(snap(hot, [job]), service)
        clock["now"] += 1
    verdict = explain(state)
    assert verdict.headline.startswith("The chassis fans run at 9,570 RPM, 6,570 above their idle floor, following "
                                       "GPU "), verdict.headline
    # four cards heat alike: any of them explains the fans, so FanWhy is only half sure which
    assert "(learned from its history, 50 % sure)" in verdict.headline
    assert verdict.headline.endswith(": GPUs 0-3 draw 690 W each, `torchrun … train.py` (alice) on GPU 0.")
    faults = [c for c in verdict.causes if c.kind == "fan_fault"]
    assert {c.numbers["fan"] for c in faults} == {"bmc:Fan3B", "bmc:Fan4B"}
    assert all("The BMC reports the Fan" in c.summary and "failed (status cr, reading 0 RPM)" in c.summary
               for c in faults), [c.summary for c in faults]


def test_the_h100_without_fans_or_bmc_keeps_the_chassis_clause() -> None:
    from tests.fakes.fake_nvml import scenario

    backend = NvidiaBackend(nvml=scenario("h100_load"))
    backend.open()
    gpus = backend.sample()
    job = proc(5, "python bench.py", sm=99.0)
    service = FanService(sys_root="/nonexistent", etc_root="/nonexistent", bmc_run="no BMC read: FANWHY_BMC=off")
    verdict = explain(with_fans(snap(gpus, [job]), service))
    assert verdict.headline.endswith("it has no fan of its own (passively cooled): the chassis fans answer its heat.")
    assert not [c for c in verdict.causes if c.kind in ("fan", "fan_fault")]
    assert pynvml.NVMLError is not None
