"""Servers for the tests: a free port, a real ``python -m app`` (gunicorn, the simulated backend by default)
started and stopped as a user would, and the wait for its first snapshot."""

from __future__ import annotations

import atexit
import itertools
import logging
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parent.parent.parent


def _ports() -> Iterator[int]:
    """This process's ports to hand out: below the kernel's ephemeral range, from which every outgoing connection
    takes its local port (a port from that range, free when chosen, can be a client's before the server binds it),
    a slice of its own for each xdist worker, walked from a random start so that two processes of one slice (a test
    and a benchmark it starts) seldom meet."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    first, last = (20000, low) if low >= 24000 else (low // 2, low)  # a range moved low leaves its lower half
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    slices = 8
    width = (last - first) // slices
    start = first + (int(worker) % slices if worker.isdigit() else 0) * width
    offset = random.randrange(width)
    for step in itertools.count():
        yield start + (offset + step) % width


_NEXT_PORT = _ports()


def free_port() -> int:
    """A port for a test's server, free on every address now (the image's server, given a token, listens on all of
    them; a port free on loopback alone can be another address's), and never one that an outgoing connection could
    take before the server binds it (`_ports`)."""
    for _ in range(2000):
        port = next(_NEXT_PORT)
        with socket.socket() as probe:
            try:
                probe.bind(("", port))
            except OSError:
                continue  # in use on some address, or lingering: the next one
            return port
    raise RuntimeError("no free port below the ephemeral range after 2,000 tries")


# each server's history in a folder of its own, all of them in one folder removed when the test process exits
_SCRATCH = tempfile.mkdtemp(prefix="fanwhy-tests-")
atexit.register(shutil.rmtree, _SCRATCH, True)


def start_server(port: int, *args: str, output: Any = subprocess.PIPE, **env: str) -> subprocess.Popen:
    """``python -m app`` on ``port``; its log to ``output`` (a pipe read at ``stop``, or an open file). Its history
    is in a folder of its own unless ``FANWHY_DB`` is given."""
    scratch = tempfile.mkdtemp(dir=_SCRATCH)
    defaults = {"FANWHY_BACKEND": "simulated", "FANWHY_SIM_GPUS": "1", "FANWHY_SIM_PEAK": "0.2",
                "FANWHY_INTERVAL": "0.5", "FANWHY_DB": os.path.join(scratch, "history.db")}
    full_env = {**os.environ, **defaults, **env, "FANWHY_PORT": str(port), "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "app", *args], cwd=ROOT, env=full_env, stdout=output,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def asking(deadline: float) -> float:
    """The read timeout of one request made while waiting until ``deadline``: what is left of the wait (a server
    still starting on a busy machine may take seconds to answer its first request; that is waiting, not failing)."""
    return max(0.5, deadline - time.monotonic())


def wait_healthy(url: str, timeout: float = 30, headers: dict[str, str] | None = None) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            response = requests.get(f"{url}/api/health", timeout=asking(deadline), headers=headers)
            if response.status_code == 200 and response.json()["tick"]:
                return response.json()
        except (requests.ConnectionError, requests.Timeout, KeyError):
            pass
        time.sleep(0.2)
    raise AssertionError("server did not become healthy")


def stop(proc: subprocess.Popen) -> str:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    if proc.stdout is None:
        return ""
    with proc.stdout:
        return proc.stdout.read()


def wait_for(predicate: Any, timeout: float = 10.0, every: float = 0.02) -> None:
    """Until ``predicate()`` is true, asked every ``every`` seconds; an AssertionError past ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(every)
    raise AssertionError("condition not met in time")


@contextmanager
def served(**env: str) -> Iterator[str]:
    """A real server (``start_server``) with ``env``, healthy: its URL; stopped afterwards."""
    port = free_port()
    proc = start_server(port, **env)
    url = f"http://127.0.0.1:{port}"
    token = env.get("FANWHY_TOKEN")
    try:
        wait_healthy(url, headers={"Authorization": f"Bearer {token}"} if token else None)
        yield url
    finally:
        stop(proc)


class Probe(threading.Thread):
    """``/api/health`` every 50 ms; each answer's time."""

    def __init__(self, url: str):
        super().__init__(daemon=True)
        self.url = url
        self.times: list[float] = []
        self.failures: list[str] = []
        self.done = threading.Event()

    def run(self) -> None:
        with requests.Session() as session:
            while not self.done.is_set():
                started = time.monotonic()
                try:
                    session.get(f"{self.url}/api/health", timeout=30).raise_for_status()
                except requests.RequestException as error:
                    self.failures.append(str(error))
                self.times.append(time.monotonic() - started)
                self.done.wait(0.05)

    def p99(self) -> float:
        ordered = sorted(self.times)
        return ordered[int(0.99 * (len(ordered) - 1))]


def engineio_log(name: str, handler: logging.Handler) -> logging.Logger:
    """A logger of its own for a test's Socket.IO clients' Engine.IO layer (``engineio_logger=``), at ``handler``'s
    level, heard only by ``handler``: what it logs (a ping received, a failed request) is the test's to read."""
    logger = logging.getLogger(f"tests.engineio.{name}")
    logger.setLevel(handler.level)
    logger.propagate = False
    logger.addHandler(handler)
    return logger
