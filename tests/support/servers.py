"""Servers for the tests: a free loopback port, a real ``python -m app`` (gunicorn, the simulated backend by default)
started and stopped as a user would, and the wait for its first snapshot."""

from __future__ import annotations

import atexit
import logging
import os
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
