"""One GPU's power, accounted so that it adds up: the board = its idle baseline + the processes + what nobody visible
accounts for. ``app.collect.energy`` fills it each tick; the page, the REST views, ``/metrics`` and the history show
it."""

from __future__ import annotations

from typing import Literal

from .record import record

# How the idle baseline is known: measured in this P-state with no process on the GPU; measured in another P-state
# (the GPU's lowest, while this one has not been seen idle); unknown (never seen idle since FanWhy started: 0 W is
# assumed, so the processes are charged the whole board until it is measured).
IdleFrom = Literal["measured", "other-pstate", "unknown"]


@record
class PowerLedger:
    """Board power now (W) and energy since FanWhy started (Wh), split three ways. ``idle`` is charged to no process;
    the rest (the dynamic power) is split by each process's activity share, normalised: a process alone on a half-busy
    GPU gets all of it. ``counter_wh`` is NVML's own energy counter over the same span, where the card has one (read
    every 30 s), for a check of the sum."""

    gpu_index: int
    board_w: float
    idle_w: float
    processes_w: float
    unattributed_w: float
    idle_from: IdleFrom
    pstate: str | None
    board_wh: float
    idle_wh: float
    processes_wh: float
    unattributed_wh: float
    counter_wh: float | None = None
    why_unattributed: str | None = None  # what the unattributed power is: hidden work, no process, SM % unknown
    by_process: tuple[tuple[int, float], ...] = ()  # (PID, W): the processes' part, process by process
    split_doubt: str | None = None  # why the split among the processes may be wrong (NVML's per-process samples)
