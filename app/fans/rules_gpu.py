"""The rules of what a GPU reports of itself: no fan of its own (nvidia-smi's ``[N/A]``, NVML's NotSupported, or 0 %
on a data-center card), such cards warm beside the server BMC's fans that are their only cooling, and a card slowing
its clocks for heat; and, for the rest rule, another card's fan turning where one reads 0. Registered in
``app.fans.rules`` like the others."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..core.finding import Confidence
from .chips import chip
from .facts import MAX_OPERATING, FanFact, GpuFact, Machine, TempFact
from .gpulines import gpu_line
from .rules import HOT_C, Hit, rule, source_of, turning
from .speeds import COOL_C, FULL_DUTY, bmc_held

# A passive card this warm, beside a BMC whose own readings are all under COOL_C, is what the chassis fans run for:
# a data-center card under load runs at 60 °C and above (a cautious bound, docs/FAN-RULES.md, Thresholds)
PASSIVE_WARM_C = 60.0
NVIDIA_SMI = "nvidia-smi(1) (--query-gpu fan.speed: [N/A] where the board reports none); NVML " \
    "nvmlDeviceGetFanSpeed_v2 (NotSupported)"


def fanless(gpu: GpuFact) -> bool:
    """A card that reports no fan of its own: [N/A], or 0 % on a data-center card (they report 0 for none); or a
    data-center card whose tool gave no fan field at all (dcgm-exporter exports none by default): by its line it has
    none."""
    datacenter = gpu_line(gpu.name) == "datacenter"
    return not gpu.fan_reported or (datacenter and (gpu.fan_percent == 0 or not gpu.fan_read))


@rule("a GPU with no fan reading", 45, NVIDIA_SMI)
def gpu_fan_unreported(machine: Machine) -> Iterator[Hit]:
    """One finding for the cards alike (one line, one way of reading no fan): a server's eight say it once, with the
    hottest of them."""
    alike: dict[tuple[str, str], list[GpuFact]] = {}
    for gpu in machine.gpus:
        if fanless(gpu):
            reads = "n/a" if not gpu.fan_reported else "0 %" if gpu.fan_read else "none"
            alike.setdefault((gpu_line(gpu.name) or "", reads), []).append(gpu)
    for (line, reads), gpus in alike.items():
        hottest = max(gpus, key=_celsius)
        hot: dict[str, float | str] = {"celsius": _celsius(hottest)} if _celsius(hottest) >= HOT_C else {}
        if hot and len(gpus) > 1:
            hot["hottest"] = f"nvidia/gpu{hottest.index}"
        yield Hit("gpu-fan-unreported", tuple(f"nvidia/gpu{g.index}" for g in gpus), "possible",
                  {"gpu": float(gpus[0].index), "gpus": float(len(gpus)), "name": gpus[0].name or "", "reads": reads,
                   "line": line, **hot})


@rule("passive cards cooled by the BMC's fans", 64, f"{NVIDIA_SMI}; NVIDIA's data-center board product briefs "
      "(thermal solution: passive: the server's airflow cools the card); a BMC drives its fans for the hottest "
      "part it cools (IPMI v2.0, fan and temperature sensors of one chassis), unless a tool holds them at one duty "
      "(Dell_iDRAC_fan_controller's functions.sh: the iDRAC's own control off, one duty from the CPUs alone; the same "
      "commands typed into ipmitool)")
def passive_cards(machine: Machine) -> Iterator[Hit]:
    warm = sorted((g for g in machine.gpus if fanless(g) and _celsius(g) >= PASSIVE_WARM_C), key=lambda g: -_celsius(g))
    fans = [f for f in machine.fans if f.chip == "bmc" and turning(f)]
    hottest = _bmc_hottest(machine)
    if not warm or not fans or hottest is None or (hottest.celsius or 0.0) >= COOL_C:
        return
    rpms = sorted(f.rpm or 0.0 for f in fans)
    # a tool that holds the BMC's fans at one duty (from the CPUs alone, or typed): the card's heat does not move them
    held = bmc_held(machine)
    by: dict[str, float | str] = {"held": held.percent or 0.0, "daemon": held.daemon} if held is not None else {}
    yield Hit("passive-cards", (*(f"nvidia/gpu{g.index}" for g in warm), *(f.key for f in fans), hottest.key),
              "likely", {"gpus": float(len(warm)), "fans": float(len(fans)), "gpu_c": _celsius(warm[0]),
                         "rpm": rpms[len(rpms) // 2], "bmc_c": hottest.celsius or 0.0, **by})


def _celsius(gpu: GpuFact) -> float:
    return gpu.temperature_c if gpu.temperature_c is not None else 0.0


def _bmc_hottest(machine: Machine) -> TempFact | None:
    """The hottest of the BMC's own readings (not a GPU's it reports), None where it reads none."""
    own = [t for t in machine.temperatures if t.chip == "bmc" and t.role != "gpu" and t.celsius is not None]
    return max(own, key=lambda t: t.celsius or 0.0) if own else None


# within this of its Max Operating Temp a card is held there: the driver's software slowdown keeps it under the limit
AT_LIMIT_C = 2.0


@rule("a GPU slowing its clocks for heat", 73, "nvidia-smi(1) (Clocks Event Reasons: SW Thermal Slowdown, HW Thermal "
      "Slowdown, HW Slowdown: Active); NVML nvmlDeviceGetCurrentClocksEventReasons (SW Thermal Slowdown: reducing "
      "clocks below those requested because the GPU is hotter than its Max Operating Temp); NVML "
      "nvmlTemperatureThresholds_t (GPU_MAX: the temperature at which the GPU can be throttled below base clock)")
def slowing_for_heat(machine: Machine) -> Iterator[Hit]:
    """Each card that slows for heat, and cards alike (the same reasons, their fans alike: at full, at one lower duty,
    none of their own) as one finding, said with the hottest of them."""
    alike: dict[tuple[str, ...], list[tuple[GpuFact, dict[str, float | str], tuple[str, ...], Confidence]]] = {}
    for gpu in machine.gpus:
        found = _slowing(machine, gpu)
        if found is not None:
            facts = found[0]
            # a fan below full is said with its duty: only cards at that one duty are alike
            duty = "" if "duty" not in facts else "full" if facts.get("full") else f"{facts['duty']:g}"
            kind = (str(facts["reasons"]), duty, str(facts.get("passive", "")),
                    "limit" if "max_operating_c" in facts else "")
            alike.setdefault(kind, []).append((gpu, *found))
    for group in alike.values():
        gpu, facts, subjects, sure = max(group, key=lambda g: _celsius(g[0]))
        if len(group) > 1:
            facts = {**facts, "cards": float(len(group))}
            subjects = (*subjects, *(k for g in group if g[0] is not gpu for k in g[2]))
        yield Hit("slowing-for-heat", subjects, sure, facts)


def _slowing(machine: Machine, gpu: GpuFact) -> tuple[dict[str, float | str], tuple[str, ...], Confidence] | None:
    """One card slowing for heat: its facts, the card and its fan, how sure; None where it does not."""
    limit = _max_operating(machine, gpu)
    at_limit = not gpu.reasons_read and limit is not None and gpu.temperature_c is not None and \
        gpu.temperature_c >= limit - AT_LIMIT_C
    if not gpu.heat_slowdown and not at_limit:
        return None
    fan = next((f for f in machine.fans if f.gpu == gpu.index and f.duty_percent is not None), None)
    facts: dict[str, float | str] = {"reasons": ", ".join(gpu.heat_slowdown)}
    if gpu.temperature_c is not None:
        facts["celsius"] = gpu.temperature_c
    if gpu.slowdown_c is not None:
        facts["slowdown_c"] = gpu.slowdown_c
    if at_limit and limit is not None:  # no reason read: its temperature at its limit says it
        facts["max_operating_c"] = limit
    if fan is not None and fan.duty_percent is not None:
        facts["duty"] = fan.duty_percent
        if fan.duty_percent >= FULL_DUTY:
            facts["full"] = "yes"
    elif fanless(gpu):
        facts["passive"] = "yes"
    # HW Slowdown alone is NVML's thermal-or-power-brake slowdown: heat is then likely, not known; so is a card at its
    # Max Operating Temp whose reasons are not read
    sure: Confidence = "known" if set(gpu.heat_slowdown) - {"hw_slowdown"} else "likely"
    return facts, (f"nvidia/gpu{gpu.index}", *((fan.key,) if fan else ())), sure


def _max_operating(machine: Machine, gpu: GpuFact) -> float | None:
    """The card's Max Operating Temp as its tool printed it (nvidia-smi -q), None where not read."""
    said = next((s.value for s in machine.settings if s.controller == f"GPU {gpu.index}" and s.name == MAX_OPERATING),
                None)
    return float(said) if said is not None and said.isdigit() else None


def turning_twin(machine: Machine, fan: FanFact, celsius: float) -> dict[str, float | str] | None:
    """For a card's fan read only as a duty of 0 (no speed, no target: rocm-smi's Fan column), another card's fan of
    the same driver, under its firmware's control, turning at a temperature no higher than this card's: one model's
    curve asks for cooling there but for its fan-stop band (one card started when warmer and not yet stopped), so the
    rest stands and the twin is said beside it (a stopped or unreported fan reads the same 0); the most asked of
    them, None where none turns."""
    card = _card(fan)
    if card is None or chip(fan.chip).kind != "gpu" or fan.rpm is not None or fan.target_percent is not None:
        return None  # a speed or the driver's own target read says what its controller asks: no twin needed
    twins = [(other, source) for other in machine.fans if _twin_of(other, fan.chip, card) and
             (source := source_of(machine, other)) is not None and (source.celsius or 0.0) <= celsius]
    if not twins:
        return None
    other, source = max(twins, key=lambda t: (t[0].duty_percent or 0.0, t[0].rpm or 0.0))
    asked = {"twin_duty": other.duty_percent} if other.duty_percent is not None else {"twin_rpm": other.rpm or 0.0}
    return {"twin": other.key, "twin_c": source.celsius or 0.0, **asked}


def _twin_of(other: FanFact, name: str | None, card: str) -> bool:
    """A fan of the same driver on another card, under its firmware's control, turning or asked to."""
    return other.chip == name and _card(other) not in (None, card) and other.controller == "firmware" and \
        (turning(other) or (other.duty_percent or 0.0) > 0)


def _card(fan: FanFact) -> str | None:
    """Which card a GPU's fan is on: its index where read (NVML's), else its label's ("GPU 1 fan": rocm-smi's)."""
    label = re.match(r"GPU (\d+)\b", fan.label)
    return str(fan.gpu) if fan.gpu is not None else label.group(1) if label else None
