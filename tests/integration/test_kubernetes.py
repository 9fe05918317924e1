"""Pods named from the Kubernetes API: a fake API server over HTTPS (a self-signed certificate, a bearer
token) serving this node's pod list; a slow one, a 403, a pod that vanished; and the names reaching the rows."""

from __future__ import annotations

import json
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from app.attribution.attributor import Attributor
from app.attribution.cgroups import parse_cgroup
from app.attribution.kubernetes import KubeClient
from app.attribution.processes import ProcessInspector
from app.core.model import ProcessSample

TOKEN = "sa-token-0123456789"
POD_UID = "0f1e2d3c-4b5a-6978-8695-a4b3c2d1e0f9"
A, B = "a" * 64, "b" * 64


def pod(name: str, uid: str, containers: list[tuple[str, str, bool]], node: str = "gpu-node-1") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ml", "uid": uid}, "spec": {"nodeName": node, "containers": [
        {"name": c, "resources": {"limits": {"nvidia.com/gpu": "1"}} if gpu else {}} for c, _, gpu in containers]},
        "status": {"containerStatuses": [{"name": c, "containerID": f"containerd://{cid}", "image": f"img/{c}"}
                                         for c, cid, _ in containers]}}


class FakeApi:
    def __init__(self, tmp: Path):
        self.pods = [pod("trainer-0", POD_UID, [("trainer", A, True), ("sidecar", B, False)]),
                     pod("elsewhere", "ffffffff-0000-0000-0000-000000000000", [("x", "c" * 64, False)], "node-2")]
        self.mode = "ok"
        self.requests: list[dict[str, Any]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                api.requests.append({"path": self.path, "auth": self.headers.get("Authorization")})
                if api.mode == "slow":
                    time.sleep(3)
                if self.headers.get("Authorization") != f"Bearer {TOKEN}" or api.mode == "forbidden":
                    self.send_response(403 if api.mode == "forbidden" else 401)
                    self.end_headers()
                    return
                node = parse_qs(urlsplit(self.path).query)["fieldSelector"][0].removeprefix("spec.nodeName=")
                body = json.dumps({"kind": "PodList", "items": [p for p in api.pods if p["spec"]["nodeName"] == node]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.cert, key = tmp / "ca.crt", tmp / "key.pem"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                        "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key),
                        "-out", str(self.cert)], check=True, capture_output=True, timeout=60)
        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that gave up (the slow case) breaks the answer's write: expected here

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def client(self, **kw: Any) -> KubeClient:
        return KubeClient(f"https://127.0.0.1:{self.port}", lambda: TOKEN, "gpu-node-1", ca_file=str(self.cert), **kw)


@pytest.fixture
def api(tmp_path: Path) -> Iterator[FakeApi]:
    fake = FakeApi(tmp_path)
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


def test_this_nodes_pods_are_named_over_https_with_the_token(api: FakeApi) -> None:
    client = api.client()
    client.refresh()
    known = client.containers()
    assert client.error is None and api.requests[0]["auth"] == f"Bearer {TOKEN}"
    assert "fieldSelector=spec.nodeName%3Dgpu-node-1" in api.requests[0]["path"]
    assert (known[A].name, known[A].pod, known[A].namespace, known[A].image, known[A].gpu_access) == (
        "trainer", "trainer-0", "ml", "img/trainer", True)
    assert known[B].gpu_access is False and known[f"pod-{POD_UID}"].pod == "trainer-0"
    assert "c" * 64 not in known  # another node's pod


def test_a_slow_a_refusing_and_a_vanished_api_cost_only_the_names(api: FakeApi) -> None:
    client = api.client(timeout_s=0.5)
    client.refresh()
    api.mode = "slow"
    started = time.monotonic()
    client.refresh()
    assert time.monotonic() - started < 2.5 and "timed out" in (client.error or "")
    assert client.containers()[A].pod == "trainer-0"  # the last list stands
    api.mode = "forbidden"
    client.refresh()
    assert client.error is not None and "HTTP 403" in client.error and "rbac.yaml" in client.error
    api.mode = "ok"
    api.pods = api.pods[1:]  # the trainer pod is gone
    client.refresh()
    assert client.error is None and A not in client.containers()


def test_the_collector_never_waits_for_the_api(api: FakeApi) -> None:
    api.mode = "slow"
    client = api.client(timeout_s=5, refresh_s=60)
    client.start()
    try:
        started = time.monotonic()
        assert client.containers() == {}
        assert time.monotonic() - started < 0.1
    finally:
        # the request in flight ends before the fixture closes the server: a connection still in the listening
        # socket's queue is reset then, and Python's ssl leaves a socket reset before its handshake unclosed
        client.stop(wait_s=30)


def test_a_process_in_a_pod_carries_its_pod_namespace_and_container_name(api: FakeApi, tmp_path: Path,
                                                                          monkeypatch: Any) -> None:
    client = api.client()
    client.refresh()
    attributor = Attributor(ProcessInspector(top_cpu=0), kube=client)
    path = f"0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{POD_UID.replace('-', '_')}.slice/" \
           f"cri-containerd-{A}.scope\n"
    pause = f"0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{POD_UID.replace('-', '_')}.slice\n"
    unknown = f"0::/kubepods.slice/kubepods-pod{POD_UID.replace('-', '_')}.slice/cri-containerd-{'d' * 64}.scope\n"
    cgroups = {1: parse_cgroup(path), 2: parse_cgroup(pause), 3: parse_cgroup(unknown)}
    monkeypatch.setattr(attributor, "_cgroup", lambda pid, start: (cgroups[pid], (pid,)))
    row = ProcessSample(pid=1, name="python3", user="root", command=None, start_time=1.0, cpu_percent=1.0,
                        rss_bytes=1)
    placed = {pid: attributor._place(ProcessSample(**{**row.__dict__, "pid": pid}), client.containers())
              for pid in (1, 2, 3)}
    trainer = placed[1].container
    assert trainer is not None and (trainer.runtime, trainer.id, trainer.name, trainer.pod, trainer.namespace) == (
        "containerd", A, "trainer", "trainer-0", "ml")
    pod_itself = placed[2].container
    assert pod_itself is not None and (pod_itself.pod, pod_itself.namespace) == ("trainer-0", "ml")
    newer = placed[3].container  # a container the last list did not have yet: its pod is still named
    assert newer is not None and (newer.id, newer.name, newer.pod, newer.namespace) == ("d" * 64, None,
                                                                                         "trainer-0", "ml")


def test_in_cluster_needs_the_service_account_and_the_node_name(tmp_path: Path) -> None:
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443", "NODE_NAME": "gpu-node-1"}
    assert KubeClient.in_cluster(env, tmp_path) is None  # no token: not in a pod
    (tmp_path / "token").write_text(TOKEN + "\n")
    client = KubeClient.in_cluster(env, tmp_path)
    assert client is not None and client.api == "https://10.0.0.1:443" and client.node == "gpu-node-1"
    assert client._token() == TOKEN
    assert KubeClient.in_cluster({**env, "NODE_NAME": ""}, tmp_path) is None
    six = KubeClient.in_cluster({**env, "KUBERNETES_SERVICE_HOST": "fd00::1"}, tmp_path)
    assert six is not None and six.api == "https://[fd00::1]:443"


def test_pod_labels_in_prometheus_and_the_rollups_by_pod(api: FakeApi, make_app: Any, monkeypatch: Any) -> None:
    """A GPU process placed in a pod carries namespace, pod and container labels as dcgm-exporter names them, and
    /api/gpu/pods adds up each pod."""
    import os

    from tests.conftest import nvidia_selection
    from tests.fakes.fake_nvml import scenario

    client = api.client()
    client.refresh()
    fake = scenario("h100_load")
    fake.run_on(0, os.getpid(), sm_percent=70)
    app = make_app(nvidia_selection(fake), start=False)
    collector = app.extensions["fanwhy"].collector
    collector.attributor.kube = client
    match = parse_cgroup(f"0::/kubepods/burstable/pod{POD_UID}/{A}\n")  # the cgroupfs driver's layout
    monkeypatch.setattr(collector.attributor, "_cgroup", lambda pid, start: (match, (pid, 7)))
    collector.collect()
    text = app.test_client().get("/metrics").get_data(as_text=True)
    line = next(x for x in text.splitlines() if x.startswith("fanwhy_process_sm_percent{"))
    assert 'container="trainer"' in line and 'pod="trainer-0"' in line and 'namespace="ml"' in line
    pods = app.test_client().get("/api/gpu/pods").get_json()
    (row,) = pods["pods"]
    assert (row["namespace"], row["pod"], row["pod_uid"], row["sm_percent"]) == ("ml", "trainer-0", POD_UID, 70.0)
    assert row["containers"] == ["trainer"] and row["pids"] == [os.getpid()] and row["gpu_memory_bytes"] > 0
    namespaces = pods["namespaces"]
    assert namespaces == [{"namespace": "ml", "pods": 1, "gpu_memory_bytes": row["gpu_memory_bytes"],
                           "sm_percent": 70.0, "power_w": row["power_w"]}]


def test_a_new_pod_is_listed_at_once_not_at_the_next_interval(api: FakeApi, monkeypatch: Any) -> None:
    client = api.client(refresh_s=300)
    client.min_gap_s = 0.0
    client.start()
    try:
        assert client.first_answer.wait(5)
        api.pods.append(pod("newcomer-0", "99999999-8888-7777-6666-555555555555", [("job", "e" * 64, True)]))
        attributor = Attributor(ProcessInspector(top_cpu=0), kube=client)
        match = parse_cgroup(f"0::/kubepods/pod99999999-8888-7777-6666-555555555555/{'e' * 64}\n")
        monkeypatch.setattr(attributor, "_cgroup", lambda pid, start: (match, (pid,)))
        row = ProcessSample(pid=1, name="p", user="u", command=None, start_time=1.0, cpu_percent=1.0, rss_bytes=1)
        monkeypatch.setattr(attributor.inspector, "collect", lambda usages: [row])
        attributor.attribute([], [])  # the unknown pod asks for a list now
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and "e" * 64 not in client.containers():
            time.sleep(0.05)
        assert client.containers()["e" * 64].pod == "newcomer-0"
        assert len(api.requests) == 2  # the first list, and the one the new pod asked for: not a poll loop
    finally:
        client.stop()


def app_with_a_pod(make_app: Any, monkeypatch: Any, tmp_path: Path) -> Any:
    """An app on the fake H100 whose one GPU process (this test's own, at 70 % SM) sits in the pod ml/trainer-0,
    placed by a cgroupfs-driver path and named by a fake API server's list."""
    import os

    from tests.conftest import nvidia_selection
    from tests.fakes.fake_nvml import scenario

    api = FakeApi(tmp_path)
    try:
        client = api.client()
        client.refresh()
    finally:
        api.server.shutdown()
        api.server.server_close()
    fake = scenario("h100_load")
    fake.run_on(0, os.getpid(), sm_percent=70)
    app = make_app(nvidia_selection(fake))
    collector = app.extensions["fanwhy"].collector
    collector.attributor.kube = client
    match = parse_cgroup(f"0::/kubepods/burstable/pod{POD_UID}/{A}\n")
    monkeypatch.setattr(collector.attributor, "_cgroup", lambda pid, start: (match, (pid, 7)))
    return app
