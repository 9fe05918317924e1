"""A receipt for every job: the meter over snapshots (energy with the card's idle apart, power, heat, throttling, XID
errors, fans above their floor, CPU), ``fanwhy run -- COMMAND`` on the fake NVML with a real child process, and a
recording that ends with its receipt."""

from __future__ import annotations

import io
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.cli.run import run_command
from app.collect.config import Settings
from app.collect.engine import build_monitor
from app.core.fan import Fan
from app.core.ledger import PowerLedger
from app.core.model import Alert
from app.vendors.factory import Selection
from app.vendors.nvidia import NvidiaBackend
from app.verdict.receipt import ReceiptMeter, words
from tests.fakes.fake_nvml import scenario
from tests.support.builders import gpu, proc, snap


def ledger(board: float, idle: float, *by_process: tuple[int, float]) -> PowerLedger:
    job = sum(w for _, w in by_process)
    return PowerLedger(gpu_index=0, board_w=board, idle_w=idle, processes_w=job, unattributed_w=board - idle - job,
                       idle_from="measured", pstate="P0", board_wh=0, idle_wh=0, processes_wh=0, unattributed_wh=0,
                       by_process=by_process)


def test_the_meter_counts_the_jobs_part_and_keeps_the_idle_apart() -> None:
    meter = ReceiptMeter(pids=lambda: {7})
    loud = Fan("nvml:0/fan0", "GPU 0", 0, None, percent=80, floor_percent=30, state="running", gpu_index=0)
    quiet = replace(loud, percent=30, state="floor")
    xid = Alert(id="xid:0:1", rule="xid", gpu_index=0, severity="critical", message="x", value=79.0, threshold=None,
                since=0.0)
    for t, (watts, temp, reasons, fan, events) in enumerate([
            (300.0, 60.0, ("sw_power_cap",), loud, ()),
            (400.0, 70.0, ("sw_power_cap",), loud, (xid,)),
            (200.0, 65.0, ("gpu_idle",), quiet, ()),
            (200.0, 64.0, (), quiet, ())]):
        card = gpu(util=90, temp=temp, power=watts, throttle_reasons=reasons)
        state = snap([card], [proc(7, "python train.py", sm=90.0, cpu=150.0), proc(8, "other", sm=10.0)],
                     timestamp=1000.0 + 3600 * t / 3600)
        meter.add(replace(state, ledger=(ledger(watts, 50.0, (7, watts - 60.0), (8, 10.0)),), fans=(fan,),
                          alert_events=events))
    receipt: Any = meter.result()
    (g,) = receipt["gpus"].values()
    # three one-second steps after the first: 340 + 140 + 140 W for the job, 50 W idle each second
    assert receipt["energy_wh"] == round((340 + 140 + 140) / 3600, 4) and receipt["idle_wh"] == round(150 / 3600, 4)
    assert g["peak_power_w"] == 400.0 and g["peak_temperature_c"] == 70.0 and g["xid"] == [79]
    assert g["throttled_s"] == {"sw_power_cap": 1.0}  # gpu_idle is not a throttle; the first snapshot has no span
    assert g["mean_power_w"] == round((400 + 200 + 200) / 3, 1)
    assert receipt["fans_above_floor_s"] == 1.0 and receipt["cpu_seconds"] == 4.5 and receipt["seconds"] == 3.0
    text = words(receipt, "python train.py", 0)
    assert text.startswith("fanwhy: `python train.py` exited 0 after 3.0 s\n  GPU 0 (Test GPU): 0.1722 Wh")
    assert "throttled: sw_power_cap 1.0 s, XID: 79" in text and "fans above their idle floor: 1.0 s" in text


def test_a_job_that_used_no_gpu_and_a_machine_without_fans() -> None:
    meter = ReceiptMeter(pids=lambda: {99})
    for t in range(3):
        meter.add(snap([gpu(util=0)], [proc(7, "someone else", sm=50.0)], timestamp=float(t)))
    receipt: Any = meter.result()
    assert receipt["gpus"] == {} and receipt["fans_above_floor_s"] is None
    assert "no GPU used" in words(receipt, "true") and "fans: none read on this machine" in words(receipt, "true")


def test_fanwhy_run_watches_a_real_child_and_keeps_its_exit_code(tmp_path: Path) -> None:
    fake = scenario("h100_load")
    child_pid: dict[str, int] = {}

    def processes(*_: Any) -> list[dict[str, Any]]:
        pid = child_pid.get("pid")
        return [{"pid": pid, "usedGpuMemory": 2**30, "gpuInstanceId": 0, "computeInstanceId": 0}] if pid else []

    fake.set(0, "compute_processes", processes)
    fake.set(0, "process_utilization", lambda *_: [{"pid": child_pid.get("pid", 0), "smUtil": 90, "memUtil": 0,
                                                    "encUtil": 0, "decUtil": 0}])
    backend = NvidiaBackend(nvml=fake, watch_xid=False)
    backend.open()
    monitor = build_monitor(Settings(db="none", interval_s=0.2, bmc=False, sys_root=str(tmp_path)),
                            Selection(backend=backend, skipped={}))
    out = io.StringIO()
    code = run_command([sys.executable, "-c", "import time, sys; time.sleep(1.5); sys.exit(3)"], monitor,
                       as_json=True, out=out, on_start=lambda pid: child_pid.update(pid=pid))
    assert code == 3
    receipt = json.loads(out.getvalue())
    assert receipt["exit_code"] == 3 and receipt["command"][-1].endswith("sys.exit(3)")
    (g,) = receipt["gpus"].values()
    assert g["name"] == "NVIDIA H100 80GB HBM3" and g["energy_wh"] > 0 and g["peak_power_w"] > 600
    assert 1.2 <= receipt["seconds"] <= 4.0 and receipt["cpu_seconds"] < 1.0  # it slept: its own CPU, not ours


def test_a_command_that_cannot_start_and_no_command() -> None:
    fake = scenario("h100_idle")
    backend = NvidiaBackend(nvml=fake, watch_xid=False)
    backend.open()
    monitor = build_monitor(Settings(db="none", bmc=False), Selection(backend=backend, skipped={}))
    out = io.StringIO()
    assert run_command(["/nonexistent/command"], monitor, out=out) == 127
    assert "fanwhy run: /nonexistent/command: No such file or directory" in out.getvalue()
    assert run_command([], monitor, out=out) == 2 and "name a command" in out.getvalue()
