"""NVML-GPU-Control's log (``nvml_gpu_control.py control``): each pass of its loop reads the card's temperature and
each fan controller's speed (``Current temp: 28°C``, ``Fan controller speed 0: 50%``), then writes a duty to every
controller: the speed of the first point of its curve (``--speed-pair``) at or below the temperature (``Setting GPU
fan speed: 60%``), nothing where the fan already runs at it (``Same as previous speed, nothing to do!``), or its
default (``--default-speed``) where no point is at or below it (``Found no temperature match, using default fan speed:
50``), written again at every pass. Its lines come with or without the ``LOG[date time]:`` prefix its versions put
before them. The tool logs no GPU index (it picks a card by name or UUID): its fans are GPU 0's, as nvidia-settings'
are."""

from __future__ import annotations

import re

from ..facts import Decision, Reading

DAEMON = "NVML-GPU-Control"

_LINE = re.compile(r"^(?:LOG\[[^\]]*\]:\s*)?(Current temp: (-?\d+)\s*°?C|Current speed: (\d+)\s*%|Fan controller speed "
                   r"(\d+): (\d+)\s*%|Setting GPU fan speed: (\d+)\s*%|(Same as previous speed)|Found no temperature "
                   r"match, using default fan speed: (\d+))", re.MULTILINE)
_DECIDES = re.compile(r"Fan controller speed \d+:|Setting GPU fan speed:|Found no temperature match")


def read(text: str) -> list[Reading]:
    """The card's temperature and each fan controller's speed (a share of its range, NVML's
    nvmlDeviceGetFanSpeed_v2), a snapshot for each ``Current temp`` line."""
    if not _DECIDES.search(text):
        return []
    found: list[Reading] = []
    snapshot = -1
    for m in _LINE.finditer(text):
        if m.group(2) is not None:
            snapshot += 1
            found.append(Reading("nvidia", "temperature.gpu", float(m.group(2)), m.group(2), "c", None,
                                 max(snapshot, 0), {"gpu": 0.0, "name": ""}))
        elif m.group(4) is not None:
            found.append(Reading("nvidia", "fan.speed", float(m.group(5)), f"{m.group(5)} %", "%", None,
                                 max(snapshot, 0), {"gpu": 0.0, "fan": float(m.group(4)), "name": ""}))
    return found


def decisions(text: str) -> tuple[Decision, ...]:
    """What the tool wrote at each pass, with the temperature it read before it; a pass cut before its temperature
    (the first lines of a log copied from its middle) is left out."""
    found: list[Decision] = []
    celsius: float | None = None
    speed: float | None = None
    for m in _LINE.finditer(text):
        if m.group(2) is not None:
            celsius, speed = float(m.group(2)), None
        elif m.group(3) is not None:
            speed = float(m.group(3))
        elif celsius is None:
            continue
        elif m.group(6) is not None or m.group(8) is not None:
            default = m.group(8) is not None
            found.append(_decision(celsius, float(m.group(8) if default else m.group(6)),
                                   "default" if default else "curve", len(found)))
            celsius = None
        elif m.group(7) is not None and speed is not None:
            found.append(_decision(celsius, speed, "same", len(found)))
            celsius = None
    return tuple(found)


def _decision(celsius: float, percent: float, why: str, step: int) -> Decision:
    return Decision(DAEMON, celsius, 0.0, None, step, celsius, percent=percent, why=why, drives="nvidia")
