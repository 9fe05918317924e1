"""Fixture chain (CONTRIBUTING.md): settings -> selection -> app -> client; live_server -> socket client."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import BaseWSGIServer, make_server

from app import create_app
from app.collect.settings import Settings
from app.vendors.factory import Selection
from app.vendors.nvidia import NvidiaBackend
from tests.fakes.fake_nvml import FakeNvml, scenario
from tests.support.receivers import Receiver

# The tiers (markers; CONTRIBUTING.md says how to run each): a test's tier is its folder, tests/unit,
# tests/integration, tests/system or tests/gpu. Unit: no process started, no socket opened (enforced below);
# integration: the app served on loopback, real processes and threads; system: a browser, an image, a real
# Prometheus, nginx or Redis, a built wheel, an attack, many clients over many seconds; gpu: a real GPU.
TIER_FOLDERS = ("unit", "integration", "system", "gpu")


def tier_of(item: pytest.Item) -> str:
    path = Path(str(item.path)).resolve()
    tests = Path(__file__).resolve().parent
    folder = path.relative_to(tests).parts[0] if path.is_relative_to(tests) else ""
    assert folder in TIER_FOLDERS, f"{item.nodeid}: a test lives in one of tests/{{{','.join(TIER_FOLDERS)}}}/"
    return folder


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        tier = tier_of(item)
        if tier != "gpu":  # tests/gpu mark themselves
            item.add_marker(getattr(pytest.mark, tier))
    wrong = tier_errors(items)
    if wrong:
        raise pytest.UsageError("each test is in exactly one tier, its folder's:\n" + "\n".join(wrong[:20]))


def tier_errors(items: Sequence[Any]) -> list[str]:
    """The tests whose tier markers are not exactly their folder's (one marked with a second tier, or a GPU test
    that forgot its mark): checked on every collection, so every run checks all it runs."""
    wrong = []
    for item in items:
        marked = [tier for tier in TIER_FOLDERS if item.get_closest_marker(tier) is not None]
        if marked != [tier_of(item)]:
            wrong.append(f"{item.nodeid}: marked {marked or 'with no tier'}, in tests/{tier_of(item)}/")
    return wrong


class NotInAUnitTest(AssertionError):
    """A unit test started a process or opened a socket: it belongs in tests/integration."""


@pytest.fixture(autouse=True)
def _unit_tests_start_no_process_and_open_no_socket(request: pytest.FixtureRequest,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    if tier_of(request.node) != "unit":
        return

    def refuse(what: str) -> Callable[..., Any]:
        def refused(*args: Any, **kwargs: Any) -> Any:
            raise NotInAUnitTest(f"a unit test may not {what}: move it to tests/integration")
        return refused

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse("start a process"))
    monkeypatch.setattr(os, "fork", refuse("fork"))
    monkeypatch.setattr(socket.socket, "connect", refuse("open a socket (connect)"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("open a socket (connect)"))
    monkeypatch.setattr(socket.socket, "bind", refuse("open a socket (bind)"))


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """An HTTP receiver on loopback for notifications (tests/support/receivers.py)."""
    hook = Receiver()
    yield hook
    hook.close()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Fast ticks and short alert holds, so live tests take a second, not a minute; history in tmp_path."""
    return Settings(interval_s=0.1, alert_hold_s=0.3, alert_hysteresis_percent=5.0, top_cpu_processes=3,
                    min_tick_gap_s=0.05, db=str(tmp_path / "history.db"))


@pytest.fixture
def fake_nvml() -> FakeNvml:
    """Two H200s as measured under load (GPU 1 runs a matmul; GPU 0 idles)."""
    return scenario("h200x2_load")


def nvidia_selection(fake: FakeNvml) -> Selection:
    backend = NvidiaBackend(nvml=fake)
    backend.open()
    return Selection(backend=backend, skipped={})


@pytest.fixture
def make_app(settings: Settings) -> Iterator[Callable[..., Any]]:
    apps = []

    def build(selection: Selection | None = None, start: bool = True, **overrides: Any) -> Any:
        app = create_app({"SETTINGS": replace(settings, **overrides), "SELECTION": selection,
                          "START": start, "TESTING": True})
        apps.append(app)
        return app

    yield build
    for app in apps:
        app.extensions["fanwhy"].stop()


@pytest.fixture
def app(make_app: Callable[..., Any], fake_nvml: FakeNvml) -> Any:
    app = make_app(nvidia_selection(fake_nvml), start=False)
    app.extensions["fanwhy"].collector.collect()
    return app


@pytest.fixture
def client(app: Any) -> Any:
    return app.test_client()


@dataclass
class LiveServer:
    app: Any
    url: str
    server: BaseWSGIServer

    @property
    def collector(self) -> Any:
        return self.app.extensions["fanwhy"].collector


@pytest.fixture
def serve() -> Iterator[Callable[..., LiveServer]]:
    """Serve an app for real on 127.0.0.1 (or another loopback ``address``; a free port) in a thread; stopped after
    the test."""
    servers: list[BaseWSGIServer] = []

    def start(app: Any, address: str = "127.0.0.1") -> LiveServer:
        server = make_server(address, 0, app, threaded=True)
        servers.append(server)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        live = LiveServer(app=app, url=f"http://{address}:{server.server_port}", server=server)
        if live.collector.running:  # ready means: the first snapshot is there for the first client
            assert live.collector.wait_frame(0, timeout=10), "no first snapshot within 10 s"
        return live

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def live_server(make_app: Callable[..., Any], fake_nvml: FakeNvml, serve: Callable[[Any], LiveServer]) -> LiveServer:
    return serve(make_app(nvidia_selection(fake_nvml)))
