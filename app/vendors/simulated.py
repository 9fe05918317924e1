"""A demo GPU whose load comes from real child processes, so attribution works end to end.

Never chosen by ``auto``. Each simulated GPU runs one worker process (app/vendors/simulated_worker.py)
whose CPU use, measured by psutil, drives the GPU's utilization; temperature follows it with a lag,
power and fan follow temperature and load. GPU 0 has a fan with a 30 % floor that stops below 45 °C (fan-stop, back
on above 48 °C); the others are passively cooled, like datacenter cards, and the simulated machine's chassis fans
(app/vendors/simulated_machine.py) carry their heat.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import psutil

from ..core.fan import Fan
from ..core.model import GpuProcessUsage, GpuSample, frozen_map
from .base import Backend, BackendUnavailable, Surroundings
from .nvml_fans import PASSIVELY_COOLED
from .simulated_machine import SimulatedMachine

FAN_FLOOR, FAN_STOP_C, FAN_START_C = 30.0, 45.0, 48.0
# A worker's load is its CPU time, which /proc counts in 10 ms ticks, over a duty cycle of 0.1 s: a first sample
# taken sooner after the workers start reads noise (no tick yet: an idle GPU in a one-shot answer on a busy
# machine). The first sample waits until this long after every worker said it runs; a worker that has not said so
# within READY_S (a machine too busy to start it) is measured as it is.
FIRST_WINDOW_S, READY_S = 0.3, 10.0

GIB = 1024**3
_JOBS = ("python train.py", "vllm serve", "jupyter kernel", "ollama runner")
# how each job is started, so that its command line is the job's as a real one would be: a script, a console script
# (a shebang to the interpreter, as pip writes them), a module: (file to write, argv after the interpreter)
_LAUNCH = {
    "python train.py": ("train.py", ["{dir}/train.py", "--epochs", "90"]),
    "vllm serve": ("vllm", ["{dir}/vllm", "serve", "facebook/opt-125m"]),
    "jupyter kernel": ("ipykernel_launcher.py", ["-m", "ipykernel_launcher", "-f", "{dir}/kernel-demo.json"]),
    "ollama runner": ("ollama", ["{dir}/ollama", "runner", "--model", "llama3"]),
}


def _jobs_folder() -> str:
    """Where the demo's job launchers live: ~/.cache/fanwhy/demo-jobs (kept: a one-shot answer exits without
    cleaning up), ours alone (0700, owned by us, else a fresh private temporary folder)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fanwhy" / "demo-jobs"
    try:
        cache.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = cache.stat()
        if info.st_uid == os.getuid() and not info.st_mode & 0o022:
            return str(cache)
    except OSError:
        pass
    return tempfile.mkdtemp(prefix="fanwhy-demo-jobs-")


@dataclass
class _SimGpu:
    index: int
    name: str
    has_fan: bool
    memory_total_bytes: int
    power_limit_w: float
    job_memory_bytes: int
    worker: subprocess.Popen[bytes] | None = None
    probe: psutil.Process | None = None
    temperature_c: float = 35.0
    energy_j: float = 0.0
    utilization_percent: float = 0.0
    fan_running: bool = False


class SimulatedBackend(Backend):
    name = "simulated"

    def __init__(self, gpus: int = 2, peak: float = 0.5, period_s: float = 60.0,
                 clock: Callable[[], float] = time.monotonic):
        if gpus < 1:
            raise ValueError("the simulated backend needs at least one GPU")
        self.peak = max(0.05, min(1.0, peak))
        self.period_s = period_s
        self._clock = clock
        self._jobs_dir: str | None = None  # the jobs' launchers (open() writes them)
        self._last: float | None = None
        self._first_at: float | None = None  # when the first sample may be taken (open() sets it)
        self._gpus = [
            _SimGpu(index=i, name="FanWhy Simulated RTX" if i == 0 else "FanWhy Simulated H200",
                    has_fan=i == 0, memory_total_bytes=(24 if i == 0 else 141) * GIB,
                    power_limit_w=450.0 if i == 0 else 700.0, job_memory_bytes=(6 + 3 * i) * GIB)
            for i in range(gpus)
        ]

    def surroundings(self) -> Surroundings:
        """The demo's machine (app.vendors.simulated_machine): a board's hwmon tree whose temperatures follow the
        simulated load, and a BMC whose chassis fans answer the cards' heat."""
        machine = SimulatedMachine.shared()
        return Surroundings(sys_root=str(machine.sys_root), etc_root=str(machine.etc_root),
                            bmc_run=machine.bmc_listing, bmc_every_s=2.0)

    def _launcher(self, job: str) -> list[str]:
        """The argv that starts ``job``'s worker under the job's own command line (files in a folder of ours)."""
        if self._jobs_dir is None:
            self._jobs_dir = _jobs_folder()
        name, words = _LAUNCH[job]
        path = Path(self._jobs_dir) / name
        text = f"#!{sys.executable}\nfrom {__package__}.simulated_worker import main\nmain()\n"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            path.chmod(0o700)
        return [sys.executable, *(w.format(dir=self._jobs_dir) for w in words)]

    def open(self) -> None:
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
        for gpu in self._gpus:
            job = _JOBS[gpu.index % len(_JOBS)]
            argv = [*self._launcher(job), "--job", job, "--period", str(self.period_s), "--phase",
                    str(0.37 * gpu.index), "--peak", str(self.peak), "--api-key=demo-secret-not-real"]
            try:
                # stdin is a pipe nobody writes to: the worker reads end-of-file when this process is gone
                gpu.worker = subprocess.Popen(argv, env={**env, "PYTHONPATH": os.pathsep.join(
                                                  filter(None, [self._jobs_dir, env["PYTHONPATH"]]))},
                                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                gpu.probe = psutil.Process(gpu.worker.pid)
            except (OSError, psutil.Error) as error:
                self.close()
                raise BackendUnavailable(f"could not start a simulated worker: {error}") from error
        self._await_workers()

    def _await_workers(self) -> None:
        """Wait (up to READY_S) for each worker's word that its loop runs, then start measuring its CPU."""
        deadline = time.monotonic() + READY_S
        waiting = {gpu.worker.stdout.fileno() for gpu in self._gpus
                   if gpu.worker is not None and gpu.worker.stdout is not None}
        while waiting and (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select(list(waiting), [], [], left)
            for fd in readable:
                os.read(fd, 64)  # the word, or end-of-file from a worker that ended: waited for no longer
                waiting.discard(fd)
        for gpu in self._gpus:
            if gpu.worker is not None and gpu.worker.stdout is not None:
                gpu.worker.stdout.close()
            if gpu.probe is not None:
                with contextlib.suppress(psutil.Error):  # gone already: its first sample says so
                    gpu.probe.cpu_percent(None)
        self._first_at = time.monotonic() + FIRST_WINDOW_S

    def close(self) -> None:
        for gpu in self._gpus:
            if gpu.worker is not None:
                for pipe in (gpu.worker.stdin, gpu.worker.stdout):
                    if pipe is not None:
                        pipe.close()
            if gpu.worker is not None and gpu.worker.poll() is None:
                gpu.worker.terminate()
                try:
                    gpu.worker.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    gpu.worker.kill()
                    gpu.worker.wait()
            gpu.worker = None

    def sample(self) -> list[GpuSample]:
        if self._first_at is not None:
            time.sleep(max(0.0, self._first_at - time.monotonic()))
            self._first_at = None
        now = self._clock()
        dt = 0.0 if self._last is None else now - self._last
        self._last = now
        samples = [self._step(gpu, dt) for gpu in self._gpus]
        burnt = sum(g.utilization_percent * self.peak for g in self._gpus) / (psutil.cpu_count() or 1)
        SimulatedMachine.shared().step([(s.temperature_c or 35.0, s.power_w or 0.0) for s in samples], dt, burnt)
        return samples

    def _step(self, gpu: _SimGpu, dt: float) -> GpuSample:
        if gpu.probe is None:
            return GpuSample(vendor="simulated", index=gpu.index, name=gpu.name, source="simulated",
                             error="simulated worker not started")
        try:
            cpu = gpu.probe.cpu_percent(None)
        except psutil.Error:
            return GpuSample(vendor="simulated", index=gpu.index, name=gpu.name, source="simulated",
                             uuid=self._uuid(gpu), error="simulated GPU lost: its worker process exited")
        util = min(100.0, cpu / self.peak)
        gpu.utilization_percent = util
        target = 34.0 + 0.5 * util
        gpu.temperature_c += (target - gpu.temperature_c) * min(1.0, dt / 8.0)
        power = 25.0 + (gpu.power_limit_w - 25.0) * util / 100.0 * 0.9
        gpu.energy_j += power * dt
        unsupported = {"fan_rpm": "not simulated", "activity": "not simulated: no activity counters"}
        fans = self._fans(gpu)
        if not gpu.has_fan:
            unsupported["fan_speed_percent"] = PASSIVELY_COOLED
        reasons = ("gpu_idle",) if util < 1 else (("sw_power_cap",) if power > 0.95 * gpu.power_limit_w else ())
        return GpuSample(
            vendor="simulated", index=gpu.index, uuid=self._uuid(gpu), name=gpu.name, passively_cooled=not gpu.has_fan,
            utilization_percent=round(util, 1), memory_utilization_percent=round(util * 0.3, 1),
            memory_used_bytes=gpu.job_memory_bytes, memory_total_bytes=gpu.memory_total_bytes,
            temperature_c=round(gpu.temperature_c, 1), temperature_slowdown_c=87.0, temperature_shutdown_c=92.0,
            fans=fans,
            power_w=round(power, 1), power_limit_w=gpu.power_limit_w,
            clock_sm_mhz=int(210 + 15 * util), clock_memory_mhz=2619, clock_sm_max_mhz=1980,
            pstate="P0" if util > 0 else "P8", throttle_reasons=reasons, energy_j=round(gpu.energy_j, 3),
            ecc_errors_uncorrected=0, mig_mode=False, pci_bus_id=f"00000000:{gpu.index + 1:02x}:00.0",
            source="simulated", unsupported=frozen_map(unsupported),
        )

    @staticmethod
    def _fans(gpu: _SimGpu) -> tuple[Fan, ...]:
        """GPU 0's fan: the driver's curve from a 30 % floor, resting below 45 °C until 48 °C (fan-stop)."""
        if not gpu.has_fan:
            return ()
        gpu.fan_running = gpu.temperature_c > (FAN_STOP_C if gpu.fan_running else FAN_START_C)
        speed = round(max(FAN_FLOOR, min(100.0, (gpu.temperature_c - 30.0) * 2.5)), 1) if gpu.fan_running else 0.0
        return (Fan(id=f"nvml:{gpu.index}/fan0", chip=f"GPU {gpu.index}", channel=0, label=None,
                    percent=speed, target_percent=speed, floor_percent=FAN_FLOOR, control="automatic",
                    controller="the driver's temperature curve (NVML fan policy 0)", source="GPU",
                    source_from="design", gpu_index=gpu.index, cools="the GPU",
                    unsupported=frozen_map({"rpm": "not simulated"})),)

    def processes(self) -> list[GpuProcessUsage]:
        return [
            GpuProcessUsage(pid=gpu.worker.pid, gpu_index=gpu.index, memory_bytes=gpu.job_memory_bytes,
                            sm_percent=round(gpu.utilization_percent, 1), encoder_percent=0.0,
                            decoder_percent=0.0, kind="compute")
            for gpu in self._gpus if gpu.worker is not None and gpu.worker.poll() is None
        ]

    @staticmethod
    def _uuid(gpu: _SimGpu) -> str:
        return f"GPU-51m0000{gpu.index}-fan0-why0-0000-000000000000"
