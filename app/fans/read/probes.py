"""What a probe for sensor chips answers, as people paste it: lm-sensors' sensors-detect summary ("Driver `nct6775':"
then, for each chip it found, "Chip `Nuvoton NCT6798D Super IO Sensors' (confidence: 9)"; or "Sorry, no sensors were
detected.", which it follows with "This is relatively common on laptops, where thermal management is handled by ACPI
rather than the OS.") and sensors(1)'s "No sensors found!" (libsensors found no chip: no hwmon driver loaded). No
reading: a fact of which chips a machine has, for the rules to say what can and cannot be seen."""

from __future__ import annotations

import re

from ..facts import ChipProbe

_DRIVER = re.compile(r"^Driver [`'\"]([\w-]+)['`\"](?: \(autoloaded\))?:\s*$")
_CHIP = re.compile(r"^\s+(?:\*\s+)?Chip [`'\"](.+?)['`\"] \(confidence: \d+\)\s*$")
_NONE = "Sorry, no sensors were detected."
_SENSORS_NONE = re.compile(r"^No sensors found!\s*$", re.MULTILINE)


def probes(text: str) -> tuple[ChipProbe, ...]:
    if "Driver " not in text and "No sensors found!" not in text and _NONE not in text:
        return ()
    found: list[tuple[str, str]] = []
    driver: str | None = None
    for line in text.split("\n"):
        if (named := _DRIVER.match(line)) is not None:
            driver = named.group(1)
        elif driver is not None and (chip := _CHIP.match(line)) is not None:
            found.append((driver, chip.group(1)))
    detect = (ChipProbe("sensors-detect", tuple(found)),) if found or _NONE in text else ()
    return (*detect, *((ChipProbe("sensors"),) if _SENSORS_NONE.search(text) else ()))
