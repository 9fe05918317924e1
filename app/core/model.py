"""The data model: the immutable samples one tick reads (GPUs, processes, containers, the host); what the tick
publishes from them, the Snapshot and its answer, is app.core.snapshot.

Units are in the names. A metric the hardware does not report is ``None``, never 0, and the
reason is kept in the owner's ``unsupported`` mapping (field name -> reason), so the page can say
"N/A: passively cooled" and Prometheus can omit the sample.
"""

from __future__ import annotations

from dataclasses import field
from types import MappingProxyType
from typing import Literal, Mapping, Never, TypeVar

from .activity import Activity
from .fan import Fan
from .record import record

Visibility = Literal["visible", "host-pid-only", "inferred"]
ProcessStatus = Literal["ok", "vanished", "zombie", "denied", "outside-namespace"]
MemoryMethod = Literal["reported", "inference", "none"]
UsageKind = Literal["compute", "graphics", "utilization-only"]

EMPTY: Mapping[str, Never] = MappingProxyType({})  # an empty default for a mapping of any values
V = TypeVar("V")


def frozen_map(values: Mapping[str, V] | None) -> Mapping[str, V]:
    """A read-only copy of ``values`` (snapshots are never mutated)."""
    return MappingProxyType(dict(values)) if values else EMPTY


_T = TypeVar("_T")


def used_percent(used: int | None, total: int | None) -> float | None:
    """``used`` as % of ``total`` (a GPU's memory, the host's); None when either is unknown or the total is 0."""
    if used is None or not total:
        return None
    return 100.0 * used / total


def evolve(obj: _T, **changes: object) -> _T:
    """``dataclasses.replace`` for the collector's per-tick path: a copy of a model object with ``changes``,
    in a fraction of the time (model types have no ``__post_init__`` and no slots, so ``__init__`` adds
    nothing). An unknown field name raises TypeError, as ``replace`` does.

    Kept because ``benchmarks/peers.py`` measured it: with plain ``replace`` and a plain JSON converter the
    collector's tick went past the target the engine is held to (``benchmarks/targets.py``)."""
    copy = object.__new__(type(obj))
    values = copy.__dict__
    values.update(obj.__dict__)
    unknown = changes.keys() - values.keys()
    if unknown:
        raise TypeError(f"{type(obj).__name__} has no field {', '.join(sorted(unknown))}")
    values.update(changes)
    return copy


@record
class GpuSample:
    """One GPU at one instant. Every metric may be None; ``unsupported`` says why.

    ``error`` is set when the GPU itself failed (lost, unknown error): the row stays, with the
    name and uuid last known, while the other GPUs keep reporting.
    """

    vendor: str
    index: int
    uuid: str | None = None
    name: str | None = None
    utilization_percent: float | None = None
    memory_utilization_percent: float | None = None
    memory_used_bytes: int | None = None
    memory_total_bytes: int | None = None
    memory_free_bytes: int | None = None
    temperature_c: float | None = None
    temperature_slowdown_c: float | None = None
    temperature_shutdown_c: float | None = None
    temperatures: Mapping[str, float] = field(default_factory=lambda: EMPTY)  # every sensor, e.g. hotspot
    fans: tuple[Fan, ...] = ()  # each fan (or fan controller) of the card: the one list its fan figures come from
    # True when the hardware reports no fan of its own (NVML: 0 fans; amdsmi, nvidia-smi, hwmon: none reported):
    # the chassis fans cool it. The page and the verdict read this, not the reason's wording.
    passively_cooled: bool = False
    asleep: bool = False  # runtime-suspended: not read, so as not to wake it (``unsupported["asleep"]`` says so)
    power_w: float | None = None
    power_limit_w: float | None = None
    clock_sm_mhz: int | None = None
    clock_memory_mhz: int | None = None
    clock_sm_max_mhz: int | None = None
    pstate: str | None = None
    throttle_reasons: tuple[str, ...] | None = None
    energy_j: float | None = None
    ecc_errors_uncorrected: int | None = None
    mig_mode: bool | None = None
    persistence_mode: bool | None = None
    display_active: bool | None = None
    pci_bus_id: str | None = None
    activity: Activity | None = None  # its activity counters (NVML GPM); None: ``unsupported["activity"]`` says why
    activity_instances: tuple[Activity, ...] = ()  # with MIG on: each GPU instance's
    source: str = ""
    error: str | None = None
    unsupported: Mapping[str, str] = field(default_factory=lambda: EMPTY)

    @property
    def fan_speeds_percent(self) -> tuple[float, ...]:
        """Each fan's duty, in the order of ``fans`` (those that report one)."""
        return tuple(f.percent for f in self.fans if f.percent is not None)

    @property
    def fan_speed_percent(self) -> float | None:
        """The card's fan speed: the highest of its fans' duties; None with no fan reporting one."""
        speeds = self.fan_speeds_percent
        return max(speeds) if speeds else None

    @property
    def fan_rpm(self) -> int | None:
        """The card's first fan's tachometer, where it counts one."""
        return self.fans[0].rpm if self.fans else None

    @property
    def memory_available_bytes(self) -> int | None:
        """Free memory as the driver reports it (it excludes the driver's reserve), else total - used."""
        if self.memory_free_bytes is not None:
            return self.memory_free_bytes
        if self.memory_total_bytes is None or self.memory_used_bytes is None:
            return None
        return self.memory_total_bytes - self.memory_used_bytes

    @property
    def memory_percent(self) -> float | None:
        """Used memory as % of total; None when either is unknown."""
        return used_percent(self.memory_used_bytes, self.memory_total_bytes)


@record
class GpuProcessUsage:
    """What a backend knows of one process on one GPU (raw, before attribution).

    ``memory_bytes`` is None where the driver does not say (WDDM, or a PID seen only in the
    utilization samples); ``sm_percent`` is None where per-process utilization is not supported.
    """

    pid: int
    gpu_index: int
    memory_bytes: int | None = None
    sm_percent: float | None = None
    encoder_percent: float | None = None
    decoder_percent: float | None = None
    kind: UsageKind = "compute"
    name_hint: str | None = None


@record
class ProcessGpu:
    """A process's use of one GPU, inside a ProcessSample."""

    gpu_index: int
    memory_bytes: int | None
    sm_percent: float | None
    encoder_percent: float | None
    decoder_percent: float | None
    kind: str
    memory_method: MemoryMethod = "reported"


@record
class ContainerRef:
    """The container a process runs in (filled by the attribution layer; None when none)."""

    runtime: str
    id: str
    name: str | None = None
    image: str | None = None
    pod: str | None = None  # the pod's name when the Kubernetes API gave it, else its UID
    namespace: str | None = None
    pod_uid: str | None = None  # from the cgroup path, with or without the API


@record
class ProcessSample:
    """A process that uses a GPU, or one of the busiest CPU users.

    A vanished, zombie or denied process keeps its row: ``status`` says which, and the fields
    that could not be read are None. ``outside-namespace``: a host PID that NVML reported only in its
    utilization samples, which FanWhy cannot resolve (it runs in another PID namespace without the
    host's /proc); its SM % is still known. ``namespace_pid`` is the PID inside the process's own
    container when that differs; ``unit`` the systemd service it runs in.
    """

    pid: int
    name: str | None
    user: str | None
    command: str | None
    start_time: float | None
    cpu_percent: float | None
    rss_bytes: int | None
    gpus: tuple[ProcessGpu, ...] = ()
    host_pid: int | None = None
    container: ContainerRef | None = None
    visibility: Visibility = "visible"
    status: ProcessStatus = "ok"
    namespace_pid: int | None = None
    unit: str | None = None
    power_w: float | None = None
    energy_wh: float | None = None
    program: str | None = None  # the name a person knows it by (app.core.program): `python3 train.py`, `vllm serve`
    ppid: int | None = None  # its parent's PID (the terminal's process tree); None when not read

    @property
    def gpu_memory_bytes(self) -> int | None:
        known = [g.memory_bytes for g in self.gpus if g.memory_bytes is not None]
        return sum(known) if known else None

    @property
    def sm_percent(self) -> float | None:
        known = [g.sm_percent for g in self.gpus if g.sm_percent is not None]
        return max(known) if known else None


@record
class ContainerSample:
    """One container's use of the GPUs (a rollup of its processes), or a GPU container that is idle.

    ``memory_method`` is ``inference`` when the memory is an estimate: unattributed memory split
    equally among GPU containers that have no visible process. ``sm_percent`` and ``cpu_percent``
    add up over processes and GPUs (like top's CPU %, 200 means two GPUs' worth).
    """

    container: ContainerRef
    gpu_access: bool | None
    pids: tuple[int, ...]
    gpu_indices: tuple[int, ...]
    gpu_memory_bytes: int | None
    memory_method: MemoryMethod
    sm_percent: float | None
    cpu_percent: float | None
    power_w: float | None = None
    energy_wh: float | None = None


@record
class UserSample:
    """One user's processes, added up."""

    user: str
    pids: tuple[int, ...]
    gpu_memory_bytes: int | None
    sm_percent: float | None
    cpu_percent: float | None


@record
class Assignment:
    """A share of unattributed memory given, as an estimate, to a process or a container."""

    kind: Literal["process", "container"]
    id: str
    memory_bytes: int
    method: Literal["inference"] = "inference"


@record
class Unattributed:
    """What no visible process accounts for on one GPU, and why."""

    gpu_index: int
    memory_bytes: int | None
    sm_percent: float | None
    reason: str
    assigned: tuple[Assignment, ...] = ()
    power_w: float | None = None


@record
class HostSensor:
    chip: str
    label: str
    temperature_c: float
    high_c: float | None = None
    critical_c: float | None = None


@record
class HostSample:
    """The CPU side: the fan may be the CPU's."""

    hostname: str
    cpu_percent: float | None
    cpu_count: int | None
    load_average: tuple[float, float, float] | None
    memory_used_bytes: int | None
    memory_total_bytes: int | None
    cpu_temperature_c: float | None = None
    temperatures: tuple[HostSensor, ...] = ()
    own_cpu_percent: float | None = None  # FanWhy's own CPU, % of one core: what watching costs
    own_rss_bytes: int | None = None
    own_pids: tuple[int, ...] = ()  # FanWhy's processes: never named as the cause
    unsupported: Mapping[str, str] = field(default_factory=lambda: EMPTY)

    @property
    def memory_percent(self) -> float | None:
        """Used memory as % of total; None when either is unknown."""
        return used_percent(self.memory_used_bytes, self.memory_total_bytes)


@record
class GpuEvent:
    """Something a GPU reported between ticks (an XID error from NVML's event set)."""

    gpu_index: int | None
    kind: str
    value: int
    timestamp: float
