"""Labelled readings, one or more a line, as most pastes are: ``sensors`` text with or without its chip header
(``asuswmisensors-isa-0000``), ``sensors -u`` (a feature's label, then its ``fan1_input: 740.000`` subfeatures),
``label: value unit`` and ``name_input:value`` lists, ``key : value`` dumps (``nvidia-smi -q``), ``path:value``
lines (``grep -r . /sys/class/hwmon/*``, OpenBMC's D-Bus sensors), a ThinkPad's ``/proc/acpi/ibm/fan`` and
``thermal``, and side-by-side columns (a "before" and an "after" on one line). A label met again in one chip starts
the next snapshot: several readings of one machine in one paste are kept as a sequence."""

from __future__ import annotations

import re

from ..facts import Reading
from ..values import NUMBER, parse, word
from . import headed, inxi, oneline, thermal
from .chipheader import apart_names, chip_of, twins
from .shellfolder import in_folder

_PATH = re.compile(r"^((?:/|[\w.-]+/)\S*?)/([\w.-]+):\s*(\S.*)$")  # /sys/..., card0/device/hwmon/hwmon4/...
_SPACED_PATH = re.compile(r"^(/(?:sys|proc)/\S*?)/([\w.-]+)\s+(\S.*)$")  # a shell loop's "/sys/.../temp 45000"
_DUMP_CHIP = re.compile(r"^#+\s*(hwmon\d+)\s*:?\s*$")  # "## hwmon1 :" then "  - fan1_input = 3855"
_DUMP_VALUE = re.compile(r"^-?\s*((?:fan|pwm|temp)\d+(?:_\w+)?|name)\s*=\s*(\S(?:.*\S)?)$")
# a label may name a sensor at its bus address ("cpu_f75303@4c", as cros_ec_hwmon names the EC's sensors)
_PAIR = re.compile(rf"([A-Za-z][\w#+./()\[\]@ -]{{0,60}}?)\s*:\s*((?:{NUMBER})\s*(?:\(\+/-\s*[\d.]+\)\s*)?"
                   r"(?:°\s*C|degrees\s*C|C\b|°\s*F|degrees\s*F|RPM|rpm|%|mW|W|mV|V|A|MHz)?"
                   r"|FAULT|N/A|\[N/A\]|\[Not Supported\])",
                   re.IGNORECASE)
# "node: label: value" (xCAT's rvitals, pdsh and clush prefix each line with the host that answered): the host is
# the chip, so each machine's fans stay its own
_HOST = re.compile(r"^([A-Za-z0-9][\w.-]{0,62}):\s+(?=[A-Za-z][^:]{0,60}:\s*[+-]?\d)")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
# a section's own words for readings that do not name their kind ("FAN:" then "  SPEED: 25 %", as amd-smi prints)
_GENERIC = re.compile(r"^(speed|rpm|usage|current|value|reading|level|duty|edge|hotspot|junction|mem|max|min)$",
                      re.IGNORECASE)
_SUBFEATURE = re.compile(rf"^(\s*)((?:fan|temp|pwm)\d+(?:_[a-z_]+)?):\s+({NUMBER})\s*$")
_AMD_SMI_CARD = re.compile(r"^GPU:\s*(\d+)\s*$")
_FEATURE = re.compile(r"^([^:]{1,60}):\s*$")
_THERMAL = re.compile(r"^temperatures:\s+((?:-?\d+\s*)+)$")
# amdgpu's overdrive tables (OD_RANGE, FAN_CURVE, FAN_ZERO_RPM_...): settings and their ranges, not readings
_SETTING = re.compile(r"(OD_|FAN_CURVE|FAN_ZERO|FAN_MINIMUM|FAN_TARGET|ACOUSTIC|SCLK|MCLK|VDDC)|"
                      r"(?i:.*\b(shutdown|slowdown|threshold|limit|max operating|target)\b.*temp|.*temp.*\b(limit|"
                      r"threshold)\b)"  # and a tool's temperature limits (nvidia-smi -q's T.Limit, Slowdown Temp)
                      r"|(?i:.*\b(thresholds?|failure|warning|minimum|maximum|critical|emergency|hysteresis)\b)")
# (and any reading's limits: "Critical temperature: 100 C" is where a part shuts down, not how hot it is)
_SKIP = re.compile(r"^(adapter|sensor id|entity id|sensor type|assertion|deassertion|positive|negative|locating)",
                   re.IGNORECASE)


class _Walk:
    """The state of one pass over the lines: the chip and feature in force, the snapshot, what it holds."""

    def __init__(self) -> None:
        self.chip: str | None = None
        self.feature: str | None = None
        self.device: str | None = None  # amd-smi's "GPU: 1": the card the sections below are about
        self.snapshot = 0
        self.seen: set[tuple[str | None, str, int]] = set()
        self.found: list[Reading] = []
        self.hwmon_names: dict[str, str] = {}
        self.labels: dict[tuple[str | None, str], str] = {}  # (chip, "temp2") -> "CPUTIN": a listing's label files
        self.zones = thermal.Zones()  # /sys/class/thermal's zones and cooling devices, gathered to the end
        self.columns: headed.Table | None = None  # a space-aligned table's header in force (until a blank line)
        self.inxi_fans: str | None = None  # inxi's "Fan Speeds (rpm):" line in force: its unit, for a wrapped line
        self.twins: frozenset[str] = frozenset()  # chip names sensors heads at two addresses or more (``twins``)
        self.block: dict[tuple[str, str | None], int] = {}  # since a sensors chip header: each label's count
        self.headed = False

    def add(self, label: str, text: str, column: int = 0, attr: str | None = None, chip: str | None = None,
            extra: dict[str, float | str] | None = None) -> None:
        owner = chip if chip is not None else self.chip
        value, unit, raw = parse(text)
        in_block = self.headed and chip is None and attr is None and column == 0
        if in_block:  # sensors(1) prints each feature once under its chip's header: a label met again there (of the
            # same unit) is another channel that shares it (dell_smm names fans by type: two "Processor Fan")
            count = self.block[label.strip(), unit] = self.block.get((label.strip(), unit), 0) + 1
            label = label if count == 1 else f"{label.strip()} #{count}"
        key = (owner, f"{attr}/{label}" if attr and attr.startswith("label_") else attr or label, column)
        if key in self.seen and not in_block:  # the same label again: the next reading (under a header, a
            # reading again is the header again, and app.fans.passes tells the listings apart)
            self.snapshot += 1 + max((k[2] for k in self.seen), default=0)
            self.seen = set()
        self.seen.add(key)
        if value is None and word(text) is None:
            return
        self.found.append(Reading(owner, label.strip(), value, raw, unit, attr, self.snapshot + column,
                                  **({"extra": extra} if extra else {})))


def read(text: str) -> list[Reading]:
    """Every labelled reading in ``text`` (an empty list when there is none)."""
    walk = _Walk()
    walk.twins = twins(text)
    for pasted in in_folder(thermal.catted(text)).splitlines():
        for line in _uncollapsed(pasted):
            _line(walk, line.rstrip())
    if walk.hwmon_names or walk.labels:  # grep -r . /sys/class/hwmon/hwmonN/: the chip is its name file
        walk.hwmon_names = apart_names(walk.hwmon_names)
        walk.found = [_named(walk, r) for r in walk.found]
    return [*walk.found, *walk.zones.readings()]


# sensors' output pasted where line breaks were lost: a chip header inside a line starts a chip, "Adapter: ISA
# adapter" is a line of its own, and a reading starts after the limits in parentheses of the one before
_INNER_CHIP = re.compile(r"\s(?=[a-z0-9_]+-(?:isa|pci|acpi|virtual|i2c|platform|hid|usb)-[0-9a-f]{4}\b)")
_ADAPTER = re.compile(r"\s*(Adapter:\s+\S+(?:\s\S+)?\s+(?:adapter|interface|device))\s+", re.IGNORECASE)
_AFTER_LIMITS = re.compile(r"\)\s+(?=[A-Za-z][\w#+./ -]{0,40}:\s)")


def _uncollapsed(line: str) -> list[str]:
    """A line as sensors wrote it: one, or where a paste joined its lines (a chip header inside it), each again."""
    if not _INNER_CHIP.search(line):
        return [line]
    text = _AFTER_LIMITS.sub(")\n", _ADAPTER.sub("\n\\1\n", _INNER_CHIP.sub("\n", line)))
    return text.split("\n")


def _named(walk: _Walk, r: Reading) -> Reading:
    """A listing's reading with its chip's name (not hwmonN) and its channel's label file (temp2_label: CPUTIN)."""
    channel = (r.attr or "").partition("_")[0]
    label = walk.labels.get((r.chip, channel), r.label)
    return Reading(walk.hwmon_names.get(r.chip or "", r.chip), label, r.value, r.raw, r.unit, r.attr, r.snapshot,
                   r.extra)


def _line(walk: _Walk, line: str) -> None:
    line = _QUOTE.sub("", line)  # a reply's quote markers ("> fan1: 0 RPM")
    stripped = line.strip()
    if inxi.wrapped(walk, stripped):  # inxi wrapped its fan line: more fans
        return
    if _dump(walk, stripped):
        return
    if re.search(r"thermal_zone\S*/type\b.*thermal_zone\S*/temp\b", stripped):
        walk.zones.pasted = 0  # paste(1) of the zones' type and temp files: "x86_pkg_temp<TAB>94000" lines follow
    if not stripped or stripped.startswith(("$", "#", "//")) or _SKIP.match(stripped):
        if not stripped:
            walk.columns, walk.headed = None, False  # a blank line ends a table, and a sensors chip's block
        return
    if walk.zones.pasted_line(line):
        return
    if _table(walk, line):
        return
    header = chip_of(stripped, walk.twins)
    if header:
        walk.chip, walk.feature, walk.device = header, None, None
        walk.block, walk.headed = {}, True
        return
    card = _AMD_SMI_CARD.match(line)
    if card:  # amd-smi metric's "GPU: 0" at the margin: an AMD card's sections follow
        walk.chip, walk.feature, walk.device = "amdgpu", None, f"GPU {card.group(1)}"
        return
    if _path(walk, stripped) or _subfeature(walk, line) or _thermal(walk, stripped) or _od_range(walk, stripped) \
            or _one_line(walk, stripped, oneline.LINES):
        return
    feature = _FEATURE.match(stripped)
    if feature:
        walk.feature = feature.group(1).strip()
        return
    _sensors_extras(walk, stripped)
    if not inxi.heading(walk, stripped) and not _pairs(walk, line, stripped):
        _one_line(walk, stripped, (oneline.spaced,))


def _dump(walk: _Walk, stripped: str) -> bool:
    """A ``key = value`` dump of hwmon folders: "## hwmon1 :" names the folder, "  - fan1_input = 3855" its files."""
    dump_chip = _DUMP_CHIP.match(stripped)
    if dump_chip:
        walk.chip = dump_chip.group(1)
        return True
    dump = _DUMP_VALUE.match(stripped)
    if dump and walk.chip and walk.chip.startswith("hwmon"):
        _sysfs(walk, walk.chip, dump.group(1), dump.group(2))
        return True
    return False


def _pairs(walk: _Walk, line: str, stripped: str) -> bool:
    """Every ``label: value`` pair of a line, a host's prefix apart, a section's generic labels named for it; False
    for a line with none."""
    host = _HOST.match(stripped)
    if host:
        stripped = stripped[host.end():]
    pairs = list(_PAIR.finditer(stripped))
    for column, match in enumerate(pairs):
        label = match.group(1).strip()
        if _SETTING.match(label):
            continue
        value = match.group(2)
        if walk.feature and line[:1].isspace() and _GENERIC.match(label):
            if re.search(r"fan|pump", walk.feature, re.IGNORECASE):  # one fan's section: its speed and its duty
                if label.lower() not in ("speed", "rpm"):
                    continue
                value += " RPM" if label.lower() == "rpm" and re.fullmatch(NUMBER, value.strip()) else ""
                label = walk.feature
            else:
                label = f"{walk.feature} {label}"
        if re.search(r"\s(rpm)$", label, re.IGNORECASE) and re.fullmatch(NUMBER, value.strip()):
            label, value = label[:-4], f"{value.strip()} RPM"  # "Fan 0 RPM: 0" (ectool): the unit in the label
        elif re.search(r"\sspeed$", label, re.IGNORECASE) and re.search(r"rpm$", value.strip(), re.IGNORECASE):
            label = label[:-6]  # "Fan 0 speed: 2161 RPM" (iStats): the fan is "Fan 0", its speed the reading
        if walk.device and line[:1].isspace():
            label = f"{walk.device} {label}"  # one card's reading of a listing of several (app.fans.rules: _own)
        walk.add(label, value, column, attr=_attr(label), chip=host.group(1) if host else None)
    return bool(pairs)


# sensors' pwm line: the duty, its pwmN_mode "(mode = pwm)" or "(mode = dc)" where the driver has one, and "MANUAL
# CONTROL" where pwmN_enable is 1
_MANUAL = re.compile(r"^(pwm\d+):\s+\S+(?:\s+\(mode\s*=\s*\w+\))?\s+MANUAL CONTROL\b", re.IGNORECASE)
_MODE = re.compile(r"^(pwm\d+):.*?\(mode\s*=\s*(dc|pwm)\)", re.IGNORECASE)
_ENABLE = re.compile(r"^(pwm\d+):\s+\d+%?\s+\(enable\s*=\s*(\d)\b")  # older sensors: "pwm1: 255  (enable = 1, ...)"
# a fan's line: "fan1:" or the label sensors.conf gives it ("CPU Fan:"), a speed in RPM, then its limits and flag
_FAN_LINE = r"^([^:]{1,60}):\s*-?\d+\s*RPM"  # old sensors: "Left side  :4957 RPM", no space
_LIMIT = re.compile(_FAN_LINE + r".*?\bmax\s*=\s*(\d+)\s*RPM", re.IGNORECASE)
_LOW_LIMIT = re.compile(_FAN_LINE + r".*?\bmin\s*=\s*(\d+)\s*RPM", re.IGNORECASE)
_ALARM = re.compile(_FAN_LINE + r".*\bALARM\b")  # sensors' flag for fanN_alarm: the driver's alarm is raised
_DIVISOR = re.compile(_FAN_LINE + r".*?\bdiv\s*=\s*(\d+)\b")  # an old chip's fanN_div (lm-sensors' fan-divisors)
# sensors' "sensor = disabled": the input's tempN_type is 0, turned off in the chip (sysfs-interface.rst; the it87
# driver and w83793.rst: 0 stops the channel's monitoring)
_DISABLED = re.compile(r"^([^:]{1,60}):\s+[+-]?[\d.]+\s*°?\s*[CF]\b.*\bsensor = disabled\b")


def _sensors_extras(walk: _Walk, line: str) -> None:
    """What ``sensors`` prints beside a value: a pwm output's mode ("(mode = pwm)": pwmN_mode 1; "dc": 0) and its
    manual control ("pwm1: 0% MANUAL CONTROL", its pwm_enable 1), a fan's limits ("(min = 1500 RPM, max = 5700
    RPM)"), an old chip's divisor ("div = 4") and its alarm ("ALARM": fanN_alarm)."""
    manual = _MANUAL.match(line) or _ENABLE.match(line)
    if manual:
        walk.add(manual.group(1), manual.group(2) if manual.re is _ENABLE else "1", attr=f"{manual.group(1)}_enable")
    mode = _MODE.match(line)
    if mode:
        walk.add(mode.group(1), "1" if mode.group(2).lower() == "pwm" else "0", attr=f"{mode.group(1)}_mode")
    limit = _LIMIT.match(line)
    if limit:
        walk.add(limit.group(1), f"{limit.group(2)} RPM", attr=_of_fan(limit.group(1), "max"))
    low = _LOW_LIMIT.match(line)
    if low:
        walk.add(low.group(1), f"{low.group(2)} RPM", attr=_of_fan(low.group(1), "min"))
    divisor = _DIVISOR.match(line)
    if divisor:
        walk.add(divisor.group(1), divisor.group(2), attr=_of_fan(divisor.group(1), "div"))
    alarm = _ALARM.match(line)
    if alarm:
        walk.add(alarm.group(1), "1", attr=_of_fan(alarm.group(1), "alarm"))
    disabled = _DISABLED.match(line)
    if disabled:
        walk.add(disabled.group(1), "0", attr=f"{disabled.group(1).strip()}_type")


def _of_fan(label: str, what: str) -> str:
    """The attribute of a fan's limit or flag: fanN_min where sensors names the channel, else label_min (a label
    sensors.conf gave: the reading belongs to the fan of that label)."""
    channel = label.strip()
    return f"{channel}_{what}" if re.fullmatch(r"fan\d+", channel) else f"label_{what}"


_ERROR = re.compile(r"^ERROR: Can't get value of subfeature ((fan|temp)\d+)_input", re.MULTILINE)


def sensors_errors(text: str) -> list[Reading]:
    """lm-sensors' "ERROR: Can't get value of subfeature fan1_input: ..." lines: the driver gave an error for it."""
    return [Reading(None, m.group(1), None, "an error", None, f"{m.group(1)}_input") for m in _ERROR.finditer(text)]


def _attr(label: str) -> str | None:
    found = re.fullmatch(r"(?:fan|temp|pwm)\d+(?:_[a-z_]+)?", label.strip().lower())
    return found.group(0) if found else None


def _path(walk: _Walk, line: str) -> bool:
    if _one_line(walk, line, (oneline.hddtemp,)):  # hddtemp's "/dev/sda: MODEL: 52°C": a drive, not a path's value
        return True
    match = _PATH.match(line) or _SPACED_PATH.match(line)
    if not match or "://" in line:
        return False
    folder, name, value = match.groups()
    hwmon = re.search(r"(?:^|/)(hwmon\d+)(?:/device)?$", folder)
    if re.search(r"(?:^|/)gpu_od/fan_ctrl$", folder):
        _gpu_od(walk, folder, name, value)
        return True
    if walk.zones.take(folder, name, value):
        return True
    kind = folder.rsplit("/", 1)[-1]  # OpenBMC: .../sensors/fan_tach/fan0, .../sensors/temperature/cpu0
    if hwmon:
        _sysfs(walk, hwmon.group(1), name, value)
    elif kind in ("fan_tach", "temperature") and folder.startswith("/xyz/openbmc_project"):
        value = value.strip()
        if kind == "temperature" and re.fullmatch(NUMBER, value):
            value = f"{float(value) / 1000.0 if abs(float(value)) >= 1000 else float(value)} C"
        elif re.fullmatch(NUMBER, value):
            value += " RPM"
        walk.add(name, value, attr=f"{'fan' if kind == 'fan_tach' else 'temp'}_{name}", chip="bmc")
    else:  # another path: the path names the reading ("/dev/sda: 33°C")
        walk.add(f"{folder}/{name}", value, attr=_attr(name))
    return True


def _sysfs(walk: _Walk, chip: str, name: str, value: str) -> None:
    """One hwmon attribute and its value as sysfs gives it (millidegrees, RPM, pwm 0-255): its name and label files
    name the chip and the channel; the rest are readings."""
    value = value.strip()
    if name == "name":
        walk.hwmon_names[chip] = value
        return
    labelled = re.fullmatch(r"((?:temp|fan|in|power)\d+)_label", name)
    if labelled:
        walk.labels[(chip, labelled.group(1))] = value
        return
    if re.fullmatch(NUMBER, value):
        if re.fullmatch(r"temp\d+_(input|max|crit|min|emergency)", name):
            value = f"{float(value) / 1000.0} C"
        elif re.fullmatch(r"fan\d+_(input|target|min|max)", name):
            value += " RPM"
    walk.add(name, value, attr=_attr(name), chip=chip)


_OD_VALUE = re.compile(r"^\w+:\s*\|?\s*(-?\d+)")
_OD_ATTR = {"fan_zero_rpm_enable": "fan1_zero_rpm_enable", "fan_zero_rpm_stop_temperature": "fan1_zero_rpm_stop",
            "fan_minimum_pwm": "fan1_minimum_pwm"}


def _gpu_od(walk: _Walk, folder: str, name: str, value: str) -> None:
    """amdgpu's ``gpu_od/fan_ctrl`` files as one line (``FAN_ZERO_RPM_ENABLE: | 1 | OD_RANGE: | ...``, a tool's
    join of the file's lines): the setting, and the curve's OD_RANGE of duty (its floor)."""
    chip = next((c for c, n in walk.hwmon_names.items() if n == "amdgpu"), None) or "amdgpu"
    curve = re.search(r"FAN_CURVE\(fan speed\):\s*(\d+)\s*%\s+(\d+)\s*%", value, re.IGNORECASE)
    if name == "fan_curve" and curve:
        walk.add("fan1", f"{curve.group(1)} %", attr="fan1_curve_min", chip=chip)
    current = _OD_VALUE.match(value.strip())
    if name in _OD_ATTR and current:
        walk.add("fan1", current.group(1), attr=_OD_ATTR[name], chip=chip)


def _subfeature(walk: _Walk, line: str) -> bool:
    match = _SUBFEATURE.match(line)
    if not match or not (match.group(1) or walk.feature):  # indented, or under a feature's label where a page
        return False  # that collapses white space (HTML without <pre>) took the indent away
    _, attr, value = match.groups()
    unit = " C" if re.fullmatch(r"temp\d+_(input|max|crit|min)", attr) else \
        " RPM" if re.fullmatch(r"fan\d+_(input|min|max|target)", attr) else ""  # sensors -u prints no units
    walk.add(walk.feature or attr, value + unit, attr=attr)
    return True


_OD_FAN = re.compile(r"^FAN_CURVE\(fan speed\):\s*(\d+)\s*%\s+(\d+)\s*%$", re.IGNORECASE)


def _od_range(walk: _Walk, line: str) -> bool:
    """amdgpu's ``gpu_od/fan_ctrl/fan_curve`` OD_RANGE: the lowest and highest duty a curve point may ask for."""
    match = _OD_FAN.match(line)
    if not match:
        return False
    walk.add("fan1", f"{match.group(1)} %", attr="fan1_curve_min", chip=walk.chip or "amdgpu")
    return True


def _thermal(walk: _Walk, line: str) -> bool:
    """/proc/acpi/ibm/thermal: eight or sixteen temperatures on one line, -128 where a sensor is not there."""
    match = _THERMAL.match(line)
    if not match:
        return False
    for n, value in enumerate(match.group(1).split(), start=1):
        walk.add(f"temp{n}", f"{value} C", attr=f"temp{n}_input", chip="thinkpad")
    return True


def _one_line(walk: _Walk, line: str, readers: tuple[oneline.Reader, ...]) -> bool:
    """The first of ``readers`` (app.fans.read.oneline) that reads ``line``, its reading added."""
    for reader in readers:
        found = reader(line)
        if found is not None:
            walk.add(found.label, found.text, attr=found.attr, chip=found.chip)
            return True
    return False


def _table(walk: _Walk, line: str) -> bool:
    """A space-aligned table's header, or one of its rows (app.fans.read.headed)."""
    spans = headed.header(line)
    if spans is not None:
        walk.columns = spans
        return True
    cells = headed.row(walk.columns, line) if walk.columns is not None else None
    if cells is None:
        walk.columns = None
        return False
    for column, (label, text) in enumerate(cells):
        walk.add(label, text, column)
    return True
