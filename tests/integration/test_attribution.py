"""Attribution: containers from real cgroups, names from a Docker API, unattributed memory, inference, rollups."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.attribution.attributor import Attributor
from app.attribution.docker import DockerClient
from app.attribution.processes import ProcessInspector
from app.core.model import GpuProcessUsage, GpuSample, ProcessSample, UsageKind
from tests import cgroup_helper
from tests.conftest import nvidia_selection
from tests.fakes.docker_api import FakeDockerApi, container
from tests.fakes.fake_nvml import absent_pid, scenario
from tests.support.children import sleeping

GB = 10**9
A, B, C = "a" * 64, "b" * 64, "c" * 64


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen]:
    with sleeping() as proc:
        yield proc


def gpu(used: int, util: float = 90.0, index: int = 0) -> GpuSample:
    return GpuSample(vendor="nvidia", index=index, uuid=f"GPU-{index}", name="Test", memory_used_bytes=used,
                     memory_total_bytes=80 * GB, utilization_percent=util)


def use(pid: int, memory: int | None, sm: float | None = 10.0, kind: UsageKind = "compute",
        index: int = 0) -> GpuProcessUsage:
    return GpuProcessUsage(pid=pid, gpu_index=index, memory_bytes=memory, sm_percent=sm, kind=kind)


def test_inference_splits_unattributed_memory_among_idle_gpu_containers(tmp_path: Path, sleeper: Any) -> None:
    """The seed's arithmetic: 10 GB used, 2 GB known, two GPU containers with no visible process -> 4 GB each."""
    sock = tmp_path / "docker.sock"
    with FakeDockerApi(sock, [container(A, "ollama", "ollama/ollama", gpu="device-request"),
                              container(B, "vllm", "vllm/vllm-openai", gpu="runtime"),
                              container(C, "web", "nginx")]):
        attributor = Attributor(ProcessInspector(top_cpu=0), DockerClient(str(sock)))
        result = attributor.attribute([gpu(10 * GB)], [use(sleeper.pid, 2 * GB)])
    (unattributed,) = result.unattributed
    assert unattributed.memory_bytes == 8 * GB
    assert [(a.kind, a.id, a.memory_bytes, a.method) for a in unattributed.assigned] == [
        ("container", A, 4 * GB, "inference"), ("container", B, 4 * GB, "inference")]
    assert "estimate" in unattributed.reason
    by_name = {c.container.name: c for c in result.containers}
    assert set(by_name) == {"ollama", "vllm"}  # the web container has no GPU access: not listed
    assert by_name["ollama"].gpu_memory_bytes == 4 * GB and by_name["ollama"].memory_method == "inference"
    assert by_name["ollama"].pids == () and by_name["ollama"].gpu_indices == (0,)


def test_idle_gpu_containers_are_listed_with_zero_usage(tmp_path: Path, sleeper: Any) -> None:
    sock = tmp_path / "docker.sock"
    with FakeDockerApi(sock, [container(A, "trainer", "pytorch", gpu="env")]):
        result = Attributor(ProcessInspector(top_cpu=0), DockerClient(str(sock))).attribute(
            [gpu(2 * GB)], [use(sleeper.pid, 2 * GB)])
    (idle,) = result.containers
    assert idle.container.name == "trainer" and idle.gpu_access is True
    assert (idle.gpu_memory_bytes, idle.sm_percent, idle.memory_method) == (0, 0.0, "none")
    assert result.unattributed[0].memory_bytes == 0 and result.unattributed[0].assigned == ()


def test_pids_hidden_by_a_pid_namespace_are_reported_with_their_sm_share(sleeper: Any) -> None:
    """As real GPUs showed (tests/fixtures/nvml): the list is empty, the utilization samples carry host PIDs we
    cannot resolve."""
    inspector = ProcessInspector(top_cpu=0, resolve_foreign=False)
    hidden, other = absent_pid(4242), absent_pid(4243)  # host PIDs: none of this machine's processes
    result = Attributor(inspector).attribute(
        [gpu(8 * GB, util=98)], [use(hidden, None, sm=70, kind="utilization-only"),
                                 use(other, None, sm=20, kind="utilization-only")])
    rows = {r.pid: r for r in result.processes}
    assert rows[hidden].visibility == "host-pid-only" and rows[hidden].status == "outside-namespace"
    assert rows[hidden].name is None and rows[hidden].sm_percent == 70
    assert rows[hidden].gpus[0].memory_bytes == 4 * GB and rows[hidden].gpus[0].memory_method == "inference"
    (unattributed,) = result.unattributed
    assert unattributed.memory_bytes == 8 * GB and unattributed.sm_percent == 8.0
    assert "another PID namespace" in unattributed.reason and "FANWHY_HOST_PROC" in unattributed.reason


def test_memory_nobody_accounts_for_is_explained(sleeper: Any) -> None:
    result = Attributor(ProcessInspector(top_cpu=0)).attribute([gpu(5 * GB)], [use(sleeper.pid, 1 * GB)])
    (unattributed,) = result.unattributed
    assert unattributed.memory_bytes == 4 * GB and unattributed.assigned == ()
    assert "cannot see" in unattributed.reason and "--pid=host" in unattributed.reason


def test_a_recycled_pid_is_never_given_the_old_process_container(tmp_path: Path) -> None:
    proc_root = tmp_path / "proc"
    (proc_root / "700").mkdir(parents=True)
    (proc_root / "700" / "cgroup").write_text(f"0::/system.slice/docker-{A}.scope\n")
    attributor = Attributor(ProcessInspector(top_cpu=0), proc_root=proc_root)
    old = ProcessSample(pid=700, name="train", user="u", command=None, start_time=1000.0, cpu_percent=None,
                        rss_bytes=None)
    placed = attributor._place(old, {})
    assert placed.container is not None and placed.container.id == A
    (proc_root / "700" / "cgroup").write_text("0::/user.slice/user-1000.slice/session-2.scope\n")  # PID reused
    new = ProcessSample(pid=700, name="bash", user="u", command=None, start_time=2000.0, cpu_percent=None,
                        rss_bytes=None)
    assert attributor._place(new, {}).container is None
    assert attributor._place(old, {}).container.id == A  # type: ignore[union-attr]  # same process: cached


def test_rollups_per_user_and_container(sleeper: Any) -> None:
    with sleeping() as other:
        result = Attributor(ProcessInspector(top_cpu=0)).attribute(
            [gpu(6 * GB), gpu(1 * GB, index=1)],
            [use(sleeper.pid, 2 * GB, sm=30), use(other.pid, 3 * GB, sm=40), use(other.pid, 1 * GB, sm=5, index=1)])
    (user,) = result.users
    assert user.gpu_memory_bytes == 6 * GB and user.sm_percent == 75
    assert user.pids == tuple(sorted((sleeper.pid, other.pid)))


@pytest.mark.skipif(cgroup_helper.unavailable() is not None, reason=str(cgroup_helper.unavailable()))
def test_a_process_in_a_real_docker_named_cgroup_is_attributed_end_to_end(
        tmp_path: Path, sleeper: Any, make_app: Any) -> None:
    """A real kernel cgroup named like Docker's, a Docker API naming it, NVML reporting the PID: the API says
    which container, by name, with its memory; /api/gpu/containers rolls it up."""
    sock = tmp_path / "docker.sock"
    fake = scenario("h100_load")
    fake.set(0, "compute_processes", [{"pid": sleeper.pid, "usedGpuMemory": 7052722176,
                                       "gpuInstanceId": 4294967295, "computeInstanceId": 4294967295}])
    fake.set(0, "process_utilization", [{"pid": sleeper.pid, "timeStamp": 0, "smUtil": 97, "memUtil": 30,
                                         "encUtil": 0, "decUtil": 0}])
    with cgroup_helper.scope(f"system.slice/docker-{A}.scope") as group, \
            FakeDockerApi(sock, [container(A, "trainer", "pytorch/pytorch:2.5", gpu="device-request")]):
        cgroup_helper.move(sleeper.pid, group)
        app = make_app(nvidia_selection(fake), start=False, docker_socket=str(sock))
        app.extensions["fanwhy"].collector.collect()
        client = app.test_client()
        rows = client.get("/api/gpu/processes?kind=gpu").get_json()["processes"]
        body = client.get("/api/gpu/containers").get_json()
    (row,) = rows
    assert row["pid"] == sleeper.pid
    assert row["container"] == {"runtime": "docker", "id": A, "name": "trainer", "image": "pytorch/pytorch:2.5",
                                "pod": None, "namespace": None, "pod_uid": None}
    (rollup,) = body["containers"]
    assert rollup["container"]["name"] == "trainer" and rollup["pids"] == [sleeper.pid]
    assert rollup["gpu_memory_bytes"] == 7052722176 and rollup["memory_method"] == "reported"
    assert rollup["sm_percent"] == 97.0
    assert body["unattributed"][0]["memory_bytes"] == 7061962752 - 7052722176 - 0  # the dump's v2 'used' minus it


def test_containers_endpoint_rejects_bad_input(client: Any) -> None:
    assert client.get("/api/gpu/containers?gpu=x").status_code == 400
    assert client.get("/api/gpu/containers?gpu=9").status_code == 404
    body = client.get("/api/gpu/containers").get_json()
    assert set(body) == {"timestamp", "count", "containers", "users", "unattributed"}


@pytest.mark.parametrize("names_only", [False, True])
@pytest.mark.parametrize(("title", "secret", "shown"), [
    ("php -d mysql.default_password=Pw9k3Yqk3Yq worker.php", "Pw9k3Yqk3Yq",
     "php -d mysql.default_password=**** worker.php"),  # a title is kept whole (nginx: worker process), masked
    ("notifier xoxb-1234-5678-abcdefgh", "xoxb-1234-5678-abcdefgh", "notifier ****"),
    ("worker -pZq7gluedsecret", "Zq7gluedsecret", "worker -p****"),  # a glued short flag that reads as a password
    ("notify xoxb-123456789012", "xoxb-123456789012", "notify ****"),  # 17 characters: the shortest Slack token
])
def test_a_process_whose_argv0_holds_a_command_line_has_its_program_masked(names_only: bool, title: str,
                                                                           secret: str, shown: str) -> None:
    """setproctitle or ``exec -a`` put a whole command line in argv[0]: the program's name is made from the masked
    words, with command lines shown or not (FANWHY_NAMES_ONLY)."""
    from app.core.redact import Redactor

    proc = subprocess.Popen(["bash", "-c", f"exec -a '{title}' sleep 60"])
    try:
        deadline = time.monotonic() + 30
        while True:  # until bash has become the titled sleep (a fresh reader each time: it keeps what it read);
            # mid-exec the kernel shows the new name with an empty command line for a moment: wait past it too
            inspector = ProcessInspector(top_cpu=0, redactor=Redactor(names_only=names_only))
            row = Attributor(inspector).attribute([gpu(2 * GB)], [use(proc.pid, 1 * GB)]).processes[0]
            if row.program == shown or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert row.program == shown, row
        assert secret not in repr(row)
        assert (row.command is None) == names_only
    finally:
        proc.kill()
        proc.wait()
