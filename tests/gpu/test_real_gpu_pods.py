"""On a real NVIDIA GPU: a CUDA load in a pod-shaped cgroup, in its own PID namespace, seen by FanWhy
running in another PID namespace with the host's /proc mounted: reported with its pod's UID from the cgroup path,
and with its namespace, pod and container names once a (fake) Kubernetes API serves that pod."""

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
from tests.integration.test_kubernetes import TOKEN, FakeApi, pod

pytestmark = pytest.mark.gpu
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
POD_UID = "4a3b2c1d-0e9f-8a7b-6c5d-4e3f2a1b0c9d"
CONTAINER_ID = "c0de" * 16
REPORT: dict = {}


def child_of(pid: int, timeout: float = 10.0) -> int:
    """The PID (in our namespace) of the process `unshare --pid --fork` started."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if children:
            return int(children[0])
        time.sleep(0.05)
    raise AssertionError("unshare started no child")


@pytest.fixture(scope="module")
def load() -> Iterator[int]:
    reason = cgroup_helper.unavailable()
    if reason:
        pytest.skip(reason)
    if not shutil.which("unshare") or not shutil.which("openssl"):
        pytest.skip("unshare or openssl not found")
    slice_path = (f"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{POD_UID.replace('-', '_')}.slice/"
                  f"cri-containerd-{CONTAINER_ID}.scope")
    with cgroup_helper.scope(slice_path) as group:
        # its own PID namespace with its own /proc (CUDA refused to start in a PID namespace showing the host's)
        outer = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", sys.executable,
                                  str(HERE / "cuda_load.py"), "--seconds", "120", "--hold-gb", "2"],
                                 stdout=subprocess.PIPE, text=True)
        inner = None
        try:
            assert outer.stdout is not None and outer.stdout.readline().strip() == "ready"
            inner = child_of(outer.pid)
            cgroup_helper.move(inner, group)
            time.sleep(2)
            yield inner
        finally:
            outer.kill()
            if inner is not None:
                subprocess.run(["kill", "-9", str(inner)], check=False)
            outer.wait()
            if outer.stdout is not None:
                outer.stdout.close()
            if os.environ.get("FANWHY_GPU_REPORT_DIR"):
                report = Path(os.environ["FANWHY_GPU_REPORT_DIR"]) / "gpu-pods-report.json"
                report.write_text(json.dumps(REPORT, indent=2))


def snapshot_outside(**env: str) -> dict:
    host_proc = Path(tempfile.mkdtemp(prefix="hostproc-"))
    subprocess.run(["mount", "--bind", "/proc", str(host_proc)], check=True)
    try:
        result = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-m", "app", "snapshot",
                                 "--json"], cwd=ROOT, capture_output=True, text=True, timeout=120,
                                env={**os.environ, "FANWHY_BACKEND": "nvidia", "FANWHY_HOST_PROC": str(host_proc),
                                     **env})
    finally:
        subprocess.run(["umount", str(host_proc)], check=False)
        host_proc.rmdir()
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


def test_the_load_carries_its_pod_uid_from_the_cgroup_path(load: int) -> None:
    body = snapshot_outside()
    (row,) = [p for p in body["processes"] if p["pid"] == load]
    assert row["container"]["pod_uid"] == POD_UID and row["container"]["id"] == CONTAINER_ID
    assert row["container"]["runtime"] == "containerd" and row["sm_percent"] and row["namespace_pid"] == 1
    REPORT["uid_only"] = {k: row[k] for k in ("pid", "namespace_pid", "visibility", "status", "container",
                                              "sm_percent")}


def test_with_the_api_the_load_is_named(load: int, tmp_path: Path) -> None:
    api = FakeApi(tmp_path)
    api.pods = [pod("trainer-0", POD_UID, [("trainer", CONTAINER_ID, True)], node="gpu-node-1")]
    account = tmp_path / "account"
    account.mkdir()
    (account / "token").write_text(TOKEN)
    shutil.copy(api.cert, account / "ca.crt")
    try:
        body = snapshot_outside(KUBERNETES_SERVICE_HOST="127.0.0.1", KUBERNETES_SERVICE_PORT=str(api.port),
                                NODE_NAME="gpu-node-1", FANWHY_KUBE_ACCOUNT=str(account))
    finally:
        api.server.shutdown()
        api.server.server_close()
    (row,) = [p for p in body["processes"] if p["pid"] == load]
    ref = row["container"]
    assert (ref["namespace"], ref["pod"], ref["name"], ref["pod_uid"]) == ("ml", "trainer-0", "trainer", POD_UID)
    REPORT["named"] = {"pid": row["pid"], "container": ref, "sm_percent": row["sm_percent"],
                       "verdict": body["verdict"]["headline"]}
