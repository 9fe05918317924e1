"""REST: shapes of each endpoint, and bad input -> 400/404 JSON, never a traceback."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.fake_nvml import H200_LOAD_PID


def test_metrics_has_every_gpu_field_and_the_processes(client: Any) -> None:
    body = client.get("/api/gpu/metrics").get_json()
    assert body["backend"]["name"] == "nvidia"
    assert [g["index"] for g in body["gpus"]] == [0, 1]
    busy = body["gpus"][1]
    for key in ("uuid", "name", "utilization_percent", "memory_used_bytes", "memory_total_bytes", "temperature_c",
                "temperature_slowdown_c", "temperature_shutdown_c", "fan_speed_percent", "power_w", "power_limit_w",
                "clock_sm_mhz", "clock_memory_mhz", "pstate", "throttle_reasons", "energy_j", "mig_mode",
                "memory_percent", "unsupported", "error"):
        assert key in busy, key
    assert busy["fan_speed_percent"] is None
    assert "passively cooled" in busy["unsupported"]["fan_speed_percent"]
    assert busy["throttle_reasons"] == ["sw_power_cap"]
    gpu_procs = [p for p in body["processes"] if p["gpus"]]
    assert [p["pid"] for p in gpu_procs] == [H200_LOAD_PID]
    assert gpu_procs[0]["gpus"][0] == {"gpu_index": 1, "memory_bytes": 7052722176, "sm_percent": 98.0,
                                       "encoder_percent": 0.0, "decoder_percent": 0.0, "kind": "compute",
                                       "memory_method": "reported"}
    assert body["ledger"][0]["gpu_index"] == 0 and body["ledger"][1]["processes_w"] == 693.48  # alone; no idle seen
    assert body["ledger"][1]["by_process"] == [[H200_LOAD_PID, 693.48]]
    assert body["timing"]["tick"] == 1 and body["timing"]["total_ms"] >= 0
    assert "alert_events" not in body


def test_metrics_for_one_gpu(client: Any) -> None:
    body = client.get("/api/gpu/metrics?gpu=1").get_json()
    assert [g["index"] for g in body["gpus"]] == [1]
    assert all(any(u["gpu_index"] == 1 for u in p["gpus"]) for p in body["processes"])


def test_summary_headlines(client: Any) -> None:
    body = client.get("/api/gpu/summary").get_json()
    assert body["backend"] == "nvidia" and body["gpu_count"] == 2 and body["no_gpu_reason"] is None
    gpu = body["gpus"][1]
    assert gpu["utilization_percent"] == 98.0 and gpu["memory_percent"] == pytest.approx(4.68, abs=0.01)
    assert gpu["fan_speed_percent"] is None and "fan_speed_percent" in gpu["unsupported"]
    assert body["top_processes"][0]["pid"] == H200_LOAD_PID
    assert body["alerts"] == []
    assert set(body["host"]) >= {"cpu_percent", "load_average", "memory_used_bytes", "cpu_temperature_c", "fans"}


def test_the_summary_carries_the_verdict_of_the_metrics_view(client: Any) -> None:
    """The answer to "why is my fan running?" is in the summary, the same as in the full view."""
    summary = client.get("/api/gpu/summary").get_json()
    metrics = client.get("/api/gpu/metrics").get_json()
    verdict = summary["verdict"]
    assert verdict["headline"].startswith("GPU 1 is at") and f"PID {H200_LOAD_PID} keeps 98 %" in verdict["headline"]
    assert verdict["causes"] and 0 < verdict["confidence"] <= 1 and verdict["busy"] is True
    assert verdict == metrics["verdict"]


def test_processes_filters_and_sorts(client: Any) -> None:
    body = client.get("/api/gpu/processes?kind=gpu&gpu=1&sort=sm&limit=5").get_json()
    assert body["count"] == 1 and body["processes"][0]["pid"] == H200_LOAD_PID
    assert client.get("/api/gpu/processes?gpu=0&kind=gpu").get_json()["count"] == 0
    cpu = client.get("/api/gpu/processes?kind=cpu").get_json()
    assert all(p["gpus"] == [] for p in cpu["processes"])


def test_health_reports_status_and_age(client: Any) -> None:
    response = client.get("/api/health")
    body = response.get_json()
    assert body["backend"] == "nvidia" and body["gpu_count"] == 2
    assert body["status"] == "down"  # the collector thread is not running in this fixture
    assert "the collector is not running" in body["reasons"] and response.status_code == 503
    assert body["data_age_s"] >= 0


def test_health_is_starting_with_a_503_until_the_first_snapshot(make_app: Any, fake_nvml: Any) -> None:
    """Ready means a snapshot to show: before the first one /api/health answers 503 "starting" (the image's health
    check, Kubernetes' readiness probe and compose wait on that), then 200."""
    import threading

    from tests.conftest import nvidia_selection

    release = threading.Event()
    table = fake_nvml.tables[0]
    power = table["power"]

    def slow_power(*_: Any) -> Any:  # the first tick waits here
        release.wait(10)
        return power

    table["power"] = slow_power
    app = make_app(nvidia_selection(fake_nvml))
    client = app.test_client()
    try:
        response = client.get("/api/health")
        body = response.get_json()
        assert (response.status_code, body["status"], body["reasons"]) == (503, "starting", ["no snapshot yet"])
        assert client.get("/api/gpu/summary").status_code == 503  # the views agree: nothing to show yet
    finally:
        release.set()
    app.extensions["fanwhy"].collector.wait_frame(0, timeout=10)
    ready = client.get("/api/health")
    assert ready.status_code == 200 and ready.get_json()["status"] in ("ok", "degraded")


def test_a_server_that_does_not_collect_is_not_held_as_starting(make_app: Any, fake_nvml: Any) -> None:
    from tests.conftest import nvidia_selection

    app = make_app(nvidia_selection(fake_nvml), start=False, collector=False)
    response = app.test_client().get("/api/health")
    assert response.status_code == 200 and response.get_json()["status"] == "degraded"
    assert "FANWHY_COLLECTOR=off" in response.get_json()["reason"]


@pytest.mark.parametrize(
    ("url", "status", "words"),
    [
        ("/api/gpu/metrics?gpu=abc", 400, "invalid gpu"),
        ("/api/gpu/metrics?gpu=-1", 400, "invalid gpu"),
        ("/api/gpu/metrics?gpu=7", 404, "no GPU 7"),
        ("/api/gpu/metrics?gpus=1", 400, "unknown query parameter"),
        ("/api/gpu/processes?limit=0", 400, "invalid limit"),
        ("/api/gpu/processes?limit=1e9", 400, "invalid limit"),
        ("/api/gpu/processes?sort=name;drop", 400, "invalid sort"),
        ("/api/gpu/processes?kind=everything", 400, "invalid kind"),
        ("/api/gpu/summary?x=1", 400, "unknown query parameter"),
        ("/api/nothing-here", 404, "not found"),
    ],
)
def test_bad_input_is_a_json_error(client: Any, url: str, status: int, words: str) -> None:
    response = client.get(url)
    assert response.status_code == status
    body = response.get_json()
    assert words in body["error"] and "detail" in body
    assert "Traceback" not in response.get_data(as_text=True)


def test_wrong_method_is_json(client: Any) -> None:
    response = client.post("/api/gpu/summary", data=b"x" * 1024)
    assert response.status_code == 405 and response.get_json()["error"] == "method not allowed"


def test_before_the_first_snapshot_the_api_says_so(make_app: Any, fake_nvml: Any) -> None:
    from tests.conftest import nvidia_selection

    app = make_app(nvidia_selection(fake_nvml), start=False)
    response = app.test_client().get("/api/gpu/summary")
    assert response.status_code == 503 and response.get_json()["error"] == "no data yet"


def test_page_is_served_with_security_headers(client: Any) -> None:
    response = client.get("/")
    assert response.status_code == 200 and b"socket.io.min.js" in response.data
    assert "script-src 'self'" in response.headers["Content-Security-Policy"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    with client.get("/static/vendor/socket.io/socket.io.min.js") as vendored:
        assert vendored.status_code == 200 and b"Socket.IO v4" in vendored.data


def test_token_required_on_every_route_when_set(make_app: Any, fake_nvml: Any) -> None:
    from tests.conftest import nvidia_selection

    app = make_app(nvidia_selection(fake_nvml), start=False, token="s3cret-token")
    app.extensions["fanwhy"].collector.collect()
    client = app.test_client()
    for url in ("/api/gpu/summary", "/api/health", "/static/app.js", "/metrics", "/api/openapi.json"):
        with client.get(url) as response:
            assert response.status_code == 401, url
    page = client.get("/")
    assert page.status_code == 302 and page.headers["Location"].endswith("/login")
    assert client.get("/login").status_code == 200
    assert client.post("/login", data={"token": "nope"}).status_code == 401
    assert client.get("/api/gpu/summary").status_code == 401
    assert client.get("/api/gpu/summary", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/api/gpu/summary", headers={"Authorization": "Bearer s3cret-token"}).status_code == 200
    login = client.get("/?token=s3cret-token")
    assert login.status_code == 302 and "HttpOnly" in login.headers["Set-Cookie"]
    assert client.get("/api/gpu/summary").status_code == 200  # the cookie now


@pytest.mark.parametrize("pid", ["abc", "-1", "²", "١٢", "99999999999", "1.5"])
def test_one_process_with_a_bad_pid_is_a_400(client: Any, pid: str) -> None:
    answer = client.get(f"/api/gpu/processes/{pid}")
    assert answer.status_code == 400 and answer.get_json()["error"].startswith("invalid pid"), answer.get_data()


def test_one_process_not_listed_is_a_404_and_a_listed_one_has_its_whole_command(client: Any) -> None:
    assert client.get("/api/gpu/processes/4000000").status_code == 404
    listed = client.get("/api/gpu/processes").get_json()["processes"]
    # the fake NVML's PIDs may not exist here; the real-process case is tests/system/test_bounded_commands.py
    if listed:
        one = client.get(f"/api/gpu/processes/{listed[0]['pid']}").get_json()
        assert one["pid"] == listed[0]["pid"] and "command_full" in one


def test_the_interval_has_one_owner_the_collector(make_app: Any) -> None:
    """The settings give the collector its first interval; after that the page and the history ask the collector
    (which ``set_interval`` changes while running). Fails when a view reads the settings' interval."""
    from app.web.services import services

    app = make_app(start=False)
    services(app).collector.set_interval(7.0)
    page = app.test_client().get("/").get_data(as_text=True)
    assert 'data-interval="7.0"' in page
