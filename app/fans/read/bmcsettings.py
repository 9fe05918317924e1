"""A server BMC's fan control settings as people paste them: Dell's ``racadm get System.ThermalSettings``
(``ThirdPartyPCIFanResponse=Enabled``, ``FanSpeedOffset``, ``MinimumFanSpeed``, ``ThermalProfile``: Dell's iDRAC
RACADM CLI guide). Settings, not readings: the rules say what each imposes. (The ``ipmitool raw`` answers people
decode for the same settings, and for a Supermicro BMC's fan mode, rest on no vendor's document: not read.)"""

from __future__ import annotations

import re

from ..facts import Setting

_DELL_KEYS = ("ThirdPartyPCIFanResponse", "FanSpeedOffset", "MinimumFanSpeed", "ThermalProfile")
_RACADM = re.compile(rf"^\s*({'|'.join(_DELL_KEYS)})\s*=\s*(.+?)\s*$", re.MULTILINE | re.IGNORECASE)


def settings(text: str) -> tuple[Setting, ...]:
    found = {m.group(1).lower(): Setting("iDRAC", _canonical(m.group(1)), m.group(2)) for m in _RACADM.finditer(text)}
    return tuple(found.values())


def _canonical(key: str) -> str:
    return next(k for k in _DELL_KEYS if k.lower() == key.lower())
