"""What ``nvidia-smi -q`` (and ``-q -x``) prints of a card's own temperature limits, as settings of that card: its
``GPU Max Operating Temp`` (NVML's NVML_TEMPERATURE_THRESHOLD_GPU_MAX, "GPU Temperature at which the GPU can be
throttled below base clock"; -q -x's ``<gpu_temp_max_gpu_threshold>``). A limit, not a reading: it says where the
driver starts holding the card's clocks down for heat. Each card by its place in the output, as its other values."""

from __future__ import annotations

import re

from ..facts import MAX_OPERATING, Setting

_BLOCK = re.compile(r"^GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d\s*$", re.MULTILINE)
_TEXT = re.compile(r"^\s*GPU Max Operating Temp\s*:\s*(\d+)\s*C\s*$", re.MULTILINE)
_XML = re.compile(r"<gpu_temp_max_gpu_threshold>\s*(\d+)\s*C\s*</gpu_temp_max_gpu_threshold>")
_MINOR = re.compile(r"<minor_number>\s*(\d+)\s*</minor_number>")


def settings(text: str) -> tuple[Setting, ...]:
    """Each card's Max Operating Temp (``N/A`` where it has none: no setting)."""
    if "<nvidia_smi_log" in text:
        blocks = text.split("<gpu ")[1:]
        pattern = _XML
    else:
        blocks = _BLOCK.split(text)[1:]
        pattern = _TEXT
    found = []
    for index, block in enumerate(blocks):
        limit = pattern.search(block)
        minor = _MINOR.search(block) if pattern is _XML else None  # -q -x names a card by its minor number
        if limit:
            found.append(Setting(f"GPU {minor.group(1) if minor else index}", MAX_OPERATING, limit.group(1)))
    return tuple(found)
