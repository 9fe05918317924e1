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
from collections.abc import Mapping
from dataclasses import dataclass, field

from flask import Blueprint, Flask, Response, jsonify, render_template

from ..core.jsonvalue import JsonObject
from ..core.record import record
from ..core.vocabulary import gpu_score
from .rest import ApiError, allow_only
from .services import services

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


@record
class Sample:
    """One series of an instant query's answer: its labels and its value."""

    labels: Mapping[str, str]
    value: float


@dataclass
class _Node:
    up: bool | None = None
    backend: str | None = None
    cpu_percent: float | None = None
    gpus: dict[str, dict[str, float | int | str | None]] = field(default_factory=dict)
    containers: list[dict[str, float | str | None]] = field(default_factory=list)

    def gpu(self, labels: Mapping[str, str]) -> dict[str, float | int | str | None]:
        return self.gpus.setdefault(labels["gpu"], {"gpu": int(labels["gpu"])})


def query(base: str, promql: str) -> list[Sample]:
    """One instant query: the result vector, or PrometheusError with the reason (an answer of another shape too)."""
    url = f"{base.rstrip('/')}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            body = json.load(response)
    except (OSError, ValueError, urllib.error.URLError) as error:
        raise PrometheusError(f"{base}: {error}") from None
    if not isinstance(body, dict) or body.get("status") != "success":
        raise PrometheusError(f"{base}: {body.get('error', 'query failed') if isinstance(body, dict) else body!r}")
    try:
        return [Sample({str(k): str(v) for k, v in row["metric"].items()}, float(row["value"][1]))
                for row in body["data"]["result"]]
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as error:
        raise PrometheusError(f"{base}: an answer of an unexpected shape ({type(error).__name__}: {error})") from None


def fleet_view(base: str) -> JsonObject:
    nodes: dict[str, _Node] = defaultdict(_Node)
    for row in query(base, 'up{job=~"fanwhy.*"}'):
        nodes[row.labels["instance"]].up = row.value == 1.0
    for row in query(base, "fanwhy_backend_info"):
        nodes[row.labels["instance"]].backend = row.labels.get("backend")
    for row in query(base, "fanwhy_host_cpu_percent"):
        nodes[row.labels["instance"]].cpu_percent = row.value
    for row in query(base, "fanwhy_gpu_info"):
        nodes[row.labels["instance"]].gpu(row.labels).update(name=row.labels.get("name"), uuid=row.labels.get("uuid"))
    for name, series in GPU_SERIES.items():
        for row in query(base, series):
            nodes[row.labels["instance"]].gpu(row.labels)[name] = row.value
    for row in query(base, "topk(50, fanwhy_container_gpu_memory_bytes)"):
        nodes[row.labels["instance"]].containers.append(
            {"id": row.labels.get("container_id"), "name": row.labels.get("container_name"),
             "method": row.labels.get("method"), "gpu_memory_bytes": row.value})
    ranking: list[dict[str, float | int | str | None]] = []
    out: list[JsonObject] = []
    for instance, node in sorted(nodes.items()):
        gpus = sorted(node.gpus.values(), key=lambda g: _number(g.get("gpu")))
        for gpu in gpus:
            total, used, util = (gpu.get(k) for k in ("memory_total_bytes", "memory_used_bytes", "utilization_percent"))
            if isinstance(total, float) and total and isinstance(used, float) and isinstance(util, float):
                gpu["score"] = round(gpu_score((total - used) / total, util), 4)
                ranking.append({"instance": instance, "gpu": gpu["gpu"], "name": gpu.get("name"),
                                "score": gpu["score"]})
        containers = sorted(node.containers, key=lambda c: -_number(c["gpu_memory_bytes"]))[:5]
        out.append({"instance": instance, "up": node.up, "backend": node.backend, "cpu_percent": node.cpu_percent,
                    "gpus": gpus, "top_containers": containers})
    ranking.sort(key=lambda r: (-_number(r["score"]), str(r["instance"]), _number(r["gpu"])))
    return {"prometheus": base, "nodes": out, "ranking": ranking, "pods": pods_view(base)}


def _number(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) else 0.0


def pods_view(base: str) -> list[dict[str, float | str | None]]:
    """The busiest pods of the cluster, by node and namespace (from the per-process labels namespace and pod)."""
    pods: dict[tuple[str, str, str], dict[str, float | str | None]] = {}
    for name, series in (("sm_percent", "fanwhy_process_sm_percent"),
                         ("gpu_memory_bytes", "fanwhy_process_gpu_memory_bytes")):
        promql = f'topk(50, sum by (instance, namespace, pod) ({series}{{pod!=""}}))'
        for row in query(base, promql):
            key = (row.labels.get("instance", ""), row.labels.get("namespace", ""), row.labels.get("pod", ""))
            pods.setdefault(key, {"instance": key[0], "namespace": key[1] or None, "pod": key[2]})[name] = row.value
    return sorted(pods.values(), key=lambda p: (str(p["instance"]), str(p["namespace"] or ""),
                                                -_number(p.get("sm_percent", 0.0)), str(p["pod"])))


@bp.get("/api/fleet")
def fleet() -> Response:
    allow_only(())
    fanwhy = services()
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
    return render_template("fleet.html", configured=bool(services().settings.prometheus_url))


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
