"""One vocabulary (app/core/vocabulary.py): each shared rule is defined once; the page's one remaining copy matches."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from app.core import vocabulary
from app.core.model import GpuSample
from app.vendors.nvml_gpu import CLOCKS_EVENT_REASONS
from app.verdict.alerts import VALUES

ROOT = Path(__file__).resolve().parent.parent.parent


def js_constant(name: str) -> int:
    """A constant of static/app.js written as a product of integers (``64 * 1024 * 1024``)."""
    source = (ROOT / "static" / "app.js").read_text()
    found = re.search(rf"const {name} = ([0-9 *]+);", source)
    assert found, f"static/app.js has no {name}"
    value = 1
    for factor in found.group(1).split("*"):
        value *= int(factor)
    return value


def test_the_page_floor_is_the_python_floor() -> None:
    assert js_constant("UNATTRIBUTED_FLOOR_BYTES") == vocabulary.UNATTRIBUTED_FLOOR_BYTES == 64 << 20


def test_the_reason_sets_name_reasons_the_nvml_backend_decodes() -> None:
    decoded = {name for _, name in CLOCKS_EVENT_REASONS}
    assert decoded >= vocabulary.SLOWDOWN_REASONS
    assert vocabulary.HEAT_REASONS < vocabulary.SLOWDOWN_REASONS
    assert "sw_power_cap" not in vocabulary.SLOWDOWN_REASONS  # normal under load: never an alert or a heat cause


def test_no_module_keeps_its_own_copy_of_a_shared_rule() -> None:
    """The names and literals that used to be retyped in several modules appear only in app/core/vocabulary.py."""
    retyped = re.compile(r"THERMAL_REASONS|64 << 20|64 \* MIB|0\.6 \* |passively cooled\" in"
                         r"|UNATTRIBUTED_FLOOR_BYTES =")
    for path in (ROOT / "app").rglob("*.py"):
        if path.name == "vocabulary.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            assert not retyped.search(line), f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
    assert "indexOf(\"passively cooled\")" not in (ROOT / "static" / "app.js").read_text()
    tree = ast.parse((ROOT / "app" / "core" / "vocabulary.py").read_text())
    assert {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} >= {
        "HEAT_REASONS", "SLOWDOWN_REASONS", "UNATTRIBUTED_FLOOR_BYTES"}


def test_the_score_formula() -> None:
    assert vocabulary.gpu_score(1.0, 0.0) == 1.0
    assert vocabulary.gpu_score(0.0, 100.0) == 0.0
    assert vocabulary.gpu_score(0.5, 50.0) == 0.6 * 0.5 + 0.4 * 0.5


def test_every_slowdown_reason_raises_the_throttling_alert_and_the_power_cap_does_not() -> None:
    def throttled(*reasons: str) -> float | None:
        return VALUES["throttling"](GpuSample(vendor="nvidia", index=0, uuid="GPU-0", name="H200",
                                              throttle_reasons=reasons))

    for reason in vocabulary.SLOWDOWN_REASONS:
        assert throttled(reason) == 1.0, reason
    assert throttled("sw_power_cap") == 0.0 and throttled("gpu_idle") == 0.0


def test_the_decoded_bits_are_nvmls_own() -> None:
    """The NVML backend's bit table is built from THROTTLE_REASONS' order: each bit must be NVML's constant."""
    import pynvml

    constants = {"gpu_idle": "GpuIdle", "applications_clocks_setting": "ApplicationsClocksSetting",
                 "sw_power_cap": "SwPowerCap", "hw_slowdown": "HwSlowdown", "sync_boost": "SyncBoost",
                 "sw_thermal_slowdown": "SwThermalSlowdown", "hw_thermal_slowdown": "HwThermalSlowdown",
                 "hw_power_brake_slowdown": "HwPowerBrakeSlowdown", "display_clock_setting": "DisplayClockSetting"}
    assert [name for _, name in CLOCKS_EVENT_REASONS] == list(vocabulary.THROTTLE_REASONS) == list(constants)
    for bit, name in CLOCKS_EVENT_REASONS:
        assert bit == getattr(pynvml, f"nvmlClocksEventReason{constants[name]}"), name
