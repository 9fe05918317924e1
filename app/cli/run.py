"""``fanwhy run -- COMMAND ARGS``: run a command as a child, watch what it and its children do on every GPU and on
the CPU, and print its receipt when it exits, like ``time``.

The collector runs here, in this process, every ``--interval`` seconds (no server, no history); each snapshot feeds a
``ReceiptMeter`` that counts the child's process tree (read again at every tick, so children that come and go are
counted while they live); its CPU time is the kernel's account of the child and the descendants it waited for
(``wait4``). The receipt goes to standard error (the command's own output stays clean); ``--json``
prints it as JSON there. The exit code is the command's (128 + N when a signal N ended it).

Signals behave as under ``time``, and more: SIGTERM, SIGHUP and SIGINT sent to this process are passed to the
command (a CI runner's SIGTERM must not leave the job running), and this process waits for it and still prints the
receipt, whatever ended it. Ctrl-C at a terminal already reaches the command (it is in the terminal's foreground
group), so it is not sent twice. The command in the receipt is masked like any command line FanWhy shows
(``app.core.redact``) and bounded: a receipt usually ends up in a CI log.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from types import FrameType
from typing import Any, TextIO

import psutil

from ..collect.collector import Collector
from ..collect.settings import Settings
from ..core.cells import shown
from ..core.redact import MAX_COMMAND_CHARS, Redactor
from ..verdict.receipt import ReceiptMeter, words


def tree(pid: int) -> set[int]:
    """``pid`` and its living descendants."""
    try:
        root = psutil.Process(pid)
        return {pid, *(child.pid for child in root.children(recursive=True))}
    except psutil.Error:
        return {pid}


def run_command(argv: Sequence[str], collector: Collector, as_json: bool = False, out: TextIO = sys.stderr,
                on_start: Callable[[int], None] | None = None, redactor: Redactor | None = None) -> int:
    """Run ``argv`` under ``collector`` (started here, stopped before returning); its exit code. The receipt shows
    the command as ``redactor`` masks it (FANWHY_MASK_PATTERNS, FANWHY_NAMES_ONLY: the program's name only)."""
    if not argv:
        print("fanwhy run: name a command: fanwhy run -- python train.py", file=out)
        return 2
    # The handlers come first: a signal that arrives while the command starts is held and passed on once it has
    # a PID (installed after the start, a SIGHUP in between would end this process and leave the command running).
    forward = Forward()
    previous = {signum: signal.signal(signum, forward) for signum in FORWARDED}
    try:
        child = subprocess.Popen(list(argv))
    except OSError as error:
        _restore(previous)
        print(f"fanwhy run: {shown(argv[0])}: {shown(error.strerror or error)}", file=out)
        return 127
    forward.started(child.pid)
    if on_start is not None:
        on_start(child.pid)
    meter = ReceiptMeter(pids=lambda: tree(child.pid))
    collector.start()
    seq = 0
    try:
        while True:
            # wait4, not Popen.wait: the kernel's CPU account of this child alone (the collector's own children, a
            # simulated backend's workers or ipmitool, are not the command's)
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                child.returncode = os.waitstatus_to_exitcode(status)
                break
            frame = collector.wait_frame(seq, 0.2)  # short: the receipt follows the command's exit at once
            if frame is not None and frame.seq != seq:
                seq = frame.seq
                meter.add(frame.snapshot)
        frame = collector.collect()  # one last look, at the end
        if frame is not None:
            meter.add(frame.snapshot)
    finally:
        _restore(previous)
        collector.stop(join_s=2.0)
    code = child.returncode if child.returncode >= 0 else 128 - child.returncode
    receipt = {**meter.result(), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
               "cpu_user_seconds": round(usage.ru_utime, 2), "cpu_system_seconds": round(usage.ru_stime, 2)}
    redactor = redactor or Redactor()
    program = os.path.basename(redactor.argv(argv[:1])[0])
    line = shown(redactor.command(argv, MAX_COMMAND_CHARS) or program)
    if as_json:  # the words masked and each bounded, and the line as the text receipt shows it
        masked = [shown(word) for word in redactor.words(argv) or [program]]
        out.write(json.dumps({"command": masked, "command_line": line, "exit_code": code, **receipt}) + "\n")
    else:
        out.write(words(receipt, line, code))
    out.flush()
    return code


FORWARDED = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


class Forward:
    """The handler of the forwarded signals: each is passed on to the command, unless the terminal sent it to the
    command's process group already (Ctrl-C at a terminal reaches the whole foreground group). One that comes
    before the command has a PID is held until ``started``."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.held: list[int] = []

    def started(self, pid: int) -> None:
        self.pid = pid  # a signal from here on is passed on at once; the held ones follow
        while self.held:  # the command did not exist when they came: a terminal's Ctrl-C did not reach it either
            self._send(self.held.pop(0))

    def __call__(self, signum: int, _frame: FrameType | None) -> None:
        if self.pid is None:
            self.held.append(signum)
        elif not (signum == signal.SIGINT and _terminal_sent_it_to(self.pid)):
            self._send(signum)

    def _send(self, signum: int) -> None:
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)


def _restore(handlers: Mapping[signal.Signals, Callable[[int, FrameType | None], Any] | int | None]) -> None:
    """Put back the handlers ``signal.signal`` returned (None: one not set from Python, put back as the default)."""
    for signum, handler in handlers.items():
        signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def _terminal_sent_it_to(pid: int) -> bool:
    """Whether ``pid`` is in the foreground group of the terminal on any standard stream (its Ctrl-C reached it)."""
    for fd in (0, 1, 2):
        try:
            return os.tcgetpgrp(fd) == os.getpgid(pid)
        except OSError:  # not a terminal (a CI job, a pipe), or the child is gone
            continue
    return False


def run(settings: Settings, argv: Sequence[str], as_json: bool) -> int:
    """The ``run`` command: its own collector from ``settings`` (no history), then ``run_command``."""
    from dataclasses import replace

    from ..collect.assemble import build_collector

    collector = build_collector(replace(settings, db="none"))
    return run_command(argv, collector, as_json, redactor=Redactor(settings.mask_patterns, settings.names_only))
