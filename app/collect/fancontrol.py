"""What lm-sensors' ``fancontrol`` daemon is configured to do (``/etc/fancontrol``): for each pwm output, the
temperature it follows, the fans it drives, and the curve it draws between them.

The file is ``KEY=value`` lines; each value is a list of ``hwmonN/pwmM=setting`` pairs (FCTEMPS, FCFANS, MINTEMP,
MAXTEMP, MINSTART, MINSTOP, MINPWM, MAXPWM), and MINPWM/MAXPWM may also be one bare number for every output.
``hwmonN`` numbers change between boots: DEVNAME names each one's chip, so a declaration is matched to the chip,
not to the number. fancontrol's curve: below MINTEMP the output is MINPWM (0 lets the fan stop), from MINTEMP to
MAXTEMP it rises from MINSTOP to MAXPWM, above MAXTEMP it is MAXPWM (0-255 values; percentages here). An output
whose MINPWM is above its MAXPWM is inverted (fancontrol's inverted mode: 255 stops the fan, 0 runs it at full speed,
as on a chip whose firmware set its PWM polarity low, it87.rst's fix_pwm_polarity): its curve is kept as the fan's
share of full speed (100 % less the value written), and marked ``inverted``.

fancontrol prints what it loaded as it starts (``Settings for hwmon2/pwm2:``, then ``Depends on``, ``Controls`` and
one ``KEY=value`` line each, as its LoadConfig echoes them): ``printed`` turns that listing back into the file.
"""

from __future__ import annotations

import re

from ..core.record import record
from ..core.vocabulary import pwm_percent

KEYS = ("FCTEMPS", "FCFANS", "MINTEMP", "MAXTEMP", "MINSTART", "MINSTOP", "MINPWM", "MAXPWM")


@record
class Declared:
    """One pwm output as the configuration declares it."""

    chip: str  # the chip's name from DEVNAME ("nct6799"), or its hwmonN when DEVNAME does not name it
    pwm: str  # "pwm5"
    source_chip: str | None
    source: str | None  # "temp1_input"
    fans: tuple[str, ...]  # the tachometers it drives ("fan5_input"); one pwm may drive several
    curve: tuple[tuple[float, float], ...]  # (°C, %): MINTEMP at MINSTOP, MAXTEMP at MAXPWM
    floor_percent: float | None  # MINPWM: what it runs at below MINTEMP (0: the fan may stop)
    daemon: str = "fancontrol"  # the daemon that drives it (fancontrol, thinkfan, fan2go)
    follows: str | None = None  # the source in words, when it is not one file ("the hottest of 6 sensors")
    follows_all: tuple[str, ...] = ()  # the sensors it follows, each named as the temperatures are ("coretemp temp2")
    firmware_c: tuple[float, float | None] | None = None  # (from, to) °C where it hands the fan back to its firmware
    stepped: bool = False  # levels, each held from where it starts (thinkfan's), not a line between two points
    combined: str | None = None  # how it combines other curves (fan2go's function: "average", "maximum" ...)
    strategy: str | None = None  # the named curve it uses (fw-fanctrl's strategies)
    on_battery: bool = False  # a curve it uses on battery only (fw-fanctrl's strategyOnDischarging)
    inverted: bool = False  # an inverted output (255 stops the fan): curve and floor are the fan's share, not the pwm
    refused: str | None = None  # why the daemon refuses this configuration as it starts (a code), where it does
    firmware_may_run: bool = False  # on some cards the daemon hands the curve to the card's firmware (LACT, RDNA3)


def _pairs(value: str) -> dict[str, list[str]]:
    """``hwmon4/pwm5=hwmon5/temp1_input hwmon4/pwm6=...`` -> {"hwmon4/pwm5": ["hwmon5/temp1_input"], ...} (an
    output may repeat: one pwm, several tachometers; an empty setting is kept as no item)."""
    pairs: dict[str, list[str]] = {}
    for item in value.split():
        key, sep, setting = item.partition("=")
        if sep:
            pairs.setdefault(key, [])
            if setting:
                pairs[key].append(setting)
    return pairs


def _number(raw: str | None) -> float | None:
    """A setting's number, or None where it is not one (a damaged or mangled line is skipped, as fancontrol's own
    checks refuse it)."""
    try:
        return float(raw) if raw is not None else None
    except ValueError:
        return None


def _percent(raw: str | None) -> float | None:
    number = _number(raw)
    return pwm_percent(number) if number is not None else None


_PRINTED = re.compile(r"^\s*Settings for (\S+?):\s*$")
# the journal's or syslog's prefix of each line: "Dec 01 10:12:03 host fancontrol[812]:"
_LOGGED = re.compile(r"^.*?\bfancontrol\[\d+\]:")
_PRINTED_KEYS = {"Depends on": "FCTEMPS", "Controls": "FCFANS"}


def printed(text: str) -> str | None:
    """The configuration fancontrol printed as it started (on a terminal, or in its service's journal), as the file
    it came from; None where ``text`` holds no such listing."""
    values: dict[str, list[str]] = {}
    output = None
    for line in (_LOGGED.sub("", raw, count=1) for raw in text.splitlines()):
        start = _PRINTED.match(line)
        if start:
            output = start.group(1)
            continue
        item = line.strip()
        if not item:
            output = None  # the listing of one output ends at a blank line
        if output is None:
            continue
        label = next((k for k in _PRINTED_KEYS if item.startswith(k + " ")), None)
        key, value = (_PRINTED_KEYS[label], item[len(label):].strip()) if label else item.partition("=")[::2]
        if key in KEYS and value:
            values.setdefault(key, []).extend(f"{output}={v}" for v in value.split("+"))
    if "FCTEMPS" not in values:
        return None
    return "".join(f"{key}={' '.join(items)}\n" for key, items in values.items())


def parse(text: str) -> tuple[Declared, ...]:
    """Every pwm output ``text`` (a /etc/fancontrol) declares, in FCTEMPS order; lines it does not know are skipped."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and not key.startswith("#"):
            values[key.strip()] = value.strip()
    names = {index: name[0] for index, name in _pairs(values.get("DEVNAME", "")).items() if name}

    def chip(path: str) -> tuple[str, str]:
        hwmon, _, leaf = path.partition("/")
        return names.get(hwmon, hwmon), leaf

    settings = {key: _pairs(values.get(key, "")) for key in KEYS}
    bare: dict[str, str] = {key: values[key] for key in ("MINPWM", "MAXPWM")
                            if key in values and "=" not in values[key]}  # one number for every output

    def one(key: str, output: str) -> str | None:
        found = settings[key].get(output)
        return found[0] if found else bare.get(key)

    declared = []
    for output, sources in settings["FCTEMPS"].items():
        pwm_chip, pwm = chip(output)
        source_chip, source = chip(sources[0]) if sources else (None, None)
        curve: list[tuple[float, float]] = []
        for temp_key, pwm_key, default in (("MINTEMP", "MINSTOP", None), ("MAXTEMP", "MAXPWM", "255")):
            temp, duty = _number(one(temp_key, output)), _percent(one(pwm_key, output) or default)
            if temp is not None and duty is not None:
                curve.append((temp, duty))
        floor, inverted = _floor(one("MINPWM", output), one("MAXPWM", output))
        if inverted:  # the fan's share of full speed is what is left of the value written
            curve = [(temp, round(100.0 - duty, 1)) for temp, duty in curve]
        declared.append(Declared(chip=pwm_chip, pwm=pwm, source_chip=source_chip, source=source,
                                 fans=tuple(chip(f)[1] for f in settings["FCFANS"].get(output, [])),
                                 curve=tuple(curve), floor_percent=floor, inverted=inverted))
    return tuple(declared)


def _floor(minpwm: str | None, maxpwm: str | None) -> tuple[float | None, bool]:
    """An output's duty below MINTEMP (MINPWM, 0 where not set) as the fan's share, and whether the output is
    inverted (its MINPWM above its MAXPWM: 255 stops the fan, and the share is what is left of the value)."""
    floor, top = _percent(minpwm or "0"), _percent(maxpwm or "255")
    if floor is not None and top is not None and floor > top:
        return round(100.0 - floor, 1), True
    return floor, False
