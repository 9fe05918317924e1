"""Each temperature's critical limit, from the readings that carry it: ``tempN_crit`` (``sensors -u``, ``-j``, a
listing of hwmon files) or the limit ``sensors`` prints beside a labelled value (``app.fans.read.critical``). The
driver's own value (sysfs-interface.rst: temp[1-*]_crit, the temperature critical max value), read as it is."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from .chips import UNKNOWN, chip
from .facts import Reading, TempFact

_NUMBERED = re.compile(r"(temp\d+)_crit")
_ALARM = re.compile(r"(temp\d+)_crit_alarm")


def with_limits(temps: Sequence[TempFact], readings: Iterable[Reading]) -> list[TempFact]:
    """``temps``, each with the critical limit the readings give it (the last one read), and its critical alarm
    where one is read set (tempN_crit_alarm 1, or sensors' "ALARM (CRIT)")."""
    crit: dict[str, float] = {}
    alarm: dict[str, bool] = {}
    for r in readings:
        if r.value is None or not r.attr:
            continue
        numbered, flagged = _NUMBERED.fullmatch(r.attr), _ALARM.fullmatch(r.attr)
        if flagged or r.attr == "label_crit_alarm":
            alarm[f"{r.chip or '-'}/{flagged.group(1) if flagged else r.label}"] = r.value == 1
        elif r.unit != "c":
            continue
        elif numbered:
            crit[f"{r.chip or '-'}/{numbered.group(1)}"] = r.value
        elif r.attr == "label_crit":
            crit[f"{r.chip or '-'}/{r.label}"] = r.value
    return [replace(t, crit_c=crit.get(t.key, t.crit_c), crit_alarm=alarm.get(t.key, t.crit_alarm)) for t in temps]


# The parts whose driver's tempN_crit is the part's own protective limit, reached in use: coretemp.rst (TjMax, the
# maximum junction temperature: "at this temperature, protection mechanism will perform actions to forcibly cool
# down the processor"; valid readings are 0 to TjMax, the register a delta from it), Documentation/gpu/amdgpu
# thermal.rst (temp*_crit: the GPU's critical limit, temp*_emergency above it), drivers/nvme/host/hwmon.c (the
# Composite's crit: the controller's critical composite temperature threshold). A board fan chip's limit is a setting
# of its own, which an open input passes, and so is a memory module's (jc42.rst, spd5118.rst: a limit register the
# host programs), so neither counts.
OWN_LIMIT_KINDS = ("cpu", "gpu", "storage")


# the labels a CPU's driver gives its own sensors (coretemp.rst: "Core X", "Package id Y"; k10temp.rst: Tctl, Tdie,
# Tccd1-8): a CPU's, also where a grep cut the chip's header
_CPU_LABELS = re.compile(r"package id \d+|core \d+|tctl|tdie|tccd\d+")


def own_limit(chip_name: str | None, label: str = "") -> bool:
    """True where ``chip_name``'s critical limit is its part's own, at which the part protects itself."""
    owner = chip(chip_name)
    return owner.kind in OWN_LIMIT_KINDS or (owner is UNKNOWN and bool(_CPU_LABELS.fullmatch(label.strip().lower())))
