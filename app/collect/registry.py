"""The fan sources beyond the ones every machine may have (hwmon chips, the BMC, the fan daemons' configurations):
each is one module with its ``Source`` (``app.collect.sources``), registered here, once."""

from __future__ import annotations

from pathlib import Path

from . import liquidctl, thinkpad
from .sources import Source


def registered(proc_root: str | Path, sys_root: str | Path, liquidctl_run: liquidctl.LiquidctlRun | None
               ) -> list[Source]:
    """The sources this machine has: a ThinkPad's embedded controller (``/proc/acpi/ibm/fan`` under ``proc_root``,
    unless its hwmon chip under ``sys_root`` has the fan), AIO coolers through ``liquidctl`` (when ``liquidctl_run``
    is given: the command exists, or a capture)."""
    found: list[Source] = []
    if thinkpad.present(proc_root):
        found.append(thinkpad.ThinkPadSource(Path(proc_root), Path(sys_root)))
    if liquidctl_run is not None:
        found.append(liquidctl.LiquidctlSource(liquidctl_run))
    return found
