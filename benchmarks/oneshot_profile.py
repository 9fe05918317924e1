"""A one-shot answer under cProfile, beside a CUDA load: where its one tick's attribution spends its time.

Run on a GPU machine: ``python -m benchmarks.oneshot_profile``. Prints the functions of app/ and the standard
library that the tick's attribution called, by cumulative time.
"""

from __future__ import annotations

import contextlib
import cProfile
import io
import os
import pstats
import sys
from pathlib import Path
from typing import Any

from benchmarks.peers import start_loads

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    (load,) = start_loads(1, 120, 1)
    os.environ["FANWHY_DB"] = "none"
    from app.attribution.attributor import Attributor
    from app.cli.main import main as fanwhy

    profile = cProfile.Profile()
    inner = Attributor.attribute

    def attribute(self: Attributor, *args: Any) -> Any:
        profile.enable()
        try:
            return inner(self, *args)
        finally:
            profile.disable()

    setattr(Attributor, "attribute", attribute)  # noqa: B010  # profiled
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            fanwhy(["snapshot", "--json"])
    finally:
        load.kill()
        load.wait()
    pstats.Stats(profile).sort_stats("cumulative").print_stats(35)
    return 0


if __name__ == "__main__":
    sys.exit(main())
