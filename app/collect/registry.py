"""The fan sources beyond the ones every machine may have (hwmon chips, the BMC, the fan daemons' configurations):
each is one module with its ``Source`` (``app.collect.sources``), registered here, once. A source's module is
loaded only where the machine has it: a one-shot answer on a machine without one does not pay its import."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from .sources import Source

if TYPE_CHECKING:
    from .liquidctl import LiquidctlRun


def registered(proc_root: str | Path, sys_root: str | Path, liquidctl_run: LiquidctlRun | None
               ) -> list[Source]:
    """The sources this machine has: a ThinkPad's embedded controller (``/proc/acpi/ibm/fan`` under ``proc_root``,
    unless its hwmon chip under ``sys_root`` has the fan), AIO coolers through ``liquidctl`` (when ``liquidctl_run``
    is given: the command exists, or a capture)."""
    found: list[Source] = []
    if (Path(proc_root) / "acpi" / "ibm" / "fan").exists():
        from .thinkpad import ThinkPadSource

        found.append(ThinkPadSource(Path(proc_root), Path(sys_root)))
    if liquidctl_run is not None:
        from .liquidctl import LiquidctlSource

        found.append(LiquidctlSource(liquidctl_run))
    return found


def liquidctl_command(timeout_s: float = 10.0) -> LiquidctlRun | None:
    """A runner of ``liquidctl status --json`` (bounded in time and output) where the command is installed."""
    binary = shutil.which("liquidctl")
    if binary is None:
        return None
    from ..core.bounded import runner

    return runner([binary, "status", "--json"], timeout_s)
