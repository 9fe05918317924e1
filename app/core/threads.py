"""FanWhy's background threads: daemon threads whose name the OS sees too.

Python names a thread for itself only; ``top -H``, ``ps -L`` and ``/proc/PID/task/TID/comm`` show the process's
name for every thread. Each thread FanWhy starts sets its OS name (15 bytes at most, the kernel's limit), so an
operator, and ``benchmarks/server_cpu.py``, can tell the collector from the history writer.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from collections.abc import Callable
from typing import Any

_PR_SET_NAME = 15


def _libc() -> Any:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    except OSError:  # no C library to ask (not Linux): names stay Python's own
        return None


_LIBC = _libc()


def os_name(name: str) -> None:
    """Name the calling thread for the OS (the first 15 bytes); a no-op where the OS cannot be asked."""
    if _LIBC is not None and hasattr(_LIBC, "prctl"):
        _LIBC.prctl(_PR_SET_NAME, ctypes.c_char_p(name.encode()[:15]), 0, 0, 0)


def spawn(target: Callable[..., object], name: str, *args: object) -> threading.Thread:
    """Start a daemon thread named ``name`` (for Python and the OS) running ``target(*args)``."""

    def run() -> None:
        os_name(name)
        target(*args)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread
