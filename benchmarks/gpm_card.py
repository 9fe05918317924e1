"""What kind of busy, on a real GPU: each load alone on GPU 0, read by FanWhy's collector and by
``nvidia-smi dmon --gpm-metrics`` over the same seconds, with the kind the verdict says.

    python3 -m benchmarks.gpm_card --out gpm.json                 # every load
    python3 -m benchmarks.gpm_card --loads bf16,idle --out x.json # some

Loads (tests/gpu/cuda_load.py ``--kind``): an FP32 matmul 8192² (torch's default, TF32 off), the same with TF32 on
and in bf16, a loop of tiny kernels each waited for, a 1 GiB device-to-device copy, and nothing. The output keeps,
per load, the medians of FanWhy's windows and of dmon's rows, the verdict's kinds and the process's CPU:
tests/gpu/test_gpm_card.py asserts them, and tests/fixtures/nvml/h200-gpm.json is made from such a run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

from benchmarks.measure import machine, report

ROOT = Path(__file__).resolve().parent.parent
LOAD = ROOT / "tests" / "gpu" / "cuda_load.py"
SETTLE_TICKS = 2
LOADS = ("fp32", "tf32", "bf16", "tiny", "copy", "idle")
# dmon's GPM metric IDs (nvidia-smi dmon --help) -> FanWhy's Activity field, in the order asked.
DMON = (("2", "sm_active_percent"), ("3", "sm_occupancy_percent"), ("5", "tensor_percent"),
        ("10", "dram_percent"), ("11", "fp64_percent"), ("12", "fp32_percent"), ("13", "fp16_percent"))


@contextlib.contextmanager
def load_running(kind: str, seconds: float) -> Iterator[int | None]:
    """``kind`` running alone on GPU 0 (``idle``: nothing); yields its PID once it is busy."""
    if kind == "idle":
        yield None
        return
    proc = subprocess.Popen([sys.executable, str(LOAD), "--kind", kind, "--hold-gb", "1", "--seconds", str(seconds)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(3)  # past the first kernels
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()
        time.sleep(2)


def parse_dmon(text: str) -> list[dict[str, float]]:
    """dmon's rows as {field: value}: its GPM columns are the last ones, in the order asked (the header says so)."""
    rows = []
    for line in text.splitlines():
        cells = line.split()
        if not cells or line.startswith("#") or len(cells) < len(DMON) + 1:
            continue
        values = cells[-len(DMON):]
        with contextlib.suppress(ValueError):
            rows.append({field: float(v) for (_, field), v in zip(DMON, values, strict=True)})
    return rows


def median(values: list[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


def one_load(collector: Any, kind: str, seconds: int) -> dict[str, Any]:
    with load_running(kind, seconds + 20) as pid:
        dmon = subprocess.Popen(["nvidia-smi", "dmon", "-i", "0", "--gpm-metrics", ",".join(m for m, _ in DMON),
                                 "-d", "1", "-c", str(seconds + SETTLE_TICKS)], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        windows: list[Any] = []
        kinds: list[str] = []
        cpu: list[float] = []
        utils: list[float] = []
        headline, reason = "", None
        for tick in range(seconds + SETTLE_TICKS):
            time.sleep(1.0)
            frame = collector.collect()
            snap = frame.snapshot
            gpu = snap.gpus[0]
            if tick < SETTLE_TICKS:  # the window a tick shows closed at the tick before: the load's own from here
                continue
            if gpu.activity is not None:
                windows.append(gpu.activity)
            kinds.extend(k.kind for k in snap.verdict.busy_kinds if k.gpu_index == 0)
            cpu.extend(p.cpu_percent for p in snap.processes if p.pid == pid and p.cpu_percent is not None)
            utils.extend([gpu.utilization_percent] if gpu.utilization_percent is not None else [])
            headline, reason = snap.verdict.headline, gpu.unsupported.get("activity")
        raw, _ = dmon.communicate(timeout=seconds + 60)
    rows = parse_dmon(raw)[SETTLE_TICKS:]
    fields = [f for _, f in DMON] + ["tensor_hmma_percent"]
    return {
        "fanwhy": {f: median([getattr(w, f) for w in windows if getattr(w, f) is not None]) for f in fields},
        "dmon": {f: median([r[f] for r in rows]) for _, f in DMON},
        "windows": len(windows), "dmon_rows": len(rows), "dmon_raw": raw[-3000:],
        "kinds": kinds, "process_cpu_percent": median(cpu), "headline": headline, "reason": reason,
        "utilization_gpu": median(utils),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--loads", default=",".join(LOADS))
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    import pynvml

    from app import build_collector
    from app.collect.settings import Settings

    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    result: dict[str, Any] = {"card": pynvml.nvmlDeviceGetName(handle), "driver": pynvml.nvmlSystemGetDriverVersion(),
                              "uid": os.getuid(), "machine": machine(), "date": time.strftime("%Y-%m-%d"),
                              "loads": {}}
    collector = build_collector(Settings(backend="nvidia", db="none"))
    collector.collect()
    try:
        for kind in args.loads.split(","):
            result["loads"][kind] = one_load(collector, kind, args.seconds)
    finally:
        collector.stop()
    report(result, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
