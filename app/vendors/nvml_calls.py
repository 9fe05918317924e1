"""The one call path to NVML (CONTRIBUTING.md): every NVML call of the backend goes through ``Calls.get``.

A value, or None plus the reason in the GPU's ``unsupported`` map (NotSupported, NoPermission, FunctionNotFound:
logged once). Errors that mean the GPU or NVML itself failed raise ``GpuFailed``: the backend turns that GPU into
an error row and re-initialises NVML with backoff.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

log = logging.getLogger(__name__)

# Error names whose meaning is "this GPU, or NVML, is broken right now" rather than "this
# metric is not available": they turn the GPU into an error row and trigger a re-init.
FATAL_ERRORS = (
    "NVML_ERROR_GPU_IS_LOST",
    "NVML_ERROR_UNKNOWN",
    "NVML_ERROR_UNINITIALIZED",
    "NVML_ERROR_DRIVER_NOT_LOADED",
    "NVML_ERROR_RESET_REQUIRED",
    "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
    "NVML_ERROR_GPU_NOT_FOUND",
)


class GpuFailed(Exception):
    """The GPU or NVML failed (lost, unknown error): not a missing metric."""


class Calls:
    """The one wrapper every NVML call goes through."""

    def __init__(self, nvml: Any):
        self.nvml = nvml
        self._fatal = {getattr(nvml, n) for n in FATAL_ERRORS if hasattr(nvml, n)}
        self._missing_logged: set[str] = set()

    def get(self, unsupported: dict[str, str], metric: str, fn_name: str, *args: object) -> Any:
        """Call ``nvml.<fn_name>(*args)``; on a non-fatal error return None and record why."""
        nvml = self.nvml
        fn: Callable[..., Any] | None = getattr(nvml, fn_name, None)
        if fn is None:
            unsupported[metric] = f"not available: {fn_name} is not in this nvidia-ml-py"
            return None
        try:
            return fn(*args)
        except nvml.NVMLError as error:
            unsupported[metric] = self.reason(error, fn_name, metric)
            return None

    def reason(self, error: Exception, fn_name: str, metric: str) -> str:
        """Why a metric is missing; raises GpuFailed when the error means the GPU failed."""
        nvml = self.nvml
        code = getattr(error, "value", None)
        if code in self._fatal:
            raise GpuFailed(f"{type(error).__name__}: {error}") from error
        if code == nvml.NVML_ERROR_NOT_SUPPORTED:
            return "not supported by this GPU"
        if code == nvml.NVML_ERROR_NO_PERMISSION:
            return "no permission"
        if code == nvml.NVML_ERROR_FUNCTION_NOT_FOUND:
            if fn_name not in self._missing_logged:
                self._missing_logged.add(fn_name)
                log.info("NVML function %s not found in this driver; %s stays empty", fn_name, metric)
            return f"not available: {fn_name} is not in this driver"
        return f"NVML error: {type(error).__name__}"


def describe_init_error(nvml: Any, error: Exception) -> str:
    """Why NVML could not start, in words a person can act on."""
    code = getattr(error, "value", None)
    hints = {
        getattr(nvml, "NVML_ERROR_LIBRARY_NOT_FOUND", -1): "libnvidia-ml.so.1 not found (no NVIDIA driver)",
        getattr(nvml, "NVML_ERROR_DRIVER_NOT_LOADED", -1): "the NVIDIA kernel driver is not loaded",
        getattr(nvml, "NVML_ERROR_LIB_RM_VERSION_MISMATCH", -1): (
            "driver/library version mismatch (the driver was updated: reboot or reload the kernel module)"
        ),
        getattr(nvml, "NVML_ERROR_NO_PERMISSION", -1): "no permission to open /dev/nvidia*",
    }
    hint = hints.get(code)
    name = type(error).__name__
    return f"{name}: {hint}" if hint else f"{name}: {error}"
