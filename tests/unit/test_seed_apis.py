"""The seeds' APIs: the Fleet Manager's JSON, GPU picking, and the OpenAPI document."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from app.core.model import GpuSample, HostSample
from app.core.snapshot import BackendInfo, CollectorTiming, Snapshot
from app.web.picking import pick, score, world_size
from app.web.services import services
from tests.conftest import nvidia_selection
from tests.fakes.fake_nvml import scenario
from tests.support.servers import wait_for

FIXTURES = Path(__file__).parent.parent / "fixtures"
GIB = 1 << 30


def test_fleet_manager_format_field_by_field(client: Any) -> None:
    body = client.get("/api/v1/monitoring/gpu-metrics").get_json()
    example = json.loads((FIXTURES / "seed" / "fleet-manager-gpu-metrics.json").read_text())
    assert set(body) == set(example)
    assert body["timestamp"].endswith("Z") and "T" in body["timestamp"]
    for ours, theirs in zip(body["gpus"], example["gpus"], strict=True):
        assert set(ours) == set(theirs)
        assert set(ours["memory"]) == set(theirs["memory"]) and set(ours["clock_speeds"]) == set(theirs["clock_speeds"])
        for key in ("id", "name", "uuid", "utilization", "temperature"):
            assert ours[key] == theirs[key], key
        assert ours["memory"] == theirs["memory"]
        assert ours["power_usage"] == pytest.approx(theirs["power_usage"])
        assert ours["clock_speeds"] == theirs["clock_speeds"]


def gpu(index: int, used_gb: float, total_gb: float, util: float, error: str | None = None) -> GpuSample:
    return GpuSample(vendor="nvidia", index=index, uuid=f"GPU-{index}", name="T", memory_used_bytes=int(used_gb * GIB),
                     memory_total_bytes=int(total_gb * GIB), utilization_percent=util, error=error)


def snap(*gpus: GpuSample) -> Snapshot:
    host = HostSample(hostname="h", cpu_percent=0, cpu_count=1, load_average=None, memory_used_bytes=0,
                      memory_total_bytes=1)
    return Snapshot(timestamp=1.0, backend=BackendInfo(name="t"), host=host, gpus=gpus, processes=(),
                    timing=CollectorTiming(0, 0, 0, 0, 1, 1))


def test_ranking_arithmetic() -> None:
    assert score(gpu(0, 20, 80, 50)) == pytest.approx(0.6 * 0.75 + 0.4 * 0.5)  # 0.65 (free = total - used here)
    assert score(gpu(0, 0, 80, 0)) == pytest.approx(1.0)
    assert score(gpu(0, 80, 80, 100)) == pytest.approx(0.0)
    assert score(gpu(0, 1, 80, 0, error="lost")) is None
    chosen, why = pick(snap(gpu(0, 20, 80, 50), gpu(1, 0, 80, 90), gpu(2, 70, 80, 0)), count=2)
    # GPU 1: 0.6 + 0.04 = 0.64; GPU 0: 0.65; GPU 2: 0.075 + 0.4 = 0.475
    assert why is None and [(c.gpu.index, round(c.score, 3)) for c in chosen] == [(0, 0.65), (1, 0.64)]
    chosen, why = pick(snap(gpu(0, 20, 80, 50), gpu(1, 0, 80, 90)), count=1, min_memory_mb=70 * 1024)
    assert [c.gpu.index for c in chosen] == [1]
    chosen, why = pick(snap(gpu(0, 20, 80, 50), gpu(1, 0, 80, 90)), count=2, max_utilization=60)
    assert chosen == [] and "1 of 2 GPUs fit, 2 needed" in (why or "") and "GPU 1: 90 % busy > 60 %" in (why or "")


def test_world_size() -> None:
    assert world_size(tp=2, pp=2, dp=2) == 8
    assert world_size(tp=4, cp=2, dp=1) == 8
    assert world_size(tp=1, pp=1, dp=3, cp=2, dcp=4) == 4


def test_available_endpoint(client: Any) -> None:
    body = client.get("/api/gpu/available?count=2").get_json()
    assert body["gpu_ids"] == [0, 1] and body["cuda_visible_devices"] == "0,1"
    assert body["gpus"][0]["score"] > body["gpus"][1]["score"]
    one = client.get("/api/gpu/available?max_utilization=50").get_json()
    assert one["gpu_ids"] == [0]
    busy = client.get("/api/gpu/available?count=2&max_utilization=50")
    assert busy.status_code == 409
    assert "GPU 1: 98 % busy > 50 %" in busy.get_json()["detail"]["reason"]
    assert client.get("/api/gpu/available?tp=2").get_json()["count"] == 2
    assert client.get("/api/gpu/available?tp=2&dp=2").status_code == 409  # world size 4 > 2 GPUs
    for url in ("/api/gpu/available?count=0", "/api/gpu/available?count=2&tp=2", "/api/gpu/available?wait=999",
                "/api/gpu/available?max_utilization=101", "/api/gpu/available?min_memory_mb=-1",
                "/api/gpu/available?gpus=1"):
        assert client.get(url).status_code == 400, url


def test_available_waits_until_gpus_are_free(make_app: Any) -> None:
    fake = scenario("h200x2_load")
    app = make_app(nvidia_selection(fake))
    app.extensions["fanwhy"].collector.wait_frame(0, timeout=5)
    client = app.test_client()
    threading.Timer(0.5, lambda: fake.set(1, "utilization", {"gpu": 5, "memory": 1})).start()
    started = time.monotonic()
    response = client.get("/api/gpu/available?count=2&max_utilization=50&wait=10")
    assert response.status_code == 200 and response.get_json()["gpu_ids"] == [0, 1]
    assert 0.4 < time.monotonic() - started < 5
    started = time.monotonic()
    assert client.get("/api/gpu/available?count=2&max_utilization=0&wait=0.5").status_code == 409
    assert time.monotonic() - started >= 0.5
    started = time.monotonic()  # more GPUs than the machine has: waiting cannot help, so it answers at once
    answer = client.get("/api/gpu/available?count=3&wait=300")
    assert answer.status_code == 409 and "2 of 2 GPUs fit, 3 needed" in answer.get_json()["detail"]["reason"]
    assert time.monotonic() - started < 1


def test_wait_requests_are_capped_per_client_and_in_all(make_app: Any) -> None:
    from app.web.picking import WaitSlots

    slots = WaitSlots(per_client=2, in_all=3)
    assert slots.take("a") and slots.take("a") and not slots.take("a")
    assert slots.take("b") and not slots.take("c")  # 3 in all
    slots.give_back("a")
    assert slots.take("c") and not slots.take("c")
    app = make_app(nvidia_selection(scenario("h200x2_load")))
    app.extensions["fanwhy"].collector.wait_frame(0, timeout=5)
    services(app).wait_slots = WaitSlots(per_client=1, in_all=1)
    client = app.test_client()
    waiter = threading.Thread(target=client.get, args=("/api/gpu/available?count=2&max_utilization=0&wait=2",))
    waiter.start()
    slots = services(app).wait_slots
    wait_for(lambda: slots.held() == 1)  # the first waiter holds the one slot
    refused = client.get("/api/gpu/available?count=2&max_utilization=0&wait=2")
    assert refused.status_code == 429 and refused.get_json()["error"] == "too many waiting requests"
    waiter.join()
    assert client.get("/api/gpu/available?count=2&max_utilization=0&wait=0.3").status_code == 409  # slot freed


def test_openapi_describes_every_endpoint(app: Any, client: Any) -> None:
    spec = client.get("/api/openapi.json").get_json()
    assert spec["openapi"].startswith("3.")
    documented = set(spec["paths"])
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api") or rule.rule == "/metrics":
            path = rule.rule.replace("<", "{").replace(">", "}")
            assert path in documented, path
            for method in rule.methods - {"HEAD", "OPTIONS"}:
                assert method.lower() in spec["paths"][path], (path, method)
