"""FanWhy's threads carry their name to the OS (``top -H``, ``/proc/PID/task/TID/comm``)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from app.core.threads import each_on_a_thread, spawn


def test_a_spawned_thread_is_named_for_the_os_and_for_python() -> None:
    seen: dict[str, object] = {}
    release = threading.Event()

    def body(tag: str) -> None:
        seen["tag"] = tag
        seen["comm"] = Path(f"/proc/self/task/{threading.get_native_id()}/comm").read_text().strip()
        release.wait(5)

    thread = spawn(body, "fanwhy-a-very-long-name", "given")
    for _ in range(100):
        if "comm" in seen:
            break
        threading.Event().wait(0.02)
    release.set()
    thread.join(5)
    assert thread.name == "fanwhy-a-very-long-name" and thread.daemon
    assert seen == {"tag": "given", "comm": "fanwhy-a-very-l"}  # the kernel keeps 15 bytes


def test_each_on_a_thread_keeps_the_order_runs_side_by_side_and_hands_back_an_error() -> None:
    barrier = threading.Barrier(4, timeout=10)  # breaks unless the four run at once

    def square(n: int) -> int:
        barrier.wait()
        return n * n

    assert each_on_a_thread(square, [1, 2, 3, 4], "fanwhy-test") == [1, 4, 9, 16]

    def fails_on_two(n: int) -> int:
        if n == 2:
            raise KeyError(n)
        return n

    with pytest.raises(KeyError):
        each_on_a_thread(fails_on_two, [1, 2, 3], "fanwhy-test")
    assert each_on_a_thread(lambda n: threading.current_thread(), [0], "x") == [threading.current_thread()]
