"""``fanwhy top`` as a person at a terminal meets it, beside nvitop: how soon its first frame with the GPUs comes,
and the CPU it takes while it runs at a 1 s refresh with CUDA loads going (one per GPU, up to 4).

Each program runs in a pseudo-terminal of 120 x 40 (the standard library's pty: nothing else needed). The first
frame is the first output that holds the GPU table ("HISTORY", the last column's title); the steady CPU is the
program's own user + system time (its threads and children) over ``--seconds`` after a warm-up, as a share of one
core. The verdict on screen must name a load's program. Targets: first frame <= 300 ms, steady CPU <= 1 % of a
core; exit 1 when one is missed. Run on a GPU machine:
``python -m benchmarks.top --seconds 30 --out result.json``.
"""

from __future__ import annotations

import argparse
import os
import pty
import re
import select
import signal
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import targets
from benchmarks.oneshot import emit, not_installed, timed_env
from benchmarks.peers import start_loads

ROOT = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")


class Pty:
    """A program in a pseudo-terminal of ``rows`` x ``cols``: its output as it comes."""

    def __init__(self, argv: list[str], env: dict[str, str], rows: int = 40, cols: int = 120):
        import fcntl
        import struct
        import termios

        self.started = time.perf_counter()
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the program
            os.chdir(ROOT)
            os.execvpe(argv[0], argv, {**env, "TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
                                       "COLUMNS": str(cols), "LINES": str(rows)})
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.output = b""

    def read_until(self, marker: bytes, timeout: float) -> float | None:
        """Milliseconds from start until ``marker`` is in the output; None past ``timeout``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.01)
            if ready:
                try:
                    self.output += os.read(self.fd, 65536)
                except OSError:
                    return None
                if marker in self.output:
                    return (time.perf_counter() - self.started) * 1000
        return None

    def drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                try:
                    self.output = (self.output + os.read(self.fd, 65536))[-200_000:]
                except OSError:
                    return

    def cpu_seconds(self) -> float:
        """User + system time of the program and every thread of it (its children reaped count too)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(v) for v in fields[11:15]) / TICK

    def stop(self) -> None:
        try:
            os.kill(self.pid, signal.SIGTERM)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)


def measure(argv: list[str], env: dict[str, str], marker: bytes, seconds: float, warmup: float) -> dict[str, Any]:
    program = Pty(argv, env)
    try:
        first = program.read_until(marker, 60)
        program.drain(warmup)
        before, at = program.cpu_seconds(), time.monotonic()
        program.drain(seconds)
        used = program.cpu_seconds() - before
        span = time.monotonic() - at
        screen = program.output[-20_000:].decode(errors="replace")
    finally:
        program.stop()
    return {"first_frame_ms": round(first, 1) if first is not None else None,
            "steady_cpu_percent": round(100 * used / span, 2), "seconds": round(span, 1), "screen_tail": screen}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--warmup", type=float, default=10)
    parser.add_argument("--firsts", type=int, default=7, help="fresh starts timed for the first frame")
    parser.add_argument("--loads", type=int, default=0, help="CUDA loads (default: one per GPU, up to 4)")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    import pynvml

    pynvml.nvmlInit()
    gpus = pynvml.nvmlDeviceGetCount()
    loads = start_loads(args.loads or min(4, gpus), args.seconds * 4 + 300, gpus)
    env = {**timed_env(), "FANWHY_INTERVAL": "1"}
    top = [sys.executable, "-m", "app", "top"]
    results: dict[str, Any] = {"gpus": gpus, "loads": len(loads), "date": time.strftime("%Y-%m-%d")}
    try:
        firsts = []
        for _ in range(args.firsts):
            program = Pty(top, env)
            firsts.append(program.read_until(b"HISTORY", 60))
            program.stop()
        results["fanwhy top"] = {"first_frame_ms_each": [round(f, 1) if f else None for f in firsts]}
        valid = [f for f in firsts if f is not None]
        results["fanwhy top"]["first_frame_ms"] = round(statistics.median(valid), 1) if valid else None
        steady = measure(top, env, b"HISTORY", args.seconds, args.warmup)
        results["fanwhy top"]["steady_cpu_percent"] = steady["steady_cpu_percent"]
        # the verdict's words, not a process row: "python3 cuda_load.py (root) keeps 100 % of its SMs busy"
        said = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", steady["screen_tail"])
        results["fanwhy top"]["names_a_load"] = re.search(r"cuda_load\.py \(\w+\) (keeps|draws)", said) is not None
        missing = not_installed(("nvitop",))  # a failed start is not a time (it read as 0 % of a core)
        if missing:
            results["nvitop"] = {"skipped": missing["nvitop"]}
        else:
            nvitop = measure([sys.executable, "-m", "nvitop", "--interval", "1"], env, b"NVITOP", args.seconds,
                             args.warmup)
            results["nvitop"] = {k: v for k, v in nvitop.items() if k != "screen_tail"}
            if nvitop["first_frame_ms"] is None:
                results["nvitop"]["skipped"] = "no frame in 60 s: " + nvitop["screen_tail"][-300:]
    finally:
        for load in loads:
            load.kill()
            load.wait()
    ours = results["fanwhy top"]
    code = targets.judged(results, [(targets.TOP_FIRST_FRAME, ours["first_frame_ms"]),
                                    (targets.TOP_CPU, ours["steady_cpu_percent"])], gpus=min(len(loads), gpus))
    emit(results, args.out)
    return code


if __name__ == "__main__":
    sys.exit(main())
