"""The verdict: why the fan is running, in one sentence, with the ranked causes behind it.

Pure functions of a snapshot (and, where given, since when each GPU has been busy: ``BusyClock``). The rules, in order
of weight: a GPU that is busy, hot or near its power limit, and the processes that keep its SMs busy
(SM share, not memory: a process that holds 20 GB and computes nothing heats nothing); throttling;
work nobody can see (another PID namespace); a failed GPU; the CPU side. When nothing is busy it
says so and invents no cause.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from ..core.activity import BusyKind
from ..core.finding import Finding
from ..core.model import GpuSample, ProcessSample, Unattributed, evolve, frozen_map
from ..core.snapshot import Cause, Snapshot, Verdict
from ..core.vocabulary import GIB, HEAT_REASONS, UNATTRIBUTED_FLOOR_BYTES
from ..fans.facts import Machine
from ..fans.live_words import cooling
from .busykind import busy_kinds
from .cpu import CpuHold, cpu_cause
from .fanchain import Group, card_fans, chassis_fans, fan_causes, loud
from .fanwing import account, danger_causes, no_heat
from .words import label

BUSY_UTIL_PERCENT = 20.0
BUSY_POWER_FRACTION = 0.4
HOT_FRACTION = 0.85  # of the way from a cool 40 °C to the slowdown temperature
COOL_C = 40.0
IDLE_UTIL_PERCENT = 5.0
GPU_PREFERENCE = 0.15
MEMORY_HOG_BYTES = 1 << 30

Numbers = Mapping[str, float | str | None]


def _fraction(value: float | None, limit: float | None) -> float:
    return value / limit if value is not None and limit else 0.0


def _heat(gpu: GpuSample) -> float:
    """0 at a cool 40 °C, 1 at the slowdown temperature (90 °C when unknown)."""
    if gpu.temperature_c is None:
        return 0.0
    slowdown = gpu.temperature_slowdown_c or 90.0
    return max(0.0, (gpu.temperature_c - COOL_C) / max(1.0, slowdown - COOL_C))


def _state(gpu: GpuSample) -> str:
    """``83 °C and 290 W`` from what is known."""
    parts = []
    if gpu.temperature_c is not None:
        parts.append(f"{gpu.temperature_c:.0f} °C")
    if gpu.power_w is not None:
        parts.append(f"{gpu.power_w:.0f} W")
    if not parts and gpu.utilization_percent is not None:
        parts.append(f"{gpu.utilization_percent:.0f} % utilization")
    return " and ".join(parts) or "work"


def _fan_clause(gpu: GpuSample, snap: Snapshot) -> str:
    """What cools the GPU, as measured: its own fans (at rest, at the floor, their speed), else the chassis', in the
    fan wing's words."""
    facts = card_fans(snap.fans, gpu.index)
    if not facts and gpu.fan_speed_percent is not None:  # a backend that gives one speed and no fan detail
        facts = {"duty": float(gpu.fan_speed_percent)}
    elif not facts and gpu.passively_cooled:
        facts = {"passive": "yes", **chassis_fans(snap.fans, snap)}
    return cooling(facts)


def _sm_on(proc: ProcessSample, index: int) -> float | None:
    for use in proc.gpus:
        if use.gpu_index == index:
            return use.sm_percent
    return None


def _memory_on(proc: ProcessSample, index: int) -> int | None:
    for use in proc.gpus:
        if use.gpu_index == index:
            return use.memory_bytes
    return None


class BusyClock:
    """Since when each GPU has been busy without a break, kept tick by tick (O(GPUs) a tick, and the
    stretch is measured in full, however long it lasts)."""

    def __init__(self) -> None:
        self._since: dict[int, float] = {}

    def update(self, snap: Snapshot) -> Mapping[int, float]:
        """Feed the next snapshot (in time order); returns GPU index -> start of its current busy stretch."""
        since = {}
        for gpu in snap.gpus:
            if gpu.error is None and (gpu.utilization_percent or 0) >= BUSY_UTIL_PERCENT:
                since[gpu.index] = self._since.get(gpu.index, snap.timestamp)
        self._since = since
        return since


class Remembered:
    """What the verdict keeps from one tick to the next (fed the snapshots in time order): since when each GPU is
    busy (``BusyClock``) and whom the CPU cause named (``CpuHold``), so a cause holds while its facts hold."""

    def __init__(self) -> None:
        self.busy, self.cpu = BusyClock(), CpuHold()

    def explain(self, snap: Snapshot) -> Verdict:
        verdict = explain(snap, self.busy.update(snap), self.cpu.held)
        self.cpu.update(verdict)
        return verdict


def _gpu_causes(gpu: GpuSample, snap: Snapshot, busy_since: Mapping[int, float],
                kind: BusyKind | None) -> tuple[list[Cause], float]:
    """Causes for one GPU (``kind``: what kind of busy its activity counters say), and the confidence of its main
    cause."""
    i = gpu.index
    util = gpu.utilization_percent or 0.0
    power_frac = _fraction(gpu.power_w, gpu.power_limit_w)
    heat_frac = _heat(gpu)
    busy = util >= BUSY_UTIL_PERCENT or power_frac >= BUSY_POWER_FRACTION or heat_frac >= HOT_FRACTION
    if not busy:
        return _idle_wake(gpu, snap), 0.9

    numbers: Numbers = frozen_map({"utilization_percent": gpu.utilization_percent, "power_w": gpu.power_w,
                                   "power_limit_w": gpu.power_limit_w, "temperature_c": gpu.temperature_c,
                                   "temperature_slowdown_c": gpu.temperature_slowdown_c,
                                   "fan_speed_percent": gpu.fan_speed_percent})
    weight = max(util / 100.0, power_frac, heat_frac)
    score = 0.5 + 0.45 * min(1.0, weight)  # at most 0.95: throttling of the same GPU ranks above
    users = [p for p in snap.processes if any(u.gpu_index == i for u in p.gpus)]
    if kind is not None:  # its figures are in the verdict's busy_kinds
        numbers = frozen_map({**numbers, "activity_kind": kind.kind})
    load, confidence = _load_cause(gpu, snap, users, _lasting(gpu, snap, busy_since), score, numbers, kind)
    return [load, *_throttle_causes(gpu, score, numbers), *_holder_causes(gpu, users)], confidence


def _lasting(gpu: GpuSample, snap: Snapshot, busy_since: Mapping[int, float]) -> str:
    """`` (busy for 5 min)`` once a GPU has been busy for two minutes without a break."""
    started = busy_since.get(gpu.index)
    if started is not None and snap.timestamp - started >= 120:
        return f" (busy for {(snap.timestamp - started) / 60:.0f} min)"
    return ""


def _kind_clause(kind: BusyKind | None) -> str:
    """What kind of busy, after the process that computes most: its own work when it is the one process computing
    (``kind.pid``, app/verdict/busykind.py), else the GPU's (its counters do not split by process)."""
    if kind is None:
        return ""
    if kind.pid is not None:
        return f": {kind.words}"
    return f"; the GPU as a whole (its counters do not split by process): {kind.words}"


def _load_cause(gpu: GpuSample, snap: Snapshot, users: Sequence[ProcessSample], lasting: str, score: float,
                numbers: Numbers, kind: BusyKind | None = None) -> tuple[Cause, float]:
    """The main cause of a busy GPU: the process that computes most, else hidden work, else what is known; with
    what kind of busy the GPU's counters say."""
    i = gpu.index
    computing = sorted((p for p in users if (_sm_on(p, i) or 0) > 0), key=lambda p: -(_sm_on(p, i) or 0))
    fan = _fan_clause(gpu, snap)
    tail = _kind_clause(kind) + (f"; {fan}" if fan else "")
    state = f"GPU {i} is at {_state(gpu)}{lasting}"
    if computing:
        top = computing[0]
        sm = _sm_on(top, i) or 0.0
        also = ""
        if len(computing) > 1 and (_sm_on(computing[1], i) or 0) >= 20:
            second = computing[1]
            also = f", with {label(second)} at {_sm_on(second, i):.0f} %"
        confidence = 0.9 if top.visibility == "visible" and top.status == "ok" else 0.6
        top_numbers = dict(numbers, sm_percent=sm, process_power_w=top.power_w,
                           process_gpu_memory_bytes=_memory_on(top, i))
        return Cause(kind="gpu_load", score=score, gpu_index=i, pid=top.pid,
                     container=top.container.id if top.container else None, numbers=frozen_map(top_numbers),
                     summary=f"{state} because {label(top)} keeps {sm:.0f} % of its SMs busy{also}{tail}."), confidence
    hidden = _hidden(snap.unattributed, i)
    if hidden is not None:
        summary, confidence = f"{state} because of work FanWhy cannot see: {hidden}{tail}.", 0.5
    elif users:
        biggest = max(users, key=lambda p: _memory_on(p, i) or 0)
        summary = f"{state}; {label(biggest)} is the process on it (per-process SM % is not reported here){tail}."
        confidence = 0.4
    else:
        summary, confidence = f"{state}, and no process on it is known{tail}.", 0.3
    return Cause(kind="gpu_load", summary=summary, score=score, gpu_index=i, numbers=numbers), confidence


def _throttle_causes(gpu: GpuSample, score: float, numbers: Numbers) -> list[Cause]:
    """Heat throttling ranks just above the load; a power cap below it."""
    i = gpu.index
    reasons = gpu.throttle_reasons or ()
    causes = []
    if any(r in reasons for r in HEAT_REASONS):
        slow = f" (slowdown at {gpu.temperature_slowdown_c:.0f} °C)" if gpu.temperature_slowdown_c else ""
        causes.append(Cause(kind="thermal_throttle", score=min(1.0, score + 0.05), gpu_index=i, numbers=numbers,
                            summary=f"GPU {i} is throttled for heat at {_state(gpu)}{slow}: the cooling "
                                    f"is at its limit."))
    if "sw_power_cap" in reasons and gpu.power_limit_w:
        causes.append(Cause(kind="power_cap", score=score * 0.8, gpu_index=i, numbers=numbers,
                            summary=f"GPU {i} is held at its power limit ({gpu.power_limit_w:.0f} W): "
                                    f"it would draw more if allowed."))
    return causes


def _holder_causes(gpu: GpuSample, users: Sequence[ProcessSample]) -> list[Cause]:
    """Processes that hold a lot of memory on a busy GPU at a measured 0 % SM: named so nobody blames them."""
    i = gpu.index
    causes = []
    for proc in users:
        memory = _memory_on(proc, i) or 0
        if memory >= MEMORY_HOG_BYTES and _sm_on(proc, i) == 0:
            causes.append(Cause(kind="memory_holder", score=0.1, gpu_index=i, pid=proc.pid,
                                numbers=frozen_map({"gpu_memory_bytes": memory, "sm_percent": 0.0}),
                                summary=f"{label(proc)}, PID {proc.pid}, holds {memory / GIB:.1f} GiB on GPU {i} "
                                        f"but computes nothing: it is not what heats the GPU."))
    return causes


def _hidden(unattributed: Sequence[Unattributed], index: int) -> str | None:
    for item in unattributed:
        if item.gpu_index == index and (item.assigned or (item.memory_bytes or 0) >= UNATTRIBUTED_FLOOR_BYTES
                                        or (item.sm_percent or 0) >= BUSY_UTIL_PERCENT):
            memory = f"{item.memory_bytes / GIB:.1f} GiB" if item.memory_bytes else "its memory"
            return f"processes in another PID namespace hold {memory} (run FanWhy with --pid=host to name them)"
    return None


def _idle_wake(gpu: GpuSample, snap: Snapshot) -> list[Cause]:
    """An idle GPU kept awake in P0, with the likely reason; nothing when there is no likely reason."""
    if gpu.pstate != "P0" or (gpu.utilization_percent or 0) >= IDLE_UTIL_PERCENT:
        return []
    holders = [p for p in snap.processes for u in p.gpus if u.gpu_index == gpu.index and (u.sm_percent or 0) == 0]
    if holders:
        reason = f"{label(holders[0])} holds a context on it at 0 % SM"
    elif gpu.display_active:
        reason = "a display is attached to it"
    elif gpu.persistence_mode is False:
        reason = "persistence mode is off, so each poll of the GPU wakes it"
    else:
        return []
    watts = f" at {gpu.power_w:.0f} W" if gpu.power_w is not None else ""
    return [Cause(kind="idle_wake", score=0.2, gpu_index=gpu.index,
                  numbers=frozen_map({"pstate": gpu.pstate, "power_w": gpu.power_w}),
                  summary=f"GPU {gpu.index} is idle but stays in P0{watts}: {reason}.")]


def explain(snap: Snapshot, busy_since: Mapping[int, float] | None = None, cpu_held: str | None = None) -> Verdict:
    """The verdict for ``snap``; ``busy_since`` (from ``BusyClock``) says since when each GPU is busy, ``cpu_held``
    (from ``CpuHold``) whom the CPU cause named last tick. It carries the fan wing's findings (``fan_findings``)."""
    found, fans, facts = account(snap)
    heard = loud(snap) if snap.fans else []
    kinds = tuple(k for gpu in snap.gpus for k in busy_kinds(gpu, snap.processes, label))
    verdict = _verdict(snap, busy_since or {}, (found, facts), fans, heard, cpu_held, kinds)
    return Verdict(verdict.headline, verdict.causes, verdict.confidence, verdict.busy,
                   (*(finding for _, finding in heard), *found), kinds)


def _verdict(snap: Snapshot, busy_since: Mapping[int, float], wing: tuple[tuple[Finding, ...], Machine], fans: str,
             heard: list[tuple[Group, Finding]], cpu_held: str | None = None,
             kinds: Sequence[BusyKind] = ()) -> Verdict:
    causes: list[Cause] = []
    whole = {k.gpu_index: k for k in kinds if k.gpu_instance is None}
    confidences: dict[int, float] = {}
    for gpu in snap.gpus:
        if gpu.asleep:
            causes.append(Cause(kind="asleep", score=0.05, gpu_index=gpu.index,
                                summary=f"GPU {gpu.index} is asleep (runtime suspended): not woken to read it."))
            continue
        if gpu.error is not None:
            causes.append(Cause(kind="gpu_failed", score=0.75, gpu_index=gpu.index,
                                summary=f"GPU {gpu.index} has failed ({gpu.error}); a lost GPU can leave its fan "
                                        f"at full speed until it is reset."))
            continue
        gpu_causes, confidence = _gpu_causes(gpu, snap, busy_since, whole.get(gpu.index))
        causes.extend(gpu_causes)
        confidences[gpu.index] = confidence
    cpu = cpu_cause(snap, cpu_held)
    if cpu is not None:
        cpu = _fed(cpu, whole.values())
        causes.append(_cpu_ranked(cpu, snap, [c for c in causes if c.kind in ("gpu_load", "gpu_failed")]))
    causes.extend(fan_causes(snap, heard))
    causes.extend(danger_causes(*wing, snap.fans))  # a fan that may not cool, or at full for no heat: the wing's
    causes.sort(key=lambda c: -c.score)
    main = next((c for c in causes if c.kind in ("gpu_load", "gpu_failed", "cpu_load")), None)
    confidence = 0.8
    if main is not None and main.kind == "gpu_load" and main.gpu_index is not None:
        confidence = confidences.get(main.gpu_index, 0.8)
    chain = _chain(causes)
    if chain is not None:  # a fan runs above its floor: the answer is that fan and what drives it
        sure = chain.numbers.get("confidence")
        return Verdict(headline=chain.summary, causes=tuple(causes), busy=main is not None,
                       confidence=round(confidence * (sure if isinstance(sure, float) else 1.0), 2))
    if main is None:
        return _idle(snap, causes, fans, whole)
    return Verdict(headline=main.summary, causes=tuple(causes), confidence=confidence, busy=True)


def _fed(cpu: Cause, kinds: Iterable[BusyKind]) -> Cause:
    """The CPU cause with the GPU its process feeds, where that GPU waits on it (a job bound by its CPU)."""
    waiting = next((k for k in kinds if k.kind == "waiting" and k.pid is not None and k.pid == cpu.pid), None)
    if waiting is None:
        return cpu
    sm = waiting.numbers.get("sm_active_percent")
    return evolve(cpu, summary=f"{cpu.summary}, and GPU {waiting.gpu_index} waits on it "
                               f"({sm if isinstance(sm, float) else 0.0:.1f} % of its SMs active)",
                  numbers=frozen_map({**cpu.numbers, **waiting.numbers}))


def _idle(snap: Snapshot, causes: Sequence[Cause], fans: str, kinds: Mapping[int, BusyKind] | None = None) -> Verdict:
    """Nothing computes: a GPU held awake in P0 is the answer, else that nothing is busy, and what the fan wing
    finds of the fans (``fans``)."""
    awake = next((c for c in causes if c.kind == "idle_wake"), None)
    if awake is not None:
        return Verdict(headline=awake.summary, causes=tuple(causes), confidence=0.8, busy=False)
    temps = ", ".join(f"GPU {g.index} idles at {g.temperature_c:.0f} °C" for g in snap.gpus[:3]
                      if g.temperature_c is not None)
    fault = next((c for c in causes if c.kind == "fan_fault"), None)  # a stalled or failed fan is the news
    fans = fault.summary if fault is not None and fault.summary else fans
    working = _working(snap, kinds or {})
    if working is not None:  # never "Nothing is busy" beside a process this answer shows at work
        return Verdict(headline=f"{working}. {fans}", causes=tuple(causes), confidence=0.6, busy=False)
    headline = f"Nothing is busy{' (' + temps + ')' if temps else ''}. {fans}"
    return Verdict(headline=headline, causes=tuple(causes), confidence=0.9, busy=False)


def _working(snap: Snapshot, kinds: Mapping[int, BusyKind]) -> str | None:
    """A process that keeps a GPU's SMs busy while the card itself reports little (the two are sampled over
    different windows: a job that just started or just ended), said as it is; None when there is none."""
    found = [(u.sm_percent or 0.0, u.gpu_index, p) for p in snap.processes for u in p.gpus
             if (u.sm_percent or 0.0) >= BUSY_UTIL_PERCENT]
    if not found:
        return None
    sm, index, proc = max(found, key=lambda f: f[0])
    gpu = snap.gpu(index)
    util = f" while the card reports {gpu.utilization_percent:.0f} %" if gpu and gpu.utilization_percent is not None \
        else ""
    kind = kinds.get(index)
    if kind is not None:  # the card's own counters say what its kernels do
        return f"{label(proc)} keeps {sm:.0f} % of GPU {index}'s SMs busy{util}: {kind.words}"
    return (f"{label(proc)} keeps {sm:.0f} % of GPU {index}'s SMs busy{util} (its latest samples and the card's "
            "are taken over different windows: a job that just started or ended)")


def _chain(causes: Sequence[Cause]) -> Cause | None:
    """The cause that answers "why is my fan running": a fan at full speed for no heat (a fault that is the
    noise), else the loudest fan's chain."""
    full = next((c for c in causes if no_heat(c)), None)
    return full or next((c for c in causes if c.kind == "fan"), None)


def _busy_too(snap: Snapshot, gpu_busy: Sequence[Cause]) -> str:
    """``GPU 1 is busy too, at 24 %`` / ``GPUs 0 and 2 are busy too, at 40 and 31 %``: which ones, and how busy."""
    util = {g.index: g.utilization_percent for g in snap.gpus}
    indexes = sorted({c.gpu_index for c in gpu_busy if c.gpu_index is not None})
    if not indexes:
        return "GPUs are busy too"
    names = ", ".join(str(i) for i in indexes[:-1]) + (" and " if len(indexes) > 1 else "") + str(indexes[-1])
    known = [util.get(i) for i in indexes]
    at = "" if None in known else ", at " + ", ".join(f"{u:.0f}" for u in known[:-1]) + (
        " and " if len(known) > 1 else "") + f"{known[-1]:.0f} %"
    return f"GPU {names} is busy too{at}" if len(indexes) == 1 else f"GPUs {names} are busy too{at}"


def _cpu_ranked(cpu: Cause, snap: Snapshot, gpu_busy: Sequence[Cause]) -> Cause:
    """The CPU cause worded and scored against the busy GPUs.

    The GPU is what FanWhy watches, and a busy GPU draws more than a CPU: the CPU leads only when it
    outranks every busy GPU by a clear margin."""
    cpu_leads = all(cpu.score > c.score + GPU_PREFERENCE for c in gpu_busy)
    if gpu_busy and cpu_leads:
        summary = f"{cpu.summary[0].upper() + cpu.summary[1:]}; {_busy_too(snap, gpu_busy)} (see the causes)."
    elif gpu_busy:
        summary = f"Also, {cpu.summary}."
    else:
        idle = "; ".join(f"GPU {g.index} idles at {g.temperature_c:.0f} °C" for g in snap.gpus[:2]
                         if g.temperature_c is not None)
        sentence = f"No GPU is busy: {cpu.summary}" if snap.gpus else cpu.summary[0].upper() + cpu.summary[1:]
        summary = f"{sentence}{'; ' + idle if idle else ''}."
    score = cpu.score if cpu_leads or not gpu_busy else min(cpu.score, min(c.score for c in gpu_busy) - 0.01)
    return Cause(kind=cpu.kind, score=score, pid=cpu.pid, numbers=cpu.numbers, summary=summary)
