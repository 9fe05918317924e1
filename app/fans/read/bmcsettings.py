"""A server BMC's fan control settings as people paste them: Dell's ``racadm get System.ThermalSettings``
(``ThirdPartyPCIFanResponse=Enabled``, ``FanSpeedOffset``, ``MinimumFanSpeed``, ``ThermalProfile``: Dell's iDRAC
RACADM CLI guide); a Supermicro BMC's fan mode as Supermicro's own SMCIPMITool and IPMICFG print it (``Current Fan
Speed Mode is [ Full Speed ]``, beside the modes it supports: Standard, Full, Optimal, Heavy IO) or as superfans
decodes it (``Preset: Full (All fans at 100%)``). Settings, not readings: the rules say what each imposes. (The
bare ``ipmitool raw`` answers people decode for the same settings rest on no vendor's document: not read; Dell's fan
commands typed into ipmitool are read as decisions, ``app.fans.read.ipmiraw``.)"""

from __future__ import annotations

import re

from ..facts import Setting

_DELL_KEYS = ("ThirdPartyPCIFanResponse", "FanSpeedOffset", "MinimumFanSpeed", "ThermalProfile")
_RACADM = re.compile(rf"^\s*({'|'.join(_DELL_KEYS)})\s*=\s*(.+?)\s*$", re.MULTILINE | re.IGNORECASE)


_SUPERMICRO_MODE = re.compile(r"Current Fan Speed Mode is \[\s*([^\]]+?)\s*\]|^\s*Preset:\s*(Standard|Full|Optimal|"
                               r"Heavy ?IO)\b", re.MULTILINE | re.IGNORECASE)
FAN_MODE = "fan mode"  # a Supermicro BMC's fan mode, as a Setting's name


def settings(text: str) -> tuple[Setting, ...]:
    found = {m.group(1).lower(): Setting("iDRAC", _canonical(m.group(1)), m.group(2)) for m in _RACADM.finditer(text)}
    modes = [Setting("Supermicro BMC", FAN_MODE, m.group(1) or m.group(2)) for m in _SUPERMICRO_MODE.finditer(text)]
    return (*found.values(), *modes[-1:])  # the mode read last is the one in force


def _canonical(key: str) -> str:
    return next(k for k in _DELL_KEYS if k.lower() == key.lower())
