"""More than one machine: the fleet view reads a Prometheus server that scrapes every FanWhy node.

FanWhy never talks to the other nodes itself: ``FANWHY_PROMETHEUS_URL`` names the Prometheus whose HTTP
API (``/api/v1/query``) answers, so a fleet is watched with the tools people already run.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections import defaultdict
from typing import Any

from flask import Blueprint, Flask, Response, current_app, jsonify, render_template

from ..core.vocabulary import gpu_score
from .rest import ApiError, allow_only

bp = Blueprint("fleet", __name__)
TIMEOUT_S = 3.0
GPU_SERIES = {
    "utilization_percent": "fanwhy_gpu_utilization_percent",
    "memory_used_bytes": "fanwhy_gpu_memory_used_bytes",
    "memory_total_bytes": "fanwhy_gpu_memory_total_bytes",
    "temperature_c": "fanwhy_gpu_temperature_celsius",
    "power_w": "fanwhy_gpu_power_watts",
}


class PrometheusError(Exception):
    pass


def query(base: str, promql: str) -> list[dict[str, Any]]:
    """One instant query: the result vector, or PrometheusError with the reason."""
    url = f"{base.rstrip('/')}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            body = json.load(response)
    except (OSError, ValueError, urllib.error.URLError) as error:
        raise PrometheusError(f"{base}: {error}") from None
    if body.get("status") != "success":
        raise PrometheusError(f"{base}: {body.get('error', 'query failed')}")
    result: list[dict[str, Any]] = body["data"]["result"]
    return result


def fleet_view(base: str) -> dict[str, Any]:
    nodes: dict[str, dict[str, Any]] = defaultdict(lambda: {"up": None, "gpus": {}, "containers": []})
    for row in query(base, 'up{job=~"fanwhy.*"}'):
        nodes[row["metric"]["instance"]]["up"] = float(row["value"][1]) == 1.0
    for row in query(base, "fanwhy_backend_info"):
        nodes[row["metric"]["instance"]]["backend"] = row["metric"].get("backend")
    for row in query(base, "fanwhy_host_cpu_percent"):
        nodes[row["metric"]["instance"]]["cpu_percent"] = float(row["value"][1])
    for row in query(base, "fanwhy_gpu_info"):
        metric = row["metric"]
        gpu = nodes[metric["instance"]]["gpus"].setdefault(metric["gpu"], {"gpu": int(metric["gpu"])})
        gpu.update(name=metric.get("name"), uuid=metric.get("uuid"))
    for field, series in GPU_SERIES.items():
        for row in query(base, series):
            metric = row["metric"]
            gpu = nodes[metric["instance"]]["gpus"].setdefault(metric["gpu"], {"gpu": int(metric["gpu"])})
            gpu[field] = float(row["value"][1])
    for row in query(base, "topk(50, fanwhy_container_gpu_memory_bytes)"):
        metric = row["metric"]
        nodes[metric["instance"]]["containers"].append(
            {"id": metric.get("container_id"), "name": metric.get("container_name"),
             "method": metric.get("method"), "gpu_memory_bytes": float(row["value"][1])})
    ranking = []
    out = []
    for instance, node in sorted(nodes.items()):
        gpus = sorted(node["gpus"].values(), key=lambda g: g["gpu"])
        for gpu in gpus:
            total, used, util = gpu.get("memory_total_bytes"), gpu.get("memory_used_bytes"), gpu.get(
                "utilization_percent")
            if total and used is not None and util is not None:
                gpu["score"] = round(gpu_score((total - used) / total, util), 4)
                ranking.append({"instance": instance, "gpu": gpu["gpu"], "name": gpu.get("name"),
                                "score": gpu["score"]})
        containers = sorted(node["containers"], key=lambda c: -c["gpu_memory_bytes"])[:5]
        out.append({"instance": instance, "up": node["up"], "backend": node.get("backend"),
                    "cpu_percent": node.get("cpu_percent"), "gpus": gpus, "top_containers": containers})
    ranking.sort(key=lambda r: (-r["score"], r["instance"], r["gpu"]))
    return {"prometheus": base, "nodes": out, "ranking": ranking, "pods": pods_view(base)}


def pods_view(base: str) -> list[dict[str, Any]]:
    """The busiest pods of the cluster, by node and namespace (from the per-process labels namespace and pod)."""
    pods: dict[tuple[str, str, str], dict[str, Any]] = {}
    for field, series in (("sm_percent", "fanwhy_process_sm_percent"),
                          ("gpu_memory_bytes", "fanwhy_process_gpu_memory_bytes")):
        promql = f'topk(50, sum by (instance, namespace, pod) ({series}{{pod!=""}}))'
        for row in query(base, promql):
            metric = row["metric"]
            key = (metric.get("instance", ""), metric.get("namespace", ""), metric.get("pod", ""))
            pods.setdefault(key, {"instance": key[0], "namespace": key[1] or None, "pod": key[2]})[field] = \
                float(row["value"][1])
    return sorted(pods.values(), key=lambda p: (p["instance"], p["namespace"] or "", -p.get("sm_percent", 0.0),
                                                p["pod"]))


@bp.get("/api/fleet")
def fleet() -> Response:
    allow_only(())
    fanwhy = current_app.extensions["fanwhy"]
    base = fanwhy.settings.prometheus_url
    if not base:
        raise ApiError(404, "no fleet configured",
                       "set FANWHY_PROMETHEUS_URL to a Prometheus that scrapes every FanWhy (deploy/prometheus.yml)")
    try:
        return jsonify(fanwhy.concurrency.blocking(fleet_view, base))  # a slow Prometheus holds no event loop
    except PrometheusError as error:
        raise ApiError(502, "Prometheus did not answer", str(error)) from None


@bp.get("/fleet")
def fleet_page() -> str:
    return render_template("fleet.html", configured=bool(current_app.extensions["fanwhy"].settings.prometheus_url))


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
