"""What NVML's per-process utilization answers when two processes share one GPU (device only).

Starts two real CUDA loads on GPU 0 (A: 4 matmuls in each 200 ms, B: 2; the same kernel, so A does twice B's GPU
work), then asks NVML every ``--poll`` seconds for 30 s, three ways, and records every sample it returns:
  - nvmlDeviceGetProcessUtilization(since = now - 2 s): what FanWhy asks;
  - nvmlDeviceGetProcessUtilization(since = the newest timestamp seen so far, per call);
  - nvmlDeviceGetProcessesUtilizationInfo (NVML 12.4+), where the binding has it.
Prints, per way: the samples per PID, the distinct timestamps, the spacing of timestamps, and A's share of the
SM % summed over distinct samples (4 / 6 expected if NVML's samples follow GPU time).

    python3 benchmarks/nvml_process_util.py --out util.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.ledger import start  # noqa: E402
from benchmarks.measure import save  # noqa: E402


def summary(samples: list[dict], pids: dict[str, int]) -> dict:
    """Distinct (pid, timestamp) samples, their spacing and each load's summed SM %."""
    distinct = {(s["pid"], s["ts"]): s for s in samples}
    out: dict[str, object] = {"returned": len(samples), "distinct": len(distinct)}
    sums = {}
    for name, pid in pids.items():
        mine = sorted((s for s in distinct.values() if s["pid"] == pid), key=lambda s: s["ts"])
        gaps = [(b["ts"] - a["ts"]) / 1000 for a, b in itertools.pairwise(mine)]
        sums[name] = sum(s["sm"] for s in mine)
        out[name] = {"samples": len(mine), "sm_mean": round(statistics.fmean([s["sm"] for s in mine]), 1) if mine
                     else None, "gap_ms_median": round(statistics.median(gaps), 1) if gaps else None,
                     "sm_first_40": [s["sm"] for s in mine[:40]]}
    total = sum(sums.values())
    out["a_share_of_summed_sm"] = round(sums["a"] / total, 3) if total else None
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--poll", type=float, default=0.05)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    import pynvml

    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    a = start(1.0, args.seconds + 15, per_period=4)
    b = start(1.0, args.seconds + 15, per_period=2)
    pids = {"a": a.pid, "b": b.pid}
    time.sleep(4)
    ways: dict[str, list[dict]] = {"window_2s": [], "since_newest": [], "info_v1": []}
    calls = {k: 0 for k in ways}
    errors: dict[str, str] = {}
    newest = int(time.time() * 1e6) - 2_000_000
    info = getattr(pynvml, "nvmlDeviceGetProcessesUtilizationInfo", None)
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        for way in ways:
            try:
                if way == "window_2s":
                    got = pynvml.nvmlDeviceGetProcessUtilization(handle, int((time.time() - 2) * 1e6))
                    rows = [{"pid": s.pid, "ts": s.timeStamp, "sm": s.smUtil} for s in got]
                elif way == "since_newest":
                    got = pynvml.nvmlDeviceGetProcessUtilization(handle, newest)
                    rows = [{"pid": s.pid, "ts": s.timeStamp, "sm": s.smUtil} for s in got]
                    newest = max([newest] + [r["ts"] for r in rows])
                elif info is not None:
                    got = info(handle, int((time.time() - 2) * 1e6))
                    rows = [{"pid": s.pid, "ts": s.timeStamp, "sm": s.smUtil} for s in got]
                else:
                    continue
                calls[way] += 1
                ways[way].extend(rows)
            except pynvml.NVMLError as error:
                errors[way] = str(error)
        time.sleep(args.poll)
    board = pynvml.nvmlDeviceGetUtilizationRates(handle).gpu
    for proc in (a, b):
        proc.kill()
        proc.wait()
    result = {"gpu": pynvml.nvmlDeviceGetName(handle), "driver": pynvml.nvmlSystemGetDriverVersion(),
              "poll_s": args.poll, "seconds": args.seconds, "calls": calls, "errors": errors,
              "board_util_at_end": board, "expected_a_share": round(4 / 6, 3),
              "ways": {way: summary(rows, pids) for way, rows in ways.items()}}
    print(json.dumps(result, indent=1))
    save(json.dumps(result, indent=1), args.out)


if __name__ == "__main__":
    main()
