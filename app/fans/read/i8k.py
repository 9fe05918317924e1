"""``/proc/i8k`` and ``i8kctl`` with no arguments (i8kutils, over the dell-smm-hwmon driver): one line of ten fields,
as i8kctl(1) lists them: the format's version, the BIOS version, the service tag, the CPU's temperature (°C), the
left and the right fan's state (0 off, 1 low, 2 high), their speeds (RPM), the AC power and the Fn keys' status
("1.0 A17 B5W123K 52 2 1 8040 6420 1 2"). -1 stands where the SMM call failed (the driver's error value). Read only
where the paste names i8k: ten numbers alone on a line could be anything.

The left fan is the SMM interface's fan 1, the right fan its fan 0 (linux/i8k.h): hwmon's fan2 and fan1. The driver
shows in hwmon only the fans whose state (or type) the SMM answers for (dell-smm-hwmon.c, dell_smm_init_hwmon): a
fan whose state and speed both fail beside one that answers is most likely a fan the machine does not have: said as
a slot most likely empty, not as a fan whose speed is unknown. Beside the same driver's ``sensors`` listing, which
names each fan it shows by its type ("Processor Fan") in channel order, each fan the SMM answers for is the listed
fan of its place, where the two count as many."""

from __future__ import annotations

import re

from ..facts import Decision, Reading

_LINE = re.compile(r"^\s*\d+\.\d+\s+\S+\s+\S+\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)\s+-?\d+\s+-?\d+\s*$",
                   re.MULTILINE)
CHIP = "dell_smm"
MAX_STATE = 2  # i8kctl(1): 0 off, 1 low, 2 high; the driver's pwm is the state scaled to 0-255
_FANS = (("Left fan", 2), ("Right fan", 1))  # hwmon's channel of each
# i8kmon -v's line per pass: the CPU's temperature, the state it leaves each fan in, the AC status (i8kmon's
# "temp, left fan state, right fan state, ac state: 51 0 1 0"); -1 where the SMM call failed
_PASS = re.compile(r"temp, left fan state, right fan state, ac state:\s*(-?\d+)\s+(-?\d+)\s+(-?\d+)\s+(-?\d+)")


# What was done to the control of a Dell's fans, as its tools print or take it: dell-bios-fan-control (and dellfan)
# print "BIOS CONTROL DISABLED" once they have turned the BIOS's own fan control off (the SMM calls dell-smm-hwmon
# uses for pwm1_enable 1: the fans then keep the state last set); i8kfan(1) takes the left and the right fan's state
# ("-" leaves one as it is). i8k's left fan is the SMM interface's fan 1, its right fan 0 (linux/i8k.h): hwmon's
# fan2 and fan1.
_BIOS_OFF = re.compile(r"^[^\n]*?\bBIOS CONTROL DISABLED\s*$", re.MULTILINE)  # alone, or in its journal
# typed (at a prompt, or sudo's): i8kfan prints the fans' states after it (i8kctl.c), "-1 -1" where the SMM call
# failed, so a command followed by that set nothing; a daemon's log of the commands it ran is not read here
_I8KFAN = re.compile(r"^(?:[^\n]*?[$#]\s+(?:sudo\s+)?|sudo\s+)(?:\S*/)?i8kfan\s+([0-3-])\s+([0-3-])\s*\n"
                     r"(?!\s*-1\s+-1\s*$)", re.MULTILINE)  # i8kmon -v's own "i8kfan - 0" lines: its passes
_SET = (("fan2", 2), ("fan1", 1))  # i8kfan's left, then right


def state_pwm(state: int) -> int:
    """A fan state as dell-smm-hwmon's pwm (0-255): the state scaled against the highest, a TURBO state (3) as it."""
    return round(min(state, MAX_STATE) * 255 / MAX_STATE)


def state_percent(state: int) -> float:
    """A fan state as the duty in % its pwm reads."""
    return round(100.0 * min(state, MAX_STATE) / MAX_STATE, 1)

def read(text: str) -> list[Reading]:
    if "i8k" not in text.lower():
        return []
    found: list[Reading] = [Reading(CHIP, "CPU", float(cpu), f"{cpu} °C", "c", "temp1_input", n)
                            for n, (cpu, _, _) in enumerate(_passes(text))]
    lines = [[int(g) for g in match.groups()] for match in _LINE.finditer(text)]
    there = [(label, n) for i, (label, n) in enumerate(_FANS)
             if any(line[1 + i] >= 0 or line[3 + i] >= 0 for line in lines)]
    fans = there if there else list(_FANS)  # neither answers: both kept, their -1 said as speeds not read
    listed = _listed(text)
    named = dict(zip(sorted(n for _, n in fans), listed, strict=True)) if len(listed) == len(fans) else {}
    for snapshot, (cpu, *values) in enumerate(lines):
        if 0 < cpu < 128:  # -1: the SMM call failed; the driver's temperatures are 8-bit
            found.append(Reading(CHIP, "CPU", float(cpu), f"{cpu} °C", "c", "temp1_input", snapshot))
        for i, (label, n) in enumerate(_FANS):
            found += _fan(named.get(n), label, n, values[i], values[2 + i], snapshot, (label, n) in fans)
    return found


def _fan(listed: str | None, label: str, n: int, state: int, speed: int, snapshot: int,
         there: bool) -> list[Reading]:
    """One fan's speed and state, as the listed fan of its place where the listing names it, else as hwmon's fanN;
    a fan the SMM answers nothing for beside one it does, as a slot most likely empty (said, never dropped: if a
    fan is there, its speed is not read)."""
    name, attrs = (listed, ("label_input", "label_pwm")) if listed else (label, (f"fan{n}_input", f"pwm{n}"))
    found = [Reading(CHIP, name, float(speed), f"{speed} RPM", "rpm", attrs[0], snapshot,
                     {} if there else {"status": "not present"})]
    if 0 <= state <= MAX_STATE:
        found.append(Reading(CHIP, name, float(state_pwm(state)), f"state {state}", None, attrs[1], snapshot))
    return found


_LISTING = re.compile(r"^(?:dell_smm|i8k)-\S+\s*\n(?:Adapter:[^\n]*\n)?((?:[^\n]+\n?)*)", re.MULTILINE)
_LISTED_FAN = re.compile(r"^([^:\n]+?):\s+-?\d+ RPM\b", re.MULTILINE)


def _listed(text: str) -> list[str]:
    """The fans the driver's sensors listing names, in its order (its channels' order), of its first block."""
    block = _LISTING.search(text)
    return _LISTED_FAN.findall(block.group(1)) if block else []


def control(text: str) -> list[Reading]:
    """The BIOS's fan control turned off (both fans set by hand: pwm_enable 1) and each state i8kfan was given, as
    the dell-smm-hwmon driver's readings of them: read beside any format's readings, as what was done to them."""
    found: list[Reading] = []
    if _BIOS_OFF.search(text):
        found += [Reading(CHIP, label, 1.0, "BIOS CONTROL DISABLED", None, f"pwm{n}_enable") for label, n in _SET]
    for match in _I8KFAN.finditer(text):
        for (label, n), state in zip(_SET, match.groups(), strict=True):
            if state.isdigit() and int(state) <= MAX_STATE:
                found.append(Reading(CHIP, label, float(state_pwm(int(state))), f"i8kfan state {state}", None,
                                     f"pwm{n}"))
    return found


def _passes(text: str) -> list[tuple[int, int, int]]:
    """(the CPU's temperature, the left and the right fan's state) of each of i8kmon's passes that read them."""
    return [(int(m.group(1)), int(m.group(2)), int(m.group(3))) for m in _PASS.finditer(text)
            if 0 < int(m.group(1)) < 128]


def decisions(text: str) -> tuple[Decision, ...]:
    """The state i8kmon -v logged leaving each fan in at each pass, as the duty dell-smm-hwmon reads of it, with the
    CPU temperature it read (a state the SMM call could not read, -1, is left out)."""
    return tuple(Decision("i8kmon", float(cpu), 0.0, None, n, percent=state_percent(state),
                          why="curve", what=fan)
                 for n, (cpu, *states) in enumerate(_passes(text))
                 for fan, state in zip(("left fan", "right fan"), states, strict=True) if 0 <= state <= MAX_STATE)
