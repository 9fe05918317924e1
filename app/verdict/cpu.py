"""The CPU side of the verdict, judged as heat is made: a package heats with one busy core as much as with many (its
boost clock and its temperature rise with the busiest core, not with the average of all), so the CPU is a cause when
the machine's average is high, when a process keeps a core's worth busy, or when the package itself is hot,
whatever the average. Who is named: the one process that holds most of the load, else the program, service,
container or user whose processes together do; else only that the load is spread.

The answer holds while its facts hold: a CPU that was a cause last tick (``CpuHold``) stays one while its average
keeps ``CPU_KEEP_PERCENT``, and whom it named stays named while it keeps ``OWNER_KEEP`` of the load, where a new
name needs ``OWNER_SHARE``, so a load that hovers at a threshold does not
flip the headline's form from one tick to the next. Shares of the CPU are said as the process table says them: in
% of one core.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..core.model import ProcessSample, frozen_map
from ..core.snapshot import Cause, Snapshot, Verdict
from .words import label, short_command

CPU_BUSY_PERCENT = 50.0  # the machine's average at or above this is busy, whatever each process does
CPU_KEEP_PERCENT = 40.0  # and a CPU that was a cause last tick stays one down to this (the cause holds its place)
CORE_BUSY_PERCENT = 80.0  # a process at or above this share of one core keeps a core busy (psutil reads a pegged
# core at 86-100 % of a core between its samples)
CPU_HOT_C = 80.0  # a package at or above this runs its fan hard whatever the load (desktop parts throttle at 95-100)
OWNER_SHARE = 0.5  # a process (or a group of them) is named when it holds at least half the CPU load
OWNER_KEEP = 0.35  # and stays named while it holds this much (the hysteresis that keeps the headline's form)
NAMED_PERCENT = 20.0  # a process under a fifth of a core heats nothing worth naming, whatever its share of little

Grouping = tuple[str, Callable[[ProcessSample], str | None]]
GROUPINGS: tuple[Grouping, ...] = (
    ("", lambda p: f"`{short_command(p)}`" if p.command or p.name else None),
    ("service ", lambda p: p.unit),
    ("container ", lambda p: (p.container.name or p.container.id[:12]) if p.container else None),
    ("user ", lambda p: p.user),
)


class CpuHold:
    """Whom the CPU cause named at the last tick (a PID or a group), fed each verdict in time order."""

    def __init__(self) -> None:
        self.held: str | None = None

    def update(self, verdict: Verdict) -> None:
        cause = next((c for c in verdict.causes if c.kind == "cpu_load"), None)
        blame = cause.numbers.get("blame") if cause is not None else None
        self.held = blame if isinstance(blame, str) else None


def _users(snap: Snapshot) -> list[ProcessSample]:
    """The processes that use the CPU, never FanWhy's own."""
    return [p for p in snap.processes if (p.cpu_percent or 0) > 0 and p.pid not in snap.host.own_pids]


def _pegging(snap: Snapshot, users: Sequence[ProcessSample]) -> list[ProcessSample]:
    """The processes that keep a core's worth busy, where the machine's own load agrees: a process cannot use more of
    the CPU than the whole machine, so one that reads more than twice the machine's load in cores was sampled over
    another window than the machine's latest reading, which is believed."""
    pegging = [p for p in users if (p.cpu_percent or 0.0) >= CORE_BUSY_PERCENT]
    host = snap.host
    if host.cpu_percent is not None and pegging:
        machine_cores = host.cpu_percent / 100.0 * (host.cpu_count or 1)
        if machine_cores < 0.5 * sum(p.cpu_percent or 0.0 for p in pegging) / 100.0:
            return []
    return pegging


def cpu_cause(snap: Snapshot, held: str | None = None) -> Cause | None:
    """The CPU as a cause, or None when it makes no heat worth a fan: its average under ``CPU_BUSY_PERCENT``, no
    process at a core's worth, the package under ``CPU_HOT_C``. ``held`` is whom the last tick named (``CpuHold``)."""
    host = snap.host
    average = host.cpu_percent or 0.0
    users = _users(snap)
    pegging = _pegging(snap, users)
    hot = host.cpu_temperature_c is not None and host.cpu_temperature_c >= CPU_HOT_C
    busy_at = CPU_KEEP_PERCENT if held else CPU_BUSY_PERCENT
    if average < busy_at and not pegging and not hot:
        return None
    busy_cores = max(average / 100.0 * (host.cpu_count or 1), sum(p.cpu_percent or 0.0 for p in pegging) / 100.0)
    blamed, blame, who = _blame(users, busy_cores, held)
    heat = max(average / 100.0, 0.5 if pegging or hot else 0.0)
    return Cause(kind="cpu_load", score=0.4 + 0.5 * heat, pid=blamed.pid if blamed else None,
                 numbers=frozen_map({"cpu_percent": host.cpu_percent, "cpu_temperature_c": host.cpu_temperature_c,
                                     "process_cpu_percent": blamed.cpu_percent if blamed else None,
                                     "busy_cores": round(busy_cores, 1), "blame": blame}),
                 summary=_summary(snap, average >= busy_at, pegging, who, blamed is not None))


def _summary(snap: Snapshot, busy: bool, pegging: Sequence[ProcessSample], who: str, one: bool) -> str:
    """"the CPU is at 63 % (71 °C) because of `x` (alice) at 98 % of a core"; with a low average but a core kept
    busy, "`x` (alice) at 98 % of a core keeps one of the CPU's 16 cores busy (the CPU at 6 %, 71 °C)"; hot with
    neither, "the CPU is at 84 °C at 12 % load"."""
    host = snap.host
    temp = f" ({host.cpu_temperature_c:.0f} °C)" if host.cpu_temperature_c is not None else ""
    if busy:
        return f"the CPU is at {host.cpu_percent:.0f} %{temp}{' because of ' if one else ''}{who}"
    if not pegging:
        return (f"the CPU is at {host.cpu_temperature_c:.0f} °C at {host.cpu_percent or 0:.0f} % load"
                + (f", most of it {who}" if one else who))
    cores = host.cpu_count or 1
    state = ", ".join(part for part in (f"the CPU at {host.cpu_percent:.0f} %" if host.cpu_percent is not None
                                        else "", f"{host.cpu_temperature_c:.0f} °C" if host.cpu_temperature_c
                                        is not None else "") if part)
    state = f" ({state})" if state else ""
    if one and len(pegging) == 1:
        return f"{who} keeps one of the CPU's {cores} cores busy{state}"
    return f"{len(pegging)} processes keep {len(pegging)} of the CPU's {cores} cores busy{state}" + \
        (f", the busiest {who}" if one else who)


def _blame(users: Sequence[ProcessSample], busy_cores: float,
           held: str | None) -> tuple[ProcessSample | None, str | None, str]:
    """(the process named, the blame's key, the words) for a load of ``busy_cores``: whom the last tick named while
    it keeps ``OWNER_KEEP`` of the load; else the busiest process with ``OWNER_SHARE``; else a group with it; else
    that the load is spread."""
    for share in ((OWNER_KEEP,) if held else ()) + (OWNER_SHARE,):
        only = held if share == OWNER_KEEP else None
        top = max((p for p in users if only is None or f"pid:{p.pid}" == only), key=lambda p: p.cpu_percent or 0.0,
                  default=None)
        if top is not None and (top.cpu_percent or 0.0) >= NAMED_PERCENT and \
                (top.cpu_percent or 0.0) / 100.0 >= share * busy_cores:
            return top, f"pid:{top.pid}", f"{label(top)} at {top.cpu_percent:.0f} % of a core"
        group = _group(users, busy_cores, share, only)
        if group is not None:
            return None, *group
    return None, "spread", ", spread over many processes, none with a large share"


def _group(users: Sequence[ProcessSample], busy_cores: float, share: float,
           only: str | None) -> tuple[str, str] | None:
    """The program, service, container or user whose processes together hold ``share`` of the load (only the group
    ``only``, where given), as (its key, the words); None when none does."""
    for prefix, key in GROUPINGS:
        groups: dict[str, list[ProcessSample]] = {}
        for proc in users:
            name = key(proc)
            if name and (only is None or only == f"group:{prefix}{name}"):
                groups.setdefault(name, []).append(proc)
        if not groups:
            continue
        name, members = max(groups.items(), key=lambda g: sum(p.cpu_percent or 0 for p in g[1]))
        cores_used = sum(p.cpu_percent or 0 for p in members) / 100.0
        if len(members) > 1 and cores_used >= max(share * busy_cores, NAMED_PERCENT / 100):
            return f"group:{prefix}{name}", (f", spread over {len(members)} processes of {prefix}{name}: together "
                                             f"{100.0 * cores_used:.0f} % of a core")
    return None
