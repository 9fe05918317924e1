"""The one classifier of what a temperature measures: the chip's kind first (a CPU's own sensor is the CPU's, a
graphics card's is the GPU's, whatever its label), then the label's words. An input of a board's fan chip named for
the CPU (CPUTIN, "CPU Temperature") is the CPU's only as far as the board wires it: ``may_be_unconnected`` says so.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .chips import UNKNOWN, chip
from .facts import Role

# Label words per role, in the order they are tried: the first that matches decides (so "CPU VRM" is the VRM's,
# "GPU memory" the GPU's memory).
_WORDS: tuple[tuple[Role, str], ...] = (
    ("liquid", r"liquid|coolant|water|loop"),
    ("inlet", r"inlet|intake|ambient|front panel"),
    ("exhaust", r"exhaust|outlet"),
    ("vrm", r"vrm|mos|vcore|vr\b|vrd"),
    ("memory", r"mem|dimm|dram|hbm|vram"),
    ("chipset", r"chipset|pch|southbridge"),
    ("storage", r"dev/sd|dev/nvme|nvme|ssd|hdd|disk|drive|composite"),
    ("gpu", r"gpu|vga|graphics|edge|junction|hotspot"),
    ("cpu", r"cpu|package|pkg|tctl|tdie|tccd|core|peci|soc|apu|proc"),  # x86_pkg_temp: the CPU package's zone
    ("board", r"system|systin|board|mb\b|motherboard|peripheral|pcie|auxtin|tsensor|t_sensor|sensor"),
)
_KIND_ROLE: dict[str, Role] = {"cpu": "cpu", "gpu": "gpu", "chipset": "chipset", "storage": "storage",
                               "memory": "memory"}
# A Mac's SMC names its temperatures by four-letter keys, not words: the T key's second letter says the part (TC0D
# "CPU 0 Die", TC0P "CPU 0 Proximity", TG0D "GPU Die", TG0P "GPU 0 Proximity": macfanctld's control.c table of the
# keys applesmc lists). Only these two groups are read; the others (battery, palm rest, heat pipes) stay unknown.
_SMC_KEYS: dict[str, tuple[tuple[str, Role], ...]] = {"applesmc": ((r"TC\w\w", "cpu"), (r"TG\w\w", "gpu"))}


@lru_cache(maxsize=2048)
def role(chip_name: str | None, label: str) -> Role:
    """What the temperature ``label`` of ``chip_name`` measures: ``unknown`` when neither says."""
    kind = chip(chip_name).kind
    words = label.lower()
    if kind in _KIND_ROLE:
        if kind == "gpu" and re.search(r"mem|vram|hbm", words):
            return "memory"
        return _KIND_ROLE[kind]
    if kind == "aio":
        return "liquid"
    keyed = next((found for pattern, found in _SMC_KEYS.get(chip_name or "", ()) if re.fullmatch(pattern, label)), None)
    if keyed is not None:
        return keyed
    return next((found for found, pattern in _WORDS if re.search(pattern, words)), "unknown")


def may_be_unconnected(chip_name: str | None, label: str) -> bool:
    """True for an input whose wiring the board decides (a Super-I/O's or a board firmware's thermistor and diode
    inputs, CPUTIN, AUXTIN, T_Sensor): it may have nothing attached, and then reads a fixed value
    (Documentation/hwmon/nct6775.rst); and for an embedded controller's slot its driver names only by number, whose
    sensor "depends on model" (thinkpad-acpi.rst's temperature slots), if the model has one there at all."""
    kind = chip(chip_name).kind
    return kind in ("superio", "wmi") or pin_named(label) or \
        (kind == "ec" and re.fullmatch(r"temp\d+", label.strip().lower()) is not None)


def ec_own_cpu(chip_name: str | None, label: str) -> bool:
    """True for an embedded controller's own reading of the CPU, the one its fan table follows (system76/ec: the EC's
    PECI reading, which its ACPI interface hands system76_acpi as "CPU temp"; thinkpad-acpi.rst: the EC's CPU
    slot): what the EC believes, right or wrong, never an input with nothing attached."""
    return chip(chip_name).kind == "ec" and role(chip_name, label) == "cpu" and not may_be_unconnected(chip_name, label)


def pin_named(label: str) -> bool:
    """True for a label a board fan chip's driver gives an input after its pin (nct6775's CPUTIN, SYSTIN, AUXTIN0-3;
    a board firmware's T_Sensor): a board fan chip's input even where the capture does not name its chip."""
    return bool(re.fullmatch(_PIN_NAMED, label.strip().lower()))


_PIN_NAMED = r"cputin|auxtin\d*|systin|t_?sensor.*"  # inputs named for the chip's pin, not for what is wired there


def generic_input(chip_name: str | None, label: str) -> bool:
    """A board fan chip's input named for its pin, not for what the board wires to it (CPUTIN, AUXTIN0, SYSTIN,
    T_Sensor, a bare tempN): what it measures, if anything, is the board's choice (Documentation/hwmon/nct6775.rst,
    it87.rst: the sources of the temperature inputs depend on the motherboard)."""
    owner = chip(chip_name)
    return (owner.kind in ("superio", "wmi") and bool(re.fullmatch(rf"{_PIN_NAMED}|temp\d+", label.strip().lower()))) \
        or (owner is UNKNOWN and pin_named(label))  # its header cut by a grep: its pin's name is still the chip's
