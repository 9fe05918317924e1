"""``fanwhy run -- COMMAND ARGS``: run a command as a child, watch what it and its children do on every GPU and on
the CPU, and print its receipt when it exits, like ``time``.

The collector runs here, in this process, every ``--interval`` seconds (no server, no history); each snapshot feeds a
``ReceiptMeter`` that counts the child's process tree (read again at every tick, so children that come and go are
counted while they live); its CPU time is the kernel's account of the child and the descendants it waited for
(``wait4``). The receipt goes to standard error (the command's own output stays clean); ``--json``
prints it as JSON there. The exit code is the command's (128 + N when a signal N ended it). Ctrl-C goes to the
command, as it shares the terminal; this process waits for it and still prints the receipt.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

import psutil

from ..collect.config import Settings
from ..collect.monitor import Monitor
from ..verdict.receipt import ReceiptMeter, words


def tree(pid: int) -> set[int]:
    """``pid`` and its living descendants."""
    try:
        root = psutil.Process(pid)
        return {pid, *(child.pid for child in root.children(recursive=True))}
    except psutil.Error:
        return {pid}


def run_command(argv: Sequence[str], monitor: Monitor, as_json: bool = False, out: TextIO = sys.stderr,
                on_start: Callable[[int], None] | None = None) -> int:
    """Run ``argv`` under ``monitor`` (started here, stopped before returning); its exit code."""
    if not argv:
        print("fanwhy run: name a command: fanwhy run -- python train.py", file=out)
        return 2
    try:
        child = subprocess.Popen(list(argv))
    except OSError as error:
        print(f"fanwhy run: {argv[0]}: {error.strerror or error}", file=out)
        return 127
    if on_start is not None:
        on_start(child.pid)
    meter = ReceiptMeter(pids=lambda: tree(child.pid))
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the command's to handle, as under time
    monitor.start()
    seq = 0
    try:
        while True:
            # wait4, not Popen.wait: the kernel's CPU account of this child alone (the collector's own children, a
            # simulated backend's workers or ipmitool, are not the command's)
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                child.returncode = os.waitstatus_to_exitcode(status)
                break
            frame = monitor.wait_frame(seq, 0.2)  # short: the receipt follows the command's exit at once
            if frame is not None and frame.seq != seq:
                seq = frame.seq
                meter.add(frame.snapshot)
        frame = monitor.collect()  # one last look, at the end
        if frame is not None:
            meter.add(frame.snapshot)
    finally:
        signal.signal(signal.SIGINT, previous)
        monitor.stop(join_s=2.0)
    code = child.returncode if child.returncode >= 0 else 128 - child.returncode
    receipt = {**meter.result(), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
               "cpu_user_seconds": round(usage.ru_utime, 2), "cpu_system_seconds": round(usage.ru_stime, 2)}
    if as_json:
        out.write(json.dumps({"command": list(argv), "exit_code": code, **receipt}) + "\n")
    else:
        out.write(words(receipt, shlex.join(argv), code))
    out.flush()
    return code


def run(settings: Settings, argv: Sequence[str], as_json: bool) -> int:
    """The ``run`` command: its own collector from ``settings`` (no history), then ``run_command``."""
    from dataclasses import replace

    from ..collect.engine import build_monitor

    monitor = build_monitor(replace(settings, db="none"))
    return run_command(argv, monitor, as_json)
