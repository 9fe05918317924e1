"""FanWhy's threads carry their name to the OS (``top -H``, ``/proc/PID/task/TID/comm``)."""

from __future__ import annotations

import threading
from pathlib import Path

from app.core.threads import spawn


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
