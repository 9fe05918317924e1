"""Prometheus metrics: a custom collector over the latest snapshot (never a vendor call per scrape).

Metric families are built fresh on each scrape, so an exited process never lingers as a stale label
set. Process labels are bounded (the ``MAX_PROCESSES`` largest GPU users). Besides FanWhy's own
``fanwhy_*`` names, the names the seeds' exporters published are kept so their dashboards work.
A metric the hardware does not report has no sample (never 0).
"""

from __future__ import annotations

import platform
from collections import defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING, Callable

from flask import Blueprint, Flask, Response, request
from prometheus_client import CollectorRegistry, PlatformCollector, ProcessCollector, make_wsgi_app
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from werkzeug.wrappers import Response as WerkzeugResponse

from ..collect.collector import Collector
from ..collect.frames import Counters, Frame
from ..core.model import GpuSample, Unattributed
from ..core.snapshot import Snapshot
from ..core.version import __version__
from ..core.vocabulary import THROTTLE_REASONS
from .activity_metrics import activity_families
from .services import services

if TYPE_CHECKING:  # the standard's type (PEP 3333), from typeshed
    from _typeshed.wsgi import WSGIApplication

MAX_PROCESSES = 50
GPU_LABELS = ["gpu", "uuid", "name"]
bp = Blueprint("metrics", __name__)


def _gauge(name: str, doc: str, labels: list[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, labels=labels)


def _free(gpu: GpuSample) -> float | None:
    free = gpu.memory_available_bytes
    return float(free) if free is not None else None


# Per-GPU gauges: (name, help, how to read it from a GpuSample; None: no sample).
GPU_GAUGES: list[tuple[str, str, Callable[[GpuSample], float | int | None]]] = [
    ("fanwhy_gpu_utilization_percent", "GPU utilization (%)", lambda g: g.utilization_percent),
    ("fanwhy_gpu_memory_utilization_percent", "Memory controller utilization (%)",
     lambda g: g.memory_utilization_percent),
    ("fanwhy_gpu_memory_used_bytes", "GPU memory used", lambda g: g.memory_used_bytes),
    ("fanwhy_gpu_memory_total_bytes", "GPU memory total", lambda g: g.memory_total_bytes),
    ("fanwhy_gpu_memory_free_bytes", "GPU memory free", _free),
    ("fanwhy_gpu_temperature_celsius", "GPU temperature", lambda g: g.temperature_c),
    ("fanwhy_gpu_temperature_slowdown_celsius", "Temperature at which the GPU slows down",
     lambda g: g.temperature_slowdown_c),
    ("fanwhy_gpu_fan_speed_percent", "Fan speed (% of maximum); absent on passively cooled GPUs",
     lambda g: g.fan_speed_percent),
    ("fanwhy_gpu_power_watts", "Power draw", lambda g: g.power_w),
    ("fanwhy_gpu_power_limit_watts", "Enforced power limit", lambda g: g.power_limit_w),
    ("fanwhy_gpu_clock_sm_hertz", "SM clock", lambda g: g.clock_sm_mhz * 1e6 if g.clock_sm_mhz else None),
    ("fanwhy_gpu_clock_memory_hertz", "Memory clock",
     lambda g: g.clock_memory_mhz * 1e6 if g.clock_memory_mhz else None),
    ("fanwhy_gpu_pstate", "Performance state: 0 (P0, fastest) to 15 (P15); a gauge, so a change adds no series",
     lambda g: int(g.pstate[1:]) if g.pstate else None),
    ("fanwhy_gpu_ecc_errors_uncorrected", "Uncorrected ECC errors since the driver loaded (volatile count)",
     lambda g: g.ecc_errors_uncorrected),
    ("fanwhy_gpu_mig_mode", "1 when MIG mode is on", lambda g: None if g.mig_mode is None else int(g.mig_mode)),
    ("fanwhy_gpu_persistence_mode", "1 when persistence mode is on",
     lambda g: None if g.persistence_mode is None else int(g.persistence_mode)),
]
# The seeds' exporter names, per GPU index.
SEED_GAUGES = (
    ("gpu_memory_total_bytes", "GPU memory total (seed exporter name)"),
    ("gpu_memory_used_bytes", "GPU memory used (seed exporter name)"),
    ("gpu_memory_free_bytes", "GPU memory free (seed exporter name)"),
    ("gpu_memory_known_bytes", "GPU memory of visible processes (seed exporter name)"),
    ("gpu_memory_unknown_bytes", "GPU memory no visible process accounts for (seed exporter name)"),
    ("gpu_inference_active", "1 when unattributed memory was assigned by inference (seed exporter name)"),
)


class SnapshotCollector:
    """prometheus_client custom collector reading ``collector.latest()``."""

    def __init__(self, collector: Collector, max_processes: int = MAX_PROCESSES, seed_names: bool = True):
        self.collector = collector
        self.max_processes = max_processes
        self.seed_names = seed_names  # FANWHY_SEED_METRICS: the seeds' unprefixed names beside fanwhy_*

    def describe(self) -> list[Metric]:
        return []  # collected lazily: families depend on the snapshot

    def collect(self) -> Iterator[Metric]:
        frame = self.collector.latest()
        yield from self._health(frame)
        if frame is None:
            return
        snap = frame.snapshot
        yield from self._gpus(snap, frame.counters)
        yield from activity_families(snap)
        yield from self._processes(snap)
        yield from self._containers(snap)
        yield from self._host(snap)
        yield from self._fans(snap)
        yield from self._alerts(snap)

    def _health(self, frame: Frame | None) -> Iterator[Metric]:
        success = _gauge("fanwhy_collector_success", "1 when the latest collection had no error", [])
        duration = _gauge("fanwhy_collector_duration_seconds", "Time the latest collection took", [])
        errors = CounterMetricFamily("fanwhy_collector_errors", "Collection errors since start", labels=[])
        errors.add_metric([], float(frame.counters.total_errors if frame is not None else 0))
        ticks = CounterMetricFamily("fanwhy_collector_ticks", "Collections since start", labels=[])
        backend = _gauge("fanwhy_backend_info", "The backend in use", ["backend"])
        backend.add_metric([self.collector.backend.name], 1.0)
        build = _gauge("fanwhy_build_info", "FanWhy's version and the Python it runs on", ["version", "python"])
        build.add_metric([__version__, platform.python_version()], 1.0)
        yield build
        if frame is not None:
            snap = frame.snapshot
            success.add_metric([], 0.0 if snap.errors or any(g.error for g in snap.gpus) else 1.0)
            duration.add_metric([], snap.timing.total_ms / 1000.0)
            ticks.add_metric([], float(snap.timing.tick))
            age = _gauge("fanwhy_snapshot_timestamp_seconds", "When the latest snapshot was taken", [])
            age.add_metric([], snap.timestamp)
            yield age
        else:
            success.add_metric([], 0.0)
            ticks.add_metric([], 0.0)
        yield from (success, duration, errors, ticks, backend)

    def _gpus(self, snap: Snapshot, counters: Counters) -> Iterator[Metric]:
        families = [(_gauge(name, doc, GPU_LABELS), read) for name, doc, read in GPU_GAUGES]
        up = _gauge("fanwhy_gpu_up", "1 when the GPU answers, 0 when it failed (lost, unknown error)", GPU_LABELS)
        info = _gauge("fanwhy_gpu_info", "GPU identity", [*GPU_LABELS, "vendor"])
        throttle = _gauge("fanwhy_gpu_throttle_reason", "1 when a clocks-event (throttle) reason is active",
                          [*GPU_LABELS, "reason"])
        energy = CounterMetricFamily("fanwhy_gpu_energy_joules", "Energy since the driver loaded", labels=GPU_LABELS)
        unattributed = _gauge("fanwhy_gpu_unattributed_memory_bytes",
                              "Used memory that no visible process accounts for", GPU_LABELS)
        seed = {name: _gauge(name, doc, ["gpu"]) for name, doc in SEED_GAUGES}
        unaccounted = {u.gpu_index: u for u in snap.unattributed}
        for gpu in snap.gpus:
            labels = [str(gpu.index), gpu.uuid or "", gpu.name or ""]
            up.add_metric(labels, 0.0 if gpu.error else 1.0)
            info.add_metric([*labels, gpu.vendor], 1.0)
            if gpu.error:
                continue
            for family, read in families:
                value = read(gpu)
                if value is not None:
                    family.add_metric(labels, float(value))
            if gpu.throttle_reasons is not None:
                for reason in THROTTLE_REASONS:
                    throttle.add_metric([*labels, reason], 1.0 if reason in gpu.throttle_reasons else 0.0)
            if gpu.energy_j is not None:
                energy.add_metric(labels, gpu.energy_j)
            _seed_and_unattributed(gpu, unaccounted.get(gpu.index), labels, seed, unattributed)
        yield from (family for family, _ in families)
        yield from (up, info, throttle, energy, unattributed)
        yield from self._ledger(snap)
        if self.seed_names:
            yield from seed.values()
        xid = CounterMetricFamily("fanwhy_gpu_xid_errors", "XID errors the GPU reported since FanWhy started, by code",
                                  labels=["gpu", "xid"])
        for (gpu_index, kind, code), count in counters.gpu_events:
            if kind == "xid":
                xid.add_metric(["" if gpu_index is None else str(gpu_index), str(code)], float(count))
        yield xid

    @staticmethod
    def _ledger(snap: Snapshot) -> Iterator[Metric]:
        """Each powered GPU's ledger: board = idle + processes + unattributed, now (W) and since FanWhy started (J)."""
        now = _gauge("fanwhy_gpu_power_part_watts", "A part of the GPU's power: idle (its baseline, charged to no "
                                                    "process), processes, unattributed (work nobody visible does)",
                     [*GPU_LABELS, "part"])
        energy = CounterMetricFamily("fanwhy_gpu_energy_part_joules", "A part of the GPU's energy since FanWhy started "
                                     "(idle, processes, unattributed; they add up to the board's)",
                                     labels=[*GPU_LABELS, "part"])
        gpus = {g.index: g for g in snap.gpus}
        for ledger in snap.ledger:
            gpu = gpus.get(ledger.gpu_index)
            labels = [str(ledger.gpu_index), (gpu.uuid or "") if gpu else "", (gpu.name or "") if gpu else ""]
            for part, watts, wh in (("idle", ledger.idle_w, ledger.idle_wh),
                                    ("processes", ledger.processes_w, ledger.processes_wh),
                                    ("unattributed", ledger.unattributed_w, ledger.unattributed_wh)):
                now.add_metric([*labels, part], watts)
                energy.add_metric([*labels, part], round(wh * 3600.0, 3))
        yield from (now, energy)

    def _processes(self, snap: Snapshot) -> Iterator[Metric]:
        labels = ["pid", "name", "user", "container", "pod", "namespace", "gpu"]  # pod and namespace as dcgm-exporter
        memory = _gauge("fanwhy_process_gpu_memory_bytes", "GPU memory of a process (the largest users only)", labels)
        sm = _gauge("fanwhy_process_sm_percent", "Share of a GPU's SMs a process keeps busy", labels)
        power = _gauge("fanwhy_process_power_watts", "A process's part of its GPU's power above idle (its activity "
                                                     "share, normalised)", labels)
        encoder = _gauge("fanwhy_process_encoder_percent", "Share of a GPU's video encoder a process uses", labels)
        decoder = _gauge("fanwhy_process_decoder_percent", "Share of a GPU's video decoder a process uses", labels)
        watts = {(ledger.gpu_index, pid): w for ledger in snap.ledger for pid, w in ledger.by_process}
        users = sorted((p for p in snap.processes if p.gpus), key=lambda p: -(p.gpu_memory_bytes or 0))
        for proc in users[: self.max_processes]:
            ref = proc.container
            container = (ref.name or ref.id[:12]) if ref else ""
            pod, namespace = (ref.pod or "", ref.namespace or "") if ref else ("", "")
            for use in proc.gpus:
                row = [str(proc.pid), proc.name or "", proc.user or "", container, pod, namespace, str(use.gpu_index)]
                for family, value in ((memory, use.memory_bytes), (sm, use.sm_percent),
                                      (power, watts.get((use.gpu_index, proc.pid))),
                                      (encoder, use.encoder_percent), (decoder, use.decoder_percent)):
                    if value is not None:
                        family.add_metric(row, float(value))
        yield from (memory, sm, power, encoder, decoder)

    def _containers(self, snap: Snapshot) -> Iterator[Metric]:
        ours = ["container_id", "container_name", "runtime", "method"]
        memory = _gauge("fanwhy_container_gpu_memory_bytes", "GPU memory of a container", ours)
        sm = _gauge("fanwhy_container_sm_percent", "SM % of a container, added up over GPUs", ours[:3])
        power = _gauge("fanwhy_container_power_watts", "A container's SM share of GPU power", ours[:3])
        per_gpu = _gauge("container_gpu_memory_bytes", "GPU memory of a container per GPU (seed exporter name)",
                         ["container_name", "container_id", "gpu", "method"])
        detected = _gauge("container_gpu_detected", "1 for a container with GPU access (seed exporter name)",
                          ["container_name", "container_id"])
        usage = _gauge("docker_container_gpu_usage_percent", "SM % of a container (seed exporter name)",
                       ["container_name", "container_id"])
        usage_memory = _gauge("docker_container_gpu_memory_usage_bytes", "GPU memory of a container (seed name)",
                              ["container_name", "container_id"])
        breakdown: dict[tuple[str, int, str], float] = defaultdict(float)
        for proc in snap.processes:
            if proc.container is None:
                continue
            for use in proc.gpus:
                if use.memory_bytes is not None:
                    method = "inference" if use.memory_method == "inference" else "process"
                    breakdown[(proc.container.id, use.gpu_index, method)] += use.memory_bytes
        for item in snap.unattributed:
            for share in item.assigned:
                if share.kind == "container":
                    breakdown[(share.id, item.gpu_index, "inference")] += share.memory_bytes
        names = {c.container.id: c.container.name or c.container.id[:12] for c in snap.containers}
        for (cid, gpu, method), value in sorted(breakdown.items()):
            per_gpu.add_metric([names.get(cid, cid[:12]), cid, str(gpu), method], value)
        for c in snap.containers:
            name, cid = names[c.container.id], c.container.id
            if c.gpu_memory_bytes is not None:
                memory.add_metric([cid, name, c.container.runtime, c.memory_method], float(c.gpu_memory_bytes))
                usage_memory.add_metric([name, cid], float(c.gpu_memory_bytes))
            if c.sm_percent is not None:
                sm.add_metric([cid, name, c.container.runtime], c.sm_percent)
                usage.add_metric([name, cid], c.sm_percent)
            if c.power_w is not None:
                power.add_metric([cid, name, c.container.runtime], c.power_w)
            if c.gpu_access:
                detected.add_metric([name, cid], 1.0)
        yield from (memory, sm, power)
        if self.seed_names:
            yield from (per_gpu, detected, usage, usage_memory)

    def _host(self, snap: Snapshot) -> Iterator[Metric]:
        host = snap.host
        cpu = _gauge("fanwhy_host_cpu_percent", "CPU utilization of the host (%)", [])
        if host.cpu_percent is not None:
            cpu.add_metric([], host.cpu_percent)
        temp = _gauge("fanwhy_host_cpu_temperature_celsius", "CPU package temperature", [])
        if host.cpu_temperature_c is not None:
            temp.add_metric([], host.cpu_temperature_c)
        memory = _gauge("fanwhy_host_memory_used_bytes", "Host memory in use", [])
        total = _gauge("fanwhy_host_memory_total_bytes", "Host memory", [])
        if host.memory_used_bytes is not None:
            memory.add_metric([], host.memory_used_bytes)
        if host.memory_total_bytes is not None:
            total.add_metric([], host.memory_total_bytes)
        load = _gauge("fanwhy_host_load_average", "Load average over 1, 5 and 15 minutes", ["period"])
        for period, value in zip(("1m", "5m", "15m"), host.load_average or (), strict=False):
            load.add_metric([period], value)
        cores = _gauge("fanwhy_host_cpus", "Logical CPUs of the host", [])
        if host.cpu_count is not None:
            cores.add_metric([], host.cpu_count)
        yield from (memory, total, load, cores)
        yield from (cpu, temp)

    @staticmethod
    def _fans(snap: Snapshot) -> Iterator[Metric]:
        """Each fan that is there (a dead channel has no sample): its speed both ways, its target, and 1 while it has
        an alarm, labelled by what never changes (``fan``, ``chip``), so a series and an alert rule's ``for:`` outlive
        a source FanWhy learns. What it follows and how that is known are ``fanwhy_fan_info``'s labels."""
        labels = ["fan", "chip"]
        rpm = _gauge("fanwhy_fan_rpm", "Fan speed counted by its tachometer (RPM)", labels)
        percent = _gauge("fanwhy_fan_percent", "Fan duty its controller asks for (% of full speed; NVML's intended "
                                               "speed, which may pass 100)", labels)
        target = _gauge("fanwhy_fan_target_percent", "The duty the fan's controller aims at (%)", labels)
        alarm = _gauge("fanwhy_fan_alarm", "1 while a fan is failed, off its target or at full speed for no heat",
                       labels)
        info = _gauge("fanwhy_fan_info", "1 for each fan, with what it follows (source, \"\" when not known) and "
                                         "how that is known (declared, design, learned, named)",
                      [*labels, "source", "source_from"])
        for fan in snap.fans:
            if fan.state == "dead":
                continue
            values = [fan.id, fan.chip]
            for family, value in ((rpm, fan.rpm), (percent, fan.percent), (target, fan.target_percent)):
                if value is not None:
                    family.add_metric(values, float(value))
            alarm.add_metric(values, 1.0 if fan.alarm else 0.0)
            info.add_metric([*values, fan.source or "", fan.source_from or ""], 1.0)
        yield from (rpm, percent, target, alarm, info)

    def _alerts(self, snap: Snapshot) -> Iterator[Metric]:
        active = _gauge("fanwhy_alert_active", "1 for each alert firing now", ["rule", "gpu", "severity"])
        for alert in snap.alerts:
            active.add_metric([alert.rule, "" if alert.gpu_index is None else str(alert.gpu_index), alert.severity],
                              1.0)
        yield active


@bp.get("/metrics")
def metrics() -> Response:
    """prometheus_client's own WSGI exposition: gzip when asked, OpenMetrics when asked, ``name[]`` filters."""
    answer = WerkzeugResponse.from_app(services().exposition, request.environ)
    return Response(answer.get_data(), status=answer.status_code, headers=list(answer.headers.items()))


def init_app(app: Flask, collector: Collector, seed_names: bool = True) -> tuple[CollectorRegistry, WSGIApplication]:
    """The registry of /metrics and prometheus_client's WSGI exposition of it (kept with the app's services)."""
    # the snapshot's families are built per scrape (no describe): name[] filters them sample by sample
    registry = CollectorRegistry(auto_describe=False, support_collectors_without_names=True)
    registry.register(SnapshotCollector(collector, seed_names=seed_names))
    registry.register(ProcessCollector(registry=None))  # FanWhy's own process_* (CPU seconds, memory, descriptors)
    registry.register(PlatformCollector(registry=None))  # python_info
    app.register_blueprint(bp)
    return registry, make_wsgi_app(registry)


def _seed_and_unattributed(gpu: GpuSample, item: Unattributed | None, labels: list[str],
                           seed: dict[str, GaugeMetricFamily], unattributed: GaugeMetricFamily) -> None:
    """One GPU's rows of the seeds' memory gauges and of the unattributed memory."""
    free = _free(gpu)
    index = [str(gpu.index)]
    for name, value in (("gpu_memory_total_bytes", gpu.memory_total_bytes),
                        ("gpu_memory_used_bytes", gpu.memory_used_bytes), ("gpu_memory_free_bytes", free)):
        if value is not None:
            seed[name].add_metric(index, float(value))
    if item is not None and item.memory_bytes is not None and gpu.memory_used_bytes is not None:
        unattributed.add_metric(labels, float(item.memory_bytes))
        seed["gpu_memory_unknown_bytes"].add_metric(index, float(item.memory_bytes))
        seed["gpu_memory_known_bytes"].add_metric(index, float(gpu.memory_used_bytes - item.memory_bytes))
        seed["gpu_inference_active"].add_metric(index, 1.0 if item.assigned else 0.0)
