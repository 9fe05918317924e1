"""cgroup path -> container (Docker, containerd/CRI, CRI-O, Podman, Kubernetes, LXC/LXD) or systemd unit.

Reads ``<proc_root>/<pid>/cgroup`` (v1 and v2). The innermost container in a nested path wins
(Docker in Docker, a Podman container in a rootless user slice). The /proc root is an argument, so
tests use fixture strings and the host's /proc can be read from inside a container.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..core.record import holder, record

_ID = r"([0-9a-f]{64})"
# (runtime, pattern over one path segment); order matters only within a segment.
_SEGMENT_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("docker", re.compile(rf"^docker-{_ID}\.scope$")),
    ("containerd", re.compile(rf"^cri-containerd-{_ID}\.scope$")),
    ("cri-o", re.compile(rf"^crio-{_ID}\.scope$")),
    ("podman", re.compile(rf"^libpod-{_ID}\.scope$")),
    ("podman", re.compile(rf"^libpod-{_ID}$")),
)
_CONMON = re.compile(r"^(?:crio|libpod)-conmon-[0-9a-f]{64}\.scope$")
_BARE_ID = re.compile(rf"^{_ID}$")
_POD_SYSTEMD = re.compile(r"^kubepods(?:-[a-z]+)?-pod([0-9a-f_]{36})\.slice$")
_POD_CGROUPFS = re.compile(r"^pod([0-9a-f-]{36})$")
_LXC = re.compile(r"^lxc\.payload\.(.+)$")
_SERVICE = re.compile(r"^(.+\.service)$")


@record
class CgroupMatch:
    """What a cgroup path says about a process. All None for a plain process (``0::/``)."""

    runtime: str | None = None
    container_id: str | None = None
    pod_uid: str | None = None
    unit: str | None = None
    path: str = ""


def _cgroup_path(text: str) -> str:
    """The path to classify: the v2 (``0::``) line when present, else the v1 line that names a container."""
    v1_paths = []
    for line in text.splitlines():
        parts = line.strip().split(":", 2)
        if len(parts) != 3:
            continue
        hierarchy, _controllers, path = parts
        if hierarchy == "0" and path not in ("", "/"):
            return path
        if hierarchy != "0":
            v1_paths.append(path)
    # cgroup v1: prefer a controller path that carries a container id; all normally agree.
    for path in v1_paths:
        if classify(path).container_id:
            return path
    for path in v1_paths:
        if path not in ("", "/"):
            return path
    return "/"


@holder
class _Walk:
    """What the segments of one path have said so far, outermost first; inner segments overwrite."""

    runtime: str | None = None
    container_id: str | None = None
    pod_uid: str | None = None
    unit: str | None = None

    def read(self, segment: str, previous: str) -> None:
        pod = _POD_SYSTEMD.match(segment) or _POD_CGROUPFS.match(segment)
        if pod:
            self.pod_uid = pod.group(1).replace("_", "-")
            self.runtime, self.container_id = "kubernetes", None  # the container comes in a later segment
            return
        for name, rule in _SEGMENT_RULES:
            match = rule.match(segment)
            if match:
                self.runtime, self.container_id = name, match.group(1)
                return
        if _CONMON.match(segment):
            return  # the container monitor, not the workload
        bare = _BARE_ID.match(segment)
        if bare and (previous == "docker" or self.pod_uid is not None):
            self.runtime = "docker" if previous == "docker" else self.runtime
            self.container_id = bare.group(1)
            return
        lxc = _LXC.match(segment)
        if lxc or (previous == "lxc" and segment):
            self.runtime, self.container_id = "lxc", lxc.group(1) if lxc else segment
            return
        service = _SERVICE.match(segment)
        if service and not segment.startswith("user@"):
            self.unit = service.group(1)

    def match(self, path: str) -> CgroupMatch:
        if self.runtime == "kubernetes" and self.container_id is None and self.pod_uid is not None:
            return CgroupMatch(runtime="kubernetes", pod_uid=self.pod_uid, path=path)  # the pod's own slice (pause)
        if self.pod_uid is not None and self.runtime in ("docker", "containerd", "cri-o", "kubernetes"):
            return CgroupMatch(runtime=self.runtime, container_id=self.container_id, pod_uid=self.pod_uid, path=path)
        if self.container_id is not None:
            return CgroupMatch(runtime=self.runtime, container_id=self.container_id, path=path)
        return CgroupMatch(unit=self.unit, path=path)


def classify(path: str) -> CgroupMatch:
    """Classify one cgroup path. Unknown layouts give an empty match with the path kept."""
    segments = [s for s in path.split("/") if s]
    walk = _Walk()
    for i, segment in enumerate(segments):
        walk.read(segment, segments[i - 1] if i else "")
    return walk.match(path)


def parse_cgroup(text: str) -> CgroupMatch:
    """Classify the contents of a /proc/<pid>/cgroup file."""
    return classify(_cgroup_path(text))


def read_cgroup(proc_root: Path, pid: int) -> CgroupMatch | None:
    """The match for ``pid`` under ``proc_root``; None when the file cannot be read (gone, denied)."""
    try:
        text = (proc_root / str(pid) / "cgroup").read_text()
    except (OSError, UnicodeDecodeError):
        return None
    return parse_cgroup(text)


def read_nspid(proc_root: Path, pid: int) -> tuple[int, ...]:
    """The PIDs of ``pid`` in each nested PID namespace, outermost first (``NSpid`` in status)."""
    try:
        for line in (proc_root / str(pid) / "status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return tuple(int(p) for p in line.split()[1:])
    except (OSError, UnicodeDecodeError, ValueError):
        pass
    return ()
