"""Shared by the benchmarks: the CPU a running collector thread uses, a real server to measure, reports."""

from __future__ import annotations

import json
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import psutil

ROOT = Path(__file__).resolve().parent.parent


def collector_cpu(collector: Any, seconds: float) -> tuple[float, float]:
    """Run ``collector``'s thread at a 1 s interval for ``seconds``: (% of one core, RSS in MiB).
    Measured on this process, so run nothing else in it meanwhile."""
    collector.interval_s = 1.0
    me = psutil.Process()
    before = me.cpu_times()
    collector.start()
    time.sleep(seconds)
    collector.stop(close_backend=False)
    after = me.cpu_times()
    used = (after.user - before.user) + (after.system - before.system)
    return round(100 * used / seconds, 3), round(me.memory_info().rss / 2**20, 1)


@contextmanager
def running_server(env: dict[str, str], python: str = sys.executable) -> Iterator[tuple[subprocess.Popen, str]]:
    """`python -m app` (gunicorn) on a free loopback port with ``env`` added to ours (history in a temporary
    file unless FANWHY_DB is set): yields (its process, its URL) once /api/health reports a first tick,
    and stops its process group afterwards. Another ``python`` runs in its own environment, without our
    PYTHONPATH."""
    import requests

    with socket.socket() as reserved:
        reserved.bind(("127.0.0.1", 0))
        port = reserved.getsockname()[1]
        full = {**os.environ, "FANWHY_PORT": str(port),
                "FANWHY_DB": os.environ.get("FANWHY_DB") or os.path.join(tempfile.mkdtemp(), "history.db"), **env}
        if python != sys.executable:
            full.pop("PYTHONPATH", None)
        server = subprocess.Popen([python, "-m", "app"], cwd=ROOT, env=full, start_new_session=True,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"Bearer {env['FANWHY_TOKEN']}"} if env.get("FANWHY_TOKEN") else {}
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"{url}/api/health", headers=auth, timeout=2).json().get("tick"):
                    break
            except (requests.ConnectionError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise SystemExit("the server did not start")
            time.sleep(0.3)
        yield server, url
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def machine() -> str:
    return f"{platform.node()} {psutil.cpu_count()} CPUs, Python {platform.python_version()}"


def report(result: dict[str, Any], out: str = "") -> None:
    """Print ``result`` as JSON, and write it to ``out`` when given."""
    text = json.dumps(result, indent=2)
    print(text)
    save(text, out)


def save(text: str, out: str) -> None:
    """Write a benchmark's raw result to ``out`` (a path the user gives; its folders made). Raw results stay out
    of the repository (``out/`` at its root is ignored by git); docs/PERFORMANCE.md quotes figures and commands."""
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text if text.endswith("\n") else text + "\n")
