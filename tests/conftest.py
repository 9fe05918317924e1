"""Fixture chain (CONTRIBUTING.md): settings -> selection -> app -> client; live_server -> socket client."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import BaseWSGIServer, make_server

from app import create_app
from app.collect.config import Settings
from app.vendors.factory import Selection
from app.vendors.nvidia import NvidiaBackend
from tests.fakes.fake_nvml import FakeNvml, scenario
from tests.support.receivers import Receiver

# The tiers (markers; CONTRIBUTING.md says how to run each). A test's tier is read here, once, so that no file needs
# to remember it: tests/gpu is gpu; the files below and every browser test are system (a browser, an image, a real
# Prometheus or Redis, a built wheel, an attack, and tests marked ``load``: many clients or connections over many
# seconds); a test that serves the app on loopback (the fixtures below) or a
# file that starts real servers or processes is integration; the rest is unit.
SYSTEM_FILES = frozenset({"test_page.py", "test_newcomer.py", "test_reverse_proxy.py", "test_image.py", "test_fleet.py",
                          "test_signin.py", "test_top.py",
                          "test_packaging.py",
                          "test_exhaustion.py", "test_kubernetes_manifests.py", "test_bounded_commands.py"})
INTEGRATION_FILES = frozenset({"test_server_process.py", "test_bodies.py", "test_refusals.py", "test_receipt.py",
                               "test_sessions.py", "test_websocket_writes.py", "test_cli.py", "test_inputs.py",
                               "test_gate.py",
                               "test_hardening.py", "test_realtime.py", "test_history_faults.py", "test_notify.py",
                               "test_processes.py", "test_host.py", "test_attribution.py", "test_metrics.py",
                               "test_fans.py", "test_fan_verdict.py", "test_fan_views.py",  # BMC thread, history
                               "test_fan_sources.py"})
SERVING_FIXTURES = frozenset({"serve", "live_server", "server"})


def tier_of(item: pytest.Item) -> str:
    path = Path(str(item.path))
    if "gpu" in path.parent.parts[-1:]:
        return "gpu"
    if path.name in SYSTEM_FILES or any(item.get_closest_marker(m) is not None for m in ("browser", "load")):
        return "system"
    if path.name in INTEGRATION_FILES or SERVING_FIXTURES & set(getattr(item, "fixturenames", ())):
        return "integration"
    return "unit"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        tier = tier_of(item)
        if tier != "gpu":  # tests/gpu mark themselves
            item.add_marker(getattr(pytest.mark, tier))


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
