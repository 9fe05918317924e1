"""gpustat's line per GPU (gpustat/core.py, GPUStat.print_to): ``[0] NVIDIA GeForce RTX 3090 | 84°C,  30 %, 100 % |
22000 / 24576 MB | alice(21990M)``. After the name come the temperature (``°C``, ``'C`` in older versions), the fan's
speed in % only where ``--show-fan``/``-F`` asked for it, the utilization, the encoder and decoder's in brackets
where asked, and the power draw and limit (``-P``: ``120 / 350 W``): so two shares before the power are the fan and the
utilization, one is the utilization alone. ``??`` is a value NVML did not give (gpustat prints it for any error,
NotSupported included): not read, so a card is never called fanless from it. Read as nvidia-smi's fields of the GPU
of that index."""

from __future__ import annotations

import re

from ..facts import Reading, Unit

_LINE = re.compile(r"^\s*\[(\d+)\]\s+(.+?)\s*\|\s*(\?\?|-?\d+)\s*(?:°|')C\s*,(.*?)\|\s*(?:\?\?|\d+)\s*/\s*(?:\?\?|\d+)"
                   r"\s*MB\s*\|", re.MULTILINE)
_SHARE = re.compile(r"(\?\?|\d+)\s*%")
_POWER = re.compile(r",\s*(\?\?|\d+)\s*(?:/\s*(\?\?|\d+)\s*)?W")


def read(text: str) -> list[Reading]:
    found: list[Reading] = []
    for line in _LINE.finditer(text):
        index, name, temp, middle = int(line.group(1)), line.group(2).strip(), line.group(3), line.group(4)
        gpu: dict[str, float | str] = {"gpu": float(index), "name": name}
        shares = _SHARE.findall(middle.split("(")[0])  # the encoder's and decoder's shares are in brackets
        fields: list[tuple[str, str, Unit]] = [("temperature.gpu", temp, "c")]
        if len(shares) >= 2:
            fields.append(("fan.speed", shares[0], "%"))
        if shares:
            fields.append(("utilization.gpu", shares[-1] if len(shares) < 2 else shares[1], "%"))
        power = _POWER.search(middle)
        if power:
            fields.append(("power.draw", power.group(1), "w"))
            if power.group(2):
                fields.append(("power.limit", power.group(2), "w"))
        for field, raw, unit in fields:
            if raw != "??":  # NVML gave nothing (an error or no such value: gpustat does not say which): not read
                found.append(Reading("nvidia", field, float(raw), raw, unit, None, 0, gpu))
    return found
