"""A server BMC's fan control settings as people paste them: Dell's ``racadm get System.ThermalSettings``
(``ThirdPartyPCIFanResponse=Enabled``, ``FanSpeedOffset``, ``MinimumFanSpeed``, ``ThermalProfile``: Dell's iDRAC
RACADM CLI guide), the same third-party card response read with ``ipmitool raw 0x30 0xce 0x01 0x16 ...`` (its
answer's eighth byte: 00 enabled, 01 disabled), and a Supermicro BMC's fan mode read with ``ipmitool raw 0x30 0x45
0x00`` (00 Standard, 01 Full, 02 Optimal, 04 Heavy IO). Settings, not readings: the rules say what each imposes."""

from __future__ import annotations

import re

from ..facts import Setting

_DELL_KEYS = ("ThirdPartyPCIFanResponse", "FanSpeedOffset", "MinimumFanSpeed", "ThermalProfile")
_RACADM = re.compile(rf"^\s*({'|'.join(_DELL_KEYS)})\s*=\s*(.+?)\s*$", re.MULTILINE | re.IGNORECASE)
_PCIE_QUERY = re.compile(r"raw\s+0x30\s+0xce\s+0x01\s+0x16\s+0x05\s+0x00\s+0x00\s+0x00\s*\n\s*((?:[0-9a-f]{2}\s+){7}"
                         r"([0-9a-f]{2}))", re.IGNORECASE)
_SMC_MODE = re.compile(r"raw\s+0x30\s+0x45\s+0x00\s*\n\s*([0-9a-f]{2})\s*$", re.IGNORECASE | re.MULTILINE)
SMC_MODES = {"00": "Standard", "01": "Full", "02": "Optimal", "03": "PUE2", "04": "Heavy IO"}


def settings(text: str) -> tuple[Setting, ...]:
    found = {m.group(1).lower(): Setting("iDRAC", _canonical(m.group(1)), m.group(2)) for m in _RACADM.finditer(text)}
    for query in _PCIE_QUERY.finditer(text):
        found["thirdpartypcifanresponse"] = Setting("iDRAC", "ThirdPartyPCIFanResponse",
                                                    "Enabled" if query.group(2) == "00" else "Disabled")
    for mode in _SMC_MODE.finditer(text):
        if mode.group(1) in SMC_MODES:
            found["fan mode"] = Setting("Supermicro BMC", "fan mode", SMC_MODES[mode.group(1)])
    return tuple(found.values())


def _canonical(key: str) -> str:
    return next(k for k in _DELL_KEYS if k.lower() == key.lower())
