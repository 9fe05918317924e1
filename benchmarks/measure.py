"""Shared by the benchmarks: the CPU a running collector thread uses."""

from __future__ import annotations

import time
from typing import Any

import psutil


def collector_cpu(monitor: Any, seconds: float) -> tuple[float, float]:
    """Run ``monitor``'s collector thread at a 1 s interval for ``seconds``: (% of one core, RSS in MiB).
    Measured on this process, so run nothing else in it meanwhile."""
    monitor.interval_s = 1.0
    me = psutil.Process()
    before = me.cpu_times()
    monitor.start()
    time.sleep(seconds)
    monitor.stop(close_backend=False)
    after = me.cpu_times()
    used = (after.user - before.user) + (after.system - before.system)
    return round(100 * used / seconds, 3), round(me.memory_info().rss / 2**20, 1)
