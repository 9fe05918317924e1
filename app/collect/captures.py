"""Captured text of another machine's sensors, made back into what the live path reads: an hwmon tree under a sys
root and the fan daemons' configurations under an etc root. ``fanwhy explain FILE...`` then reads them with the
same readers as a live machine (app.collect.hwmon, app.collect.fans), so a replay is true to the live answer.

Read here: hwmon listings as people post them (``grep -r . /sys/class/hwmon/hwmon*/``, ``grep . ...``, and
``head``/``cat`` of single files with ``==> path <==`` headers, a shell session of ``cat /sys/class/hwmon/...``),
``sensors -j``, ``sensors -u`` and ``sensors`` text, ``ipmitool sdr``/``sdr elist``/``sensor`` listings,
``nvidia-smi``'s table (each card's fan, temperature, power and utilization), ``amdgpu-ls``, and fancontrol,
thinkfan and fan2go configurations (the tree and its plain-file readers are app.collect.capture_tree); what was
done to the control, apart (app.collect.control_captures). Anything else is refused with one line
(``Unreadable``). Inputs are bounded: a file over ``MAX_BYTES``, a line over ``MAX_LINE`` characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..core.fan import Note
from ..core.jsonvalue import loads, number
from ..core.model import GpuSample
from ..fans.facts import Curve
from ..fans.read.chipheader import header_driver, twins
from ..fans.values import fahrenheit_to_celsius
from . import (
    amdfan,
    bmc,
    control_captures,
    fancontrol,
    i8kmon,
    lact,
    liquidctl,
    nbfcconfig,
    nfancurve,
    nvidia_captures,
    thinkfan,
    zcfan,
)
from .capture_tree import MAX_CHIPS, Chips, amdgpu_ls, card_files, cat_session
from .pasted import as_printed, window_said, windowed

MAX_BYTES = 4 << 20
MAX_LINE = 4096
# path:value (grep) or a path and its value apart by blanks (a shell loop's ``echo "$f $(cat $f)"``, ``paste``)
_HWMON_PATH = re.compile(r"^/sys/(?:class/hwmon|devices/\S*?/hwmon)/(hwmon\d+)/(\S+?)(?::|\s+)(.*)$")
_HEADER = re.compile(r"^==> (/sys/\S*/(hwmon\d+)/(\S+)) <==$")
_SENSORS_LINE = re.compile(r"^([^:]{1,60}):\s+([+-]?\d+(?:\.\d+)?)\s*(RPM|°C|C|°F|%)?(?!\w)")
_SENSORS_LIMIT = re.compile(r"\b(min|max)\s*=\s*(\d+)\s*RPM|\b(div)\s*=\s*(\d+)\b")  # div: an old chip's divisor
_SUBFEATURE = re.compile(r"^\s+((?:fan|temp|pwm)\d+)(_[a-z_]+)?:\s+([+-]?\d+(?:\.\d+)?)\s*$")


class Unreadable(ValueError):
    """A capture FanWhy cannot read: the message is the one line a person sees."""


@dataclass
class Replay:
    """Where the captures were written: a sys root and an etc root, and what each file was read as."""

    sys_root: Path
    etc_root: Path
    kinds: list[str]
    bmc: str = ""  # an ipmitool listing, as the BMC poller reads it
    liquidctl: str = ""  # liquidctl status, text or --json
    proc_root: Path = Path("/nonexistent")  # /proc/acpi/ibm/fan and thermal, written under it
    gpus: list[GpuSample] = field(default_factory=list)  # from nvidia-smi's table: each card and its fan
    notes: list[Note] = field(default_factory=list)  # what was done to the fans' control (control_captures)
    unread: list[Path] = field(default_factory=list)  # files none of these readers knows (``load(strict=False)``)
    curves: tuple[Curve, ...] = ()  # what the fan daemons' configurations declare (the fan wing's facts)
    texts: dict[Path, str] = field(default_factory=dict)  # each file's text as read (made plain once: seconds a MiB)


def load(paths: list[Path], into: Path, strict: bool = True) -> Replay:
    """Every file of ``paths`` written under ``into`` (one machine's captures combine); ``Unreadable`` for a file
    that is empty or too large, and for one that is none of the known kinds (with ``strict``; else it is listed in
    ``Replay.unread``, for the fan wing's general reader)."""
    replay = Replay(into / "sys", into / "etc", [], proc_root=into / "proc")
    (replay.sys_root / "class" / "hwmon").mkdir(parents=True, exist_ok=True)
    replay.etc_root.mkdir(parents=True, exist_ok=True)
    chips = Chips(replay.sys_root / "class" / "hwmon")
    for path in paths:
        text = replay.texts[path] = _text(path)
        # one listing a file (the first kind that reads it); a post often adds a daemon's configuration, a
        # ThinkPad's /proc/acpi/ibm/fan or liquidctl's status beside it, which are read as well
        config = _config(text, replay.etc_root)
        main = _main(text, chips, replay)
        notes = control_captures.read(text)
        replay.notes += notes
        control = "what was done to the control (" + ", ".join(n.kind for n in notes) + ")" if notes else None
        found = [k for k in (main, config, _thinkpad(text, replay), _liquidctl(text, replay), control) if k]
        kind = " + ".join(found) or None
        if kind is None and not strict:
            replay.unread.append(path)
            continue
        if kind is None:
            raise Unreadable(f"{path}: not a capture FanWhy reads (sensors -j, sensors -u or sensors text, an hwmon "
                             "listing from grep -r . /sys/class/hwmon/hwmon*/, ipmitool sdr, sdr elist or sensor, "
                             "ipmiutil sensor, nvidia-smi's table, -q or -q -x, nvidia-settings -q, nvfancontrol's "
                             "log, /proc/acpi/ibm/fan or thermal, liquidctl status, amdgpu-ls, cat of hwmon files, "
                             "what was done to a fan's control (curve writes, liquidctl set, a fan daemon's log), "
                             "or a fancontrol, thinkfan, fan2go or fw-fanctrl configuration)")
        replay.kinds.append(f"{path.name}: {kind}{window_said(text)}")
    chips.flush()
    if chips.left_out:
        replay.kinds.append(f"the first {MAX_CHIPS} chips only: {len(chips.left_out):,} more left out (one "
                            "machine has a few dozen)")
    return replay


def _main(text: str, chips: Chips, replay: Replay) -> str | None:
    """What one file is read as: a board's listing (the hwmon tree), and beside it a GPU's or a BMC's own listing (a
    post often gives ``sensors`` and ``nvidia-smi`` together), or a session of ``cat`` or ``amdgpu-ls``."""
    board = _listing(text, chips) or _sensors_json(text, chips) or _sensors_text(text, chips)
    device = _ipmitool(text, replay) or _nvidia(text, replay) or _ipmiutil(text, replay)
    card = card_files(text, chips, _chip_name) if board else None
    if board or device:
        return " + ".join(k for k in (board, card, device) if k)
    return cat_session(text, chips) or amdgpu_ls(text, chips)


def text_of(path: Path) -> str:
    """The text of a capture file, bounded (``Unreadable`` for one that cannot be read, is empty or too large)."""
    return _text(path)


def _text(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as error:
        raise Unreadable(f"{path}: {error.strerror or error}") from None
    if len(data) > MAX_BYTES:
        raise Unreadable(f"{path}: larger than {MAX_BYTES >> 20} MiB: not one machine's capture")
    text = as_printed(data)
    if not text.strip():
        raise Unreadable(f"{path}: empty")
    text = _NOT_A_READING.sub("N/A", text)
    return windowed("\n".join(line[:MAX_LINE] for line in text.splitlines()))


# A run of digits longer than any 64-bit counter's is no reading a tool printed: written as a word that says so,
# here where a capture's text enters, so that no reader parses it into an infinity or an integer no float holds.
_NOT_A_READING = re.compile(r"\d{20,}")


def _listing(text: str, chips: Chips) -> str | None:
    """``grep -r . /sys/class/hwmon/hwmon*/`` (path:value lines; a path and its value apart by blanks) or ``head`` of
    files (``==> path <==``)."""
    found = 0
    current: tuple[str, str] | None = None
    for line in text.splitlines():
        line = line.strip()
        header = _HEADER.match(line)
        if header:
            current, found = (header.group(2), header.group(3)), found + 1
            continue
        match = _HWMON_PATH.match(line)
        if match:
            chip, file, value = match.groups()
            if re.fullmatch(r"device/gpu_od/fan_ctrl/[a-z_]+", file):  # amdgpu's overdrive: its floor, zero-RPM
                _gpu_od(chips, chip, file, value)
            else:
                chips.write(chip, file, value)
            found += 1
        elif current is not None and line:
            chips.write(current[0], current[1], line)
            current = None
    return "hwmon listing" if found else None


def _gpu_od(chips: Chips, chip: str, file: str, value: str) -> None:
    folder = chips.folder(chip)
    if folder is None:
        return
    target = folder / file
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a") as handle:  # grep prints a multi-line file a line at a time
        handle.write(value.strip() + "\n")


def _sensors_json(text: str, chips: Chips) -> str | None:
    """``sensors -j``: chips, their features (the label), their subfeatures (``fan1_input``: RPM, °C)."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        data = loads(text)
    except ValueError:
        return None  # not whole JSON (cut short, or a Python dict printed): the general reader mends what it can
    if not isinstance(data, dict) or not any(header_driver(str(key)) for key in data):
        return None  # JSON whose keys are no chip headers (Redfish, liquidctl --json): the general reader's
    for chip_key, features in data.items():
        if not isinstance(features, dict):
            continue
        name = _chip_name(chip_key)
        for label, values in features.items():
            if isinstance(values, dict):
                _subfeatures(chips, chip_key, name, label, values.items())
    return "sensors -j"


def _chip_name(key: str) -> str:
    return header_driver(key) or key.split("-")[0]


def _subfeatures(chips: Chips, chip: str, name: str, label: str, values: Iterable[tuple[str, object]]) -> None:
    for sub, value in values:
        match = re.fullmatch(r"((fan|temp|pwm)\d+)(_[a-z_]+)?", str(sub))
        if not match or not isinstance(value, (int, float)) or number(value) is None:
            continue
        base, kind, suffix = match.group(1), match.group(2), match.group(3) or ""
        if kind == "temp" and suffix in ("_input", "_max", "_crit", "_min", "_crit_hyst", "_max_hyst", ""):
            chips.write(chip, f"{base}{suffix or '_input'}", str(round(float(value) * 1000)), name)
        elif (kind == "fan" and suffix in ("_input", "_min", "_max", "_div", "_target", "_alarm", "_fault")) or \
                kind == "pwm":
            chips.write(chip, f"{base}{suffix}", str(round(float(value))), name)
        else:
            continue
        if suffix in ("_input", "") and label != base:
            chips.write(chip, f"{base}_label", label, name)


def _sensors_text(text: str, chips: Chips) -> str | None:
    """``sensors -u`` (subfeatures by name) or ``sensors`` (a label, a value and its unit per line), each chip
    starting at its ``name-bus-address`` line."""
    chip: str | None = None
    label: str | None = None
    counts: dict[str, int] = {}
    found = 0
    kind = "sensors"
    twin = twins(text)
    for line in text.splitlines():
        if header_driver(line) and not line.startswith(" "):
            chip, label, counts = line.strip(), None, {}
            if _chip_name(chip).lower() in twin:  # two devices of one driver: each by its whole header, as read
                chips.folder(chip, chip.lower())
            continue
        if chip is None or line.startswith("Adapter:"):
            continue
        sub = _SUBFEATURE.match(line)
        if sub:
            kind = "sensors -u"
            _subfeatures(chips, chip, _chip_name(chip), label or sub.group(1),
                         [(sub.group(1) + (sub.group(2) or ""), float(sub.group(3)))])
            found += 1
            continue
        if line.rstrip().endswith(":") and not line.startswith(" "):
            label = line.rstrip()[:-1].strip()
            continue
        if _plain_line(line, chips, chip, counts):
            found += 1
    return kind if found else None


def _plain_line(line: str, chips: Chips, chip: str, counts: dict[str, int]) -> bool:
    """One ``label:  value unit`` line of ``sensors`` text (a fan with its min and max, a pwm in %, a temperature)
    written as its chip's files; False for a line that is none of them."""
    plain = _SENSORS_LINE.match(line)
    if not plain or not plain.group(3):
        return False
    name, value, unit = plain.group(1).strip(), float(plain.group(2)), plain.group(3)
    if unit == "°F":  # sensors -f: the driver's °C, shown in Fahrenheit
        value = fahrenheit_to_celsius(value)
    family = "fan" if unit == "RPM" else "pwm" if unit == "%" else "temp"
    counts[family] = counts.get(family, 0) + 1
    numbered = re.fullmatch(rf"{family}(\d+)", name)
    n = int(numbered.group(1)) if numbered else counts[family]
    values: list[tuple[str, object]] = [(f"pwm{n}" if family == "pwm" else f"{family}{n}_input",
                                         value * 255 / 100 if family == "pwm" else value)]
    if family == "pwm" and "MANUAL CONTROL" in line:  # how sensors shows pwm_enable 1
        values.append((f"pwm{n}_enable", 1))
    if family == "fan":
        values += [(f"fan{n}_{which or div}", int(limit or by))
                   for which, limit, div, by in _SENSORS_LIMIT.findall(line)]
    _subfeatures(chips, chip, _chip_name(chip), name, values)
    return True


def _config(text: str, etc: Path) -> str | None:
    """A fan daemon's configuration, put where the daemon keeps it."""
    listed = fancontrol.printed(text)
    if listed is not None:
        (etc / "fancontrol").write_text(listed)
        return "fancontrol's listing of its settings as it started"
    if re.search(r"^\s*(FCTEMPS|FCFANS|MINTEMP|MAXTEMP)\s*=", text, re.MULTILINE):
        (etc / "fancontrol").write_text(text)
        return "fancontrol configuration"
    if re.search(r"^\s*fans\s*:", text, re.MULTILINE) and \
            re.search(r"^\s*(curves|-?\s*platform)\s*:", text, re.MULTILINE):  # fan2go's current schema, or its first
        (etc / "fan2go").mkdir(exist_ok=True)
        (etc / "fan2go" / "fan2go.yaml").write_text(text)
        return "fan2go configuration"
    if re.search(r"^\s*(fans|sensors)\s*:", text, re.MULTILINE) and re.search(r"^\s*levels\s*:", text, re.MULTILINE):
        (etc / "thinkfan.yaml").write_text(text)
        return "thinkfan configuration"
    if re.search(r'"strategies"\s*:', text) and re.search(r'"speedCurve"\s*:', text):  # fw-fanctrl's config.json
        (etc / "fw-fanctrl").mkdir(exist_ok=True)
        (etc / "fw-fanctrl" / "config.json").write_text(text)
        return "fw-fanctrl configuration"
    if i8kmon.parse(text).declared:  # i8kutils' table of fan states, or i8kmon -v's echo of it
        (etc / "i8kmon.conf").write_text(text)
        return "i8kmon configuration"
    if nfancurve.parse(text).declared:  # nan0s7's script: where its systemd unit reads it, /etc/nfancurve.conf
        (etc / "nfancurve.conf").write_text(text)
        return "nfancurve configuration"
    if lact.parse(text).declared:  # LACT's settings of each card, where its daemon reads them
        (etc / "lact").mkdir(exist_ok=True)
        (etc / "lact" / "config.yaml").write_text(text)
        return "LACT configuration"
    if amdfan.parse(text).declared:  # amdgpu-fan's or amdfan's speed_matrix, in the file its daemon reads
        (etc / amdfan.file_of(text)).write_text(text)
        return "amdfan configuration" if amdfan.file_of(text) == "amdfan.yml" else "amdgpu-fan configuration"
    if nbfcconfig.parse(text).declared:  # NBFC's model configuration or its settings, where nbfc_service reads them
        (etc / "nbfc").mkdir(exist_ok=True)
        (etc / "nbfc" / "nbfc.json").write_text(text)
        return "NBFC configuration"
    if zcfan.parse(text).declared:  # zcfan's trip temperatures, where it reads them
        (etc / "zcfan.conf").write_text(text)
        return "zcfan configuration"
    if thinkfan.legacy(text).declared:  # thinkfan.conf.legacy(5): where thinkfan keeps it, /etc/thinkfan.conf
        (etc / "thinkfan.conf").write_text(text)
        return "thinkfan configuration (legacy syntax)"
    return None


def _ipmitool(text: str, replay: Replay) -> str | None:
    """``ipmitool sdr`` / ``sdr elist`` / ``sensor``: kept for the BMC reader (app.collect.bmc) to read."""
    readings = bmc.parse(text)
    if not any(r.value is not None for r in readings):
        return None
    replay.bmc += text + "\n"
    return "ipmitool listing"



def _nvidia(text: str, replay: Replay) -> str | None:
    """nvidia-smi's table, -q -x or -q, or nvidia-settings -q (app.collect.nvidia_captures). A card the text lists
    twice (a table before and one after) is one card, as it was left: its last listing."""
    start = len(replay.gpus)
    try:
        kind = nvidia_captures.table(text, replay.gpus) or nvidia_captures.xml(text, replay.gpus) \
            or nvidia_captures.query(text, replay.gpus) or nvidia_captures.settings(text, replay.gpus) \
            or nvidia_captures.nvfancontrol(text, replay.gpus) or nvidia_captures.assignment(text, replay.gpus)
    except ValueError as error:
        raise Unreadable(str(error)) from None
    added = replay.gpus[start:]
    last = {g.index: g for g in added}
    replay.gpus[start:] = [last[index] for index in dict.fromkeys(g.index for g in added)]
    return kind


def _thinkpad(text: str, replay: Replay) -> str | None:
    """``/proc/acpi/ibm/fan`` (level and speed) or ``/proc/acpi/ibm/thermal``, put where thinkpad_acpi has them."""
    base = replay.proc_root / "acpi" / "ibm"
    found = []
    if re.search(r"^level:\s*\S+", text, re.MULTILINE) and re.search(r"^speed:\s*\d+", text, re.MULTILINE):
        # a post with several readings: the last is the machine as it was left
        blocks = re.split(r"\n(?=status:)", text)
        base.mkdir(parents=True, exist_ok=True)
        (base / "fan").write_text(blocks[-1])
        found.append("/proc/acpi/ibm/fan")
    thermal = re.findall(r"^temperatures:\s*-?\d+.*$", text, re.MULTILINE)
    if thermal:  # often pasted beside the fan file: both are read (the last line, as the machine was left)
        base.mkdir(parents=True, exist_ok=True)
        (base / "thermal").write_text(thermal[-1] + "\n")
        found.append("/proc/acpi/ibm/thermal")
    return " and ".join(found) or None


def _liquidctl(text: str, replay: Replay) -> str | None:
    """``liquidctl status``, its text tree or ``--json``: kept for the liquidctl reader (app.collect.liquidctl)."""
    try:
        devices = liquidctl.parse(text)
    except (ValueError, TypeError, KeyError):
        return None
    if not devices:
        return None
    replay.liquidctl = text
    return "liquidctl status"


_IPMIUTIL = re.compile(r"^[0-9a-f]{4} SDR \w+ .*? snum [0-9a-f]{2} (.+?)\s*= [0-9a-f]{2} (\S+)\s+(-?\d+(?:\.\d+)?) "
                       r"(RPM|degrees C|percent)\s*$", re.IGNORECASE)
_IPMIUTIL_STATUS = {"ok": "ok", "absent": "ns", "init": "ns"}


def _ipmitool_line(name: str, status: str, value: str, unit: str) -> str:
    lower = status.lower()
    code = _IPMIUTIL_STATUS.get(lower) or ("cr" if lower.startswith(("crit", "nonrec")) else "nc")
    return f"{name} | {value} {unit} | {code}"


def _ipmiutil(text: str, replay: Replay) -> str | None:
    """``ipmiutil sensor``: its full sensor lines, said again as ipmitool's ``sdr`` lines for the BMC reader."""
    lines = [_ipmitool_line(*m.groups()) for line in text.splitlines() if (m := _IPMIUTIL.match(line.strip()))]
    if not lines:
        return None
    replay.bmc += "\n".join(lines) + "\n"
    return "ipmiutil sensor"
