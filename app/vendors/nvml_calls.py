"""NVML's dialect of the one call path (app/vendors/calls.py): which of its errors mean the GPU or NVML failed
(the GPU becomes an error row and NVML is re-initialised with backoff), and why NVML could not start, in words."""

from __future__ import annotations

from .calls import Calls, Dialect, GpuFailed, Library

__all__ = ["FATAL_ERRORS", "NVML", "Calls", "GpuFailed", "describe_init_error", "nvml_calls"]

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


NVML = Dialect(
    library="NVML", package="nvidia-ml-py",
    errors=lambda nvml: (nvml.NVMLError,),
    code=lambda error: getattr(error, "value", None),
    codes=lambda nvml, names: frozenset(getattr(nvml, n) for n in names if hasattr(nvml, n)),
    fatal=FATAL_ERRORS,
    not_supported=("NVML_ERROR_NOT_SUPPORTED",),
    no_permission=("NVML_ERROR_NO_PERMISSION",),
    function_missing=("NVML_ERROR_FUNCTION_NOT_FOUND",),
)


def nvml_calls(nvml: object) -> Calls:
    """The call path for NVML (``nvml``: pynvml, a fake, or None before it is loaded)."""
    return Calls(nvml, NVML)


def describe_init_error(nvml: Library, error: Exception) -> str:
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
