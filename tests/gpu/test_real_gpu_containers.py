"""On a real NVIDIA GPU: a CUDA load in a Docker-named cgroup, and FanWhy in its own PID namespace.

(a) the load, moved into <cgroup2>/system.slice/docker-<64 hex>.scope, is attributed to that container id;
(b) FanWhy under `unshare --pid --fork --mount-proc` gets an empty NVML process list, yet reports the load as
    host-pid-only with its SM %, and the unattributed memory within 5 % of what nvidia-smi shows for it;
(c) the same with the host's /proc bind-mounted at FANWHY_HOST_PROC: fully attributed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import cgroup_helper

pytestmark = pytest.mark.gpu
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CONTAINER_ID = "f00d" * 16
REPORT: dict = {}


def smi_process_mib(pid: int) -> float:
    out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True, timeout=30, check=True).stdout
    return {int(p): float(m) for p, m in (line.split(",") for line in out.strip().splitlines())}[pid]


def snapshot(prefix: list[str], **env: str) -> dict:
    result = subprocess.run([*prefix, sys.executable, "-m", "app", "snapshot", "--json"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "FANWHY_BACKEND": "nvidia", **env})
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def load() -> Iterator[subprocess.Popen]:
    reason = cgroup_helper.unavailable()
    if reason:
        pytest.skip(reason)
    if not shutil.which("unshare"):
        pytest.skip("unshare not found")
    with cgroup_helper.scope(f"system.slice/docker-{CONTAINER_ID}.scope") as group:
        proc = subprocess.Popen([sys.executable, str(HERE / "cuda_load.py"), "--seconds", "150", "--hold-gb", "6"],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        cgroup_helper.move(proc.pid, group)
        time.sleep(2)
        try:
            yield proc
        finally:
            proc.kill()
            proc.wait()
            proc.stdout.close()
            if os.environ.get("FANWHY_GPU_REPORT_DIR"):
                report = Path(os.environ["FANWHY_GPU_REPORT_DIR"]) / "gpu-containers-report.json"
                report.write_text(json.dumps(REPORT, indent=2))


def test_a_load_in_a_docker_named_cgroup_is_attributed_to_that_container(load: subprocess.Popen) -> None:
    body = snapshot([])
    (row,) = [p for p in body["processes"] if p["pid"] == load.pid]
    assert row["visibility"] == "visible"
    assert row["container"]["id"] == CONTAINER_ID and row["container"]["runtime"] == "docker"
    assert any(c["container"]["id"] == CONTAINER_ID for c in body["containers"])
    REPORT["a"] = {"pid": load.pid, "container": row["container"], "cgroup": Path(f"/proc/{load.pid}/cgroup")
                   .read_text().strip().splitlines()[-1]}


def test_in_its_own_pid_namespace_fanwhy_still_reports_the_hidden_load(load: subprocess.Popen) -> None:
    body = snapshot(["unshare", "--pid", "--fork", "--mount-proc"])
    gpu_rows = [p for p in body["processes"] if p["gpus"]]
    assert not [p for p in gpu_rows if p["visibility"] == "visible"], "NVML listed a process across namespaces"
    (hidden,) = [p for p in gpu_rows if p["pid"] == load.pid]
    assert hidden["visibility"] == "host-pid-only" and hidden["status"] == "outside-namespace"
    assert hidden["sm_percent"] is not None and hidden["sm_percent"] > 0
    gpu_index = hidden["gpus"][0]["gpu_index"]
    (unattributed,) = [u for u in body["unattributed"] if u["gpu_index"] == gpu_index]
    smi_bytes = smi_process_mib(load.pid) * 2**20
    assert unattributed["memory_bytes"] == pytest.approx(smi_bytes, rel=0.05)
    assert "another PID namespace" in unattributed["reason"]
    REPORT["b"] = {"row": {k: hidden[k] for k in ("pid", "visibility", "status", "sm_percent", "name")},
                   "unattributed_mib": unattributed["memory_bytes"] / 2**20, "nvidia_smi_mib": smi_bytes / 2**20,
                   "reason": unattributed["reason"]}


def test_with_the_host_proc_mounted_the_hidden_load_is_fully_attributed(load: subprocess.Popen) -> None:
    host_proc = Path(tempfile.mkdtemp(prefix="hostproc-"))
    subprocess.run(["mount", "--bind", "/proc", str(host_proc)], check=True)
    try:
        body = snapshot(["unshare", "--pid", "--fork", "--mount-proc"], FANWHY_HOST_PROC=str(host_proc))
    finally:
        subprocess.run(["umount", str(host_proc)], check=False)
        host_proc.rmdir()
    (row,) = [p for p in body["processes"] if p["pid"] == load.pid]
    assert row["visibility"] == "host-pid-only" and row["status"] == "ok"
    assert row["name"].startswith("python") and "cuda_load.py" in row["command"]
    assert row["container"]["id"] == CONTAINER_ID
    assert row["sm_percent"] is not None and row["sm_percent"] > 0
    REPORT["c"] = {k: row[k] for k in ("pid", "host_pid", "visibility", "status", "name", "command", "container",
                                       "sm_percent")}
