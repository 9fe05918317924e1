"""``fanwhy top`` driven as a person drives it: the real program in a pseudo-terminal (pexpect), its screen read by
a terminal emulator (pyte). The first frame, each key, a resize, a terminal too small, a process that ends while
selected, a signal refused for another user's process, --readonly, --server against a real server, NO_COLOR and an
ASCII locale, and the terminal given back after q, SIGTERM, SIGHUP and a crash. Waits are conditions with deadlines
sized for a loaded 2-core machine."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pexpect
import pyte
import pytest

from tests.support.servers import served

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 90.0  # a collector starting on a busy 2-core machine, then a frame
DOWN = "\x1bOB"  # the Down key as the terminal sends it once curses has put it in keypad mode (terminfo kcud1)
LISTED = re.compile(r"^\s+\d+ \S+ ", re.MULTILINE)  # a process row


class Screen(pyte.Screen):
    """pyte's screen with the scrolls it lacks: SU and SD (CSI n S, CSI n T, ECMA-48 8.3.147 and 8.3.113), which
    ncurses sends to move a block of rows (a list that shifts by a row) where the terminal has them."""

    def _at_top(self, move: Callable[[int], None], count: int) -> None:
        y, x = self.cursor.y, self.cursor.x
        self.cursor.y = (self.margins or pyte.screens.Margins(0, self.lines - 1)).top
        move(count or 1)
        self.cursor.y, self.cursor.x = y, x

    def scroll_up(self, count: int = 1, *_: object, **__: object) -> None:
        self._at_top(self.delete_lines, count)

    def scroll_down(self, count: int = 1, *_: object, **__: object) -> None:
        self._at_top(self.insert_lines, count)


class Stream(pyte.ByteStream):
    def __init__(self, screen: pyte.Screen) -> None:
        self.csi = {**pyte.ByteStream.csi, "S": "scroll_up", "T": "scroll_down"}
        super().__init__(screen)


class Tui:
    """A program in a pseudo-terminal of ``rows`` x ``cols`` and the screen a terminal would show."""

    def __init__(self, argv: list[str], rows: int = 24, cols: int = 80, env: dict[str, str] | None = None,
                 prefix: list[str] | None = None, python: str = sys.executable):
        inherited = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "LINES", "COLUMNS")}
        # screen-256color: what tmux and screen users have; unlike xterm's terminfo it has no REP sequence, which
        # the emulator reading the screen (pyte) does not know
        full_env = {**inherited, "TERM": "screen-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
                    "FANWHY_SIM_GPUS": "2", "FANWHY_SIM_PEAK": "0.2", **(env or {})}
        command = [*(prefix or []), python, *argv]
        self.child = pexpect.spawn(command[0], command[1:], dimensions=(rows, cols), env=full_env, cwd=str(ROOT))
        self.screen = Screen(cols, rows)
        self.stream = Stream(self.screen)
        self.raw = b""

    def pump(self) -> None:
        while True:
            try:
                data = self.child.read_nonblocking(65536, timeout=0.05)
            except (pexpect.TIMEOUT, pexpect.EOF):
                return
            self.raw += data
            self.stream.feed(data)

    @property
    def text(self) -> str:
        return "\n".join(self.screen.display)

    def wait(self, predicate: Callable[[str], bool], timeout: float = DEADLINE) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump()
            if predicate(self.text):
                return self.text
            if not self.child.isalive():
                self.pump()
                if predicate(self.text):
                    return self.text
                raise AssertionError(f"ended ({self.child.exitstatus}):\n{self.text}\n{self.raw[-2000:]!r}")
        raise AssertionError(f"not on screen in {timeout:.0f} s:\n{self.text}")

    def press(self, keys: str | bytes) -> None:
        self.child.send(keys)

    def resize(self, rows: int, cols: int) -> None:
        self.screen.resize(rows, cols)
        self.child.setwinsize(rows, cols)

    def end(self, timeout: float = 30.0) -> int:
        deadline = time.monotonic() + timeout
        while self.child.isalive() and time.monotonic() < deadline:
            self.pump()
        self.pump()
        assert not self.child.isalive(), self.text
        self.child.wait() if self.child.exitstatus is None and self.child.signalstatus is None else None
        return self.child.exitstatus if self.child.exitstatus is not None else -(self.child.signalstatus or 0)


def _restored(tui: Tui) -> None:
    """The terminal as it was: the alternate screen left, the cursor shown, echo and line editing back."""
    assert b"\x1b[?1049l" in tui.raw, tui.raw[-400:]
    attrs = termios.tcgetattr(tui.child.child_fd)
    assert attrs[3] & termios.ECHO and attrs[3] & termios.ICANON


@contextmanager
def top(*args: str, rows: int = 24, cols: int = 80, env: dict[str, str] | None = None,
        prefix: list[str] | None = None, python: str = sys.executable) -> Iterator[Tui]:
    tui = Tui(["-m", "app", "top", *args], rows, cols, env, prefix, python)
    try:
        yield tui
    finally:
        if tui.child.isalive():
            tui.child.kill(signal.SIGKILL)
        tui.child.close()


def test_the_first_frame_keys_and_quit() -> None:
    with top("--backend", "simulated", cols=100, rows=30) as tui:
        screen = tui.wait(lambda t: "PID" in t and "HISTORY" in t and "python" in t)
        assert "fanwhy top" in screen and "Simulated" in screen
        tui.press("P")
        tui.wait(lambda t: "CPU▼" in t)
        tui.press("P")
        tui.wait(lambda t: "CPU▲" in t)
        tui.press("h")
        tui.wait(lambda t: "send SIGTERM or SIGKILL" in t)
        tui.press("\x1b")
        tui.wait(lambda t: "HISTORY" in t)
        tui.press("t")
        tui.wait(lambda t: "(tree)" in t)
        tui.press("/")
        tui.press("zz-no-such-program")
        tui.wait(lambda t: "filter: zz-no-such-program_" in t)
        tui.press("\r")
        tui.wait(lambda t: "no process matches the filter" in t)
        tui.press("/")
        tui.press("\x1b")
        tui.wait(lambda t: "python" in t and "filter:" not in t)
        tui.press(DOWN)  # the first process
        tui.press("\r")
        tui.wait(lambda t: "process detail" in t and "command (secrets masked)" in t and "GPU mem" in t)
        tui.press("\r")
        tui.wait(lambda t: "process detail" not in t)
        tui.press("q")
        assert tui.end() == 0
        _restored(tui)


def test_a_resize_and_a_terminal_too_small() -> None:
    with top("--backend", "simulated") as tui:
        tui.wait(lambda t: "HISTORY" in t)
        tui.resize(30, 120)
        screen = tui.wait(lambda t: "HISTORY" in t and any(len(line.rstrip()) > 100 for line in t.splitlines()))
        assert len(screen.splitlines()) == 30
        tui.resize(10, 50)
        tui.wait(lambda t: "terminal too small (50x10)" in t)
        tui.resize(24, 80)
        tui.wait(lambda t: "HISTORY" in t)
        tui.press("q")
        assert tui.end() == 0


def test_a_selected_process_that_is_signalled_ends_and_the_selection_moves_on(tmp_path: Path) -> None:
    """The simulated GPU job is this user's own: T, then y, sends SIGTERM; the next frame says it ended. Its
    launcher lives under this test's own folder, so the filter finds this top's jobs only."""
    mine = tmp_path.name
    with top("--backend", "simulated", "--interval", "0.5", cols=160, rows=30,
             env={"XDG_CACHE_HOME": str(tmp_path)}) as tui:
        tui.wait(lambda t: "HISTORY" in t and LISTED.search(t) is not None)
        tui.press("/")
        tui.press(mine)
        tui.press("\r")
        tui.wait(lambda t: f"filter: {mine}" in t and "no process" not in t)
        tui.press(DOWN)
        tui.press("T")
        tui.wait(lambda t: "send SIGTERM to PID" in t)
        tui.press("y")
        tui.wait(lambda t: "SIGTERM sent to PID" in t)
        tui.wait(lambda t: "has ended" in t)
        tui.press("q")
        assert tui.end() == 0


SYSTEM_PYTHON = "/usr/bin/python3"  # one that nobody may run (this test's interpreter may live under /root)
SITE = next((p for p in sys.path if p.endswith("site-packages")), "")


def _runs_as_nobody() -> bool:
    if os.geteuid() != 0 or shutil.which("setpriv") is None or not os.path.exists(SYSTEM_PYTHON):
        return False
    probe = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", SYSTEM_PYTHON,
                            "-c", "import app.cli.top, psutil"], cwd=ROOT, env={"PYTHONPATH": f"{SITE}:{ROOT}"},
                           capture_output=True, check=False)
    return probe.returncode == 0


@pytest.mark.skipif(not _runs_as_nobody(), reason="needs root, setpriv and a system Python of this version that "
                    "nobody may run (CI runs as root on Debian 12)")
def test_a_signal_to_another_users_process_is_refused(tmp_path: Path) -> None:
    """top runs as nobody; a busy process of root's is listed; T then y is refused by the rule (fails when the
    owner is not checked: the kill would then fail with 'not permitted', a different message)."""
    hog = subprocess.Popen([sys.executable, "-c", "import sys\nwhile True: pass", "fanwhy-test-hog"])
    try:
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
        env = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path), "PYTHONPATH": f"{SITE}:{ROOT}"}
        os.chmod(tmp_path, 0o777)
        with top("--backend", "simulated", cols=120, rows=30, env=env, prefix=prefix, python=SYSTEM_PYTHON) as tui:
            tui.wait(lambda t: "HISTORY" in t)
            tui.press("/fanwhy-test-hog\r")
            tui.wait(lambda t: "fanwhy-test-hog" in t and "no process" not in t.split("filter")[-1])
            tui.press(DOWN)
            tui.press("T")
            tui.wait(lambda t: "send SIGTERM to PID" in t)
            tui.press("y")
            tui.wait(lambda t: "only your own processes" in t)
            assert hog.poll() is None
            tui.press("q")
            assert tui.end() == 0
    finally:
        hog.kill()
        hog.wait()


@contextmanager
def sleeping(*argvs: list[str]) -> Iterator[None]:
    """Processes that sleep (each ``argv``), there to be listed; killed at the end."""
    procs = [subprocess.Popen(argv) for argv in argvs]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def _rows(text: str) -> int:
    """The process rows on the screen (below the column titles)."""
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.lstrip().startswith("PID "))
    return sum(1 for line in lines[head + 1:-1] if LISTED.match(line + "\n"))


def _filled(text: str) -> bool:
    """Process rows from the column titles down to the key line, not one blank between."""
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.lstrip().startswith("PID "))
    return all(LISTED.match(line + "\n") for line in lines[head + 1:-1])


def test_the_screen_is_filled_with_every_process_locally_and_from_a_server() -> None:
    """The snapshot holds five CPU users; a screen of 40 rows lists as many processes as it holds, as htop does."""
    with sleeping(*([sys.executable, "-c", "import time; time.sleep(600)", f"fill-{i}"] for i in range(40))):
        with top("--backend", "simulated", rows=40, cols=160) as tui:
            screen = tui.wait(lambda t: "PID" in t and "fill-" in t and _filled(t))
            assert _rows(screen) > 5 + 2  # more than the snapshot's 5 CPU users and its 2 GPU users
            tui.press("q")
            assert tui.end() == 0
        token = "b7e1c0d2a9f84e3c8d6b5a4f3e2d1c0b"
        with served(FANWHY_TOKEN=token) as url, \
                top("--server", url, rows=40, cols=160, env={"FANWHY_TOKEN": token}) as tui:
            screen = tui.wait(lambda t: "PID" in t and "fill-" in t and _filled(t))
            assert _rows(screen) > 5 + 1  # more than the snapshot's 5 CPU users and its GPU user
            tui.press("q")
            assert tui.end() == 0


def test_without_a_gpu_the_cpu_side_and_names_shown_escaped_in_their_cells(tmp_path: Path) -> None:
    """The basic backend on this machine (no GPU): CPU, memory and load on screen; a program named with a
    right-to-left override shown escaped, a CJK command line cut at the screen's edge in cells."""
    scripts = [tmp_path / "invoice\u202efdp.py", tmp_path / ("训练模型" * 8 + ".py")]
    for script in scripts:
        script.write_text("import time\ntime.sleep(600)\n")
    with sleeping(*([sys.executable, str(script)] for script in scripts)), top("--backend", "basic", cols=120) as tui:
        screen = tui.wait(lambda t: "PID" in t and "load" in t and "fdp.py" in t and "训练" in t)
        assert re.search(r"CPU \d+ % of \d+ cores.*load [\d.]+ [\d.]+ [\d.]+, memory", screen), screen
        assert "\u202e" not in tui.raw.decode(errors="replace") and "python invoice\\u202efdp.py" in screen
        lines = screen.splitlines()
        head = next(i for i, line in enumerate(lines) if line.lstrip().startswith("PID "))
        rows = [line for line in lines[head + 1:-1] if line.strip()]
        assert all(LISTED.match(line + "\n") for line in rows), screen  # nothing spilled onto the next row
        wide = next(y for y, line in enumerate(tui.screen.display) if "训练" in line)
        used = [x for x, cell in tui.screen.buffer[wide].items() if cell.data.strip()]
        assert max(used) == 119 and tui.screen.buffer[wide][119].data == "…"  # cut at the edge, in cells
        tui.press("q")
        assert tui.end() == 0


def test_read_only_sends_nothing() -> None:
    with top("--backend", "simulated", "--readonly", cols=100) as tui:
        tui.wait(lambda t: "HISTORY" in t and LISTED.search(t) is not None)
        tui.press(DOWN)
        tui.press("k")
        tui.wait(lambda t: "read-only (--readonly): no signal is sent" in t)
        tui.press("q")
        assert tui.end() == 0


def test_following_a_real_server_with_its_token() -> None:
    token = "a3f9c2d17be04e5f8a6b9c0d1e2f3a4b"
    with served(FANWHY_TOKEN=token) as url:
        with top("--server", url, env={"FANWHY_TOKEN": token}, cols=100) as tui:
            screen = tui.wait(lambda t: "HISTORY" in t and "PID" in t)
            assert "Simulated" in screen
            tui.press(DOWN)
            tui.press("T")
            tui.wait(lambda t: "following a server" in t)
            tui.press("q")
            assert tui.end() == 0
        with top("--server", url, env={"FANWHY_TOKEN": "0" * 8 + "wrong-token-value-x"}) as tui:
            said = tui.wait(lambda t: "the token was refused" in t)
            assert tui.end() == 6 and "(empty for none)" not in said


def test_no_server_there_is_said_at_once_with_its_cause_before_any_token_is_asked() -> None:
    from tests.support.servers import free_port

    url = f"http://127.0.0.1:{free_port()}"
    with top("--server", url, env={"FANWHY_TOKEN": ""}) as tui:
        said = tui.wait(lambda t: "is FanWhy running there?" in t)
        assert tui.end() == 6
        assert "token for" not in said and "Errno 111" in said


def test_no_color_and_an_ascii_locale() -> None:
    with top("--backend", "simulated", env={"NO_COLOR": "1", "LANG": "C", "LC_ALL": "C"}, cols=100) as tui:
        tui.wait(lambda t: "HISTORY" in t and "python" in t)
        tui.press("P")
        screen = tui.wait(lambda t: "CPUv" in t)
        assert screen.isascii()
        tui.press("q")
        assert tui.end() == 0
        styles = re.findall(rb"\x1b\[([0-9;]*)m", tui.raw)
        colours = [s for s in styles for n in s.split(b";") if n and (30 <= int(n) <= 38 or 90 <= int(n) <= 97)]
        assert styles and not colours, colours  # bold and reverse, but no foreground colour


@pytest.mark.parametrize("how", ["SIGTERM", "SIGHUP"])
def test_the_terminal_is_given_back_on_a_signal(how: str) -> None:
    with top("--backend", "simulated") as tui:
        tui.wait(lambda t: "HISTORY" in t)
        tui.child.kill(getattr(signal, how))
        assert tui.end() == 0
        _restored(tui)


def test_the_terminal_is_given_back_after_a_crash() -> None:
    """A fault inside the drawing (a frame that raises) still leaves the terminal as it was, and says why."""
    script = ("import sys, app.cli.topview as v, app.cli.main as m\n"
              "real = v.frame\n"
              "calls = []\n"
              "def broken(*a, **k):\n"
              "    calls.append(1)\n"
              "    if len(calls) > 3: raise RuntimeError('a drawing fault')\n"
              "    return real(*a, **k)\n"
              "v.frame = broken\n"
              "import app.cli.top as t; t.frame = broken\n"
              "sys.exit(m.main(['top', '--backend', 'simulated']))\n")
    tui = Tui(["-c", script])
    try:
        tui.wait(lambda t: "a drawing fault" in t)
        assert tui.end() != 0
        _restored(tui)
    finally:
        if tui.child.isalive():
            tui.child.kill(signal.SIGKILL)
