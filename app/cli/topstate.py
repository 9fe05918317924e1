"""``fanwhy top``'s state: what a person chose with keys (the sort column, a filter, the tree, the selected process,
its detail, help, a signal to confirm), the short histories kept across snapshots, and the processes in the order
shown. Pure, on a snapshot's JSON view (what ``/api/gpu/metrics`` serves): a local collector and a remote server
look the same. app.cli.topview lays it out, app.cli.top reads the keys.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ..core.cells import shown
from ..core.jsonvalue import Json, number, objects
from .topkeys import ASCENDING, SIGNALS, SORTS

Obj = Mapping[str, Json]
View = Obj  # a snapshot's JSON view: walked without trusting its shape (a server may be another version)


def obj_of(value: Json) -> Obj:
    return value if isinstance(value, Mapping) else {}


def int_of(value: Json) -> int:
    found = number(value)
    return int(found) if found is not None else 0


def str_of(value: Json) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)



HISTORY = 240  # samples kept per GPU and per process (4 minutes at the 1 s refresh)



@dataclass
class TopState:
    """What the person chose: it survives every new snapshot."""

    sort: str = "G"
    reverse: bool = False
    filter: str = ""
    editing: str | None = None  # the filter being typed
    tree: bool = False
    selected: int | None = None  # a PID
    offset: int = 0  # the first process row shown
    detail: bool = False
    help: bool = False
    confirm: tuple[int, str] | None = None  # (PID, signal) waiting for y
    message: str = ""
    readonly: bool = False
    can_signal: bool = True  # False when following a server: its processes are not this machine's


@dataclass
class History:
    """Short histories kept across snapshots: each GPU's utilization, each process's GPU memory and SM %."""

    gpus: dict[int, deque[float]] = field(default_factory=dict)
    processes: dict[int, tuple[deque[float], deque[float]]] = field(default_factory=dict)
    last: dict[int, Obj] = field(default_factory=dict)  # a process as last seen (it may end)

    def remember(self, view: View) -> None:
        for gpu in objects(view.get("gpus")):
            self.gpus.setdefault(int_of(gpu.get("index")), deque(maxlen=HISTORY)).append(
                number(gpu.get("utilization_percent")) or 0.0)
        seen = set()
        for proc in objects(view.get("processes")):
            pid = int_of(proc.get("pid"))
            seen.add(pid)
            memory, sm = self.processes.setdefault(pid, (deque(maxlen=HISTORY), deque(maxlen=HISTORY)))
            memory.append(number(proc.get("gpu_memory_bytes")) or 0.0)
            sm.append(number(proc.get("sm_percent")) or 0.0)
            self.last[pid] = proc
        for pid in [p for p in self.last if p not in seen][:-32]:  # keep a few ended ones for their detail
            self.last.pop(pid, None)
            self.processes.pop(pid, None)


Action = tuple[str, int, str] | Literal["quit"] | None  # ("signal", pid, name), quit, or nothing to do


def shown_processes(view: View, state: TopState) -> list[tuple[Obj, int]]:
    """The processes in the order shown, each with its depth in the tree (0 without the tree): filtered, sorted."""
    procs = [p for p in objects(view.get("processes")) if _matches(p, state.filter)]
    key, _ = SORTS.get(state.sort, SORTS["G"])
    if key in ("user", "program"):
        def by_text(p: Obj) -> str:
            return (str_of(p.get(key)) or str_of(p.get("name"))).lower()

        procs.sort(key=by_text, reverse=state.reverse)
    elif state.sort in ASCENDING:
        procs.sort(key=lambda p: int_of(p.get(key)), reverse=state.reverse)
    else:
        def by_number(p: Obj) -> tuple[bool, float]:
            value = number(p.get(key))
            return value is not None, value or 0.0

        procs.sort(key=by_number, reverse=not state.reverse)
    if not state.tree:
        return [(p, 0) for p in procs]
    by_pid = {int_of(p.get("pid")): p for p in procs}
    children: dict[int, list[Obj]] = {}
    roots = []
    for p in procs:
        parent = p.get("ppid")
        if isinstance(parent, int) and parent in by_pid and parent != int_of(p.get("pid")):
            children.setdefault(parent, []).append(p)
        else:
            roots.append(p)
    out: list[tuple[Obj, int]] = []
    placed: set[int] = set()

    def walk(p: Obj, depth: int) -> None:
        pid = int_of(p.get("pid"))
        if pid in placed:  # a PID reused into a cycle is placed once
            return
        placed.add(pid)
        out.append((p, depth))
        for child in children.get(pid, ()):
            walk(child, depth + 1)

    for root in [*roots, *procs]:  # then whatever only a cycle reaches
        walk(root, 0)
    return out


def _matches(proc: Obj, text: str) -> bool:
    if not text:
        return True
    container = obj_of(proc.get("container"))
    haystack = " ".join(str_of(v) for v in (proc.get("command"), proc.get("program"), proc.get("name"),
                                          proc.get("user"), container.get("name"), container.get("pod"),
                                          proc.get("pid")) if v)
    return text.lower() in haystack.lower()


def handle(state: TopState, key: str, view: View) -> Action:
    """Apply one key (a character, or a curses key name such as "KEY_DOWN") to ``state``."""
    if state.editing is not None:
        return _edit_filter(state, key)
    if state.confirm is not None:
        pid, name = state.confirm
        state.confirm = None
        if key in ("y", "Y"):
            return ("signal", pid, name)
        state.message = f"{name} to PID {pid}: not sent"
        return None
    state.message = ""
    if key == "q":
        return "quit"
    if key in ("\x1b",):  # closes what is open (help, a process's detail); else clears an applied filter
        if not (state.help or state.detail):
            state.filter, state.offset = "", 0
        state.help = state.detail = False
        return None
    if key in ("h", "?"):
        state.help = not state.help
    elif key in SORTS:
        state.reverse = not state.reverse if state.sort == key else False
        state.sort = key
    elif key == "/":
        state.editing = state.filter
    elif key == "t":
        state.tree = not state.tree
    elif key in ("\n", "\r", "KEY_ENTER"):
        state.detail = not state.detail and state.selected is not None
    elif key in SIGNALS:
        _ask_signal(state, SIGNALS[key])
    else:
        _move(state, key, [int_of(p.get("pid")) for p, _ in shown_processes(view, state)])
    return None


def _edit_filter(state: TopState, key: str) -> Action:
    text = state.editing or ""
    if key in ("\n", "\r", "KEY_ENTER"):
        state.filter, state.editing, state.offset = text, None, 0
    elif key == "\x1b":
        state.filter, state.editing = "", None
    elif key in ("KEY_BACKSPACE", "\x7f", "\b"):
        state.editing = text[:-1]
    elif len(key) == 1 and key.isprintable():
        state.editing = (text + key)[:60]
    return None


def _ask_signal(state: TopState, name: str) -> None:
    if state.readonly:
        state.message = "read-only (--readonly): no signal is sent"
    elif not state.can_signal:
        state.message = "following a server: its processes are not this machine's to signal"
    elif state.selected is None:
        state.message = "select a process first (Up, Down)"
    else:
        state.confirm = (state.selected, name)


_MOVES = {"KEY_DOWN": 1, "KEY_UP": -1, "KEY_NPAGE": 10, "KEY_PPAGE": -10}


def _move(state: TopState, key: str, pids: list[int]) -> None:
    if not pids:
        state.selected = None
        return
    index = pids.index(state.selected) if state.selected in pids else -1
    if key in _MOVES:
        index = min(len(pids) - 1, max(0, index + _MOVES[key]))
    elif key == "KEY_HOME":
        index = 0
    elif key == "KEY_END":
        index = len(pids) - 1
    else:
        return
    state.selected = pids[index]


def follow_selection(state: TopState, view: View, history: History) -> None:
    """After a new snapshot: the first row selected where none is; a selected process that ended is said so once,
    and the selection moves on."""
    pids = [int_of(p.get("pid")) for p, _ in shown_processes(view, state)]
    if state.selected is None and pids and not state.detail:  # the first row is selected from the start
        state.selected = pids[0]
    elif state.selected is not None and state.selected not in pids and not state.detail:
        last = history.last.get(state.selected) or {}
        name = str_of(last.get("program")) or str_of(last.get("name")) or "?"
        state.message = f"PID {state.selected} ({shown(name)}) has ended"
        state.selected = pids[0] if pids else None
