"""``fanwhy top``'s layout and keys without a terminal (app.cli.topview): every key's effect on the state, the
sort, the filter, the tree, the selection that follows an ended process, the detail, the too-small terminal, ASCII
and Unicode, and untrusted names kept as text. tests/system/test_top.py drives the real program in a pseudo-terminal."""

from __future__ import annotations

from typing import Any, cast

import pytest

from app.cli.topstate import History, TopState, follow_selection, handle, shown_processes
from app.cli.topview import ASCII, MIN_HEIGHT, MIN_WIDTH, UNICODE, frame, spark

GIB = 1 << 30


def proc(pid: int, program: str, ppid: int | None = None, gmem: float = 0, sm: float = 0, cpu: float = 0,
         user: str = "alice", **kw: Any) -> dict[str, Any]:
    return {"pid": pid, "ppid": ppid, "program": program, "name": program, "command": f"{program} --run", "user": user,
            "gpu_memory_bytes": int(gmem * GIB) or None, "sm_percent": sm, "cpu_percent": cpu,
            "rss_bytes": GIB, "power_w": None, "energy_wh": 0.5, "gpus": [{"gpu_index": 0}] if gmem else [],
            "start_time": 100.0 + pid, "container": kw.get("container")}


def view(*processes: dict[str, Any], headline: str = "GPU 0 is busy: `train` draws 300 W.") -> dict[str, Any]:
    return {"timestamp": 1_700_000_000, "host": {"hostname": "box"}, "backend": {"name": "t"},
            "gpus": [{"index": 0, "name": "H100", "utilization_percent": 90, "memory_used_bytes": 40 * GIB,
                      "memory_total_bytes": 80 * GIB, "temperature_c": 71, "temperature_slowdown_c": 87,
                      "power_w": 300, "power_limit_w": 700, "fan_speed_percent": None, "passively_cooled": True}],
            "processes": list(processes), "fans": [], "alerts": [],
            "verdict": {"headline": headline, "busy": True,
                        "causes": [{"kind": "fan", "summary": "GPU 0's fans run at 65 %, following the GPU."}]}}


def text(lines: list) -> str:
    return "\n".join("".join(t for t, _ in line) for line in lines)


V = view(proc(10, "train", gmem=30, sm=80, cpu=100), proc(11, "loader", ppid=10, cpu=300),
         proc(20, "serve", gmem=8, sm=5, cpu=2, user="bob"))


def test_the_first_frame_has_the_verdict_the_fan_chain_the_gpus_and_the_processes() -> None:
    history = History()
    history.remember(V)
    screen = text(frame(V, TopState(), history, 80, 24, UNICODE))
    assert "fanwhy top  box" in screen and "GPU 0 is busy: train draws 300 W." in screen
    assert "Fans: GPU 0's fans run at 65 %" in screen
    assert "H100" in screen and "90 %" in screen and "40.0/80 GiB" in screen and "passive" in screen
    assert "PID" in screen and "train --run" in screen and "bob" in screen
    lines = frame(V, TopState(), history, 80, 24, UNICODE)
    assert len(lines) == 24 and all(len("".join(t for t, _ in line)) <= 80 for line in lines)


@pytest.mark.parametrize(("key", "order"), [("G", [10, 20, 11]), ("P", [11, 10, 20]), ("S", [10, 20, 11]),
                                            ("N", [10, 11, 20]), ("U", [10, 11, 20]), ("C", [11, 20, 10])])
def test_one_key_per_sort_column_and_again_turns_it_around(key: str, order: list[int]) -> None:
    """Amounts the largest first, PIDs, users and commands A to Z; the same key again, the other way."""
    state = TopState(sort="W")
    handle(state, key, V)
    assert [p["pid"] for p, _ in shown_processes(V, state)] == order
    handle(state, key, V)
    assert state.reverse and next(p["pid"] for p, _ in shown_processes(V, state)) == order[-1]


def test_the_sorted_column_is_marked_in_unicode_and_in_ascii() -> None:
    state = TopState()
    handle(state, "P", V)
    assert "CPU▼" in text(frame(V, state, History(), 100, 30, UNICODE))
    handle(state, "P", V)
    assert "CPUv" not in text(frame(V, state, History(), 100, 30, ASCII))
    assert "CPU^" in text(frame(V, state, History(), 100, 30, ASCII))


def test_the_filter_is_typed_applied_and_cleared() -> None:
    state = TopState()
    for key in ("/", "b", "o", "b"):
        handle(state, key, V)
    assert "filter: bob_" in text(frame(V, state, History(), 80, 24, UNICODE))
    handle(state, "\n", V)
    assert [p["pid"] for p, _ in shown_processes(V, state)] == [20]
    handle(state, "/", V)
    handle(state, "\x1b", V)
    assert state.filter == "" and len(shown_processes(V, state)) == 3


def test_escape_clears_an_applied_filter_once_nothing_else_is_open() -> None:
    state = TopState(filter="bob")
    handle(state, "h", V)
    handle(state, "\x1b", V)  # the first Esc closes the help
    assert state.filter == "bob" and not state.help
    handle(state, "\x1b", V)  # the next clears the filter
    assert state.filter == "" and len(shown_processes(V, state)) == 3


def test_the_first_row_is_selected_from_the_start_and_enter_opens_it() -> None:
    state = TopState(sort="N")
    follow_selection(state, V, History())
    assert state.selected == 10 and state.message == ""  # no key pressed yet: the first row
    handle(state, "\n", V)
    assert state.detail


def test_the_tree_puts_children_under_their_parents() -> None:
    state = TopState(sort="N")
    handle(state, "t", V)
    assert [(p["pid"], depth) for p, depth in shown_processes(V, state)] == [(10, 0), (11, 1), (20, 0)]
    screen = text(frame(V, state, History(), 100, 30, UNICODE))
    assert "└─loader --run" in screen
    looped = view(proc(1, "a", ppid=2), proc(2, "b", ppid=1))  # a cycle (a PID reused) never loops the tree
    assert len(shown_processes(looped, TopState(tree=True))) == 2


def test_the_selection_moves_and_follows_an_ended_process() -> None:
    state = TopState(sort="N")
    handle(state, "KEY_DOWN", V)
    assert state.selected == 10
    handle(state, "KEY_END", V)
    assert state.selected == 20
    history = History()
    history.remember(V)
    later = view(proc(10, "train", gmem=30), proc(11, "loader", ppid=10))
    history.remember(later)
    follow_selection(state, later, history)
    assert state.selected == 10 and "PID 20 (serve) has ended" in state.message


def test_the_detail_of_a_process_has_its_history_energy_and_masked_command() -> None:
    history = History()
    for sm in (10, 50, 90):
        v = view(proc(10, "train", gmem=30, sm=sm))
        history.remember(v)
    state = TopState(selected=10)
    handle(state, "\n", v)
    screen = text(frame(v, state, history, 80, 24, UNICODE))
    assert "PID 10  train" in screen and "energy so far 0.50 Wh" in screen and "command (secrets masked)" in screen
    assert spark([10, 50, 90], 3, UNICODE) in screen


def test_signals_ask_first_and_are_refused_read_only_or_on_a_server() -> None:
    state = TopState(selected=20)
    handle(state, "T", V)
    assert state.confirm == (20, "SIGTERM")
    assert handle(state, "y", V) == ("signal", 20, "SIGTERM")
    handle(state, "k", V)
    assert handle(state, "n", V) is None and "not sent" in state.message
    ro = TopState(selected=20, readonly=True)
    assert handle(ro, "k", V) is None and ro.confirm is None and "read-only" in ro.message
    remote = TopState(selected=20, can_signal=False)
    handle(remote, "T", V)
    assert remote.confirm is None and "server" in remote.message


def test_help_quit_and_escape() -> None:
    state = TopState()
    handle(state, "h", V)
    assert "send SIGTERM or SIGKILL" in text(frame(V, state, History(), 80, 24, UNICODE))
    handle(state, "\x1b", V)
    assert not state.help
    assert handle(state, "q", V) == "quit"


def test_a_terminal_too_small_says_so_and_80x24_fits() -> None:
    small = text(frame(V, TopState(), History(), MIN_WIDTH - 1, 20, UNICODE))
    assert "terminal too small" in small and f"{MIN_WIDTH}x{MIN_HEIGHT}" in small
    assert "terminal too small" in text(frame(V, TopState(), History(), 80, MIN_HEIGHT - 1, UNICODE))
    assert "terminal too small" not in text(frame(V, TopState(), History(), 80, 24, UNICODE))


def test_untrusted_names_are_text() -> None:
    evil = view(proc(66, "x\x1b[2J\x1b]0;owned\x07", gmem=1, user="mallory\x1b[31m"))
    screen = text(frame(evil, TopState(), History(), 100, 30, UNICODE))
    assert "\x1b" not in screen and "\x07" not in screen


def test_ascii_glyphs_have_no_unicode() -> None:
    history = History()
    for util in (0, 50, 100):
        v = view(proc(10, "train", gmem=1))
        v["gpus"][0]["utilization_percent"] = util
        history.remember(v)
    screen = text(frame(v, TopState(tree=True), history, 100, 30, ASCII))
    assert screen.isascii(), [c for c in screen if not c.isascii()]


def test_until_the_first_snapshot_keys_are_waited_for_briefly_so_that_it_is_drawn_when_taken() -> None:
    """The screen reads keys with a wait; before the first snapshot that wait is short, so a snapshot taken
    meanwhile is drawn at once, not a whole poll (0.1 s) later; then the usual poll. Fails when the first wait is
    the usual one."""
    import curses

    from app.cli import top

    class Screen:  # the calls of a curses window that the loop makes; records each wait for keys
        def __init__(self) -> None:
            self.waits_ms: list[int] = []
            self.reads = 0

        def getmaxyx(self) -> tuple[int, int]:
            return 40, 120

        def erase(self) -> None: ...

        def addnstr(self, *args: object) -> None: ...

        def refresh(self) -> None: ...

        def timeout(self, ms: int) -> None:
            self.waits_ms.append(ms)

        def get_wch(self) -> str:
            self.reads += 1
            if self.reads == 3:
                return "q"
            raise curses.error("no input")

    class Feed:
        def __init__(self) -> None:
            self.asked = 0

        def latest(self) -> tuple[int, dict[str, Any] | None, str]:
            self.asked += 1
            return (0, None, "") if self.asked == 1 else (1, V, "")

        def close(self) -> None: ...

    screen = Screen()
    assert top._loop(cast(Any, screen), Feed(), TopState(), UNICODE, {}) == 0  # a stand-in for a curses window
    assert screen.waits_ms == [int(top.FIRST_POLL_S * 1000), int(top.POLL_S * 1000)] and screen.waits_ms[0] <= 20


def cells_of(lines: list) -> list[int]:
    from app.core.cells import width

    return [width("".join(t for t, _ in line)) for line in lines]


def test_every_screen_fits_80_columns_help_filter_and_detail_with_the_whole_command_wrapped() -> None:
    long = "python -m torch.distributed.run --nproc_per_node 8 train.py " + " ".join(f"--o{i}=v{i}" for i in range(40))
    v = view(proc(10, "train", gmem=30, sm=80, cpu=100), proc(20, "serve", gmem=8, user="bob"))
    v["processes"][0]["command"] = long
    history = History()
    history.remember(v)
    help_screen = frame(v, TopState(help=True), history, 80, 24, UNICODE)
    assert max(cells_of(help_screen)) <= 80 and "…" not in text(help_screen)  # wrapped, never cut
    said = " ".join(text(help_screen).split())
    assert "send SIGTERM or SIGKILL" in said and "--readonly or --server" in said
    filtered = frame(v, TopState(filter="train", tree=True), history, 80, 24, UNICODE)
    assert max(cells_of(filtered)) <= 80 and "(filter: train, Esc clears)  (tree)" in text(filtered)
    state = TopState(selected=10)
    handle(state, "\n", v)
    detail = frame(v, state, history, 80, 24, UNICODE)
    assert max(cells_of(detail)) <= 80 and len(detail) == 24
    body = "".join("".join(t for t, _ in line).strip() for line in detail)
    assert long.replace(" ", "") in body.replace(" ", "")  # the whole command, over as many lines as it takes
    assert "GPU mem" in text(detail) and "SM %" in text(detail)


def test_without_a_gpu_the_cpu_memory_and_load_are_shown() -> None:
    v = view(proc(30, "make", cpu=190))
    v["gpus"] = []
    v["backend"] = {"name": "none", "no_gpu_summary": "No GPU found: no driver."}
    v["host"] = {"hostname": "box", "cpu_percent": 47.5, "cpu_count": 2, "cpu_temperature_c": 71.0,
                 "load_average": [1.9, 1.2, 0.7], "memory_used_bytes": 3 * GIB, "memory_total_bytes": 8 * GIB}
    screen = text(frame(v, TopState(), History(), 80, 24, UNICODE))
    assert "CPU 48 % of 2 cores at 71 °C, load 1.90 1.20 0.70, memory 3.0/8 GiB" in screen
    assert "No GPU found: no driver." in screen and "make" in screen


def test_wide_and_bidirectional_names_take_their_cells_and_are_shown_escaped() -> None:
    wide = proc(40, "训练", cpu=50)
    wide["command"] = "python 训练模型_" + "长" * 60 + ".py"
    evil = proc(41, "invoice\u202efdp.exe", cpu=40, user="eve\u202e")
    evil["command"] = "invoice\u202efdp.exe --run"
    lines = frame(view(wide, evil), TopState(), History(), 80, 24, UNICODE)
    assert max(cells_of(lines)) <= 80
    screen = text(lines)
    assert "\u202e" not in screen and "invoice\\u202e" in screen and "eve\\u202e" in screen
    row = next(line for line in screen.splitlines() if line.startswith("     40 "))
    assert row.rstrip().endswith("…")


def test_the_first_snapshot_is_drawn_with_its_own_processes_and_every_process_a_poll_later() -> None:
    """A local top draws its first snapshot as soon as it is taken, with the processes the snapshot holds; every
    process of the machine comes at the next poll (the same snapshot, listed), and once a snapshot after that."""
    from types import SimpleNamespace

    from app.cli.top import LocalFeed
    from app.collect.frames import Frame
    from tests.support.builders import gpu, snap
    from tests.support.builders import proc as sample

    shot = snap([gpu(0, util=90)], [sample(10, "python train.py", sm=90)])
    everyone = [sample(10, "python train.py", sm=90), sample(20, "sshd", gpu_index=None)]
    listed: list[int] = []

    def page(snapshot: object, kind: str, sort: str, offset: int, limit: int) -> tuple[int, list[Any]]:
        listed.append(1)
        return len(everyone), everyone

    frames = [Frame(seq=1, snapshot=shot, monotonic=0.0)]
    collector = SimpleNamespace(latest=lambda: frames[-1], hung=None, set_interval=lambda s: None,
                                attributor=SimpleNamespace(listing=SimpleNamespace(page=page)))
    feed = LocalFeed(cast(Any, collector), 1.0)

    def pids(v: Any) -> list[int]:
        return [p["pid"] for p in v["processes"]]

    seq, first, _ = feed.latest()
    assert seq == 1 and first is not None and pids(first) == [10] and not listed
    seq, second, _ = feed.latest()
    assert seq == 1 and second is not first and pids(second) == [10, 20]
    assert feed.latest()[1] is second and len(listed) == 1  # listed once a snapshot
    frames.append(Frame(seq=2, snapshot=shot, monotonic=1.0))
    seq, third, _ = feed.latest()
    assert seq == 2 and pids(third) == [10, 20] and len(listed) == 2


def test_more_of_the_same_snapshot_is_drawn_without_a_second_history_point(monkeypatch: pytest.MonkeyPatch) -> None:
    import curses

    from app.cli import top

    painted: list[str] = []

    class Screen:
        reads = 0

        def getmaxyx(self) -> tuple[int, int]:
            return 40, 120

        def erase(self) -> None: ...

        def addnstr(self, y: int, x: int, text: str, *rest: object) -> None:
            painted.append(text)

        def refresh(self) -> None: ...

        def timeout(self, ms: int) -> None: ...

        def get_wch(self) -> str:
            self.reads += 1
            if self.reads == 3:
                return "q"
            raise curses.error("no input")

    partial, whole = view(proc(10, "train", gmem=30, sm=80)), V

    class Feed:
        asked = 0

        def latest(self) -> tuple[int, dict[str, Any] | None, str]:
            self.asked += 1
            return (1, partial, "") if self.asked == 1 else (1, whole, "")

        def close(self) -> None: ...

    remembered: list[object] = []
    real = History.remember

    def remember(self: History, v: Any) -> None:
        remembered.append(v)
        real(self, v)

    monkeypatch.setattr(History, "remember", remember)  # counted, then done as ever
    assert top._loop(cast(Any, Screen()), Feed(), TopState(), UNICODE, {}) == 0
    assert any("loader" in t for t in painted)  # the listed view reached the screen
    assert remembered == [partial]  # one snapshot, one history point
