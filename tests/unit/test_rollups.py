"""The attributor's rollups and placement rules, each pinned: per container and per user (sums, order, the
memory method, GPU access), a container's reference (pod, namespace, runtime), and a process's PIDs in and out of
its PID namespace. Written against the mutants `make mutation` found alive in app/attribution/attributor.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from app.attribution.attributor import Attributor, _containers, _users, container_ref
from app.attribution.cgroups import CgroupMatch
from app.attribution.docker import DockerContainer
from app.attribution.processes import ProcessInspector
from app.core.model import ContainerRef, MemoryMethod, ProcessGpu, ProcessSample

A, B, C = "a" * 64, "b" * 64, "c" * 64


def proc(pid: int, user: str | None = "ann", cpu: float | None = 1.0, container: str | None = None,
         *uses: tuple[int, int | None, float | None, MemoryMethod]) -> ProcessSample:
    gpus = tuple(ProcessGpu(gpu_index=i, memory_bytes=m, sm_percent=sm, encoder_percent=0, decoder_percent=0,
                            kind="compute", memory_method=method) for i, m, sm, method in uses)
    ref = ContainerRef(runtime="docker", id=container, name=container[:3]) if container else None
    return ProcessSample(pid=pid, name="p", user=user, command=None, start_time=1.0, cpu_percent=cpu, rss_bytes=1,
                         gpus=gpus, container=ref)


def test_containers_add_up_their_processes_and_say_how_memory_is_known() -> None:
    rows = [proc(3, "ann", 5.0, A, (0, 100, 30.0, "reported")), proc(1, "bob", 2.0, A, (1, 50, 10.0, "inference")),
            proc(2, "ann", 4.0, B, (0, None, None, "none")), proc(4, "cat", None, C)]
    known = {A: DockerContainer(A, "aaa", "img", gpu_access=False), "d" * 64: DockerContainer("d" * 64, "ddd", "i",
                                                                                               gpu_access=True)}
    out = {c.container.id: c for c in _containers(rows, known, {"d" * 64: {1: 7}})}
    a, b, c, d = out[A], out[B], out[C], out["d" * 64]
    assert (a.pids, a.gpu_indices, a.gpu_memory_bytes, a.sm_percent, a.cpu_percent) == ((1, 3), (0, 1), 150, 40.0,
                                                                                        7.0)
    assert a.memory_method == "inference" and a.gpu_access is False  # the Docker API's word wins
    assert b.memory_method == "none" and b.gpu_memory_bytes is None and b.gpu_access is True  # uses a GPU
    assert c.gpu_access is None and c.memory_method == "none" and c.cpu_percent is None  # no GPU use, no CPU known
    assert (d.pids, d.gpu_indices, d.gpu_memory_bytes, d.memory_method) == ((), (1,), 7, "inference")
    order = [x.container.id for x in _containers(rows, known, {"d" * 64: {1: 7}})]
    assert order == [A, "d" * 64, B, C]  # most memory first, then SM, then id
    reported = _containers([proc(5, "ann", 1.0, B, (0, 9, 0.0, "reported"))], {}, {})
    assert reported[0].memory_method == "reported"


def test_users_add_up_and_sort_by_memory_then_cpu_then_name() -> None:
    rows = [proc(1, "bob", 50.0, None), proc(2, None, 1.0, None, (0, 10, 5.0, "reported")),
            proc(3, "ann", 10.0, None), proc(4, "ann", 5.0, None, (0, 20, 50.0, "reported"))]
    users = _users(rows)
    assert [(u.user, u.pids, u.gpu_memory_bytes, u.sm_percent, u.cpu_percent) for u in users] == [
        ("ann", (3, 4), 20, 50.0, 15.0), ("unknown", (2,), 10, 5.0, 1.0), ("bob", (1,), None, None, 50.0)]


def ref(match: CgroupMatch, known: dict[str, DockerContainer]) -> ContainerRef:
    found = container_ref(match, known)
    assert found is not None
    return found


def test_a_container_reference_from_the_cgroup_and_the_docker_api() -> None:
    pod = "12345678-1234-1234-1234-123456789012"
    bare = ref(CgroupMatch(container_id=A), {})
    assert (bare.runtime, bare.id, bare.name, bare.image, bare.pod, bare.namespace) == ("unknown", A, None, None,
                                                                                         None, None)
    named = ref(CgroupMatch(runtime="containerd", container_id=A, pod_uid=pod),
                          {A: DockerContainer(A, "web", "nginx", True, pod="web-1", namespace="prod")})
    assert (named.runtime, named.name, named.image, named.pod, named.namespace) == ("containerd", "web", "nginx",
                                                                                    "web-1", "prod")
    unnamed_pod = ref(CgroupMatch(runtime="containerd", container_id=A, pod_uid=pod),
                                {A: DockerContainer(A, "web", "nginx", True)})
    assert unnamed_pod.pod == pod and unnamed_pod.namespace is None
    pause = ref(CgroupMatch(runtime="kubernetes", pod_uid=pod), {})
    assert pause.id == f"pod-{pod}" and pause.pod == pod
    assert container_ref(CgroupMatch(unit="sshd.service"), {}) is None


def test_placement_sets_namespace_and_host_pids_and_leaves_gone_processes_alone(tmp_path: Path,
                                                                                 monkeypatch: Any) -> None:
    attributor = Attributor(ProcessInspector(top_cpu=0, proc_root=tmp_path, resolve_foreign=True))
    answers = {1: (CgroupMatch(container_id=A, unit=None), (1, 77)), 2: (None, (2,)),
               3: (CgroupMatch(unit="ollama.service"), (3, 9, 5))}
    monkeypatch.setattr(attributor, "_cgroup", lambda pid, start: answers[pid])
    placed = {p.pid: attributor._place(proc(p.pid), {}) for p in (proc(1), proc(2), proc(3))}
    assert placed[1].container is not None and placed[1].container.id == A
    assert (placed[1].namespace_pid, placed[1].host_pid) == (77, 1)
    assert (placed[2].namespace_pid, placed[2].host_pid, placed[2].container) == (None, 2, None)
    assert (placed[3].namespace_pid, placed[3].unit, placed[3].container) == (5, "ollama.service", None)
    zombie = attributor._place(replace(proc(1), status="zombie"), {})
    assert zombie.namespace_pid == 77
    gone = replace(proc(1), status="vanished")
    assert attributor._place(gone, {}) is gone
    ours = Attributor(ProcessInspector(top_cpu=0))  # our own /proc: NVML's PIDs are ours, no host PID to add
    monkeypatch.setattr(ours, "_cgroup", lambda pid, start: answers[pid])
    assert ours._place(proc(2), {}).host_pid is None


def test_what_no_process_accounts_for_on_one_gpu_in_each_case() -> None:
    from app.attribution.attributor import HIDDEN_HINT, _unaccounted
    from app.core.model import GpuSample
    from app.core.vocabulary import UNATTRIBUTED_FLOOR_BYTES

    mib = 2**20

    def gpu(used: int, util: float | None = 90.0) -> GpuSample:
        return GpuSample(vendor="nvidia", index=0, memory_used_bytes=used, utilization_percent=util)

    listed = proc(1, "ann", 1.0, None, (0, 1000 * mib, 30.0, "reported"))
    below = _unaccounted(gpu(1000 * mib + UNATTRIBUTED_FLOOR_BYTES - 1), [listed], [])
    assert below.reason == "all used memory is accounted for by the processes listed" and below.assigned == ()
    assert below.memory_bytes == UNATTRIBUTED_FLOOR_BYTES - 1 and below.sm_percent == 60.0
    hidden = [proc(2, None, None, None, (0, None, 40.0, "none")), proc(3, None, None, None, (0, None, 25.5, "none"))]
    split = _unaccounted(gpu(1000 * mib + 3000 * mib, 95.5), [listed, *hidden], [])
    assert [(a.kind, a.id, a.memory_bytes) for a in split.assigned] == [("process", "2", 1500 * mib),
                                                                         ("process", "3", 1500 * mib)]
    assert split.reason.startswith("NVML lists no process for 3000 MiB, but 2 PID(s) appear in its utilization")
    assert split.reason.endswith(f"For exact figures, {HIDDEN_HINT}.") and split.sm_percent == 0.0
    boxes = [DockerContainer(A, "a", "i", True), DockerContainer(B, "b", "i", True)]
    estimate = _unaccounted(gpu(1000 * mib + 4000 * mib), [listed], boxes)
    assert [(a.kind, a.id, a.memory_bytes) for a in estimate.assigned] == [("container", A, 2000 * mib),
                                                                            ("container", B, 2000 * mib)]
    assert estimate.reason == ("no visible process accounts for 4000 MiB; split equally among 2 GPU container(s) "
                               "with no visible process, as an estimate")
    nobody = _unaccounted(gpu(1000 * mib + 500 * mib, None), [listed], [])
    assert nobody.reason.startswith("no visible process accounts for 500 MiB: it belongs to processes this FanWhy")
    assert nobody.reason.endswith(HIDDEN_HINT) and nobody.sm_percent is None and nobody.assigned == ()
    over = _unaccounted(gpu(10 * mib), [listed], [])
    assert over.memory_bytes == 0  # the processes report more than the GPU: nothing is negative


def test_kubernetes_names_win_over_dockers_and_an_unknown_pod_asks_for_a_list(monkeypatch: Any) -> None:
    from app.core.model import GpuProcessUsage

    class Names:
        def __init__(self, known: dict[str, DockerContainer]):
            self.known, self.asked = known, 0

        def containers(self) -> dict[str, DockerContainer]:
            return self.known

        def request_refresh(self) -> None:
            self.asked += 1

    uid = "12345678-1234-1234-1234-123456789012"
    docker = Names({A: DockerContainer(A, "k8s_trainer_pod", "img", True)})
    kube = Names({A: DockerContainer(A, "trainer", "img", True, pod="trainer-0", namespace="ml"),
                  f"pod-{uid}": DockerContainer(f"pod-{uid}", None, None, True, pod="trainer-0", namespace="ml")})
    attributor = Attributor(ProcessInspector(top_cpu=0), docker, kube=kube)  # type: ignore[arg-type]  # duck types
    answers = {1: CgroupMatch(runtime="containerd", container_id=A, pod_uid=uid)}
    monkeypatch.setattr(attributor, "_cgroup", lambda pid, start: (answers[pid], (pid,)))
    monkeypatch.setattr(attributor.inspector, "collect", lambda usages: [proc(1, "ann", 1.0, None)])
    result = attributor.attribute([], [GpuProcessUsage(pid=1, gpu_index=0, memory_bytes=1, sm_percent=1.0,
                                                       kind="compute")])
    (row,) = result.processes
    assert row.container is not None and (row.container.name, row.container.pod) == ("trainer", "trainer-0")
    assert kube.asked == 0  # the pod is in the last list
    assert [c.container.id for c in result.containers] == [A]  # the pod's own entry is no idle container
    answers[1] = CgroupMatch(runtime="containerd", container_id=C, pod_uid="99999999-1234-1234-1234-123456789012")
    attributor._cgroups.clear()
    attributor.attribute([], [])
    assert kube.asked == 1  # a pod the last list did not have
