"""History, recordings and "while you were away": REST views of the SQLite history."""

from __future__ import annotations

import re
import sqlite3
import time
import uuid

from flask import Blueprint, Flask, Response, jsonify, request

from ..core.jsonvalue import Json
from ..store.history import History
from ..store.queries import HistoryError, gapped, gaps
from ..store.recordings import Recorder, RecordingsFull
from ..store.schema import FAN_METRICS, GPU_METRICS, HOST_METRICS, PROCESS_METRICS
from ..verdict import away
from .rest import ApiError, allow_only, arg, json_body
from .services import services

MAX_STEP_S = 366 * 86400.0  # a larger step is no window (1e308 s made an Infinity, which is not JSON)

bp = Blueprint("history", __name__, url_prefix="/api")
_RELATIVE = re.compile(r"^-?(\d+(?:\.\d+)?)([smhd])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _recorder() -> Recorder:
    recorder: Recorder | None = services().recorder
    if recorder is None:
        raise ApiError(404, "history is off", "start FanWhy with FANWHY_DB set (it is 'none' here)")
    return recorder


def _history() -> History:
    history: History | None = services().history
    if history is None:
        raise ApiError(404, "history is off", "start FanWhy with FANWHY_DB set (it is 'none' here)")
    return history


def parse_time(raw: str | None, default: float, now: float, name: str) -> float:
    """Unix seconds, or relative to now: ``-15m``, ``1h``, ``7d``, ``now``."""
    if raw is None or raw == "":
        return default
    if raw == "now":
        return now
    match = _RELATIVE.match(raw.strip())
    if match:
        return now - float(match.group(1)) * _UNITS[match.group(2)]
    try:
        value = float(raw)
    except ValueError:
        raise ApiError(400, f"invalid {name}: {raw[:40]!r}",
                       "expected unix seconds or a span before now such as -15m, -1h, -24h, -7d") from None
    if not 0 <= value < 1e11:  # NaN and infinity fail too
        raise ApiError(400, f"invalid {name}: {raw[:40]!r}", "expected a non-negative number of unix seconds")
    return value


@bp.get("/gpu/history")
def gpu_history() -> Response:
    """One series: ``gpu=N`` (GPU metrics), ``host=1`` (the host's: CPU %, load, memory, CPU temperature, fan
    RPM), ``fan=ID`` (a fan's rpm, percent and source_c), ``pid=N`` or ``container=ID|NAME`` (process metrics);
    ``metric``, ``since``/``until`` (unix seconds or -15m/-1h/-24h/-7d), ``step`` (seconds).
    Points are [t, mean, min, max]."""
    allow_only(("gpu", "host", "fan", "pid", "container", "metric", "since", "until", "step"))
    history = _history()
    selectors = [k for k in ("gpu", "host", "fan", "pid", "container") if k in request.args]
    if len(selectors) != 1:
        raise ApiError(400, "name exactly one of gpu, host, fan, pid or container", {"got": selectors})
    now = time.time()
    since = parse_time(request.args.get("since"), now - 900, now, "since")
    until = parse_time(request.args.get("until"), now, now, "until")
    step = arg("step", float, None, lambda v: 0 < v <= MAX_STEP_S, "a positive number of seconds, at most a year")
    interval = services().collector.interval_s  # the collector owns the interval (it may change while running)
    try:
        win = history.window(since, until, step, interval)
        if selectors[0] == "gpu":
            gpu = arg("gpu", int, 0, lambda v: v >= 0, "a GPU index")
            metric = request.args.get("metric", "utilization_percent")
            points = history.gpu_series(gpu, metric, win)
            subject: dict[str, object] = {"gpu": gpu}
        elif selectors[0] == "host":
            metric = request.args.get("metric", "cpu_percent")
            points = history.host_series(metric, win)
            subject = {"host": True}
        elif selectors[0] == "fan":
            fan = request.args["fan"][:128]
            metric = request.args.get("metric", "rpm")
            points = history.fan_series(fan, metric, win)
            subject = {"fan": fan}
        else:
            metric = request.args.get("metric", "sm_percent")
            if selectors[0] == "pid":
                pid = arg("pid", int, 0, lambda v: v > 0, "a PID")
                points = history.process_series(metric, win, pid=pid)
                subject = {"pid": pid}
            else:
                container = request.args["container"][:128]
                points = history.process_series(metric, win, container=container)
                subject = {"container": container}
    except HistoryError as error:
        raise ApiError(400, str(error), {"gpu_metrics": list(GPU_METRICS), "host_metrics": list(HOST_METRICS),
                                         "fan_metrics": list(FAN_METRICS),
                                         "process_metrics": list(PROCESS_METRICS)}) from None
    return jsonify({**subject, "metric": metric, "since": win.since, "until": win.until, "step": win.step,
                    "source": win.source, "columns": ["t", "mean", "min", "max"], "gap_s": win.gap_s,
                    "gaps": gaps(points, win), "points": gapped(points, win)})


@bp.get("/history/away")
def while_you_were_away() -> Response:
    """The verdict over a past window: which causes were on top, for how long, and who used the most energy."""
    allow_only(("since", "until"))
    history = _history()
    now = time.time()
    since = parse_time(request.args.get("since"), now - 8 * 3600, now, "since")
    until = parse_time(request.args.get("until"), now, now, "until")
    if until <= since:
        raise ApiError(400, "'since' must be before 'until'")
    causes = away.group(history.verdicts(since, until), min(until, now))
    return jsonify({"since": since, "until": until, "causes": causes,
                    "top_processes": history.top_processes(since, until),
                    "alerts": history.alerts(since, until, limit=50)})


def _gpu_indices(value: Json, present: list[int]) -> list[int] | None:
    """A recording's ``gpus``: null for all, else a list of GPU indices that exist (400, 404 otherwise), each once
    and in order (a GPU named twice is recorded once: the list is never longer than the machine's GPUs)."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(g, int) and not isinstance(g, bool) for g in value):
        raise ApiError(400, "invalid gpus", "a list of GPU indices, or null for all")
    gpus = sorted({g for g in value if isinstance(g, int)})  # all of them (checked above): now typed so
    missing = [g for g in gpus if g not in present]
    if missing:
        raise ApiError(404, f"no GPU {missing[0]}", {"gpus": present})
    return gpus


@bp.post("/recordings")
def start_recording() -> tuple[Response, int]:
    """Start recording GPU statistics: ``{"label": str, "gpus": [int] | null, "interval": seconds}``."""
    recorder = _recorder()
    body = json_body()
    body = {} if body is None else body
    if not isinstance(body, dict):
        raise ApiError(400, "the body must be a JSON object")
    unknown = sorted(set(body) - {"label", "gpus", "interval"})
    if unknown:
        raise ApiError(400, f"unknown field {unknown[0]!r}", {"allowed": ["label", "gpus", "interval"]})
    label = body.get("label", "")
    if not isinstance(label, str) or len(label) > 200:
        raise ApiError(400, "invalid label", "a string of at most 200 characters")
    snapshot = services().collector.latest()
    present = [g.index for g in snapshot.snapshot.gpus] if snapshot else []
    gpus = _gpu_indices(body.get("gpus"), present)
    tick_s = services().collector.interval_s  # a recording samples at most once a tick
    interval = body.get("interval", tick_s)
    if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not 0 < interval <= 3600:
        raise ApiError(400, "invalid interval", "seconds between samples, more than 0 and at most 3600")
    rec_id = uuid.uuid4().hex[:12]
    try:
        recorder.start(rec_id, label, gpus, float(max(interval, tick_s)), time.time())
    except RecordingsFull as full:
        raise ApiError(429, "too many recordings", str(full)) from None
    found = recorder.get(rec_id)
    return jsonify(found), 201


@bp.post("/recordings/<rec_id>/stop")
def stop_recording(rec_id: str) -> Response:
    recorder = _recorder()
    found = recorder.get(rec_id[:64])
    if found is None:
        raise ApiError(404, f"no recording {rec_id[:64]!r}")
    if found["state"] != "recording":  # stopped, or closed as interrupted at a restart
        return jsonify(found)
    return jsonify(recorder.stop(rec_id, time.time()))


@bp.get("/recordings")
def list_recordings() -> Response:
    allow_only(("limit",))
    limit = arg("limit", int, 100, lambda v: 1 <= v <= 1000, "an integer from 1 to 1000")
    return jsonify({"recordings": _recorder().newest(limit)})


@bp.get("/recordings/<rec_id>")
def get_recording(rec_id: str) -> Response:
    found = _recorder().get(rec_id[:64])
    if found is None:
        raise ApiError(404, f"no recording {rec_id[:64]!r}")
    return jsonify(found)


@bp.errorhandler(sqlite3.Error)
def history_unavailable(error: sqlite3.Error) -> tuple[Response, int]:
    """The file failed under a reader (replaced, broken, locked): the writer checks it before its next write."""
    return jsonify({"error": "history unavailable", "detail": f"{type(error).__name__}: {error}; "
                    "FanWhy is checking the history file (see /api/health)"}), 503


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
