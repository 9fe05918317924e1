"""The Docker Engine API client against a fake API on a unix socket: names, GPU access, timeouts."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from app.attribution.docker import DockerClient
from tests.fakes.docker_api import FakeDockerApi, container

A, B, C, D = ("a" * 64, "b" * 64, "c" * 64, "d" * 64)


def containers() -> list:
    return [container(A, "trainer", "pytorch/pytorch:2.5", gpu="device-request"),
            container(B, "ollama", "ollama/ollama", gpu="runtime"),
            container(C, "notebook", "jupyter/base", gpu="env"),
            container(D, "web", "nginx:1.27")]


def test_names_images_and_gpu_access(tmp_path: Path) -> None:
    sock = tmp_path / "docker.sock"
    with FakeDockerApi(sock, containers()):
        found = DockerClient(str(sock)).containers()
    assert {c.name: (c.image, c.gpu_access) for c in found.values()} == {
        "trainer": ("pytorch/pytorch:2.5", True), "ollama": ("ollama/ollama", True),
        "notebook": ("jupyter/base", True), "web": ("nginx:1.27", False)}


def test_cached_between_ticks_and_inspected_once(tmp_path: Path) -> None:
    sock = tmp_path / "docker.sock"
    now = [0.0]
    with FakeDockerApi(sock, containers()) as api:
        client = DockerClient(str(sock), ttl_s=10, clock=lambda: now[0])
        for _ in range(5):
            client.containers()
        assert api.requests.count("/containers/json") == 1
        now[0] = 11
        client.containers()
        assert api.requests.count("/containers/json") == 2
        assert api.requests.count(f"/containers/{A}/json") == 1  # inspect results live as long as the container


def test_a_missing_socket_is_not_an_error_for_the_collector(tmp_path: Path) -> None:
    client = DockerClient(str(tmp_path / "nope.sock"))
    assert client.containers() == {}
    assert client.error is not None and "nope.sock" in client.error


def test_an_unavailable_docker_is_logged_once_and_again_on_change(tmp_path: Path, caplog: Any) -> None:
    now = [0.0]
    client = DockerClient(str(tmp_path / "nope.sock"), retry_s=30, clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="app.attribution.docker"):
        for _ in range(10):  # five minutes of retries every 30 s
            client.containers()
            now[0] += 31
        assert [r.getMessage() for r in caplog.records].count(
            f"docker API unavailable ({client.error}); container names fall back to short ids") == 1
        with FakeDockerApi(tmp_path / "nope.sock", containers()):
            client.containers()
        assert client.error is None and caplog.records[-1].getMessage().startswith("docker API available again")
        now[0] += 31
        client.containers()
        assert sum(r.getMessage().startswith("docker API unavailable") for r in caplog.records) == 2  # a new reason


def test_a_slow_daemon_costs_one_timeout_then_is_retried_later(tmp_path: Path) -> None:
    sock = tmp_path / "docker.sock"
    now = [0.0]
    with FakeDockerApi(sock, containers(), delay_s=2.0) as api:
        client = DockerClient(str(sock), timeout_s=0.2, retry_s=30, clock=lambda: now[0])
        started = time.monotonic()
        assert client.containers() == {}
        assert time.monotonic() - started < 1.0
        assert "timed out" in (client.error or "")
        deadline = time.monotonic() + 30  # the server's thread records the request on its own time (a busy machine)
        while not api.requests and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(api.requests) == 1
        client.containers()  # not asked again before retry_s ...
        api.delay_s = 0.0
        now[0] = 31
        assert len(client.containers()) == 4 and client.error is None
        # ... so two listings in all: the one that timed out and the retry (a request from the call in between
        # would have been recorded before the retry's answer came back)
        assert sum(r.startswith("/containers/json") for r in api.requests) == 2
