"""What a paste shows runs on its GPUs, said beside ``fanwhy explain``'s fan answer: nvidia-smi's Processes table, each
GPU's processes with its load, or memory in use with no process listed (nvidia-smi lists only the processes of its own
PID namespace: run in a container it sees none of the host's, nvidia-docker's FAQ). Without such a table a capture
holds no processes: the line says each GPU's load where the paste shows it (what share of its last sample it was busy,
what it drew), else that processes are not read."""

from __future__ import annotations

from collections.abc import Sequence

from ..collect.nvidia_captures import SmiProcess, processes
from ..core.model import GpuSample
from ..fans.facts import GpuLoad

NO_PROCESSES = "Processes are not read from a capture: what heats the sources is not known here."
KINDS = {"C": "compute", "G": "graphics", "C+G": "compute and graphics", "M": "MPS", "M+C": "MPS compute"}
HIDDEN_MIB = 1024.0  # in use with no process listed, past what a desktop's display holds: the processes are unseen
MAX_NAMED = 3


def listed(texts: Sequence[str]) -> tuple[SmiProcess, ...] | None:
    """The rows of every nvidia-smi Processes table in the texts; None where none holds one."""
    tables = [found for found in map(processes, texts) if found is not None]
    return None if not tables else tuple(p for table in tables for p in table)


def work_said(rows: tuple[SmiProcess, ...] | None, gpus: Sequence[GpuSample], loads: Sequence[GpuLoad] = ()) -> str:
    """The processes line: per NVIDIA GPU, what nvidia-smi lists on it (the largest by memory first) with its load,
    or the memory held with nothing listed; with no table pasted, each GPU's load where read, else NO_PROCESSES."""
    if rows is None:
        return _loads_said(gpus, loads)
    said = []
    for gpu in sorted((g for g in gpus if g.vendor == "nvidia"), key=lambda g: g.index):
        on = sorted((p for p in rows if p.gpu == gpu.index), key=lambda p: -(p.memory_mib or 0.0))
        used, load = (gpu.memory_used_bytes or 0) / (1 << 20), _load(_of_sample(gpu))
        if on:
            named = ", ".join(_one(p) for p in on[:MAX_NAMED])
            more = f" and {len(on) - MAX_NAMED} more" if len(on) > MAX_NAMED else ""
            said.append(f"On GPU {gpu.index}{load}, nvidia-smi lists {named}{more}.")
        elif used >= HIDDEN_MIB:
            said.append(f"GPU {gpu.index}{load} has {used:,.0f} MiB in use and no process listed: nvidia-smi "
                        "lists only the processes of its own PID namespace (run in a container, it sees none of the "
                        "host's), so what uses that GPU is not seen in this paste.")
    return " ".join(said) or "nvidia-smi lists no process on the GPUs it shows."


def _one(p: SmiProcess) -> str:
    memory = f", {p.memory_mib:,.0f} MiB" if p.memory_mib is not None else ""
    return f"`{p.name}` (PID {p.pid}, {KINDS.get(p.kind, p.kind)}{memory})"


def _loads_said(gpus: Sequence[GpuSample], loads: Sequence[GpuLoad]) -> str:
    """Each GPU's load as the paste shows it (a named reader's sample first, then what the general reader read),
    three at most and how many more, with what the paste does not hold: the processes behind it."""
    seen = {(g.vendor, g.index) for g in gpus}
    shown = [load for load in (*map(_of_sample, gpus), *(x for x in loads if (x.vendor, x.index) not in seen))
             if load.busy_percent is not None or load.power_w is not None]
    if not shown:
        return NO_PROCESSES
    named = [f"GPU {load.index}{_load(load)}" for load in shown[:MAX_NAMED]]
    named += [f"{len(shown) - MAX_NAMED} more"] if len(shown) > MAX_NAMED else []
    listed_ = " and ".join([", ".join(named[:-1]), named[-1]] if len(named) > 1 else named)
    return f"When this was taken: {listed_}. The processes behind a GPU's load are not in this paste."


def _of_sample(gpu: GpuSample) -> GpuLoad:
    return GpuLoad(gpu.index, gpu.vendor, gpu.utilization_percent, gpu.power_w, gpu.power_limit_w)


def _load(load: GpuLoad) -> str:
    """" (100 % busy, 340 W of 350 W)", from what the paste read."""
    parts = []
    if load.busy_percent is not None:
        parts.append(f"{load.busy_percent:.0f} % busy")
    if load.power_w is not None:
        limit = f" of {load.power_limit_w:.0f} W" if load.power_limit_w else ""
        parts.append(f"{load.power_w:.0f} W{limit}")
    return f" ({', '.join(parts)})" if parts else ""
