"""A BMC's event log as ``ipmitool sel list`` and ``sel elist`` print it (ipmitool(1)): ``id | date | time | <sensor
type> <name or #0xNN> | <Lower|Upper> <Non-critical|Critical|Non-recoverable> going <low|high> | Asserted`` (elist
may add ``| Reading 200 < Threshold 300 RPM``). Threshold events only (IPMI v2.0, event/reading type 01h): what the
BMC logged each time a sensor's reading crossed one of its thresholds and came back. Records, not readings: the
rules say what they show."""

from __future__ import annotations

import re

from ..facts import BmcEvent

_RECORD = re.compile(r"^\s*[0-9a-fA-F]+\s*\|[^|]*\|[^|]*\|\s*(\w[\w ]*?)\s+(#0x[0-9a-fA-F]+|\S.*?)\s*\|\s*"
                     r"(Lower|Upper)\s+(Non-critical|Critical|Non-recoverable)\s+going\s+(?:low|high)\s*\|\s*"
                     r"(Asserted|Deasserted)\s*(?:\|\s*Reading\s+([\d.]+)\s*[<>]\s*Threshold\s+([\d.]+))?",
                     re.IGNORECASE)


def events(text: str) -> tuple[BmcEvent, ...]:
    records = (_RECORD.match(line) for line in text.splitlines())
    return tuple(BmcEvent(m.group(1), m.group(2), f"{m.group(3)} {m.group(4)}".lower(),
                          m.group(5).lower() == "asserted", float(m.group(6)) if m.group(6) else None,
                          float(m.group(7)) if m.group(7) else None) for m in records if m is not None)
