"""What NoteBook FanControl is configured to do: a model configuration's temperature thresholds for each fan (the
original NBFC's XML, ``FanControlConfigV2``, or nbfc-linux's JSON, ``/usr/share/nbfc/configs/<model>.json``), and
the service's own settings (``/etc/nbfc/nbfc.json``: the model it uses, ``SelectedConfigId``, and each fan's speed
set by hand, ``TargetFanSpeeds``, -1 for nbfc's curve).

nbfc_service.json(5): a threshold is an ``UpThreshold``, a ``DownThreshold`` and a ``FanSpeed`` (per cent); above
``CriticalTemperature`` nbfc runs every fan at 100 % until the temperature is ``CriticalTemperatureOffset`` under it
(nbfc-linux's defaults, where a JSON configuration leaves them out: 75 °C and 15). Which threshold holds at a
temperature differs between the two programs (nbfc-linux's temperature_threshold_manager.c, and its pull request
that named the difference): the original service, and nbfc-linux with ``LegacyTemperatureThresholdsBehaviour``
true (set by its converter of XML configurations), selects a threshold once the temperature reaches its own
``UpThreshold``; nbfc-linux without it (its default since 0.1.12) holds a threshold until the temperature reaches
that threshold's ``UpThreshold`` and then selects the next, so each speed holds one threshold lower, and the first
threshold's speed holds at every temperature under its ``UpThreshold``. Both go back a threshold when the
temperature falls to the current one's ``DownThreshold``. Each fan is nbfc's (chip "nbfc", ``pwmN`` the Nth fan, as
``nbfc status`` lists them); the temperature it follows is the one nbfc reads (its configured sensors, the CPU's by
default), ``nbfc status``'s "Temperature".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from ..core.bounded import read_text_file
from ..core.jsonvalue import Json, member, members, number
from ..fans.read.jsonish import document
from .daemonyaml import Read, text_at
from .fancontrol import Declared

CHIP = "nbfc"
SOURCE = "CPU temperature"  # the name nbfc status gives its temperature (app.fans.read.nbfc)
DEFAULT_CRITICAL_C = 75.0  # nbfc-linux's ModelConfig default CriticalTemperature
MODEL_DIRS = ("var/lib/nbfc/configs", "usr/share/nbfc/configs")  # nbfc_service(1): the first takes precedence
MODEL_LIMIT = 256 << 10
_XML_FAN = re.compile(r"<FanConfiguration>(.*?)(?=<FanConfiguration>|</FanConfigurations>|\Z)", re.S)
_XML_STEP = re.compile(r"<TemperatureThreshold>(.*?)(?:</TemperatureThreshold>|\Z)", re.S)
Step = tuple[float, float, float]  # (UpThreshold, DownThreshold, FanSpeed)


def parse(text: str) -> Read:
    """Each fan's steps from a model configuration (XML or JSON), or from the service's settings (its fans set by
    hand); nothing from a text that is neither."""
    if "<FanControlConfigV2" in text or "<TemperatureThreshold>" in text:
        return _xml(text)
    config = cast(Json, document(text))
    if not isinstance(config, dict):
        return Read(())
    if "FanConfigurations" in config:
        return _json(config)
    return _service(config, None)


class Service:
    """``/etc/nbfc/nbfc.json`` read with the model configuration it selects (a callable: a daemon's parse)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __call__(self, text: str) -> Read:
        config = cast(Json, document(text))
        if not isinstance(config, dict) or "FanConfigurations" in config:
            read = parse(text)  # a model configuration itself (a paste put where the settings are)
            return read if read.declared or read.error else Read((), "not NBFC's settings: no JSON object in it")
        model = text_at(config, "SelectedConfigId")
        for folder in MODEL_DIRS if model and "/" not in model else ():
            path = self.root / folder / f"{model}.json"
            if path.is_file():
                return _service(config, parse(read_text_file(path, MODEL_LIMIT)))
        missing = Read((), f"the model configuration {model!r} is not under {', '.join(MODEL_DIRS)}") if model else None
        return _service(config, missing)


def _service(config: Json, model: Read | None) -> Read:
    """The model's curves, with each fan ``TargetFanSpeeds`` sets (0-100; -1 leaves it to the curve) held there."""
    speeds = [number(v) for v in members(member(config, "TargetFanSpeeds"))]
    declared = list(model.declared if model else ())
    for n, speed in enumerate(speeds):
        if speed is None or speed < 0:
            continue
        held = Declared(chip=CHIP, pwm=f"pwm{n + 1}", source_chip=None, source=None, fans=(),
                        curve=((0.0, min(speed, 100.0)),), floor_percent=None, daemon="nbfc", stepped=True)
        declared = [d for d in declared if d.pwm != held.pwm] + [held]
    if not declared:
        return Read((), model.error if model else "no fan of nbfc's settings")
    return Read(tuple(sorted(declared, key=lambda d: d.pwm)))


def _json(config: Json) -> Read:
    legacy = str(member(config, "LegacyTemperatureThresholdsBehaviour")).lower() == "true"
    critical = number(member(config, "CriticalTemperature"))
    fans = []
    for fan in members(member(config, "FanConfigurations")):
        steps = [(number(member(t, "UpThreshold")), number(member(t, "DownThreshold")), number(member(t, "FanSpeed")))
                 for t in members(member(fan, "TemperatureThresholds"))]
        fans.append((text_at(fan, "FanDisplayName"), [(u, d or 0.0, s) for u, d, s in steps
                                                      if u is not None and s is not None]))
    # nbfc-linux validates a model configuration as it starts: a FanSpeed outside 0-100 % is refused, and the
    # service exits (nbfc_service.json(5): FanSpeed, 0.0 to 100.0)
    refused = "out-of-range" if any(not 0 <= s <= 100 for _, steps in fans for _, _, s in steps) else None
    return _declared(fans, legacy, critical if critical is not None else DEFAULT_CRITICAL_C, refused)


def _xml(text: str) -> Read:
    """The original NBFC's XML, read by its elements (a post may cut it short): its thresholds are selected at
    their own ``UpThreshold``, as that service does."""
    critical = _element(text.split("<FanConfigurations>")[0], "CriticalTemperature")
    fans = []
    for block in _XML_FAN.findall(text) or [text]:
        steps = [(_element(t, "UpThreshold"), _element(t, "DownThreshold"), _element(t, "FanSpeed"))
                 for t in _XML_STEP.findall(block)]
        name = re.search(r"<FanDisplayName>([^<]{1,80})</FanDisplayName>", block)
        fans.append((name.group(1).strip() if name else None,
                     [(u, d or 0.0, s) for u, d, s in steps if u is not None and s is not None]))
    return _declared(fans, True, critical)


def _element(text: str, tag: str) -> float | None:
    found = re.search(rf"<{tag}>\s*(-?\d+(?:\.\d+)?)\s*</{tag}>", text)
    return float(found.group(1)) if found else None


def _declared(fans: Sequence[tuple[str | None, Sequence[Step]]], legacy: bool, critical: float | None,
              refused: str | None = None) -> Read:
    out = []
    for n, (name, steps) in enumerate(fans):
        points = _points(sorted(steps), legacy, critical)
        if points:
            named = f" for the fan it names {name}" if name else ""
            out.append(Declared(chip=CHIP, pwm=f"pwm{n + 1}", source_chip=CHIP, source=SOURCE, fans=(),
                                curve=points, floor_percent=points[0][1], daemon="nbfc", stepped=True,
                                follows=f"the temperature nbfc reads (the CPU's by default){named}", refused=refused))
    return Read(tuple(out), None if out else "no fan with temperature thresholds")


def _points(steps: Sequence[Step], legacy: bool, critical: float | None) -> tuple[tuple[float, float], ...]:
    """The speed each threshold gives from the temperature where it is selected as the temperature rises: its own
    ``UpThreshold`` (legacy), or the ``UpThreshold`` of the one before it; the first holds at every temperature
    under the one where the next is selected (said from 0 °C); 100 % from the critical temperature."""
    if not steps:
        return ()
    first = min(0.0, steps[0][1], steps[0][0])  # the first threshold holds at every temperature under the next
    ups = [up for up, _, _ in steps]
    starts = [first, *(ups[1:] if legacy else ups[:-1])]
    points = [(float(t), float(s)) for t, (_, _, s) in zip(starts, steps, strict=True)]
    if critical is not None:
        points = [p for p in points if p[0] < critical] + [(critical, 100.0)]
    return tuple(p for i, p in enumerate(points) if i == 0 or p[1] != points[i - 1][1])  # each a change of speed
