"""OpenCorsairLink's status of a Corsair device (``OpenCorsairLink.elf --device N``), as its drivers print it: the
device (``Vendor:``, ``Product:``), its temperature probes (``Temperature N: 33.00 C``) and each fan channel, in
either of two layouts: ``FAN PWM N: 55 %`` beside ``FAN N: 1243`` (the speed in RPM, printed with no unit), or
``Fan N:`` with the channel's connection setting (``Mode: Auto/Disconnected``, ``3-Pin``, ``4-Pin``: the Commander
PRO driver's names for the fan type it is set to, ``drivers/commanderpro.c``, not a control mode) and beneath it
``PWM: 0%`` (the duty the device reports, its command 0x22) and ``RPM: 852`` (its command 0x21). The channels are
the device's, named for the tool that read them ("OpenCorsairLink: Corsair Commander PRO"): the duty it prints is
the one the device reports, whatever set it, unlike the kernel's corsair-cpro, whose pwmN reads only once set."""

from __future__ import annotations

import re

from ..facts import Reading

_FOUND = re.compile(r"CorsairLink Device Found:|^[\s>]*Product:\s*\S", re.MULTILINE)
_FIELD = r"^[\s>]*{}:\s*(.+?)\s*$"
_TEMP = re.compile(r"^[\s>]*Temperature\s+(\d+):\s*(-?\d+(?:\.\d+)?)\s*C\s*$", re.MULTILINE)
_DUTY = re.compile(r"^[\s>]*FAN PWM\s+(\d+):\s*(\d+)\s*%\s*$", re.MULTILINE)
_SPEED = re.compile(r"^[\s>]*FAN\s+(\d+):\s*(\d+)\s*$", re.MULTILINE)
_CHANNEL = re.compile(r"^[\s>]*Fan\s+(\d+):\s*Mode:[^\n]*\n[\s>]*PWM:\s*(\d+)\s*%\s*\n[\s>]*RPM:\s*(\d+)\s*$",
                      re.MULTILINE)


def read(text: str) -> list[Reading]:
    if not _FOUND.search(text):
        return []
    chip = _device(text)
    duties = list(_DUTY.finditer(text))
    fans: list[tuple[str, int, str | None, str | None]] = [  # (label, channel, duty, speed)
        *((f"Fan {m.group(1)}", int(m.group(1)), m.group(2), None) for m in duties),
        # a bare "FAN 1: 1243" is its speed only beside its "FAN PWM" lines: alone, any tool's line could be it
        *((f"Fan {m.group(1)}", int(m.group(1)), None, m.group(2)) for m in (_SPEED.finditer(text) if duties else ())),
        # this layout counts its channels from 0: channel N is hwmon's N + 1
        *((f"Fan {m.group(1)}", int(m.group(1)) + 1, m.group(2), m.group(3)) for m in _CHANNEL.finditer(text)),
    ]
    if not fans:
        return []
    found = [Reading(chip, f"Temperature {m.group(1)}", float(m.group(2)), f"{m.group(2)} C", "c")
             for m in _TEMP.finditer(text)]
    for label, channel, duty, speed in fans:
        if duty is not None:
            found.append(Reading(chip, label, float(duty), f"{duty} %", "%", f"pwm{channel}"))
        if speed is not None:
            found.append(Reading(chip, label, float(speed), f"{speed} RPM", "rpm", f"fan{channel}_input"))
    return found


def _device(text: str) -> str:
    """The device as its status names it, vendor and product, after the tool ("OpenCorsairLink: Corsair Commander
    PRO")."""
    vendor, product = (m.group(1) if (m := re.search(_FIELD.format(k), text, re.MULTILINE)) else ""
                       for k in ("Vendor", "Product"))
    name = product if product.lower().startswith(vendor.lower()) else f"{vendor} {product}".strip()
    return f"OpenCorsairLink: {name or 'a Corsair device'}"
