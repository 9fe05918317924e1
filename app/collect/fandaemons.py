"""What the fan daemons other than fancontrol are configured to do: thinkfan (``/etc/thinkfan.yaml``, ThinkPads and
any hwmon pwm) and fan2go (``/etc/fan2go/fan2go.yaml``), read into the same ``Declared`` records as /etc/fancontrol.

thinkfan drives a ThinkPad's one fan output (``tpacpi: /proc/acpi/ibm/fan``: every tachometer of the ``thinkpad``
chip) or hwmon pwm files, from the hottest of its sensors, through levels: ``[level, low, high]`` (°C) or
``{speed, lower_limit, upper_limit}`` with one limit per sensor. Levels 0-7 of the embedded controller are read as
0-100 %, "level full-speed" as 100 %. fan2go names each fan by its chip (``platform``) and channel and lists the
sensor ids it follows; a sensor's ``min``/``max`` are where its curve starts and reaches full speed.

A file that does not parse, or has another shape, declares nothing (and says why in ``errors``).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from ..core.bounded import read_text_file
from ..core.jsonvalue import Json, JsonObject, member, members
from ..core.record import record
from ..fans.control_words import hottest_of
from ..fans.facts import Curve
from . import fancontrol
from .fancontrol import Declared
from .sources import Reading

CONFIG_LIMIT = 256 << 10  # a fan daemon's configuration: real ones are a few KB
YAML_MAX_DEPTH = 32  # thinkfan's and fan2go's deepest real nesting is 4
YAML_EXPANDED_LIMIT = 1_000_000  # characters, aliases expanded: a real configuration is under 10,000

_TPACPI_LEVELS = 7


@record
class Read:
    declared: tuple[Declared, ...]
    error: str | None = None


def _text(value: Json, key: str) -> str | None:
    found = member(value, key)
    return found if isinstance(found, str) else None


def _bounded(source: str, loader: type) -> str | None:
    """Why ``source`` is not loaded: nested deeper than YAML_MAX_DEPTH, or larger than YAML_EXPANDED_LIMIT once its
    aliases are expanded (a few dozen aliases, each naming the last twice, stand for gigabytes). Found from its
    events, before anything is built: each anchor's expanded size is counted once and added at each alias."""
    import yaml  # here: a one-shot answer that reads no configuration does not pay for PyYAML

    sizes: dict[str, int] = {}
    stack: list[tuple[str | None, int]] = [(None, 0)]  # the open collections: (anchor, expanded size so far)
    for event in yaml.parse(source, Loader=loader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            stack.append((event.anchor, 1))
            if len(stack) > YAML_MAX_DEPTH:
                return f"nested deeper than {YAML_MAX_DEPTH} levels: not read"
            continue
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)) and len(stack) > 1:
            anchor, size = stack.pop()
            if anchor:
                sizes[anchor] = size
        elif isinstance(event, yaml.ScalarEvent):
            size = len(event.value) + 1
            if event.anchor:
                sizes[event.anchor] = size
        elif isinstance(event, yaml.AliasEvent):
            size = sizes.get(event.anchor or "", 1)
        else:
            continue
        anchor, total = stack[-1]
        stack[-1] = (anchor, total + size)
        if total + size > YAML_EXPANDED_LIMIT:
            return f"larger than {YAML_EXPANDED_LIMIT:,} characters once its aliases are expanded: not read"
    return None


def _loader() -> type:
    """PyYAML's libyaml parser where it was built with it (ten times the pure-Python one's speed), else that one;
    both BaseLoader: every scalar a string, no object built."""
    import yaml

    fast: type | None = getattr(yaml, "CBaseLoader", None)
    return fast if fast is not None else yaml.BaseLoader


def _load(source: str, loader: type | None = None) -> tuple[JsonObject | None, str | None]:
    """``source`` read, or why not. A file libyaml refuses is read again by the pure-Python parser, whose reasons
    are the ones said (libyaml scans ahead and stops a deep nesting at its own limit, with its own words)."""
    import yaml

    chosen = loader or _loader()
    try:
        refused = _bounded(source, chosen)
        if refused:
            return None, refused
        # every scalar as text, as thinkfan's yaml-cpp reads it: YAML 1.1 would turn a PCI address "01:00.0" into 3600.0
        loaded = yaml.load(source, Loader=chosen)  # a BaseLoader builds no objects
    except yaml.YAMLError as error:
        if chosen is not yaml.BaseLoader:
            return _load(source, yaml.BaseLoader)
        return None, f"not YAML: {str(error).splitlines()[0]}"
    if not isinstance(loaded, dict):
        return None, "not a mapping of sensors, fans and levels"
    return loaded, None


def _number(value: Json) -> float | None:
    try:
        return float(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _level_percent(level: Json) -> float | None:
    number = _number(level)
    if number is not None:
        return round(100.0 * min(number, _TPACPI_LEVELS) / _TPACPI_LEVELS, 1)
    if isinstance(level, str) and "full-speed" in level:
        return 100.0
    return None


def _thinkfan_curve(levels: Sequence[Json]) -> tuple[tuple[float, float], ...]:
    """(°C, %) where each level starts: a level's lower bound (its highest lower_limit), 0 °C for the first."""
    points = []
    for entry in levels:
        if isinstance(entry, list) and len(entry) == 3:
            level, low = entry[0], entry[1]
        elif isinstance(entry, dict):
            limits = [_number(v) for v in members(member(entry, "lower_limit"))]
            level, low = member(entry, "speed"), str(max((v for v in limits if v is not None), default=0))
        else:
            continue
        percent, celsius = _level_percent(level), _number(low)
        if percent is not None and celsius is not None:
            points.append((celsius, percent))
    return tuple(points)


def _thinkfan_sources(sensors: Sequence[Json]) -> list[str]:
    named = []
    for sensor in sensors:
        if not isinstance(sensor, dict):
            continue
        if "nvml" in sensor:
            named.append(f"the NVIDIA GPU at {_text(sensor, 'nvml')}")
        elif "tpacpi" in sensor:
            named.append("the embedded controller's sensors")
        else:
            name = _text(sensor, "name") or _text(sensor, "hwmon") or "hwmon"
            indices = [str(i) for i in members(member(sensor, "indices"))]
            named.append(f"{name} temp{','.join(indices)}" if indices else name)
    return named


def thinkfan(source: str) -> Read:
    """The fans a thinkfan YAML configuration drives, each following the hottest of its sensors."""
    config, error = _load(source)
    if config is None:
        return Read((), error)
    sources = _thinkfan_sources(members(member(config, "sensors")))
    follows = hottest_of(sources)
    curve = _thinkfan_curve(members(member(config, "levels")))
    declared = []
    for fan in members(member(config, "fans")):
        if not isinstance(fan, dict):
            continue
        if "tpacpi" in fan:  # the ThinkPad's one output drives every tachometer of the chip
            chip, pwm, fans = "thinkpad", "pwm1", ()
        else:
            path = _text(fan, "hwmon") or _text(fan, "pwm") or ""
            chip, pwm, fans = _text(fan, "name") or "hwmon", path.rsplit("/", 1)[-1] or "pwm1", ()
        declared.append(Declared(chip=chip, pwm=pwm, source_chip=None, source=None, fans=fans, curve=curve,
                                 floor_percent=curve[0][1] if curve else None, daemon="thinkfan", follows=follows,
                                 follows_all=tuple(sources)))
    return Read(tuple(declared), None if declared else "no fans declared")


def fan2go(source: str) -> Read:
    """The fans a fan2go YAML configuration drives, each with the sensors it follows."""
    config, error = _load(source)
    if config is None:
        return Read((), error)
    sensors = {_text(s, "id"): s for s in members(member(config, "sensors")) if isinstance(s, dict)}
    declared = []
    for fan in members(member(config, "fans")):
        if not isinstance(fan, dict):
            continue
        channel = member(fan, "fan")
        followed = [sensors[str(t)] for t in members(member(fan, "temps")) if str(t) in sensors]
        first = followed[0] if followed else None
        curve: tuple[tuple[float, float], ...] = ()
        if first is not None:
            low, high = _number(member(first, "min")), _number(member(first, "max"))
            if low is not None and high is not None:
                curve = ((low, 0.0), (high, 100.0))
        declared.append(Declared(
            chip=_text(fan, "platform") or "hwmon", pwm=f"pwm{channel}", source_chip=_text(first, "platform") if first
            else None, source=_text(first, "sensor") if first else None,
            fans=(f"fan{channel}_input",), curve=curve,
            floor_percent=None, daemon="fan2go",
            follows=", ".join(f"{_text(s, 'platform')} {_text(s, 'sensor')}" for s in followed) or None,
            follows_all=tuple(f"{_text(s, 'platform')} {_text(s, 'sensor')}" for s in followed)))
    return Read(tuple(declared), None if declared else "no fans declared")


@record
class ConfigSource:
    """One fan daemon's configuration file as a source (``app.collect.sources``): what it declares, read once a
    minute, at most CONFIG_LIMIT bytes of a regular file."""

    path: Path
    parse: Callable[[str], Read]
    key: str
    period_s: float = 60.0
    timeout_s: float = 5.0

    @property
    def name(self) -> str:
        return str(self.path)

    def read(self) -> Reading:
        read = _parsed(self.parse, read_text_file(self.path, CONFIG_LIMIT))
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
             (root / "fan2go" / "fan2go.yaml", fan2go, "fan2go"))
    return [ConfigSource(path, parse, key) for path, parse, key in known if os.path.lexists(path)]


def curves(etc_root: str | Path) -> tuple[Curve, ...]:
    """What the fan daemons' configurations under ``etc_root`` declare, as the fan wing's facts (a configuration that
    cannot be read declares nothing)."""
    found: list[Curve] = []
    for source in config_sources(etc_root):
        with contextlib.suppress(OSError, ValueError):
            found += [Curve(d.daemon, d.chip, d.pwm, d.follows or d.source, d.curve, d.floor_percent)
                      for d in source.read().declared]
    return tuple(found)
