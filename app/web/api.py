"""REST endpoints: views of the latest snapshot. No route calls a vendor library."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Sequence, TypedDict

from flask import Blueprint, Flask, Response, jsonify

from ..collect.collector import Collector
from ..collect.frames import Frame
from ..collect.serialize import fan_view, gpu_headline, process_view, to_json
from ..core.jsonvalue import members
from ..core.model import ProcessSample
from ..core.threads import FAULTS
from ..core.version import __version__
from ..core.vocabulary import PROCESS_KINDS, PROCESS_PAGE_CEILING, PROCESS_SORTS
from .rest import ApiError, allow_only, arg
from .services import services

if TYPE_CHECKING:
    from ..store.history import History
    from ..verdict.notify import TargetStatus

bp = Blueprint("api", __name__, url_prefix="/api")



def _collector() -> Collector:
    collector: Collector = services().collector
    return collector


def _frame() -> Frame:
    frame = _collector().latest()
    if frame is None:
        raise ApiError(503, "no data yet", "the collector has not finished its first snapshot; retry in a second")
    return frame


def _freshness(frame: Frame) -> dict[str, object]:
    """How old the data is, and whether it is stale (the backend hangs, or the collector is late)."""
    collector = _collector()
    return {"stale": collector.stale(frame), "data_age_s": round(time.monotonic() - frame.monotonic, 3)}


def _fresh(frame: Frame) -> dict[str, object]:
    return {**frame.view, **_freshness(frame)}


def _gpu_arg(frame: Frame) -> int | None:
    index = arg("gpu", int, None, lambda v: v >= 0, "a GPU index, 0 or more")
    if index is not None and frame.snapshot.gpu(index) is None:
        raise ApiError(404, f"no GPU {index}", {"gpus": [g.index for g in frame.snapshot.gpus]})
    return index


@bp.get("/gpu/metrics")
def metrics() -> Response:
    """Everything in the latest snapshot; ``?gpu=N`` keeps one GPU and its processes."""
    allow_only(("gpu",))
    frame = _frame()
    index = _gpu_arg(frame)
    view = _fresh(frame)
    if index is None:
        return jsonify(view)
    # One GPU: the model decides what to keep, the frame's view (made once per tick) supplies it, item for item
    # (the view's lists follow the snapshot's order).
    snap = frame.snapshot
    view["gpus"] = [g for g, s in zip(members(frame.view["gpus"]), snap.gpus, strict=True) if s.index == index]
    view["processes"] = [p for p, s in zip(members(frame.view["processes"]), snap.processes, strict=True)
                         if any(u.gpu_index == index for u in s.gpus)]
    return jsonify(view)


@bp.get("/gpu/summary")
def summary() -> Response:
    allow_only(())
    frame = _frame()
    snap = frame.snapshot
    host = snap.host
    return jsonify({
        **_freshness(frame),
        "timestamp": snap.timestamp,
        "backend": snap.backend.name,
        "gpu_count": len(snap.gpus),
        "verdict": to_json(snap.verdict),
        "no_gpu_summary": snap.backend.no_gpu_summary,
        "no_gpu_reason": snap.backend.no_gpu_reason,
        "gpus": [gpu_headline(g) for g in snap.gpus],
        "host": {
            "hostname": host.hostname, "cpu_percent": host.cpu_percent,
            "cpu_temperature_c": host.cpu_temperature_c, "load_average": to_json(host.load_average),
            "memory_used_bytes": host.memory_used_bytes, "memory_total_bytes": host.memory_total_bytes,
            "fans": [fan_view(f) for f in snap.fans if f.state != "dead"],
        },
        "top_processes": [
            {k: v for k, v in process_view(p).items()
             if k in ("pid", "name", "user", "gpu_memory_bytes", "sm_percent", "cpu_percent", "visibility")}
            for p in snap.processes[:5]
        ],
        "top_containers": [
            {"id": c.container.id, "name": c.container.name, "runtime": c.container.runtime,
             "gpu_memory_bytes": c.gpu_memory_bytes, "memory_method": c.memory_method, "sm_percent": c.sm_percent}
            for c in snap.containers[:5]
        ],
        "unattributed": to_json(snap.unattributed),
        "ledger": to_json(snap.ledger),
        "alerts": to_json(snap.alerts),
    })


@bp.get("/fans")
def fans() -> Response:
    """Every fan of the latest snapshot: where it is, its speed against its floor and target, who controls it, what
    it follows and how that is known, its state and alarm; dead channels too, each with the reason it is not a fan
    (``state=live`` leaves them out). With the BMC's air temperatures, and why the BMC or a fan daemon's configuration
    was not read."""
    allow_only(("state",))
    which = arg("state", str, "all", lambda v: v in ("all", "live"), "all or live")
    frame = _frame()
    snap, service = frame.snapshot, _collector().fans
    bmc_read, bmc_reason = service.bmc
    rows = [f for f in snap.fans if which == "all" or f.state != "dead"]
    return jsonify({"timestamp": snap.timestamp, "count": len(rows),
                    "fans": to_json(rows),
                    "air": to_json(snap.air), "bmc": {"read": bmc_read, "reason": bmc_reason},
                    "configs": dict(service.config_errors),
                    "sources": [status.view() for status in service.statuses]})


@bp.get("/gpu/processes")
def processes() -> Response:
    """GPU users and then every other process (app.attribution.listing). ``gpu``, ``kind`` (all|gpu|cpu), ``sort``,
    ``offset``, ``limit`` (at most PROCESS_PAGE_CEILING); ``count`` is how many match, ``next`` the next page's
    offset."""
    allow_only(("gpu", "kind", "sort", "offset", "limit"))
    frame = _frame()
    index = _gpu_arg(frame)
    kind = arg("kind", str, "all", lambda v: v in PROCESS_KINDS, " or ".join(PROCESS_KINDS))
    sort = arg("sort", str, "gpu_memory", lambda v: v in PROCESS_SORTS, " or ".join(PROCESS_SORTS))
    offset = arg("offset", int, 0, lambda v: v >= 0, "an integer, 0 or more")
    ceiling = PROCESS_PAGE_CEILING
    limit = arg("limit", int, 100, lambda v: 1 <= v <= ceiling, f"an integer from 1 to {ceiling}")
    count, rows = _collector().attributor.listing.page(frame.snapshot, kind, sort, offset, limit, index)
    return jsonify({"timestamp": frame.snapshot.timestamp, "count": count, "offset": offset, "limit": limit,
                    "next": offset + limit if offset + limit < count else None,
                    "processes": [process_view(p) for p in rows]})


@bp.get("/gpu/processes/<pid>")
def process(pid: str) -> Response:
    """One process of the latest snapshot, with its whole masked command line (``command_full``): lists carry
    it bounded to MAX_COMMAND_CHARS."""
    allow_only(())
    if not (pid.isascii() and pid.isdecimal()) or len(pid) > 10:
        raise ApiError(400, f"invalid pid: {pid[:40]!r}", "expected a process ID, a positive integer")
    frame = _frame()
    found = _collector().attributor.listing.one(frame.snapshot, int(pid))
    if found is None:
        raise ApiError(404, f"no process {int(pid)}", "no such process now (a kernel thread is not listed)")
    row, command = found
    return jsonify({"timestamp": frame.snapshot.timestamp, **process_view(row), "command_full": command})


@bp.get("/gpu/containers")
def containers() -> Response:
    """Per-container and per-user rollups, GPU containers even when idle, and per-GPU unattributed use.

    ``memory_method: "inference"`` marks an estimate (unattributed memory split equally among GPU
    containers, or PIDs, that NVML does not list)."""
    allow_only(("gpu",))
    frame = _frame()
    index = _gpu_arg(frame)
    snap = frame.snapshot
    rows = [c for c in snap.containers if index is None or index in c.gpu_indices or not c.gpu_indices]
    unattributed = [u for u in snap.unattributed if index is None or u.gpu_index == index]
    return jsonify({"timestamp": snap.timestamp, "count": len(rows), "containers": to_json(rows),
                    "users": to_json(snap.users), "unattributed": to_json(unattributed)})


@bp.get("/gpu/pods")
def pods() -> Response:
    """Per pod and per namespace (Kubernetes): the GPU memory, SM % and power of the processes in each pod, as the
    cgroups place them and the Kubernetes API names them (the pod's UID alone when the API is not reachable)."""
    allow_only(())
    snap = _frame().snapshot
    rows = _pod_rows(snap.processes)
    return jsonify({"timestamp": snap.timestamp, "pods": rows, "namespaces": _namespace_rows(rows)})


class PodRow(TypedDict):
    """One pod of ``/api/gpu/pods``: its processes' GPU memory, SM %, power and CPU summed."""

    namespace: str | None
    pod: str
    pod_uid: str | None
    containers: list[str]
    pids: list[int]
    gpu_memory_bytes: int
    sm_percent: float
    power_w: float
    cpu_percent: float


class NamespaceRow(TypedDict):
    namespace: str | None
    pods: int
    gpu_memory_bytes: int
    sm_percent: float
    power_w: float


def _pod_rows(processes: Sequence[ProcessSample]) -> list[PodRow]:
    groups: dict[tuple[str, str], list[ProcessSample]] = {}
    for proc in processes:
        ref = proc.container
        if ref is not None and (ref.pod or ref.pod_uid):
            groups.setdefault((ref.namespace or "", ref.pod or ref.pod_uid or ""), []).append(proc)
    rows = [_pod_row(namespace, pod, members) for (namespace, pod), members in groups.items()]
    rows.sort(key=lambda r: (-r["gpu_memory_bytes"], -r["sm_percent"], r["pod"]))
    return rows


def _pod_row(namespace: str, pod: str, members: Sequence[ProcessSample]) -> PodRow:
    refs = [p.container for p in members if p.container is not None]
    return {"namespace": namespace or None, "pod": pod, "pod_uid": next((r.pod_uid for r in refs if r.pod_uid), None),
            "containers": sorted({r.name or r.id[:12] for r in refs}), "pids": sorted(p.pid for p in members),
            "gpu_memory_bytes": sum(p.gpu_memory_bytes or 0 for p in members),
            "sm_percent": sum(p.sm_percent or 0 for p in members),
            "power_w": round(sum(p.power_w or 0 for p in members), 2),
            "cpu_percent": sum(p.cpu_percent or 0 for p in members)}


def _namespace_rows(rows: Sequence[PodRow]) -> list[NamespaceRow]:
    namespaces: dict[str, NamespaceRow] = {}
    for row in rows:
        total = namespaces.setdefault(row["namespace"] or "", {"namespace": row["namespace"], "pods": 0,
                                                               "gpu_memory_bytes": 0, "sm_percent": 0.0,
                                                               "power_w": 0.0})
        total["pods"] += 1
        total["gpu_memory_bytes"] += row["gpu_memory_bytes"]
        total["sm_percent"] += row["sm_percent"]
        total["power_w"] += row["power_w"]
    return list(namespaces.values())


@bp.get("/alerts")
def alerts() -> Response:
    """The rules (threshold, hold, hysteresis, cooldown per rule), the alerts firing now, and the history
    of fired and resolved alerts (newest first). ``?limit=`` caps the history (1-500, default 100)."""
    allow_only(("limit", "gpu"))
    frame = _frame()
    index = _gpu_arg(frame)
    limit = arg("limit", int, 100, lambda v: 1 <= v <= 500, "an integer from 1 to 500")
    engine = _collector().alerts
    recent = frame.counters.recent_alerts
    history = [a for a in reversed(recent) if index is None or a.gpu_index == index][:limit]
    active = [a for a in frame.snapshot.alerts if index is None or a.gpu_index == index]
    return jsonify({"rules": engine.describe(), "active": to_json(active), "history": to_json(history)})


@bp.get("/health")
def health() -> tuple[Response, int]:
    allow_only(())
    fanwhy = services()
    collector: Collector = fanwhy.collector
    frame = collector.latest()
    notifications = fanwhy.notifier.status() if fanwhy.notifier is not None else []
    # the frame's counters; before the first frame, the collector's own (nothing else has them yet)
    counters = frame.counters if frame is not None else collector.counters()
    body: dict[str, object] = {
        "version": __version__,
        "backend": collector.backend.name,
        "skipped_backends": dict(collector.selection.skipped),
        "interval_s": collector.interval_s,
        "collector_running": collector.running,
        "consecutive_failures": counters.consecutive_failures,
        "total_errors": counters.total_errors,
        "xid_events": collector.backend.event_watch(),
        "history": _history_health(fanwhy.history),
        "notifications": notifications,
        "thread_faults": FAULTS.recent(),
        "refusals": fanwhy.refusals.counts() if fanwhy.refusals is not None else {},
        "sessions": fanwhy.sessions.view() if fanwhy.sessions is not None else {},
    }
    if frame is None:  # not ready: every view of the snapshot answers 503 until the first one
        if not fanwhy.settings.collector:
            body.update(status="degraded", reason="this server does not collect (FANWHY_COLLECTOR=off) and has "
                        "received no snapshot yet", reasons=["no snapshot yet"], data_age_s=None)
            return jsonify(body), 200
        status = "starting" if collector.running else "down"
        body.update(status=status, reason="no snapshot yet" if collector.running else "the collector is not running",
                    reasons=["no snapshot yet"], data_age_s=None)
        return jsonify(body), 503
    snap = frame.snapshot
    age = round(time.monotonic() - frame.monotonic, 3)
    gpu_errors = {str(g.index): g.error for g in snap.gpus if g.error}
    down, degraded = _health_reasons(collector, fanwhy.history, fanwhy.settings.collector, frame, age,
                                     notifications)
    status = "down" if down else "degraded" if degraded else "ok"
    reasons = down + degraded
    body.update(status=status, reasons=reasons, data_age_s=age, stale=collector.stale(frame),
                tick=snap.timing.tick,
                gpu_count=len(snap.gpus), gpu_errors=gpu_errors, no_gpu_reason=snap.backend.no_gpu_reason,
                collector_errors=list(snap.errors), timing=to_json(snap.timing))
    return jsonify(body), 503 if status == "down" else 200


def _health_reasons(collector: Collector, history: History | None, collects: bool, frame: Frame, age: float,
                    notifications: Sequence[TargetStatus]) -> tuple[list[str], list[str]]:
    """Why the server is down (no current data at all) and why it is degraded (some data missing or old)."""
    down = []
    if not collector.running and collects:
        down.append("the collector is not running")
    if age > 5 * collector.interval_s + 2:
        down.append(f"the latest snapshot is {age:.0f} s old")
    degraded = [f"{collector.hung}: serving the last snapshot, marked stale"] if collector.hung else []
    if history is not None:
        degraded.extend(filter(None, [history.error, *history.recent_faults()]))
    degraded.extend(frame.snapshot.errors)
    degraded.extend(f"notifications to {n['target']} failing: {n['last_error']}"
                    for n in notifications if n["last_error"])
    degraded.extend(f"GPU {g.index}: {g.error}" for g in frame.snapshot.gpus if g.error)
    degraded.extend(f"thread {f['thread']} failed ({f['count']}×, last {f['age_s']} s ago): {f['reason']}; started "
                    "again" for f in FAULTS.recent())
    if age > 2 * collector.interval_s + 1 and not down:
        degraded.append(f"the latest snapshot is {age:.1f} s old")
    return down, degraded


def _history_health(history: History | None) -> dict[str, object]:
    if history is None:
        return {"enabled": False}
    return {"enabled": True, "path": str(history.path), "error": history.error,
            "write_failures": history.write_failures, "written_ticks": history.written_ticks,
            "moved_aside": str(history.moved_aside) if history.moved_aside else None,
            "recent_faults": history.recent_faults()}


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
