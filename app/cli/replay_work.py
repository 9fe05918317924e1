"""What a paste shows runs on its GPUs, said beside ``fanwhy explain``'s fan answer: nvidia-smi's Processes table, each
GPU's processes with its load, or memory in use with no process listed (nvidia-smi lists only the processes of its own
PID namespace: run in a container it sees none of the host's, nvidia-docker's FAQ). Without such a table a capture
holds no processes, and the line says so."""

from __future__ import annotations

from collections.abc import Sequence

from ..collect.nvidia_captures import SmiProcess, processes
from ..core.model import GpuSample

NO_PROCESSES = "Processes are not read from a capture: what heats the sources is not known here."
KINDS = {"C": "compute", "G": "graphics", "C+G": "compute and graphics", "M": "MPS", "M+C": "MPS compute"}
HIDDEN_MIB = 1024.0  # in use with no process listed, past what a desktop's display holds: the processes are unseen
MAX_NAMED = 3


def listed(texts: Sequence[str]) -> tuple[SmiProcess, ...] | None:
    """The rows of every nvidia-smi Processes table in the texts; None where none holds one."""
    tables = [found for found in map(processes, texts) if found is not None]
    return None if not tables else tuple(p for table in tables for p in table)


def work_said(rows: tuple[SmiProcess, ...] | None, gpus: Sequence[GpuSample]) -> str:
    """The processes line: per NVIDIA GPU, what nvidia-smi lists on it (the largest by memory first) with its load,
    or the memory held with nothing listed; NO_PROCESSES where no table was pasted."""
    if rows is None:
        return NO_PROCESSES
    said = []
    for gpu in sorted((g for g in gpus if g.vendor == "nvidia"), key=lambda g: g.index):
        on = sorted((p for p in rows if p.gpu == gpu.index), key=lambda p: -(p.memory_mib or 0.0))
        used = (gpu.memory_used_bytes or 0) / (1 << 20)
        if on:
            named = ", ".join(_one(p) for p in on[:MAX_NAMED])
            more = f" and {len(on) - MAX_NAMED} more" if len(on) > MAX_NAMED else ""
            said.append(f"On GPU {gpu.index}{_load(gpu)}, nvidia-smi lists {named}{more}.")
        elif used >= HIDDEN_MIB:
            said.append(f"GPU {gpu.index}{_load(gpu)} has {used:,.0f} MiB in use and no process listed: nvidia-smi "
                        "lists only the processes of its own PID namespace (run in a container, it sees none of the "
                        "host's), so what uses that GPU is not seen in this paste.")
    return " ".join(said) or "nvidia-smi lists no process on the GPUs it shows."


def _one(p: SmiProcess) -> str:
    memory = f", {p.memory_mib:,.0f} MiB" if p.memory_mib is not None else ""
    return f"`{p.name}` (PID {p.pid}, {KINDS.get(p.kind, p.kind)}{memory})"


def _load(gpu: GpuSample) -> str:
    """" (100 % busy, 340 W of 350 W)", from what the table read."""
    parts = []
    if gpu.utilization_percent is not None:
        parts.append(f"{gpu.utilization_percent:.0f} % busy")
    if gpu.power_w is not None:
        limit = f" of {gpu.power_limit_w:.0f} W" if gpu.power_limit_w else ""
        parts.append(f"{gpu.power_w:.0f} W{limit}")
    return f" ({', '.join(parts)})" if parts else ""
