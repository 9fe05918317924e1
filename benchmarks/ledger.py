"""The power ledger against the board, on a real NVIDIA GPU: does each process get its part of the power above idle?

Runs FanWhy's collector in this process (1 s ticks) and real CUDA loads (tests/gpu/cuda_load.py), and prints each
error:
  (a) one full load alone: its power against board - idle (idle measured with no process before any load);
  (b) one load at half duty alone: the same (the old split gave it its SM share of the whole board: -38 %);
  (c) two loads of one kernel, A running 4 matmuls and B 2 in each 200 ms: A's part of the processes' power
      against 4 / 6 (the same kernel: GPU time in proportion to the work, however the two are interleaved);
  (d) the ledger's board energy over 60 s of a full load against NVML's own energy counter over the same ticks.
Each phase settles, then averages its last seconds. `--out FILE` writes the figures as JSON.

    python3 benchmarks/ledger.py --out ledger.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.collect.assemble import build_collector  # noqa: E402
from app.collect.config import load_settings  # noqa: E402
from benchmarks.measure import save  # noqa: E402

LOAD = ROOT / "tests" / "gpu" / "cuda_load.py"


def start(duty: float, seconds: float, per_period: int = 0) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, str(LOAD), "--seconds", str(seconds), "--hold-gb", "1", "--duty",
                             str(duty), "--per-period", str(per_period)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def frames(collector, seconds: float) -> list:
    """The snapshots of the next ``seconds`` (one a tick)."""
    seen, out = None, []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        frame = collector.latest()
        if frame is not None and frame.seq != seen:
            seen = frame.seq
            out.append(frame.snapshot)
        time.sleep(0.1)
    return out


def tick_and_counter(collector, handle) -> tuple:
    """The ledger of the next tick, and NVML's energy counter (mJ) read as soon as that tick is published."""
    import pynvml

    seen = collector.latest().seq
    while collector.latest().seq == seen:
        time.sleep(0.002)
    counter = pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
    return collector.latest().snapshot.ledger[0], counter


def own(snapshot, pid: int):
    """The row of ``pid`` in a snapshot, or None."""
    return next((p for p in snapshot.processes if p.pid == pid), None)


def mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", help="write the figures as JSON here")
    parser.add_argument("--settle", type=float, default=8.0)
    parser.add_argument("--measure", type=float, default=12.0)
    args = parser.parse_args()
    collector = build_collector(load_settings({"FANWHY_DB": "none", "FANWHY_BACKEND": "nvidia", "FANWHY_INTERVAL": "1",
                                           "FANWHY_BMC": "off"}))
    collector.start()
    import pynvml

    handle = pynvml.nvmlDeviceGetHandleByIndex(0)  # the backend has initialised NVML
    result: dict[str, object] = {"gpu": pynvml.nvmlDeviceGetName(handle),
                                 "driver": pynvml.nvmlSystemGetDriverVersion()}
    idle = frames(collector, 10.0)
    idle_w = round(mean([s.gpus[0].power_w for s in idle[-6:]]), 1)
    result["idle_w"] = idle_w
    result["idle_baseline_w"] = idle[-1].ledger[0].idle_w
    result["idle_from"] = idle[-1].ledger[0].idle_from

    def alone(duty: float, name: str) -> None:
        proc = start(duty, args.settle + args.measure + 5)
        frames(collector, args.settle)
        rows = [(s, own(s, proc.pid)) for s in frames(collector, args.measure)]
        rows = [(s, p) for s, p in rows if p is not None]
        board = mean([s.gpus[0].power_w for s, _ in rows])
        mine = mean([p.power_w or 0.0 for _, p in rows])
        sm = mean([p.sm_percent or 0.0 for _, p in rows])
        expected = board - idle_w
        result[name] = {"board_w": round(board, 1), "process_w": round(mine, 1),
                        "board_minus_idle_w": round(expected, 1), "sm_percent": round(sm, 1),
                        "error_percent": round(100 * (mine - expected) / expected, 2),
                        "old_split_w": round(board * sm / 100, 1)}
        proc.kill()
        proc.wait()
        frames(collector, 4.0)

    alone(1.0, "a_full_alone")
    alone(0.5, "b_half_duty_alone")

    a = start(1.0, args.settle + 2 * args.measure + 5, per_period=4)
    b = start(1.0, args.settle + 2 * args.measure + 5, per_period=2)
    frames(collector, args.settle)
    pair = frames(collector, 2 * args.measure)
    rows = [(own(s, a.pid), own(s, b.pid)) for s in pair]
    both = [(ra, rb) for ra, rb in rows if ra is not None and rb is not None]
    doubted = sum(1 for s in pair if s.ledger and s.ledger[0].split_doubt)
    share = mean([(ra.power_w or 0.0) / max(1e-9, (ra.power_w or 0.0) + (rb.power_w or 0.0)) for ra, rb in both])
    sm_a = [ra.sm_percent for ra, _ in both]
    sm_b = [rb.sm_percent for _, rb in both]
    result["c_two_loads_4_and_2_matmuls"] = {
        "a_share": round(share, 3), "expected": round(4 / 6, 3),
        "error_percent": round(100 * (share - 4 / 6) / (4 / 6), 2), "ticks": len(both),
        "sm_a_mean": round(mean([v for v in sm_a if v is not None]), 1),
        "sm_b_mean": round(mean([v for v in sm_b if v is not None]), 1),
        "sm_unknown_ticks": [sum(v is None for v in sm_a), sum(v is None for v in sm_b)],
        "ticks_with_split_doubt": f"{doubted} of {len(pair)}",
        "split_doubt": next((s.ledger[0].split_doubt for s in pair if s.ledger and s.ledger[0].split_doubt), None)}
    for proc in (a, b):
        proc.kill()
        proc.wait()
    frames(collector, 4.0)

    proc = start(1.0, 75.0)
    frames(collector, 5.0)
    before, counter0 = tick_and_counter(collector, handle)
    frames(collector, 60.0)
    after, counter1 = tick_and_counter(collector, handle)
    ledger_wh = after.board_wh - before.board_wh
    parts_wh = (after.idle_wh + after.processes_wh + after.unattributed_wh) - (
        before.idle_wh + before.processes_wh + before.unattributed_wh)
    counter_wh = (counter1 - counter0) / 1000 / 3600
    result["d_energy_60s"] = {"ledger_board_wh": round(ledger_wh, 4), "ledger_parts_wh": round(parts_wh, 4),
                              "nvml_counter_wh": round(counter_wh, 4),
                              "error_percent": round(100 * (ledger_wh - counter_wh) / counter_wh, 2)}
    proc.kill()
    proc.wait()
    collector.stop()
    print(json.dumps(result, indent=2))
    save(json.dumps(result, indent=2), args.out)


if __name__ == "__main__":
    main()
