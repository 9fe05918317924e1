"""The NVML backend against table-driven fakes shaped from real H100/H200 dumps (tests/fixtures/nvml)."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
import types
from pathlib import Path
from typing import Any

import pynvml
import pytest

from app.core.model import GpuProcessUsage
from app.core.vocabulary import decode_clocks_event_reasons
from app.vendors import nvml_early
from app.vendors.base import BackendUnavailable
from app.vendors.nvidia import NvidiaBackend
from app.vendors.nvml_fans import PASSIVELY_COOLED
from tests.fakes.fake_nvml import H100_LOAD_PID, H200_LOAD_PID, FakeNvml, desktop_card, load_dump, scenario


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def opened(fake: FakeNvml, **kwargs: Any) -> NvidiaBackend:
    backend = NvidiaBackend(nvml=fake, **kwargs)
    backend.open()
    return backend


def test_h200_under_load_as_measured() -> None:
    backend = opened(scenario("h200x2_load"))
    idle, busy = backend.sample()
    assert (busy.name, busy.uuid) == ("NVIDIA H200", "GPU-4c1c74c1-e9d0-b580-e321-c7e5c81dddc9")
    assert busy.utilization_percent == 98.0 and busy.memory_utilization_percent == 23.0
    # v2 memory info: 'used' excludes the driver's reserve, as nvidia-smi (6735 MiB in the same dump)
    assert busy.memory_used_bytes == 7061962752 and round(busy.memory_used_bytes / 2**20) == 6735
    assert busy.memory_total_bytes == 150754820096
    assert busy.temperature_c == 57.0
    assert (busy.temperature_slowdown_c, busy.temperature_shutdown_c) == (
        load_dump("h200x2-load")[1]["temp_slowdown"], load_dump("h200x2-load")[1]["temp_shutdown"])
    assert busy.power_w == pytest.approx(693.481) and busy.power_limit_w == 700.0
    assert busy.throttle_reasons == ("sw_power_cap",)
    assert idle.throttle_reasons == ("gpu_idle",)
    assert busy.pstate == "P0" and busy.mig_mode is False
    assert busy.energy_j == pytest.approx(19463.597)
    assert busy.clock_sm_mhz is not None and busy.clock_memory_mhz is not None


@pytest.mark.parametrize("name", ["h100_load", "h100_idle", "h200x2_load"])
def test_datacenter_cards_have_no_fan_and_say_why(name: str) -> None:
    for gpu in opened(scenario(name)).sample():
        assert gpu.fan_speed_percent is None
        assert gpu.fan_speeds_percent == ()
        assert gpu.unsupported["fan_speed_percent"] == PASSIVELY_COOLED and gpu.passively_cooled
        assert gpu.error is None


def test_desktop_card_reports_each_fan() -> None:
    (gpu,) = opened(FakeNvml([desktop_card(fans=2)])).sample()
    assert gpu.fan_speeds_percent == (45.0, 49.0)
    assert gpu.fan_speed_percent == 49.0 and not gpu.passively_cooled
    assert "fan_speed_percent" not in gpu.unsupported
    assert gpu.mig_mode is None and gpu.unsupported["mig_mode"] == "not supported by this GPU"
    assert gpu.ecc_errors_uncorrected is None


def test_processes_with_memory_and_sm_share() -> None:
    backend = opened(scenario("h200x2_load"))
    backend.sample()
    (proc,) = backend.processes()
    assert (proc.pid, proc.gpu_index, proc.memory_bytes, proc.kind) == (H200_LOAD_PID, 1, 7052722176, "compute")
    assert proc.sm_percent == 98.0 and proc.encoder_percent == 0.0


def test_process_utilization_not_found_means_zero_not_unknown() -> None:
    fake = scenario("h100_load")
    fake.set(0, "process_utilization", [])  # NVML raises NotFound: nobody ran in the window
    backend = opened(fake)
    backend.sample()
    (proc,) = backend.processes()
    assert proc.sm_percent == 0.0


def test_process_utilization_unsupported_is_none() -> None:
    fake = scenario("h100_load")
    fake.set(0, "process_utilization", pynvml.NVMLError_NotSupported())
    backend = opened(fake)
    backend.sample()
    (proc,) = backend.processes()
    assert proc.sm_percent is None and proc.memory_bytes == 7052722176


def test_pid_seen_only_in_utilization_samples_is_reported() -> None:
    """The container case in facts/: the list is empty, the utilization samples still carry the host PID."""
    fake = scenario("h200x2_load")
    fake.set(1, "compute_processes", [])
    backend = opened(fake)
    backend.sample()
    (proc,) = backend.processes()
    assert (proc.pid, proc.kind, proc.memory_bytes, proc.sm_percent) == (H200_LOAD_PID, "utilization-only", None, 98.0)


def test_compute_and_graphics_contexts_of_one_process_are_one_row() -> None:
    fake = scenario("h100_load")
    fake.set(0, "graphics_processes", [{"pid": H100_LOAD_PID, "usedGpuMemory": 7052722176}])
    backend = opened(fake)
    backend.sample()
    assert [p.pid for p in backend.processes()] == [H100_LOAD_PID]


def test_eight_gpus() -> None:
    backend = opened(scenario("eight_gpus"))
    samples = backend.sample()
    assert [g.index for g in samples] == list(range(8))
    assert [g.utilization_percent for g in samples] == [10.0 * i for i in range(8)]
    procs = backend.processes()
    assert sorted((p.gpu_index, p.memory_bytes) for p in procs) == [(i, (i + 1) * 2**30) for i in range(8)]


def test_one_gpu_lost_mid_run_becomes_an_error_row_while_the_other_reports() -> None:
    clock = Clock()
    fake = scenario("h200x2_load")
    backend = opened(fake, clock=clock)
    assert all(g.error is None for g in backend.sample())

    fake.set(0, "utilization", pynvml.NVMLError_GpuIsLost())
    lost, busy = backend.sample()
    assert lost.error is not None and "GpuIsLost" in lost.error
    assert lost.uuid == "GPU-5ce6f751-d9a5-2669-cfdd-cb0224401395" and lost.name == "NVIDIA H200"
    assert lost.utilization_percent is None and lost.temperature_c is None
    assert busy.error is None and busy.utilization_percent == 98.0
    assert [p.gpu_index for p in backend.processes()] == [1]
    inits = fake.calls["init"]

    # Still lost at the re-init: the error row stays, and re-init backs off.
    fake.set(0, "handle", pynvml.NVMLError_GpuIsLost())
    clock.now += 3
    lost, busy = backend.sample()
    assert fake.calls["init"] == inits + 1
    assert lost.error is not None and busy.error is None
    backend.sample()
    assert fake.calls["init"] == inits + 1, "no re-init before the backoff expires"

    # The GPU comes back: after the next backoff, it reports again.
    fake.set(0, "handle", None)
    fake.set(0, "utilization", {"gpu": 3, "memory": 1})
    clock.now += 10
    back, busy = backend.sample()
    assert back.error is None and back.utilization_percent == 3.0
    assert fake.calls["init"] == inits + 2


def test_unknown_error_triggers_reinit_and_recovers() -> None:
    clock = Clock()
    fake = scenario("h100_load")
    backend = opened(fake, clock=clock)
    fake.set(0, "temperature", pynvml.NVMLError_Unknown())
    (gpu,) = backend.sample()
    assert gpu.error is not None and "Unknown" in gpu.error
    fake.set(0, "temperature", 61)
    clock.now += 2.5
    (gpu,) = backend.sample()
    assert gpu.error is None and gpu.temperature_c == 61.0


def test_nvml_is_initialised_once_for_many_ticks() -> None:
    fake = scenario("h200x2_load")
    backend = opened(fake, watch_xid=False)
    for _ in range(20):
        backend.sample()
        backend.processes()
    assert fake.calls["init"] == 1 and fake.calls["shutdown"] == 0
    backend.close()
    assert fake.calls["shutdown"] == 1 and fake.initialised == 0


def test_nvml_is_shut_down_once_the_xid_thread_has_left_its_wait() -> None:
    """NVML must not be shut down under the thread waiting for XID events: a backend that closes (to re-initialise,
    or at exit) hands its shutdown to that thread, which runs it after freeing its event set."""
    fake = scenario("h200x2_load")
    backend = opened(fake, xid_wait_ms=300)
    watcher = backend._xid
    assert watcher is not None and backend.event_watch() == "watching"
    assert fake.calls["init"] == 1 and fake.initialised == 1
    backend.close()
    assert fake.initialised == 1 and fake.calls["event_set_free"] == 0  # the thread is still in its wait
    assert watcher.join(5)
    assert fake.initialised == 0 and fake.calls["event_set_free"] == 1 and fake.calls["shutdown"] == 1
    backend.close()
    assert fake.calls["shutdown"] == 1  # once


def test_energy_is_read_at_a_slower_rate() -> None:
    clock = Clock()
    fake = scenario("h100_load")
    backend = opened(fake, clock=clock, slow_period_s=10.0)
    for _ in range(5):
        backend.sample()
        clock.now += 1
    assert fake.calls["energy_mj"] == 1
    clock.now += 10
    backend.sample()
    assert fake.calls["energy_mj"] == 2


@pytest.mark.parametrize(
    ("cell", "reason"),
    [
        (pynvml.NVMLError_NotSupported(), "not supported by this GPU"),
        (pynvml.NVMLError_NoPermission(), "no permission"),
        (pynvml.NVMLError_FunctionNotFound(), "not in this driver"),
    ],
)
def test_a_missing_metric_is_none_with_its_reason_never_zero(cell: Exception, reason: str) -> None:
    fake = scenario("h100_load")
    fake.set(0, "power", cell)
    (gpu,) = opened(fake).sample()
    assert gpu.power_w is None
    assert reason in gpu.unsupported["power_w"]
    assert gpu.error is None and gpu.utilization_percent == 99.0


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (pynvml.NVMLError_LibraryNotFound(), "libnvidia-ml.so.1 not found"),
        (pynvml.NVMLError_LibRmVersionMismatch(), "driver/library version mismatch"),
        (pynvml.NVMLError_DriverNotLoaded(), "kernel driver is not loaded"),
    ],
)
def test_init_failures_say_why(error: Exception, words: str) -> None:
    with pytest.raises(BackendUnavailable, match=words):
        NvidiaBackend(nvml=FakeNvml([], init_error=error)).open()


def test_no_gpu_is_unavailable() -> None:
    fake = FakeNvml([])
    with pytest.raises(BackendUnavailable, match="no NVIDIA GPU"):
        NvidiaBackend(nvml=fake).open()
    assert fake.calls["shutdown"] == 1


@pytest.mark.parametrize(
    ("mask", "names"),
    [(0x0, ()), (0x1, ("gpu_idle",)), (0x4, ("sw_power_cap",)),
     (0x4 | 0x20 | 0x40, ("sw_power_cap", "sw_thermal_slowdown", "hw_thermal_slowdown")),
     (0x8 | 0x1000, ("hw_slowdown", "0x1000"))],
)
def test_clocks_event_reasons_decode(mask: int, names: tuple[str, ...]) -> None:
    assert decode_clocks_event_reasons(mask) == names


def test_persistence_and_display_come_from_the_slow_tier() -> None:
    (gpu,) = opened(scenario("h100_load")).sample()
    assert gpu.persistence_mode is True and gpu.display_active is False


def test_xid_errors_arrive_through_nvml_events() -> None:
    import time

    fake = scenario("h200x2_load")
    backend = opened(fake, xid_wait_ms=100)
    assert backend.events() == []
    fake.inject_xid(1, 79)
    deadline = time.monotonic() + 5
    events: list[Any] = []
    while not events and time.monotonic() < deadline:
        events = backend.events()
        time.sleep(0.02)
    assert [(e.gpu_index, e.kind, e.value) for e in events] == [(1, "xid", 79)]
    assert backend.events() == []  # drained
    backend.close()
    deadline = time.monotonic() + 5
    while fake.calls["event_set_free"] == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert fake.calls["event_set_free"] == 1


def test_xid_events_not_supported_is_a_reason_not_an_error() -> None:
    fake = scenario("h100_load")
    fake.set(0, "xid_events", pynvml.NVMLError_NotSupported())
    backend = opened(fake)
    assert backend.event_watch() == "no GPU supports XID events"
    assert backend.sample()[0].error is None


def test_per_process_utilization_is_read_at_its_own_rate_and_when_processes_change() -> None:
    """It costs ~1.7 ms on an H200 (benchmarks/nvml_calls.py): not on every tick, but at once on a new process."""
    clock = Clock()
    fake = scenario("h200x2_load")
    backend = opened(fake, clock=clock, process_util_period_s=3.0)
    for _ in range(3):
        backend.sample()
        assert [p.sm_percent for p in backend.processes() if p.pid == H200_LOAD_PID] == [98.0]
        clock.now += 0.9
    assert fake.calls["process_utilization"] == 1  # once in 2.7 s, on the busy GPU 1 (GPU 0 reads 0 %)
    fake.start_process(1, 700)
    backend.sample()  # a tick: the GPUs, then their processes
    backend.processes()
    assert fake.calls["process_utilization"] == 2  # the new process on GPU 1 triggers a read
    clock.now += 3
    backend.sample()
    backend.processes()
    assert fake.calls["process_utilization"] == 3  # the period ran out


def test_an_idle_gpu_costs_no_per_process_utilization_call() -> None:
    """A process holding memory on a GPU at 0 %: its SM share is 0 %, known without the ~2 ms call."""
    clock = Clock()
    fake = scenario("h200x2_load")
    fake.run_on(0, 4242, memory_bytes=20 * 2**30, sm_percent=0)
    fake.set(0, "utilization", {"gpu": 0, "memory": 0})
    backend = opened(fake, clock=clock, process_util_period_s=3.0)
    backend.sample()
    holder = next(p for p in backend.processes() if p.pid == 4242)
    assert holder.sm_percent == 0.0 and holder.memory_bytes == 20 * 2**30
    assert fake.calls["process_utilization"] == 1  # GPU 1 only
    fake.run_on(0, 4242, memory_bytes=20 * 2**30, sm_percent=75)
    fake.set(0, "utilization", {"gpu": 75, "memory": 10})
    clock.now += 0.5
    backend.sample()
    assert next(p for p in backend.processes() if p.pid == 4242).sm_percent == 75.0  # read at once
    assert fake.calls["process_utilization"] == 2


def test_a_gpu_with_one_process_is_read_per_lone_period_and_at_once_when_a_second_comes() -> None:
    """A lone process's share of its GPU is all of it whatever its SM % says: its ~1.7 ms call is made every
    ``lone_util_period_s``; a second process on the GPU is read at once, and the GPU is then on the usual turns."""
    clock = Clock()
    fake = scenario("h200x2_load")
    fake.set(0, "utilization", {"gpu": 80, "memory": 10})
    fake.set(1, "utilization", {"gpu": 0, "memory": 0})  # GPU 1 idles: GPU 0 alone is in play
    fake.run_on(0, 4242, memory_bytes=2**30, sm_percent=80)
    backend = opened(fake, clock=clock, process_util_period_s=3.0, process_util_spacing_s=1.0,
                     lone_util_period_s=15.0)

    def tick(seconds: float = 1.0) -> int:
        clock.now += seconds
        before = fake.calls["process_utilization"]
        backend.sample()
        backend.processes()
        return fake.calls["process_utilization"] - before

    tick(0.0)
    lone = [p.pid for p in backend.processes() if p.gpu_index == 0]
    assert len(lone) == 1
    got = [tick() for _ in range(16)]
    assert got == [0] * 14 + [1, 0], str(got)  # read again 15 s later, not every 3 s
    fake.start_process(0, 4343)
    assert tick() == 1  # a second process: read at once
    assert [tick() for _ in range(6)] == [0, 0, 1, 0, 0, 1]  # then every 3 s


def test_busy_gpus_take_turns_for_per_process_utilization() -> None:
    """On 8 GPUs the ~1.7 ms call would cost 4.5 ms of CPU a second at a 3 s period: new processes are read at
    once, then the busy GPUs take turns, one call a second at most, the one read longest ago first."""
    clock = Clock()
    fake = scenario("eight_gpus")  # GPU i at 10 * i %: GPU 0 idles
    backend = opened(fake, clock=clock, process_util_period_s=3.0, process_util_spacing_s=1.0,
                     lone_util_period_s=3.0)  # one process a GPU here: the turns alone are tested
    backend.sample()
    backend.processes()
    assert fake.calls["process_utilization"] == 7  # every busy GPU at once: its processes are new
    per_tick = []
    for _ in range(20):
        clock.now += 1.0
        before = fake.calls["process_utilization"]
        backend.sample()
        backend.processes()
        per_tick.append(fake.calls["process_utilization"] - before)
    assert per_tick[:2] == [0, 0] and per_tick[2:] == [1] * 18  # nothing due for 3 s, then one a second
    busy = [g for g in backend._gpus if not g.idle]
    assert len(busy) == 7 and all(clock.now - g.util_at < 7 for g in busy)  # each within 7 s: round robin
    def tick(seconds: float) -> int:
        clock.now += seconds
        before = fake.calls["process_utilization"]
        backend.sample()
        backend.processes()
        return fake.calls["process_utilization"] - before

    fake.set(3, "utilization", {"gpu": 0, "memory": 0})
    tick(1.0)
    assert tick(3.0) == 1  # GPU 3 idles for longer than a period; the others go on taking turns
    fake.set(3, "utilization", {"gpu": 60, "memory": 5})
    assert tick(0.2) == 1  # within the spacing: only GPU 3, waking from idle, is read
    fake.set(3, "utilization", {"gpu": 0, "memory": 0})
    tick(0.2)
    fake.set(3, "utilization", {"gpu": 60, "memory": 5})
    assert tick(0.2) == 0  # a GPU that flaps between idle and busy is read at most once a period


def tick(backend: NvidiaBackend) -> list[GpuProcessUsage]:
    """What the collector does each tick: the GPUs, then their processes."""
    backend.sample()
    return backend.processes()


def test_the_process_lists_are_read_again_when_the_used_memory_moves_and_every_list_period() -> None:
    """The compute and graphics lists cost ~0.3 ms of CPU a GPU on an H100: while a GPU's used memory stays, its last
    list stands (at most ``list_period_s``); a process that starts, ends or grows moves the used memory and is seen
    on the next tick."""
    clock = Clock()
    fake = scenario("h200x2_load")
    backend = opened(fake, clock=clock, list_period_s=5.0)
    for _ in range(4):
        tick(backend)
        clock.now += 1
    assert fake.calls["compute_processes"] == 2  # once per GPU in 4 s of unchanged memory
    fake.start_process(1, 700)
    assert 700 in {p.pid for p in tick(backend)}  # at once: the used memory grew by 1 GiB
    assert fake.calls["compute_processes"] == 3
    fake.end_process(1, H200_LOAD_PID)
    assert {p.pid for p in tick(backend) if p.gpu_index == 1} == {700}  # at once: its memory was freed
    fake.end_process(1, 700)  # one ends as another of the same size starts: the used memory stays
    fake.start_process(1, 701)
    clock.now += 1
    assert {p.pid for p in tick(backend) if p.gpu_index == 1} == {700}  # the last list, under 5 s old
    clock.now += 4
    assert {p.pid for p in tick(backend) if p.gpu_index == 1} == {701}  # the list period ran out


def test_the_process_lists_are_read_every_tick_when_the_used_memory_is_unknown() -> None:
    clock = Clock()
    fake = scenario("h200x2_load")
    for key in ("memory", "memory_v2"):
        fake.set(1, key, pynvml.NVMLError_NotSupported())
    backend = opened(fake, clock=clock, list_period_s=5.0)
    for _ in range(3):
        tick(backend)
        clock.now += 1
    assert fake.calls["compute_processes"] == 1 + 3  # GPU 0 once, GPU 1 every tick


@pytest.mark.parametrize("name", ["h100_load", "h200x2_load", "desktop_fan", "eight_gpus"])
def test_a_dumps_processes_are_no_process_of_this_machine(name: str) -> None:
    """A captured PID read as it was named whatever held it here (a Chromium, once): it lies above PID_MAX_LIMIT."""
    backend = opened(scenario(name))
    backend.sample()
    pids = {p.pid for p in backend.processes()}
    assert pids and all(pid > 2**22 and not Path(f"/proc/{pid}").exists() for pid in pids)


@pytest.fixture
def early_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """nvml_early as a fresh process has it (its state is per process)."""
    for name, value in (("_thread", None), ("_module", None), ("_opened", False)):
        monkeypatch.setattr(nvml_early, name, value)


@pytest.mark.usefixtures("early_state")
def test_an_early_opening_is_taken_over_and_given_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal command begins NVML's opening before its imports; the backend takes that module, its own
    nvmlInit counts one more user, and the early one is given back, so that closing the backend (to re-initialise
    after a GPU error, or at exit) still shuts NVML down. Fails when the backend does not call ``release`` (NVML
    stays initialised after close) or does not take the early module (two imports, the fake never used)."""
    fake = scenario("h200x2_load")
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    nvml_early.start()
    backend = NvidiaBackend(watch_xid=False)
    backend.open()
    assert len(backend.sample()) == 2
    assert fake.calls["init"] == 2 and fake.calls["shutdown"] == 1 and fake.initialised == 1
    backend.close()
    assert fake.initialised == 0
    nvml_early.release()  # nothing left to give back
    assert fake.calls["shutdown"] == 2


@pytest.mark.usefixtures("early_state")
def test_an_early_opening_that_failed_is_said_by_the_backends_own_call(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = scenario("h200x2_load")
    fake.init_error = pynvml.NVMLError_DriverNotLoaded()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    nvml_early.start()
    with pytest.raises(BackendUnavailable, match="driver"):
        NvidiaBackend(watch_xid=False).open()
    assert fake.calls["init"] == 2 and fake.calls["shutdown"] == 0


@pytest.mark.usefixtures("early_state")
def test_the_backend_waits_for_the_early_opening(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its nvmlInit comes after the early one has returned, and it gives the early one back: fails when the backend
    imports pynvml itself instead of taking it (its init runs beside the early one's)."""
    fake = scenario("h200x2_load")
    gate, first = threading.Event(), threading.Event()
    inner = fake.nvmlInit

    def slow_first_init() -> None:
        if not first.is_set():
            first.set()
            gate.wait(30)
        inner()

    monkeypatch.setattr(fake, "nvmlInit", slow_first_init)
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    nvml_early.start()
    assert first.wait(30)
    backend = NvidiaBackend(watch_xid=False)
    opener = threading.Thread(target=backend.open, daemon=True)
    opener.start()
    opener.join(0.5)
    assert opener.is_alive() and fake.calls["init"] == 0  # waiting on the early opening, no call of its own
    gate.set()
    opener.join(30)
    assert not opener.is_alive() and fake.calls["init"] == 2 and fake.initialised == 1
    backend.close()
    assert fake.initialised == 0


@pytest.mark.usefixtures("early_state")
def test_pynvml_is_imported_by_the_caller_and_only_nvml_init_runs_on_the_thread(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An import is Python's work under the GIL: beside the command's own imports on another thread, both waited for
    the GIL after each system call (a scan of /proc took 16-34 ms instead of ~2 on an H200 host). Fails when the
    import moves back onto the thread."""
    imported_on: list[str] = []
    initialised_on: list[str] = []

    class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name: str, path: object, target: object = None) -> importlib.machinery.ModuleSpec | None:
            return importlib.util.spec_from_loader(name, self) if name == "pynvml" else None

        def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
            return None

        def exec_module(self, module: types.ModuleType) -> None:
            imported_on.append(threading.current_thread().name)
            def init() -> None:
                initialised_on.append(threading.current_thread().name)

            setattr(module, "nvmlInit", init)  # noqa: B010  # a module this finder makes: mypy knows no attribute

    monkeypatch.delitem(sys.modules, "pynvml")
    monkeypatch.setattr(sys, "meta_path", [Finder(), *sys.meta_path])
    nvml_early.start()
    assert nvml_early.taken() is not None
    assert imported_on == [threading.current_thread().name]
    assert initialised_on == ["fanwhy-nvml-early"]


def test_the_gpus_are_opened_and_first_read_side_by_side_then_one_after_another(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A GPU's first calls are slow in the driver (~10 ms each on an H200), so the open and the first sample read
    the GPUs on a thread each; later samples stay on the collector's thread (no thread per tick). A barrier of 8
    parties in the name call (made at open) and in the first sample's utilization calls breaks when the GPUs are
    read one at a time: fails when either loop is serial."""
    fake = scenario("eight_gpus")
    at_open, first_read = threading.Barrier(8, timeout=10), threading.Barrier(8, timeout=10)
    inner_name, inner_util = fake.nvmlDeviceGetName, fake.nvmlDeviceGetUtilizationRates
    readers: list[str] = []

    def name(h: int) -> str:
        at_open.wait()
        return inner_name(h)

    def utilization(h: int) -> Any:
        readers.append(threading.current_thread().name)
        if len(readers) <= 8:
            first_read.wait()
        return inner_util(h)

    monkeypatch.setattr(fake, "nvmlDeviceGetName", name)
    monkeypatch.setattr(fake, "nvmlDeviceGetUtilizationRates", utilization)
    backend = opened(fake, watch_xid=False)
    first = backend.sample()
    assert [g.utilization_percent for g in first] == [10.0 * i for i in range(8)] and all(g.name for g in first)
    backend.sample()
    assert readers[8:] == [threading.current_thread().name] * 8  # the second sample: the caller's thread only
