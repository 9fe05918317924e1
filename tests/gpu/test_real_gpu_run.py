"""On a real NVIDIA GPU: ``fanwhy run -- COMMAND`` watches a real CUDA load and prints its receipt (energy above
idle, the idle apart, peak power and temperature), keeping the command's exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def test_fanwhy_run_prints_the_receipt_of_a_cuda_load() -> None:
    """The card's idle is kept apart once FanWhy has seen it idle (three steady ticks): the command waits 4 s before
    it opens CUDA, as a job's set-up does. On a host where torch loads in under 3 s, a command that opened CUDA at
    once left the idle unseen, and the receipt now says so (``idle_unknown_s``) instead of an idle of 0 Wh."""
    load = f"sleep 4; exec {sys.executable} {HERE / 'cuda_load.py'} --seconds 8 --hold-gb 1"
    result = subprocess.run([sys.executable, "-m", "app", "run", "--json", "--", "sh", "-c", load],
                            cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "FANWHY_BACKEND": "nvidia"})
    assert result.returncode == 0, result.stderr[-2000:]
    receipt = json.loads(result.stderr.strip().splitlines()[-1])
    out = os.environ.get("FANWHY_GPU_OUT")
    if out:
        Path(out, "run-receipt.json").write_text(json.dumps(receipt, indent=1) + "\n")
    gpu = receipt["gpus"]["0"]
    assert receipt["exit_code"] == 0 and receipt["seconds"] >= 8
    assert gpu["energy_wh"] > 0.3 and gpu["peak_power_w"] > 300, receipt  # a matmul loop for 8 s on an H100
    assert gpu["energy_wh"] < gpu["board_wh"] and gpu["idle_wh"] > 0  # the card's idle is kept apart
    assert gpu["idle_unknown_s"] == 0, receipt  # seen idle before the load took it
    assert receipt["cpu_seconds"] > 1  # the load's own CPU (its launch and sync loop), not FanWhy's
