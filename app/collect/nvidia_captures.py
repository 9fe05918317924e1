"""Captured text of NVIDIA's tools, made back into GPU samples with their fans (``fanwhy explain``,
``app.collect.captures``): ``nvidia-smi``'s table, ``nvidia-smi -q`` and ``-q -x``, ``nvidia-settings -q``. A
capture that cannot be read whole raises ValueError with the one line a person sees. Also nvfancontrol's log
(``nvfancontrol -d``): each line's temperature, speed and mode, the last line being the card as it was left."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..core.fan import Fan
from ..core.model import GpuSample
from ..core.vocabulary import SMI_READ_ERRORS, THROTTLE_REASONS
from ..vendors.nvidia_smi import smi_fans

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

_SMI_NAME = re.compile(r"^\|\s+(\d+)\s+(.+?)\s+(?:On|Off)\s*\|")
_SMI_NUMBERS = re.compile(r"^\|\s*(\d+%|N/A|ERR!)\s+(\d+C|ERR!)\s+(P\d+|N/A)\s+(\d+|N/A|ERR!)W?\s*/\s*(\d+|N/A)W?\s*\|"
                          r"\s*(\d+)MiB\s*/\s*(\d+)MiB\s*\|\s*(\d+|N/A)%?")


def table(text: str, gpus: list[GpuSample]) -> str | None:
    """``nvidia-smi``'s table: each card's name, fan (N/A: none of its own), temperature, power and utilization;
    and nvitop's copy of it, drawn with box-drawing bars (``│``) where nvidia-smi draws ``|``."""
    if "NVIDIA-SMI" not in text and "NVITOP" not in text:
        return None
    pending: tuple[int, str] | None = None
    for line in text.replace("│", "|").splitlines():
        name = _SMI_NAME.match(line)
        if name:
            pending = (int(name.group(1)), name.group(2).strip())
            continue
        numbers = _SMI_NUMBERS.match(line)
        if numbers and pending is not None:
            gpus.append(card(*pending, numbers.groups()))
            pending = None
    return ("nvitop's table" if "NVIDIA-SMI" not in text else "nvidia-smi table") if gpus else None


@dataclass(frozen=True)
class SmiProcess:
    """A row of nvidia-smi's Processes table: the GPU, the PID (in nvidia-smi's PID namespace), its type (C compute,
    G graphics, C+G both), its name as printed (a path, maybe cut) and the memory it holds (None: N/A)."""

    gpu: int
    pid: int
    kind: str
    name: str
    memory_mib: float | None


_PROC_ROW = re.compile(r"^\|\s+(\d+)\s+(?:(?:N/A|\d+)\s+(?:N/A|\d+)\s+)?(\d+)\s+(C\+G|M\+C|C|G|M)\s+(.+?)\s+"
                       r"(\d+)?(?:MiB|N/A)\s*\|\s*$")


def processes(text: str) -> tuple[SmiProcess, ...] | None:
    """nvidia-smi's Processes table (its GI/CI columns or not): each row; () where it says "No running processes
    found"; None where the text holds no such table."""
    if "NVIDIA-SMI" not in text or not re.search(r"^\|\s*Processes:", text.replace("│", "|"), re.MULTILINE):
        return None
    section = text.replace("│", "|").split("Processes:", 1)[1]
    return tuple(SmiProcess(int(m.group(1)), int(m.group(2)), m.group(3), m.group(4).strip(),
                            float(m.group(5)) if m.group(5) else None)
                 for m in map(_PROC_ROW.match, section.splitlines()) if m)


def card(index: int, name: str, cells: tuple[str | None, ...]) -> GpuSample:
    fan, temp, pstate, power, limit, used, total, util = cells

    def number(text: str | None) -> float | None:
        return float(text.rstrip("%C")) if text and text[0].isdigit() else None

    percent = number(fan)
    error = fan if fan in SMI_READ_ERRORS else None
    return GpuSample(vendor="nvidia", index=index, name=name, temperature_c=number(temp), pstate=pstate,
                     power_w=number(power), power_limit_w=number(limit), utilization_percent=number(util),
                     memory_used_bytes=int(number(used) or 0) << 20, memory_total_bytes=int(number(total) or 0) << 20,
                     fans=smi_fans(index, percent, error),
                     # "N/A" says so; a line not asked for does not, nor a fan it failed to read
                     passively_cooled=fan is not None and percent is None and error is None)


def cells(fan: str | None, temp: str | None, pstate: str | None, power: str | None, limit: str | None,
           used: str | None, total: str | None, util: str | None) -> tuple[str | None, ...]:
    """nvidia-smi's values ("30 %", "45 C", "20.50 W", "8192 MiB") as its table's cells ("30%", "45", "20", ...)."""
    def first(text: str | None) -> str | None:
        word = (text or "").strip().split(" ")[0]
        return word if word[:1].isdigit() else None
    percent = first(fan)
    error = (fan or "").strip() if (fan or "").strip() in SMI_READ_ERRORS else None
    said = f"{percent}%" if percent else error or ("N/A" if fan is not None else None)  # None: not in the capture
    return (said, first(temp), (pstate or "").strip() or None, first(power),
            first(limit), first(used) or "0", first(total) or "0", first(util))


def xml(text: str, gpus: list[GpuSample]) -> str | None:
    """``nvidia-smi -q -x``: each <gpu>'s name, fan, temperature, power and utilization. A document that declares
    entities is refused (nvidia-smi writes none; an entity can expand to gigabytes)."""
    if "<nvidia_smi_log" not in text:
        return None
    if "<!ENTITY" in text:
        raise ValueError("an nvidia-smi -q -x capture that declares XML entities: nvidia-smi writes none; not read")
    import xml.etree.ElementTree as ElementTree

    try:
        root = ElementTree.fromstring(text[text.index("<nvidia_smi_log"):text.rindex("</nvidia_smi_log>") + 17])
    except (ValueError, ElementTree.ParseError) as error:
        raise ValueError(f"an nvidia-smi -q -x capture that is not whole XML ({error})") from None
    for index, gpu in enumerate(root.iter("gpu")):
        def value(*paths: str, gpu: ElementTree.Element = gpu) -> str | None:
            return next((found.text for p in paths if (found := gpu.find(p)) is not None and found.text
                         and found.text[:1].isdigit()), None)
        minor = value("minor_number")
        name = gpu.find("product_name")
        gpus.append(_xml_slowing(gpu, card(int(minor) if minor and minor.isdigit() else index,
                                 name.text if name is not None and name.text else "NVIDIA GPU", cells(
            gpu.findtext("fan_speed"), value("temperature/gpu_temp"), gpu.findtext("performance_state"),
            value(*(f"{group}/{field}" for group in ("gpu_power_readings", "power_readings")
                    for field in ("power_draw", "average_power_draw", "instant_power_draw"))),
            value("gpu_power_readings/current_power_limit", "power_readings/power_limit",
                  "power_readings/current_power_limit"),
            value("fb_memory_usage/used"), value("fb_memory_usage/total"), value("utilization/gpu_util")))))
    return "nvidia-smi -q -x" if gpus else None


def _xml_slowing(gpu: Element, sample: GpuSample) -> GpuSample:
    """-q -x's <clocks_event_reasons> (<clocks_throttle_reasons> before driver 535): each reason's element, "Active"
    or "Not Active", named for its reason (clocks_event_reason_sw_thermal_slowdown); its slowdown temperature."""
    group = next((g for tag in ("clocks_event_reasons", "clocks_throttle_reasons") if (g := gpu.find(tag)) is not None),
                 None)
    if group is None:
        return sample
    active = tuple(reason for child in group if (child.text or "").strip().lower() == "active" and
                   (reason := re.sub(r"^clocks_(?:event|throttle)_reason_", "", child.tag)) in THROTTLE_REASONS)
    slowdown = (gpu.findtext("temperature/gpu_temp_slow_threshold") or "").split(" ")[0]
    return replace(sample, throttle_reasons=active, temperature_slowdown_c=float(slowdown) if slowdown.isdigit()
                   else sample.temperature_slowdown_c)


def query(text: str, gpus: list[GpuSample]) -> str | None:
    """``nvidia-smi -q`` text: one block per "GPU 00000000:01:00.0" line, its values by their names."""
    if not re.search(r"^GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d", text, re.MULTILINE) or \
            not any(mark in text for mark in ("Product Name", "NVSMI LOG", "GPU Current Temp")):
        return None  # -q whole names the product; -q -d TEMPERATURE,... only its log header and sections
    for index, block in enumerate(re.split(r"^GPU [0-9A-Fa-f:.]+\s*$", text, flags=re.MULTILINE)[1:]):
        values: dict[str, str] = {}
        section = ""
        for line in block.splitlines():
            name, sep, rest = line.partition(":")
            if not sep:
                section = line.strip()
            elif (key := name.strip()) and f"{section}/{key}" not in values:
                values[f"{section}/{key}"] = rest.strip()
                values.setdefault(key, rest.strip())
        gpus.append(_slowing(values, card(index, values.get("Product Name", "NVIDIA GPU"), cells(
            values.get("Fan Speed"), values.get("GPU Current Temp"), values.get("Performance State"),
            values.get("Power Draw") or values.get("Average Power Draw") or values.get("Instantaneous Power Draw"),
            values.get("Current Power Limit") or values.get("Power Limit"), values.get("FB Memory Usage/Used"),
            values.get("FB Memory Usage/Total"), values.get("Utilization/GPU") or values.get("Utilization/Gpu")))))
    return "nvidia-smi -q" if gpus else None


# nvidia-smi -q's "Clocks Event Reasons" ("Clocks Throttle Reasons" before driver 535): each reason "Active" or "Not
# Active" (nvidia-smi(1)), named as NVML's reasons are (app.core.vocabulary.THROTTLE_REASONS)
_REASON_SECTIONS = ("Clocks Event Reasons", "Clocks Throttle Reasons")


def _slowing(values: dict[str, str], gpu: GpuSample) -> GpuSample:
    """The card with the clock event reasons -q lists as active and the temperature it slows at."""
    active = []
    for section in _REASON_SECTIONS:
        for key, value in values.items():
            name = key.removeprefix(f"{section}/")
            if key.startswith(f"{section}/") and value.strip().lower() == "active":
                reason = "gpu_idle" if name == "Idle" else name.lower().replace(" ", "_")
                if reason in THROTTLE_REASONS:
                    active.append(reason)
    slowdown = (values.get("GPU Slowdown Temp") or "").split(" ")[0]
    return replace(gpu, throttle_reasons=tuple(active) if any(s in " ".join(values) for s in _REASON_SECTIONS)
                   else gpu.throttle_reasons,
                   temperature_slowdown_c=float(slowdown) if slowdown.lstrip("-").isdigit() else
                   gpu.temperature_slowdown_c)


# a card's fan speed in % of "the product's maximum noise tolerance fan speed", which nvidia-smi(1) says "may exceed
# 100% in certain cases" (fan.speed; NV-CONTROL's GPUCurrentFanSpeed is the same figure: 118 read on an RTX 2080
# Super past 80 °C, nvfancontrol issue 44); past this bound a number is no speed
MAX_PERCENT = 200
_SETTING = re.compile(r"Attribute '(\w+)' \([^)\[]*\[(gpu|fan):(\d+)\]\):\s*(-?\d+)")


def settings(text: str, gpus: list[GpuSample]) -> str | None:
    """``nvidia-settings -q``: each fan's GPUCurrentFanSpeed (%), GPUCurrentFanSpeedRPM and GPUTargetFanSpeed, the
    GPU's GPUCoreTemp and GPUFanControlState (1: set by software). Fans belong to GPU 0 (nvidia-settings does not
    say which card a fan is on; one card is the case people post)."""
    found = _SETTING.findall(text)
    if not any(name.startswith("GPU") and "Fan" in name for name, *_ in found):
        return None
    fans: dict[int, dict[str, int]] = {}
    gpu: dict[str, int] = {}
    for name, target, number, value in found:
        if target == "fan":
            fans.setdefault(int(number), {})[name] = int(value)
        elif int(number) == 0:
            gpu[name] = int(value)
    manual = gpu.get("GPUFanControlState") == 1
    controller = ("set by software (GPUFanControlState 1: nvidia-settings, or a fan daemon)" if manual
                  else "the card's firmware" if "GPUFanControlState" in gpu else None)
    entries = []
    for n, attrs in sorted(fans.items()):
        percent, rpm = attrs.get("GPUCurrentFanSpeed"), attrs.get("GPUCurrentFanSpeedRPM")
        target = attrs.get("GPUTargetFanSpeed")
        entries.append(Fan(id=f"nvidia-settings:0/fan{n}", chip="GPU 0", channel=n, label=None,
                           percent=float(percent) if percent is not None and 0 <= percent <= MAX_PERCENT else None,
                           rpm=rpm if rpm is not None and 0 <= rpm <= 30_000 else None,
                           target_percent=float(target) if target is not None and 0 <= target <= 100 else None,
                           gpu_index=0, source="GPU", source_from="design", cools="the GPU",
                           control="manual" if manual else "automatic" if controller else "unknown",
                           controller=controller))
    temp = gpu.get("GPUCoreTemp")
    gpus.append(GpuSample(vendor="nvidia", index=0, name="NVIDIA GPU (nvidia-settings)",
                                 temperature_c=float(temp) if temp is not None else None, fans=tuple(entries)))
    return "nvidia-settings -q"



_NVFAN = re.compile(r"Temp: (\d+); Speed: \[(\d+)\] RPM \(\[(\d+)\]%\); Load: (\d+)%; Mode: (\w+)")
_NVFAN_CARD = re.compile(r"NVIDIA graphics adapter #(\d+): (.+)$", re.MULTILINE)


def nvfancontrol(text: str, gpus: list[GpuSample]) -> str | None:
    """nvfancontrol's debug log: the card's last reading. In Mode: Auto nvfancontrol is not driving the fan (it
    leaves a fan it finds in automatic mode alone unless run with --force): the card's own curve is."""
    lines = _NVFAN.findall(text)
    if not lines:
        return None
    temp, rpm, percent, load, mode = lines[-1]
    card = _NVFAN_CARD.search(text)
    index, name = (int(card.group(1)), card.group(2).strip()) if card else (0, "NVIDIA GPU")
    auto = mode.lower() == "auto"
    speeds = sorted({int(p) for _, _, p, _, _ in lines})
    forced = re.search(r"nvfancontrol\s+(?:-\w*f|.*--force)", text) is not None
    why = ("though it was run with --force, nvfancontrol is not driving it" if forced else
           "nvfancontrol leaves a fan it finds in automatic mode alone unless run with --force")
    controller = f"the card's own curve (Mode: Auto: {why})" if auto else "nvfancontrol's curve (Mode: Manual)"
    if len(speeds) > 1:
        controller += f"; over the log it went between {speeds[0]} and {speeds[-1]} %"
    fan = Fan(id=f"nvfancontrol:{index}/fan0", chip=f"GPU {index}", channel=0, label=None, rpm=int(rpm),
              percent=float(percent) if int(percent) <= MAX_PERCENT else None, gpu_index=index, source="GPU",
              source_from="design", cools="the GPU", control="automatic" if auto else "manual", controller=controller)
    gpus.append(GpuSample(vendor="nvidia", index=index, name=name, temperature_c=float(temp),
                          utilization_percent=float(load), fans=(fan,)))
    return "nvfancontrol log"


_ASSIGNED = re.compile(r"Attribute 'GPUFanControlState' \([^)\[]*\[gpu:(\d+)\]\) assigned value (\d+)")
_RANGE = re.compile(r"valid values for 'GPUTargetFanSpeed' are in the range (\d+) - (\d+)")
_ASKED = re.compile(r"GPUTargetFanSpeed=(\d+)")


def assignment(text: str, gpus: list[GpuSample]) -> str | None:
    """``nvidia-settings -a ...GPUFanControlState=1 -a ...GPUTargetFanSpeed=N`` and what it answered: manual
    control taken, and the range of duties the card accepts under it (its lowest is the floor: 30 % on GeForce
    cards of recent drivers, so a fan under manual control never stops)."""
    taken, limits = _ASSIGNED.search(text), _RANGE.search(text)
    if limits is None:
        return None
    # the range alone: nvidia-settings names it when a speed is set, which it takes only under manual control
    index, manual = (int(taken.group(1)), taken.group(2) == "1") if taken else (0, True)
    low, high = int(limits.group(1)), int(limits.group(2))
    asked = _ASKED.search(text)
    fan = Fan(id=f"nvidia-settings:{index}/fan0", chip=f"GPU {index}", channel=0, label=None, gpu_index=index,
              target_percent=float(asked.group(1)) if asked else None, floor_percent=float(low), source="GPU",
              source_from="design", cools="the GPU", control="manual" if manual else "automatic",
              controller=(f"set by software (GPUFanControlState 1: nvidia-settings), where this card accepts "
                          f"{low}-{high} %") if manual else "the card's own policy")
    gpus.append(GpuSample(vendor="nvidia", index=index, name="NVIDIA GPU (nvidia-settings)", fans=(fan,)))
    return "nvidia-settings assignment"
