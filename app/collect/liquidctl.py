"""AIO coolers and fan hubs through ``liquidctl status`` (its ``--json`` or its text tree): a fan source.

Each device lists speeds (``Fan 1 speed``, ``Fan speed 3``, ``Pump speed``: rpm), duties (``Fan 1 duty``: %) and a
liquid or water temperature. What the cooler's firmware follows is not said; by design it is the liquid, and that
is said as a guess. A pump does not stop while the cooler runs: a pump at 0 rpm is a speed liquidctl cannot read
(or a failed pump), never "at rest". A fan channel at 0 rpm with no duty is an empty channel, unless the device says
a fan is on it: its initialization lists what it detects on each connector (the Commander Core's "Fan port 1
connected Yes", the Commander Pro's "Fan 1 control mode PWM", N/A for none: liquidctl's corsair-commander guides),
and a hub's status may read the 12 V rail it powers its fans from ("+12V rail 12.06 V").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from ..core.fan import MAX_RPM, Fan, checked
from ..core.jsonvalue import Json, finite, loads, members, number
from ..core.model import HostSensor, frozen_map
from ..core.record import holder, record
from ..core.vocabulary import dead_temperature
from .sources import Reading

LiquidctlRun = Callable[[], str]
UNNAMED = "liquidctl device"  # a device whose line was not pasted, as liquidctl --json names one without a description
# a status row under its device: "├── Fan speed   1190  rpm", the tree's glyphs drawn as "|--" or "`--" by a console
# without them, or as "???" where an encoding without them replaced each with "?"
_TREE = re.compile(r"^\s*(?:[├└]|[|`+]-|\?{2,3}\s)")
_ROW = re.compile(r"^[├└│─|`+?\s-]*([A-Za-z][\w .+/-]*?|\+\d+(?:\.\d+)?V [\w ]+?)\s+(-?\d+(?:\.\d+)?)\s*"
                  r"(rpm|%|°C|C|V)?\s*$")
# what a hub's initialization says is on a connector: a fan (Yes; the mode it drives it in) or nothing (No, N/A)
_CONNECTOR = re.compile(r"^[├└│─|`+?\s-]*(Fan (?:port )?\d+ (?:connected|control mode))\s+(Yes|PWM|DC|No|N/A)\s*$",
                        re.IGNORECASE)
_CHANNEL = re.compile(r"^(fan|pump)\s*(?:port\s*)?(\d*)\s*(speed|duty|connected|control mode)\s*(\d*)$",
                      re.IGNORECASE)
_TWELVE_VOLTS = re.compile(r"\+12\s*v\b", re.IGNORECASE)  # the rail a hub powers its fans from ("+12V rail")


@holder
class _Channel:
    kind: str  # "fan" or "pump"
    number: int
    rpm: int | None = None
    percent: float | None = None
    connected: bool | None = None  # what its device says is on the connector


def parse(text: str) -> list[tuple[str, list[tuple[str, float, str]]]]:
    """(device, [(key, value, unit)]) from ``liquidctl status --json`` or its text tree."""
    stripped = text.lstrip()
    if stripped.startswith("[") and (devices := _json(stripped)) is not None:
        return [(str(d.get("description", UNNAMED)),
                 [(str(s.get("key")), value, str(s.get("unit") or "")) for s in members(d.get("status"))
                  if isinstance(s, dict) and (value := number(s.get("value"))) is not None])
                for d in members(devices) if isinstance(d, dict)]
    # a post with several readings of one device: the last is the device as it was left, with what an earlier one
    # (its initialization) said is on each connector
    merged: dict[str, list[tuple[str, float, str]]] = {}
    for name, rows in listings(text):
        keys = {key for key, _, _ in rows}
        merged[name] = [r for r in merged.get(name, []) if r[2] == "connected" and r[0] not in keys] + rows
    return list(merged.items())


def _json(text: str) -> Json | None:
    """``--json``'s list of devices; None for text that only starts as JSON would ("[sudo] password for ...")."""
    try:
        return loads(text)
    except ValueError:
        return None


def listings(text: str) -> list[tuple[str, list[tuple[str, float, str]]]]:
    """Every listing of a ``liquidctl status`` text tree, in order: a post may hold several of one device (before
    and after a ``set``)."""
    found: list[tuple[str, list[tuple[str, float, str]]]] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith(("#", "$", "ERROR", "··•")) or "liquidctl" in line.lower():
            continue
        tree = _TREE.match(line) is not None
        connector = _CONNECTOR.match(line) if tree else None
        if connector and found:  # a word, not a number: 1 for a fan detected there, 0 for none
            found[-1][1].append((connector.group(1), 1.0 if connector.group(2).lower() in ("yes", "pwm", "dc") else 0.0,
                                 "connected"))
            continue
        match = _ROW.match(line) if tree else None
        if match and not found:  # rows with no device line above them (``liquidctl status | grep -i fan``)
            found.append((UNNAMED, []))
        if match and (value := finite(float(match.group(2)))) is not None:
            found[-1][1].append((match.group(1).strip(), value, match.group(3) or ""))
        elif not tree:
            found.append((line.strip(), []))
    return [(name, rows) for name, rows in found if rows]


def channel(key: str) -> tuple[str, int, str] | None:
    """("fan" or "pump", its number, "speed" or "duty") of a status key ("Fan 1 speed", "Fan speed 1"); None for
    another key (a temperature, a firmware version)."""
    match = _CHANNEL.match(key.strip())
    if match is None:
        return None
    return match.group(1).lower(), int(match.group(2) or match.group(4) or 0), match.group(3).lower()


def reading(devices: Iterable[tuple[str, list[tuple[str, float, str]]]]) -> Reading:
    fans: list[Fan] = []
    temps: list[HostSensor] = []
    for described, rows in devices:
        device = re.sub(r"\s*\((?:experimental|broken|assuming [^)]*)\)", "", described).strip() or described
        broken = "(broken)" in described
        channels: dict[tuple[str, int], _Channel] = {}
        liquid, supply = None, None
        for key, value, unit in rows:
            found = channel(key)
            if found is not None:
                kind, number, what = found
                slot = channels.setdefault((kind, number), _Channel(kind, number))
                if what == "speed":  # raw: _fan range-checks it and keeps why
                    slot.rpm = round(value)
                elif what in ("connected", "control mode"):
                    slot.connected = value > 0
                else:
                    slot.percent = value
            elif unit == "V" and _TWELVE_VOLTS.match(key):
                supply = value
            elif unit in ("°C", "C") and "temperature" in key.lower() and dead_temperature(value) is None:
                liquid = liquid or key
                temps.append(HostSensor(chip=device, label=key, temperature_c=value))
        fans.extend(_fan(device, c, f"{device} {liquid}" if liquid else None, broken, supply)
                    for c in channels.values() if c.rpm is not None or c.percent is not None)
    return Reading(fans=tuple(fans), temperatures=tuple(temps))


def _fan(device: str, channel: _Channel, source: str | None, broken: bool, supply: float | None) -> Fan:
    label = "Pump" if channel.kind == "pump" else f"Fan {channel.number}" if channel.number else "Fan"
    unsupported: dict[str, str] = {}
    rpm = checked(channel.rpm, 0, MAX_RPM, "liquidctl's speed", unsupported, "rpm")
    percent = checked(channel.percent, 0.0, 100.0, "liquidctl's duty", unsupported, "percent")
    dead = None
    if rpm == 0 and percent is None and channel.kind != "pump" and not channel.connected:
        dead = "nothing detected on this connector" if channel.connected is False else \
            "0 rpm: no fan on this channel (or a stopped one)"
    return Fan(id=f"liquidctl:{device}/{label}", chip=device, channel=channel.number, label=label, rpm=rpm,
               raw_rpm=channel.rpm if rpm is None else None, percent=percent, control="unknown",
               controller="the cooler's firmware" + (
                   " (liquidctl marks this device broken: it reads it, but cannot set it)" if broken else ""),
               source=source, source_from="design" if source else None, cools="the liquid loop",
               dead=dead, detected=channel.connected, supply_v=supply, unsupported=frozen_map(unsupported))


@record
class LiquidctlSource:
    """``liquidctl status --json`` (or a capture) as a fan source (``app.collect.sources``)."""

    run: LiquidctlRun
    period_s: float = 10.0
    timeout_s: float = 12.0
    key: str = "liquidctl"
    name: str = "liquidctl status"

    def read(self) -> Reading:
        return reading(parse(self.run()))
