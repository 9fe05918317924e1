"""What a fan daemon logged it decided, and the levels it decides between: thinkfan's ``Temperatures(bias): 45(259),
0(0) -> level 7`` lines (each sensor's reading and the bias thinkfan added for its rate of change, then the level
chosen) and its levels, in the legacy ``(level, low, high)`` form or the YAML ``- [level, low, high]`` one; and
what a GPU fan daemon logged it read, line by line: nvfancontrol's ``Temp: 54; Speed: [871] RPM ([26]%)`` (-d),
each line a snapshot of the card's temperature, fan speed and duty; and what fan2go measured of each fan when it set
it up (``PWM settings of fan 'cpu': Min 0, Start 0, Max 0``, or ``fan2go fan init``'s Min/Start/Max PWM table)."""

from __future__ import annotations

import re

from ..facts import Calibration, DaemonEvent, Decision, Level, Reading
from .pwmconfig import FULL_SPEED

_STEP = re.compile(r"Temperatures\(bias\):\s*(.*?)->\s*(?:Fans:\s*)?level\s*(\d+|auto|full-speed|disengaged)",
                   re.IGNORECASE)
_PAIR = re.compile(r"(-?\d+)\((-?\d+)\)")
_LEVEL = re.compile(r"^\s*(?:-\s*)?[(\[]\s*(\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*[)\]]\s*$", re.MULTILINE)


def decisions(text: str) -> tuple[tuple[Decision, ...], tuple[Level, ...]]:
    """thinkfan's decisions in ``text`` in turn, and the levels its configuration declares."""
    found: list[Decision] = []
    for n, step in enumerate(_STEP.finditer(text)):
        pairs = [(float(t), float(b)) for t, b in _PAIR.findall(step.group(1))]
        if not pairs:
            continue
        celsius, bias = max(pairs, key=lambda p: p[0] + p[1])  # thinkfan follows its hottest biased reading
        level = step.group(2).lower()
        found.append(Decision("thinkfan", celsius, bias, int(level) if level.isdigit() else None, n, pairs[0][0],
                              named="" if level.isdigit() else level))
    levels = tuple(Level(int(m.group(1)), float(m.group(2)), float(m.group(3))) for m in _LEVEL.finditer(text))
    return tuple(found), levels


_NVFAN = re.compile(r"Temp:\s*(\d+);\s*Speed:\s*\[([\d, ]+)\]\s*RPM\s*\(\[([\d, ]+)\]%\)(?:[^\n]*?Mode:\s*(\w+))?")
# nvfancontrol's Mode: Manual where it drives the fan (its curve, through the driver's manual control), Auto where it
# leaves the fan to the card's own policy (its README: a fan already spinning in automatic control is left alone
# unless it runs with --force)
_NVFAN_MODE = {"manual": "daemon", "auto": "firmware"}
_ADAPTER = re.compile(r"NVIDIA graphics adapter #(\d+):\s*(.+?)\s*$", re.MULTILINE)


def nvfancontrol(text: str) -> list[Reading]:
    """nvfancontrol's debug lines as readings of the card's first fan and its temperature, one snapshot a line."""
    adapter = _ADAPTER.search(text)
    gpu = {"gpu": float(adapter.group(1)) if adapter else 0.0, "name": adapter.group(2) if adapter else ""}
    found: list[Reading] = []
    for n, line in enumerate(_NVFAN.finditer(text)):
        celsius, rpm, duty = line.group(1), line.group(2).split(",")[0].strip(), line.group(3).split(",")[0].strip()
        mode = _NVFAN_MODE.get((line.group(4) or "").lower())
        fan = {**gpu, "controller": mode} if mode else gpu
        found += [Reading("nvidia", "temperature.gpu", float(celsius), celsius, "c", None, n, gpu),
                  Reading("nvidia", "fan.speed", float(rpm), f"{rpm} RPM", "rpm", None, n, fan),
                  Reading("nvidia", "fan.speed", float(duty), f"{duty} %", "%", None, n, fan)]
    return found


_FAN2GO = re.compile(r"PWM settings of fan '([^']+)':\s*Min (\d+),\s*Start (\d+),\s*Max (\d+)")
_FAN2GO_TABLE = re.compile(r"^\s*(\S[^\n]*?)\s*\n\s*\n?\s*Min PWM\s+(\d+)\s*\n\s*Start PWM\s+(\d+)\s*\n"
                           r"\s*Max PWM\s+(\d+)", re.MULTILINE)


# fan2go's older releases: "Start PWM of cpu: 0" then "Max PWM of cpu: 255" (its lowest pwm is the one it starts at)
_FAN2GO_OLDER = re.compile(r"Start PWM of (\S+): (\d+)\s*\n(?:.*\n)??.*?Max PWM of \1: (\d+)")


def calibrations(text: str) -> tuple[Calibration, ...]:
    """fan2go's measured pwm range of each fan, the last one logged for a fan standing; pwmconfig's outputs that no
    fan followed."""
    found = {m.group(1): Calibration("fan2go", m.group(1), float(m.group(2)), float(m.group(3)), float(m.group(4)))
             for pattern in (_FAN2GO, _FAN2GO_TABLE) for m in pattern.finditer(text)}
    found |= {m.group(1): Calibration("fan2go", m.group(1), float(m.group(2)), float(m.group(2)), float(m.group(3)))
              for m in _FAN2GO_OLDER.finditer(text) if m.group(1) not in found}
    return (*found.values(), *_pwmconfig(text))


_PWM_TEST = re.compile(r"^Testing pwm control (\S+) \.\.\.\s*$", re.MULTILINE)
_PWM_FAN = re.compile(r"^\s+(\S+) \.\.\. speed was (\d+) now (\d+)\s*\n\s+(no correlation|.*)$", re.MULTILINE)


def _pwmconfig(text: str) -> list[Calibration]:
    """pwmconfig(8) sets each pwm output to 0 and watches every fan input: an output after which every fan reads
    "no correlation" drives none of the fans it reads."""
    tests = list(_PWM_TEST.finditer(text))
    found = []
    for n, test in enumerate(tests):
        block = text[test.end():tests[n + 1].start() if n + 1 < len(tests) else len(text)]
        fans = _PWM_FAN.findall(block)
        if fans and all(verdict.strip() == "no correlation" for *_, verdict in fans):
            found.append(Calibration("pwmconfig", test.group(1), 0.0, 0.0, 0.0,
                                     tuple((fan, float(was), float(now)) for fan, was, now, _ in fans)))
    return found


_ABORTED = re.compile(r"Aborting, restoring fans")
MISSING_NAMED = 3  # the files gone a sentence names; the rest are counted
_FANCONTROL_ERROR = re.compile(r"^(?:.*?fancontrol\[\d+\]:\s*)?(Error [^\n]{1,160}|[^\n]*No such file or "
                               r"directory)\s*$", re.MULTILINE)
_OUTDATED = re.compile(r"Configuration appears to be outdated, please run pwmconfig again")
# fancontrol's CheckFiles: one line a file its configuration names that is not there, then its summary; it then
# exits before it enables any pwm (the lm-sensors fancontrol script, and its C port)
_MISSING_FILE = re.compile(r"Error: [Ff]ile (\S+) doesn't exist")
_MISSING = re.compile(r"At least one referenced file is missing")


# pwmconfig's exits before it tests anything (the lm-sensors pwmconfig script): no hwmon device at all, none with a
# pwmN file, none with a fanN_input, or pwm files none of which is writable (its older releases)
_NOTHING = re.compile(r"No sensors found! \(modprobe sensor modules\?\)|There are no pwm-capable sensor modules "
                      r"installed|There are no fan-capable sensor modules installed|There are no usable PWM outputs")
_NOTHING_WHAT = {"No sensors": "no-sensors", "There are no pwm": "no-pwm", "There are no fan": "no-fan",
                 "There are no usable": "not-writable"}


# pwmconfig's test of an output's modes (its pwmdisable): it writes 0 (full speed) to pwmN_enable, then 1 (manual),
# and where it reads neither back it prints what stays ("hwmon8/pwm1_enable stuck to 99") and skips that output
_STUCK = re.compile(r"^\s*((?:hwmon\d+/)?(?:device/)?pwm\d+)_enable stuck to (\S*)\s*\n(?:[^\n]*\n){0,2}?"
                    r"Manual control mode not supported, skipping", re.MULTILINE)


# thinkfan's exits for a fan it cannot drive (its messages.h): thinkpad_acpi loaded without fan_control=1, or no
# permission to write the fan's control
_THINKFAN_NO_CONTROL = re.compile(r"Module thinkpad_acpi doesn't seem to support fan_control|No permission to write to "
                                  r"\S+\. Thinkfan needs to be run as root")


def events(text: str) -> tuple[DaemonEvent, ...]:
    """fancontrol's exits its log prints (the lm-sensors fancontrol script): "Aborting, restoring fans..." after an
    error, with the last error line before it; "Configuration appears to be outdated" when it refuses to start, and
    "Error: file X doesn't exist" (with "At least one referenced file is missing") when it refuses for files gone;
    pwmconfig's "Giving the fans some time to reach full speed...", printed once it set its outputs to full, and its
    exits before it tests anything: no hwmon device, none with a pwm output or a fan input, none writable;
    thinkfan's exit on a fan it cannot drive (thinkpad_acpi without fan_control=1, or no permission)."""
    found: list[tuple[int, DaemonEvent]] = []
    for abort in _ABORTED.finditer(text):
        errors = [m.group(1).strip() for m in _FANCONTROL_ERROR.finditer(text[:abort.start()])]
        found.append((abort.start(), DaemonEvent("fancontrol", "aborted", errors[-1] if errors else "")))
    found += [(m.start(), DaemonEvent("fancontrol", "outdated")) for m in _OUTDATED.finditer(text)]
    missing = list(dict.fromkeys(m.group(1) for m in _MISSING_FILE.finditer(text)))
    ends = [m.start() for m in (*_MISSING_FILE.finditer(text), *_MISSING.finditer(text))]
    if ends:
        found.append((max(ends), DaemonEvent("fancontrol", "missing", ", ".join(missing[:MISSING_NAMED]),
                                             values=(("count", float(len(missing))),))))
    found += [(m.start(), DaemonEvent("pwmconfig", "left-full")) for m in FULL_SPEED.finditer(text)]
    found += [(m.start(), DaemonEvent("thinkfan", "no-fan-control", "permission" if "root" in m.group(0) else
                                      "fan_control")) for m in _THINKFAN_NO_CONTROL.finditer(text)]
    found += [(m.start(), DaemonEvent("pwmconfig", "nothing-to-drive", next(
        v for k, v in _NOTHING_WHAT.items() if m.group(0).startswith(k)))) for m in _NOTHING.finditer(text)]
    found += _no_manual(text, found)
    last = (max(found, key=lambda f: f[0])[1],) if found else ()  # the last one stands
    return (*last, *_fan2go_stalled(text), *_fan2go_overridden(text))


def _no_manual(text: str, found: list[tuple[int, DaemonEvent]]) -> list[tuple[int, DaemonEvent]]:
    """The outputs pwmconfig could put neither at full speed nor under manual control, as one event where its last
    stuck output is: the outputs, the mode the last stayed in, and whether it then found no output it could drive
    ("There are no usable PWM outputs", its exit after them: said with them, so taken out of ``found``)."""
    stuck = list(_STUCK.finditer(text))
    if not stuck:
        return []
    outputs = list(dict.fromkeys(m.group(1) for m in stuck))
    after = [i for i, (at, event) in enumerate(found) if event.detail == "not-writable" and at > stuck[-1].start()]
    for i in reversed(after):
        del found[i]
    return [(stuck[-1].start(), DaemonEvent("pwmconfig", "no-manual", ", ".join(outputs[:MISSING_NAMED]), values=(
        ("count", float(len(outputs))), ("mode", stuck[-1].group(2) or "unreadable"),
        ("usable", "none" if after else "not said"))))]


# fan2go's controller.go: a fan that reads no speed even at its highest pwm ends its controller (ErrFanStalledAtMaxPwm),
# which gives the fan back to the mode it found it in, or full speed where that fails
_STALLED = re.compile(r"CRITICAL: Fan (\S+) avg\. RPM is (-?\d+), even at PWM value (\d+)")
# fan2go's check that nothing else wrote the pwm it set: older releases "Last set PWM value was: 134 but is now: 125",
# newer "Last set PWM value was '70', expected reported pwm '153' but was '70'" (the value its measured map of what
# the driver reads back expects)
_THIRD_PARTY = re.compile(r"PWM of (\S+?) was changed by (?:a )?third party! Last set PWM value was:? '?(\d+)'?"
                          r"(?:, expected reported pwm '(\d+)')? but (?:is now:|was) '?(\d+)'?")
# its write of pwm_enable 1 (manual) was refused: the output may stay under the chip's own automatic control
_NO_MANUAL = re.compile(r"(?:Could not enable (?:manual fan mode|fan control) on (\S+?),|Unable to set Fan Mode of "
                        r"'([^']+)' to \\?\"?1\b)")


def _fan2go_stalled(text: str) -> list[DaemonEvent]:
    last = {m.group(1): m for m in _STALLED.finditer(text)}
    return [DaemonEvent("fan2go", "stalled-at-max", fan=fan, values=(("rpm", float(m.group(2))),
                                                                       ("pwm", float(m.group(3)))))
            for fan, m in last.items()]


def _fan2go_overridden(text: str) -> list[DaemonEvent]:
    """fan2go's third-party warnings as one event: the first fan's last warning (what it set, expected and read), how
    many were logged, the fans they name, and whether fan2go logged it could not take those fans into manual mode."""
    warnings = list(_THIRD_PARTY.finditer(text))
    if not warnings:
        return []
    fans = list(dict.fromkeys(m.group(1) for m in warnings))
    first = [m for m in warnings if m.group(1) == fans[0]][-1]
    refused = {a or b for a, b in _NO_MANUAL.findall(text)}
    values: list[tuple[str, float | str]] = [("set", float(first.group(2))), ("read", float(first.group(4))),
                                             ("times", float(len(warnings))), ("fans", ", ".join(fans))]
    if first.group(3) is not None:
        values.append(("expected", float(first.group(3))))
    if refused & set(fans):
        values.append(("no_manual", ", ".join(f for f in fans if f in refused)))
    return [DaemonEvent("fan2go", "overridden", fan=fans[0], values=tuple(values))]
