"""deploy/kubernetes/: valid against the Kubernetes schemas (kubernetes-validate, strict) and shaped as a GPU
DaemonSet needs: GPU nodes only, the NVIDIA runtime class, the host's /proc read-only without hostPID,
least-privilege RBAC, tokens from a Secret, probes, requests and limits, a Service and a ServiceMonitor."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent.parent
K8S = ROOT / "deploy" / "kubernetes"


def documents() -> dict[str, dict[str, Any]]:
    found = {}
    for path in sorted(K8S.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            found[doc["kind"]] = doc
    return found


def test_every_manifest_passes_strict_schema_validation() -> None:
    result = subprocess.run([str(Path(sys.executable).parent / "kubernetes-validate"), "--strict",
                             *map(str, sorted(K8S.glob("*.yaml")))], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    passed = result.stdout + result.stderr
    for kind in ("daemonset", "namespace", "serviceaccount", "clusterrole", "clusterrolebinding", "secret", "service"):
        assert f"passed for resource {kind}/" in passed, kind


def test_the_daemonset_runs_on_gpu_nodes_with_what_it_needs_and_no_more() -> None:
    docs = documents()
    pod = docs["DaemonSet"]["spec"]["template"]["spec"]
    assert pod["runtimeClassName"] == "nvidia" and pod["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]
    assert "hostPID" not in pod and pod["securityContext"]["runAsNonRoot"] is True
    (container,) = pod["containers"]
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["host-proc"]["hostPath"]["path"] == "/proc" and mounts["host-proc"]["readOnly"] is True
    env = {e["name"]: e for e in container["env"]}
    assert env["FANWHY_HOST_PROC"]["value"] == mounts["host-proc"]["mountPath"]
    assert env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
    assert env["FANWHY_METRICS_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "fanwhy-tokens", "key": "metrics-token"}
    assert "nvidia.com/gpu" not in str(container["resources"])  # watches every GPU, takes none from the scheduler
    assert container["resources"]["requests"] and container["resources"]["limits"]
    for probe in ("livenessProbe", "readinessProbe"):
        assert container[probe]["exec"]["command"] == ["python", "-m", "app.healthcheck"]


def test_rbac_reads_pods_only_and_the_service_monitor_sends_the_scrape_token() -> None:
    docs = documents()
    assert docs["ClusterRole"]["rules"] == [{"apiGroups": [""], "resources": ["pods"],
                                             "verbs": ["get", "list", "watch"]}]
    binding = docs["ClusterRoleBinding"]
    assert binding["subjects"][0]["name"] == docs["DaemonSet"]["spec"]["template"]["spec"]["serviceAccountName"]
    # kubernetes-validate has no schema for the Prometheus operator's CRD: its shape is checked here
    monitor = docs["ServiceMonitor"]
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["path"] == "/metrics" and endpoint["port"] == docs["Service"]["spec"]["ports"][0]["name"]
    assert endpoint["authorization"]["credentials"] == {"name": "fanwhy-tokens", "key": "metrics-token"}
    assert monitor["spec"]["selector"]["matchLabels"] == docs["Service"]["metadata"]["labels"]


def test_the_daemonsets_image_is_this_versions_and_its_build_is_documented_beside_it() -> None:
    from app.core.version import __version__

    text = (ROOT / "deploy" / "kubernetes" / "daemonset.yaml").read_text()
    (daemonset,) = [d for d in yaml.safe_load_all(text) if d and d["kind"] == "DaemonSet"]
    (container,) = daemonset["spec"]["template"]["spec"]["containers"]
    assert container["image"] == f"fanwhy:{__version__}"
    assert "podman build" in text and "podman push" in text
    deployment = (ROOT / "docs" / "DEPLOYMENT.md").read_text()
    steps = deployment[deployment.index("## On Kubernetes"):]
    assert steps.index("podman push") < steps.index("kubectl apply -f deploy/kubernetes/")  # the image first
    assert f"fanwhy:{__version__}" in steps
