"""The names of the pods on this node, from the Kubernetes API with the pod's service account.

The cgroup path already gives each process its pod's UID and its container's id (app.attribution.cgroups); this
adds the namespace, the pod's name and the container's name. Only this node's pods are listed
(``fieldSelector=spec.nodeName=...``), on a thread of its own every ``refresh_s``, and at once (at most every
``min_gap_s``) when a process shows up in a pod the last list did not have: the collector reads the last list and
never waits for the API server. A slow, refusing or unreachable API server costs the names and nothing else
(``error`` says why); a pod that is gone drops out at the next list.

In a pod: ``KUBERNETES_SERVICE_HOST``/``_PORT`` (set by the kubelet), the service account's token and CA under
/var/run/secrets/kubernetes.io/serviceaccount, and the node's name in ``NODE_NAME`` (the downward API; see
deploy/kubernetes/daemonset.yaml). Needs get/list/watch on pods (the manifests' ClusterRole).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Callable

from ..core.jsonvalue import Json, member, members, text
from ..core.threads import spawn
from .docker import DockerContainer

log = logging.getLogger(__name__)

ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915", "gpu.intel.com/xe")


def _containers_of(pod: Json) -> dict[str, DockerContainer]:
    """container id -> its names, and ``pod-<uid>`` -> the pod's (for processes placed in the pod's own cgroup)."""
    meta, spec, status = member(pod, "metadata"), member(pod, "spec"), member(pod, "status")
    namespace, name, uid = text(member(meta, "namespace")), text(member(meta, "name")), text(member(meta, "uid"))
    gpu_by_container = {
        text(member(c, "name")): any(str(member(member(member(c, "resources"), kind), r) or "0") not in ("0", "")
                                     for kind in ("limits", "requests") for r in GPU_RESOURCES)
        for c in members(member(spec, "containers"))}
    found: dict[str, DockerContainer] = {}
    for state in [*members(member(status, "containerStatuses")), *members(member(status, "initContainerStatuses"))]:
        runtime_id = text(member(state, "containerID")) or ""
        cid = runtime_id.split("://", 1)[-1]
        if len(cid) == 64:
            found[cid] = DockerContainer(id=cid, name=text(member(state, "name")), image=text(member(state, "image")),
                                         gpu_access=bool(gpu_by_container.get(text(member(state, "name")))), pod=name,
                                         namespace=namespace)
    if uid:
        found[f"pod-{uid}"] = DockerContainer(id=f"pod-{uid}", name=None, image=None,
                                              gpu_access=any(gpu_by_container.values()), pod=name, namespace=namespace)
    return found


class KubeClient:
    def __init__(self, api: str, token: Callable[[], str], node: str, ca_file: str | None = None,
                 refresh_s: float = 30.0, timeout_s: float = 2.0):
        import ssl  # here, not at the top: TLS and urllib are imports a one-shot answer outside a pod does without

        self.api = api.rstrip("/")
        self._token = token
        self.node = node
        self.refresh_s = refresh_s
        self.timeout_s = timeout_s
        self._context = ssl.create_default_context(cafile=ca_file) if ca_file else ssl.create_default_context()
        self._containers: dict[str, DockerContainer] = {}
        self.error: str | None = None
        self.listed_at: float | None = None
        self._stop = threading.Event()
        self.first_answer = threading.Event()  # set after the first list, answered or not
        self._wake = threading.Event()
        self._asked_at = 0.0
        self.min_gap_s = 5.0
        self._thread: threading.Thread | None = None

    @classmethod
    def in_cluster(cls, env: dict[str, str] | None = None, account: Path | None = None) -> KubeClient | None:
        """The client of a FanWhy running in a pod, or None elsewhere. FANWHY_KUBE_ACCOUNT names another folder
        for the service account's token and ca.crt (a non-standard mount; the GPU test's fake API server)."""
        env = dict(os.environ) if env is None else env
        account = account or Path(env.get("FANWHY_KUBE_ACCOUNT") or ACCOUNT)
        host, port = env.get("KUBERNETES_SERVICE_HOST"), env.get("KUBERNETES_SERVICE_PORT", "443")
        node = env.get("NODE_NAME") or env.get("FANWHY_NODE_NAME")
        if not host or not node or not (account / "token").exists():
            return None
        host = f"[{host}]" if ":" in host else host
        return cls(f"https://{host}:{port}", lambda: (account / "token").read_text().strip(), node,
                   ca_file=str(account / "ca.crt") if (account / "ca.crt").exists() else None)

    def containers(self) -> dict[str, DockerContainer]:
        """The last list (never waits for the API server)."""
        return self._containers

    def request_refresh(self) -> None:
        """A pod the last list did not have was seen: list again now (at most once every ``min_gap_s``)."""
        now = time.monotonic()
        if now - self._asked_at >= self.min_gap_s:
            self._asked_at = now
            self._wake.set()

    def refresh(self) -> None:
        """List this node's pods once; on failure keep the last list and say why."""
        import urllib.error
        import urllib.parse
        import urllib.request

        query = urllib.parse.urlencode({"fieldSelector": f"spec.nodeName={self.node}"})
        request = urllib.request.Request(f"{self.api}/api/v1/pods?{query}",
                                         headers={"Authorization": f"Bearer {self._token()}",
                                                  "Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s, context=self._context) as answer:
                body: Json = json.loads(answer.read())
        except urllib.error.HTTPError as error:
            error.close()  # it holds the answer's socket open until the garbage collector finds it
            self._failed(f"HTTP {error.code} {error.reason}" + (
                " (the service account needs list on pods: deploy/kubernetes/rbac.yaml)" if error.code == 403 else ""))
            return
        except (OSError, ValueError) as error:
            self._failed(f"{type(error).__name__}: {getattr(error, 'reason', None) or error}")
            return
        found: dict[str, DockerContainer] = {}
        for pod in members(member(body, "items")):
            found.update(_containers_of(pod))
        self._containers = found
        if self.error is not None:
            log.info("Kubernetes API answers again: pod names are back")
        self.error, self.listed_at = None, time.time()

    def _failed(self, why: str) -> None:
        if why != self.error:
            log.warning("Kubernetes API: %s; processes keep their pod UIDs, without names", why)
        self.error = why

    def start(self) -> None:
        def run() -> None:
            while not self._stop.is_set():
                self.refresh()
                self.first_answer.set()
                self._wake.wait(self.refresh_s)  # every refresh_s, or at once when a new pod shows up
                self._wake.clear()

        self._thread = spawn(run, "fanwhy-kubernetes")

    def stop(self, wait_s: float = 0.0) -> None:
        """Ask the refresher to end; with ``wait_s``, wait that long for a request in flight to finish."""
        self._stop.set()
        self._wake.set()
        if wait_s > 0 and self._thread is not None:
            self._thread.join(wait_s)
