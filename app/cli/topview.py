"""What ``fanwhy top`` shows: one snapshot's JSON view (what ``/api/gpu/metrics`` serves, so a local collector and a
remote server look the same) laid out for a terminal of a given size, with the state a person changed with keys
(app.cli.topstate).

Pure: lines of (text, style) segments that ``app.cli.top`` paints with curses; no curses here, so every key and
every layout is tested without a terminal. Untrusted text (process names, commands, containers) is cleaned of
control characters before it is laid out.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from typing import Literal

from ..core.cells import cut, pad, shown, wrap
from ..core.cells import fit as fit_cells
from ..core.cells import width as cell_width
from ..core.jsonvalue import Json, members, number, objects
from ..core.record import record
from .terminal import activity_line, host_words
from .topkeys import ASCENDING, SORTS, TITLE, help_lines
from .topstate import History, Obj, TopState, View, int_of, obj_of, shown_processes, str_of

Style = Literal["normal", "title", "header", "selected", "alert", "warn", "dim", "good"]
Segment = tuple[str, Style]
Line = list[Segment]
MIN_WIDTH, MIN_HEIGHT = 60, 12
GIB = float(1 << 30)


@record
class Glyphs:
    """The characters a frame is drawn with: Unicode where the terminal's locale is UTF-8, else ASCII."""

    spark: str
    down: str
    up: str
    branch: str
    last: str
    ellipsis: str


UNICODE = Glyphs("▁▂▃▄▅▆▇█", "▼", "▲", "├─", "└─", "…")
ASCII = Glyphs(" .:-=+*#", "v", "^", "|-", "`-", "~")



def frame(view: View | None, state: TopState, history: History, width: int, height: int, glyphs: Glyphs,
          problem: str = "") -> list[Line]:
    """The whole screen: ``height`` lines at most, none longer than ``width``."""
    if width < MIN_WIDTH or height < MIN_HEIGHT:
        return [[(_fit(f"terminal too small ({width}x{height}): fanwhy top needs {MIN_WIDTH}x{MIN_HEIGHT}",
                       width, glyphs), "warn")]]
    if view is None:
        waiting = f"fanwhy top: {problem}" if problem else "fanwhy top: collecting the first snapshot..."
        return _for(glyphs, [[(line, "warn" if problem else "title")]
                             for line in wrap(shown(waiting), width, height - 1, "  ", glyphs.ellipsis)])
    lines = [_title(view, width, glyphs, problem)]
    if state.help:
        body: list[Line] = [[(_fit(text, width, glyphs), "normal")] for text in [TITLE, "", *help_lines(width)]]
        return _for(glyphs, [*[*lines, *body][:height - 1], _footer(state, width, glyphs)])
    lines += _verdict(view, width, glyphs)
    lines += _host(view, width, glyphs)
    lines += _gpus(view, history, width, glyphs)
    fans = _fans(view, width, glyphs)
    room = height - len(lines) - 1
    if len(fans) + 4 > room:  # the processes matter more than the board's fans on a short terminal
        fans = fans[:max(0, room - 5)]
    lines += fans
    room = height - len(lines) - 1
    if state.detail and state.selected is not None:
        lines += _detail(state.selected, view, history, width, glyphs, room)
    else:
        lines += _processes(view, state, width, room, glyphs)
    lines = lines[:height - 1]
    lines += [[("", "normal")]] * (height - 1 - len(lines))
    return _for(glyphs, [*lines, _footer(state, width, glyphs)])


_TO_ASCII = str.maketrans({"°": "", "–": "-", "…": "~", "·": "-"})


def _for(glyphs: Glyphs, lines: list[Line]) -> list[Line]:
    """``lines`` as the terminal can show them: in ASCII, every other character (a name's too) becomes "?"."""
    if glyphs is not ASCII:
        return lines
    return [[(words.translate(_TO_ASCII).encode("ascii", "replace").decode(), style) for words, style in line]
            for line in lines]


def _fit(text: str, width: int, glyphs: Glyphs) -> str:
    return fit_cells(text, width, glyphs.ellipsis)


def _bar(text: str, width: int, glyphs: Glyphs) -> str:
    """``text`` across the whole width (a title or a key line, drawn in its own colour)."""
    return pad(_fit(text, width, glyphs), width)


def _title(view: View, width: int, glyphs: Glyphs, problem: str) -> Line:
    host = obj_of(view.get("host"))
    backend = str_of(obj_of(view.get("backend")).get("name")) or "?"
    try:
        stamp = time.strftime("%H:%M:%S", time.localtime(number(view.get("timestamp")) or time.time()))
    except (OverflowError, ValueError, OSError):  # a time no clock shows (year 10,000 and past)
        stamp = "--:--:--"
    text = f" fanwhy top  {shown(str_of(host.get('hostname')) or '?')}  {stamp}  backend {shown(backend)}"
    if problem:
        text += f"  [{shown(problem)}]"
    return [(_bar(text + "  h: help", width, glyphs), "title")]


def _verdict(view: View, width: int, glyphs: Glyphs) -> list[Line]:
    verdict = obj_of(view.get("verdict"))
    headline = shown(str_of(verdict.get("headline"))).replace("`", "")
    style: Style = "normal" if verdict.get("busy") else "good"
    lines: list[Line] = [[(text, style)] for text in wrap(headline, width, 3)]
    fan = next((c for c in objects(verdict.get("causes")) if c.get("kind") in ("fan", "fan_fault")), None)
    summary = str_of(fan.get("summary")) if fan is not None else ""
    if summary and summary != verdict.get("headline"):
        lines += [[(text, "normal")] for text in wrap("Fans: " + shown(summary).replace("`", ""), width, 2)]
    for alert in objects(view.get("alerts"))[:2]:
        if str_of(alert.get("state")) in ("", "firing"):
            said = str_of(alert.get("message")) or str_of(alert.get("rule")) or "alert"
            lines.append([(_fit(f"! {shown(said)}", width, glyphs), "alert")])
    return lines


def _host(view: View, width: int, glyphs: Glyphs) -> list[Line]:
    """The CPU, its temperature, the load and the memory: what heats the machine besides its GPUs."""
    host = obj_of(view.get("host"))
    if not host or (host.get("cpu_count") is None and host.get("cpu_percent") is None):
        return []
    load = [v for v in (number(x) for x in members(host.get("load_average"))) if v is not None]

    def whole(key: str) -> int | None:
        found = number(host.get(key))
        return int(found) if found is not None else None

    said = host_words(number(host.get("cpu_percent")), whole("cpu_count"), number(host.get("cpu_temperature_c")),
                      load or None, whole("memory_used_bytes"), whole("memory_total_bytes"))
    return [[(_fit(said, width, glyphs), "normal")]]


def spark(values: Sequence[float], width: int, glyphs: Glyphs, top: float = 100.0) -> str:
    """The last ``width`` values as a line of bars, 0 to ``top``."""
    levels = len(glyphs.spark) - 1
    return "".join(glyphs.spark[max(0, min(levels, round(levels * v / top)))] for v in list(values)[-width:]) \
        if top > 0 else ""


def _fan_word(gpu: Obj, fans: Sequence[Obj]) -> str:
    own = [f for f in fans if f.get("gpu_index") == gpu.get("index") and f.get("state") != "dead"]
    if not own:
        return "passive" if gpu.get("passively_cooled") else _pct(gpu.get("fan_speed_percent"))
    lead = max(own, key=lambda f: number(f.get("percent")) or 0.0)
    state = str_of(lead.get("state"))
    if state == "stopped":
        return "rest"
    if state in ("failed", "stalled", "off-target"):
        return state.upper()
    percent = number(lead.get("percent"))
    speed = _pct(percent) if percent is not None else f"{int_of(lead.get('rpm')):,} RPM"
    floor = number(lead.get("floor_percent"))
    return f"{speed}/{floor:.0f}" if floor is not None else speed


def _pct(value: Json) -> str:
    found = number(value)
    return f"{found:.0f} %" if found is not None else "–"


def _gpus(view: View, history: History, width: int, glyphs: Glyphs) -> list[Line]:
    gpus = objects(view.get("gpus"))
    if not gpus:
        summary = str_of(obj_of(view.get("backend")).get("no_gpu_summary")) or "No GPU found."
        return [[("", "normal")], [(_fit(shown(summary), width, glyphs), "dim")]]
    fans = objects(view.get("fans"))
    kinds = {(int_of(k.get("gpu_index")), k.get("gpu_instance")): str_of(k.get("kind"))
             for k in objects(obj_of(view.get("verdict")).get("busy_kinds"))}
    head = f"{'GPU':>3} {'NAME':<20} {'UTIL':>5} {'MEMORY':>13} {'TEMP':>5} {'FAN/FLOOR':>9} {'POWER':>10}  "
    lines: list[Line] = [[("", "normal")], [(_bar(head + "HISTORY", width, glyphs), "header")]]
    for gpu in gpus:
        index = int_of(gpu.get("index"))
        name = pad(cut(shown(str_of(gpu.get("name")) or "?"), 20), 20)
        if gpu.get("error"):
            lines.append([(_fit(f"{index:>3} {name} failed: {shown(str_of(gpu.get('error')))}", width, glyphs),
                           "alert")])
            continue
        used, total = number(gpu.get("memory_used_bytes")), number(gpu.get("memory_total_bytes"))
        memory = f"{used / GIB:.1f}/{total / GIB:.0f} GiB" if used is not None and total else "–"
        power, limit = number(gpu.get("power_w")), number(gpu.get("power_limit_w"))
        watts = "–" if power is None else f"{power:.0f}/{limit:.0f} W" if limit else f"{power:.0f} W"
        temp, slowdown = number(gpu.get("temperature_c")), number(gpu.get("temperature_slowdown_c"))
        cells = (f"{index:>3} {name} {_pct(gpu.get('utilization_percent')):>5} "
                 f"{memory:>13} {(f'{temp:.0f}°C' if temp is not None else '–'):>5} "
                 f"{_fan_word(gpu, fans):>9} {watts:>10}  ")
        room = max(0, width - cell_width(cells))
        hot = temp is not None and slowdown is not None and temp >= 0.9 * slowdown
        lines.append([(_fit(cells, width, glyphs), "warn" if hot else "normal"),
                      (spark(history.gpus.get(index, ()), room, glyphs), "good")])
        lines += _activity(gpu, index, kinds, width, glyphs)
    return lines


def _activity(gpu: Obj, index: int, kinds: dict[tuple[int, Json], str], width: int, glyphs: Glyphs) -> list[Line]:
    """The GPU's activity counters under its row, with the kind of busy (app.cli.terminal.activity_line)."""
    windows = [obj_of(gpu.get("activity"))] if gpu.get("activity") else objects(gpu.get("activity_instances"))
    return [[(_fit(activity_line(w, kinds.get((index, w.get("gpu_instance"))), f"{index:>3} "), width, glyphs), "dim")]
            for w in windows]


def _fans(view: View, width: int, glyphs: Glyphs) -> list[Line]:
    board = [f for f in objects(view.get("fans")) if f.get("gpu_index") is None and f.get("state") != "dead"]
    if not board:
        return []
    lines: list[Line] = [[("", "normal")], [(_bar(f"{'FAN':<28} {'SPEED':>18}  FOLLOWS", width, glyphs),
                                            "header")]]
    for fan in board[:6]:
        rpm = number(fan.get("rpm"))
        speed = _pct(fan.get("percent")) if number(fan.get("percent")) is not None else (
            f"{rpm:,.0f} RPM" if rpm is not None else "–")
        state = str_of(fan.get("state"))
        word = {"stopped": "rest", "floor": "floor", "full": "full"}.get(state, state.upper()
                                                                          if state in ("failed", "stalled") else "")
        source = str_of(fan.get("source")) or "–"
        how = {"learned": f" ({100 * (number(fan.get('confidence')) or 0):.0f} % sure)",
               "named": " (probably)"}.get(str_of(fan.get("source_from")), "")
        label = pad(cut(shown(str_of(fan.get("name")) or "?"), 28), 28)
        text = f"{label} {(speed + ' ' + word).strip():>18}  {shown(source)}{how}"
        lines.append([(_fit(text, width, glyphs), "alert" if state in ("failed", "stalled") else "normal")])
    return lines


def _who(proc: Obj) -> str:
    container = obj_of(proc.get("container"))
    where = str_of(container.get("pod")) or str_of(container.get("name")) or str_of(container.get("id"))[:12]
    return shown(str_of(proc.get("user")) or "?") + (f" [{shown(where)}]" if where else "")


def _processes(view: View, state: TopState, width: int, room: int, glyphs: Glyphs) -> list[Line]:
    if room < 3:
        return []
    listed = shown_processes(view, state)
    arrow = glyphs.up if (state.sort in ASCENDING) != state.reverse else glyphs.down
    titles = {letter: title + (arrow if letter == state.sort else "") for letter, (_, title) in SORTS.items()}
    head = (f"{titles['N']:>7} {titles['U']:<18} {'GPU':>3} {titles['G']:>8} {titles['S']:>5} {titles['P']:>5} "
            f"{titles['M']:>6} {titles['W']:>5}  {titles['C']}")
    marks = (f"(filter: {shown(state.filter)}, Esc clears)" if state.filter else "") \
        + ("  (tree)" if state.tree else "")
    lines: list[Line] = [[(_fit(marks.strip(), width, glyphs), "dim")] if marks else [("", "normal")],
                         [(_bar(head, width, glyphs), "header")]]
    if not listed:
        lines.append([("no process" + (" matches the filter" if state.filter else " to show"), "dim")])
        return lines
    rows = room - 2
    pids = [int_of(p.get("pid")) for p, _ in listed]
    if state.selected in pids:
        at = pids.index(state.selected)
        state.offset = min(max(state.offset, at - rows + 1), at)
    state.offset = max(0, min(state.offset, max(0, len(listed) - rows)))
    for proc, depth in listed[state.offset:state.offset + rows]:
        selected = int_of(proc.get("pid")) == state.selected
        text = _fit(_process_row(proc, depth, glyphs), width, glyphs)
        lines.append([(pad(text, width) if selected else text, "selected" if selected else "normal")])
    return lines


def _gib(value: Json) -> str:
    found = number(value)
    return f"{found / GIB:.1f}G" if found else "–"


def _watts(value: Json) -> str:
    found = number(value)
    return f"{found:.0f}" if found is not None else "–"


def _process_row(proc: Obj, depth: int, glyphs: Glyphs) -> str:
    gpus = ",".join(str_of(g.get("gpu_index")) for g in objects(proc.get("gpus"))) or "–"
    indent = ("  " * (depth - 1) + glyphs.last) if depth else ""
    program = str_of(proc.get("program")) or str_of(proc.get("name"))
    line = str_of(proc.get("command"))
    command = shown(f"{program}  {line}" if program and line and not line.startswith(program) else line or program)
    return (f"{int_of(proc.get('pid')):>7} {pad(_fit(_who(proc), 18, glyphs), 18)} {gpus:>3} "
            f"{_gib(proc.get('gpu_memory_bytes')):>8} "
            f"{_pct(proc.get('sm_percent')):>5} {_pct(proc.get('cpu_percent')):>5} {_gib(proc.get('rss_bytes')):>6} "
            f"{_watts(proc.get('power_w')):>5}  {indent}{command}")


def _detail(pid: int, view: View, history: History, width: int, glyphs: Glyphs, room: int) -> list[Line]:
    """A process whole: who, its GPU memory, SM, power, energy and CPU, its whole command wrapped over what is left
    of the screen (the two history lines kept), in ``room`` lines."""
    live = next((p for p in objects(view.get("processes")) if p.get("pid") == pid), None)
    proc: Obj = live or history.last.get(pid) or {}
    memory, sm = history.processes.get(pid, (deque(), deque()))
    top = max([*memory, 1.0])
    energy = number(proc.get("energy_wh"))
    ended = "" if live is not None else "  (ended)"
    name = str_of(proc.get("program")) or str_of(proc.get("name")) or "?"
    rows = [
        f"PID {pid}  {shown(name)}  user {_who(proc)}{ended}",
        f"GPU memory now {(number(proc.get('gpu_memory_bytes')) or 0) / GIB:.2f} GiB, most {top / GIB:.2f} GiB",
        f"SM now {_pct(proc.get('sm_percent'))}; power {_watts(proc.get('power_w'))} W; energy so far "
        f"{'–' if energy is None else format(energy, '.2f') + ' Wh'}; CPU {_pct(proc.get('cpu_percent'))}",
    ]
    lines: list[Line] = [[("", "normal")], [(_bar(" process detail (Enter or Esc: back)", width, glyphs),
                                            "header")]]
    for text in rows:
        lines += [[(line, "normal")] for line in wrap(text, width, indent="  ")]
    command = "command (secrets masked): " + shown(str_of(proc.get("command")) or "–")
    lines += [[(line, "normal")] for line in wrap(command, width, max(1, room - len(lines) - 2), "  ",
                                                  glyphs.ellipsis)]
    lines.append([("GPU mem ", "dim"), (spark(memory, width - 8, glyphs, top), "good")])
    lines.append([("SM %    ", "dim"), (spark(sm, width - 8, glyphs), "good")])
    return lines[:room]


def _footer(state: TopState, width: int, glyphs: Glyphs) -> Line:
    if state.editing is not None:
        return [(_bar(f"filter: {state.editing}_   (Enter: apply, Esc: clear)", width, glyphs), "title")]
    if state.confirm is not None:
        pid, name = state.confirm
        return [(_bar(f"send {name} to PID {pid}? y: yes, any other key: no", width, glyphs), "warn")]
    if state.message:
        return [(_bar(state.message, width, glyphs), "warn")]
    keys = "q quit  h help  / filter  t tree  Enter detail  G S P M W N U C sort"
    keys += "" if state.readonly or not state.can_signal else "  T k signal"
    return [(_bar(keys, width, glyphs), "dim")]
