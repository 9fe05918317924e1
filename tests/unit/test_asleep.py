"""A runtime-suspended GPU (a laptop's discrete GPU at rest) is not woken to be read: its power state is read from
sysfs first, and then no NVML call, no sysfs sensor and no hwmon file of it is touched until something else wakes
it; it is shown asleep, in words, everywhere."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from app.cli.terminal import render
from app.collect.hwmon import read_fans, read_temperatures
from app.vendors import basic as basic_module
from app.vendors.basic import BasicBackend
from app.vendors.nvidia import NvidiaBackend
from app.vendors.nvidia_smi import NvidiaSmi
from app.vendors.sysfs import ASLEEP
from app.verdict.explain import explain
from tests.fakes.fake_nvml import scenario
from tests.support.builders import snap
from tests.support.hwmon import hwmon_tree

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def power_state(sys_root: Path, bus_id: str, state: str) -> None:
    device = sys_root / "bus" / "pci" / "devices" / bus_id / "power"
    device.mkdir(parents=True, exist_ok=True)
    (device / "runtime_status").write_text(state + "\n")


def test_nvml_never_touches_a_sleeping_gpu_and_reads_it_again_once_awake(tmp_path: Path) -> None:
    fake = scenario("h200x2_load")
    power_state(tmp_path, "0000:00:07.0", "suspended")  # GPU 1 of the H200 dump
    power_state(tmp_path, "0000:00:06.0", "active")
    backend = NvidiaBackend(nvml=fake, sys_root=str(tmp_path))
    backend.open()
    fake.asleep.add(1)  # from here on, any call to GPU 1 fails the test
    for _ in range(3):
        awake, sleeping = backend.sample()
        backend.processes()
    assert awake.utilization_percent is not None and not awake.asleep
    assert sleeping.asleep and sleeping.error is None and sleeping.utilization_percent is None
    assert sleeping.unsupported["asleep"] == ASLEEP and sleeping.name == "NVIDIA H200"
    fake.asleep.clear()
    power_state(tmp_path, "0000:00:07.0", "active")
    _, woken = backend.sample()
    assert not woken.asleep and woken.utilization_percent is not None
    backend.close()


def test_the_basic_backend_reads_no_sensor_of_a_sleeping_card(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    root = tmp_path / "sys"
    shutil.copytree(FIXTURES / "sysfs" / "desktop", root, symlinks=True)
    amd = root / "devices" / "pci0000:00" / "0000:03:00.0"
    (amd / "power").mkdir(exist_ok=True)
    (amd / "power" / "runtime_status").write_text("suspended\n")
    from app.vendors import sysfs

    real = sysfs.sample_card
    touched: list[str | None] = []

    def counted(card: sysfs.DrmCard, index: int, names: dict[str, str] | None = None) -> object:
        touched.append(card.pci_bus_id)
        return real(card, index, names)

    monkeypatch.setattr(basic_module, "sample_card", counted)
    backend = BasicBackend(sys_root=root, nvidia_smi=NvidiaSmi("/nonexistent/nvidia-smi", 1.0))
    backend.open()
    gpus = backend.sample()
    card = next(g for g in gpus if g.pci_bus_id == "0000:03:00.0")
    assert card.asleep and card.unsupported["asleep"] == ASLEEP and card.utilization_percent is None
    assert "0000:03:00.0" not in touched and touched  # the other cards are read


def test_a_sleeping_cards_hwmon_is_not_read(tmp_path: Path) -> None:
    root = hwmon_tree(tmp_path, "amdgpu-rx9070xt", "thinkpad-t420")
    chip = next(p for p in (root / "class" / "hwmon").iterdir() if (p / "name").read_text().strip() == "amdgpu")
    assert [f.chip for f in read_fans(root)].count("amdgpu") == 1
    (chip / "device" / "power").mkdir(parents=True)
    (chip / "device" / "power" / "runtime_status").write_text("suspended\n")
    assert [f.chip for f in read_fans(root)] == ["thinkpad"]
    assert "amdgpu" not in {s.chip for s in read_temperatures(root)}


def test_the_verdict_and_the_terminal_say_asleep() -> None:
    from app.core.model import GpuSample, frozen_map

    sleeping = GpuSample(vendor="nvidia", index=1, name="RTX 4060 Laptop GPU", asleep=True,
                         unsupported=frozen_map({"asleep": ASLEEP}))
    state = snap([sleeping])
    verdict = explain(state)
    assert any(c.kind == "asleep" and c.summary == "GPU 1 is asleep (runtime suspended): not woken to read it."
               for c in verdict.causes)
    assert verdict.headline.startswith("Nothing is busy")
    row = next(line for line in render(state).splitlines() if line.strip().startswith("1  "))
    assert row.split()[-1] == "asleep"


def test_an_idle_gpu_under_runtime_pm_is_read_every_30_s_so_that_it_can_suspend(tmp_path: Path) -> None:
    """NVML calls every second would keep a laptop's idle discrete GPU awake: after REST_AFTER_TICKS idle ticks, a
    GPU whose runtime PM is "auto" is read every REST_PERIOD_S, its last sample shown with the reason between; a
    read that finds work ends the rest; a GPU with runtime PM "on" (a server's) is read every tick."""
    from app.vendors.nvml_gpu import REST_AFTER_TICKS, REST_PERIOD_S
    from tests.fakes.fake_nvml import FakeNvml, load_dump

    fake = FakeNvml(load_dump("h200x2-idle"))
    for bus, control in (("0000:00:06.0", "auto"), ("0000:00:07.0", "on")):
        power_state(tmp_path, bus, "active")
        (tmp_path / "bus" / "pci" / "devices" / bus / "power" / "control").write_text(control + "\n")
    clock = [0.0]
    backend = NvidiaBackend(nvml=fake, sys_root=str(tmp_path), clock=lambda: clock[0], watch_xid=False)
    backend.open()

    def tick() -> tuple[Any, Any]:
        clock[0] += 1.0
        laptop, server = backend.sample()
        backend.processes()
        return laptop, server

    for _ in range(REST_AFTER_TICKS + 1):
        tick()
    reads = fake.calls["utilization"]
    laptop, server = tick()
    assert laptop.unsupported.get("resting") and "resting" not in server.unsupported
    assert fake.calls["utilization"] == reads + 1  # only the server GPU was read
    reads = fake.calls["utilization"]
    for _ in range(int(2 * REST_PERIOD_S)):
        laptop, _ = tick()
    assert fake.calls["utilization"] - reads - int(2 * REST_PERIOD_S) == 2  # the laptop's GPU: once every 30 s
    fake.set(0, "utilization", {"gpu": 80, "memory": 10})  # work arrives; seen at the next read, then every tick
    while not tick()[0].utilization_percent:
        pass
    before = fake.calls["utilization"]
    laptop, _ = tick()
    assert fake.calls["utilization"] == before + 2 and "resting" not in laptop.unsupported
    backend.close()
