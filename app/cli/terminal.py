"""The terminal's answer: the verdict as a sentence, then a compact table of GPUs and of the top processes.

A view of one snapshot's JSON view (the dict ``/api/gpu/metrics`` serves), as gpustat prints one: what a person
at a shell wants first, in 80 columns. Untrusted names are printed with control characters removed, so a
process cannot move the cursor or recolour the terminal with its name.
"""

from __future__ import annotations

import re
import time
from typing import Any, Mapping, Sequence

from ..core.vocabulary import GIB

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def clean(text: Any) -> str:
    """``text`` with control characters (escape sequences, newlines) replaced: names come from processes."""
    return _CONTROL.sub("?", str(text))


def _num(value: Any, unit: str = "", digits: int = 0) -> str:
    return "–" if value is None else f"{value:.{digits}f}{unit}"


def _memory(used: Any, total: Any) -> str:
    if used is None:
        return "–"
    return f"{used / GIB:.1f}/{total / GIB:.0f} GiB" if total else f"{used / GIB:.1f} GiB"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], right: frozenset[int]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).rjust(w) if i in right else str(c).ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return [line(header), *(line(r) for r in rows)]


def _gpu_rows(gpus: Sequence[Mapping[str, Any]]) -> list[str]:
    rows = []
    for g in gpus:
        if g.get("error"):
            rows.append([str(g["index"]), clean(g.get("name") or "?")[:24], f"failed: {clean(g['error'])}",
                         "", "", "", ""])
            continue
        power = _num(g.get("power_w"), "")
        if g.get("power_limit_w"):
            power += f"/{g['power_limit_w']:.0f}"
        rows.append([str(g["index"]), clean(g.get("name") or "?")[:24], _num(g.get("utilization_percent"), " %"),
                     _memory(g.get("memory_used_bytes"), g.get("memory_total_bytes")),
                     _num(g.get("temperature_c"), " °C"),
                     "passive" if g.get("passively_cooled") else _num(g.get("fan_speed_percent"), " %"),
                     power + (" W" if power != "–" else "")])
    return _table(["GPU", "NAME", "UTIL", "MEMORY", "TEMP", "FAN", "POWER"], rows, frozenset({0, 2, 4, 5, 6}))


def _process_rows(processes: Sequence[Mapping[str, Any]], limit: int) -> list[str]:
    def weight(p: Mapping[str, Any]) -> tuple[float, float]:
        return (p.get("sm_percent") or 0.0, p.get("cpu_percent") or 0.0)

    rows = []
    for p in sorted(processes, key=weight, reverse=True)[:limit]:
        gpus = ",".join(str(u["gpu_index"]) for u in p.get("gpus") or ()) or "–"
        container = p.get("container") or {}
        who = clean(p.get("user") or "?")
        if container:
            who += f" [{clean(container.get('name') or str(container.get('id', ''))[:12])}]"
        rows.append([str(p["pid"]), who[:24], gpus, _num(p.get("sm_percent"), " %"),
                     _memory(p.get("gpu_memory_bytes"), None) if p.get("gpu_memory_bytes") else "–",
                     _num(p.get("cpu_percent"), " %"), clean(p.get("command") or p.get("name") or "?")[:60]])
    if not rows:
        return []
    return _table(["PID", "USER", "GPU", "SM", "GPU MEM", "CPU", "COMMAND"], rows, frozenset({0, 3, 4, 5}))


def _host_line(host: Mapping[str, Any]) -> str:
    load = host.get("load_average") or []
    memory = _memory(host.get("memory_used_bytes"), host.get("memory_total_bytes"))
    cpu = f"CPU {_num(host.get('cpu_percent'), ' %')} of {host.get('cpu_count') or '?'} cores"
    if host.get("cpu_temperature_c") is not None:
        cpu += f" at {host['cpu_temperature_c']:.0f} °C"
    return f"{cpu}, load {' '.join(f'{x:.2f}' for x in load) or '–'}, memory {memory}"


def render(view: Mapping[str, Any], processes: int = 8) -> str:
    """The snapshot ``view`` as lines of text: the verdict first, then the GPUs, the processes and the host."""
    host = view.get("host") or {}
    backend = view.get("backend") or {}
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(view.get("timestamp") or time.time()))
    lines = [f"{clean(host.get('hostname') or '')}  {stamp}  backend: {clean(backend.get('name', '?'))}"]
    verdict = view.get("verdict") or {}
    if verdict.get("headline"):
        lines.append(clean(verdict["headline"]).replace("`", ""))
    for cause in (verdict.get("causes") or [])[1:4]:
        lines.append("  · " + clean(cause.get("summary", "")).replace("`", ""))
    lines.append("")
    gpus = view.get("gpus") or []
    if gpus:
        lines += _gpu_rows(gpus)
    else:
        lines.append(clean(backend.get("no_gpu_summary") or "No GPU found."))
    table = _process_rows(view.get("processes") or [], processes)
    if table:
        lines += ["", *table]
    lines += ["", _host_line(host)]
    for error in view.get("errors") or []:
        lines.append(f"note: {clean(error)}")
    return "\n".join(lines) + "\n"
