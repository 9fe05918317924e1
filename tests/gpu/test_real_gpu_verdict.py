"""On a real NVIDIA GPU: a heavy matmul beside a process that holds 20 GB and computes nothing.

The verdict must name the matmul process (not the memory holder), with more than 80 % of the GPU's
power attributed to it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def start(*args: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, str(HERE / "cuda_load.py"), "--seconds", "90", *args],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


@pytest.fixture(scope="module")
def loads() -> Iterator[tuple[subprocess.Popen, subprocess.Popen]]:
    holder = start("--hold-gb", "20", "--no-compute")
    matmul = start("--hold-gb", "2")
    time.sleep(3)
    yield matmul, holder
    for proc in (matmul, holder):
        proc.kill()
        proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]  # started with stdout=PIPE, so never None


def test_the_verdict_names_the_matmul_not_the_memory_holder(loads: tuple[subprocess.Popen, subprocess.Popen]) -> None:
    matmul, holder = loads
    result = subprocess.run([sys.executable, "-m", "app", "snapshot", "--json"], cwd=ROOT, capture_output=True,
                            text=True, timeout=120, env={**os.environ, "FANWHY_BACKEND": "nvidia"})
    assert result.returncode == 0, result.stderr[-2000:]
    body = json.loads(result.stdout)
    verdict = body["verdict"]
    top = verdict["causes"][0] if verdict["causes"][0]["kind"] == "gpu_load" else next(
        c for c in verdict["causes"] if c["kind"] == "gpu_load")
    assert top["pid"] == matmul.pid, verdict
    assert "cuda_load.py" in verdict["headline"] and "keeps" in verdict["headline"]
    rows = {p["pid"]: p for p in body["processes"]}
    gpu = next(g for g in body["gpus"] if g["index"] == top["gpu_index"])
    share = rows[matmul.pid]["power_w"] / gpu["power_w"]
    assert share > 0.8, (rows[matmul.pid]["power_w"], gpu["power_w"])
    assert rows[holder.pid]["gpu_memory_bytes"] > 19 * 2**30 and rows[holder.pid]["power_w"] == 0
    holder_cause = [c for c in verdict["causes"] if c["kind"] == "memory_holder" and c["pid"] == holder.pid]
    assert holder_cause, verdict["causes"]
    # a passive card with no BMC read: no fan of its own, and the chassis clause stays
    assert not [f for f in body["fans"] if f["gpu_index"] is not None]
    assert top["summary"].endswith("it has no fan of its own (passively cooled): the chassis fans answer its heat."), \
        top["summary"]
    if os.environ.get("FANWHY_GPU_REPORT_DIR"):
        report = {"headline": verdict["headline"], "confidence": verdict["confidence"],
                  "causes": [c["summary"] for c in verdict["causes"]], "matmul_pid": matmul.pid,
                  "holder_pid": holder.pid, "matmul_power_w": rows[matmul.pid]["power_w"],
                  "gpu_power_w": gpu["power_w"], "matmul_share": share}
        (Path(os.environ["FANWHY_GPU_REPORT_DIR"]) / "gpu-verdict-report.json").write_text(json.dumps(report, indent=2))
