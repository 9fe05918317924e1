"""The fans as the views show them: /api/fans, the summary, the history's fan series over HTTP, bad arguments, the
terminal's FAN column; on a GeForce (NVML, shaped from nvidia-smi captures) and a board and laptop from hwmon
captures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.cli.terminal import render
from app.core.fan import Fan
from app.fans.alarm_words import fan_cell
from tests.conftest import nvidia_selection
from tests.fakes.fake_nvml import FakeNvml, captured_card
from tests.support.hwmon import hwmon_tree


@pytest.fixture
def fan_app(make_app: Any, tmp_path: Path) -> Any:
    root = hwmon_tree(tmp_path / "sys", "thinkpad-p1-dual-fan", "nct6798-b550f-headers")
    app = make_app(nvidia_selection(FakeNvml([captured_card("rtx3090-idle", fans=2)])), start=False,
                   sys_root=str(root), bmc=False)
    app.extensions["fanwhy"].collector.collect()
    return app


def test_api_fans_lists_every_fan_with_dead_channels_and_why(fan_app: Any) -> None:
    body = fan_app.test_client().get("/api/fans").get_json()
    by_id = {f["id"]: f for f in body["fans"]}
    assert body["count"] == len(body["fans"]) == 2 + 2 + 7
    gpu = by_id["nvml:0/fan0"]
    assert (gpu["state"], gpu["percent"], gpu["floor_percent"], gpu["source"], gpu["source_from"]) == (
        "stopped", 0.0, 30.0, "GPU 0", "design")
    assert gpu["name"] == "GPU 0 fan 0" and gpu["cools"] == "the GPU"
    assert by_id["hwmon:nct6798/fan1"]["state"] == "dead" and "no fan on this header" in \
        by_id["hwmon:nct6798/fan1"]["dead"]
    assert by_id["hwmon:nct6798/fan2"]["rpm"] == 2119 and by_id["hwmon:nct6798/fan2"]["state"] == "running"
    assert body["bmc"] == {"read": False, "reason": "no BMC read: FANWHY_BMC=off"} and body["air"] == []
    live = fan_app.test_client().get("/api/fans?state=live").get_json()
    assert live["count"] == 2 + 2 + 3 and all(f["state"] != "dead" for f in live["fans"])


def test_bad_arguments_are_a_400_with_the_reason(fan_app: Any) -> None:
    client = fan_app.test_client()
    answer = client.get("/api/fans?state=loud")
    assert answer.status_code == 400 and answer.get_json()["detail"] == "expected all or live"
    answer = client.get("/api/fans?colour=red")
    assert answer.status_code == 400
    answer = client.get("/api/gpu/history?fan=hwmon:thinkpad/fan1&metric=utilization_percent&since=-5m")
    assert answer.status_code == 400 and answer.get_json()["detail"]["fan_metrics"] == ["rpm", "percent", "source_c"]
    answer = client.get("/api/gpu/history?fan=a&gpu=0")
    assert answer.status_code == 400 and "exactly one" in answer.get_json()["error"]


def test_the_summary_names_the_fans_and_the_history_serves_a_fans_series(fan_app: Any) -> None:
    client = fan_app.test_client()
    summary = client.get("/api/gpu/summary").get_json()
    assert {f["id"] for f in summary["host"]["fans"]} == {"nvml:0/fan0", "nvml:0/fan1", "hwmon:thinkpad/fan1",
                                                            "hwmon:thinkpad/fan2", "hwmon:nct6798/fan2",
                                                            "hwmon:nct6798/fan3", "hwmon:nct6798/fan4"}
    collector = fan_app.extensions["fanwhy"].collector
    collector.collect()
    collector.history.flush()
    points = client.get("/api/gpu/history?fan=hwmon:thinkpad/fan1&metric=rpm&since=-5m&step=1").get_json()
    assert points["fan"] == "hwmon:thinkpad/fan1" and points["points"] and points["points"][-1][1] == 3486.0


def test_the_terminal_says_each_fans_state(fan_app: Any) -> None:
    text = render(fan_app.extensions["fanwhy"].collector.latest().snapshot)
    gpu_line = next(line for line in text.splitlines() if line.strip().startswith("0  "))
    assert gpu_line.split()[-3] == "rest"  # the FAN column of a GeForce in fan-stop
    assert "thinkpad fan2" in text and "3,238 RPM" in text and "nct6798 fan1" not in text  # dead: not listed


@pytest.mark.parametrize(("fan", "cell"), [
    (Fan("a", "c", 1, None, percent=0, stopped=True, state="stopped"), "rest"),
    (Fan("a", "c", 1, None, percent=31, floor_percent=30, state="floor"), "31 % floor"),
    (Fan("a", "c", 1, None, percent=65, state="running"), "65 %"),
    (Fan("a", "c", 1, None, rpm=1850, state="running"), "1,850 RPM"),
    (Fan("a", "c", 1, None, percent=100, state="full"), "full"),
    (Fan("a", "c", 1, None, rpm=0, alarm="the BMC reports it critical", state="failed"), "FAILED"),
    (Fan("a", "c", 1, None, rpm=400, alarm="off target", state="off-target"), "OFF TARGET"),
])
def test_fan_cells(fan: Fan, cell: str) -> None:
    assert fan_cell(fan) == cell

