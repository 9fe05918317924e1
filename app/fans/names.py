"""How a person names each fan and temperature of a machine: "CPU Fan (nct6798)", "fan 0 of GPU 0", "FAN3 (BMC)",
"amdgpu fan1". The fan wing's words name every subject through it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from .facts import Machine


class Names:
    """How a person names each fan and temperature of a machine, by key."""

    def __init__(self, machine: Machine) -> None:
        self.machine = machine
        self.names: dict[str, str] | None = None  # made when a sentence first names something

    def __call__(self, key: str | float) -> str:
        if self.names is None:
            machine, names = self.machine, {}
            for fan in machine.fans:
                names[fan.key] = _name(fan.chip, fan.label)
            for temp in machine.temperatures:
                names[temp.key] = _name(temp.chip, temp.label)
            for gpu in machine.gpus:
                names[f"nvidia/gpu{gpu.index}"] = f"GPU {gpu.index}" + (f" ({gpu.name})" if gpu.name else "")
            self.names = names
        return self.names.get(str(key), str(key))

    def some(self, keys: Sequence[str]) -> str:
        """"fan1", "fan1 and fan2", "fan1, fan2 and 3 more"."""
        named = list(dict.fromkeys(self(k) for k in keys))
        if len(named) > 3:
            return f"{named[0]}, {named[1]} and {len(named) - 2} more"
        return " and ".join([", ".join(named[:-1]), named[-1]] if len(named) > 1 else named)


@lru_cache(maxsize=2048)
def _name(chip: str | None, label: str) -> str:
    if chip == "bmc":
        return f"{label} (BMC)"
    own = re.fullmatch(r"gpu(\d+) fan(?: (\d+))?", label)
    if chip == "nvidia" and own:
        return (f"fan {own.group(2)} of GPU {own.group(1)}" if own.group(2) else f"fan of GPU {own.group(1)}")
    if not chip or chip == "-" or chip == label:  # a thermal zone of unknown type: named by its folder alone
        return label
    if re.fullmatch(r"(fan|temp|pwm)\d+", label):  # a channel with no label of its own: "amdgpu fan1"
        return f"{chip} {label}"
    return f"{label} ({chip})"
