"""The rules of what a controller's own settings or state impose, whatever the temperatures: a server BMC's thermal
settings (Dell's iDRAC), and a fan daemon that stopped (fancontrol aborting, which leaves
its fans at full speed, or refusing an outdated configuration). Registered in ``app.fans.rules`` like the others."""

from __future__ import annotations

from collections.abc import Iterator

from .facts import Machine, Setting
from .rules import Hit, rule

_DEFAULT_MINIMUM = "255"  # MinimumFanSpeed's value when no minimum is set (Dell's RACADM guide)


@rule("a BMC's fan setting", 61, "Dell's iDRAC RACADM CLI guide (System.ThermalSettings: ThirdPartyPCIFanResponse, "
      "FanSpeedOffset, MinimumFanSpeed, ThermalProfile)")
def bmc_setting(machine: Machine) -> Iterator[Hit]:
    for setting in machine.settings:
        effect = _effect(setting)
        if effect is not None:
            # the card response raises the fans only where a card Dell did not qualify is fitted, which no reading
            # shows: likely; the others act on every fan: known
            yield Hit("bmc-setting", (), "likely" if effect == "pcie-card" else "known",
                      {"controller": setting.controller, "setting": setting.name, "value": setting.value,
                       "effect": effect})


def _effect(setting: Setting) -> str | None:
    """What a setting does to every fan, or None where it leaves them to the temperatures."""
    value = setting.value.strip().lower()
    if setting.name == "ThirdPartyPCIFanResponse":
        return "pcie-card" if value in ("enabled", "1") else None
    if setting.name == "FanSpeedOffset":
        return "offset" if value not in ("off", "none", "0", "") else None
    if setting.name == "MinimumFanSpeed":
        return "floor" if value.isdigit() and value != _DEFAULT_MINIMUM else None
    if setting.name == "ThermalProfile":
        return "performance" if "maximum performance" in value else None
    return None


@rule("a fan daemon that stopped", 67, "the lm-sensors fancontrol script and fancontrol(8) (on an error it prints "
      "\"Aborting, restoring fans...\", sets each output it drove back to full speed and exits; it refuses a "
      "configuration whose hwmon devices changed: \"Configuration appears to be outdated\")")
def daemon_stopped(machine: Machine) -> Iterator[Hit]:
    for event in machine.events:
        yield Hit("daemon-stopped", (), "known", {"daemon": event.daemon, "event": event.event,
                                                  "detail": event.detail})
