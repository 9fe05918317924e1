"""Power and energy that add up: each GPU's board power = its idle baseline + the processes + unattributed.

**The idle baseline** is the GPU's lowest steady power with no process on it, measured per P-state (``IdleBaseline``:
steady means no process and 0 % utilization for ``STEADY_TICKS`` ticks in a row in one P-state, and the stretch's
highest reading). A P-state not yet seen idle uses
the GPU's lowest idle of any P-state. A GPU never seen idle since FanWhy started (it was busy from the first tick) has
no baseline yet: its processes are charged the whole board, and the ledger says so (``idle_from`` "unknown"). The
baseline is charged to no process: it is what the card draws for being there.

**The dynamic power** (board − idle) is split by each process's activity share, normalised: the processes' SM % and
the work nobody visible accounts for (utilization in another PID namespace) are the activities, and each gets its
part of the whole. A process alone on a half-busy GPU gets all of it (its SM % alone said half, and the rest of the
board's power was nowhere). With no activity at all, the processes that hold a context on the GPU (0 % SM) share it:
they keep it out of its idle state (the verdict's idle-wake cause says so); with no process at all it is
unattributed. Where no process's SM % is reported, the split is unknown: the processes get none and the dynamic power
is unattributed, with the reason.

Energy integrates each part over the collector's ticks (watt-hours since FanWhy started; a gap longer than
``max_gap_s`` is not integrated). Kepler does the same split (idle by the lowest power seen, the rest by SM share);
this one measures the idle per P-state and normalises the shares. docs/HOW-IT-WORKS.md has how well it adds up.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Mapping, Sequence

from ..core.ledger import IdleFrom, PowerLedger
from ..core.model import ContainerSample, GpuSample, ProcessSample, Unattributed, evolve
from ..core.record import holder
from ..core.vocabulary import UNATTRIBUTED_FLOOR_BYTES

STEADY_TICKS = 3
Split = tuple[dict[int, float], float, str | None]  # watts per PID, unattributed watts, what the unattributed is


class IdleBaseline:
    """The lowest steady power of each GPU with no process on it, per P-state."""

    def __init__(self) -> None:
        self._by_state: dict[tuple[str, str | None], float] = {}
        self._lowest: dict[str, float] = {}
        self._stretch: dict[str, deque[tuple[str | None, float]]] = defaultdict(lambda: deque(maxlen=STEADY_TICKS))

    def observe(self, key: str, pstate: str | None, watts: float, quiet: bool) -> None:
        """One tick of a GPU: its power, and whether it had no process and 0 % utilization. A stretch of
        ``STEADY_TICKS`` quiet ticks in one P-state offers its highest reading (a single low sample is no steady
        state); the baseline is the lowest such offer."""
        stretch = self._stretch[key]
        if not quiet or (stretch and stretch[-1][0] != pstate):
            stretch.clear()
        if quiet:
            stretch.append((pstate, watts))
        if len(stretch) >= STEADY_TICKS:
            steady = max(w for _, w in stretch)
            self._by_state[(key, pstate)] = min(steady, self._by_state.get((key, pstate), steady))
            self._lowest[key] = min(steady, self._lowest.get(key, steady))

    def baseline(self, key: str, pstate: str | None) -> tuple[float, IdleFrom]:
        if (key, pstate) in self._by_state:
            return self._by_state[(key, pstate)], "measured"
        if key in self._lowest:
            return self._lowest[key], "other-pstate"
        return 0.0, "unknown"


def split(dynamic: float, users: Sequence[tuple[int, float | None]], hidden: float) -> Split:
    """The dynamic power of one GPU among its users ((PID, SM %) pairs) and ``hidden`` % of work nobody visible
    accounts for."""
    known = [(pid, sm) for pid, sm in users if sm is not None]
    if users and not known and hidden <= 0:
        return {}, dynamic, "per-process SM % is not reported for this GPU"
    activity = sum(sm for _, sm in known) + hidden
    if activity > 0:
        shares = {pid: dynamic * sm / activity for pid, sm in known}
        why = "work in another PID namespace (run FanWhy with --pid=host to name it)" if hidden > 0 else None
        return shares, dynamic * hidden / activity, why
    if known:  # contexts held at 0 % SM keep the GPU out of its idle state
        return {pid: dynamic / len(known) for pid, _ in known}, 0.0, None
    return {}, dynamic, "no process on it (a display, another host's work, or the driver)"


def split_doubt(users: Sequence[tuple[int, float | None]]) -> str | None:
    """Why the split among a GPU's processes may be wrong: several hold it and NVML's samples credit one with all of
    the activity. NVML answers two processes time-slicing one GPU as one process at the GPU's whole SM % and the
    other at 0 %, in every sample, whichever way it is asked; an idle context holder beside one worker reads the
    same, so the two cannot be told apart (docs/HOW-IT-WORKS.md)."""
    working = [pid for pid, sm in users if sm]
    if len(users) > 1 and len(working) == 1:
        return (f"NVML credits all of this GPU's activity to PID {working[0]}; {len(users) - 1} other process(es) "
                "hold it at 0 % SM — idle, or time-slicing work NVML credits to one process")
    return None


def _with_power(unattributed: Sequence[Unattributed], ledgers: Sequence[PowerLedger]) -> tuple[Unattributed, ...]:
    """Each GPU's unattributed row with the power its ledger found nobody visible for."""
    by_gpu = {ledger.gpu_index: ledger for ledger in ledgers}
    return tuple(evolve(u, power_w=round(by_gpu[u.gpu_index].unattributed_w, 2)) if u.gpu_index in by_gpu else u
                 for u in unattributed)


def _hidden_work(item: Unattributed) -> bool:
    """Whether someone FanWhy cannot see works on the GPU: memory nobody visible holds (or PIDs seen only in NVML's
    samples). Without that, utilization above the processes' SM % is the two counters disagreeing, not hidden work."""
    return bool(item.assigned) or (item.memory_bytes or 0) >= UNATTRIBUTED_FLOOR_BYTES


@holder
class _Totals:
    board: float = 0.0
    idle: float = 0.0
    processes: float = 0.0
    unattributed: float = 0.0
    counter_start_j: float | None = None


class EnergyMeter:
    def __init__(self, max_gap_s: float = 10.0):
        self.max_gap_s = max_gap_s
        self.idle = IdleBaseline()
        self._last: float | None = None
        self._process_wh: dict[tuple[int, float | None], float] = defaultdict(float)
        self._container_wh: dict[str, float] = defaultdict(float)
        self._totals: dict[str, _Totals] = defaultdict(_Totals)

    def apply(self, now: float, gpus: Sequence[GpuSample], processes: Sequence[ProcessSample],
              containers: Sequence[ContainerSample], unattributed: Sequence[Unattributed]
              ) -> tuple[tuple[ProcessSample, ...], tuple[ContainerSample, ...], tuple[Unattributed, ...],
                         tuple[PowerLedger, ...]]:
        """The rows with their power and energy, and each GPU's ledger; ``now`` is the tick's time (seconds)."""
        dt = 0.0 if self._last is None else now - self._last
        self._last = now
        hours = dt / 3600.0 if 0 < dt <= self.max_gap_s else 0.0
        hidden = {u.gpu_index: u.sm_percent or 0.0 for u in unattributed if _hidden_work(u)}
        watts: dict[tuple[int, int], float] = {}  # (GPU, PID) -> W
        ledgers = []
        users: dict[int, list[tuple[int, float | None]]] = defaultdict(list)  # GPU -> (PID, SM %) of its users
        for proc in processes:
            for use in proc.gpus:
                users[use.gpu_index].append((proc.pid, use.sm_percent))
        for gpu in gpus:
            if gpu.power_w is None or gpu.error is not None:
                continue
            ledger, shares = self._gpu(gpu, users.get(gpu.index, []), hidden.get(gpu.index, 0.0), hours)
            ledgers.append(ledger)
            watts.update({(gpu.index, pid): w for pid, w in shares.items()})
        new_processes, watts_by_pid = self._processes(processes, watts, hours)
        new_containers = tuple(self._container(c, watts_by_pid, hours) for c in containers)
        new_unattributed = _with_power(unattributed, ledgers)
        live = {(p.pid, p.start_time) for p in processes}
        for key in [k for k in self._process_wh if k not in live]:
            del self._process_wh[key]  # totals of exited processes live on in their container's
        return new_processes, new_containers, new_unattributed, tuple(ledgers)

    def _gpu(self, gpu: GpuSample, users: Sequence[tuple[int, float | None]], hidden: float, hours: float
             ) -> tuple[PowerLedger, dict[int, float]]:
        board = gpu.power_w or 0.0
        key = gpu.uuid or f"index-{gpu.index}"
        self.idle.observe(key, gpu.pstate, board, quiet=not users and (gpu.utilization_percent or 0.0) == 0.0)
        baseline, idle_from = self.idle.baseline(key, gpu.pstate)
        idle = min(board, baseline)
        shares, rest, why = split(board - idle, users, hidden)
        total = self._totals[key]
        parts = sum(shares.values())
        total.board += board * hours
        total.idle += idle * hours
        total.processes += parts * hours
        total.unattributed += rest * hours
        if gpu.energy_j is not None and total.counter_start_j is None:
            total.counter_start_j = gpu.energy_j
        counter = ((gpu.energy_j - total.counter_start_j) / 3600.0
                   if gpu.energy_j is not None and total.counter_start_j is not None else None)
        return PowerLedger(gpu_index=gpu.index, board_w=round(board, 2), idle_w=round(idle, 2),
                           processes_w=round(parts, 2), unattributed_w=round(rest, 2), idle_from=idle_from,
                           pstate=gpu.pstate, board_wh=round(total.board, 4), idle_wh=round(total.idle, 4),
                           processes_wh=round(total.processes, 4), unattributed_wh=round(total.unattributed, 4),
                           counter_wh=round(counter, 4) if counter is not None else None,
                           why_unattributed=why if rest > 0 else None,
                           by_process=tuple((pid, round(w, 2)) for pid, w in shares.items()),
                           split_doubt=split_doubt(users)), shares

    def _processes(self, processes: Sequence[ProcessSample], watts: Mapping[tuple[int, int], float],
                   hours: float) -> tuple[tuple[ProcessSample, ...], dict[int, float]]:
        rows = []
        watts_by_pid: dict[int, float] = {}
        for proc in processes:
            parts = [watts[(u.gpu_index, proc.pid)] for u in proc.gpus if (u.gpu_index, proc.pid) in watts]
            if not parts:
                rows.append(proc)
                continue
            power = sum(parts)
            key = (proc.pid, proc.start_time)
            self._process_wh[key] += power * hours
            watts_by_pid[proc.pid] = power
            rows.append(evolve(proc, power_w=round(power, 2), energy_wh=round(self._process_wh[key], 4)))
        return tuple(rows), watts_by_pid

    def _container(self, container: ContainerSample, watts_by_pid: Mapping[int, float],
                   hours: float) -> ContainerSample:
        parts = [watts_by_pid[pid] for pid in container.pids if pid in watts_by_pid]
        if not parts:
            return container
        watts = sum(parts)
        key = container.container.id
        self._container_wh[key] += watts * hours
        return evolve(container, power_w=round(watts, 2), energy_wh=round(self._container_wh[key], 4))
