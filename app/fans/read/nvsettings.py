"""What ``nvidia-settings -a`` answered to writes of a card's fan attributes: for each write it made it prints
``Attribute 'NAME' (HOST[TARGET]) assigned value N.`` (nvidia-settings(1), -a/--assign). ``GPUFanControlState`` 1
on a GPU hands its fans to software (manual control), 0 gives them back to the card's own policy;
``GPUTargetFanSpeed`` on a fan is the duty asked of it, in percent. nvidia-settings numbers fans across the host
(``[fan:N]``, not per card): with one card assigned, they are its fans. Where it also names the range a write must
fall in, the replay's nvidia-settings reader reads the text instead (it carries the floor)."""

from __future__ import annotations

import re

from ..facts import Reading

_ASSIGNED = re.compile(r"Attribute '(GPUFanControlState|GPUTargetFanSpeed)' \([^)\[]*\[(gpu|fan):(\d+)\]\) "
                       r"assigned value (-?\d+)")


def read(text: str) -> list[Reading]:
    """The duty asked of each fan (label ``fan.target``) under the control state assigned to the card: manual for
    1, the card's firmware for 0. Nothing where no fan was asked for a duty and no control state was assigned."""
    states: dict[int, int] = {}
    targets: dict[int, int] = {}
    for name, kind, number, value in _ASSIGNED.findall(text):
        if name == "GPUFanControlState" and kind == "gpu":
            states[int(number)] = int(value)
        elif name == "GPUTargetFanSpeed" and kind == "fan" and 0 <= int(value) <= 100:
            targets[int(number)] = int(value)
    if not targets or len(states) > 1:  # several cards assigned: which card a host-wide fan is on is not said
        return []
    gpu, state = next(iter(states.items()), (0, None))
    controller = {1: "manual", 0: "firmware"}.get(state) if state is not None else None
    found = []
    for fan, duty in sorted(targets.items()):
        extra: dict[str, float | str] = {"gpu": float(gpu), "name": ""}
        if fan:  # the first is the fan nvidia-smi's fan.speed reads (NVML's nvmlDeviceGetFanSpeed: fan 0)
            extra["fan"] = float(fan)
        if controller is not None:
            extra["controller"] = controller
        found.append(Reading("nvidia", "fan.target", float(duty), f"{duty} %", "%", None, 0, extra))
    return found
