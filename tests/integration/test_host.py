"""The host side: /proc/stat and /proc/meminfo read through kept descriptors, checked against psutil."""

from __future__ import annotations

import os
import time
from pathlib import Path

import psutil

from app.attribution.procscan import CLOCK_TICKS, cpu_times, own_ticks
from app.attribution.procstat import CpuBaseline, cpu_baseline
from app.collect.host import HostSampler, ProcFile, memory_used_total
from tests.support.servers import wait_for

STAT = b"cpu  100 5 50 800 40 3 2 0 7 1\ncpu0 50 2 25 400 20 1 1 0 3 0\nintr 1 2 3\n"
MEMINFO = b"MemTotal:       16384000 kB\nMemFree:         1000000 kB\nMemAvailable:    4096000 kB\nBuffers: 1 kB\n"


def test_cpu_times_count_iowait_as_idle_and_guest_time_once() -> None:
    busy, total = cpu_times(STAT)
    assert total == 100 + 5 + 50 + 800 + 40 + 3 + 2 + 0  # guest (7) and guest_nice (1) are inside user/nice
    assert busy == total - 800 - 40


def test_memory_used_is_total_minus_available() -> None:
    assert memory_used_total(MEMINFO) == ((16384000 - 4096000) * 1024, 16384000 * 1024)
    assert memory_used_total(b"MemTotal: 1 kB\nMemFree: 1 kB\n") is None  # a kernel before 3.14


def test_a_kept_descriptor_reads_fresh_text_each_time() -> None:
    uptime = ProcFile("/proc/uptime")
    first = float(uptime.read().split()[0])
    wait_for(lambda: float(uptime.read().split()[0]) > first)  # each read is fresh: it moves on
    uptime.close()


def test_the_sampler_agrees_with_psutil_on_this_machine() -> None:
    sampler = HostSampler()
    deadline = time.monotonic() + 0.3
    while time.monotonic() < deadline:  # some CPU time to measure
        sum(range(10_000))
    sample = sampler.sample()
    memory = psutil.virtual_memory()
    assert sample.memory_total_bytes == memory.total
    assert abs(sample.memory_used_bytes - (memory.total - memory.available)) < 0.05 * memory.total
    assert sample.cpu_percent is not None and 0 < sample.cpu_percent <= 100
    assert sample.cpu_count == psutil.cpu_count()
    assert sample.load_average is not None and len(sample.load_average) == 3


def test_a_host_proc_root_is_read_instead_of_ours(tmp_path: Path) -> None:
    (tmp_path / "stat").write_bytes(STAT)
    (tmp_path / "meminfo").write_bytes(MEMINFO)
    sample = HostSampler(proc_root=str(tmp_path)).sample()
    assert (sample.memory_used_bytes, sample.memory_total_bytes) == memory_used_total(MEMINFO)
    assert sample.cpu_percent == 0.0  # the same counters twice: no time passed on that "host"


def _stat(busy: int, idle: int) -> bytes:
    return f"cpu  {busy} 0 0 {idle} 0 0 0 0 0 0\n".encode()


def test_a_primed_sampler_measures_from_the_baseline_without_its_own_start_up(tmp_path: Path) -> None:
    """A one-shot answer primes the sampler with a reading from its very start: the first CPU % spans the start-up,
    and the start-up's own CPU time (this process's) is not counted as the machine's load, once."""
    (tmp_path / "stat").write_bytes(_stat(1000, 9000))
    (tmp_path / "meminfo").write_bytes(MEMINFO)
    baseline = CpuBaseline(at=time.monotonic(), machine=(1000, 10000), processes={}, own_ticks=own_ticks())
    sampler = HostSampler(proc_root=str(tmp_path))
    (tmp_path / "stat").write_bytes(_stat(5000, 9000))  # what the sampler read at its making is not the baseline
    sampler.prime(baseline)
    while own_ticks() - baseline.own_ticks < 10:  # this process's start-up: ten ticks of CPU, however loaded
        sum(range(10_000))
    spent = own_ticks() - baseline.own_ticks
    # over 1,000 ticks of the machine: this process's ticks and 100 of another load
    (tmp_path / "stat").write_bytes(_stat(1000 + spent + 100, 9000 + 1000 - spent - 100))
    cpu = sampler.sample().cpu_percent
    assert cpu is not None and 9.0 <= cpu <= 10.0  # a tick or two more of our own may land in between
    (tmp_path / "stat").write_bytes(_stat(1000 + spent + 100 + 500, 9000 + 1000 - spent - 100 + 500))
    assert sampler.sample().cpu_percent == 50.0  # only the first sample after prime() leaves this process out


def test_a_baseline_reads_the_machine_and_every_process_but_this_one(tmp_path: Path) -> None:
    (tmp_path / "stat").write_bytes(STAT)
    for pid, ticks in ((41, 300), (42, 700)):
        (tmp_path / str(pid)).mkdir()
        fields = ["S"] + ["0"] * 10 + [str(ticks), "100"] + ["0"] * 6 + [str(pid * 1000)] + ["0"] * 20
        (tmp_path / str(pid) / "stat").write_text(f"{pid} (a (b) c) " + " ".join(fields) + "\n")
    (tmp_path / "self").symlink_to("42")  # as /proc/self reads: a bare PID
    baseline = cpu_baseline(str(tmp_path), clock=lambda: 12.5)
    assert baseline.at == 12.5 and baseline.machine == cpu_times(STAT)
    assert list(baseline.processes) == [41]  # 42 is "self" in that /proc
    start_ticks, seconds = baseline.processes[41]
    assert start_ticks == 41_000 and seconds == 400 / os.sysconf("SC_CLK_TCK")
    assert cpu_baseline(str(tmp_path / "missing")).machine is None


def test_a_stopped_monitor_closes_its_kept_descriptors() -> None:
    from app import build_collector
    from app.collect.settings import Settings

    me = psutil.Process()
    before = me.num_fds()
    collector = build_collector(Settings(db="none", backend="simulated"))
    collector.collect()
    opened = me.num_fds()
    collector.stop()
    assert me.num_fds() <= opened - 2  # /proc/stat and /proc/meminfo at least
    assert me.num_fds() <= before


def test_a_broken_proc_stat_degrades_the_fields_it_feeds(tmp_path: Path) -> None:
    """An empty /proc/stat (a private mount namespace with /dev/null over it): CPU % is None with the reason,
    the file is named in ``errors``, the rest is read; once the file is good again, CPU % comes back."""
    (tmp_path / "stat").write_bytes(b"")
    (tmp_path / "meminfo").write_bytes(MEMINFO)
    sampler = HostSampler(proc_root=str(tmp_path))  # no exception: it used to fail the worker's boot
    sample = sampler.sample()
    assert sample.cpu_percent is None and sample.memory_total_bytes == 16384000 * 1024
    assert "stat unreadable" in sample.unsupported["cpu_percent"]
    assert sampler.errors == (f"host: {sample.unsupported['cpu_percent']}",) and str(tmp_path / "stat") in \
        sampler.errors[0]
    (tmp_path / "stat").write_bytes(STAT)
    sampler.sample()
    (tmp_path / "stat").write_bytes(STAT.replace(b"cpu  100", b"cpu  200"))
    assert sampler.sample().cpu_percent is not None and not sampler.errors


def test_the_server_boots_with_an_empty_proc_stat_and_health_names_the_file() -> None:
    import os
    import shutil
    import subprocess
    import sys

    import pytest
    import requests

    from tests.support.servers import ROOT, free_port, wait_healthy

    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare for a private mount namespace")
    port = free_port()
    env = {**os.environ, "FANWHY_BACKEND": "simulated", "FANWHY_SIM_GPUS": "1", "FANWHY_DB": "none",
           "FANWHY_PORT": str(port), "FANWHY_INTERVAL": "0.5"}
    script = f"mount --bind /dev/null /proc/stat && exec {sys.executable} -m app"
    proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", script], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        health = wait_healthy(f"http://127.0.0.1:{port}")
        assert health["status"] == "degraded"
        assert any("/proc/stat unreadable" in r for r in health["reasons"]), health["reasons"]
        processes = requests.get(f"http://127.0.0.1:{port}/api/gpu/processes", timeout=5).json()["processes"]
        assert processes and all(p["start_time"] is None for p in processes)  # listed; start times unknown
    finally:
        os.killpg(proc.pid, 15)
        output = proc.communicate(timeout=20)[0]
    assert "Traceback" not in output, output


def test_fanwhy_measures_its_own_cost_and_knows_its_own_pids() -> None:
    """The sampler's own CPU % is this process's CPU time over the wall time, whatever share of a core the
    scheduler gave it (other tests may share the cores): measured here by the process's own CPU clock."""
    sampler = HostSampler(proc_root="/proc")
    wall, cpu = time.monotonic(), time.process_time()
    while time.process_time() - cpu < 0.2:  # 0.2 s of this process's CPU: what the sampler reports as FanWhy's
        sum(range(10_000))
    sample = sampler.sample()
    wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    used = 100 * cpu / wall
    slack = 100 * 2 / CLOCK_TICKS / wall + 2  # the sampler counts whole clock ticks, at each end
    assert sample.own_cpu_percent is not None and abs(sample.own_cpu_percent - used) <= slack, (used, slack)
    assert sample.own_rss_bytes is not None and sample.own_rss_bytes > 10 * 2**20
    assert os.getpid() in sample.own_pids
    assert sampler.sample().own_cpu_percent is not None  # the next one, since this one
    sampler.close()
