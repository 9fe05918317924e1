"""The hwmon tree a capture is written back into (``Chips``: chip folders as captures name them, ``hwmon3``, or
as ``sensors`` lists them), and the readers of captures that are plain files of that tree: a shell session of
``cat /sys/class/hwmon/...`` with its output, a graphics card's hwmon files ``cat``ed beside a listing, and
``amdgpu-ls`` (Ricks-Lab's gpu-utils)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from ..fans.chips import chip
from ..fans.read import cardfiles, oneline
from ..fans.read.prompts import BEFORE_COMMAND, PROMPT
from ..fans.values import parse

MAX_CHIPS = 256  # chips one capture may make: a machine has a few dozen; past this the rest are left out, said


class Chips:
    """hwmon chip folders made as captures name them (hwmon3) or as ``sensors`` does (one per chip it lists), at
    most MAX_CHIPS (``left_out`` counts the chips past them: a paste of 95,000 chips is not one machine, and
    writing them all cost minutes and most of a gigabyte). Files are kept until ``flush`` writes each once, its last
    value (a listing pasted again and again, a ``watch sensors`` log, wrote every file once a listing: a minute for
    2 MB)."""

    def __init__(self, base: Path):
        self.base = base
        self._made: dict[str, Path] = {}
        self._files: dict[Path, str] = {}  # each file's last value, until ``flush``
        self.left_out: set[str] = set()

    def folder(self, key: str, name: str | None = None) -> Path | None:
        if key not in self._made and len(self._made) >= MAX_CHIPS:
            if len(self.left_out) < 1 << 20:
                self.left_out.add(key)
            return None
        if key not in self._made:
            folder = self.base / (key if re.fullmatch(r"hwmon\d+", key) else f"hwmon{100 + len(self._made)}")
            folder.mkdir(parents=True, exist_ok=True)
            self._made[key] = folder
        folder = self._made[key]
        if name is not None and folder / "name" not in self._files and not (folder / "name").exists():
            self._files[folder / "name"] = name + "\n"
        return folder

    def made(self) -> list[str]:
        """The chips made so far, as their captures name them."""
        return list(self._made)

    def write(self, key: str, file: str, value: str, name: str | None = None) -> None:
        """``file`` of chip ``key``: an attribute's name (``fan1_input``, ``device/vendor``) as sysfs names them;
        anything else (a deeper folder, ``..``, a name longer than a file system takes) is not a reading and is
        left out, never an error: a device's deeper folders are not read (gpu_od's fan_ctrl is, below)."""
        if not _ATTRIBUTE.fullmatch(file):
            return
        folder = self.folder(key, name)
        if folder is None:
            return
        self._files[folder / file] = value.strip() + "\n"

    def flush(self) -> None:
        """Every file kept, written once with its last value."""
        for target, value in self._files.items():
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(value)
            except OSError:
                continue  # a value the tree cannot hold: that one reading is not read
        self._files.clear()


_ATTRIBUTE = re.compile(r"(?:device/)?[A-Za-z0-9_][\w-]{0,99}")


# "cat /sys/class/hwmon/hwmon2/fan1_input", or by the device's path ("/sys/devices/platform/cooling_fan/hwmon/hwmon*/
# fan1_input", "/sys/class/drm/card1/device/hwmon/hwmon4/pwm1"): the chip is the folder as written (a glob in it is
# one chip)
_PROMPT = BEFORE_COMMAND
_CAT = re.compile(_PROMPT + r"(?:sudo\s+)?cat\s+/sys/(?:class/hwmon/|devices/\S*?/([\w.:-]+)/hwmon/|class/drm/"
                  r"(card\d+)/device/hwmon/)(hwmon[\d*]+|\*)/([\w*]+)(?:\s+\S*>\S*)?\s*$")
_ECHO_HEADER = re.compile(_PROMPT + r"echo\s+[\"']?=== (\w+) ===")
_COMMAND = re.compile(_PROMPT + r"(?:sudo\s+)?(?:ls|cat|echo|cd|grep|sensors|vcgencmd)\b")


def cat_session(text: str, chips: Chips) -> str | None:
    """A shell session of ``cat /sys/class/hwmon/hwmonN/FILE`` commands and their output: each file's value the first
    line its own command printed (other commands between them, a ``tee``'s echo and its error, print their own); where
    the commands come first and their output after the last of them, the values in the commands' order; a glob
    (``fan*_input``) after an ``echo "=== name ==="`` answers under that header."""
    session = _Session()
    for line in (raw.strip() for raw in text.splitlines()):
        session.line(line)
    commands, output = session.commands, session.output
    if not commands:
        return None
    if session.soc is not None:  # the SoC's temperature as the firmware reads it, where the kernel's zone puts it
        chips.write("cpu_thermal", "temp1_input", str(round(session.soc * 1000)), "cpu_thermal")
    globbed = [c for c in commands if "*" in c[1]]
    if globbed:
        sections = _sections(output)
        for chip, pattern, name in dict.fromkeys(globbed):  # a session pasted twice: each glob read once
            family = re.match(r"[a-z]+", pattern)
            for n, value in enumerate(sections.get(name or "", []), start=1):
                chips.write(chip, pattern.replace("*", str(n)) if family else pattern, value, name)
    elif all(not block for block in session.blocks[:-1]):  # the commands typed first, their output after them
        for (chip, file, name), value in zip(commands, output, strict=False):  # a post may cut the output
            chips.write(chip, file, value, name)
    else:
        for (chip, file, name), block in zip(commands, session.blocks, strict=True):
            if block:
                chips.write(chip, file, block[0], name)
    return "cat of hwmon files"


def card_files(text: str, chips: Chips, driver: Callable[[str], str]) -> str | None:
    """A graphics card's hwmon files a paste ``cat``s beside its listing (``pwm1``, ``pwm1_enable``: what the listing
    does not print; ``app.fans.read.cardfiles``), written into that card's chip where the listing holds one GPU
    driver's chip only (``driver`` names a chip's driver from its key)."""
    files = cardfiles.files(text)
    gpus = [key for key in chips.made() if chip(driver(key)).kind == "gpu"]
    if not files or len(gpus) != 1:
        return None
    for file, value in files:
        chips.write(gpus[0], file, value)
    return "cat of the card's hwmon files"


class _Session:
    """The ``cat`` commands of a session (each file's chip, name and the header an ``echo`` gave it), the output
    lines after them (all of them, and each command's own: the lines after it up to the next command), and
    vcgencmd's SoC temperature."""

    def __init__(self) -> None:
        self.commands: list[tuple[str, str, str | None]] = []
        self.output: list[str] = []
        self.blocks: list[list[str]] = []  # each cat command's own output
        self._block: list[str] | None = None  # the block output goes to: None after a command that is not a cat
        self.header: str | None = None
        self.soc: float | None = None

    def line(self, line: str) -> None:
        echo, cat, soc = _ECHO_HEADER.match(line), _CAT.match(line), oneline.soc(line)
        if soc is not None:  # vcgencmd measure_temp's "temp=81.3'C" (app.fans.read.oneline)
            self.soc = parse(soc.text)[0]
        elif echo:
            self.header = echo.group(1)
        elif cat:
            device, card, folder, file = cat.groups()  # a device's path names the chip by its device's folder
            device = device or card  # (a graphics card's by its card: its name file, where read, says its driver)
            self.commands.append((f"{device}/{folder}" if device else folder, file, self.header or device))
            self.header = None
            self._block = []
            self.blocks.append(self._block)
        elif _COMMAND.match(line) or _PROMPTED.match(line):
            self._block = None
        elif self.commands and line and not re.match(r"^[-dl][-rwx]{9}", line) \
                and not line.startswith("#"):  # a command's output comes after it
            self.output.append(line)
            if self._block is not None and not _CAPTION.fullmatch(line):
                self._block.append(line)


_PROMPTED = re.compile(r"^(?:" + PROMPT + r")\s+\S")  # a command behind a prompt, whatever it runs
_CAPTION = re.compile(r"[A-Z][a-z]+:")  # "Output:" before a command's output, as a report lays it out


def _sections(output: list[str]) -> dict[str, list[str]]:
    """Output lines under ``=== name ===`` headers, by name; a header met again starts its section again (the
    same session run twice: its last run's values, not both runs' as more fans)."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in output:
        header = re.fullmatch(r"=== (\w+) ===", line)
        if header:
            current = sections[header.group(1)] = []
        elif current is not None and re.fullmatch(r"-?\d+", line):
            current.append(line)
    return sections


_AMDGPU_LS = {"Current Fan Speed (rpm)": "fan1_input", "Current Fan PWM (%)": "pwm1", "Fan PWM Mode": "pwm1_enable",
              "Fan Speed Range (rpm)": "fan1_min fan1_max"}


def amdgpu_ls(text: str, chips: Chips) -> str | None:
    """amdgpu-ls (Ricks-Lab's gpu-utils): each card's fan speed, duty, mode and range, as amdgpu's hwmon files."""
    card = -1
    found = 0
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "Card Model" or (key == "Card Number" and card < 0):
            card += 1
        if key not in _AMDGPU_LS or card < 0:
            continue
        numbers = re.findall(r"-?\d+(?:\.\d+)?", value)
        for file, number in zip(_AMDGPU_LS[key].split(), numbers, strict=False):
            scaled = float(number) * 255 / 100 if file == "pwm1" else float(number)
            chips.write(f"amdgpu-ls-{card}", file, str(round(scaled)), "amdgpu")
            found += 1
    return "amdgpu-ls" if found else None
