"""Readings in JSON: ``sensors -j`` (chip -> feature label -> ``fan1_input``...), ``liquidctl --json`` (devices
with a ``status`` list of key, value, unit), Redfish ``Thermal`` (``Fans``, ``Temperatures``) and
``ThermalSubsystem`` fan collections, and any other document by its keys (a leaf whose path names a fan, an RPM or
a temperature, as ``amd-smi --json`` writes them)."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator

from ..facts import Reading, Unit
from ..values import parse

MAX_DEPTH = 32  # a document nested deeper than any reader writes is not walked further


def read(text: str) -> list[Reading]:
    """The readings of the JSON document ``text`` holds (after any prompt line), or [] where it holds none."""
    found = document(text)
    if found is None:
        return _loose(text) if "{" in text else []
    return list(_walk(found))


def document(text: str) -> object | None:
    """The JSON document ``text`` holds from its first bracket (after a prompt line or a post's words): whole, as
    Python printed it, or cut short; None where there is none."""
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        return None
    found = _from(text[start:])
    if found is None:  # a bracket in the line before it ("pprint(health['fans'])"): from a line that opens one
        line = _OPENS_LINE.search(text, start + 1)
        found = _from(text[line.start(1):]) if line is not None else None
    return found


_OPENS_LINE = re.compile(r"^\s*([\[{])", re.MULTILINE)


def _from(text: str) -> object | None:
    try:
        found: object = json.JSONDecoder().raw_decode(text)[0]  # a stderr line after it is not its own
    except (ValueError, RecursionError):
        return _python_literal(text) or _cut_short(text)
    return found


def _python_literal(text: str) -> object | None:
    """A document printed by Python (``pprint(response.json())``: single quotes, True, None), read as the literal
    it is (``ast.literal_eval`` evaluates no code); None where it is not one."""
    if not re.match(r"[\[{]\s*[\[{]?\s*'", text):
        return None
    try:
        document: object = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return document


def _cut_short(text: str) -> object | None:
    """A document cut short (a post's first screenful): every member complete before the cut, the open brackets
    closed after it (RFC 8259: a member ends at the comma that separates it from the next); None where even that is
    not a document."""
    stack: list[str] = []
    in_string = escaped = False
    last: tuple[int, str] | None = None  # where the text stood after the last whole member, and what it left open
    for n, c in enumerate(text):
        if in_string:
            escaped, in_string = (False, True) if escaped else (c == "\\", c != '"')
        elif c == '"':
            in_string = True
        elif c in "[{":
            if len(stack) >= MAX_DEPTH:
                return None
            stack.append("]" if c == "[" else "}")
        elif c in "]}":
            if not stack or stack.pop() != c:
                return None
            if not stack:
                return None  # whole after all: raw_decode refused it for another reason
        elif c == "," and stack:
            last = (n, "".join(reversed(stack)))
    if last is None:
        return None
    try:
        document: object = json.loads(text[:last[0]] + last[1])
    except (ValueError, RecursionError):
        return None
    return document


# a number is whole only where something follows it: the one the cut ends on may have lost digits
_KEY = re.compile(r'"([^"]{1,80})"\s*:\s*(\{|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?=\s*[,}\]\n]))|(\})')


def _loose(text: str) -> list[Reading]:
    """``sensors -j`` cut short (a post's excerpt, a line cut at its end): each ``"key": {`` opens a level, each
    ``}`` closes one, and a ``"fan1_input": 1278.000`` under a chip and a feature is a reading of them."""
    found: list[Reading] = []
    stack: list[str] = []
    for key, opened, closed in _KEY.findall(text):
        if closed:
            if stack:
                stack.pop()
        elif opened == "{":
            stack.append(key)
        elif len(stack) >= 2 and re.fullmatch(r"(fan|temp|pwm)\d+_\w+", key):
            found += _sensors(stack[0], {stack[-1]: {key: float(opened)}})
    return found


CONFIGURATIONS = ("FanConfigurations",)  # a fan daemon's settings (NBFC's model configuration): no reading in it


def _walk(document: object) -> Iterator[Reading]:
    if isinstance(document, dict) and any(k in document for k in CONFIGURATIONS):
        return  # its thresholds and registers are settings, read by the daemon's own reader (app.collect)
    if isinstance(document, dict) and any(k in document for k in ("Fans", "Temperatures")):
        yield from _redfish(document)
    elif isinstance(document, list) and all(isinstance(d, dict) and "status" in d for d in document):
        for device in document:
            yield from _liquidctl(device)
    elif isinstance(document, dict) and _hpilo(document):
        yield from _hpilo(document)
    elif isinstance(document, dict) and document and all(isinstance(v, dict) and "Adapter" in v
                                                         for v in document.values()):
        for chip, features in document.items():
            yield from _sensors(chip, features)
    else:
        yield from _leaves(document, (), 0)


def _hpilo(document: dict[str, object]) -> list[Reading]:
    """python-hpilo's get_embedded_health (its ``fans`` and ``temperature``, or the ``fans`` alone): each a dict of
    its label, its reading as a (value, unit) pair (``speed``: (23, 'Percentage'); ``currentreading``: (40,
    'Celsius')) and the iLO's status ("OK", "Degraded", "Failed", "Not Installed")."""
    groups = [document.get("fans"), document.get("temperature")] if "fans" in document else [document]
    found = []
    for group in groups:
        for item in group.values() if isinstance(group, dict) else []:
            reading = item.get("speed", item.get("currentreading")) if isinstance(item, dict) else None
            if not (isinstance(reading, tuple) and len(reading) == 2):
                continue
            value, unit, raw = parse(f"{reading[0]} {_UNIT_WORDS.get(str(reading[1]), reading[1])}")
            status = str(item.get("status", "")).lower()
            found.append(Reading("bmc", str(item.get("label", "fan")), value, raw, unit, None, 0,
                                 {"status": "absent" if status == "not installed" else status} if status else {}))
    return found


def _sensors(chip_header: str, features: dict[str, object]) -> Iterator[Reading]:
    chip = chip_header.split("-")[0]
    for label, subfeatures in features.items():
        if not isinstance(subfeatures, dict):
            continue
        for attr, value in subfeatures.items():
            if isinstance(value, (int, float)) and re.fullmatch(r"(fan|temp|pwm)\d+(_\w+)?", attr):
                unit: Unit | None = "rpm" if attr.startswith("fan") and attr.endswith(("_input", "_min", "_max",
                                                                                         "_target")) else \
                    "c" if attr.startswith("temp") and not attr.endswith(("_alarm", "_fault", "_type")) else None
                yield Reading(chip, label, float(value), str(value), unit, attr)


def _liquidctl(device: dict[str, object]) -> Iterator[Reading]:
    chip = str(device.get("description") or "liquidctl")
    status = device.get("status")
    for item in status if isinstance(status, list) else []:
        if isinstance(item, dict) and isinstance(item.get("value"), (int, float)):
            value, unit, raw = parse(f"{item['value']} {item.get('unit', '')}")
            yield Reading(chip, str(item.get("key", "")), value, raw, unit)


# a fan's reading by the schema's names: Reading and ReadingUnits (Thermal v1_1_0 on), ReadingRPM (v1_0_0), and HPE
# iLO 4's CurrentReading with Units ("Percent" or "RPM"; its Temperatures: CurrentReading, Units "Celsius")
_FAN_READING = ("Reading", "ReadingRPM", "CurrentReading")


def _redfish(document: dict[str, object]) -> Iterator[Reading]:
    for fan in _items(document.get("Fans")):
        reading = _redfish_fan(fan)
        if reading is not None:
            yield reading
    for sensor in _items(document.get("Temperatures")):
        value = sensor.get("ReadingCelsius", sensor.get("CurrentReading") if sensor.get("Units") == "Celsius" else None)
        if isinstance(value, (int, float)):
            yield Reading("bmc", str(sensor.get("Name", "temperature")), float(value), str(value), "c")


def _redfish_fan(fan: dict[str, object]) -> Reading | None:
    name = str(fan.get("Name") or fan.get("FanName") or fan.get("MemberId") or "fan")
    key = next((k for k in _FAN_READING if k in fan), "Reading")
    value = fan.get(key)
    unit = str(fan.get("ReadingUnits") or fan.get("Units") or "RPM")
    status = fan.get("Status")
    # Redfish's Resource.Status: State "Absent" is a slot with no fan; Health "Critical" or "Warning" is the
    # service's own judgement of a fan that is there (the status a fault rule reads, as a BMC's cr)
    state = str(status.get("State") or "").lower() if isinstance(status, dict) else ""
    health = str(status.get("Health") or "").lower() if isinstance(status, dict) else ""
    if key not in fan and state != "absent":
        return None  # nothing read of it (a member cut short before its reading)
    extra: dict[str, float | str] = {"status": state if state in ("absent", "disabled") or not health else health}
    if isinstance(fan.get("LowerThresholdCritical"), (int, float)):
        extra["lcr"] = float(fan["LowerThresholdCritical"])  # type: ignore[arg-type]  # checked on the line above
    number = float(value) if isinstance(value, (int, float)) else None
    return Reading("bmc", name, number, str(value), "rpm" if unit.upper() == "RPM" else "%", None, 0, extra)


def _items(value: object) -> list[dict[str, object]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _leaves(node: object, path: tuple[str, ...], depth: int) -> Iterator[Reading]:
    """Any document: a number whose key path names a fan, a pump, an RPM or a temperature."""
    if depth > MAX_DEPTH:
        return
    if isinstance(node, dict):
        if "value" in node and isinstance(node["value"], (int, float)) and "unit" in node:
            yield from _leaf(path, f"{node['value']} {node['unit']}")
            return
        for key, child in node.items():
            yield from _leaves(child, (*path, str(key)), depth + 1)
    elif isinstance(node, tuple) and len(node) == 2 and isinstance(node[0], (int, float, str)) and \
            isinstance(node[1], str):  # python-hpilo's (value, unit): ('23', 'Percentage'), (40, 'Celsius')
        yield from _leaf(path, f"{node[0]} {_UNIT_WORDS.get(node[1], node[1])}")
    elif isinstance(node, list):
        for n, child in enumerate(node):
            yield from _leaves(child, (*path, str(n)), depth + 1)
    elif isinstance(node, (int, float, str)) and not isinstance(node, bool):
        yield from _leaf(path, str(node))


_UNIT_WORDS = {"Percentage": "%", "Celsius": "°C", "Fahrenheit": "°F"}  # python-hpilo's units, as the iLO names them
# a key path naming a reading's limit, not the reading ("edge_critical", "fan max", "shutdown_temp")
_LIMIT = re.compile(r"(\b|_)(thresholds?|limit|crit(ical)?|emerg(ency)?|hyst(eresis)?|warning|failure|max(imum)?|"
                    r"min(imum)?|target|shutdown|slowdown)(\b|_)")


def _leaf(path: tuple[str, ...], text: str) -> Iterator[Reading]:
    words = " ".join(path).lower()
    if _LIMIT.search(words):
        return
    value, unit, raw = parse(text)
    if value is None and "fan" not in words:
        return
    if unit is None:
        unit = "rpm" if "rpm" in words else "c" if re.search(r"temp", words) else "%" if "fan" in words else None
    if unit is not None and re.search(r"fan|pump|rpm|temp", words):
        yield Reading(None, " ".join(path[-3:]), value, raw, unit)
