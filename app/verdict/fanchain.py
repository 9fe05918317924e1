"""The chain from a fan to a process: which fan is loud, what it follows, what heats that, and who.

"The CPU fan (nct6798 fan2) runs at 1,850 RPM, 900 above its idle floor: it follows nct6798 CPUTIN at 82 °C, and
`python train.py` (alice) uses 244 % of a core." Fans are grouped as a person hears them (a card's fans, the
chassis fans, each board fan), each group worded from what is measured: its speed against its floor, its source
and how that is known (declared, by design, learned with a confidence), and the heat behind the source. A fan at
its floor or at rest is said to be; a fan fault (far from its target, at full speed while its source is cool, a
BMC alarm) is the fan wing's finding, a cause of its own (``app.verdict.fanwing``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.fan import Fan, source_guessed
from ..core.finding import CAUSE, Confidence, Finding
from ..core.model import ProcessSample, frozen_map
from ..core.record import record
from ..core.snapshot import Cause, Snapshot
from ..core.vocabulary import driver_of
from ..fans import adapt
from ..fans.adapt import source_key
from ..fans.chips import chip
from ..fans.facts import Machine
from ..fans.live_words import chassis, cooling, group_subject
from ..fans.names import Names
from ..fans.roles import role
from ..fans.words import said
from .words import label

NO_NAMES = Names(Machine())  # a loud fan's finding carries its own name
LOUD_STATES = ("running", "full")
LOUD_MIN = 0.1  # a tenth of its range above its floor: below that a fan is heard as idle
NO_FLOOR_QUIET = 40.0  # with no floor known, a duty (or share of the maximum) up to this is not counted as loud


@record
class Group:
    """Fans a person hears as one: a card's fans, the chassis fans, or one board fan."""

    fans: tuple[Fan, ...]

    @property
    def lead(self) -> Fan:
        return max(self.fans, key=loudness)

    @property
    def who(self) -> dict[str, float | str]:
        """Which fans these are, as facts: a card's, the chassis', or one fan (its name, and whether it follows the
        CPU)."""
        fan = self.lead
        facts: dict[str, float | str] = {"group": "gpu" if fan.gpu_index is not None else "chassis" if fan.chip ==
                                         "bmc" else "fan", "count": float(len(self.fans)), "name": fan.name,
                                         "labelled": "yes" if fan.label else "no"}
        if fan.gpu_index is not None:
            facts["gpu"] = float(fan.gpu_index)
        if heat_of(fan.source, fan.sources) == "cpu":
            facts["cpu"] = "yes"
        return facts

    @property
    def subject(self) -> str:
        """"GPU 0's fans", "The chassis fans", "The CPU fan (nct6798 fan2)": the fan wing's words for ``who``."""
        return group_subject(self.who)


def heat_of(source: str | None, several: Sequence[str] = ()) -> str | None:
    """What heats a fan's source, for the chain from a fan to a process: "gpu:N" for a GPU's own temperature ("GPU
    N"), "gpu" for a graphics card's sensor, else what the fan wing's one classifier says the temperature measures
    (``app.fans.roles``: "cpu", "inlet", "exhaust", "board", ...); None with no source. A daemon that follows the
    hottest of ``several`` sensors is heated by the CPU where the CPU is one of them."""
    if several:
        heats = [heat_of(item) for item in several]
        return "cpu" if "cpu" in heats else heats[0]
    if not source:
        return None
    key, owner, label = source_key(source)
    if owner == "nvidia":
        return f"gpu:{key.removeprefix('nvidia/gpu')}"
    if chip(owner).kind == "gpu":
        return "gpu"
    found = role(owner, label)
    return found if found != "unknown" else role(None, source)


def loudness(fan: Fan) -> float:
    """How far above its floor a fan runs, 0 (floor, rest, or no floor to measure from) to 1 (full speed). A speed
    says nothing of noise without its floor: 3,000 RPM is a chassis fan's idle and a laptop fan's scream."""
    if fan.state == "full":
        return 1.0
    if fan.state not in LOUD_STATES:
        return 0.0
    if fan.percent is not None and fan.floor_percent is not None:
        floor = fan.floor_percent
        return max(0.0, min(1.0, (fan.percent - floor) / max(1.0, 100.0 - floor)))
    if fan.rpm is not None and fan.floor_rpm:
        top = fan.max_rpm if fan.max_rpm and fan.max_rpm > fan.floor_rpm else 3 * fan.floor_rpm
        return max(0.0, min(1.0, (fan.rpm - fan.floor_rpm) / (top - fan.floor_rpm)))
    # no floor known: judged by the duty, or by its share of the maximum (an idle fan runs well under half)
    if fan.percent is not None:
        return max(0.0, min(1.0, (fan.percent - NO_FLOOR_QUIET) / (100.0 - NO_FLOOR_QUIET)))
    if fan.rpm is not None and fan.max_rpm:
        return max(0.0, min(1.0, (100.0 * fan.rpm / fan.max_rpm - NO_FLOOR_QUIET) / (100.0 - NO_FLOOR_QUIET)))
    return 0.0


def groups(fans: Sequence[Fan]) -> list[Group]:
    live = [f for f in fans if f.state != "dead"]
    found: list[Group] = []
    for index in sorted({f.gpu_index for f in live if f.gpu_index is not None}):
        own = tuple(f for f in live if f.gpu_index == index)
        found.append(Group(own))
    chassis = tuple(f for f in live if f.chip == "bmc")
    if chassis:
        found.append(Group(chassis))
    for fan in live:
        if fan.gpu_index is None and fan.chip != "bmc":
            found.append(Group((fan,)))
    return found


def loud_finding(group: Group, snap: Snapshot) -> Finding:
    """What the loudest fan of ``group`` does, as a finding for the fan wing's words: which fans, its speed against
    its floor, what it follows and how that is known (``inlet_c`` for chassis fans that follow nothing read)."""
    fan = group.lead
    facts = group.who
    for key, value in (("rpm", fan.rpm), ("duty", fan.percent), ("target_percent", fan.target_percent),
                       ("target_rpm", fan.target_rpm), ("floor_percent", fan.floor_percent),
                       ("floor_rpm", fan.floor_rpm), ("source_c", fan.source_c)):
        if value is not None:
            facts[key] = float(value)
    if fan.source is not None:
        facts["source"] = "the GPU" if fan.gpu_index is not None and fan.source_from == "design" else fan.source
        facts["how"] = "guess-" + ("named" if fan.source_from == "named" else "card" if driver_of(fan.chip) in
                                   ("amdgpu", "radeon") else "design") if source_guessed(fan) else fan.source_from or ""
        if fan.source_from == "learned":
            facts["sure"] = fan.confidence or 0.0
    else:
        inlet = next((a for a in snap.air if a.role == "inlet"), None)
        if inlet is not None:
            facts["inlet_c"] = inlet.temperature_c
    sure: Confidence = "likely" if fan.source_from == "learned" or source_guessed(fan) else "known"
    return Finding("fan-loud", "a fan above its idle floor", tuple(adapt.fan_fact(f).key for f in group.fans), sure,
                   CAUSE + 10, frozen_map(facts))


def _top_on_gpu(snap: Snapshot, index: int) -> ProcessSample | None:
    users = [p for p in snap.processes for u in p.gpus if u.gpu_index == index and (u.sm_percent or 0) > 0]
    return max(users, key=lambda p: max((u.sm_percent or 0) for u in p.gpus if u.gpu_index == index), default=None)


def _gpu_heat(snap: Snapshot, index: int) -> str:
    gpu = snap.gpu(index)
    top = _top_on_gpu(snap, index)
    watts = gpu.power_w if gpu is not None else None
    if top is not None:
        own = next((u for u in top.gpus if u.gpu_index == index), None)
        drawn = top.power_w if top.power_w is not None else watts
        busy = own.sm_percent if own is not None and own.sm_percent is not None else 0.0
        what = f"draws {drawn:.0f} W" if drawn is not None else f"keeps {busy:.0f} % of its SMs busy"
        return f"{label(top)} {what}"
    holders = [p for p in snap.processes if any(u.gpu_index == index for u in p.gpus)]
    if holders:  # on it, but keeping no SM busy: present and idle, never "no process known"
        held = max(holders, key=lambda p: sum(u.memory_bytes or 0 for u in p.gpus if u.gpu_index == index))
        others = f" and {len(holders) - 1} more" if len(holders) > 1 else ""
        return (f"GPU {index} draws {watts:.0f} W; {label(held)}{others} on it keep{'s' if not others else ''} its "
                "SMs idle") if watts is not None else ""
    return f"GPU {index} draws {watts:.0f} W and no process on it is known" if watts is not None else ""


def _cpu_heat(snap: Snapshot) -> str:
    cores = snap.host.cpu_count or 1
    top = max((p for p in snap.processes if (p.cpu_percent or 0) > 0 and p.pid not in snap.host.own_pids),
              key=lambda p: p.cpu_percent or 0, default=None)
    if top is not None and (top.cpu_percent or 0) / cores >= 5:
        return f"{label(top)} uses {top.cpu_percent or 0:.0f} % of a core"  # as the process table says it
    if snap.host.cpu_percent is not None:
        return f"the CPU is at {snap.host.cpu_percent:.0f} %"
    return ""


def _gpus_heat(snap: Snapshot) -> str:
    """"GPUs 0-3 draw 690 W each, `python train.py` (alice) on GPU 0" for the heat the chassis carries."""
    drawing = [g for g in snap.gpus if g.power_w is not None and g.error is None]
    if not drawing:
        return ""
    watts = [g.power_w or 0.0 for g in drawing]
    if len(drawing) > 1 and max(watts) - min(watts) <= 0.1 * max(watts):
        first, last = drawing[0].index, drawing[-1].index
        text = f"GPUs {first}-{last} draw {sum(watts) / len(watts):.0f} W each"
    else:
        text = ", ".join(f"GPU {g.index} draws {g.power_w:.0f} W" for g in drawing[:4])
    hottest = max(drawing, key=lambda g: g.power_w or 0.0)
    top = _top_on_gpu(snap, hottest.index)
    return f"{text}, {label(top)} on GPU {hottest.index}" if top is not None else text


def _heat(fan: Fan, snap: Snapshot) -> str:
    """What heats the fan's source: the chassis carries every card's heat, a GPU sensor its processes', the CPU its
    busiest process'."""
    heat = heat_of(fan.source, fan.sources)
    if fan.chip == "bmc" or heat in ("inlet", "exhaust", "gpu"):
        return _gpus_heat(snap)
    if heat is not None and heat.startswith("gpu:"):
        return _gpu_heat(snap, int(heat[4:]))
    return _cpu_heat(snap) if heat == "cpu" else ""


def sentence(group: Group, snap: Snapshot, finding: Finding | None = None) -> str:
    """The loud fan in the fan wing's words (``finding``, made here when not given), then what heats its source:
    "…, following nct6798 CPUTIN at 82 °C: `python train.py` (alice) uses 244 % of a core."."""
    heat = _heat(group.lead, snap)
    words = said(finding or loud_finding(group, snap), NO_NAMES)
    return f"{words}{': ' + heat if heat else ''}."


def card_fans(fans: Sequence[Fan], index: int) -> dict[str, float | str]:
    """GPU ``index``'s own fans as facts for the words of what cools it: how many, the loudest one's state, speed,
    target and floor; {} with none read."""
    own = [f for f in fans if f.gpu_index == index and f.state != "dead"]
    if not own:
        return {}
    lead = max(own, key=loudness)
    facts: dict[str, float | str] = {"own": "yes", "count": float(len(own)), "state": lead.state}
    for key, value in (("rpm", lead.rpm), ("duty", lead.percent), ("target_percent", lead.target_percent),
                       ("floor_percent", lead.floor_percent)):
        if value is not None:
            facts[key] = float(value)
    return facts


def chassis_fans(fans: Sequence[Fan], snap: Snapshot) -> dict[str, float | str]:
    """The fastest chassis fan (the BMC's) and the inlet, as facts; {} with no chassis fan read."""
    found = [f for f in fans if f.chip == "bmc" and f.state != "dead"]
    if not found:
        return {}
    lead = max(found, key=lambda f: f.rpm or f.percent or 0)
    facts: dict[str, float | str] = {}
    if lead.rpm is not None:
        facts["chassis_rpm"] = float(lead.rpm)
    if lead.percent is not None:
        facts["chassis_duty"] = float(lead.percent)
    inlet = next((a for a in snap.air if a.role == "inlet"), None)
    if inlet is not None:
        facts["inlet_c"] = inlet.temperature_c
    return facts


def gpu_fan_clause(fans: Sequence[Fan], index: int) -> str | None:
    """What GPU ``index``'s own fans do, in the fan wing's words; None with none read."""
    facts = card_fans(fans, index)
    return cooling(facts) if facts else None


def chassis_clause(fans: Sequence[Fan], snap: Snapshot) -> str | None:
    """"the chassis fans run at 9,800 RPM (inlet 24 °C)" when the BMC is read, in the fan wing's words."""
    return chassis(chassis_fans(fans, snap)) or None


def loud(snap: Snapshot) -> list[tuple[Group, Finding]]:
    """Each group of fans above its floor, with the finding that words it, the loudest first."""
    found = [(group, loud_finding(group, snap)) for group in groups(snap.fans) if loudness(group.lead) >= LOUD_MIN]
    return sorted(found, key=lambda pair: -loudness(pair[0].lead))


def fan_causes(snap: Snapshot, heard: list[tuple[Group, Finding]] | None = None) -> list[Cause]:
    """A cause for each group of fans above its floor (``heard``, from ``loud``) and one for each fan fault."""
    if not snap.fans:
        return []
    causes = []
    for group, finding in loud(snap) if heard is None else heard:
        lead = group.lead
        sure = lead.confidence if lead.source_from == "learned" and lead.confidence is not None else 1.0
        causes.append(Cause(kind="fan", score=0.55 + 0.44 * loudness(lead), gpu_index=lead.gpu_index,
                            summary=sentence(group, snap, finding),
                            numbers=frozen_map({"fan": lead.id, "rpm": lead.rpm, "percent": lead.percent,
                                                "floor_percent": lead.floor_percent, "source": lead.source,
                                                "source_c": lead.source_c, "confidence": sure})))
    return causes
