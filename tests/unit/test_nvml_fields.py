"""Every value the NVML backend reads, one at a time: the field it fills, the field that says why when the call
fails (naming the NVML function), and the unit it converts to. Table-driven over the H100 dump, written against the
mutants `make mutation` found alive in app/vendors/nvidia.py (a swapped field name, a lost conversion, a wrong
NVML constant all pass a scenario test that only looks at the loaded values)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pynvml
import pytest

from app.vendors.nvidia import NvidiaBackend
from app.vendors.nvml_fans import PASSIVELY_COOLED
from tests.fakes.fake_nvml import FakeNvml, scenario

# (fake cell, the sample's field, the field of `unsupported`, the NVML function named in the reason)
CALLS = [
    ("name", "name", "name", "nvmlDeviceGetName"),
    ("uuid", "uuid", "uuid", "nvmlDeviceGetUUID"),
    ("pci", "pci_bus_id", "pci_bus_id", "nvmlDeviceGetPciInfo"),
    ("temp_slowdown", "temperature_slowdown_c", "temperature_slowdown_c", "nvmlDeviceGetTemperatureThreshold"),
    ("temp_shutdown", "temperature_shutdown_c", "temperature_shutdown_c", "nvmlDeviceGetTemperatureThreshold"),
    ("max_clk_sm", "clock_sm_max_mhz", "clock_sm_max_mhz", "nvmlDeviceGetMaxClockInfo"),
    ("utilization", "utilization_percent", "utilization_percent", "nvmlDeviceGetUtilizationRates"),
    ("temperature", "temperature_c", "temperature_c", "nvmlDeviceGetTemperature"),
    ("power", "power_w", "power_w", "nvmlDeviceGetPowerUsage"),
    ("power_enforced", "power_limit_w", "power_limit_w", "nvmlDeviceGetEnforcedPowerLimit"),
    ("clk_sm", "clock_sm_mhz", "clock_sm_mhz", "nvmlDeviceGetClockInfo"),
    ("clk_mem", "clock_memory_mhz", "clock_memory_mhz", "nvmlDeviceGetClockInfo"),
    ("pstate", "pstate", "pstate", "nvmlDeviceGetPerformanceState"),
    ("clocks_event_reasons", "throttle_reasons", "throttle_reasons", "nvmlDeviceGetCurrentClocksEventReasons"),
    ("energy_mj", "energy_j", "energy_j", "nvmlDeviceGetTotalEnergyConsumption"),
    ("ecc_uncorrected_volatile", "ecc_errors_uncorrected", "ecc_errors_uncorrected", "nvmlDeviceGetTotalEccErrors"),
    ("mig_mode", "mig_mode", "mig_mode", "nvmlDeviceGetMigMode"),
    ("persistence", "persistence_mode", "persistence_mode", "nvmlDeviceGetPersistenceMode"),
    ("display_active", "display_active", "display_active", "nvmlDeviceGetDisplayActive"),
]


def sample(fake: FakeNvml) -> Any:
    backend = NvidiaBackend(nvml=fake, watch_xid=False)
    backend.open()
    try:
        return backend.sample()[0]
    finally:
        backend.close()


@pytest.mark.parametrize(("cell", "field", "why", "function"), CALLS)
def test_a_call_missing_from_the_driver_empties_its_field_and_says_which_function(
        cell: str, field: str, why: str, function: str) -> None:
    fake = scenario("h100_load")
    fake.set(0, cell, pynvml.NVMLError_FunctionNotFound())
    gpu = sample(fake)
    assert gpu.error is None
    assert gpu.unsupported[why] == f"not available: {function} is not in this driver"
    if field not in ("name", "uuid"):  # those two keep what the handle listing gave
        assert getattr(gpu, field) is None


@pytest.mark.parametrize(("error", "words"), [(pynvml.NVMLError_NotSupported(), "not supported by this GPU"),
                                              (pynvml.NVMLError_NoPermission(), "no permission")])
@pytest.mark.parametrize(("cell", "field", "why", "function"), [c for c in CALLS if c[0] in (
    "power", "temperature", "energy_mj", "pci", "max_clk_sm")])
def test_unsupported_and_forbidden_calls_say_so(cell: str, field: str, why: str, function: str, error: Exception,
                                               words: str) -> None:
    fake = scenario("h100_load")
    fake.set(0, cell, error)
    gpu = sample(fake)
    assert gpu.unsupported[why] == words and getattr(gpu, field) is None


def test_every_value_of_the_h100_dump_in_its_unit() -> None:
    fake = scenario("h100_load")
    table = fake.tables[0]
    gpu = sample(fake)
    cells = {k: (v["value"] if isinstance(v, dict) and "value" in v else v) for k, v in table.items()}
    assert gpu.name == "NVIDIA H100 80GB HBM3" and gpu.uuid and gpu.uuid.startswith("GPU-")
    assert gpu.pci_bus_id and gpu.pci_bus_id.lower().endswith(".0")
    assert gpu.temperature_slowdown_c == cells["temp_slowdown"] and gpu.temperature_shutdown_c == cells["temp_shutdown"]
    assert gpu.clock_sm_max_mhz == cells["max_clk_sm"] and gpu.clock_sm_mhz == cells["clk_sm"]
    assert gpu.clock_memory_mhz == cells["clk_mem"]
    assert gpu.power_w == cells["power"] / 1000 and gpu.power_limit_w == cells["power_enforced"] / 1000
    assert gpu.energy_j == cells["energy_mj"] / 1000
    assert gpu.pstate == f"P{cells['pstate']}"
    assert gpu.ecc_errors_uncorrected == cells["ecc_uncorrected_volatile"]
    assert gpu.mig_mode is bool(cells["mig_mode"][0]) and gpu.persistence_mode is bool(cells["persistence"])
    assert gpu.display_active is bool(cells["display_active"])
    assert gpu.utilization_percent == cells["utilization"]["gpu"]
    assert gpu.memory_utilization_percent == cells["utilization"]["memory"]
    assert gpu.vendor == "nvidia" and gpu.source == "nvml" and gpu.index == 0
    assert gpu.unsupported["fan_rpm"] == PASSIVELY_COOLED and gpu.fans == ()  # no fan: no RPM either


def test_pstate_32_is_unknown_not_p32() -> None:
    fake = scenario("h100_load")
    fake.set(0, "pstate", 32)
    assert sample(fake).pstate is None
    fake.set(0, "pstate", 8)
    assert sample(fake).pstate == "P8"


def test_a_failed_utilization_call_empties_memory_utilization_with_the_same_reason() -> None:
    fake = scenario("h100_load")
    fake.set(0, "utilization", pynvml.NVMLError_NoPermission())
    gpu = sample(fake)
    assert gpu.memory_utilization_percent is None
    assert gpu.unsupported["memory_utilization_percent"] == gpu.unsupported["utilization_percent"] == "no permission"


def test_memory_falls_back_from_v2_and_says_why_when_both_fail() -> None:
    fake = scenario("h100_load")
    fake.set(0, "memory_v2", pynvml.NVMLError_NotSupported())
    fake.set(0, "memory", pynvml.NVMLError_NoPermission())
    gpu = sample(fake)
    assert gpu.memory_used_bytes is None and gpu.memory_total_bytes is None
    assert gpu.unsupported["memory_used_bytes"] == gpu.unsupported["memory_total_bytes"] == "no permission"


def test_an_old_driver_without_fan_counts_reads_the_one_fan() -> None:
    from tests.fakes.fake_nvml import desktop_card

    fake = FakeNvml([desktop_card(fans=2)])
    fake.set(0, "num_fans", pynvml.NVMLError_FunctionNotFound())
    gpu = sample(fake)
    assert gpu.fan_speed_percent == 47.0 and gpu.fan_speeds_percent == (47.0,) and "fan_speed_percent" not in \
        gpu.unsupported and gpu.passively_cooled is False
    fake.set(0, "fan", pynvml.NVMLError_NotSupported())
    gpu = sample(fake)
    assert gpu.fan_speed_percent is None and gpu.fan_speeds_percent == ()
    assert gpu.unsupported["fan_speed_percent"] == "not supported by this GPU" and gpu.passively_cooled is False


def test_per_fan_speeds_and_a_fan_that_does_not_answer() -> None:
    from tests.fakes.fake_nvml import desktop_card

    fake = FakeNvml([desktop_card(fans=3)])
    fake.set(0, "fan_v2_0", 40)
    fake.set(0, "fan_v2_1", pynvml.NVMLError_NotSupported())
    fake.set(0, "fan_v2_2", 55)
    gpu = sample(fake)
    assert gpu.fan_speeds_percent == (40.0, 55.0) and gpu.fan_speed_percent == 55.0
    assert "fan_speed_percent" not in gpu.unsupported  # one fan failing does not make the speed unknown
    for i in range(3):
        fake.set(0, f"fan_v2_{i}", pynvml.NVMLError_NoPermission())
    gpu = sample(fake)
    assert gpu.fan_speed_percent is None and gpu.unsupported["fan_speed_percent"] == "no permission"


def test_a_gpu_whose_handle_failed_is_a_row_saying_so() -> None:
    fake = scenario("h200x2_load")
    fake.set(0, "handle", pynvml.NVMLError_GpuIsLost())
    backend = NvidiaBackend(nvml=fake, watch_xid=False)
    backend.open()
    try:
        lost, busy = backend.sample()
    finally:
        backend.close()
    assert (lost.vendor, lost.source, lost.index) == ("nvidia", "nvml", 0)
    assert lost.error and "GpuIsLost" in lost.error and busy.error is None


def test_a_process_listed_twice_keeps_its_larger_memory_and_unknown_samples_stay_unknown() -> None:
    fake = scenario("h100_load")
    fake.set(0, "compute_processes", [{"pid": 4242, "usedGpuMemory": 2**30, "gpuInstanceId": 0,
                                       "computeInstanceId": 0}])
    fake.set(0, "graphics_processes", [{"pid": 4242, "usedGpuMemory": 3 * 2**30, "gpuInstanceId": 0,
                                        "computeInstanceId": 0},
                                       {"pid": 4343, "usedGpuMemory": None, "gpuInstanceId": 0,
                                        "computeInstanceId": 0}])
    fake.set(0, "process_utilization", [{"pid": 4242, "timeStamp": 0, "smUtil": 60, "memUtil": 1, "encUtil": 7,
                                         "decUtil": 9}])
    backend = NvidiaBackend(nvml=fake, watch_xid=False)
    backend.open()
    try:
        backend.sample()
        rows = {u.pid: u for u in backend.processes()}
    finally:
        backend.close()
    assert rows[4242].memory_bytes == 3 * 2**30 and rows[4242].kind == "compute"
    assert (rows[4242].encoder_percent, rows[4242].decoder_percent) == (7.0, 9.0)
    assert rows[4343].memory_bytes is None and rows[4343].kind == "graphics"
    assert rows[4343].sm_percent == 0.0 and rows[4343].encoder_percent == 0.0  # not in the samples: idle


def test_reinit_backs_off_2_5_15_60_300_seconds_and_resets_after_a_success() -> None:
    now = [1000.0]
    fake = scenario("h100_load")
    backend = NvidiaBackend(nvml=fake, watch_xid=False, clock=lambda: now[0])
    backend.open()
    try:
        fake.set(0, "utilization", pynvml.NVMLError_GpuIsLost())
        fake.set(0, "handle", pynvml.NVMLError_GpuIsLost())
        backend.sample()  # the failure: a re-init is due in 2 s
        inits = fake.calls["init"]
        for step in (2.0, 5.0, 15.0, 60.0, 300.0, 300.0):
            now[0] += step - 0.01
            backend.sample()
            assert fake.calls["init"] == inits, f"re-init before its {step} s"
            now[0] += 0.01
            (gpu,) = backend.sample()
            inits += 1
            assert fake.calls["init"] == inits and gpu.error
        fake.set(0, "handle", None)
        fake.set(0, "utilization", {"gpu": 50, "memory": 5})
        now[0] += 300.0
        (gpu,) = backend.sample()
        assert gpu.error is None and gpu.utilization_percent == 50.0
        fake.set(0, "utilization", pynvml.NVMLError_GpuIsLost())
        backend.sample()
        now[0] += 2.0  # after a success the backoff starts again at 2 s
        backend.sample()
        assert fake.calls["init"] == inits + 2
    finally:
        backend.close()


def test_process_utilization_asks_for_the_window_and_keeps_each_pids_newest_sample() -> None:
    """Each read asks for the last util_window_s (2 s) of samples; of several samples per PID the newest counts."""
    asked: list[int] = []
    wall = [5000.0]

    def samples(since_us: int) -> list[dict[str, Any]]:
        asked.append(since_us)
        return [{"pid": 7, "smUtil": 10, "memUtil": 0, "encUtil": 0, "decUtil": 0},
                {"pid": 7, "smUtil": 90, "memUtil": 0, "encUtil": 0, "decUtil": 0}]

    fake = scenario("h100_load")
    fake.set(0, "compute_processes", [{"pid": 7, "usedGpuMemory": 2**30, "gpuInstanceId": 0, "computeInstanceId": 0}])
    fake.set(0, "process_utilization", samples)
    stamps = iter([4999_000_000, 4999_500_000, 5000_100_000, 5000_200_000, 5009_000_000, 5009_100_000])
    original = fake.nvmlDeviceGetProcessUtilization

    def stamped(h: int, since_us: int) -> list[Any]:  # two samples of one PID, the second newer
        rows = original(h, since_us)
        for row in rows:
            row.timeStamp = next(stamps)
        return rows

    fake.nvmlDeviceGetProcessUtilization = stamped  # type: ignore[method-assign]  # a test double's own method
    backend = NvidiaBackend(nvml=fake, watch_xid=False, wall_clock=lambda: wall[0], process_util_period_s=0.0,
                            process_util_spacing_s=0.0, lone_util_period_s=0.0)
    backend.open()
    try:
        backend.sample()
        (first,) = backend.processes()
        assert asked[0] == int((5000.0 - 2.0) * 1e6) and first.sm_percent == 90.0  # the newer of the two
        wall[0] = 5000.5
        backend.sample()
        backend.processes()
        assert asked[1] == int((5000.5 - 2.0) * 1e6)  # the window again, not "after the newest seen"
        wall[0] = 5010.0
        backend.sample()
        backend.processes()
        assert asked[2] == int((5010.0 - 2.0) * 1e6)
    finally:
        backend.close()


def test_two_processes_whose_newest_samples_differ_both_keep_their_share() -> None:
    """Two processes time-slicing one GPU: NVML gives each its newest sample, at different times. Both count at every
    read (asking only for samples after the newest seen dropped the older one, which then read 0 %)."""
    wall = [5000.0]

    def samples(since_us: int) -> list[Any]:
        rows = [SimpleNamespace(pid=7, smUtil=60, memUtil=0, encUtil=0, decUtil=0, timeStamp=int(wall[0] * 1e6) - 900),
                SimpleNamespace(pid=8, smUtil=30, memUtil=0, encUtil=0, decUtil=0, timeStamp=int(wall[0] * 1e6) - 50)]
        return [r for r in rows if r.timeStamp > since_us]

    fake = scenario("h100_load")
    fake.set(0, "compute_processes", [{"pid": p, "usedGpuMemory": 2**30, "gpuInstanceId": 0, "computeInstanceId": 0}
                                      for p in (7, 8)])
    fake.nvmlDeviceGetProcessUtilization = lambda h, since_us: samples(since_us)  # type: ignore[method-assign]  # a test double
    backend = NvidiaBackend(nvml=fake, watch_xid=False, wall_clock=lambda: wall[0], process_util_period_s=0.0,
                            process_util_spacing_s=0.0, lone_util_period_s=0.0)
    backend.open()
    try:
        for step in range(4):
            wall[0] = 5000.0 + 0.0005 * step  # the next read comes before A's next sample
            backend.sample()
            shares = {u.pid: u.sm_percent for u in backend.processes()}
            assert shares == {7: 60.0, 8: 30.0}, (step, shares)
    finally:
        backend.close()


def test_close_shuts_nvml_down_once_and_the_event_watch_says_what_it_does() -> None:
    fake = scenario("h100_load")
    quiet = NvidiaBackend(nvml=fake, watch_xid=False)
    quiet.open()
    assert quiet.event_watch() == "not watching" and quiet.events() == []
    shutdowns = fake.calls["shutdown"]
    quiet.close()
    quiet.close()
    assert fake.calls["shutdown"] == shutdowns + 1 and fake.initialised == 0
    watching = NvidiaBackend(nvml=scenario("h100_load"), watch_xid=True)
    watching.open()
    try:
        assert watching.event_watch() == "watching"
    finally:
        watching.close()
    assert watching.event_watch() == "not watching"


def test_an_nvml_without_gpus_is_unavailable_and_left_shut_down() -> None:
    from app.vendors.base import BackendUnavailable

    empty = FakeNvml([])
    with pytest.raises(BackendUnavailable, match="NVML started but reports no NVIDIA GPU"):
        NvidiaBackend(nvml=empty, watch_xid=False).open()
    assert empty.initialised == 0


def test_the_driver_version_is_read_and_an_old_binding_name_for_clock_reasons_is_used() -> None:
    fake = scenario("h100_load")
    backend = NvidiaBackend(nvml=fake, watch_xid=False)
    backend.open()
    try:
        assert backend.driver_version == fake.driver
    finally:
        backend.close()

    class OldBinding(FakeNvml):
        def __getattribute__(self, name: str) -> Any:
            if name == "nvmlDeviceGetCurrentClocksEventReasons":
                raise AttributeError(name)
            return super().__getattribute__(name)

        def nvmlDeviceGetCurrentClocksThrottleReasons(self, h: int) -> int:
            return 4  # sw_power_cap in the old name's bit set

    old = OldBinding([scenario("h100_load").tables[0]])
    gpu = sample(old)
    assert gpu.throttle_reasons == ("sw_power_cap",)
