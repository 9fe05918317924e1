"""Prometheus: the snapshot collector, the seeds' names, promtool, exporter mode."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from prometheus_client import CollectorRegistry

from app.web.services import services
from tests.conftest import nvidia_selection
from tests.fakes.docker_api import FakeDockerApi, container
from tests.fakes.fake_nvml import H200_LOAD_PID, scenario
from tests.support.servers import free_port, stop, wait_healthy

ROOT = Path(__file__).resolve().parent.parent.parent


def registry_of(app: Any) -> CollectorRegistry:
    """The registry /metrics serves (FanWhy's collector, its own process_* and python_info)."""
    registry = services(app).registry
    return registry


def test_gpu_gauges_from_the_snapshot(app: Any, fake_nvml: Any) -> None:
    calls_before = sum(fake_nvml.calls.values())
    registry = registry_of(app)
    labels = {"gpu": "1", "uuid": "GPU-4c1c74c1-e9d0-b580-e321-c7e5c81dddc9", "name": "NVIDIA H200"}
    get = registry.get_sample_value
    assert get("fanwhy_gpu_utilization_percent", labels) == 98.0
    assert get("fanwhy_gpu_memory_used_bytes", labels) == 7061962752
    assert get("fanwhy_gpu_memory_free_bytes", labels) == 143047917568  # NVML's own: the reserve is not free
    assert get("fanwhy_gpu_power_watts", labels) == pytest.approx(693.481)
    assert get("fanwhy_gpu_temperature_celsius", labels) == 57.0
    assert get("fanwhy_gpu_fan_speed_percent", labels) is None  # passively cooled: no sample, never 0
    assert get("fanwhy_gpu_throttle_reason", {**labels, "reason": "sw_power_cap"}) == 1.0
    assert get("fanwhy_gpu_throttle_reason", {**labels, "reason": "hw_slowdown"}) == 0.0
    assert get("fanwhy_gpu_energy_joules_total", labels) == pytest.approx(19463.597)
    assert get("fanwhy_gpu_up", labels) == 1.0
    assert get("fanwhy_process_gpu_memory_bytes", {"pid": str(H200_LOAD_PID), "name": "", "user": "", "container": "",
                                                   "pod": "", "namespace": "", "gpu": "1"}) == 7052722176
    assert get("fanwhy_collector_success") == 1.0 and get("fanwhy_collector_ticks_total") == 1.0
    assert get("gpu_memory_total_bytes", {"gpu": "1"}) == 150754820096
    assert get("gpu_memory_known_bytes", {"gpu": "1"}) == 7052722176
    assert get("gpu_memory_unknown_bytes", {"gpu": "1"}) == 7061962752 - 7052722176
    assert get("gpu_inference_active", {"gpu": "1"}) == 0.0
    assert sum(fake_nvml.calls.values()) == calls_before, "a scrape must not call NVML"


def test_without_a_gpu_the_host_is_exported_in_full(make_app: Any, tmp_path: Path) -> None:
    from app.vendors.basic import BasicBackend
    from app.vendors.factory import Selection
    from app.vendors.nvidia_smi import NvidiaSmi

    backend = BasicBackend(sys_root=str(tmp_path), nvidia_smi=NvidiaSmi(str(tmp_path / "no-nvidia-smi"), 1.0))
    backend.open()
    app = make_app(Selection(backend=backend, skipped={}), start=False)
    app.extensions["fanwhy"].collector.collect()
    app.extensions["fanwhy"].collector.collect()  # CPU % is a rate: two collections
    registry = registry_of(app)
    get = registry.get_sample_value
    assert get("fanwhy_host_memory_total_bytes") and get("fanwhy_host_memory_used_bytes")
    assert get("fanwhy_host_load_average", {"period": "1m"}) is not None
    assert get("fanwhy_host_load_average", {"period": "15m"}) is not None
    assert get("fanwhy_host_cpus") and get("fanwhy_host_cpu_percent") is not None
    assert not [m for m in registry.collect() if m.name.startswith("fanwhy_gpu_") and m.samples]


def test_a_lost_gpu_and_an_exited_process_leave_no_stale_samples(app: Any, fake_nvml: Any) -> None:
    import pynvml

    registry = registry_of(app)
    held = sum(p["usedGpuMemory"] for p in fake_nvml.tables[1]["compute_processes"])
    fake_nvml.end_process(1, H200_LOAD_PID)  # its memory is freed with it
    fake_nvml.set(1, "process_utilization", [])
    fake_nvml.set(0, "utilization", pynvml.NVMLError_GpuIsLost())
    app.extensions["fanwhy"].collector.collect()
    get = registry.get_sample_value
    assert get("fanwhy_process_gpu_memory_bytes", {"pid": str(H200_LOAD_PID), "name": "", "user": "", "container": "",
                                                   "pod": "", "namespace": "", "gpu": "1"}) is None
    lost = {"gpu": "0", "uuid": "GPU-5ce6f751-d9a5-2669-cfdd-cb0224401395", "name": "NVIDIA H200"}
    assert get("fanwhy_gpu_up", lost) == 0.0 and get("fanwhy_gpu_utilization_percent", lost) is None
    assert get("fanwhy_collector_success") == 0.0
    assert get("gpu_memory_unknown_bytes", {"gpu": "1"}) == 7061962752 - held  # what is left: nobody visible holds it


def test_seed_container_metrics_with_inference(make_app: Any, tmp_path: Path) -> None:
    from tests.fakes.fake_nvml import scenario

    fake = scenario("h200x2_load")
    fake.set(1, "compute_processes", [])
    fake.set(1, "process_utilization", [])
    sock = tmp_path / "docker.sock"
    with FakeDockerApi(sock, [container("a" * 64, "ollama", "ollama/ollama", gpu="device-request"),
                              container("b" * 64, "vllm", "vllm/vllm-openai", gpu="runtime")]):
        app = make_app(nvidia_selection(fake), start=False, docker_socket=str(sock))
        app.extensions["fanwhy"].collector.collect()
        registry = registry_of(app)
    get = registry.get_sample_value
    half = 7061962752 // 2
    assert get("container_gpu_memory_bytes", {"container_name": "ollama", "container_id": "a" * 64, "gpu": "1",
                                              "method": "inference"}) == half
    assert get("container_gpu_detected", {"container_name": "vllm", "container_id": "b" * 64}) == 1.0
    assert get("docker_container_gpu_memory_usage_bytes", {"container_name": "ollama",
                                                           "container_id": "a" * 64}) == half
    assert get("docker_container_gpu_usage_percent", {"container_name": "ollama", "container_id": "a" * 64}) == 0.0
    assert get("gpu_inference_active", {"gpu": "1"}) == 1.0


def test_the_metrics_endpoint_is_text_and_cheap(client: Any) -> None:
    response = client.get("/metrics")
    assert response.status_code == 200 and response.content_type.startswith("text/plain")
    text = response.get_data(as_text=True)
    assert "# TYPE fanwhy_gpu_utilization_percent gauge" in text
    assert "# TYPE fanwhy_gpu_energy_joules_total counter" in text


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian package prometheus) not installed")
def test_promtool_check_metrics_passes(make_app: Any, tmp_path: Path) -> None:
    from tests.fakes.fake_nvml import scenario

    fake = scenario("h200x2_load")
    sock = tmp_path / "docker.sock"
    with FakeDockerApi(sock, [container("a" * 64, "ollama", "ollama/ollama", gpu="device-request")]):
        app = make_app(nvidia_selection(fake), start=False, docker_socket=str(sock))
        collector = app.extensions["fanwhy"].collector
        collector.collect()
        collector.collect()
        text = app.test_client().get("/metrics").get_data()
    result = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, timeout=30)
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
    assert result.stdout.decode().strip() == "" and result.stderr.decode().strip() == ""  # no lint warning either


def test_exporter_mode_serves_metrics_and_no_page() -> None:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "app", "exporter"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            env={**os.environ, "FANWHY_BACKEND": "simulated", "FANWHY_SIM_GPUS": "1",
                                 "FANWHY_SIM_PEAK": "0.2", "EXPORTER_PORT": str(port), "SCRAPE_INTERVAL": "0.5"})
    url = f"http://127.0.0.1:{port}"
    try:
        health = wait_healthy(url)
        assert health["interval_s"] == 0.5 and health["history"] == {"enabled": False}
        text = requests.get(f"{url}/metrics", timeout=5).text
        assert 'fanwhy_backend_info{backend="simulated"} 1.0' in text
        root = requests.get(url + "/", timeout=5)  # no dashboard: a small page that says where the metrics are
        assert root.status_code == 200 and 'href="/metrics"' in root.text and "history.js" not in root.text
        icon = requests.get(url + "/favicon.ico", timeout=5)
        assert icon.status_code == 200 and icon.content[:4] == b"\x00\x00\x01\x00"  # an icon, in both modes
        assert requests.get(url + "/socket.io/?EIO=4&transport=polling", timeout=5).status_code == 404
    finally:
        output = stop(proc)
    assert f"FanWhy is serving http://127.0.0.1:{port}/metrics" in output


def test_metrics_need_the_token_when_one_is_set(make_app: Any, fake_nvml: Any) -> None:
    app = make_app(nvidia_selection(fake_nvml), start=False, token="t0k")
    app.extensions["fanwhy"].collector.collect()
    client = app.test_client()
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer t0k"}).status_code == 200




def test_the_metrics_people_expect(make_app: Any) -> None:
    """ECC, MIG, persistence and P-state as gauges (no pstate label churning fanwhy_gpu_info), XID errors counted by
    code, encoder/decoder % and per-GPU power with the same labels as the other process metrics, the build, and
    FanWhy's own process_* metrics."""
    import os

    from app.core.version import __version__
    from tests.fakes.fake_nvml import scenario

    fake = scenario("h100_load")
    fake.run_on(0, os.getpid(), sm_percent=80)
    app = make_app(nvidia_selection(fake), start=False)
    collector = app.extensions["fanwhy"].collector
    frame0 = collector.collect()
    assert frame0 is not None and frame0.counters.gpu_events == ()
    fake.inject_xid(0, 79)
    fake.inject_xid(0, 79)
    fake.inject_xid(0, 48)

    deadline = time.monotonic() + 5
    def counted() -> int:  # the XID events as the frame carries them
        return sum(count for _, count in (collector.collect() or frame0).counters.gpu_events)

    while time.monotonic() < deadline and counted() < 3:
        time.sleep(0.05)
    registry = registry_of(app)
    get = registry.get_sample_value
    gpu = {"gpu": "0", "uuid": fake.tables[0]["uuid"]["value"] if isinstance(fake.tables[0]["uuid"], dict)
           else fake.tables[0]["uuid"], "name": "NVIDIA H100 80GB HBM3"}
    sample = collector.latest().snapshot.gpus[0]
    assert get("fanwhy_gpu_pstate", gpu) == int(sample.pstate[1:])
    assert get("fanwhy_gpu_ecc_errors_uncorrected", gpu) == sample.ecc_errors_uncorrected
    assert get("fanwhy_gpu_mig_mode", gpu) == float(sample.mig_mode)
    assert get("fanwhy_gpu_persistence_mode", gpu) == float(sample.persistence_mode)
    assert get("fanwhy_gpu_info", {**gpu, "vendor": "nvidia"}) == 1.0  # no pstate label
    assert get("fanwhy_gpu_xid_errors_total", {"gpu": "0", "xid": "79"}) == 2.0
    assert get("fanwhy_gpu_xid_errors_total", {"gpu": "0", "xid": "48"}) == 1.0
    proc = {"pid": str(os.getpid()), "name": collector.latest().snapshot.processes[0].name or "",
            "user": collector.latest().snapshot.processes[0].user or "", "container": "", "pod": "", "namespace": "",
            "gpu": "0"}
    assert get("fanwhy_process_sm_percent", proc) == 80.0
    assert get("fanwhy_process_encoder_percent", proc) is not None
    # the only visible process, beside memory nobody visible holds (hidden work): its part of the board, as the ledger
    ledger = collector.latest().snapshot.ledger[0]
    assert get("fanwhy_process_power_watts", proc) == ledger.processes_w
    assert ledger.processes_w + ledger.unattributed_w + ledger.idle_w == pytest.approx(sample.power_w, abs=0.02)
    assert get("fanwhy_build_info", {"version": __version__, "python": __import__("platform").python_version()}) == 1
    assert get("process_resident_memory_bytes") and get("process_cpu_seconds_total") is not None


def test_seed_names_can_be_turned_off(make_app: Any, fake_nvml: Any) -> None:
    app = make_app(nvidia_selection(fake_nvml), start=False, seed_metrics=False)
    app.extensions["fanwhy"].collector.collect()
    names = {m.name for m in registry_of(app).collect()}
    assert "fanwhy_gpu_memory_used_bytes" in names
    assert not names & {"gpu_memory_used_bytes", "gpu_memory_total_bytes", "container_gpu_detected"}
    text = app.test_client().get("/metrics").get_data(as_text=True)
    assert "\ngpu_memory_used_bytes" not in text and "fanwhy_gpu_memory_used_bytes" in text


def test_the_exposition_speaks_gzip_openmetrics_and_name_filters(client: Any) -> None:
    gz = client.get("/metrics", headers={"Accept-Encoding": "gzip"})
    assert gz.headers["Content-Encoding"] == "gzip"
    assert b"fanwhy_gpu_utilization_percent" in __import__("gzip").decompress(gz.get_data())
    om = client.get("/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"})
    assert om.content_type.startswith("application/openmetrics-text") and om.get_data(as_text=True).endswith("# EOF\n")
    only = client.get("/metrics?name[]=fanwhy_gpu_power_watts").get_data(as_text=True)
    assert "fanwhy_gpu_power_watts{" in only and "fanwhy_gpu_utilization_percent" not in only


def test_views_read_the_counters_of_the_frame_they_show(make_app: Any) -> None:
    """One read path: XID counts, error totals and recent alerts travel in the Frame. A frame keeps the counts of
    its own moment (a later event changes the next frame, not this one), and a scrape, /api/health and
    /api/alerts of the same frame agree."""
    fake = scenario("h100_load")
    app = make_app(nvidia_selection(fake), start=False, alert_gpu_util_percent=50.0, alert_hold_s=0.0)
    collector = app.extensions["fanwhy"].collector
    first = collector.collect()
    assert first is not None and first.counters.gpu_events == ()
    fake.inject_xid(0, 79)
    later = None
    deadline = time.monotonic() + 30  # the XID thread hands the event over when it is scheduled: a loaded machine
    while time.monotonic() < deadline:
        later = collector.collect()
        if later is not None and later.counters.gpu_events:
            break
        time.sleep(0.01)
    assert later is not None and later.counters.gpu_events == (((0, "xid", 79), 1),)
    assert first.counters.gpu_events == ()  # the earlier frame is unchanged
    assert registry_of(app).get_sample_value("fanwhy_gpu_xid_errors_total", {"gpu": "0", "xid": "79"}) == 1.0
    client = app.test_client()
    assert client.get("/api/health").get_json()["total_errors"] == later.counters.total_errors
    fired = [a.id for a in later.counters.recent_alerts]
    assert fired, "the load scenario fires a utilization alert"
    assert [a["id"] for a in client.get("/api/alerts").get_json()["history"]] == fired[::-1]


def test_a_tick_that_raises_publishes_its_error_counts_but_no_new_data(make_app: Any, monkeypatch: Any) -> None:
    """A collector in a crash loop: the frame keeps its snapshot, sequence and age (so it turns stale), and its
    counters move on, so `increase(fanwhy_collector_errors[5m])` and health see the failures."""
    app = make_app(nvidia_selection(scenario("h100_idle")), start=False, interval_s=0.05)
    collector = app.extensions["fanwhy"].collector
    first = collector.collect()
    assert first is not None

    def broken() -> None:
        raise RuntimeError("a bad tick")

    monkeypatch.setattr(collector, "collect", broken)
    collector.start()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and collector.latest().counters.total_errors < 3:
        time.sleep(0.02)
    latest = collector.latest()
    assert latest.counters.total_errors >= 3 and latest.counters.consecutive_failures >= 3
    assert (latest.seq, latest.snapshot, latest.monotonic) == (first.seq, first.snapshot, first.monotonic)
    errors = registry_of(app).get_sample_value("fanwhy_collector_errors_total")
    assert errors is not None and errors >= 3
    health = app.test_client().get("/api/health").get_json()
    assert health["total_errors"] >= 3 and health["consecutive_failures"] >= 3


def test_each_fan_is_a_sample_with_its_chip_and_source_and_promtool_is_content(make_app: Any, tmp_path: Path) -> None:
    """A GeForce's two fans (NVML) and a ThinkPad's two tachometers on one pwm plus a board with empty headers
    (hwmon, from real captures): speed both ways, target, alarm; no sample for a dead channel."""
    from tests.fakes.fake_nvml import FakeNvml, captured_card
    from tests.support.hwmon import hwmon_tree

    root = hwmon_tree(tmp_path / "sys", "thinkpad-p1-dual-fan", "nct6798-b550f-headers")
    (root / "class" / "hwmon" / "hwmon4" / "pwm1_enable").write_text("1\n")  # by hand: pwm1 is the fans' one level
    app = make_app(nvidia_selection(FakeNvml([captured_card("rtx3090-load-shaped", fans=2)])), start=False,
                   sys_root=str(root), bmc=False)
    app.extensions["fanwhy"].collector.collect()
    registry = services(app).registry

    def get(name: str, fan: str, source: str, chip: str) -> float | None:
        """A fan series by its stable labels; where a sample is expected, its source is fanwhy_fan_info's."""
        value = registry.get_sample_value(name, {"fan": fan, "chip": chip})
        if value is not None:
            assert registry.get_sample_value("fanwhy_fan_info", {"fan": fan, "chip": chip, "source": source,
                                                                 "source_from": "design" if source else ""}) == 1.0
        return value

    assert get("fanwhy_fan_percent", "nvml:0/fan1", "GPU 0", "GPU 0") == 65.0
    assert get("fanwhy_fan_target_percent", "nvml:0/fan1", "GPU 0", "GPU 0") == 65.0
    assert get("fanwhy_fan_rpm", "nvml:0/fan1", "GPU 0", "GPU 0") is None  # NVML gives the first fan's RPM only
    assert get("fanwhy_fan_rpm", "hwmon:thinkpad/fan2", "", "thinkpad") == 3238.0
    assert get("fanwhy_fan_percent", "hwmon:thinkpad/fan2", "", "thinkpad") == 50.2  # the one pwm, 128 of 255
    assert get("fanwhy_fan_alarm", "hwmon:nct6798/fan2", "", "nct6798") == 0.0
    assert get("fanwhy_fan_rpm", "hwmon:nct6798/fan1", "", "nct6798") is None  # an empty header is not a fan
    assert get("fanwhy_fan_alarm", "hwmon:nct6798/fan1", "", "nct6798") is None
    if shutil.which("promtool"):
        text = app.test_client().get("/metrics").get_data()
        result = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, timeout=30)
        assert result.returncode == 0 and not result.stdout.strip() and not result.stderr.strip(), result.stdout


def test_the_activity_counters_are_ratios_with_the_kind_of_busy_and_pass_promtool(make_app: Any) -> None:
    """Fakes shaped from one H200 under a bf16 matmul (tests/fixtures/nvml/h200-gpm.json)."""
    from tests.fakes.fake_nvml import FakeNvml, gpm_card
    from tests.support.gpm import counted_ticks

    app = make_app(nvidia_selection(FakeNvml([gpm_card("bf16_matmul")])), start=False)
    counted_ticks(app.extensions["fanwhy"].collector, 3)
    labels = {"gpu": "0", "uuid": "GPU-4c1c74c1-e9d0-b580-e321-c7e5c81dddc9", "name": "NVIDIA H200", "gpu_instance": ""}
    get = registry_of(app).get_sample_value
    assert get("fanwhy_gpu_tensor_active_ratio", labels) == pytest.approx(0.8957)
    assert get("fanwhy_gpu_tensor_kind_active_ratio", {**labels, "kind": "hmma"}) == pytest.approx(0.8957)
    assert get("fanwhy_gpu_sm_active_ratio", labels) == pytest.approx(0.9229)
    assert get("fanwhy_gpu_sm_occupancy_ratio", labels) == pytest.approx(0.1364)
    assert get("fanwhy_gpu_pipe_active_ratio", {**labels, "pipe": "fp32"}) == 0.0
    assert get("fanwhy_gpu_dram_active_ratio", labels) == pytest.approx(0.1573)
    assert get("fanwhy_gpu_busy_kind", {**labels, "kind": "tensor"}) == 1.0
    assert get("fanwhy_gpu_busy_kind", {**labels, "kind": "fp32"}) is None
    if shutil.which("promtool") is not None:
        text = app.test_client().get("/metrics").get_data()
        result = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, timeout=30)
        assert result.returncode == 0 and not result.stdout.strip(), result.stdout.decode() + result.stderr.decode()


def test_a_gpu_without_activity_counters_has_no_activity_sample(app: Any) -> None:
    """The H200 dumps hold no GPM answer, so their GPUs say why (never a 0 passed off as a reading)."""
    get = registry_of(app).get_sample_value
    labels = {"gpu": "1", "uuid": "GPU-4c1c74c1-e9d0-b580-e321-c7e5c81dddc9", "name": "NVIDIA H200", "gpu_instance": ""}
    assert get("fanwhy_gpu_sm_active_ratio", labels) is None and get("fanwhy_gpu_utilization_percent",
                                                                      {k: labels[k] for k in ("gpu", "uuid", "name")})
