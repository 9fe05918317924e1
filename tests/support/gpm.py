"""Collecting with the GPU activity counters' thread on the fake NVML: ticks far enough apart for a GPM window, each
after the thread read what the one before asked."""

from __future__ import annotations

import time
from typing import Any

DEADLINE_S = 30.0  # a loaded 2-core machine


def counted_ticks(collector: Any, n: int = 3) -> Any:
    """``n`` collections 120 ms apart (a GPM window is at least 100 ms), each after the GPM thread's last read; the
    last frame."""
    gpm = collector.backend.gpm
    frame = None
    for _ in range(n):
        done = gpm.reads
        frame = collector.collect()
        assert gpm.settled(done + 1, DEADLINE_S)
        time.sleep(0.12)
    return frame
