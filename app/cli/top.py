"""``fanwhy top``: the live answer in a terminal, for people on SSH. The standard library's curses paints what
app.cli.topview lays out; the snapshots come from this machine's own collector (the one ``snapshot`` starts) or
from a running FanWhy (``--server URL``: its ``/api/gpu/metrics`` and every process of ``/api/gpu/processes``, masked
and bounded as the page's). The process rows are every process of the machine (app.attribution.listing), as htop lists.

The terminal is always given back as it was: the screen is restored in a ``finally`` that an exception, Ctrl-C,
SIGTERM and SIGHUP (a closed SSH session) all reach. Signals to processes are sent only after a confirmation, only
to the process the snapshot listed (its start time is checked, so a reused PID is not hit), only to the user's
own processes unless root, never under ``--readonly`` and never to a server's processes.
"""

from __future__ import annotations

import contextlib
import curses
import locale
import os
import signal
import sys
import urllib.parse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from ..attribution.listing import CEILING
from ..core.jsonvalue import number, objects, text
from .topremote import RemoteFeed, first_contact
from .topstate import History, TopState, View, follow_selection, handle
from .topview import ASCII, UNICODE, Glyphs, Line, Style, frame

if TYPE_CHECKING:
    from ..collect.collector import Collector
    from ..collect.settings import Settings

POLL_S = 0.1  # how often keys are read while waiting for the next snapshot
UNANSWERED = 6  # the exit code of a top whose server never gave it a snapshot
FIRST_POLL_S = 0.002  # until the first snapshot is on screen: it is drawn as soon as it is taken, not a poll later


class Feed(Protocol):
    """Where the snapshots come from: the latest view (with a sequence number that grows with each new one) and,
    when something is wrong, why (shown in the title)."""

    def latest(self) -> tuple[int, View | None, str]: ...

    def close(self) -> None: ...


class LocalFeed:
    """This machine's collector, started as ``snapshot`` starts it, collecting every ``interval_s``.

    A screen lists every process of the machine (read once a snapshot); the first snapshot is drawn at once with the
    processes it holds itself (the GPUs' and the busiest), and with every process at the next poll: reading every
    process the first time is most of the wait for a first frame."""

    def __init__(self, collector: Collector, interval_s: float):
        self.collector = collector
        collector.set_interval(interval_s)
        self._listed: tuple[int, View | None] = (0, None)
        self._unlisted = False  # the view on screen is a snapshot's own: every process is still to be listed

    def latest(self) -> tuple[int, View | None, str]:
        frame_ = self.collector.latest()
        if frame_ is None:
            return 0, None, self.collector.hung or ""
        if self._listed[0] != frame_.seq and self._listed[1] is None:  # the first: on screen as soon as taken
            self._listed, self._unlisted = (frame_.seq, frame_.view), True
        elif self._listed[0] != frame_.seq or self._unlisted:
            from ..collect.serialize import process_view

            _, rows = self.collector.attributor.listing.page(frame_.snapshot, "all", "cpu", 0, CEILING)
            self._listed = (frame_.seq, {**frame_.view, "processes": [process_view(p) for p in rows]})
            self._unlisted = False
        return frame_.seq, self._listed[1], self.collector.hung or ""

    def close(self) -> None:
        self.collector.stop(close_backend=True, join_s=1.0)


def glyphs_for_locale() -> Glyphs:
    try:
        locale.setlocale(locale.LC_ALL, "")
    except locale.Error:
        return ASCII
    # the C library's own codeset, which curses writes in (Python's UTF-8 mode would say UTF-8 in a C locale)
    encoding = locale.nl_langinfo(locale.CODESET).lower().replace("-", "").replace("_", "")
    return UNICODE if encoding == "utf8" else ASCII


def send(pid: int, name: str, view: View | None, euid: int | None = None,
         proc_root: str = "/proc") -> str:
    """Send signal ``name`` to ``pid`` if it is still the process the snapshot listed and the user may: what
    happened, in words."""
    from ..attribution.procstat import read_stat, start_time

    euid = os.geteuid() if euid is None else euid
    listed = next((p for p in objects((view or {}).get("processes")) if p.get("pid") == pid), None)
    if listed is None:
        return f"PID {pid} is no longer listed: {name} not sent"
    try:
        owner = os.stat(f"{proc_root}/{pid}").st_uid
        started = start_time(read_stat(proc_root, pid), proc_root)
    except (FileNotFoundError, ProcessLookupError):
        return f"PID {pid} has ended: {name} not sent"
    except OSError as error:
        return f"PID {pid}: {error.strerror or error}: {name} not sent"
    was = number(listed.get("start_time"))
    if was is not None and started is not None and abs(started - was) > 1:
        return f"PID {pid} is another process now: {name} not sent"
    if euid != 0 and owner != euid:
        return f"PID {pid} is {text(listed.get('user')) or f'uid {owner}'}'s: only your own processes (or as root)"
    try:
        os.kill(pid, signal.Signals[name])
    except ProcessLookupError:
        return f"PID {pid} has ended: {name} not sent"
    except PermissionError:
        return f"PID {pid}: not permitted: {name} not sent"
    return f"{name} sent to PID {pid} ({text(listed.get('program')) or text(listed.get('name')) or '?'})"


class _Closed(Exception):
    """SIGTERM or SIGHUP (the SSH session closed): leave through the finally that restores the terminal."""


def _raise_closed(signum: int, _frame: object) -> None:
    raise _Closed(signal.Signals(signum).name)


_COLORS: dict[Style, tuple[int, int]] = {  # (foreground, background) for a style, where colours are used
    "title": (curses.COLOR_BLACK, curses.COLOR_CYAN), "header": (curses.COLOR_CYAN, -1),
    "alert": (curses.COLOR_RED, -1), "warn": (curses.COLOR_YELLOW, -1), "good": (curses.COLOR_GREEN, -1)}
_PLAIN: dict[Style, int] = {"title": curses.A_REVERSE, "header": curses.A_BOLD, "selected": curses.A_REVERSE,
                            "alert": curses.A_BOLD, "warn": curses.A_BOLD, "dim": curses.A_DIM,
                            "good": curses.A_NORMAL, "normal": curses.A_NORMAL}


def _attributes(color: bool) -> dict[Style, int]:
    attrs = dict(_PLAIN)
    if not color:
        return attrs
    curses.start_color()
    curses.use_default_colors()
    for pair, (style, (fg, bg)) in enumerate(_COLORS.items(), start=1):
        curses.init_pair(pair, fg, bg)
        attrs[style] = curses.color_pair(pair) | (curses.A_BOLD if style in ("alert", "title") else 0)
    return attrs


def wants_color(environ: Mapping[str, str] = os.environ) -> bool:
    """Colours unless NO_COLOR is set to anything (no-color.org) or the terminal has none."""
    return not environ.get("NO_COLOR") and curses.has_colors()


def _key(screen: curses.window) -> str | None:
    try:
        key = screen.get_wch()
    except curses.error:
        return None
    if isinstance(key, int):
        return curses.keyname(key).decode(errors="replace")
    return str(key)


def _paint(screen: curses.window, lines: list[Line], attrs: dict[Style, int]) -> None:
    height, width = screen.getmaxyx()
    screen.erase()
    for y, line in enumerate(lines[:height]):
        x = 0
        for words, style in line:
            if x >= width:
                break
            with contextlib.suppress(curses.error):  # the bottom-right cell: the text is there, the cursor cannot be
                screen.addnstr(y, x, words, width - x, attrs.get(style, 0))
            x += len(words)
    screen.refresh()


def run_screen(feed: Feed, state: TopState, glyphs: Glyphs) -> int:
    """The live screen until ``q``, Ctrl-C, SIGTERM or SIGHUP; the terminal restored in every case."""
    previous = {s: signal.signal(s, _raise_closed) for s in (signal.SIGTERM, signal.SIGHUP)}
    for name in ("LINES", "COLUMNS"):  # the size from the terminal itself, so that a resize is seen
        os.environ.pop(name, None)
    screen = curses.initscr()
    try:
        curses.set_escdelay(25)  # Esc alone closes at once (curses waits a second for a sequence by default)
        curses.noecho()
        curses.cbreak()
        screen.keypad(True)
        with contextlib.suppress(curses.error):  # a terminal that cannot hide its cursor
            curses.curs_set(0)
        attrs = _attributes(wants_color())
        return _loop(screen, feed, state, glyphs, attrs)
    except (KeyboardInterrupt, _Closed):
        return 0
    finally:
        screen.keypad(False)
        curses.nocbreak()
        curses.echo()
        curses.endwin()
        for s, handler in previous.items():
            signal.signal(s, handler)
        feed.close()


def _loop(screen: curses.window, feed: Feed, state: TopState, glyphs: Glyphs, attrs: dict[Style, int]) -> int:
    history = History()
    seen, view, dirty, shown = -1, None, True, ""
    while True:
        seq, latest, problem = feed.latest()
        if problem != shown:  # a server that refuses, a collector that hangs: said as soon as known
            shown, dirty = problem, True
        if latest is not None and (seq != seen or latest is not view):  # a new snapshot, or more of the same one
            if seq != seen:
                history.remember(latest)
            seen, view, dirty = seq, latest, True
            follow_selection(state, view, history)
        if dirty:
            height, width = screen.getmaxyx()
            _paint(screen, frame(view, state, history, width, height, glyphs, problem), attrs)
            screen.timeout(int((POLL_S if view is not None else FIRST_POLL_S) * 1000))
            dirty = False
        key = _key(screen)
        if key is None:
            continue
        dirty = True
        if key == "KEY_RESIZE":
            curses.update_lines_cols()
            screen.clear()  # the whole screen again: a terminal keeps what it had where the sizes overlap
            continue
        action = handle(state, key, view or {})
        if action == "quit":
            return 0 if view is not None else UNANSWERED
        if isinstance(action, tuple):
            _, pid, name = action
            state.message = send(pid, name, view)


def main(settings: Settings, server: str | None, interval_s: float, readonly: bool) -> int:
    """``fanwhy top``: 0 when left with q, Ctrl-C or a signal."""
    if not sys.stdout.isatty() or not sys.stdin.isatty():
        print("fanwhy top: needs a terminal (for a pipe: fanwhy snapshot --watch)", file=sys.stderr)
        return 2
    if server and urllib.parse.urlsplit(server).scheme not in ("http", "https"):
        print(f"fanwhy top: --server {server!r}: expected http://HOST:PORT or https://...", file=sys.stderr)
        return 2
    state = TopState(readonly=readonly, can_signal=server is None)
    glyphs = glyphs_for_locale()
    if server:
        token, unanswered = first_contact(server)
        if unanswered:
            print(f"fanwhy top: {unanswered}", file=sys.stderr)
            return UNANSWERED
        feed: Feed = RemoteFeed(server, token, interval_s)
    else:
        from .start import started

        collector = started(settings, watch=True)
        if isinstance(collector, int):
            return collector
        feed = LocalFeed(collector, interval_s)
    return run_screen(feed, state, glyphs)
