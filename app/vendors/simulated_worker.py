"""A real process that burns CPU in a slow wave, standing in for a GPU job in demos and tests.

It exits by itself when its parent goes away. Run as
``python -m app.vendors.simulated_worker --job NAME --period S --peak F [--api-key=demo]``
(the fake secret on the command line shows the redaction in the page).
"""

from __future__ import annotations

import argparse
import math
import os
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--job", default="demo")
    parser.add_argument("--period", type=float, default=60.0)
    parser.add_argument("--phase", type=float, default=0.0)
    parser.add_argument("--peak", type=float, default=0.5, help="peak share of one core, 0-1")
    parser.add_argument("--api-key", default="")
    args = parser.parse_args()
    parent = os.getppid()
    spins = 0
    while os.getppid() == parent:
        now = time.time()
        duty = args.peak * (0.5 + 0.5 * math.sin(2 * math.pi * (now / args.period + args.phase)))
        busy_until = now + 0.1 * duty
        while time.time() < busy_until:
            spins += 1
        time.sleep(max(0.0, 0.1 * (1.0 - duty)))


if __name__ == "__main__":
    main()
