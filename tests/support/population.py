"""How much of a generated population a check runs: all of it by default, and in `make test` (what CI runs); every
N-th member where ``FANWHY_TEST_SAMPLE=N`` is set, as `make check` (the fast loop) sets it. The assertions are the
same, at the same levels, over the members run: seeded members (a generated plant, a token) are a subset of the whole
run's, drawn as they are drawn there; a Hypothesis check draws fewer examples from the same strategies."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def stride() -> int:
    """Every how many members a check runs (1: all of them). A value that is not a whole number above 0 fails the
    run at collection, not silently as 1."""
    raw = os.environ.get("FANWHY_TEST_SAMPLE", "1")
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"FANWHY_TEST_SAMPLE must be a whole number of 1 or more, not {raw!r}")
    return int(raw)


def members(population: Sequence[T]) -> Sequence[T]:
    """Every ``stride()``-th member, the first always among them."""
    return population[:: stride()]


def size(count: int) -> int:
    """How many of ``count`` generated members to run (the first of them, in the order they are drawn)."""
    return max(1, -(-count // stride()))


_SLEEPER = "#include <unistd.h>\nint main(void) { sleep(120); return 0; }\n"


def exact_sleeper(folder: str) -> str:
    """A program that sleeps two minutes whatever its arguments (compiled here with the C compiler, once a folder),
    so that a process can carry any command line exactly: ``Popen(argv, executable=exact_sleeper(...))`` shows
    ``argv`` in /proc/PID/cmdline as it is (Python's own options would have to come first)."""
    import shutil
    import subprocess

    path = os.path.join(folder, "exact-sleeper")
    if not os.path.exists(path):
        source = path + ".c"
        with open(source, "w") as handle:
            handle.write(_SLEEPER)
        compiler = shutil.which("cc") or shutil.which("gcc")
        if compiler is None:
            raise RuntimeError("no C compiler (cc) to build the exact-argv sleeper: apt-get install gcc")
        subprocess.run([compiler, "-O0", "-o", path, source], check=True, capture_output=True, timeout=120)
    return path
