"""A receipt for a job: what it cost on every GPU it used, and on the CPU, from the snapshots taken while it ran.

Per GPU: the job's energy (its processes' part of the power above idle, from the ledger) with the GPU's idle energy
over the same span shown apart (it is the card's, not the job's), peak and mean board power, peak temperature,
seconds throttled by reason, XID errors. The idle is known once the card has been seen idle (no process, 0 %, a few
steady ticks); until then the ledger counts it as the job's, and the receipt says for how many seconds
(``idle_unknown_s``) rather than show an idle of 0 Wh as if it had been measured. For the machine: the job's CPU
seconds (from its processes' CPU %), and the seconds any fan ran above its idle floor. Fed one snapshot at a time
(``add``); ``result`` is the JSON receipt. A recording keeps one for its GPUs (all processes); ``fanwhy run`` one
for a command and its children.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from ..core.jsonvalue import JsonObject
from ..core.ledger import PowerLedger
from ..core.model import GpuSample
from ..core.snapshot import Snapshot
from .fanchain import LOUD_MIN, loudness

MAX_GAP_S = 10.0  # a longer gap between snapshots (a stalled collector) adds nothing


@dataclass
class _Gpu:
    name: str | None = None
    energy_wh: float = 0.0
    idle_wh: float = 0.0
    idle_unknown_s: float = 0.0
    board_wh: float = 0.0
    seconds: float = 0.0
    peak_w: float | None = None
    peak_c: float | None = None
    throttled_s: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    xid: list[int] = field(default_factory=list)
    used: bool = False
    counted_s: float = 0.0  # seconds its activity counters were read
    activity_s: dict[str, float] = field(default_factory=lambda: defaultdict(float))  # counter -> percent x seconds


# The job's mean of each, over the seconds its GPU's activity counters were read (app.core.activity).
RECEIPT_ACTIVITY = (("sm_active_percent", "SM"), ("tensor_percent", "tensor"), ("fp32_percent", "FP32"),
                    ("dram_percent", "DRAM"))


class ReceiptMeter:
    """``pids`` says which processes are the job's (None: every process, as a recording of whole GPUs);
    ``gpus`` which GPUs count (None: those the job used, or every GPU without ``pids``)."""

    def __init__(self, pids: Callable[[], Collection[int]] | None = None, gpus: Collection[int] | None = None):
        self._pids, self._gpus_wanted = pids, gpus
        self._gpus: dict[int, _Gpu] = defaultdict(_Gpu)
        self._first: float | None = None
        self._last: float | None = None
        self.cpu_seconds = 0.0
        self.fans_loud_s = 0.0
        self.fans_seen = False

    def add(self, snap: Snapshot) -> None:
        dt = 0.0 if self._last is None else snap.timestamp - self._last
        if self._first is None:
            self._first = snap.timestamp
        self._last = snap.timestamp
        if not 0 < dt <= MAX_GAP_S:
            return
        mine = set(self._pids()) if self._pids is not None else {p.pid for p in snap.processes}
        self._machine(snap, mine, dt)
        ledgers = {ledger.gpu_index: ledger for ledger in snap.ledger}
        for gpu in snap.gpus:
            if gpu.error is None and (self._gpus_wanted is None or gpu.index in self._gpus_wanted):
                used = self._pids is None or any(u.gpu_index == gpu.index for p in snap.processes if p.pid in mine
                                                 for u in p.gpus)
                self._gpu(self._gpus[gpu.index], gpu, ledgers.get(gpu.index), mine, used, dt)
        for alert in snap.alert_events:
            if alert.rule == "xid" and alert.state == "firing" and alert.gpu_index in self._gpus and alert.value:
                self._gpus[alert.gpu_index].xid.append(int(alert.value))

    def _machine(self, snap: Snapshot, mine: set[int], dt: float) -> None:
        """The job's CPU seconds (its processes' CPU %) and the seconds any fan ran above its floor."""
        self.cpu_seconds += sum((p.cpu_percent or 0.0) for p in snap.processes if p.pid in mine) / 100.0 * dt
        live = [f for f in snap.fans if f.state != "dead"]
        self.fans_seen = self.fans_seen or bool(live)
        if any(loudness(f) >= LOUD_MIN for f in live):
            self.fans_loud_s += dt

    @staticmethod
    def _gpu(tally: _Gpu, gpu: GpuSample, ledger: PowerLedger | None, mine: set[int], used: bool, dt: float) -> None:
        tally.name = gpu.name
        tally.used = tally.used or used
        tally.seconds += dt
        if ledger is not None:
            tally.energy_wh += sum(w for pid, w in ledger.by_process if pid in mine) * dt / 3600.0
            tally.idle_wh += ledger.idle_w * dt / 3600.0
            if ledger.idle_from == "unknown" and used:  # the job's share then holds the idle
                tally.idle_unknown_s += dt
            tally.board_wh += ledger.board_w * dt / 3600.0
        if gpu.power_w is not None:
            tally.peak_w = max(gpu.power_w, tally.peak_w or gpu.power_w)
        if gpu.temperature_c is not None:
            tally.peak_c = max(gpu.temperature_c, tally.peak_c or gpu.temperature_c)
        for reason in gpu.throttle_reasons or ():
            if reason != "gpu_idle":
                tally.throttled_s[reason] += dt
        if gpu.activity is not None and used:
            tally.counted_s += dt
            for name, _ in RECEIPT_ACTIVITY:
                tally.activity_s[name] += (getattr(gpu.activity, name) or 0.0) * dt

    def result(self) -> JsonObject:
        """The receipt: seconds, energy (idle apart), CPU seconds, fan seconds, and each GPU's figures."""
        gpus: dict[str, JsonObject] = {}
        for index, t in sorted(self._gpus.items()):
            if not t.used:
                continue
            gpus[str(index)] = {
                "name": t.name, "energy_wh": round(t.energy_wh, 4), "idle_wh": round(t.idle_wh, 4),
                "idle_unknown_s": round(t.idle_unknown_s, 1),
                "board_wh": round(t.board_wh, 4), "peak_power_w": t.peak_w,
                "mean_power_w": round(t.board_wh * 3600.0 / t.seconds, 1) if t.seconds else None,
                "peak_temperature_c": t.peak_c,
                "throttled_s": {reason: round(s, 1) for reason, s in sorted(t.throttled_s.items())},
                "xid": list(t.xid),
                "activity": _means(t)}
        seconds = (self._last - self._first) if self._first is not None and self._last is not None else 0.0
        return {"seconds": round(seconds, 1),
                "energy_wh": round(sum(t.energy_wh for t in self._gpus.values() if t.used), 4),
                "idle_wh": round(sum(t.idle_wh for t in self._gpus.values() if t.used), 4),
                "cpu_seconds": round(self.cpu_seconds, 1),
                "fans_above_floor_s": round(self.fans_loud_s, 1) if self.fans_seen else None,
                "gpus": gpus}


def _means(t: _Gpu) -> JsonObject | None:
    """The job's mean activity on one GPU, over the seconds its counters were read; None where they never were."""
    if not t.counted_s:
        return None
    means: JsonObject = {f"mean_{name}": round(t.activity_s[name] / t.counted_s, 1) for name, _ in RECEIPT_ACTIVITY}
    return {"seconds": round(t.counted_s, 1), **means}


def words(receipt: JsonObject, command: str, exit_code: int | None = None) -> str:
    """The receipt as lines a person reads after a job, like ``time``."""
    ended = f"exited {exit_code}" if exit_code is not None else "ended"
    lines = [f"fanwhy: `{command}` {ended} after {receipt['seconds']} s"]
    gpus = receipt.get("gpus")
    for index, g in (gpus.items() if isinstance(gpus, dict) else ()):
        if not isinstance(g, dict):
            continue
        throttled = g.get("throttled_s")
        slow = ", ".join(f"{r} {s} s" for r, s in throttled.items()) if isinstance(throttled, dict) and throttled \
            else "never"
        xid = g.get("xid")
        lines.append(f"  GPU {index} ({g.get('name') or '?'}): {g.get('energy_wh')} Wh ({_idle_words(g)}), "
                     f"power peak {g.get('peak_power_w')} W, mean "
                     f"{g.get('mean_power_w')} W, peak {g.get('peak_temperature_c')} °C, throttled: {slow}, "
                     f"XID: {', '.join(str(x) for x in xid) if isinstance(xid, list) and xid else 'none'}")
        activity = g.get("activity")
        if isinstance(activity, dict):
            means = ", ".join(f"{label} {activity.get('mean_' + name)} %" for name, label in RECEIPT_ACTIVITY)
            lines.append(f"    what its SMs did (means over {activity.get('seconds')} s): {means}")
    if not gpus:
        lines.append("  no GPU used")
    lines.append(f"  CPU: {receipt['cpu_seconds']} s")
    fans = receipt.get("fans_above_floor_s")
    lines.append(f"  fans above their idle floor: {fans} s" if fans is not None else
                 "  fans: none read on this machine")
    return "\n".join(lines) + "\n"


def _idle_words(g: JsonObject) -> str:
    """How the card's idle was kept apart: measured, or not seen (then counted as the job's) for all or part."""
    unknown = g.get("idle_unknown_s")
    apart = f"the card's idle {g.get('idle_wh')} Wh apart"
    if not isinstance(unknown, (int, float)) or unknown <= 0:
        return apart
    if g.get("idle_wh") == 0:
        return "the card's idle included: it was not seen idle before the job used it"
    return f"{apart}; not seen idle for the first {unknown} s, counted as the job's there"
