"""Readings in ``|`` tables: ``ipmitool sensor`` (name, reading, unit, status and the six thresholds, LNR to UNR),
``ipmitool sdr`` and ``sdr elist``, ``ipmiutil sensor -c`` and any table whose first row names its columns
(``Name``, ``Reading``/``Value``, ``Unit``, ``Status``); and ``ipmitool sensor get``'s key-value blocks. A BMC's
readings: their chip is "bmc", where the table is a BMC tool's (ipmitool's and ipmiutil's rows, a header with a
status or an event column). A table of two cells a row, a label and its reading with its unit (a post's Markdown
table, ``| CPU Fan | 1200 RPM |``), is read as labelled readings of no named chip, as is a headed table with no
status."""

from __future__ import annotations

import re
from dataclasses import replace

from ..facts import Reading
from ..values import parse, word

_PROMPT = re.compile(r"^\s*(\$|#|\[[^\]]*\]\s*[#$]|\w+@\S+[#$]|>)")  # a shell command piped to grep, not a row
# ipmitool's threshold columns, in its order (ipmitool(1): "sensor list")
THRESHOLDS = ("lnr", "lcr", "lnc", "unc", "ucr", "unr")
_GET_KEYS = {"lower non-recoverable": "lnr", "lower critical": "lcr", "lower non-critical": "lnc",
             "upper non-critical": "unc", "upper critical": "ucr", "upper non-recoverable": "unr"}


def read(text: str) -> list[Reading]:
    """The rows of every ``|`` table in ``text``, and every ``ipmitool sensor get`` block."""
    found = _sensor_get(text)
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines() if
            line.count("|") >= 2 and not _PROMPT.match(line)] or _comma_rows(text)
    header: list[str] | None = None
    for cells in rows:
        names = [_column(c) for c in cells]
        if "name" in names and ({"status", "reading"} & set(names)):
            header = names
            continue
        if all(re.fullmatch(r"-*", c) for c in cells):
            continue  # the rule under a header
        reading = _row(cells, header) or _labelled(cells, header)
        if reading is not None:
            found.append(reading)
    return _apart(found)


def _labelled(cells: list[str], header: list[str] | None) -> Reading | None:
    """A row of a label and its reading, the reading with a unit (a fan's RPM, a temperature, a share): read as the
    general reader reads ``label: value``, no chip named (nothing says a BMC read it)."""
    if len(cells) != 2 or header is not None or not re.search(r"[A-Za-z]", cells[0]):
        return None
    value, unit, raw = parse(cells[1])
    if value is None or unit not in ("rpm", "c", "%") or not re.fullmatch(r"[+-]?[\d.]+\s*\S+", cells[1]):
        return None
    return Reading(None, cells[0], value, raw, unit)


def _comma_rows(text: str) -> list[list[str]]:
    """FreeIPMI's ``ipmi-sensors --comma-separated-output`` (ipmi-sensors(8)): a header naming its columns (ID,
    Name, Type, State, Reading, Units, Event) and a row a sensor, each split at its commas; none without that
    header."""
    lines = [line.strip() for line in text.splitlines() if line.count(",") >= 3]
    start = next((n for n, line in enumerate(lines) if {"name", "reading"} <= {_column(c) for c in line.split(",")}),
                 None)
    if start is None:
        return _ipmitool_csv(lines)
    width = lines[start].count(",")
    return [[c.strip() for c in line.split(",")] for line in lines[start:] if line.count(",") == width]


def _ipmitool_csv(lines: list[str]) -> list[list[str]]:
    """ipmitool's ``-c`` output (ipmitool(1): "Present output in CSV format"), which has no header: ``sdr`` rows are
    name, reading, unit, status (read as the ``|`` table's three cells), ``sensor`` rows its ten cells; a row is
    ipmitool's only where its status cell is ipmitool's."""
    rows = []
    for line in lines:
        cells = [c.strip() for c in line.split(",")]
        if len(cells) == 4 and _IPMI_STATUS.fullmatch(cells[3].lower()):
            rows.append([cells[0], f"{cells[1]} {cells[2]}".strip() or "no reading", cells[3]])
        elif len(cells) == 10 and _IPMI_STATUS.fullmatch(cells[3].lower()):
            rows.append(cells)
    return rows


# A header's column names, as the tables name them: a sensor's name ("Name", "Sensor", "(#)Sensor", "Sensor Name"),
# its reading ("Reading", "Value"), its unit, its status ("Status", "State", FreeIPMI's "Event"), its lower
# critical limit (ipmicfg's "Low Limit")
_COLUMNS = (("name", r"(\(#\))?\s*(sensor( name)?|name|probe)"), ("reading", r"reading|value|current reading"),
            ("unit", r"units?"), ("status", r"status|state"), ("event", r"event"), ("lcr", r"low limit"))


def _column(cell: str) -> str:
    lowered = cell.strip().lower()
    return next((name for name, pattern in _COLUMNS if re.fullmatch(pattern, lowered)), lowered)


def _headed(cells: list[str], header: list[str]) -> Reading | None:
    """A row of a table whose header names its columns."""
    named = dict(zip(header, cells, strict=True))
    name = re.sub(r"^\(\d+\)\s*", "", named.get("name", ""))  # ipmicfg's "(17) FAN1": its sensor number
    unit = named.get("unit", "")
    status = named.get("status") or _event(named.get("event", ""))
    low = parse(named.get("lcr", ""))
    limits = {"lcr": low[0]} if low[0] is not None and low[1] == "rpm" else {}
    found = _reading(name, f"{named.get('reading', '')} {unit}".strip(), status, limits)
    # a BMC tool's table says each sensor's status (or event); a table without one is no BMC's by its shape
    return found if found is None or {"status", "event"} & set(header) else replace(found, chip=None, extra={})


def _row(cells: list[str], header: list[str] | None) -> Reading | None:
    if header is not None and len(cells) == len(header):
        return _headed(cells, header)
    # with no header, a row is ipmitool's only where its cells are what ipmitool puts there (ipmitool(1)): a status
    # word, a sensor id and an entity; a table of another tool (a post's Markdown table) is not read by position
    if len(cells) >= 10 and _IPMI_STATUS.fullmatch(cells[3].lower()):  # sensor: name | reading | unit | status | 6
        limits = {key: value for key, cell in zip(THRESHOLDS, cells[4:10], strict=True)
                  if (value := parse(cell)[0]) is not None}
        return _reading(cells[0], f"{cells[1]} {cells[2]}", cells[3], limits)
    if len(cells) == 3 and _IPMI_STATUS.fullmatch(cells[2].lower()):  # sdr: name | reading unit | status
        return _reading(cells[0], cells[1], cells[2], {})
    if len(cells) == 7 and re.fullmatch(r"[0-9a-f]{4}", cells[0].lower()) and cells[1] in ("Full", "Comp", "Compact") \
            and re.fullmatch(r"[0-9a-f]{2}", cells[3].lower()):  # ipmiutil sensor -c: id | SDR type | type | snum |
        return _reading(cells[4], cells[6], cells[5], {})  # name | status | reading, its header cut (a grep)
    if len(cells) == 5 and re.fullmatch(r"[0-9a-f]{1,2}h", cells[1].lower()) and re.fullmatch(r"\d+\.\d+", cells[3]):
        found = _reading(cells[0], cells[4], cells[2], {})  # sdr elist: name | id | status | entity | reading unit
        return replace(found, extra={**found.extra, "entity": cells[3]}) if found is not None else None
    return None


# The entities a BMC's sensors are on, by their Entity ID (IPMI v2.0, Entity ID Codes; ipmitool's entity_id_vals),
# as ``sdr elist`` prints them ("3.1": the first processor): those that tell sensors of one name apart
ENTITIES = {3: "processor", 4: "disk or disk bay", 7: "system board", 8: "memory module", 10: "power supply",
            11: "add-in card", 26: "disk drive bay", 29: "fan device", 30: "cooling unit", 32: "memory device",
            55: "air inlet", 64: "air inlet", 65: "processor", 66: "baseboard"}


def _apart(found: list[Reading]) -> list[Reading]:
    """Sensors one listing names alike on different entities (a Dell BMC's "Temp" on each processor), each named
    with its entity ("Temp (processor 2)"), so that one is not read as a later reading of the other."""
    entities: dict[str, set[str]] = {}
    for r in found:
        if "entity" in r.extra:
            entities.setdefault(r.label, set()).add(str(r.extra["entity"]))
    out = []
    for r in found:
        entity = str(r.extra.get("entity", ""))
        if len(entities.get(r.label, ())) > 1:
            code, _, instance = entity.partition(".")
            words = ENTITIES.get(int(code))
            r = replace(r, label=f"{r.label} ({words} {instance})" if words else f"{r.label} (entity {entity})")
        out.append(r)
    return out


_IPMI_STATUS = re.compile(r"ok|ns|na|nc|cr|nr|lnr|lcr|lnc|unc|ucr|unr|0x[0-9a-f]+|")


# FreeIPMI's ipmi-sensors says a threshold sensor's state as an event ("'At or Below (<=) Lower Non-Recoverable
# Threshold'", "'OK'"; ipmi-sensors(8)): the threshold it names is the status ipmitool's column would show
_EVENTS = (("lower non-recoverable", "lower non-recoverable"), ("lower critical", "lower critical"),
           ("lower non-critical", "nc"), ("upper non-recoverable", "upper non-recoverable"),
           ("upper critical", "upper critical"), ("upper non-critical", "nc"), ("ok", "ok"))


def _event(text: str) -> str:
    event = text.strip().strip("'").lower()
    return next((status for words, status in _EVENTS if words in event), "")


_STATUS = {"crit.": "critical", "crit": "critical", "warn.": "nc", "n/a": ""}  # ipmicfg's shortened words


def _reading(name: str, value_text: str, status: str, limits: dict[str, float]) -> Reading | None:
    if not name or not re.search(r"[A-Za-z]", name):
        return None
    value, unit, raw = parse(value_text)
    if unit is None and re.search(r"\bdegrees\b|\bC\b", value_text):
        unit = "c"
    extra: dict[str, float | str] = {"status": _STATUS.get(status.strip().lower(), status.strip().lower()), **limits}
    if value is None and (word(value_text.split(" ")[0] if value_text else "") is None or not status.strip()):
        return None  # a row whose reading is neither a number nor a word for none is not a sensor's
    return Reading("bmc", name, value, raw, unit, None, 0, extra)


# Key-value blocks that name one sensor each: ipmitool's "sensor get" (Sensor ID, Sensor Reading, Status, its
# thresholds), Dell OpenManage's "omreport chassis fans" and "temps" (Probe Name, Reading, Status, its failure and
# warning thresholds); HPE iLO's SMASH CLP ("show /system1/fan1": ElementName=Fan 1, DesiredSpeed=82, a share of
# the fan's full speed, OperationalStatus=Ok; "show /system1/sensor3": CurrentReading=40 with RateUnits=Celsius:
# HPE's iLO scripting and command line guide). A block ends at a blank line or where its name key comes again.
_NAME_KEYS = ("sensor id", "probe name", "sensor name", "elementname")
_READING_KEYS = ("sensor reading", "reading", "current reading", "desiredspeed", "currentreading")
_BLOCK_LIMITS = {**_GET_KEYS, "minimum failure threshold": "lcr", "minimum warning threshold": "lnc",
                 "maximum warning threshold": "unc", "maximum failure threshold": "ucr"}


def _sensor_get(text: str) -> list[Reading]:
    """Each key-value block naming one sensor: its reading, its status and its thresholds (as ipmitool's columns)."""
    found: list[Reading] = []
    fields: dict[str, str] = {}
    for line in [*text.splitlines(), ""]:
        key, colon, value = line.partition(":")
        if not colon and re.match(r"^\s+\w+=", line):  # SMASH CLP's "    DesiredSpeed=82"
            key, colon, value = line.partition("=")
        key = key.strip().lower()
        if not colon or (key in _NAME_KEYS and any(k in fields for k in _NAME_KEYS)):
            reading = _block(fields)
            if reading is not None:
                found.append(reading)
            fields = {}
        if colon:
            fields[key] = value.strip()
    return found


def _block(fields: dict[str, str]) -> Reading | None:
    name = next((fields[k] for k in _NAME_KEYS if k in fields), None)
    text = next((fields[k] for k in _READING_KEYS if k in fields), None)
    if not name or text is None:
        return None
    limits = {_BLOCK_LIMITS[k]: v for k, t in fields.items() if k in _BLOCK_LIMITS and (v := parse(t)[0]) is not None}
    name = re.sub(r"\s*\(0x[0-9a-f]+\)\s*$", "", name, flags=re.IGNORECASE)
    if "desiredspeed" in fields and re.fullmatch(r"\d+", text):
        text += " %"  # SMASH CLP: a fan's speed as a share of its full speed
    elif "currentreading" in fields and fields.get("rateunits", fields.get("baseunits", "")).lower() in \
            ("celsius", "degree c", "degrees c"):
        text += " C"
    status = fields.get("status") or fields.get("operationalstatus") or fields.get("healthstate", "")
    return _reading(name, text, status, limits)
