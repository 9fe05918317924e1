"""What nfancurve (nan0s7's fan curve script for NVIDIA cards) is configured to do (``/etc/nfancurve.conf``, as its
systemd unit starts it, or the ``config`` beside its script): a stepped curve for each fan it drives.

Its script (``temp.sh``) takes each card's fans under manual control (nvidia-settings' GPUFanControlState 1) and,
at every pass, sets a fan (GPUTargetFanSpeed) from its card's temperature: 0 % under ``min_t``; ``fcurve[j]`` where
the temperature is at or under ``tcurve[j]`` (the first such j), from ``min_t`` on; 100 % at the last ``tcurve`` and
above. ``which_curve`` picks the first curve or the second (``fcurve2``, ``tcurve2``, ``min_t2``) for each fan and
``fan2gpu`` the card each fan is on (nvidia-settings numbers fans across all cards). Lists are written as
``fcurve="55 70 85"`` or, in older versions, ``declare -a fcurve=( "20" "35" )``; older versions call ``min_t``
``min_temp``.
"""

from __future__ import annotations

import re

from .daemonyaml import Read
from .fancontrol import Declared

DAEMON = "nfancurve"
_VALUE = re.compile(r"^\s*(?:declare\s+-a\s+)?(\w+)=\s*(?:\(([^)]*)\)|\"([^\"]*)\"|(\S+))", re.MULTILINE)


def _settings(text: str) -> dict[str, list[float]]:
    """Each setting's numbers (a list, or one number), the last assignment of a name holding."""
    found: dict[str, list[float]] = {}
    for m in _VALUE.finditer(text):
        raw = next(g for g in m.groups()[1:] if g is not None)
        numbers = re.findall(r"-?\d+(?:\.\d+)?", raw)
        if numbers and len(numbers) == len(raw.replace('"', " ").split()):
            found[m.group(1)] = [float(n) for n in numbers]
    return found


def _steps(fcurve: list[float], tcurve: list[float], min_t: float) -> tuple[tuple[float, float], ...]:
    """The duty from each temperature on (whole degrees, as the script reads them): the first level from ``min_t``,
    each next one a degree past the point before it, 100 % from the last point."""
    steps = [(min_t, fcurve[0])]
    steps += [(tcurve[j - 1] + 1, fcurve[j]) for j in range(1, len(fcurve))]
    steps.append((tcurve[-1], 100.0))
    return tuple(step for i, step in enumerate(steps) if i == 0 or step[1] != steps[i - 1][1])


def parse(text: str) -> Read:
    """Each fan's steps from an nfancurve configuration; nothing from a text that sets no fcurve and tcurve."""
    settings = _settings(text)
    curves = {}
    for n, suffix in ((1, ""), (2, "2")):
        fcurve, tcurve = settings.get(f"fcurve{suffix}"), settings.get(f"tcurve{suffix}")
        if fcurve and tcurve and len(fcurve) == len(tcurve):
            low = settings.get(f"min_t{suffix}") or settings.get("min_t") or settings.get("min_temp") or [0.0]
            curves[n] = _steps(fcurve, tcurve, low[0])
    if not curves:
        return Read((), "no fcurve and tcurve of one length" if "fcurve" in text else None)
    gpus = [int(g) for g in settings.get("fan2gpu", [0.0])]
    which = [int(w) for w in settings.get("which_curve", [])]
    declared = []
    for fan, gpu in enumerate(gpus):
        points = curves.get(which[fan] if fan < len(which) else 1) or next(iter(curves.values()))
        own = gpus[:fan].count(gpu)  # nvidia-settings' fan N is this card's fan ``own``
        declared.append(Declared(chip="nvidia", pwm=f"gpu{gpu} fan {own}", source_chip=None, source=None, fans=(),
                                 curve=points, floor_percent=0.0, daemon=DAEMON,
                                 follows=f"GPU {gpu}'s temperature", stepped=True))
    return Read(tuple(declared))
