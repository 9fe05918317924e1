"""NVML's opening begun as soon as a terminal command knows it will collect (``snapshot``, ``top``, ``run``).

``nvmlInit`` is the driver's own time, during which a thread holds no
GIL: on a thread started before the collector's imports it overlaps with them. pynvml itself is imported by the
caller, before the thread starts: an import is Python's work under the GIL, and beside another thread's imports it
made both slower (each waits for the GIL after every system call the other lets it go for).
``NvidiaBackend.open`` then takes the module from here (``taken``): its own ``nvmlInit`` finds NVML open and only
counts one more user, and ``release`` gives back the early one, so that the backend's ``nvmlShutdown`` (a close, a
re-initialisation after a GPU error) still shuts NVML down. An early failure is not kept: the backend's own call
fails again and reports it as it always does.

Kept to the standard library's ``threading``: this module is imported before anything else of the collector.
"""

from __future__ import annotations

import contextlib
import threading
from types import ModuleType

_lock = threading.Lock()
_thread: threading.Thread | None = None
_module: ModuleType | None = None  # pynvml, once imported
_opened = False  # the early nvmlInit succeeded and has not been released


def _open(pynvml: ModuleType) -> None:
    global _opened
    try:
        pynvml.nvmlInit()
    except Exception:  # NVMLError, OSError: the backend's own call meets it again and says it
        return
    _opened = True


def start() -> None:
    """Import pynvml here, then begin ``nvmlInit`` on a daemon thread (once per process; a no-op when already
    begun, or where pynvml is not installed)."""
    global _thread, _module
    with _lock:
        if _thread is not None:
            return
        try:
            import pynvml  # nvidia-ml-py
        except ImportError:
            return  # taken() then says None, as where nothing was begun
        _module = pynvml
        _thread = threading.Thread(target=_open, args=(pynvml,), name="fanwhy-nvml-early", daemon=True)
        _thread.start()


def taken() -> ModuleType | None:
    """pynvml as the early opening left it (waiting for it to end: a backend opening on a thread of its own is
    watched by its caller's deadline), or None where no early opening was begun or pynvml is not installed."""
    thread = _thread
    if thread is None:
        return None
    thread.join()
    return _module


def release() -> None:
    """Give back the early ``nvmlInit`` once the backend holds its own (a no-op when there is none)."""
    global _opened
    with _lock:
        if not _opened or _module is None:
            return
        _opened = False
    with contextlib.suppress(Exception):  # one user fewer: NVML stays open for the backend that opened it after
        _module.nvmlShutdown()
