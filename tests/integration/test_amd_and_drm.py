"""AMD through a fake amdsmi 7.x; AMD/Intel per-process use through DRM fdinfo; mixed machines; one contract."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.collect.fans import FanService, with_fans
from app.collect.hwmon import judged_temperatures
from app.core.model import GpuProcessUsage, GpuSample
from app.fans.chips import chip
from app.vendors.amd import AmdBackend
from app.vendors.base import BackendUnavailable
from app.vendors.basic import BasicBackend
from app.vendors.factory import default_builders, select_backend
from app.vendors.fdinfo import FdinfoReader, parse_fdinfo
from app.vendors.nvidia import NvidiaBackend
from app.vendors.nvidia_smi import NvidiaSmi
from app.vendors.simulated import SimulatedBackend
from app.vendors.sysfs import chip_names
from tests.fakes.fake_amdsmi import NO_PERMISSION, Card, FakeAmdSmi, mi300x, radeon
from tests.fakes.fake_nvml import FakeNvml, desktop_card
from tests.support import population
from tests.support.builders import snap

FIXTURES = Path(__file__).parent.parent / "fixtures"
DESKTOP = FIXTURES / "sysfs" / "desktop"
PROC = FIXTURES / "proc-drm"
NO_SMI = "/nonexistent/nvidia-smi"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def amd(*cards: Card, **kw: Any) -> AmdBackend:
    backend = AmdBackend(amdsmi=FakeAmdSmi(list(cards)), watch_events=False, **kw)
    backend.open()
    return backend


def test_a_datacenter_amd_card() -> None:
    (gpu,) = amd(mi300x()).sample()
    assert (gpu.vendor, gpu.name, gpu.pci_bus_id) == ("amd", "AMD Instinct MI300X OAM", "0000:0c:00.0")
    assert gpu.utilization_percent == 87.0 and gpu.memory_utilization_percent == 41.0
    assert gpu.memory_used_bytes == 65536 * 2**20 and gpu.memory_total_bytes == 196592 * 2**20
    assert gpu.temperature_c == 71.0 and dict(gpu.temperatures) == {"hotspot": 71.0, "memory": 63.0}
    assert gpu.power_w == 612.0 and gpu.power_limit_w == 750.0  # µW limit normalised
    assert gpu.fan_speed_percent is None and "no fan" in gpu.unsupported["fan_speed_percent"]
    assert gpu.passively_cooled
    assert gpu.clock_sm_mhz == 2100 and gpu.clock_memory_mhz == 1300
    assert gpu.energy_j == pytest.approx(1e9 * 15.3 / 1e6)


def test_a_desktop_amd_card_with_a_fan_and_no_permission_for_processes() -> None:
    backend = amd(radeon())
    (gpu,) = backend.sample()
    assert gpu.name == "Radeon RX 7900 XTX"  # board name "N/A" falls back to the market name
    assert gpu.temperature_c == 54.0 and (gpu.temperature_slowdown_c, gpu.temperature_shutdown_c) == (100.0, 105.0)
    assert gpu.fan_speed_percent == pytest.approx(34.5, abs=0.1) and gpu.fan_rpm == 1180
    assert not gpu.passively_cooled
    assert gpu.power_w == 61.0 and gpu.power_limit_w == 303.0
    assert gpu.energy_j is None and gpu.unsupported["energy_j"] == "not supported by this GPU"
    assert backend.processes() == []


def test_permission_errors_are_reasons_never_fatal() -> None:
    card = mi300x()
    card["activity"] = NO_PERMISSION
    card["vram"] = NO_PERMISSION
    (gpu,) = amd(card).sample()
    assert gpu.utilization_percent is None and gpu.unsupported["utilization_percent"] == "no permission"
    assert gpu.memory_used_bytes is None and gpu.error is None and gpu.power_w == 612.0


def test_a_status_that_means_the_card_failed_makes_its_row_an_error_and_the_others_report() -> None:
    """amdsmi's fatal statuses (the driver gone, not initialised) go through the same call path as NVML's errors:
    that card's row says why, the other card reports, its processes are skipped; asked again, it reports once the
    status clears. Fails when amdsmi's fatal statuses are read as a missing metric (no error row)."""
    from tests.fakes.fake_amdsmi import AmdSmiLibraryException, amdsmi_wrapper

    fake = FakeAmdSmi([mi300x(), mi300x()])
    backend = AmdBackend(amdsmi=fake, watch_events=False)
    backend.open()
    fake.set(0, "activity", AmdSmiLibraryException(amdsmi_wrapper.AMDSMI_STATUS_DRIVER_NOT_LOADED))
    fake.set(0, "processes", AmdSmiLibraryException(amdsmi_wrapper.AMDSMI_STATUS_DRIVER_NOT_LOADED))
    failed, fine = backend.sample()
    assert failed.error is not None and "34" in failed.error and failed.power_w is None
    assert fine.error is None and fine.power_w == 612.0
    assert [p.gpu_index for p in backend.processes()] == [1]
    fake.set(0, "activity", mi300x()["activity"])
    assert backend.sample()[0].error is None


def test_amd_process_engine_time_becomes_percent() -> None:
    clock = Clock()
    fake = FakeAmdSmi([mi300x()])
    backend = AmdBackend(amdsmi=fake, clock=clock, watch_events=False)
    backend.open()
    (first,) = backend.processes()
    assert first.pid == 4242 and first.memory_bytes == 60 * 2**30 and first.sm_percent is None
    row = dict(mi300x()["processes"][0])
    row["engine_usage"] = {"gfx": 10_000_000_000 + 750_000_000, "enc": 0}  # 0.75 s busy in 1 s
    fake.set(0, "processes", [row])
    clock.now += 1.0
    (second,) = backend.processes()
    assert second.sm_percent == 75.0


def test_amdsmi_missing_or_failing_is_a_reason() -> None:
    with pytest.raises(BackendUnavailable, match="amdsmi"):
        AmdBackend().open()  # not installed here (or KeyError without ROCm)
    from tests.fakes.fake_amdsmi import AmdSmiLibraryException

    with pytest.raises(BackendUnavailable, match="amdsmi_init failed"):
        AmdBackend(amdsmi=FakeAmdSmi([], init_error=AmdSmiLibraryException(8))).open()
    with pytest.raises(BackendUnavailable, match="no AMD GPU"):
        AmdBackend(amdsmi=FakeAmdSmi([])).open()


@pytest.mark.parametrize(
    ("path", "driver", "client", "engines", "memory"),
    [
        ("1002/fdinfo/7", "amdgpu", "57", {"gfx": 200000000, "compute": 3000000000}, {"vram": 512 * 2**20,
                                                                                     "gtt": 2 * 2**20}),
        ("2001/fdinfo/4", "i915", "12", {"render": 5000000000, "copy": 0, "video": 1000000000,
                                         "video-enhance": 0}, {"system0": 128 * 2**20, "stolen-system0": 0}),
    ],
)
def test_fdinfo_formats(path: str, driver: str, client: str, engines: dict[str, int],
                        memory: dict[str, int]) -> None:
    parsed = parse_fdinfo((PROC / path).read_text())
    assert parsed is not None and (parsed.driver, parsed.client_id) == (driver, client)
    assert parsed.engine_ns == engines
    for region, size in memory.items():
        assert parsed.memory_bytes[region] == size


def test_xe_cycles_and_capacity() -> None:
    xe = parse_fdinfo((PROC / "3001/fdinfo/6").read_text())
    assert xe is not None and xe.cycles["rcs"] == (28257900, 7655183225)
    assert xe.memory_bytes["vram0"] == 2**30
    i915 = parse_fdinfo((PROC / "2001/fdinfo/4").read_text())
    assert i915 is not None and i915.capacity == {"video": 2}


def test_not_drm_or_malformed_is_none() -> None:
    assert parse_fdinfo((PROC / "1001/fdinfo/3").read_text()) is None
    assert parse_fdinfo((PROC / "4001/fdinfo/8").read_text()) is None  # no client id


@settings(max_examples=population.size(300), deadline=None)
@example(["drm-driver:\ti915", "drm-client-id:\t1", "drm-engine-gfx:\t\u00b2 ns", "drm-memory-vram:\t\u0661 KiB"])
@given(st.lists(st.one_of(
    st.text(max_size=60),
    st.builds(lambda k, v: f"drm-{k}:\t{v}", st.sampled_from(
        ["driver", "client-id", "pdev", "engine-gfx", "engine-render", "engine-capacity-video", "cycles-rcs",
         "total-cycles-rcs", "memory-vram", "resident-vram0", "total-system0"]), st.text(max_size=30)),
), max_size=30))
def test_the_fdinfo_parser_never_raises_on_malformed_lines(lines: list[str]) -> None:
    parsed = parse_fdinfo("\n".join(lines))
    if parsed is not None:
        assert all(isinstance(v, int) and v >= 0 for v in parsed.engine_ns.values())
        assert all(isinstance(v, int) and v >= 0 for v in parsed.memory_bytes.values())
        assert all(isinstance(c, int) and isinstance(t, int) for c, t in parsed.cycles.values())


def test_fdinfo_deltas_become_percent_and_dup_fds_count_once(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    shutil.copytree(PROC, proc)
    clock = Clock()
    reader = FdinfoReader(proc, clock=clock)
    first = {u.pid: u for u in reader.usage()}
    assert set(first) == {1001, 1002, 2001, 3001} and first[1001].busy_percent is None
    assert first[1001].memory_bytes == 2 * 2**30  # one client, though open twice
    for fd in ("5", "9"):
        text = (proc / "1001/fdinfo" / fd).read_text().replace("10000000000 ns", "10500000000 ns")
        (proc / "1001/fdinfo" / fd).write_text(text)
    (proc / "3001/fdinfo/6").write_text((proc / "3001/fdinfo/6").read_text()
                                        .replace("drm-cycles-rcs:\t28257900", "drm-cycles-rcs:\t28257900000")
                                        .replace("7655183225", "7655183225", 1)
                                        .replace("drm-total-cycles-rcs:\t7655183225",
                                                 "drm-total-cycles-rcs:\t64000000000"))
    clock.now += 1.0
    second = {u.pid: u for u in reader.usage()}
    assert second[1001].busy_percent == 50.0  # 0.5 s of gfx in 1 s
    assert second[1002].busy_percent == 0.0
    assert second[3001].busy_percent == pytest.approx(100 * (28257900000 - 28257900) / (64000000000 - 7655183225),
                                                      abs=0.1)


def test_basic_backend_attributes_amd_and_intel_processes_to_their_cards() -> None:
    backend = BasicBackend(sys_root=DESKTOP, nvidia_smi=NvidiaSmi(NO_SMI), proc_root=PROC)
    backend.open()
    gpus = {g.pci_bus_id: g.index for g in backend.sample()}
    usages = {(u.pid, u.gpu_index): u for u in backend.processes()}
    assert set(usages) == {(1001, gpus["0000:03:00.0"]), (1002, gpus["0000:03:00.0"]),
                           (2001, gpus["0000:00:02.0"]), (3001, gpus["0000:00:02.0"])}
    assert usages[(1001, gpus["0000:03:00.0"])].memory_bytes == 2 * 2**30


def test_a_mixed_machine_shows_every_gpu_once() -> None:
    table = desktop_card()
    table["pci"] = {"busId": "00000000:01:00.0", "busIdLegacy": "0000:01:00.0", "domain": 0, "bus": 1,
                    "device": 0, "pciDeviceId": 0, "pciSubSystemId": 0}
    builders = default_builders()
    builders["nvidia"] = lambda: NvidiaBackend(nvml=FakeNvml([table]), watch_xid=False)
    builders["basic"] = lambda: BasicBackend(sys_root=DESKTOP, nvidia_smi=NvidiaSmi(NO_SMI), proc_root=PROC)
    selection = select_backend("auto", builders)
    assert selection.backend.name == "nvidia+basic"
    gpus = selection.backend.sample()
    assert [(g.index, g.vendor, g.source) for g in gpus] == [(0, "nvidia", "nvml"), (1, "intel", "sysfs"),
                                                              (2, "amd", "sysfs")]
    assert {u.gpu_index for u in selection.backend.processes()} >= {1, 2}
    selection.backend.close()


def _backends(tmp_path: Path) -> list[tuple[str, Any]]:
    from tests.fakes.fake_nvml import scenario

    return [
        ("nvidia", NvidiaBackend(nvml=scenario("h200x2_load"), watch_xid=False)),
        ("amd", AmdBackend(amdsmi=FakeAmdSmi([mi300x(), radeon()]), watch_events=False)),
        ("basic", BasicBackend(sys_root=DESKTOP, nvidia_smi=NvidiaSmi(str(FIXTURES / "nvidia-smi" / "h200x2")),
                               proc_root=PROC)),
        ("simulated", SimulatedBackend(gpus=1, peak=0.1)),
    ]


_NUMBERS = {"utilization_percent": float, "memory_utilization_percent": float, "memory_used_bytes": int,
            "memory_total_bytes": int, "memory_free_bytes": int, "temperature_c": float, "fan_speed_percent": float,
            "fan_rpm": int, "power_w": float, "power_limit_w": float, "clock_sm_mhz": int, "clock_memory_mhz": int,
            "energy_j": float}


@pytest.mark.parametrize("index", range(4), ids=["nvidia", "amd", "basic", "simulated"])
def test_every_backend_keeps_the_contract(index: int, tmp_path: Path) -> None:
    name, backend = _backends(tmp_path)[index]
    backend.open()
    try:
        for _ in range(2):
            samples = backend.sample()
            processes = backend.processes()
        assert samples and all(isinstance(g, GpuSample) for g in samples)
        assert [g.index for g in samples] == list(range(len(samples)))
        for gpu in samples:
            assert gpu.vendor in ("nvidia", "amd", "intel", "unknown", "simulated")
            for field, kind in _NUMBERS.items():
                value = getattr(gpu, field)
                assert value is None or isinstance(value, kind) or (kind is float and isinstance(value, int)), field
                if value is None and gpu.error is None:
                    assert field in gpu.unsupported or field in ("memory_free_bytes", "memory_utilization_percent",
                                                                 "clock_memory_mhz", "energy_j", "fan_rpm"), \
                        (name, field)
            if gpu.utilization_percent is not None:
                assert 0 <= gpu.utilization_percent <= 100
            assert gpu.throttle_reasons is None or all(isinstance(r, str) for r in gpu.throttle_reasons)
        assert all(isinstance(p, GpuProcessUsage) for p in processes)
        assert all(p.gpu_index in {g.index for g in samples} for p in processes)
        assert all(p.sm_percent is None or 0 <= p.sm_percent <= 100 for p in processes)
    finally:
        backend.close()


def test_an_amd_cards_fan_is_one_record_on_the_card_and_in_the_machines_list(tmp_path: Path) -> None:
    """The basic backend reads the card's fan from its hwmon chip, and so does the fan service: one fan, one record
    (the service's, explained), on the card and in the machine's list, and the card's fan figures are read from it."""
    tree = tmp_path / "sys"
    shutil.copytree(DESKTOP, tree, symlinks=True)
    (tree / "class" / "hwmon").mkdir(parents=True)
    (tree / "class" / "hwmon" / "hwmon2").symlink_to(tree / "devices" / "pci0000:00" / "0000:03:00.0" / "hwmon" /
                                                     "hwmon2")
    backend = BasicBackend(sys_root=str(tree), nvidia_smi=NvidiaSmi(NO_SMI), proc_root=PROC)
    backend.open()
    gpus = backend.sample()
    card = next(g for g in gpus if g.pci_bus_id == "0000:03:00.0")
    assert [f.id for f in card.fans] == ["hwmon:amdgpu/fan1"]
    fans, _ = FanService(sys_root=str(tree), etc_root=str(tmp_path / "etc")).read(gpus, snap([]).host)
    amdgpu = [f for f in fans if f.chip == "amdgpu"]
    assert len(amdgpu) == 1
    joined = with_fans(card, fans)
    assert joined.fans == (amdgpu[0],)
    assert joined.fan_rpm == 1180 and joined.fan_speed_percent == pytest.approx(100 * 86 / 255, abs=0.1)


def test_an_amdsmi_cards_fan_is_named_by_its_hwmon_chip_under_the_sys_root(tmp_path: Path) -> None:
    """amdsmi reads the card's one duty; its hwmon chip (found by the card's PCI address under FANWHY_SYS_ROOT, as
    the fan service reads hwmon there) names the record, so the service keeps one record of the fan."""
    chip = tmp_path / "bus" / "pci" / "devices" / "0000:03:00.0" / "hwmon" / "hwmon4"
    chip.mkdir(parents=True)
    (chip / "name").write_text("amdgpu\n")
    (gpu,) = amd(radeon(), sys_root=str(tmp_path)).sample()
    assert [f.id for f in gpu.fans] == ["hwmon:amdgpu/fan1"] and gpu.fans[0].gpu_index == 0
    (alone,) = amd(radeon(), sys_root=str(tmp_path / "elsewhere")).sample()
    assert [f.id for f in alone.fans] == ["amdsmi:0/fan0"]


def _two_amd_cards(tmp_path: Path) -> Path:
    """The desktop tree with a second AMD card (0000:0b:00.0) beside the first (0000:03:00.0), each with its hwmon
    chip named "amdgpu" and its `device` link back to the card, as the kernel makes them."""
    tree = tmp_path / "sys"
    shutil.copytree(DESKTOP, tree, symlinks=True)
    pci = tree / "devices" / "pci0000:00"
    shutil.copytree(pci / "0000:03:00.0", pci / "0000:0b:00.0")
    (pci / "0000:0b:00.0" / "hwmon" / "hwmon2").rename(pci / "0000:0b:00.0" / "hwmon" / "hwmon7")
    second = pci / "0000:0b:00.0" / "hwmon" / "hwmon7"
    (second / "fan1_input").write_text("3100\n")
    (second / "temp2_input").write_text("99000\n")
    (tree / "class" / "drm" / "card3").mkdir()
    (tree / "class" / "drm" / "card3" / "device").symlink_to("../../../devices/pci0000:00/0000:0b:00.0")
    (tree / "class" / "hwmon").mkdir(parents=True)
    for card, hwmon in (("0000:03:00.0", "hwmon2"), ("0000:0b:00.0", "hwmon7")):
        (pci / card / "hwmon" / hwmon / "device").symlink_to("../..")
        (tree / "class" / "hwmon" / hwmon).symlink_to(pci / card / "hwmon" / hwmon)
    return tree


def test_two_amd_cards_keep_their_own_fan_and_temperatures(tmp_path: Path) -> None:
    """Both cards' hwmon chips are named "amdgpu": the second card's fan had the first's id (hwmon:amdgpu/fan1), so
    each card claimed both fans and one card's junction stood for the other's. Each is now named as lm-sensors names
    it, by its PCI address (amdgpu-pci-0300, amdgpu-pci-0b00): one fan a card, following its own junction. Tested
    on a tree built like the kernel's (fakes: no machine of two AMD cards was at hand)."""
    tree = _two_amd_cards(tmp_path)
    assert chip_names(tree) == {"hwmon2": "amdgpu-pci-0300", "hwmon7": "amdgpu-pci-0b00"}
    backend = BasicBackend(sys_root=str(tree), nvidia_smi=NvidiaSmi(NO_SMI), proc_root=PROC)
    backend.open()
    gpus = {g.pci_bus_id: g for g in backend.sample()}
    first, second = gpus["0000:03:00.0"], gpus["0000:0b:00.0"]
    assert [f.id for f in first.fans] == ["hwmon:amdgpu-pci-0300/fan1"]
    assert [f.id for f in second.fans] == ["hwmon:amdgpu-pci-0b00/fan1"]
    host = replace(snap([]).host, temperatures=judged_temperatures(tree)[0])  # the host sampler's reading
    assert {t.chip for t in host.temperatures} >= {"amdgpu-pci-0300", "amdgpu-pci-0b00"}
    fans, _ = FanService(sys_root=str(tree), etc_root=str(tmp_path / "etc")).read(list(gpus.values()), host)
    by_chip = {f.chip: f for f in fans}
    assert by_chip["amdgpu-pci-0b00"].rpm == 3100 and by_chip["amdgpu-pci-0300"].rpm == 1180
    assert by_chip["amdgpu-pci-0b00"].source == "amdgpu-pci-0b00 junction"
    assert by_chip["amdgpu-pci-0300"].source == "amdgpu-pci-0300 junction"
    assert [f.chip for f in with_fans(second, fans).fans] == ["amdgpu-pci-0b00"]
    assert [f.chip for f in with_fans(first, fans).fans] == ["amdgpu-pci-0300"]
    # amdsmi's two cards by the same tree: each card's fan record is its own chip's
    other = {**radeon(), "uuid": "2dff744c-0000-1000-80ab-000000000002", "bdf": "0000:0b:00.0"}
    tree_pci = tmp_path / "bus" / "pci" / "devices"
    tree_pci.mkdir(parents=True)
    for bdf in ("0000:03:00.0", "0000:0b:00.0"):
        (tree_pci / bdf).symlink_to(tree / "devices" / "pci0000:00" / bdf)
    (tmp_path / "class").symlink_to(tree / "class")
    ids = [[f.id for f in g.fans] for g in amd(radeon(), other, sys_root=str(tmp_path)).sample()]
    assert ids == [["hwmon:amdgpu-pci-0300/fan1"], ["hwmon:amdgpu-pci-0b00/fan1"]]


def test_a_chip_of_one_device_keeps_its_drivers_name_and_twins_are_named_as_lm_sensors_names_them(
        tmp_path: Path) -> None:
    """lm-sensors' chip names (lib/sysfs.c): a platform device's number after its dot in hex (nct6775.656:
    isa-0290; coretemp.1: isa-0001), an I2C client's bus and address; a name only one chip has stays as it is."""
    base = tmp_path / "class" / "hwmon"
    devices = tmp_path / "devices" / "platform"
    for hwmon, name, device in (("hwmon0", "coretemp", "coretemp.0"), ("hwmon1", "coretemp", "coretemp.1"),
                                ("hwmon2", "nct6798", "nct6775.656"), ("hwmon3", "lm75", "1-0048"),
                                ("hwmon4", "lm75", "1-0049"), ("hwmon5", "acpitz", None), ("hwmon6", "acpitz", None)):
        folder = base / hwmon
        folder.mkdir(parents=True)
        (folder / "name").write_text(name + "\n")
        if device:
            (devices / device).mkdir(parents=True)
            (folder / "device").symlink_to(devices / device)
    assert chip_names(tmp_path) == {"hwmon0": "coretemp-isa-0000", "hwmon1": "coretemp-isa-0001",
                                    "hwmon2": "nct6798", "hwmon3": "lm75-i2c-1-48", "hwmon4": "lm75-i2c-1-49",
                                    "hwmon5": "acpitz-hwmon5", "hwmon6": "acpitz-hwmon6"}
    assert chip("coretemp-isa-0001").kind == "cpu" and chip("acpitz-hwmon6").kind == "acpi"
