"""G-Helper's log (its log.txt, which people paste from ``%AppData%\\GHelper``): what it asked of an ASUS laptop's
firmware. G-Helper does not drive the fans itself: it hands each fan a curve through ASUS's ACPI interface and the
firmware runs it (its FAQ: how closely the fans follow is up to the BIOS). Its ``AsusACPI.SetFanCurve`` sends 16
bytes, eight temperatures (°C) then the eight duties (%) asked at them, and logs them with the firmware's answer:
``FanCPU = 1E-32-3C-40-48-50-5A-64-09-09-11-16-22-29-30-45 : OK`` (``OK`` where the call answered 1, else its
number); ``FanGPU`` and ``FanMid`` likewise. ``ModeControl.AutoFans`` falls back to a range, then resets the mode,
where a curve is not taken. Its performance mode goes to the same firmware setting (device 0x00120075, asus-wmi's
throttle_thermal_policy): ``Mode = 1 : OK``, 0 Balanced, 1 Turbo, 2 Silent (its ``AsusMode``)."""

from __future__ import annotations

import re

from ..facts import Curve

DAEMON = "G-Helper"
CHIP = "asus"
_CURVE = re.compile(r"\bFan(CPU|GPU|Mid) = ((?:[0-9A-Fa-f]{2}-){15}[0-9A-Fa-f]{2}) : (OK|-?\d+)\s*$", re.MULTILINE)
_SOURCES = {"CPU": "the CPU's temperature as the firmware reads it", "GPU": "the GPU's temperature as the firmware "
            "reads it", "Mid": "the temperatures the firmware reads"}
# the mode set (or set again after a curve was not taken: "Reset Mode"); not StatusMode, VivoMode or ModeReset
MODE = re.compile(r"(?:^|[\s:])(?:Reset )?Mode = ([0-2]) : OK\s*$", re.MULTILINE)
MODES = {"0": "balanced", "1": "performance", "2": "quiet"}  # its Balanced, Turbo, Silent


def curves(text: str) -> tuple[Curve, ...]:
    """The last curve logged for each fan: in the firmware where it answered OK, refused by it otherwise."""
    found: dict[str, Curve] = {}
    for fan, hexes, answer in _CURVE.findall(text):
        values = [int(h, 16) for h in hexes.split("-")]
        points = tuple((float(t), float(p)) for t, p in zip(values[:8], values[8:], strict=True))
        found[fan] = Curve(DAEMON, CHIP, f"{fan} fan", _SOURCES[fan], points, in_firmware=True,
                           refused=None if answer == "OK" else f"firmware-answered-{answer}")
    return tuple(found.values())
