"""A sleeping Python child that is really running when a test looks at it.

Just after ``Popen`` returns, the child may not have exec'd yet (``/proc/PID/cmdline`` is still the test's own) or
has exec'd but not started its interpreter (the kernel's resident-set count, summed lazily across CPUs since Linux
6.2, can still read 0 pages). ``sleeping`` waits until the child says so itself."""

from __future__ import annotations

import select
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

STARTUP_S = 30  # a Python interpreter's start on a loaded 2-core machine, with room

CODE = "import sys, time; print('up', flush=True); sys.stdout.close(); time.sleep({seconds})"


def start_sleeping(*args: str, seconds: float = 60) -> subprocess.Popen[bytes]:
    """``python -c <sleep> *args``, returned once its interpreter is up; the caller kills and waits for it."""
    proc = subprocess.Popen([sys.executable, "-c", CODE.format(seconds=seconds), *args], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    with proc.stdout:
        ready, _, _ = select.select([proc.stdout], [], [], STARTUP_S)
        if not ready or proc.stdout.readline() != b"up\n":
            proc.kill()
            proc.wait()
            raise AssertionError(f"a sleeping child did not start within {STARTUP_S} s")
    return proc


@contextmanager
def sleeping(*args: str, seconds: float = 60) -> Iterator[subprocess.Popen[bytes]]:
    """``start_sleeping``, killed at the end."""
    proc = start_sleeping(*args, seconds=seconds)
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()
