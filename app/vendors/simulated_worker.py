"""A real process that burns CPU in a slow wave, standing in for a GPU job in demos and tests.

It ends with its parent, however the parent ends (``kill -9`` included), by two means: its standard input is a pipe
from the parent that reads end-of-file once the parent is gone, and it watches its parent PID. Not by the kernel's
PR_SET_PDEATHSIG: that signal comes when the *thread* that started the worker ends, and the backend may be opened on
a thread that ends long before the process does (a one-shot answer's workers were killed so, and its GPUs read idle).
Run as ``python -m app.vendors.simulated_worker --job NAME --period S --peak F [--api-key=demo]``, or through a
launcher the simulated backend writes so that its command line is the job's (``python train.py``, ``vllm serve
MODEL``); the fake secret on the command line shows the redaction in the page. It says "running" on its standard
output once its loop begins.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import select
import sys
import time


def _parent_gone(wait_s: float) -> bool:
    """Sleep up to ``wait_s``; True as soon as the parent's end of the stdin pipe is closed."""
    try:
        readable, _, _ = select.select([sys.stdin], [], [], wait_s)
    except (OSError, ValueError):
        time.sleep(wait_s)
        return False
    return bool(readable) and os.read(sys.stdin.fileno(), 1) == b""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--job", default="demo")
    parser.add_argument("--period", type=float, default=60.0)
    parser.add_argument("--phase", type=float, default=0.0)
    parser.add_argument("--peak", type=float, default=0.5, help="peak share of one core, 0-1")
    parser.add_argument("--api-key", default="")
    args, _job_words = parser.parse_known_args()  # the job's own words (`serve MODEL`) make its command line real
    parent = os.getppid()
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.write("running\n")  # the backend waits for this word before it measures the load
        sys.stdout.flush()
    spins = 0
    while os.getppid() == parent:
        now = time.time()
        duty = args.peak * (0.5 + 0.5 * math.sin(2 * math.pi * (now / args.period + args.phase)))
        busy_until = now + 0.1 * duty
        while time.time() < busy_until:
            spins += 1
        if _parent_gone(max(0.0, 0.1 * (1.0 - duty))):
            break


if __name__ == "__main__":
    main()
