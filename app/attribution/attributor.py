"""Who is behind each GPU: processes, their containers, what nobody accounts for, and rollups.

The collector calls ``attribute`` once per tick with the backend's raw per-process usage.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Sequence, TypeVar

from ..core.model import (
    Assignment,
    ContainerRef,
    ContainerSample,
    GpuProcessUsage,
    GpuSample,
    ProcessGpu,
    ProcessSample,
    Unattributed,
    UserSample,
    evolve,
)
from ..core.record import record
from ..core.vocabulary import MIB, UNATTRIBUTED_FLOOR_BYTES
from .cgroups import CgroupMatch, read_cgroup, read_nspid
from .docker import DockerClient, DockerContainer
from .kubernetes import KubeClient
from .listing import ProcessListing
from .processes import ProcessInspector

N = TypeVar("N", int, float)
HIDDEN_HINT = ("run FanWhy with --pid=host, or mount the host's /proc and set FANWHY_HOST_PROC=/host/proc")


@record
class Attribution:
    processes: tuple[ProcessSample, ...]
    containers: tuple[ContainerSample, ...]
    users: tuple[UserSample, ...]
    unattributed: tuple[Unattributed, ...]


class Attributor:
    def __init__(self, inspector: ProcessInspector, docker: DockerClient | None = None,
                 proc_root: Path | str | None = None, kube: KubeClient | None = None):
        """``proc_root`` is where cgroup and NSpid are read (default: the inspector's /proc). ``kube`` names the
        pods of this node (in a cluster); its names win over Docker's for the same container."""
        self.inspector = inspector
        self.docker = docker
        self.kube = kube
        self.proc_root = Path(proc_root) if proc_root is not None else inspector.proc_root
        self._cgroups: dict[tuple[int, float], tuple[CgroupMatch | None, tuple[int, ...]]] = {}
        self._host_pids = inspector.proc_root != Path("/proc")  # NVML's PIDs are then the host's, not ours
        self.listing = ProcessListing(inspector)  # every process, on demand (a page of the API, top's screen)

    def attribute(self, gpus: Sequence[GpuSample], usages: Sequence[GpuProcessUsage]) -> Attribution:
        known_containers = {**(self.docker.containers() if self.docker is not None else {}),
                            **(self.kube.containers() if self.kube is not None else {})}
        rows = [self._place(row, known_containers) for row in self.inspector.collect(usages)]
        if self.kube is not None and any(r.container is not None and r.container.pod_uid
                                         and f"pod-{r.container.pod_uid}" not in known_containers for r in rows):
            self.kube.request_refresh()  # a pod newer than the last list
        unattributed, rows, container_shares = self._unattributed(gpus, rows, known_containers)
        return Attribution(
            processes=tuple(rows),
            containers=_containers(rows, known_containers, container_shares),
            users=_users(rows),
            unattributed=tuple(unattributed),
        )

    # -- containers -------------------------------------------------------------------------
    def _cgroup(self, pid: int, start_time: float | None) -> tuple[CgroupMatch | None, tuple[int, ...]]:
        """The cgroup and NSpid of a process, cached per (pid, start time): a recycled PID is read afresh."""
        if start_time is None:
            return read_cgroup(self.proc_root, pid), read_nspid(self.proc_root, pid)
        key = (pid, start_time)
        if key not in self._cgroups:
            if len(self._cgroups) > 4096:
                self._cgroups.clear()
            self._cgroups[key] = (read_cgroup(self.proc_root, pid), read_nspid(self.proc_root, pid))
        return self._cgroups[key]

    def _place(self, row: ProcessSample, known: dict[str, DockerContainer]) -> ProcessSample:
        if row.status not in ("ok", "zombie"):
            return row
        match, nspid = self._cgroup(row.pid, row.start_time)
        namespace_pid = nspid[-1] if len(nspid) > 1 else None
        host_pid = row.pid if self._host_pids else None
        if match is None:
            return evolve(row, namespace_pid=namespace_pid, host_pid=host_pid)
        return evolve(row, container=container_ref(match, known), unit=match.unit,
                                   namespace_pid=namespace_pid, host_pid=host_pid)

    # -- what nobody accounts for ---------------------------------------------------------------
    def _unattributed(
        self, gpus: Sequence[GpuSample], rows: list[ProcessSample], known: dict[str, DockerContainer]
    ) -> tuple[list[Unattributed], list[ProcessSample], dict[str, dict[int, int]]]:
        results = []
        container_shares: dict[str, dict[int, int]] = defaultdict(dict)
        visible_containers = {r.container.id for r in rows if r.container is not None and r.status != "vanished"}
        idle_gpu_containers = [c for cid, c in sorted(known.items()) if c.gpu_access and cid not in visible_containers]
        for gpu in gpus:
            if gpu.error is not None or gpu.memory_used_bytes is None:
                continue
            item = _unaccounted(gpu, rows, idle_gpu_containers)
            for a in item.assigned:
                if a.kind == "container":
                    container_shares[a.id][gpu.index] = a.memory_bytes
            results.append(item)
        process_shares = {(int(a.id), u.gpu_index): a.memory_bytes for u in results for a in u.assigned
                          if a.kind == "process"}
        if process_shares:
            rows = [_with_inferred_memory(r, process_shares) for r in rows]
        return results, rows, container_shares


def _unaccounted(gpu: GpuSample, rows: Sequence[ProcessSample],
                 idle_gpu_containers: Sequence[DockerContainer]) -> Unattributed:
    """What one GPU's used memory and utilization leave over once the listed processes are counted, with
    the reason and, where it can be estimated, who it is assigned to (PIDs seen only in utilization
    samples first, then GPU containers with no visible process)."""
    on_gpu = [(r, u) for r in rows for u in r.gpus if u.gpu_index == gpu.index]
    known_bytes = sum(u.memory_bytes for _, u in on_gpu if u.memory_bytes is not None)
    memory = max(0, (gpu.memory_used_bytes or 0) - known_bytes)
    sm = None
    if gpu.utilization_percent is not None:
        sm = round(max(0.0, gpu.utilization_percent - sum(u.sm_percent for _, u in on_gpu
                                                            if u.sm_percent is not None)), 1)
    hidden = [r for r, u in on_gpu if u.memory_bytes is None]
    assigned: list[Assignment] = []
    if memory < UNATTRIBUTED_FLOOR_BYTES:
        reason = "all used memory is accounted for by the processes listed"
    elif hidden:
        share = memory // len(hidden)
        assigned = [Assignment(kind="process", id=str(r.pid), memory_bytes=share) for r in hidden]
        reason = (f"NVML lists no process for {memory / MIB:.0f} MiB, but {len(hidden)} PID(s) appear in its "
                  f"utilization samples: processes in another PID namespace. The memory is split equally "
                  f"among them as an estimate. For exact figures, {HIDDEN_HINT}.")
    elif idle_gpu_containers:
        share = memory // len(idle_gpu_containers)
        assigned = [Assignment(kind="container", id=c.id, memory_bytes=share) for c in idle_gpu_containers]
        reason = (f"no visible process accounts for {memory / MIB:.0f} MiB; split equally among "
                  f"{len(idle_gpu_containers)} GPU container(s) with no visible process, as an estimate")
    else:
        reason = (f"no visible process accounts for {memory / MIB:.0f} MiB: it belongs to processes this "
                  f"FanWhy cannot see (another PID namespace, e.g. a container); {HIDDEN_HINT}")
    return Unattributed(gpu_index=gpu.index, memory_bytes=memory, sm_percent=sm, reason=reason,
                        assigned=tuple(assigned))


def container_ref(match: CgroupMatch, known: dict[str, DockerContainer]) -> ContainerRef | None:
    if match.container_id is None and match.pod_uid is None:
        return None
    found = known.get(match.container_id or "") or known.get(f"pod-{match.pod_uid}")  # a container, or its pod
    if found is not None and found.id != match.container_id and match.container_id is not None:
        found = DockerContainer(id=match.container_id, name=None, image=None, gpu_access=found.gpu_access,
                                pod=found.pod, namespace=found.namespace)  # only the pod is known: not its names
    return ContainerRef(
        runtime=match.runtime or "unknown",
        id=match.container_id or f"pod-{match.pod_uid}",
        name=found.name if found else None,
        image=found.image if found else None,
        pod=(found.pod if found and found.pod else match.pod_uid),
        namespace=found.namespace if found else None,
        pod_uid=match.pod_uid,
    )


def _with_inferred_memory(row: ProcessSample, shares: dict[tuple[int, int], int]) -> ProcessSample:
    gpus = tuple(
        evolve(g, memory_bytes=shares[(row.pid, g.gpu_index)], memory_method="inference")
        if (row.pid, g.gpu_index) in shares and g.memory_bytes is None else g
        for g in row.gpus
    )
    return evolve(row, gpus=gpus)


def _sum(values: Sequence[N | None]) -> N | None:
    known = [v for v in values if v is not None]
    return sum(known[1:], known[0]) if known else None


def _gpu_usages(rows: Sequence[ProcessSample]) -> list[ProcessGpu]:
    return [u for r in rows for u in r.gpus]


def _containers(rows: Sequence[ProcessSample], known: dict[str, DockerContainer],
                shares: dict[str, dict[int, int]]) -> tuple[ContainerSample, ...]:
    groups: dict[str, list[ProcessSample]] = defaultdict(list)
    refs: dict[str, ContainerRef] = {}
    for row in rows:
        if row.container is not None:
            groups[row.container.id].append(row)
            refs[row.container.id] = row.container
    out = []
    for cid, members in groups.items():
        usages = _gpu_usages(members)
        inferred = any(u.memory_method == "inference" for u in usages)
        memory = _sum([u.memory_bytes for u in usages])
        out.append(ContainerSample(
            container=refs[cid],
            gpu_access=known[cid].gpu_access if cid in known else (True if usages else None),
            pids=tuple(sorted(r.pid for r in members)),
            gpu_indices=tuple(sorted({u.gpu_index for u in usages})),
            gpu_memory_bytes=memory,
            memory_method="inference" if inferred else ("reported" if memory is not None else "none"),
            sm_percent=_sum([u.sm_percent for u in usages]),
            cpu_percent=_sum([r.cpu_percent for r in members]),
        ))
    out.extend(_idle_gpu_container(cid, container, shares.get(cid, {})) for cid, container in sorted(known.items())
               if cid not in groups and container.gpu_access and not cid.startswith("pod-"))
    out.sort(key=lambda c: (-(c.gpu_memory_bytes or 0), -(c.sm_percent or 0), c.container.id))
    return tuple(out)


def _idle_gpu_container(cid: str, container: DockerContainer, per_gpu: dict[int, int]) -> ContainerSample:
    """A container with GPU access and no process on a GPU: listed at 0, or with the memory inferred for it."""
    return ContainerSample(
        container=ContainerRef(runtime="docker", id=cid, name=container.name, image=container.image,
                               pod=container.pod, namespace=container.namespace),
        gpu_access=True, pids=(), gpu_indices=tuple(sorted(per_gpu)),
        gpu_memory_bytes=sum(per_gpu.values()) if per_gpu else 0,
        memory_method="inference" if per_gpu else "none", sm_percent=0.0, cpu_percent=0.0,
    )


def _users(rows: Sequence[ProcessSample]) -> tuple[UserSample, ...]:
    groups: dict[str, list[ProcessSample]] = defaultdict(list)
    for row in rows:
        groups[row.user or "unknown"].append(row)
    out = []
    for user, members in groups.items():
        usages = _gpu_usages(members)
        out.append(UserSample(user=user, pids=tuple(sorted(r.pid for r in members)),
                              gpu_memory_bytes=_sum([u.memory_bytes for u in usages]),
                              sm_percent=_sum([u.sm_percent for u in usages]),
                              cpu_percent=_sum([r.cpu_percent for r in members])))
    out.sort(key=lambda u: (-(u.gpu_memory_bytes or 0), -(u.cpu_percent or 0), u.user))
    return tuple(out)
