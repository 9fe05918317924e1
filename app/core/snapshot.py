"""What one tick publishes: the Snapshot (every sample of app.core.model at one instant), the verdict and the
causes behind it, the alerts, and how the tick went. Built once per tick by the collector, never mutated."""

from __future__ import annotations

from dataclasses import field
from typing import Literal, Mapping

from .activity import BusyKind
from .fan import AirSensor, Fan
from .finding import Finding
from .ledger import PowerLedger
from .model import (
    EMPTY,
    ContainerSample,
    GpuSample,
    HostSample,
    ProcessSample,
    Unattributed,
    UserSample,
)
from .record import record

# What a cause of heat or noise is (app.verdict.explain makes each; the page and the history key on them).
CauseKind = Literal["gpu_load", "gpu_failed", "cpu_load", "thermal_throttle", "power_cap", "memory_holder",
                    "idle_wake", "fan", "fan_fault", "asleep"]


@record
class Alert:
    """An alert that is firing (in ``Snapshot.alerts``) or an alert event of this tick."""

    id: str
    rule: str
    gpu_index: int | None
    severity: str
    message: str
    value: float | None
    threshold: float | None
    since: float
    state: Literal["firing", "resolved"] = "firing"
    resolved_at: float | None = None


@record
class Cause:
    """One reason for heat or noise, with the numbers behind it. ``score`` ranks causes (0-1)."""

    kind: CauseKind
    summary: str
    score: float
    gpu_index: int | None = None
    pid: int | None = None
    container: str | None = None
    numbers: Mapping[str, float | str | None] = field(default_factory=lambda: EMPTY)


@record
class Verdict:
    """The answer in one sentence, the ranked causes behind it, and how sure FanWhy is (0-1)."""

    headline: str
    causes: tuple[Cause, ...]
    confidence: float
    busy: bool
    # What the fan wing found of the fans, the strongest first: the first leads (kind, subjects, facts, confidence)
    fan_findings: tuple[Finding, ...] = ()
    busy_kinds: tuple[BusyKind, ...] = ()  # what kind of busy each GPU with activity counters is


@record
class CollectorTiming:
    """How long this tick's collection took, in milliseconds, per stage."""

    total_ms: float
    gpus_ms: float
    processes_ms: float
    host_ms: float
    interval_s: float
    tick: int


@record
class BackendInfo:
    """Which backend answered, and why the others were skipped."""

    name: str
    skipped: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    no_gpu_reason: str | None = None  # the technical reasons, joined
    no_gpu_summary: str | None = None  # the same in a sentence for a person ("No GPU found: no NVIDIA driver")


@record
class Snapshot:
    """Everything FanWhy knows at one instant. Built once per tick, never mutated."""

    timestamp: float
    backend: BackendInfo
    host: HostSample
    gpus: tuple[GpuSample, ...]
    processes: tuple[ProcessSample, ...]
    timing: CollectorTiming
    containers: tuple[ContainerSample, ...] = ()
    users: tuple[UserSample, ...] = ()
    unattributed: tuple[Unattributed, ...] = ()
    verdict: Verdict | None = None
    alerts: tuple[Alert, ...] = ()
    alert_events: tuple[Alert, ...] = ()
    fans: tuple[Fan, ...] = ()  # every fan of the machine (the GPUs', the board's, the chassis'), each with its source
    air: tuple[AirSensor, ...] = ()  # the chassis' inlet and exhaust air and the BMC's other probes
    ledger: tuple[PowerLedger, ...] = ()  # each powered GPU: board = idle + processes + unattributed
    errors: tuple[str, ...] = field(default=())

    def gpu(self, index: int) -> GpuSample | None:
        for sample in self.gpus:
            if sample.index == index:
                return sample
        return None
