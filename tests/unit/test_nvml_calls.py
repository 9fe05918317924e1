"""The one NVML call path (app/vendors/nvml_calls.py), against the real nvidia-ml-py's error classes and codes
(no library is loaded: only its exceptions and constants are used)."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pynvml
import pytest

from app.vendors.nvml_calls import FATAL_ERRORS, GpuFailed, describe_init_error, nvml_calls


def error(code: int) -> pynvml.NVMLError:
    return pynvml.NVMLError(code)


def library(**functions: Any) -> Any:
    """pynvml's error class and codes, with only ``functions`` as NVML functions."""
    codes = {name: getattr(pynvml, name) for name in dir(pynvml) if name.startswith("NVML_ERROR_")}
    return SimpleNamespace(NVMLError=pynvml.NVMLError, **codes, **functions)


def raising(code: int) -> Any:
    def call(*_: Any) -> Any:
        raise error(code)
    return call


def test_a_value_is_returned_and_nothing_recorded() -> None:
    unsupported: dict[str, str] = {}
    calls = nvml_calls(library(nvmlDeviceGetPowerUsage=lambda handle: 612_000 if handle == "h0" else None))
    assert calls.get(unsupported, "power_w", "nvmlDeviceGetPowerUsage", "h0") == 612_000
    assert unsupported == {}


@pytest.mark.parametrize(("code", "reason"), [
    (pynvml.NVML_ERROR_NOT_SUPPORTED, "not supported by this GPU"),
    (pynvml.NVML_ERROR_NO_PERMISSION, "no permission"),
    (pynvml.NVML_ERROR_FUNCTION_NOT_FOUND, "not available: nvmlDeviceGetFanSpeed is not in this driver"),
    (pynvml.NVML_ERROR_INSUFFICIENT_SIZE, "NVML error: NVMLError_InsufficientSize"),
])
def test_a_missing_metric_is_none_with_its_reason(code: int, reason: str) -> None:
    unsupported: dict[str, str] = {}
    calls = nvml_calls(library(nvmlDeviceGetFanSpeed=raising(code)))
    assert calls.get(unsupported, "fan_speed_percent", "nvmlDeviceGetFanSpeed", "h0") is None
    assert unsupported == {"fan_speed_percent": reason}


def test_a_function_this_nvidia_ml_py_lacks() -> None:
    unsupported: dict[str, str] = {}
    assert nvml_calls(library()).get(unsupported, "energy_j", "nvmlDeviceGetTotalEnergyConsumption", "h0") is None
    assert unsupported == {"energy_j": "not available: nvmlDeviceGetTotalEnergyConsumption is not in this nvidia-ml-py"}


def test_a_function_the_driver_lacks_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    calls = nvml_calls(library(nvmlDeviceGetFanSpeed=raising(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)))
    with caplog.at_level(logging.INFO, logger="app.vendors.calls"):
        for _ in range(3):
            calls.get({}, "fan_speed_percent", "nvmlDeviceGetFanSpeed", "h0")
    logged = [r.getMessage() for r in caplog.records]
    assert logged == ["NVML function nvmlDeviceGetFanSpeed not found in this driver; fan_speed_percent stays empty"]


@pytest.mark.parametrize("name", FATAL_ERRORS)
def test_an_error_that_means_the_gpu_failed_raises(name: str) -> None:
    code = getattr(pynvml, name)
    calls = nvml_calls(library(nvmlDeviceGetTemperature=raising(code)))
    with pytest.raises(GpuFailed, match=type(error(code)).__name__):
        calls.get({}, "temperature_c", "nvmlDeviceGetTemperature", "h0", 0)


def test_the_fatal_codes_are_the_gpu_failures() -> None:
    assert set(FATAL_ERRORS) == {"NVML_ERROR_GPU_IS_LOST", "NVML_ERROR_UNKNOWN", "NVML_ERROR_UNINITIALIZED",
                                 "NVML_ERROR_DRIVER_NOT_LOADED", "NVML_ERROR_RESET_REQUIRED",
                                 "NVML_ERROR_LIB_RM_VERSION_MISMATCH", "NVML_ERROR_GPU_NOT_FOUND"}


@pytest.mark.parametrize(("code", "words"), [
    (pynvml.NVML_ERROR_LIBRARY_NOT_FOUND, "libnvidia-ml.so.1 not found (no NVIDIA driver)"),
    (pynvml.NVML_ERROR_DRIVER_NOT_LOADED, "the NVIDIA kernel driver is not loaded"),
    (pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH, "driver/library version mismatch (the driver was updated: reboot "
                                                "or reload the kernel module)"),
    (pynvml.NVML_ERROR_NO_PERMISSION, "no permission to open /dev/nvidia*"),
])
def test_why_nvml_could_not_start_in_words(code: int, words: str) -> None:
    failure = error(code)
    assert describe_init_error(pynvml, failure) == f"{type(failure).__name__}: {words}"


def test_an_unexpected_init_error_keeps_its_own_text() -> None:
    failure = error(pynvml.NVML_ERROR_TIMEOUT)
    assert describe_init_error(pynvml, failure) == f"{type(failure).__name__}: {failure}"


def test_init_words_with_a_binding_that_lacks_the_error_constants() -> None:
    """An old or partial nvidia-ml-py without some NVML_ERROR_* names: an error is never mistaken for one of them."""
    from types import SimpleNamespace

    from app.vendors.nvml_calls import describe_init_error

    bare = SimpleNamespace()

    class CodeOne(Exception):
        value = 1

    class NoCode(Exception):
        pass

    for code in (1, 2, -2, 0):
        error = type("E", (Exception,), {"value": code})("it failed")
        assert describe_init_error(bare, error) == "E: it failed"
    assert describe_init_error(bare, CodeOne("uninitialised")) == "CodeOne: uninitialised"
    assert describe_init_error(bare, NoCode("no code")) == "NoCode: no code"
