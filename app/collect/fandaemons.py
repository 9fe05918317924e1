"""What the fan daemons are configured to do, each configuration a source of the collector: fancontrol
(``/etc/fancontrol``, app.collect.fancontrol), thinkfan (``/etc/thinkfan.yaml`` or ``.conf``, app.collect.thinkfan) and
fan2go (``/etc/fan2go/fan2go.yaml``, app.collect.fan2go), fw-fanctrl (``/etc/fw-fanctrl/config.json``,
app.collect.fwfanctrl), i8kmon (``/etc/i8kmon.conf``, app.collect.i8kmon), nfancurve (``/etc/nfancurve.conf``,
app.collect.nfancurve), amdfan or amdgpu-fan (``/etc/amdfan.yml``, ``/etc/amdgpu-fan.yml``, app.collect.amdfan) and
LACT (``/etc/lact/config.yaml``, app.collect.lact) and NBFC (``/etc/nbfc/nbfc.json`` with the model configuration it
selects, app.collect.nbfcconfig) and zcfan (``/etc/zcfan.conf``, app.collect.zcfan), all read into the same
``Declared`` records.

A file that does not parse, or has another shape, declares nothing (and says why in ``errors``).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable
from pathlib import Path

from ..core.bounded import read_text_file
from ..core.record import record
from ..fans.facts import Curve
from . import amdfan, fancontrol, i8kmon, lact, nbfcconfig, nfancurve, zcfan
from .daemonyaml import Read
from .fan2go import fan2go
from .fwfanctrl import fwfanctrl
from .sources import Reading
from .thinkfan import thinkfan

CONFIG_LIMIT = 256 << 10  # a fan daemon's configuration: real ones are a few KB

@record
class ConfigSource:
    """One fan daemon's configuration file as a source (``app.collect.sources``): what it declares, read once a
    minute, at most CONFIG_LIMIT bytes of a regular file."""

    path: Path
    parse: Callable[[str], Read]
    key: str
    period_s: float = 60.0
    timeout_s: float = 5.0
    cached: bool = True  # False where the file names another that its parse reads (NBFC's settings select a model
    # configuration): its own text alone does not say what it declares, so it is parsed at each read

    @property
    def name(self) -> str:
        return str(self.path)

    def read(self) -> Reading:
        text = read_text_file(self.path, CONFIG_LIMIT)
        read = _parsed(self.parse, text) if self.cached else self.parse(text)
        return Reading(declared=read.declared, problem=read.error)


@functools.lru_cache(maxsize=8)
def _parsed(parse: Callable[[str], Read], text: str) -> Read:
    """A configuration is read once a minute and parsed once per change (its text is the key): a large one within
    CONFIG_LIMIT costs its parse when it is written, not every minute."""
    return parse(text)


def config_sources(etc_root: str | Path) -> list[ConfigSource]:
    """The fan daemons' configurations that exist under ``etc_root``, each a source."""
    root = Path(etc_root)
    known = ((root / "fancontrol", lambda t: Read(fancontrol.parse(t)), "fancontrol"),
             (root / "thinkfan.yaml", thinkfan, "thinkfan-yaml"), (root / "thinkfan.conf", thinkfan, "thinkfan-conf"),
             (root / "fan2go" / "fan2go.yaml", fan2go, "fan2go"),
             (root / "fw-fanctrl" / "config.json", fwfanctrl, "fw-fanctrl"),
             (root / "i8kmon.conf", i8kmon.parse, "i8kmon"), (root / "nfancurve.conf", nfancurve.parse, "nfancurve"),
             (root / "amdfan.yml", amdfan.amdfan_file, "amdfan"),
             (root / "amdgpu-fan.yml", amdfan.amdgpu_fan, "amdgpu-fan"),
             (root / "lact" / "config.yaml", lact.parse, "lact"),
             (root / "nbfc" / "nbfc.json", nbfcconfig.Service(root.parent), "nbfc"),
             (root / "zcfan.conf", zcfan.parse, "zcfan"))
    return [ConfigSource(path, parse, key, cached=key != "nbfc") for path, parse, key in known
            if os.path.lexists(path)]


def curves(etc_root: str | Path) -> tuple[Curve, ...]:
    """What the fan daemons' configurations under ``etc_root`` declare, as the fan wing's facts (a configuration that
    cannot be read declares nothing)."""
    found: list[Curve] = []
    for source in config_sources(etc_root):
        with contextlib.suppress(OSError, ValueError):
            found += [Curve(d.daemon, d.chip, d.pwm, d.follows or d.source, d.curve, d.floor_percent, d.firmware_c,
                             d.stepped, d.combined, d.strategy, d.on_battery, d.inverted, d.refused,
                             d.source if d.follows and d.source_chip == d.chip else None, d.firmware_may_run)
                      for d in source.read().declared]
    return tuple(found)
