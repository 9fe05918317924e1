"""The terminal's answer: the verdict as a sentence, then a compact table of GPUs and of the top processes.

A view of one Snapshot (the model, typed), in the manner of the one-shot GPU tools: what a person at a shell wants
first, in 80 columns. Untrusted names are printed with control characters removed, so a process cannot move the cursor
or recolour the terminal with its name.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import time
from typing import Mapping, Sequence

from ..core.activity import BusyKind
from ..core.cells import fit, pad, shown, width
from ..core.fan import Fan, source_guessed
from ..core.model import GpuSample, HostSample, ProcessSample
from ..core.program import display_name
from ..core.snapshot import Snapshot
from ..core.vocabulary import GIB
from ..fans.alarm_words import alarmed, fan_cell
from ..verdict.busykind import SHORT

UNCUT = 100_000  # the width of a pipe: nothing is cut
MIN_COLUMN = 8  # a column a table shrinks to fit the terminal keeps at least this many cells (or its title's)

Cell = str | tuple[str, str]  # a cell's text, or its text and a tail kept whole when the text is cut ("(probably)")


def terminal_width() -> int:
    """The terminal's columns ($COLUMNS, or its size); a pipe or a file without $COLUMNS: nothing is cut."""
    if "COLUMNS" in os.environ or sys.stdout.isatty():
        return shutil.get_terminal_size((100, 24)).columns
    return UNCUT


def _num(value: float | int | None, unit: str = "", digits: int = 0) -> str:
    return "–" if value is None else f"{value:.{digits}f}{unit}"


def _memory(used: int | None, total: int | None) -> str:
    if used is None:
        return "–"
    return f"{used / GIB:.1f}/{total / GIB:.0f} GiB" if total else f"{used / GIB:.1f} GiB"


def _whole(cell: Cell) -> str:
    return cell if isinstance(cell, str) else f"{cell[0]} {cell[1]}" if cell[1] else cell[0]


def _fitted(cell: Cell, cells: int) -> str:
    """``cell`` in ``cells`` cells: its text cut with an ellipsis, its tail (how sure a guess is) kept."""
    if isinstance(cell, str) or not cell[1]:
        return fit(_whole(cell), cells)
    if width(_whole(cell)) <= cells:
        return _whole(cell)
    return f"{fit(cell[0], cells - width(cell[1]) - 1)} {cell[1]}"


def table(header: Sequence[str], rows: Sequence[Sequence[Cell]], right: frozenset[int],
           room: int = UNCUT, flexible: Sequence[int] = ()) -> list[str]:
    """Columns two spaces apart, counted in cells. Wider than ``room``: the ``flexible`` columns give up cells,
    the widest first, down to MIN_COLUMN (or their title), their cells cut with an ellipsis."""
    widths = [max(width(_whole(r[i])) for r in [header, *rows]) for i in range(len(header))]
    # a column keeps its title, MIN_COLUMN, and room for its tails with a few cells of text before them
    floors = [max(MIN_COLUMN, width(header[i]), *(width(r[i][1]) + 5 for r in rows if not isinstance(r[i], str)))
              for i in range(len(header))]
    excess = sum(widths) + 2 * (len(widths) - 1) - room
    while excess > 0:
        shrinkable = [i for i in flexible if widths[i] > floors[i]]
        if not shrinkable:
            break
        widest = max(shrinkable, key=lambda i: widths[i])
        given = min(excess, widths[widest] - floors[widest])
        widths[widest] -= given
        excess -= given

    def line(cells: Sequence[Cell]) -> str:
        return "  ".join(pad(_fitted(c, w), w, right=i in right)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return [line(header), *(line(r) for r in rows)]


def _fan_column(gpu: GpuSample, fans: Sequence[Fan]) -> str:
    own = [f for f in fans if f.gpu_index == gpu.index and f.state != "dead"]
    if own:
        return fan_cell(max(own, key=lambda f: (alarmed(f), f.percent or 0.0)))
    return "passive" if gpu.passively_cooled else _num(gpu.fan_speed_percent, " %")


def _follows(fan: Fan) -> tuple[str, str]:
    """What a fan follows, and how sure that is (a learned source's confidence, a guess as a guess): a cell whose
    tail is never cut."""
    if fan.source is None:
        return "–", ""
    if fan.source_from == "learned":
        return shown(fan.source), f"(learned, {100 * (fan.confidence or 0):.0f} % sure)"
    if source_guessed(fan):
        return shown(fan.source), "(probably)"
    return shown(fan.source), ""


def _row(*cells: Cell) -> list[Cell]:
    return list(cells)


def fan_table(fans: Sequence[Fan], room: int = UNCUT) -> list[str]:
    """Every fan with its speed and state, what it follows and what is wrong or left out (a replay's table), in
    ``room`` cells."""
    rows = [_row(shown(f.name), fan_cell(f) if f.state != "dead" else "–", _follows(f), shown(f.dead or f.alarm or ""))
            for f in fans]
    return table(["FAN", "STATE", "FOLLOWS", "NOTE"], rows, frozenset({1}), room, (0, 2, 3)) if rows else []


def _fan_rows(fans: Sequence[Fan], room: int, limit: int = 6) -> list[str]:
    """The machine's other fans (board, laptop, chassis): each one's speed, state and what it follows."""
    rows = [_row(shown(f.name), fan_cell(f), _follows(f))
            for f in fans if f.gpu_index is None and f.state != "dead"][:limit]
    return table(["FAN", "STATE", "FOLLOWS"], rows, frozenset({1}), room, (0, 2)) if rows else []


def _gpu_rows(gpus: Sequence[GpuSample], fans: Sequence[Fan] = (), room: int = UNCUT) -> list[str]:
    rows = []
    for g in gpus:
        if g.error:
            rows.append([str(g.index), shown(g.name or "?"), f"failed: {shown(g.error)}", "", "", "", ""])
            continue
        if g.asleep:
            rows.append([str(g.index), shown(g.name or "?"), "asleep", "", "", "", ""])
            continue
        power = _num(g.power_w, "")
        if g.power_limit_w:
            power += f"/{g.power_limit_w:.0f}"
        rows.append([str(g.index), shown(g.name or "?"), _num(g.utilization_percent, " %"),
                     _memory(g.memory_used_bytes, g.memory_total_bytes), _num(g.temperature_c, " °C"),
                     _fan_column(g, fans),
                     power + (" W" if power != "–" else "")])
    return table(["GPU", "NAME", "UTIL", "MEMORY", "TEMP", "FAN", "POWER"], rows, frozenset({0, 2, 4, 5, 6}),
                  room, (1,))


def activity_line(window: Mapping[str, object], kind: str | None, lead: str = "    ", room: int = UNCUT) -> str:
    """A GPU's activity counters in a line under its row (``window``: an Activity's fields, as the JSON view has
    them), with the kind of busy in a few words: "    SM 96 %  occ 12 %  tensor 0 %  FP32 76 %  DRAM 5 %
    (FP32, tensor idle)". FP64 and FP16 appear when they work; a GPU instance (MIG) is named first. ASCII only."""

    def pct(name: str) -> float | None:
        value = window.get(name)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    parts = []
    for label, name in (("SM", "sm_active_percent"), ("occ", "sm_occupancy_percent"),
                        ("tensor", "tensor_percent"), ("FP32", "fp32_percent"), ("FP64", "fp64_percent"),
                        ("FP16", "fp16_percent"), ("DRAM", "dram_percent")):
        value = pct(name)
        if value is not None and (label not in ("FP64", "FP16") or value >= 1):
            parts.append(f"{label} {_num(value, ' %', 1 if 0 < value < 1 else 0)}")
    instance = window.get("gpu_instance")
    line = (lead + (f"GI {instance}: " if instance is not None else "") + "  ".join(parts)
            + (f"  ({SHORT.get(kind, kind)})" if kind else ""))
    return fit(line, room)


def _activity_rows(gpus: Sequence[GpuSample], kinds: Sequence[BusyKind], room: int) -> list[str]:
    """A line under the GPU table for each GPU (or GPU instance) whose activity counters are read."""
    said = {(k.gpu_index, k.gpu_instance): k.kind for k in kinds}
    return [activity_line({f.name: getattr(window, f.name) for f in dataclasses.fields(window)},
                          said.get((gpu.index, window.gpu_instance)), f"{gpu.index:>3} ", room)
            for gpu in gpus for window in ((gpu.activity,) if gpu.activity is not None else gpu.activity_instances)]


def _process_rows(processes: Sequence[ProcessSample], limit: int, columns: int, gpus: bool) -> list[str]:
    """PID, user, (GPU, SM, GPU memory: only where there are GPUs), CPU, the program a person knows the process
    by, and its command line in what is left of the terminal's ``columns``, cut with "…"."""

    def weight(p: ProcessSample) -> tuple[float, float]:
        return (p.sm_percent or 0.0, p.cpu_percent or 0.0)

    rows = []
    for p in sorted(processes, key=weight, reverse=True)[:limit]:
        who = shown(p.user or "?")
        if p.container is not None:
            who += f" [{shown(p.container.name or p.container.id[:12])}]"
        gpu_cells = [",".join(str(u.gpu_index) for u in p.gpus) or "–", _num(p.sm_percent, " %"),
                     _memory(p.gpu_memory_bytes, None) if p.gpu_memory_bytes else "–"] if gpus else []
        rows.append([str(p.pid), fit(who, 24), *gpu_cells, _num(p.cpu_percent, " %"),
                     fit(shown(display_name(p)), 32), shown(p.command or "")])
    if not rows:
        return []
    header = ["PID", "USER", *(["GPU", "SM", "GPU MEM"] if gpus else []), "CPU", "PROGRAM", "COMMAND"]
    right = frozenset({0, 3, 4, 5} if gpus else {0, 2})
    widths = [max(width(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    room = columns - sum(widths) - 2 * (len(header) - 1)
    if room < 12:  # no room for the command line: the program says which job it is
        return table(header[:-1], [r[:-1] for r in rows], right, columns, (1, len(header) - 2))
    return table(header, [[*r[:-1], fit(r[-1], room)] for r in rows], right)


def _host_line(host: HostSample) -> str:
    return host_words(host.cpu_percent, host.cpu_count, host.cpu_temperature_c, host.load_average,
                      host.memory_used_bytes, host.memory_total_bytes)


def host_words(cpu_percent: float | None, cpu_count: int | None, cpu_temperature_c: float | None,
               load_average: Sequence[float] | None, memory_used: int | None, memory_total: int | None) -> str:
    """The CPU side in a line: "CPU 44 % of 16 cores at 62 °C, load 1.20 0.90 0.80, memory 7.1/31 GiB"."""
    cpu = f"CPU {_num(cpu_percent, ' %')} of {cpu_count or '?'} cores"
    if cpu_temperature_c is not None:
        cpu += f" at {cpu_temperature_c:.0f} °C"
    load = " ".join(f"{x:.2f}" for x in load_average or ()) or "–"
    return f"{cpu}, load {load}, memory {_memory(memory_used, memory_total)}"


def render(snap: Snapshot, processes: int = 8, width: int | None = None) -> str:
    """The snapshot as lines of text: the verdict first, then the GPUs, the processes and the host. ``width``: the
    terminal's columns ($COLUMNS, or its size): command lines fill what is left; written to a pipe or a file
    without $COLUMNS, they are whole."""
    columns = terminal_width() if width is None else width
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(snap.timestamp or time.time()))
    lines = [f"{shown(snap.host.hostname)}  {stamp}  backend: {shown(snap.backend.name)}"]
    if snap.verdict is not None:
        lines += [shown(snap.verdict.headline).replace("`", "")] if snap.verdict.headline else []
        lines += ["  · " + shown(cause.summary).replace("`", "") for cause in snap.verdict.causes[1:4]]
    lines.append("")
    if snap.gpus:
        lines += _gpu_rows(snap.gpus, snap.fans, columns)
        lines += _activity_rows(snap.gpus, snap.verdict.busy_kinds if snap.verdict else (), columns)
    else:
        lines.append(shown(snap.backend.no_gpu_summary or "No GPU found."))
    table = _process_rows(snap.processes, processes, columns, bool(snap.gpus))
    if table:
        lines += ["", *table]
    fans = _fan_rows(snap.fans, columns)
    if fans:
        lines += ["", *fans]
    lines += ["", _host_line(snap.host)]
    lines += [f"note: {shown(error)}" for error in snap.errors]
    return "\n".join(lines) + "\n"
