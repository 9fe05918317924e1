"""What a capture shows was done to a fan's control, beside its readings: the writes a person made and what the
driver answered, a fan daemon's log, a controller's errors. Each is a ``Note`` (a kind and its facts); the verdict
puts them in words (app.verdict.notes). Read only from captures: a live machine does not log its past writes.

Read here: amdgpu's ``gpu_od/fan_ctrl/fan_curve`` with its ``OD_RANGE`` and the points written to it, liquidctl's
``set`` commands with their errors and two ``status`` listings taken around a change, a fan daemon's
"Updated GPU n: ... Fan Speed=n%" log, i8kutils' ``/proc/i8k``, ``i8kfan`` and ``i8kmon`` (-1: no SMM interface),
System76's EC console and a log of its ``ec=``/``pkg=``/``fan=`` readings, pwm writes on a Gigabyte IT8689 board,
``framework_tool``'s settings with the ``--thermal`` readings after each, nvidia-settings refusing a fan write (or
with no X display to set it through),
and the kernel refusing a write to a pwm or fan file.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..core.fan import Note, NoteKind
from ..core.model import frozen_map
from ..core.record import record
from ..fans.read.profiles import SET_COMMAND
from . import liquidctl

_OD_SPEED = re.compile(r"FAN_CURVE\(fan speed\):\s*(\d+)%\s+(\d+)%")
_OD_TEMP = re.compile(r"FAN_CURVE\(hotspot temp\):\s*(-?\d+)C\s+(-?\d+)C")
_OD_POINT = re.compile(r"^(?:\$\s*)?(?:echo\s+)?\"?(\d)\s+(\d+)\s+(\d+)\"?(?:\s*[>|].*)?$", re.MULTILINE)
_LQ_ERROR = re.compile(r"^ERROR:\s*(.+?):\s*(.+?)\s*$", re.MULTILINE)
_DAEMON_SET = re.compile(r"Updated GPU (\d+): Temp=(\d+)\s*°?C, Fan Speed=(\d+)\s*%")
_I8K = re.compile(r"(?:fan status:\s*-1\b|^\s*-1 -1\s*$|i8kmon\[\d+\]: temp, [^:]*: -1 -1)", re.MULTILINE)
_I8K_CPU = re.compile(r"CPU temperature \(Celsius\):\s*(\d+)")
_PECI = re.compile(r"peci_get_temp: hardware error: (0x[0-9a-fA-F]+)")
_EC_FAN = re.compile(r"system76_ectool fan \d+\s*\n(\d+)\s*$", re.MULTILINE)
_EC_LOG = re.compile(r"\bpkg=(\d+)C\s+ec=(\d+)C\s+fan=(\d+)rpm|\bec=(\d+)C\s+pkg=(\d+)C\s+fan=(\d+)rpm")
_IT8689 = re.compile(r"\bit8689", re.IGNORECASE)
_PWM_STATE = re.compile(r"^enable=1\s*\n(?:\w+=\d+\s*\n)*?val=(\d+)", re.MULTILINE)
_PWM_ECHO = re.compile(r"echo (\d+) > pwm\d\b[^\n]*?(?:still ~?(\d+) RPM)?$", re.MULTILINE)
# nvidia-settings(1) refusing a write: "ERROR: Error assigning value 1 to attribute 'GPUFanControlState' (...)"
_NV_REFUSED = re.compile(r"Error assigning value (\d+) to attribute '(GPUFanControlState|GPUTargetFanSpeed)'")
# nvidia-settings without an X server to talk to ("ERROR: The control display is undefined" with no DISPLAY; GTK's
# "Unable to init server" or "cannot open display" before it), a fan assignment on its command line: nothing was set
_NV_NO_DISPLAY = re.compile(r"The control display is undefined|Unable to init server|cannot open display")
_NV_FAN_ASSIGNED = re.compile(r"nvidia-settings\b[^\n]*?-a\s*['\"]?[^\n]*?(GPUFanControlState|GPUTargetFanSpeed)")
# a write to a fan's control file and the shell's or tee's error for it, on the same line or the next:
# "echo 1 > /sys/class/hwmon/hwmon3/pwm1_enable" then "bash: echo: write error: Invalid argument"
# (CoolerControl's "Unable to set PWM value 69 for /sys/.../pwm1 Reason: Invalid argument", its reason a few lines
# down where a post wrapped it); amdgpu's own account of the refusal in the kernel's log (amdgpu_pm.c: a pwm1 written
# while pwm1_enable is not 1 is refused with EINVAL, and it prints this)
# The file is hwmon's by its name wherever it is reached (/sys, or a link to a hwmon folder: hddfancontrol's /run/...).
_NOT_ANOTHER = r"(?!/sys/|/\S*?/(?:pwm|fan)\d)"  # the nearest file before the error: no other path between them
_WRITE = re.compile(rf"(/\S*?/((?:pwm|fan)\d+(?:_enable|_target|_mode)?))\b(?:{_NOT_ANOTHER}[^\n])*"
                    rf"(?:\n(?:{_NOT_ANOTHER}[^\n])*?){{0,3}}?"
                    r"(Invalid argument|Permission denied|Device or resource busy|Operation not supported|"
                    r"Operation not permitted|Read-only file system)")
_AMDGPU_MANUAL = re.compile(r"amdgpu[^\n]*?manual fan speed control should be enabled first")
_FW_STEP = re.compile(r"framework_tool (--fansetduty|--fansetrpm|--autofanctrl)\b")
_FW_RPM = re.compile(r"Fan Speed:\s*(\d+) RPM")
_FW_TEMP = re.compile(r"^\s*(\w+):\s+(\d+) C\s*$", re.MULTILINE)


def read(text: str) -> list[Note]:
    """Every note ``text`` holds (none for a capture of readings alone)."""
    notes: list[Note] = []
    for reader in _READERS:
        notes += reader(text)
    return notes


def _note(kind: NoteKind, **facts: float | str) -> Note:
    return Note(kind, frozen_map(facts))


def _amdgpu_curve(text: str) -> list[Note]:
    """Points written to amdgpu's fan_curve that the driver refused, against the range it declares."""
    speed, temp = _OD_SPEED.search(text), _OD_TEMP.search(text)
    refused = text.count("Invalid argument")
    if speed is None or not refused:
        return []
    low, high = int(speed.group(1)), int(speed.group(2))
    t_low, t_high = (int(temp.group(1)), int(temp.group(2))) if temp else (0, 0)
    if high == 0:
        return [_note("curve-locked", refused=refused, t_low=t_low, t_high=t_high)]
    outside = [int(m.group(3)) for m in _OD_POINT.finditer(text) if not low <= int(m.group(3)) <= high]
    if not outside:
        return []
    return [_note("curve-refused", low=low, high=high, t_low=t_low, t_high=t_high, asked=min(outside),
                  refused=refused)]


def _liquidctl_commands(text: str) -> list[Note]:
    """liquidctl's ``set`` commands: one that failed, or a single duty asked."""
    error = _LQ_ERROR.search(text)
    if error and "liquidctl" in text:
        return [_note("set-failed", device=error.group(1), error=error.group(2))]
    notes = []
    for match in SET_COMMAND.finditer(text):
        channel, numbers = match.group(1), [int(n) for n in match.group(2).split()]
        if len(numbers) == 1:  # a profile of (°C, %) pairs is the fan wing's curve (app.fans.read.profiles)
            notes.append(_note("asked-duty", channel=channel, asked=numbers[0]))
    return notes


def _liquidctl_listings(text: str) -> list[Note]:
    """Two ``liquidctl status`` listings of one cooler: a channel whose duty moved while its speed did not."""
    by_device: dict[str, list[dict[str, dict[str, float]]]] = {}
    for device, rows in liquidctl.listings(text):
        channels: dict[str, dict[str, float]] = {}
        for key, value, _ in rows:
            found = liquidctl.channel(key)
            if found is not None:
                kind, number, what = found
                channels.setdefault("Pump" if kind == "pump" else f"Fan {number}", {})[what] = value
        by_device.setdefault(device, []).append(channels)
    for seen in by_device.values():
        if len(seen) < 2:
            continue
        first, last = seen[0], seen[-1]
        moved = [c for c in first if c in last and {"speed", "duty"} <= first[c].keys() <= last[c].keys()
                 and abs(first[c]["duty"] - last[c]["duty"]) >= 20
                 and abs(first[c]["speed"] - last[c]["speed"]) <= 0.05 * max(first[c]["speed"], 1.0)]
        if moved:
            c = moved[0]
            return [_note("duty-ignored", channel=c, duty_a=first[c]["duty"], duty_b=last[c]["duty"],
                          rpm_a=first[c]["speed"], rpm_b=last[c]["speed"], others=len(moved) - 1)]
    return []


def _daemon_log(text: str) -> list[Note]:
    """A fan daemon's log of the duty it set on a card ("Updated GPU 0: Temp=40°C, Fan Speed=30%")."""
    sets = [(int(m.group(1)), int(m.group(3))) for m in _DAEMON_SET.finditer(text)]
    if not sets:
        return []
    gpu = sets[-1][0]
    asked = [p for g, p in sets if g == gpu]
    return [_note("daemon-not-obeyed", gpu=gpu, first=asked[0], last=asked[-1])]


def _i8k(text: str) -> list[Note]:
    """i8kutils answering -1: it cannot reach the fan (no Dell SMM interface on this model, or no access)."""
    if not _I8K.search(text) or ("i8k" not in text.lower()):
        return []
    cpu = _I8K_CPU.search(text)
    return [_note("tool-cannot-reach", tool="i8kutils", **({"cpu_c": int(cpu.group(1))} if cpu else {}))]


def _embedded_controller(text: str) -> list[Note]:
    """System76's EC: PECI errors on its console, or a log where its CPU reading is 0 °C while the CPU is hot."""
    peci = _PECI.search(text)
    if peci:
        duty = _EC_FAN.search(text)
        return [_note("ec-lost-cpu", error=peci.group(1), **({"duty": int(duty.group(1))} if duty else {}))]
    lost = [(int(a or e), int(b or d), int(c or f)) for a, b, c, d, e, f in _EC_LOG.findall(text)
            if int(b or d) == 0]  # (pkg, ec, fan) with the EC reading 0 °C
    if not lost:
        return []
    return [_note("ec-lost-cpu", cpu_c=max(p for p, _, _ in lost), rpm=max(r for _, _, r in lost))]


def _nvidia_settings(text: str) -> list[Note]:
    """nvidia-settings refused to take a card's fan (GPUFanControlState) or to set its speed (GPUTargetFanSpeed),
    or had no X display to set them through."""
    refused = {m.group(2): m.group(1) for m in _NV_REFUSED.finditer(text)}
    if not refused:
        no_display = _NV_NO_DISPLAY.search(text) is not None and _NV_FAN_ASSIGNED.search(text) is not None
        return [_note("control-refused", attribute="display", value=0.0)] if no_display else []
    attribute = "GPUFanControlState" if "GPUFanControlState" in refused else "GPUTargetFanSpeed"
    return [_note("control-refused", attribute=attribute, value=float(refused[attribute]))]


def _write_refused(text: str) -> list[Note]:
    """A write to a fan's pwm, pwm_enable or target file that the kernel refused, with the error it gave."""
    last: dict[str, _Write] = {}  # the last refusal of each file stands (a log repeats one write many times)
    for m in _WRITE.finditer(text):
        last[m.group(2)] = _Write(m.group(1), m.group(2), m.group(3), m.start(), m.end(), m.group(0))
    last.update((w.file, w) for w in _tracebacks(text))
    found: dict[str, dict[str, str]] = {}
    for w in last.values():
        found[w.file] = {"error": w.error, **({"driver": "amdgpu"} if _amdgpu_write(text, w) else {}),
                         **({"later": "taken"} if _taken_later(text[w.end:], w.file) else {}),
                         **({"enable": "taken"} if _enabled_before(text[:w.start], w.file) else {})}
    if _AMDGPU_MANUAL.search(text):
        found["pwm1"] = {"error": "manual fan speed control should be enabled first", "driver": "amdgpu"}
    return [_note("write-refused", file=file, **said) for file, said in found.items()]


# CoolerControl's check of each pwm file it would drive: one its driver lists read-only (sysfs-interface.rst: a
# read/write attribute may be read-only for some chips) it cannot set ("PWM fan at <file> is NOT writable - Fan
# control is not currently supported by the installed driver.")
_NOT_WRITABLE = re.compile(r"PWM fan at (/\S*?/(pwm\d+)) is NOT writable")


def _not_writable(text: str) -> list[Note]:
    """The pwm files a fan program found read-only, as one note (a board's chip lists several)."""
    files = sorted({m.group(2) for m in _NOT_WRITABLE.finditer(text)}, key=lambda f: int(f[3:]))
    named = ", ".join(files[:-1]) + f" and {files[-1]}" if len(files) > 1 else "".join(files)
    return [_note("write-refused", file=named, error="not writable", count=len(files))] if files else []


@record
class _Write:
    """A refused write as a shell, a program or a traceback printed it: the path written, its file's name, the error,
    where it is in the text, and its text."""

    path: str
    file: str
    error: str
    start: int
    end: int
    said: str


def _amdgpu_write(text: str, write: _Write) -> bool:
    """Whether a refused write is to an amdgpu card's file: its path under a DRM card, or amdgpu named on the lines
    of that write's own message (CoolerControl's "Error on amdgpu:fan1" above it), not anywhere in the paste."""
    line = text.rfind("\n", 0, write.start)
    for _ in range(WRITE_LINES_BEFORE):  # its own line and the few above it
        line = text.rfind("\n", 0, max(line, 0))
    before = text[max(line, 0):write.start].split("\n")
    return "/drm/" in write.path or re.search(r"\bamdgpu\b", "\n".join(before) + write.said) is not None


WRITE_LINES_BEFORE = 3  # a program's message about one write spans a few lines (CoolerControl's, as a post wraps it)


def _taken_later(after: str, file: str) -> bool:
    """Whether ``file`` is written again after a refusal and no error follows that write within the lines a shell's
    error takes (a session that set pwmN_enable 1 and wrote the duty again)."""
    for write in re.finditer(rf"(?:>|\btee\b)[ \t]*\S*/{re.escape(file)}\b[^\n]*", after):
        following = "\n".join(after[write.end():].split("\n")[1:WRITE_LINES_AFTER + 1])
        if not _ERROR.search(write.group(0) + "\n" + following):
            return True
    return False


def _enabled_before(before: str, file: str) -> bool:
    """Whether a duty file's channel was set to manual (1 written to its pwmN_enable) before the refused write, and
    no error followed that write (a shell's echo or tee)."""
    if not re.fullmatch(r"pwm\d+", file):
        return False
    for write in re.finditer(rf"echo\s+1\s*(?:>|\|\s*(?:sudo\s+)?tee)[ \t]*\S*/{file}_enable\b[^\n]*", before):
        following = "\n".join(before[write.end():].split("\n")[1:WRITE_LINES_AFTER + 1])
        if not _ERROR.search(write.group(0) + "\n" + following):
            return True
    return False


# A Python program's traceback ending in the kernel's refusal of a write ("OSError: [Errno 22] Invalid argument"),
# its frames naming the fan file written last ("self.write_endpoint('pwm1', int(speed))"): the file and the error.
# Read a traceback at a time (its indented frames, then the exception's line), in one pass over the text.
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):\n((?:[ \t]+[^\n]*\n)*)([^\n]*)", re.MULTILINE)
_FAN_FILE = re.compile(r"\(\s*['\"]((pwm\d+(?:_enable)?|fan\d+_target))['\"]")
_REFUSAL = re.compile(r"(?:OSError|PermissionError): \[Errno \d+\] (.+)")


def _tracebacks(text: str) -> list[_Write]:
    """Each traceback whose exception is the kernel's refusal of a write and whose frames name a fan file."""
    found = []
    for m in _TRACEBACK.finditer(text):
        refusal = _REFUSAL.fullmatch(m.group(2).strip())
        files = _FAN_FILE.findall(m.group(1)) if refusal else []
        if refusal and files:
            found.append(_Write(files[-1][0], files[-1][1], refusal.group(1).strip(), m.start(), m.end(), m.group(0)))
    return found


WRITE_LINES_AFTER = 2  # the shell's or tee's error comes on the next line or two
_ERROR = re.compile(r"Invalid argument|Permission denied|Device or resource busy|Operation not supported|"
                    r"Operation not permitted|Read-only file system|write error")


def _gigabyte(text: str) -> list[Note]:
    """pwm outputs set by hand on a Gigabyte IT8689 board, whose own fan controller keeps the fans."""
    if not _IT8689.search(text):
        return []
    written = [int(v) for v in _PWM_STATE.findall(text)]
    echoes = _PWM_ECHO.findall(text)
    written += [int(v) for v, _ in echoes]
    if not written:
        return []
    still = [int(rpm) for _, rpm in echoes if rpm]
    facts: dict[str, float | str] = {"low": min(written), "high": max(written)}
    if still:
        facts["rpm"] = still[-1]
    return [Note("board-keeps-fans", frozen_map(facts))]


def _framework(text: str) -> list[Note]:
    """framework_tool's fan settings, each followed by a ``--thermal`` reading: manual speeds, then the EC's."""
    steps: list[tuple[str, int, dict[str, int]]] = []
    marks = [m.start() for m in re.finditer(r"framework_tool --thermal", text)]
    if not marks:
        return []
    for start, end in zip(marks, [*marks[1:], len(text)], strict=True):
        setting, speed = _FW_STEP.findall(text[:start]), _FW_RPM.search(text, start, end)
        if setting and speed:
            temps = {k: int(v) for k, v in _FW_TEMP.findall(text[start:end])}
            steps.append((setting[-1], int(speed.group(1)), temps))
    auto = [s for s in steps if s[0] == "--autofanctrl"]
    manual = [s for s in steps if s[0] != "--autofanctrl"]
    if not auto or not manual:
        return []
    _, rpm, temps = auto[-1]
    label, celsius = max(temps.items(), key=lambda kv: kv[1]) if temps else ("", 0)
    return [_note("manual-then-auto", rpm=rpm, hottest=label, hottest_c=celsius,
                  manual=" and ".join(f"{r:,}" for _, r, _ in manual))]


_READERS: tuple[Callable[[str], list[Note]], ...] = (
    _amdgpu_curve, _liquidctl_commands, _liquidctl_listings, _daemon_log, _i8k, _embedded_controller, _not_writable,
    _gigabyte, _framework, _nvidia_settings, _write_refused)
