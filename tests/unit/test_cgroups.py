"""cgroup -> container, for every layout seen in the field (v1 and v2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.attribution.cgroups import CgroupMatch, parse_cgroup, read_cgroup, read_nspid

A = "a" * 63 + "1"
B = "b" * 63 + "2"
POD = "5f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
POD_ = POD.replace("-", "_")

CASES = [
    # (name, cgroup file, runtime, container id, pod uid, unit)
    ("docker v2 systemd", f"0::/system.slice/docker-{A}.scope\n", "docker", A, None, None),
    ("docker v1 cgroupfs", f"12:memory:/docker/{A}\n11:cpu,cpuacct:/docker/{A}\n1:name=systemd:/docker/{A}\n",
     "docker", A, None, None),
    ("docker v1 systemd", f"4:pids:/system.slice/docker-{A}.scope\n0::/system.slice/docker-{A}.scope\n",
     "docker", A, None, None),
    ("docker in docker", f"0::/docker/{A}/docker/{B}\n", "docker", B, None, None),
    ("containerd (CRI) outside kubernetes", f"0::/system.slice/cri-containerd-{A}.scope\n", "containerd", A,
     None, None),
    ("cri-o", f"0::/machine.slice/crio-{A}.scope\n", "cri-o", A, None, None),
    ("cri-o conmon is not the workload", f"0::/machine.slice/crio-conmon-{A}.scope\n", None, None, None, None),
    ("podman rootful", f"0::/machine.slice/libpod-{A}.scope\n", "podman", A, None, None),
    ("podman rootful, payload inside", f"0::/machine.slice/libpod-{A}.scope/container\n", "podman", A, None, None),
    ("podman rootless user slice",
     f"0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-{A}.scope/container\n",
     "podman", A, None, None),
    ("podman cgroupfs", f"0::/libpod_parent/libpod-{A}\n", "podman", A, None, None),
    ("kubernetes systemd burstable containerd",
     f"0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{POD_}.slice/cri-containerd-{A}.scope\n",
     "containerd", A, POD, None),
    ("kubernetes systemd besteffort cri-o",
     f"0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{POD_}.slice/crio-{A}.scope\n",
     "cri-o", A, POD, None),
    ("kubernetes guaranteed systemd", f"0::/kubepods.slice/kubepods-pod{POD_}.slice/cri-containerd-{A}.scope\n",
     "containerd", A, POD, None),
    ("kubernetes cgroupfs v1", f"11:memory:/kubepods/burstable/pod{POD}/{A}\n", "kubernetes", A, POD, None),
    ("kubernetes cgroupfs v2 besteffort", f"0::/kubepods/besteffort/pod{POD}/{A}\n", "kubernetes", A, POD, None),
    ("kubernetes cgroupfs guaranteed", f"0::/kubepods/pod{POD}/{A}\n", "kubernetes", A, POD, None),
    ("kubernetes systemd v1 guaranteed",
     f"12:cpuset:/kubepods.slice/kubepods-pod{POD_}.slice/cri-containerd-{A}.scope\n11:memory:/kubepods.slice/"
     f"kubepods-pod{POD_}.slice/cri-containerd-{A}.scope\n", "containerd", A, POD, None),
    ("kubernetes systemd v1 besteffort cri-o",
     f"4:memory:/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{POD_}.slice/crio-{A}.scope\n",
     "cri-o", A, POD, None),
    ("kubernetes cgroupfs v1 pod without a container", f"11:memory:/kubepods/burstable/pod{POD}\n", "kubernetes",
     None, POD, None),
    ("kubernetes docker shim", f"0::/kubepods.slice/kubepods-pod{POD_}.slice/docker-{A}.scope\n", "docker", A,
     POD, None),
    ("kubernetes pod slice without a container", f"0::/kubepods.slice/kubepods-pod{POD_}.slice\n",
     "kubernetes", None, POD, None),
    ("lxd / lxc 4+", "0::/lxc.payload.web1/system.slice/nginx.service\n", "lxc", "web1", None, None),
    ("lxc v1", "5:memory:/lxc/build-box\n", "lxc", "build-box", None, None),
    ("lxc collector is not the workload", "0::/lxc.collector.web1\n", None, None, None, None),
    ("systemd service", "0::/system.slice/ollama.service\n", None, None, None, "ollama.service"),
    ("user session", "0::/user.slice/user-1000.slice/session-3.scope\n", None, None, None, None),
    ("user service", "0::/user.slice/user-1000.slice/user@1000.service/app.slice/jupyter.service\n",
     None, None, None, "jupyter.service"),
    ("root cgroup", "0::/\n", None, None, None, None),
    ("the GPU machine lent", "0::/process_api/cfc6cceb0159587365396fe37a1ec0e2\n", None, None, None, None),
    ("empty file", "", None, None, None, None),
    ("garbage", "not a cgroup line\n::\n", None, None, None, None),
    ("short id is not a container", "0::/docker/abc123\n", None, None, None, None),
]


@pytest.mark.parametrize(("text", "runtime", "container_id", "pod", "unit"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_cgroup_layouts(text: str, runtime: str | None, container_id: str | None, pod: str | None,
                        unit: str | None) -> None:
    match = parse_cgroup(text)
    assert (match.runtime, match.container_id, match.pod_uid, match.unit) == (runtime, container_id, pod, unit)


def test_read_from_a_proc_root(tmp_path: Path) -> None:
    (tmp_path / "42").mkdir()
    (tmp_path / "42" / "cgroup").write_text(f"0::/system.slice/docker-{A}.scope\n")
    (tmp_path / "42" / "status").write_text("Name:\tpython3\nNSpid:\t4242\t7\t1\n")
    assert read_cgroup(tmp_path, 42) == CgroupMatch(runtime="docker", container_id=A,
                                                    path=f"/system.slice/docker-{A}.scope")
    assert read_nspid(tmp_path, 42) == (4242, 7, 1)


def test_unreadable_or_missing_files(tmp_path: Path) -> None:
    assert read_cgroup(tmp_path, 99) is None
    assert read_nspid(tmp_path, 99) == ()
    (tmp_path / "5").mkdir()
    (tmp_path / "5" / "cgroup").mkdir()  # a directory: reading it fails like a denied file
    assert read_cgroup(tmp_path, 5) is None
