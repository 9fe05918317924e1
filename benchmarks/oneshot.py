"""How soon a one-shot terminal answer comes, beside the floor of Python (``python -c pass``), a minimal NVML + psutil
probe that reads what the table shows, nvidia-smi and the gpustat CLI, with CUDA loads running (one per GPU, up to
4).

Each command is a fresh process, timed from its start to its exit (wall), as a person at a shell meets it. FanWhy's
answer must name the load's process with its SM % (it is taken from the samples NVML already buffers). The commands
take turns, each in each place of a round in turn; every round's times are kept, and each round's FanWhy-to-probe
ratio beside the ratio of the medians. The target: ``fanwhy snapshot`` within 1.2 x the probe with 4 GPUs (exit 1
when missed; not judged with fewer). Run on a GPU machine:
``python -m benchmarks.oneshot --rounds 9 --out result.json``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import targets
from benchmarks.measure import save
from benchmarks.peers import start_loads

ROOT = Path(__file__).resolve().parent.parent


def wall(argv: list[str], env: dict[str, str],
         cwd: Path | str = ROOT) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Milliseconds from a fresh process's start to its exit, and what it printed."""
    started = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=60)
    return (time.perf_counter() - started) * 1000, result


# what the compared programs import from outside the standard library: compiled where they are installed
INSTALLED = ("pynvml", "psutil", "nvitop", "gpustat", "flask", "socketio", "yaml")


def timed_env(folder: Path | str = ROOT) -> dict[str, str]:
    """The environment of a timed answer (no history), with the sources of ``folder``/app and of every folder that
    holds one of ``INSTALLED`` compiled first, as pip leaves what it installs: where PYTHONDONTWRITEBYTECODE is set
    (the GPU machines set it) and the wheels were unpacked without compiling, every start would compile them again,
    which no installed tool pays (pynvml alone imports several times slower from source than compiled)."""
    env = {**os.environ, "FANWHY_DB": "none"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", "app"], cwd=folder, env=env, check=False)
    folders = set()
    for name in INSTALLED:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin is not None:
            origin = Path(spec.origin)
            folders.add(origin.parent.parent if origin.name == "__init__.py" else origin.parent)
    for where in sorted(folders):  # a folder this user cannot write is left as its installer compiled it
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(where)], env=env, check=False,
                       capture_output=True)
    return env


def not_installed(modules: tuple[str, ...]) -> dict[str, str]:
    """The peers (Python modules run with ``-m``) this host lacks, each with why it is left out: a failed start is
    not a time."""
    return {name: "not installed on this host" for name in modules if importlib.util.find_spec(name) is None}


def emit(results: dict[str, Any], out: str) -> int:
    """Print the results as JSON, and write them to ``out`` when given."""
    text = json.dumps(results, indent=1)
    print(text)
    save(text, out)
    return 0


def arguments(rounds: int, parser: argparse.ArgumentParser | None = None) -> argparse.Namespace:
    """--rounds and --out, the options every one-shot benchmark takes (beside the parser's own)."""
    parser = parser or argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--out", default="", help="also write the JSON results to this file")
    return parser.parse_args()


# What the terminal table shows, read as plainly as Python can: each GPU's name, utilization, memory, temperature and
# power, and each compute process's name and user.
PROBE = """
import pynvml, psutil
pynvml.nvmlInit()
rows = []
for i in range(pynvml.nvmlDeviceGetCount()):
    h = pynvml.nvmlDeviceGetHandleByIndex(i)
    memory = pynvml.nvmlDeviceGetMemoryInfo(h)
    rows.append((i, pynvml.nvmlDeviceGetName(h), pynvml.nvmlDeviceGetUtilizationRates(h).gpu, memory.used,
                 memory.total, pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU),
                 pynvml.nvmlDeviceGetPowerUsage(h)))
    for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h):
        try:
            proc = psutil.Process(p.pid)
            rows.append((p.pid, proc.name(), proc.username(), p.usedGpuMemory))
        except psutil.Error:
            pass
print(rows)
"""


def main() -> int:
    args = arguments(9)
    import pynvml

    pynvml.nvmlInit()
    gpus = pynvml.nvmlDeviceGetCount()
    loads = start_loads(min(4, gpus), 600, gpus)
    load = loads[0]
    env = timed_env()
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "probe (NVML + psutil)": [sys.executable, "-c", PROBE],
        "fanwhy snapshot --json": [sys.executable, "-m", "app", "snapshot", "--json"],
        "fanwhy snapshot": [sys.executable, "-m", "app", "snapshot"],
        "nvidia-smi": ["nvidia-smi"],
        "gpustat": [sys.executable, "-m", "gpustat"],
    }
    skipped = not_installed(("gpustat",))
    for name in skipped:
        commands.pop(name)
    results: dict[str, Any] = {"gpus": gpus, "skipped": skipped, "loads": len(loads), "load_pid": load.pid,
                               "date": time.strftime("%Y-%m-%d")}
    times: dict[str, list[float]] = {name: [] for name in commands}
    seen: list[float | None] = []
    try:
        order = list(commands.items())
        for round_ in range(args.rounds):  # the commands take turns, so a drift of the machine weighs on all alike,
            turn = round_ % len(order)  # and each takes each place in the round in turn (what runs before it moves)
            for name, argv in order[turn:] + order[:turn]:
                ms, result = wall(argv, env)
                times[name].append(ms)
                if name == "fanwhy snapshot --json" and result.returncode == 0:
                    view = json.loads(result.stdout)
                    mine = [p for p in view["processes"] if p["pid"] == load.pid]
                    seen.append(mine[0]["sm_percent"] if mine else None)
                    results["card"] = view["gpus"][0]["name"] if view["gpus"] else None
                    results["headline"] = view["verdict"]["headline"]
                elif result.returncode != 0:
                    results.setdefault("errors", {})[name] = result.stderr[-500:]
        for name, taken in times.items():
            results[name] = {"median_ms": round(statistics.median(taken), 1), "min_ms": round(min(taken), 1),
                             "max_ms": round(max(taken), 1), "rounds": len(taken),
                             "each_round_ms": [round(t, 1) for t in taken]}
        results["fanwhy snapshot --json"]["load_sm_percent_each_round"] = seen
        results["text_answer"] = wall(commands["fanwhy snapshot"], env)[1].stdout
    finally:
        for each in loads:
            each.kill()
            each.wait()
    ratio = results["fanwhy snapshot"]["median_ms"] / results["probe (NVML + psutil)"]["median_ms"]
    results["fanwhy_vs_probe"] = round(ratio, 2)  # the ratio of the medians: what the target judges
    paired = sorted(f / p for f, p in zip(times["fanwhy snapshot"], times["probe (NVML + psutil)"], strict=True))
    results["fanwhy_vs_probe_by_round"] = {"median": round(statistics.median(paired), 2),  # how much it moves
                                           "min": round(paired[0], 2), "max": round(paired[-1], 2)}
    code = targets.judged(results, [(targets.ONESHOT, results["fanwhy_vs_probe"])], gpus=len(loads))
    emit(results, args.out)
    return code


if __name__ == "__main__":
    sys.exit(main())
