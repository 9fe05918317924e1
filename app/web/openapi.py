"""``GET /api/openapi.json``: every endpoint, its parameters and its answers (OpenAPI 3.1), and ``GET /api/docs``,
a page that reads it (no CDN: it works offline).

The answers that are model objects have schemas generated from the dataclasses (app.web.schemas), so the document
cannot drift from what the JSON view serves; schemathesis checks real answers against them in make test.
"""

from __future__ import annotations

import re

from flask import Blueprint, Flask, Response, jsonify, render_template

from ..collect.serialize import GPU_HEADLINE
from ..core.jsonvalue import Json, JsonObject
from ..core.vocabulary import PROCESS_KINDS, PROCESS_PAGE_CEILING, PROCESS_SORTS
from .history_api import MAX_STEP_S
from .schemas import component_schemas

bp = Blueprint("openapi", __name__, url_prefix="/api")

ERROR: JsonObject = {"$ref": "#/components/responses/Error"}
OBJECT: JsonObject = {"description": "JSON", "content": {"application/json": {"schema": {"type": "object"}}}}


def _ref(name: str) -> JsonObject:
    return {"$ref": f"#/components/schemas/{name}"}


def _array(name: str) -> JsonObject:
    return {"type": "array", "items": _ref(name)}


def _answer(schema: JsonObject, description: str = "JSON") -> JsonObject:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _object(required: list[str], **properties: Json) -> JsonObject:
    return {"type": "object", "required": required, "properties": properties}


NUMBER = {"type": ["number", "null"]}
# What each typed endpoint answers, composed of the model's schemas.
ANSWERS: dict[str, JsonObject] = {
    "/api/gpu/metrics": _ref("SnapshotView"),
    "/api/gpu/summary": _object(
        ["timestamp", "backend", "gpu_count", "verdict", "gpus", "host", "top_processes", "alerts"],
        timestamp={"type": "number"}, backend={"type": "string"}, gpu_count={"type": "integer"},
        verdict={"anyOf": [_ref("Verdict"), {"type": "null"}]}, gpus={"type": "array", "items": _ref("GpuHeadline")},
        no_gpu_summary={"type": ["string", "null"]}, no_gpu_reason={"type": ["string", "null"]},
        host={"type": "object"}, top_processes={"type": "array", "items": {"type": "object"}},
        top_containers={"type": "array", "items": {"type": "object"}}, unattributed=_array("Unattributed"),
        ledger=_array("PowerLedger"), alerts=_array("Alert")),
    "/api/gpu/processes": _object(["timestamp", "count", "offset", "limit", "next", "processes"],
                                  timestamp={"type": "number"}, count={"type": "integer"},
                                  offset={"type": "integer"}, limit={"type": "integer"},
                                  next={"type": ["integer", "null"]}, processes=_array("ProcessSample")),
    "/api/gpu/processes/{pid}": {"allOf": [_ref("ProcessSample"), _object(
        ["timestamp", "command_full"], timestamp={"type": "number"}, command_full={"type": ["string", "null"]})]},
    "/api/gpu/containers": _object(["timestamp", "count", "containers", "users", "unattributed"],
                                   timestamp={"type": "number"}, count={"type": "integer"},
                                   containers=_array("ContainerSample"), users=_array("UserSample"),
                                   unattributed=_array("Unattributed")),
    "/api/fans": _object(["timestamp", "count", "fans", "air", "bmc", "configs"], timestamp={"type": "number"},
                         count={"type": "integer"}, fans=_array("Fan"), air=_array("AirSensor"),
                         bmc=_object(["read", "reason"], read={"type": "boolean"},
                                     reason={"type": ["string", "null"]}),
                         configs={"type": "object", "additionalProperties": {"type": "string"}}),
    "/api/alerts": _object(["rules", "active", "history"], rules={"type": "object"}, active=_array("Alert"),
                           history=_array("Alert")),
    "/api/gpu/history": _object(["metric", "since", "until", "step", "source", "columns", "points"],
                                metric={"type": "string"}, since={"type": "number"}, until={"type": "number"},
                                step={"type": "number"}, source={"enum": ["raw", "minute"]},
                                columns={"type": "array", "items": {"type": "string"}},
                                points={"type": "array", "items": {"type": "array", "items": NUMBER,
                                                                   "minItems": 4, "maxItems": 4}}),
    "/api/health": _object(["status", "version", "backend"], status={"enum": ["starting", "ok", "degraded", "down"]},
                           version={"type": "string"}, backend={"type": "string"},
                           notifications={"type": "array", "items": {"type": "object"}},
                           refusals={"type": "object", "additionalProperties": {"type": "integer"},
                                     "description": "requests refused since start, by cause: host, origin, token, "
                                                    "body, session, rate"},
                           sessions={"type": "object", "additionalProperties": {"type": "integer"},
                                     "description": "open Socket.IO sessions, and those the server closed since "
                                                    "start: for flooding, for malformed packets, to make room"},
                           thread_faults={"type": "array", "items": {"type": "object"},
                                          "description": "background threads that failed in the last 5 minutes"}),
}


def _param(name: str, kind: str, description: str, where: str = "query", **schema: Json) -> JsonObject:
    return {"name": name, "in": where, "required": where == "path", "description": description,
            "schema": {"type": kind, **schema}}


GPU = _param("gpu", "integer", "GPU index", minimum=0)
SINCE = _param("since", "string", "unix seconds, or a span before now: -15m, -1h, -24h, -7d")
UNTIL = _param("until", "string", "unix seconds, or a span before now; default now")


def _get(summary: str, params: list[JsonObject] | None = None, extra: JsonObject | None = None,
         tag: str = "gpu") -> JsonObject:
    responses: JsonObject = {"200": OBJECT, "400": ERROR, "401": ERROR, "404": ERROR, "429": ERROR, "503": ERROR}
    responses.update(extra or {})
    return {"get": {"summary": summary, "tags": [tag], "parameters": params or [], "responses": responses}}


def _operation_id(method: str, path: str) -> str:
    """``get /api/gpu/summary`` -> ``getGpuSummary``; path parameters become ``ById``."""
    words = [w for w in re.split(r"[/_.\-]+", re.sub(r"\{[^}]+\}", "by_id", path)) if w and w not in ("api", "json")]
    return method + "".join(w[:1].upper() + w[1:] for w in words)


def _dict(value: Json) -> dict[str, Json]:
    """A part of the document that is an object (this module built it so)."""
    if not isinstance(value, dict):
        raise TypeError(f"expected an object in the OpenAPI document, got {type(value).__name__}")
    return value


def _finish(spec: JsonObject) -> JsonObject:
    """operationIds, the typed answers, and the model's schemas."""
    schemas = component_schemas()
    snapshot = schemas["Snapshot"]
    required = snapshot["required"]
    view = dict(snapshot, required=[r for r in required if r != "alert_events"] if isinstance(required, list) else [])
    view["properties"] = {k: v for k, v in _dict(snapshot["properties"]).items() if k != "alert_events"}
    schemas["SnapshotView"] = view
    headline = (*GPU_HEADLINE, "memory_percent", "unsupported")  # what serialize.gpu_headline writes
    schemas["GpuHeadline"] = {"type": "object", "required": list(headline), "description": "A GPU's headline numbers",
                              "properties": {k: _dict(schemas["GpuSample"]["properties"])[k] for k in headline}}
    _dict(spec["components"])["schemas"] = dict(schemas)
    for path, methods in _dict(spec["paths"]).items():
        for method, operation in _dict(methods).items():
            _dict(operation)["operationId"] = _operation_id(method, path)
            if method == "get" and path in ANSWERS:
                _dict(_dict(operation)["responses"])["200"] = _answer(ANSWERS[path])
    # /api/health answers 503 with its own body: starting (no snapshot yet) or down
    _dict(_dict(_dict(_dict(spec["paths"])["/api/health"])["get"])["responses"])["503"] = _answer(
        ANSWERS["/api/health"])
    return spec


SPEC: JsonObject = {
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
        "/api/gpu/processes": _get("GPU users, then every other process (kernel threads aside), a page at a time", [
            GPU, _param("kind", "string", "all, gpu or cpu", enum=list(PROCESS_KINDS)),
            _param("sort", "string", "sort key", enum=list(PROCESS_SORTS)),
            _param("offset", "integer", "rows to skip (the previous page's next)", minimum=0),
            _param("limit", "integer", "at most this many rows", minimum=1, maximum=PROCESS_PAGE_CEILING)]),
        "/api/gpu/processes/{pid}": _get(
            "One listed process with its whole masked command line (lists bound it to 4,096 characters)",
            [_param("pid", "integer", "a process ID FanWhy lists", "path", minimum=1)]),
        "/api/gpu/pods": _get("Per pod and per namespace (Kubernetes): GPU memory, SM %, power", tag="gpu"),
        "/api/gpu/containers": _get("Per-container and per-user rollups, unattributed memory per GPU", [GPU]),
        "/api/fans": _get("Every fan: speed against its floor and target, its controller, what it follows (declared, "
                          "by design or learned, with a confidence), its state and alarm; dead channels with the "
                          "reason; the BMC's air temperatures", [
                              _param("state", "string", "all, or live (no dead channels)", enum=["all", "live"])],
                          tag="fans"),
        "/api/gpu/history": _get("One series of [t, mean, min, max] points", [
            GPU, _param("host", "string", "the host's series (any value): CPU %, load, memory, CPU temperature, "
                        "fan RPM"),
            _param("fan", "string", "a fan's id (from /api/fans): rpm, percent, source_c", maxLength=128),
            _param("pid", "integer", "a process", minimum=1),
            _param("container", "string", "a container id or name", maxLength=128),
            _param("metric", "string", "utilization_percent, memory_used_bytes, memory_percent, temperature_c, "
                   "power_w, fan_speed_percent, clock_sm_mhz (GPU); cpu_percent, load1, memory_percent, "
                   "memory_used_bytes, cpu_temperature_c, fan_rpm (host); rpm, percent, source_c (fan); "
                   "gpu_memory_bytes, sm_percent, power_w, energy_wh, cpu_percent (process, container)"),
            SINCE, UNTIL, _param("step", "number", "seconds per point", exclusiveMinimum=0, maximum=MAX_STEP_S)],
            tag="history"),
        "/api/gpu/available": _get("The best free GPUs, by 0.6 x free/total + 0.4 x idle", [
            _param("count", "integer", "how many GPUs", minimum=1, maximum=4096),
            _param("min_memory_mb", "number", "free memory each needs", minimum=0),
            _param("max_utilization", "number", "busiest acceptable", minimum=0, maximum=100),
            _param("wait", "number", "seconds to wait for them to be free", minimum=0, maximum=300),
            *[_param(k, "integer", f"parallel size {k} (world = tp x pp x max(dp, cp, dcp))", minimum=1,
                     maximum=4096) for k in ("tp", "pp", "dp", "cp", "dcp")]], {"409": ERROR}),
        "/api/alerts": _get("Alert rules, alerts firing now, history of alerts", [
            GPU, _param("limit", "integer", "history rows", minimum=1, maximum=500)], tag="alerts"),
        "/api/health": _get("starting (503, until the first snapshot), ok, degraded or down (503), with the reasons",
                            tag="health"),
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
        "/api/v1/monitoring/gpu-metrics": _get("The GPU Fleet Manager seed's format", tag="fleet-manager"),
        "/api/fleet": _get("Every node a Prometheus scrapes (FANWHY_PROMETHEUS_URL)", extra={"502": ERROR},
                           tag="fleet"),
        "/api/openapi.json": _get("This document", tag="meta"),
        "/api/docs": {"get": {"summary": "This document as a page (works offline)", "tags": ["meta"],
                              "responses": {"200": {"description": "HTML", "content": {"text/html": {
                                  "schema": {"type": "string"}}}}}}},
        "/metrics": {"get": {"summary": "Prometheus text format", "tags": ["metrics"], "responses": {
            "200": {"description": "metrics", "content": {"text/plain": {"schema": {"type": "string"}}}},
            "401": ERROR}}},
    },
}


SPEC = _finish(SPEC)


@bp.get("/openapi.json")
def openapi() -> Response:
    return jsonify(SPEC)


@bp.get("/docs")
def docs() -> str:
    return render_template("docs.html")


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
