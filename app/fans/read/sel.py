"""A BMC's event log as ``ipmitool sel list`` and ``sel elist`` print it (ipmitool(1)): ``id | date | time | <sensor
type> <name or #0xNN> | <Lower|Upper> <Non-critical|Critical|Non-recoverable> going <low|high> | Asserted`` (elist
may add ``| Reading 200 < Threshold 300 RPM``). Threshold events only (IPMI v2.0, event/reading type 01h): what the
BMC logged each time a sensor's reading crossed one of its thresholds and came back; and the same of a fan as Dell's
iDRAC words it in its own log. Records, not readings: the rules say what they show."""

from __future__ import annotations

import re

from ..facts import BmcEvent

_RECORD = re.compile(r"^\s*[0-9a-fA-F]+\s*\|[^|]*\|[^|]*\|\s*(\w[\w ]*?)\s+(#0x[0-9a-fA-F]+|\S.*?)\s*\|\s*"
                     r"(Lower|Upper)\s+(Non-critical|Critical|Non-recoverable)\s+going\s+(?:low|high)\s*\|\s*"
                     r"(Asserted|Deasserted)\s*(?:\|\s*Reading\s+([\d.]+)\s*[<>]\s*Threshold\s+([\d.]+))?",
                     re.IGNORECASE)


# Dell's iDRAC says the same events in words in its own log (racadm getsel, racadm lclog view; Dell's Event and Error
# Message Reference Guide, the FAN messages): "Fan 3 RPM is less than the lower critical threshold.", then "Fan 3 RPM
# is within range." once it is back
_DELL = re.compile(r"\b(?:The\s+)?((?:System Board\s+)?Fan\s*\w+)\s+RPM is (?:(less than the lower|greater than the "
                   r"upper) (warning|critical) threshold|(within range))", re.IGNORECASE)


def events(text: str) -> tuple[BmcEvent, ...]:
    records = (_RECORD.match(line) for line in text.splitlines())
    found = [BmcEvent(m.group(1), m.group(2), f"{m.group(3)} {m.group(4)}".lower(),
                      m.group(5).lower() == "asserted", float(m.group(6)) if m.group(6) else None,
                      float(m.group(7)) if m.group(7) else None) for m in records if m is not None]
    return (*found, *_dell(text))


def _dell(text: str) -> list[BmcEvent]:
    """The iDRAC's fan messages in turn; "within range" ends the last threshold that fan crossed."""
    found: list[BmcEvent] = []
    crossed: dict[str, str] = {}
    if "RPM is" not in text:
        return found
    for m in _DELL.finditer(text):
        fan = m.group(1)
        if m.group(4):
            found.append(BmcEvent("Fan", fan, crossed.get(fan.lower(), "lower critical"), False))
            continue
        side = "lower" if m.group(2).lower().startswith("less") else "upper"
        crossed[fan.lower()] = f"{side} {'non-critical' if m.group(3).lower() == 'warning' else 'critical'}"
        found.append(BmcEvent("Fan", fan, crossed[fan.lower()], True))
    return found
