"""A receipt for every job: the meter over snapshots (energy with the card's idle apart, power, heat, throttling, XID
errors, fans above their floor, CPU), ``fanwhy run -- COMMAND`` on the fake NVML with a real child process, and a
recording that ends with its receipt."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import psutil
import pytest

from app.cli import run as run_module
from app.cli.run import Forward, run_command
from app.collect.assemble import build_collector
from app.collect.settings import Settings
from app.core.fan import Fan
from app.core.ledger import PowerLedger
from app.core.redact import MAX_COMMAND_CHARS, Redactor
from app.core.snapshot import Alert
from app.vendors.factory import Selection
from app.vendors.nvidia import NvidiaBackend
from app.verdict.receipt import ReceiptMeter, words
from tests.fakes.fake_nvml import scenario
from tests.support.builders import gpu, proc, snap

ROOT = Path(__file__).resolve().parent.parent.parent


def ledger(board: float, idle: float, *by_process: tuple[int, float], seen: bool = True) -> PowerLedger:
    job = sum(w for _, w in by_process)
    return PowerLedger(gpu_index=0, board_w=board, idle_w=idle, processes_w=job, unattributed_w=board - idle - job,
                       idle_from="measured" if seen else "unknown", pstate="P0", board_wh=0, idle_wh=0,
                       processes_wh=0, unattributed_wh=0, by_process=by_process)


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
    assert "(the card's idle 0.0417 Wh apart)," in text and g["idle_unknown_s"] == 0


def test_an_idle_not_seen_is_said_not_shown_as_zero() -> None:
    """A card that was never seen idle before the job took it (a command that opens CUDA at once on a machine
    FanWhy has just started on) has no idle to keep apart: its ledger counts the idle as the job's. The receipt
    says so, wholly or for the seconds it lasted. Mutant: ``idle_unknown_s`` not counted (the receipt then says
    "the card's idle 0.0 Wh apart", a measurement that was never made)."""
    for seen_from, expected in [(None, "(the card's idle included: it was not seen idle before the job used it)"),
                                (2, "(the card's idle 0.0278 Wh apart; not seen idle for the first 2.0 s, counted as "
                                    "the job's there)")]:
        meter = ReceiptMeter(pids=lambda: {7})
        for t in range(5):
            seen = seen_from is not None and t > seen_from
            state = snap([gpu(util=90, power=300.0)], [proc(7, "python train.py", sm=90.0)], timestamp=float(t))
            idle = 50.0 if seen else 0.0
            meter.add(replace(state, ledger=(ledger(300.0, idle, (7, 300.0 - idle), seen=seen),)))
        receipt: Any = meter.result()
        assert expected in words(receipt, "python train.py", 0), words(receipt, "python train.py", 0)
        assert receipt["gpus"]["0"]["idle_unknown_s"] == (4.0 if seen_from is None else 2.0)
    meter = ReceiptMeter(pids=lambda: {7})  # unseen only before the job took the card: its energy holds no idle
    for t in range(5):
        users = [proc(7, "python train.py", sm=90.0)] if t >= 3 else []
        state = snap([gpu(util=90 if users else 0, power=300.0 if users else 60.0)], users, timestamp=float(t))
        meter.add(replace(state, ledger=(ledger(state.gpus[0].power_w or 0, 50.0 if t >= 3 else 0.0,
                                                *([(7, 250.0)] if users else []), seen=t >= 3),)))
    unseen: Any = meter.result()
    assert unseen["gpus"]["0"]["idle_unknown_s"] == 0


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
    collector = build_collector(Settings(db="none", interval_s=0.2, bmc=False, sys_root=str(tmp_path)),
                            Selection(backend=backend, skipped={}))
    out = io.StringIO()
    code = run_command([sys.executable, "-c", "import time, sys; time.sleep(1.5); sys.exit(3)"], collector,
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
    collector = build_collector(Settings(db="none", bmc=False), Selection(backend=backend, skipped={}))
    out = io.StringIO()
    assert run_command(["/nonexistent/command"], collector, out=out) == 127
    assert "fanwhy run: /nonexistent/command: No such file or directory" in out.getvalue()
    assert run_command([], collector, out=out) == 2 and "name a command" in out.getvalue()


def fake_gpu_monitor(tmp_path: Path) -> Any:
    backend = NvidiaBackend(nvml=scenario("h100_idle"), watch_xid=False)
    backend.open()
    return build_collector(Settings(db="none", interval_s=0.2, bmc=False, sys_root=str(tmp_path)),
                         Selection(backend=backend, skipped={}))


def test_the_receipt_masks_and_bounds_the_command(tmp_path: Path) -> None:
    """A receipt usually lands in a CI log: the command is shown as every command line FanWhy shows."""
    out = io.StringIO()
    argv = [sys.executable, "-c", "pass", "--password", "hunter2-secret", "--note", "x" * 5000]
    assert run_command(argv, fake_gpu_monitor(tmp_path), as_json=True, out=out) == 0
    receipt = json.loads(out.getvalue())
    assert "hunter2-secret" not in out.getvalue() and "****" in receipt["command_line"]
    bound = MAX_COMMAND_CHARS + len("… (9999 more characters)")
    assert receipt["command"][4] == "****" and len(receipt["command_line"]) <= bound
    assert all(len(word) <= bound for word in receipt["command"]) and "more characters" in receipt["command"][-1]
    text = io.StringIO()
    run_command(argv, fake_gpu_monitor(tmp_path), out=text)
    assert "hunter2-secret" not in text.getvalue() and "more characters" in text.getvalue()


def test_the_receipt_follows_the_operators_mask_patterns_and_names_only(tmp_path: Path) -> None:
    argv = [sys.executable, "-c", "pass", "--model", "sk-live0123abcd"]
    out = io.StringIO()
    run_command(argv, fake_gpu_monitor(tmp_path), as_json=True, out=out, redactor=Redactor([r"sk-live\w+"]))
    receipt = json.loads(out.getvalue())
    assert "sk-live" not in out.getvalue() and receipt["command"][-1] == "****"
    named = io.StringIO()
    run_command(argv, fake_gpu_monitor(tmp_path), as_json=True, out=named, redactor=Redactor(names_only=True))
    receipt = json.loads(named.getvalue())
    program = Path(sys.executable).name
    assert receipt["command"] == [program] and receipt["command_line"] == program and "pass" not in named.getvalue()


def test_a_signal_while_the_command_starts_is_passed_on_once_it_has_a_pid(tmp_path: Path) -> None:
    """A CI runner's SIGHUP can come while the command is being started: it must reach the command, and the receipt
    still follows. The signal is raised here at the first moment the command has a PID (``on_start``); the test's
    own handler stands where ``fanwhy run`` would have died (the mutant: handlers installed after the start; the
    command then sleeps its 5 s and exits 0)."""
    reached_here: list[int] = []
    previous = signal.signal(signal.SIGHUP, lambda signum, _frame: reached_here.append(signum))
    out = io.StringIO()
    try:
        code = run_command([sys.executable, "-c", "import time; time.sleep(5)"], fake_gpu_monitor(tmp_path),
                           as_json=True, out=out, on_start=lambda pid: os.kill(os.getpid(), signal.SIGHUP))
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert reached_here == []
    assert code == 128 + signal.SIGHUP and json.loads(out.getvalue())["exit_code"] == 128 + signal.SIGHUP


def test_a_ctrl_c_before_the_command_existed_is_passed_on_even_from_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal's Ctrl-C reaches the whole foreground group, so a live one is not sent to the command twice; but
    one that came before the command existed never reached it, and is passed on (the mutant: held signals replayed
    through the terminal check, which drops them)."""
    monkeypatch.setattr(run_module, "_terminal_sent_it_to", lambda pid: True)  # as at a terminal
    child = subprocess.Popen([sys.executable, "-c", "import signal, sys, time\n"
                              "signal.signal(signal.SIGINT, lambda *a: sys.exit(5))\n"
                              "print('ready', flush=True)\ntime.sleep(30)"], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        live = Forward()
        live.started(child.pid)
        live(signal.SIGINT, None)  # the terminal sent it to the command too: not again
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(timeout=1)
        held = Forward()
        held(signal.SIGINT, None)  # before the command had a PID
        held.started(child.pid)
        assert child.wait(timeout=30) == 5
    finally:
        child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_to_fanwhy_run_reaches_the_command_and_the_receipt_is_printed(signum: int, tmp_path: Path) -> None:
    """As a CI runner stops a job: the signal goes to `fanwhy run`; the command gets it (it says so and exits 7),
    and the receipt follows. Nothing is left running."""
    child = tmp_path / "child.py"
    child.write_text(
        "import signal, sys, time\n"
        "def stop(n, f):\n"
        "    print('child got', n, flush=True); sys.exit(7)\n"
        "for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):\n"
        "    signal.signal(s, stop)\n"
        "print('ready', flush=True)\n"
        "time.sleep(120)\n")
    env = {**os.environ, "FANWHY_BACKEND": "simulated", "FANWHY_SIM_GPUS": "1", "FANWHY_INTERVAL": "0.2"}
    proc = subprocess.Popen([sys.executable, "-m", "app", "run", "--json", "--", sys.executable, str(child)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # no terminal: as in CI
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:  # what each had said by then, for the report (the group is ended below)
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=30)
        pytest.fail(f"fanwhy run was still running 60 s after the signal; its output:\n{out}\n{err}")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)  # reaped here: not a warning in whichever test collects it
    assert f"child got {int(signum)}" in out
    assert proc.returncode == 7
    receipt = json.loads(err.strip().splitlines()[-1])
    assert receipt["exit_code"] == 7 and receipt["command"][-1] == str(child)
    leftovers = [p for p in psutil.process_iter(["cmdline"]) if str(child) in " ".join(p.info["cmdline"] or [])]
    assert leftovers == []


def test_the_receipt_gives_the_jobs_mean_activity_where_the_counters_are_read() -> None:
    """Two seconds of an FP32 matmul then two of a copy, as one H200 counted them (tests/fixtures/nvml/h200-gpm.json);
    a tick without a window (the first, or a GPU without counters) adds no second."""
    from tests.unit.test_busy_kind import h200_under

    meter = ReceiptMeter(pids=lambda: {7})
    job = proc(7, "python train.py", sm=95)
    for t, load in enumerate(["fp32_matmul", "fp32_matmul", "fp32_matmul", "d2d_copy", "d2d_copy"]):
        card = h200_under(load) if t else replace(h200_under(load), activity=None)
        meter.add(snap([card], [job], timestamp=1000.0 + t))
    activity: Any = json.loads(json.dumps(meter.result()))["gpus"]["0"]["activity"]  # the receipt's JSON, untyped
    assert activity["seconds"] == 4.0
    assert activity["mean_fp32_percent"] == pytest.approx((75.66 * 2 + 0 * 2) / 4, abs=0.05)
    assert activity["mean_dram_percent"] == pytest.approx((4.6 * 2 + 84.93 * 2) / 4, abs=0.05)
    assert activity["mean_tensor_percent"] == 0.0
    said = words(meter.result(), "python train.py", 0)
    assert "what its SMs did (means over 4.0 s): SM 95.6 %, tensor 0.0 %, FP32 37.8 %, DRAM 44.8 %" in said
    bare = ReceiptMeter(pids=lambda: {7})
    for t in range(3):
        bare.add(snap([replace(h200_under("fp32_matmul"), activity=None)], [job], timestamp=1000.0 + t))
    assert json.loads(json.dumps(bare.result()))["gpus"]["0"]["activity"] is None
    assert "what its SMs did" not in words(bare.result(), "python train.py", 0)
