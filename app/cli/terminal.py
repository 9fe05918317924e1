"""The terminal's answer: the verdict as a sentence, then a compact table of GPUs and of the top processes.

A view of one Snapshot (the model, typed), as gpustat prints one: what a person at a shell wants first, in 80
columns. Untrusted names are printed with control characters removed, so a process cannot move the cursor or
recolour the terminal with its name.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from typing import Sequence

from ..core.fan import Fan, source_guessed
from ..core.model import GpuSample, HostSample, ProcessSample, Snapshot
from ..core.program import display_name
from ..core.vocabulary import GIB
from ..fans.alarm_words import alarmed, fan_cell

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def clean(text: object) -> str:
    """``text`` with control characters (escape sequences, newlines) replaced: names come from processes."""
    return _CONTROL.sub("?", str(text))


def _num(value: float | int | None, unit: str = "", digits: int = 0) -> str:
    return "–" if value is None else f"{value:.{digits}f}{unit}"


def _memory(used: int | None, total: int | None) -> str:
    if used is None:
        return "–"
    return f"{used / GIB:.1f}/{total / GIB:.0f} GiB" if total else f"{used / GIB:.1f} GiB"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], right: frozenset[int]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).rjust(w) if i in right else str(c).ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return [line(header), *(line(r) for r in rows)]


def _fan_column(gpu: GpuSample, fans: Sequence[Fan]) -> str:
    own = [f for f in fans if f.gpu_index == gpu.index and f.state != "dead"]
    if own:
        return fan_cell(max(own, key=lambda f: (alarmed(f), f.percent or 0.0)))
    return "passive" if gpu.passively_cooled else _num(gpu.fan_speed_percent, " %")


def _follows(fan: Fan) -> str:
    """What a fan follows, with how sure that is: a learned source with its confidence, a guess as a guess."""
    if fan.source is None:
        return "–"
    if fan.source_from == "learned":
        return f"{fan.source} (learned, {100 * (fan.confidence or 0):.0f} % sure)"
    if source_guessed(fan):
        return f"{fan.source} (probably)"
    return fan.source


def fan_table(fans: Sequence[Fan]) -> list[str]:
    """Every fan with its speed and state, what it follows and what is wrong or left out (a replay's table)."""
    rows = [[clean(f.name)[:36], fan_cell(f) if f.state != "dead" else "–", clean(_follows(f))[:48],
             clean(f.dead or f.alarm or "")[:90]] for f in fans]
    return _table(["FAN", "STATE", "FOLLOWS", "NOTE"], rows, frozenset({1})) if rows else []


def _fan_rows(fans: Sequence[Fan], limit: int = 6) -> list[str]:
    """The machine's other fans (board, laptop, chassis): each one's speed, state and what it follows."""
    rows = [[clean(f.name)[:36], fan_cell(f), clean(_follows(f))[:48]]
            for f in fans if f.gpu_index is None and f.state != "dead"][:limit]
    return _table(["FAN", "STATE", "FOLLOWS"], rows, frozenset({1})) if rows else []


def _gpu_rows(gpus: Sequence[GpuSample], fans: Sequence[Fan] = ()) -> list[str]:
    rows = []
    for g in gpus:
        if g.error:
            rows.append([str(g.index), clean(g.name or "?")[:24], f"failed: {clean(g.error)}", "", "", "", ""])
            continue
        if g.asleep:
            rows.append([str(g.index), clean(g.name or "?")[:24], "asleep", "", "", "", ""])
            continue
        power = _num(g.power_w, "")
        if g.power_limit_w:
            power += f"/{g.power_limit_w:.0f}"
        rows.append([str(g.index), clean(g.name or "?")[:24], _num(g.utilization_percent, " %"),
                     _memory(g.memory_used_bytes, g.memory_total_bytes), _num(g.temperature_c, " °C"),
                     _fan_column(g, fans),
                     power + (" W" if power != "–" else "")])
    return _table(["GPU", "NAME", "UTIL", "MEMORY", "TEMP", "FAN", "POWER"], rows, frozenset({0, 2, 4, 5, 6}))


UNCUT = 100_000  # the width of a pipe: nothing is cut


def fit(text: str, width: int) -> str:
    """``text`` in ``width`` characters, cut with "…" when longer."""
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def _process_rows(processes: Sequence[ProcessSample], limit: int, width: int, gpus: bool) -> list[str]:
    """PID, user, (GPU, SM, GPU memory: only where there are GPUs), CPU, the program a person knows the process
    by, and its command line in what is left of the terminal's ``width``, cut with "…"."""

    def weight(p: ProcessSample) -> tuple[float, float]:
        return (p.sm_percent or 0.0, p.cpu_percent or 0.0)

    rows = []
    for p in sorted(processes, key=weight, reverse=True)[:limit]:
        who = clean(p.user or "?")
        if p.container is not None:
            who += f" [{clean(p.container.name or p.container.id[:12])}]"
        gpu_cells = [",".join(str(u.gpu_index) for u in p.gpus) or "–", _num(p.sm_percent, " %"),
                     _memory(p.gpu_memory_bytes, None) if p.gpu_memory_bytes else "–"] if gpus else []
        rows.append([str(p.pid), fit(who, 24), *gpu_cells, _num(p.cpu_percent, " %"),
                     fit(clean(display_name(p)), 32), clean(p.command or "")])
    if not rows:
        return []
    header = ["PID", "USER", *(["GPU", "SM", "GPU MEM"] if gpus else []), "CPU", "PROGRAM", "COMMAND"]
    right = frozenset({0, 3, 4, 5} if gpus else {0, 2})
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    room = width - sum(widths) - 2 * (len(header) - 1)
    if room < 12:  # no room for the command line: the program says which job it is
        return _table(header[:-1], [r[:-1] for r in rows], right)
    return _table(header, [[*r[:-1], fit(r[-1], room)] for r in rows], right)


def _host_line(host: HostSample) -> str:
    memory = _memory(host.memory_used_bytes, host.memory_total_bytes)
    cpu = f"CPU {_num(host.cpu_percent, ' %')} of {host.cpu_count or '?'} cores"
    if host.cpu_temperature_c is not None:
        cpu += f" at {host.cpu_temperature_c:.0f} °C"
    load = " ".join(f"{x:.2f}" for x in host.load_average or ()) or "–"
    return f"{cpu}, load {load}, memory {memory}"


def render(snap: Snapshot, processes: int = 8, width: int | None = None) -> str:
    """The snapshot as lines of text: the verdict first, then the GPUs, the processes and the host. ``width``: the
    terminal's columns ($COLUMNS, or its size): command lines fill what is left; written to a pipe or a file
    without $COLUMNS, they are whole."""
    if width is None:
        width = shutil.get_terminal_size((100, 24)).columns if "COLUMNS" in os.environ or sys.stdout.isatty() \
            else UNCUT
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(snap.timestamp or time.time()))
    lines = [f"{clean(snap.host.hostname)}  {stamp}  backend: {clean(snap.backend.name)}"]
    if snap.verdict is not None:
        lines += [clean(snap.verdict.headline).replace("`", "")] if snap.verdict.headline else []
        lines += ["  · " + clean(cause.summary).replace("`", "") for cause in snap.verdict.causes[1:4]]
    lines.append("")
    if snap.gpus:
        lines += _gpu_rows(snap.gpus, snap.fans)
    else:
        lines.append(clean(snap.backend.no_gpu_summary or "No GPU found."))
    table = _process_rows(snap.processes, processes, width, bool(snap.gpus))
    if table:
        lines += ["", *table]
    fans = _fan_rows(snap.fans)
    if fans:
        lines += ["", *fans]
    lines += ["", _host_line(snap.host)]
    lines += [f"note: {clean(error)}" for error in snap.errors]
    return "\n".join(lines) + "\n"
