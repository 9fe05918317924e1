"""The host side: /proc/stat and /proc/meminfo read through kept descriptors, checked against psutil."""

from __future__ import annotations

import time
from pathlib import Path

import psutil

from app.host import HostSampler, ProcFile, cpu_times, memory_used_total

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
    time.sleep(0.05)
    assert float(uptime.read().split()[0]) > first
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


def test_a_stopped_monitor_closes_its_kept_descriptors() -> None:
    from app import build_monitor
    from app.config import Settings

    me = psutil.Process()
    before = me.num_fds()
    monitor = build_monitor(Settings(db="none", backend="simulated"))
    monitor.collect()
    opened = me.num_fds()
    monitor.stop()
    assert me.num_fds() <= opened - 2  # /proc/stat and /proc/meminfo at least
    assert me.num_fds() <= before
