"""``GET /api/openapi.json``: every endpoint, its parameters and its answers (OpenAPI 3.1)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Flask, Response, jsonify

bp = Blueprint("openapi", __name__, url_prefix="/api")

ERROR = {"$ref": "#/components/responses/Error"}
OBJECT = {"description": "JSON", "content": {"application/json": {"schema": {"type": "object"}}}}


def _param(name: str, kind: str, description: str, where: str = "query", **schema: Any) -> dict[str, Any]:
    return {"name": name, "in": where, "required": where == "path", "description": description,
            "schema": {"type": kind, **schema}}


GPU = _param("gpu", "integer", "GPU index", minimum=0)
SINCE = _param("since", "string", "unix seconds, or a span before now: -15m, -1h, -24h, -7d")
UNTIL = _param("until", "string", "unix seconds, or a span before now; default now")


def _get(summary: str, params: list[dict[str, Any]] | None = None, extra: dict[str, Any] | None = None,
         tag: str = "gpu") -> dict[str, Any]:
    responses = {"200": OBJECT, "400": ERROR, "401": ERROR, "404": ERROR, "503": ERROR}
    responses.update(extra or {})
    return {"get": {"summary": summary, "tags": [tag], "parameters": params or [], "responses": responses}}


SPEC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "FanWhy", "version": "1", "description": "Why is my fan running? GPU and CPU load, who "
             "causes it, history, alerts. Every value comes from the collector's latest snapshot."},
    "components": {
        "responses": {"Error": {"description": "An error with a message", "content": {"application/json": {
            "schema": {"type": "object", "required": ["error"],
                       "properties": {"error": {"type": "string"}, "detail": {}}}}}}},
        "securitySchemes": {"token": {"type": "http", "scheme": "bearer",
                                      "description": "required when FANWHY_TOKEN is set"}},
    },
    "security": [{}, {"token": []}],
    "paths": {
        "/api/gpu/summary": _get("The verdict (headline, ranked causes, confidence), backend, GPU headlines, top "
                                 "processes and containers, active alerts"),
        "/api/gpu/metrics": _get("The whole latest snapshot", [GPU]),
        "/api/gpu/processes": _get("GPU users and top CPU users", [
            GPU, _param("kind", "string", "all, gpu or cpu", enum=["all", "gpu", "cpu"]),
            _param("sort", "string", "sort key", enum=["gpu_memory", "sm", "cpu", "pid"]),
            _param("limit", "integer", "at most this many rows", minimum=1, maximum=1000)]),
        "/api/gpu/containers": _get("Per-container and per-user rollups, unattributed memory per GPU", [GPU]),
        "/api/gpu/history": _get("One series of [t, mean, min, max] points", [
            GPU, _param("host", "string", "the host's series (any value): CPU %, load, memory, CPU temperature, "
                        "fan RPM"),
            _param("pid", "integer", "a process", minimum=1),
            _param("container", "string", "a container id or name", maxLength=128),
            _param("metric", "string", "utilization_percent, memory_used_bytes, memory_percent, temperature_c, "
                   "power_w, fan_speed_percent, clock_sm_mhz (GPU); cpu_percent, load1, memory_percent, "
                   "memory_used_bytes, cpu_temperature_c, fan_rpm (host); gpu_memory_bytes, sm_percent, power_w, "
                   "energy_wh, cpu_percent (process, container)"),
            SINCE, UNTIL, _param("step", "number", "seconds per point", exclusiveMinimum=0)], tag="history"),
        "/api/gpu/available": _get("The best free GPUs, by 0.6 x free/total + 0.4 x idle", [
            _param("count", "integer", "how many GPUs", minimum=1, maximum=4096),
            _param("min_memory_mb", "number", "free memory each needs", minimum=0),
            _param("max_utilization", "number", "busiest acceptable", minimum=0, maximum=100),
            _param("wait", "number", "seconds to wait for them to be free", minimum=0, maximum=300),
            *[_param(k, "integer", f"parallel size {k} (world = tp x pp x max(dp, cp, dcp))", minimum=1,
                     maximum=4096) for k in ("tp", "pp", "dp", "cp", "dcp")]], {"409": ERROR}),
        "/api/alerts": _get("Alert rules, alerts firing now, history of alerts", [
            GPU, _param("limit", "integer", "history rows", minimum=1, maximum=500)], tag="alerts"),
        "/api/health": _get("ok, degraded or down, with the reasons", tag="health"),
        "/api/history/away": _get("While you were away: the causes of a past window", [SINCE, UNTIL],
                                  tag="history"),
        "/api/recordings": {
            **_get("Recordings, newest first", [_param("limit", "integer", "rows", minimum=1, maximum=1000)],
                   tag="recordings"),
            "post": {"summary": "Start recording GPU statistics", "tags": ["recordings"],
                     "requestBody": {"content": {"application/json": {"schema": {
                         "type": "object", "additionalProperties": False, "properties": {
                             "label": {"type": "string", "maxLength": 200},
                             "gpus": {"type": ["array", "null"], "items": {"type": "integer", "minimum": 0}},
                             "interval": {"type": "number", "exclusiveMinimum": 0, "maximum": 3600}}}}}},
                     "responses": {"201": {**OBJECT, "links": {
                         "GetRecording": {"operationRef": "#/paths/~1api~1recordings~1{rec_id}/get",
                                          "parameters": {"rec_id": "$response.body#/id"}},
                         "StopRecording": {"operationRef": "#/paths/~1api~1recordings~1{rec_id}~1stop/post",
                                           "parameters": {"rec_id": "$response.body#/id"}}}},
                         "400": ERROR, "401": ERROR, "404": ERROR, "413": ERROR, "429": ERROR, "503": ERROR}},
        },
        "/api/recordings/{rec_id}": _get("One recording", [_param("rec_id", "string", "its id", "path")],
                                         tag="recordings"),
        "/api/recordings/{rec_id}/stop": {"post": {
            "summary": "Stop a recording: duration, samples, per-GPU min/max/mean", "tags": ["recordings"],
            "parameters": [_param("rec_id", "string", "its id", "path")],
            "responses": {"200": {**OBJECT, "links": {
                "GetStopped": {"operationRef": "#/paths/~1api~1recordings~1{rec_id}/get",
                               "parameters": {"rec_id": "$response.body#/id"}}}},
                "401": ERROR, "404": ERROR, "503": ERROR}}},
        "/api/v1/monitoring/gpu-metrics": _get("The GPU Fleet Manager seed's format", tag="compat"),
        "/api/fleet": _get("Every node a Prometheus scrapes (FANWHY_PROMETHEUS_URL)", extra={"502": ERROR},
                           tag="fleet"),
        "/api/openapi.json": _get("This document", tag="meta"),
        "/metrics": {"get": {"summary": "Prometheus text format", "tags": ["metrics"], "responses": {
            "200": {"description": "metrics", "content": {"text/plain": {"schema": {"type": "string"}}}},
            "401": ERROR}}},
    },
}


@bp.get("/openapi.json")
def openapi() -> Response:
    return jsonify(SPEC)


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
