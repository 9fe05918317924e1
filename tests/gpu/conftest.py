"""Real-GPU tests: collected everywhere, run only where NVML finds a GPU; elsewhere skipped with the reason."""

from __future__ import annotations

import functools

import pytest


@functools.cache
def nvml_unavailable() -> str | None:
    """None when NVML starts and sees a GPU, else why not."""
    try:
        import pynvml
    except ImportError as error:
        return f"nvidia-ml-py not installed: {error}"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as error:
        return f"no usable NVIDIA GPU here ({type(error).__name__}: {error}); run `pytest -m gpu` on the GPU machine"
    try:
        if pynvml.nvmlDeviceGetCount() == 0:
            return "NVML reports no GPU"
    finally:
        pynvml.nvmlShutdown()
    try:
        import torch  # noqa: F401
    except ImportError:
        return "torch is not installed: the real CUDA load needs it"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/gpu/" in item.nodeid:
            item.add_marker(pytest.mark.gpu)
            reason = nvml_unavailable()
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))
