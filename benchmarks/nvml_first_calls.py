"""Which NVML calls make a fresh process's first backend open and first sample slow (they are fast afterwards).

Wraps every ``nvml*`` function of pynvml with a timer, opens the NVIDIA backend, samples twice, and prints the
slowest calls of the first open and sample. Run on a GPU machine: ``python -m benchmarks.nvml_first_calls``.
"""

from __future__ import annotations

import collections
import sys
import time
from typing import Any, Callable

import pynvml


def main() -> int:
    spent: dict[str, list[float]] = collections.defaultdict(list)

    def timed(name: str, inner: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[name].append((time.perf_counter() - started) * 1000)
        return call

    for name in dir(pynvml):
        if name.startswith("nvml") and callable(getattr(pynvml, name)):
            setattr(pynvml, name, timed(name, getattr(pynvml, name)))
    started = time.perf_counter()
    pynvml.nvmlInit()
    print(f"nvmlInit {(time.perf_counter() - started) * 1000:.1f} ms")
    from app.vendors.nvidia import NvidiaBackend

    backend = NvidiaBackend(watch_xid=False)
    for label, step in (("open", "open"), ("first sample", "sample"), ("first processes", "processes"),
                        ("second sample", "sample"), ("second processes", "processes")):
        spent.clear()
        started = time.perf_counter()
        getattr(backend, step)()
        total = (time.perf_counter() - started) * 1000
        calls = sorted(((sum(v), len(v), k) for k, v in spent.items()), reverse=True)
        print(f"{label}: {total:.1f} ms; NVML {sum(c[0] for c in calls):.1f} ms in {sum(c[1] for c in calls)} calls;"
              " slowest: " + ", ".join(f"{k} {t:.1f} ms x{n}" for t, n, k in calls[:6]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
