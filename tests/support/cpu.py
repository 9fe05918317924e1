"""A CPU burner and its own account of the CPU it used (``/proc/<pid>/stat``), so a test compares FanWhy's CPU %
with the truth of that moment instead of assuming the burner had a core to itself: the tests pass on a loaded
machine and beside other tests."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


@contextmanager
def spinner(*args: str, code: str = "while True: pass") -> Iterator[subprocess.Popen[bytes]]:
    """A process that burns one core (``while True: pass``, or the Python ``code`` given: a duty cycle), once it has
    run; killed at the end."""
    proc = subprocess.Popen([sys.executable, "-c", code, *args])
    try:
        wait_cpu(proc.pid, 0.05)
        yield proc
    finally:
        proc.kill()
        proc.wait()


def wait_cpu(pid: int, seconds: float, timeout: float = 30.0) -> None:
    """Until ``pid`` has used ``seconds`` more CPU time than now (however loaded the machine is)."""
    start, deadline = cpu_seconds(pid), time.monotonic() + timeout
    while cpu_seconds(pid) - start < seconds:
        if time.monotonic() > deadline:
            raise AssertionError(f"process {pid} used less than {seconds} s of CPU in {timeout} s")
        time.sleep(0.01)


class Share:
    """The CPU % ``pid`` used between making this and ``percent()``: the truth a measured rate is held to."""

    def __init__(self, pid: int) -> None:
        self.pid, self.at, self.cpu = pid, time.monotonic(), cpu_seconds(pid)

    def percent(self) -> float:
        return 100.0 * (cpu_seconds(self.pid) - self.cpu) / (time.monotonic() - self.at)
