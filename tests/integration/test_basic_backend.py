"""The basic backend on fixture sysfs trees and with fake nvidia-smi scripts."""

from __future__ import annotations

import time
from pathlib import Path

import psutil
import pytest

from app.vendors.basic import BasicBackend
from app.vendors.nvidia_smi import NvidiaSmi, NvidiaSmiError

FIXTURES = Path(__file__).parent.parent / "fixtures"
SMI = FIXTURES / "nvidia-smi"
DESKTOP = FIXTURES / "sysfs" / "desktop"


def basic(sys_root: Path, smi: str = "/nonexistent/nvidia-smi", timeout_s: float = 5.0) -> BasicBackend:
    backend = BasicBackend(sys_root=sys_root, nvidia_smi=NvidiaSmi(smi, timeout_s))
    backend.open()
    return backend


def test_amdgpu_card_through_sysfs_and_hwmon() -> None:
    gpus = basic(DESKTOP).sample()
    amd = next(g for g in gpus if g.vendor == "amd")
    assert amd.name == "AMD GPU [1002:73bf]"
    assert amd.pci_bus_id == "0000:03:00.0"
    assert amd.utilization_percent == 37.0
    assert (amd.memory_used_bytes, amd.memory_total_bytes) == (2147483648, 17163091968)
    assert amd.temperature_c == 54.0  # the edge sensor, not the junction
    assert (amd.temperature_slowdown_c, amd.temperature_shutdown_c) == (100.0, 105.0)
    assert amd.fan_rpm == 1180 and amd.fan_speed_percent == pytest.approx(33.7, abs=0.1)
    assert not amd.passively_cooled
    assert amd.power_w == 61.0 and amd.power_limit_w == 203.0
    assert amd.clock_sm_mhz is None and "sysfs" in amd.unsupported["clock_sm_mhz"]


def test_a_cards_raw_fan_reading_out_of_range_is_not_shown(tmp_path: Path) -> None:
    """65535 RPM (amdgpu: no pulses) and a pwm of 300 are not a speed: the card's row leaves them out, saying why
    (the fan reader, app.collect.hwmon, says what they mean)."""
    import shutil

    root = tmp_path / "sys"
    shutil.copytree(DESKTOP, root, symlinks=True)
    (tach,) = [p for p in root.rglob("fan1_input") if "amdgpu" in (p.parent / "name").read_text()]
    tach.write_text("65535\n")
    (tach.parent / "pwm1").write_text("300\n")
    amd = next(g for g in basic(root).sample() if g.vendor == "amd")
    assert amd.fan_rpm is None and "65535" in amd.unsupported["fan_rpm"]
    assert amd.fan_speed_percent is None and "pwm1 read 300" in amd.unsupported["fan_speed_percent"]


def test_cards_in_order_connectors_ignored_and_nothing_invented() -> None:
    gpus = basic(DESKTOP).sample()
    assert [(g.index, g.vendor) for g in gpus] == [(0, "intel"), (1, "amd"), (2, "nvidia")]
    intel = gpus[0]
    assert intel.utilization_percent is None and intel.temperature_c is None
    assert "no hwmon" in intel.unsupported["temperature_c"]


def test_nvidia_card_without_nvml_or_nvidia_smi_is_an_error_row_saying_why() -> None:
    nvidia = basic(DESKTOP).sample()[2]
    assert nvidia.error is not None
    assert "nvidia-smi" in nvidia.error and "is not executable" in nvidia.error


def test_nvidia_smi_rows_replace_the_sysfs_nvidia_card() -> None:
    backend = basic(DESKTOP, str(SMI / "h200x2"))
    gpus = backend.sample()
    assert [(g.index, g.vendor, g.source) for g in gpus] == [
        (0, "nvidia", "nvidia-smi"), (1, "nvidia", "nvidia-smi"), (2, "intel", "sysfs"), (3, "amd", "sysfs")]
    busy = gpus[1]
    assert busy.utilization_percent == 99.0 and busy.memory_used_bytes == 6735 * 2**20
    assert busy.power_w == 693.26 and busy.power_limit_w == 700.0
    assert busy.fan_speed_percent is None and "passively cooled" in busy.unsupported["fan_speed_percent"]
    assert busy.passively_cooled
    assert busy.throttle_reasons == ("sw_power_cap",) and gpus[0].throttle_reasons == ("gpu_idle",)
    (proc,) = backend.processes()
    assert (proc.pid, proc.gpu_index, proc.memory_bytes, proc.name_hint) == (657, 1, 6726 * 2**20, "python3")


def test_not_available_fields_become_none() -> None:
    (gpu,) = basic(FIXTURES / "empty", str(SMI / "not-supported")).sample()
    assert gpu.name == "NVIDIA GeForce GT 710"
    assert gpu.utilization_percent is None and "[N/A]" in gpu.unsupported["utilization_percent"]
    assert gpu.power_w is None and gpu.power_limit_w is None and gpu.throttle_reasons is None
    assert gpu.fan_speed_percent == 30.0 and gpu.temperature_c == 41.0 and gpu.pstate == "P8"
    assert not gpu.passively_cooled


def test_old_driver_field_name_fallback() -> None:
    """A driver before 535 refuses clocks_event_reasons; the query is made again with the older name. The fake
    refuses any field it does not know, as nvidia-smi does: fails when the fallback's name is misspelled."""
    (gpu,) = basic(FIXTURES / "empty", str(SMI / "old-driver")).sample()
    assert gpu.name == "Tesla T4" and gpu.throttle_reasons == ()


def test_failing_nvidia_smi_is_reported_not_raised() -> None:
    backend = basic(FIXTURES / "empty", str(SMI / "driver-gone"))
    assert backend.sample() == []
    assert backend.no_gpu_reason is not None and "couldn't communicate with the NVIDIA driver" in backend.no_gpu_reason


def test_a_hanging_nvidia_smi_is_killed_at_the_timeout_with_no_zombie(tmp_path: Path, monkeypatch) -> None:
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("FAKE_SMI_PIDFILE", str(pidfile))
    smi = NvidiaSmi(str(SMI / "hang"), timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(NvidiaSmiError, match=r"did not answer within 0\.5 s"):
        smi.gpus()
    assert time.monotonic() - started < 3
    script, child = (int(p) for p in pidfile.read_text().split())
    # Our direct child was reaped by us at once: no zombie of ours.
    assert not psutil.pid_exists(script), "nvidia-smi was not reaped"
    assert not any(c.status() == psutil.STATUS_ZOMBIE for c in psutil.Process().children())
    # Its own child died with the process group; init reaps the orphan.
    deadline = time.monotonic() + 5
    while psutil.pid_exists(child) and time.monotonic() < deadline:
        time.sleep(0.05)  # SIGKILL is delivered asynchronously; then init reaps the orphan
    assert not psutil.pid_exists(child), "the hung nvidia-smi's child survived the timeout"


def test_hanging_nvidia_smi_does_not_stall_every_tick(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_SMI_PIDFILE", str(tmp_path / "pids"))
    backend = basic(FIXTURES / "empty", str(SMI / "hang"), timeout_s=0.3)
    backend.sample()
    started = time.monotonic()
    backend.sample()
    assert time.monotonic() - started < 0.2  # retried later, not on every tick
    assert "did not answer" in (backend.no_gpu_reason or "")


def test_no_gpu_at_all_says_why() -> None:
    backend = basic(FIXTURES / "empty")
    assert backend.sample() == []
    assert backend.no_gpu_reason is not None
    assert "no DRM card" in backend.no_gpu_reason and "nvidia-smi" in backend.no_gpu_reason


def test_a_fan_nvidia_smi_cannot_read_is_a_fan_with_its_error_not_a_passive_card() -> None:
    """nvidia-smi(1) answers "[N/A]" for a reading the board does not have and "[Unknown Error]" for one it failed
    to read: a GeForce at 84 °C whose fan answers the latter has a fan, of unknown speed, and that is said while
    the card is hot (fails when the error is read as [N/A]: the card becomes passively cooled, its fan gone)."""
    from app.fans import adapt
    from app.fans.rules import findings

    (gpu,) = basic(FIXTURES / "empty", str(SMI / "fan-error")).sample()
    assert not gpu.passively_cooled and gpu.fan_speed_percent is None
    assert [f.read_error for f in gpu.fans] == ["[Unknown Error]"]
    assert "could not read the fan" in gpu.unsupported["fan_speed_percent"]
    found = findings(adapt.machine((), gpu.fans, (), [gpu]))
    assert found[0].kind == "speed-not-a-reading" and found[0].facts["why"] == "error"
    assert found[0].facts.get("hot") == "yes" and found[0].facts["source_c"] == 84.0
    assert "gpu-fan-unreported" not in {f.kind for f in found} and "at-rest" not in {f.kind for f in found}
