"""Dell_iDRAC_fan_controller's log (``docker logs`` of the container, or the script run in a terminal). The script
drives a PowerEdge's fans through its iDRAC, from the CPUs' temperatures alone: while every CPU reads at or below its
threshold ("CPU temperature threshold: 50°C"), it turns the iDRAC's own fan control off (``ipmitool raw 0x30 0x30
0x01 0x00``) and sets one duty for every fan (``raw 0x30 0x30 0x02 0xff <duty>``: "User static fan control profile
(5%)", or the duty its interpolation chose); when a CPU reads above it, or cannot be read, it gives the fans back to
the iDRAC (``raw 0x30 0x30 0x01 0x01``: "Dell default dynamic fan control profile"). In monitoring-only mode it
sets nothing ("(monitoring only, not applied)"). Each pass prints a row: the date, the inlet's, each CPU's and the
exhaust's temperatures, the profile, on 13th-generation servers and older the third-party PCIe card response it
sent ("Enabled" or "Disabled"), and a comment where the profile changed (its functions.sh and
Dell_iDRAC_fan_controller.sh: print_temperature_array_line, build_header). A row's temperatures are a snapshot of
the BMC's sensors; its profile is a decision (``app.fans.facts.Decision``), the response a setting of the iDRAC."""

from __future__ import annotations

import re

from ..facts import ONE_DUTY, Decision, Reading, Setting

DAEMON = "Dell_iDRAC_fan_controller"
FIRMWARE = "firmware"  # a row's profile: the iDRAC's own control (Dell's default dynamic profile)
WATCHING = "watching"  # monitoring-only mode: nothing set, the iDRAC's own control runs the fans
FIXED = ONE_DUTY  # one duty the script set for every fan
REFUSED = "refused"  # a duty the script set that the iDRAC refused: its own control runs the fans

_ROW = re.compile(r"^\s*(\d{2}-\d{2}-\d{2,4} \d{2}:\d{2}:\d{2})\s+((?:(?:-?\d+|-)\s*°C\s*)+)(.*)$", re.MULTILINE)
_TEMP = re.compile(r"(-?\d+|-)\s*°C")
_HEADER = re.compile(r"^\s*Date & time\s+(.*?)\s+Active fan speed profile", re.MULTILINE)
_THRESHOLD = re.compile(r"CPU temperature threshold: (-?\d+)\s*°C|\(<= (-?\d+)\s*°C\)")
_OBJECTIVE = re.compile(r"Fan speed objective: (\d{1,3})\s*%")
_DUTY = re.compile(r"\((\d{1,3})\s*%(?:\)| @)")
_DYNAMIC = "Dell default dynamic fan control profile"
_NOT_APPLIED = "monitoring only"
_RESPONSE = re.compile(r"\b(Enabled|Disabled)\b")
# the iDRAC refused a fan command: ipmitool's own error (cmd=0x30: manual control or the duty; cmd=0xce: the card
# response), or the script's (its newer releases: "Failed to enable manual fan control", "Failed to set fan speed")
_REFUSED_RAW = re.compile(r"Unable to send RAW command \(channel=\S+ netfn=0x30 lun=\S+ cmd=(0x[0-9a-f]+)",
                          re.IGNORECASE)
_FAILED = re.compile(r"Failed to (?:enable manual fan control|set fan speed)")


def _columns(header: list[str], count: int) -> list[str]:
    """The names of a row's ``count`` temperatures: its header's, or the script's layout (the inlet, each CPU, the
    exhaust) where no header of as many columns is pasted."""
    if len(header) == count:
        return header
    if count <= 2:
        return ["Inlet", "CPU 1"][:count]
    return ["Inlet", *(f"CPU {n}" for n in range(1, count - 1)), "Exhaust"]


def _rows(text: str) -> list[tuple[list[tuple[str, str]], str]]:
    """Each row's (column, temperature as printed) pairs and what follows them (the profile, the response, the
    comment)."""
    found: list[tuple[list[tuple[str, str]], str]] = []
    if "fan control profile" not in text and "fan curve" not in text:
        return found
    first = _HEADER.search(text)
    header = [n for n in re.split(r"\s{2,}", first.group(1).strip()) if n] if first is not None else []
    for m in _ROW.finditer(text):
        temps = _TEMP.findall(m.group(2))
        found.append((list(zip(_columns(header, len(temps)), temps, strict=True)), m.group(3)))
    return found


def read(text: str) -> list[Reading]:
    """Each row's temperatures, a snapshot each; "-" (a sensor the script could not read) is no reading."""
    return [Reading("bmc", name, float(value) if value != "-" else None, f"{value}°C", "c", None, n)
            for n, (temps, _) in enumerate(_rows(text)) for name, value in temps]


def refused_raw(text: str) -> set[str]:
    """The OEM commands (netfn 0x30) ``text`` shows the BMC refusing, by their cmd byte ("0x30", "0xce", "0x45"), as
    ipmitool prints its refusal."""
    return {m.group(1).lower() for m in _REFUSED_RAW.finditer(text)}


def refused_fan_command(text: str) -> bool:
    """Whether ``text`` shows the iDRAC refusing a fan command: ipmitool's refusal of netfn 0x30 cmd 0x30, or the
    script's own "Failed to ..." line."""
    return "0x30" in refused_raw(text) or bool(_FAILED.search(text))


def _threshold(text: str) -> float | None:
    found = [float(m.group(1) or m.group(2)) for m in _THRESHOLD.finditer(text)]
    return found[-1] if found else None


def decisions(text: str) -> tuple[Decision, ...]:
    """Each row's profile: the duty it set every fan to (0xff: all of the BMC's fans), or the iDRAC's own control,
    for its hottest CPU (or its hottest reading where no CPU was read), with the threshold past which it gives the
    fans back and, where it gave them back, the duty it sets once the CPUs are cool again (its objective)."""
    limit = _threshold(text)
    objective = [float(m.group(1)) for m in _OBJECTIVE.finditer(text)]
    refused = refused_fan_command(text)
    steps = []
    for n, (temps, rest) in enumerate(_rows(text)):
        read_c = [float(v) for name, v in temps if v != "-" and name.upper().startswith("CPU")] or \
            [float(v) for _, v in temps if v != "-"]
        duty = _DUTY.search(rest)
        if _NOT_APPLIED in rest:
            why, percent = WATCHING, None
        elif _DYNAMIC in rest or duty is None:
            why, percent = FIRMWARE, None
        else:
            why, percent = (REFUSED if refused else FIXED), float(duty.group(1))
        steps.append(Decision(DAEMON, max(read_c, default=0.0), 0.0, None, n, percent=percent, why=why,
                              drives="bmc", asked=objective[-1] if objective and percent is None else None,
                              limit_c=limit))
    return tuple(steps)


def settings(text: str) -> tuple[Setting, ...]:
    """The third-party PCIe card response the last row says it sent, unless the iDRAC refused that command (a 12th
    generation's has none)."""
    rows = _rows(text)
    if not rows or "0xce" in refused_raw(text):
        return ()
    sent = _RESPONSE.search(rows[-1][1])
    return (Setting("iDRAC", "ThirdPartyPCIFanResponse", sent.group(1)),) if sent else ()
