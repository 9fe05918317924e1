"""A value as pastes write it: a number with its unit ("+65.0°C", "740 RPM", "10390.00 RPM", "500 (+/- 0) RPM",
"30 %", "45.5 W"), or a word that says there is no number ("FAULT", "N/A", "[Not Supported]", "na", "no reading",
"Absent"). The one place a capture's value text is turned into a number and a unit."""

from __future__ import annotations

import re

from ..core.jsonvalue import finite
from .facts import Unit

NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)"
_VALUE = re.compile(rf"^\s*({NUMBER})(?![xX\d])\s*(?:\(\+/-\s*[\d.]+\)\s*)?(°\s*C|degrees\s*C|C\b|°\s*F|"
                    r"degrees\s*F|RPM|rpm|percent\b|%|W(?:atts)?\b|mW|V(?:olts)?\b|mV|A(?:mps)?\b|MHz)?", re.IGNORECASE)
_UNITS: dict[str, Unit] = {"°c": "c", "degreesc": "c", "c": "c", "rpm": "rpm", "%": "%", "percent": "%", "w": "w",
                           "watts": "w", "mw": "w", "v": "v", "volts": "v", "mv": "v", "a": "a", "amps": "a",
                           "mhz": "mhz"}
# Words that stand where a number would: the reading's absence, and which kind of absence.
WORDS = {"fault": "fault", "n/a": "n/a", "[n/a]": "n/a", "na": "n/a", "[not supported]": "n/a",
         "not supported": "n/a", "no reading": "n/a", "absent": "absent", "disabled": "disabled", "ns": "n/a",
         "unknown": "n/a", "[unknown error]": "n/a", "err": "fault", "error": "fault"}


def parse(text: str) -> tuple[float | None, Unit | None, str]:
    """(the number or None, its unit or None, the raw text as read) of a value's text."""
    raw = text.strip()
    match = _VALUE.match(raw)
    if match is None:
        return None, None, raw
    number = float(match.group(1))
    if finite(number) is None:  # 400 digits read as a float are an infinity: no reading is that
        return None, None, raw
    unit_text = (match.group(2) or "").lower().replace(" ", "")
    if unit_text in ("mw", "mv"):
        number /= 1000.0
    if unit_text in ("°f", "degreesf"):  # sensors -f shows the driver's °C in Fahrenheit
        number, unit_text = fahrenheit_to_celsius(number), "°c"
    return number, _UNITS.get(unit_text), raw


def word(text: str) -> str | None:
    """What a word in place of a number says ("fault", "n/a", "absent", "disabled"), or None."""
    return WORDS.get(text.strip().lower().split("  ")[0].strip())


def fahrenheit_to_celsius(degrees_f: float) -> float:
    """A temperature ``sensors -f`` printed, back in the °C every rule reads (rounded to the driver's 0.1)."""
    return round((degrees_f - 32.0) * 5.0 / 9.0, 1)
