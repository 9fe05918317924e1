"""The collector assembled from settings: the backend the factory picks, attribution, alerts, history.

No Flask here: ``fanwhy snapshot`` builds its collector from this module and answers before a web framework
would have finished importing.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from ..attribution.attributor import Attributor
from ..attribution.docker import DockerClient
from ..attribution.kubernetes import KubeClient
from ..attribution.processes import ProcessInspector
from ..core.redact import Redactor
from ..vendors.factory import OWN_HISTORY, Selection, default_builders, select_backend
from ..verdict.alerts import AlertEngine, Rule, build_rules, parse_overrides
from ..verdict.changes import VerdictChanges
from .bmc import ipmitool
from .collector import Collector
from .config import ConfigError
from .fans import FanService
from .host import HostSampler
from .registry import liquidctl_command, registered
from .settings import Settings
from .sources import FansOf

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from ..store.history import History
    from ..vendors.base import Backend


def alert_rules(settings: Settings) -> dict[str, Rule]:
    """The alert rules: the defaults, then FANWHY_ALERT_GPU_UTIL/HOLD/HYSTERESIS, then FANWHY_ALERTS (and each
    --alert); ConfigError naming FANWHY_ALERTS when a change is not RULE.FIELD=VALUE."""
    try:
        overrides = parse_overrides(settings.alerts)
    except ValueError as error:
        raise ConfigError(f"FANWHY_ALERTS: {error}", "alerts") from None
    utilization = {"threshold": settings.alert_gpu_util_percent, "hold_s": settings.alert_hold_s,
                   "hysteresis": settings.alert_hysteresis_percent}
    overrides["gpu_utilization"] = {**utilization, **overrides.get("gpu_utilization", {})}
    return build_rules(overrides)


def notify_targets(settings: Settings) -> list[tuple[str, str]]:
    """FANWHY_NOTIFY's targets as (kind, URL); ConfigError naming the position (never the URL: it is a secret) of
    one that is not KIND:URL."""
    from ..verdict.notify import parse_targets  # here: a terminal answer has no notifier

    try:
        return parse_targets(settings.notify)
    except ValueError as error:
        raise ConfigError(f"FANWHY_NOTIFY: {error}", "notify") from None


def check_assembly(settings: Settings) -> None:
    """What is built from text at assembly (the alert rules, the notification targets) can be built: refused at
    start, naming the setting, not in the worker."""
    alert_rules(settings)
    notify_targets(settings)


def history_path(settings: Settings) -> Path | None:
    """Where the history of ``settings`` lives; None for FANWHY_DB=none. A backend whose readings must not mix with
    the machine's (the demo's simulated GPUs: ``OWN_HISTORY``) gets a file of its own beside the default one."""
    if settings.db.lower() == "none":
        return None
    from ..store.schema import default_path  # here: a terminal answer (FANWHY_DB=none) loads no sqlite3

    path = Path(settings.db) if settings.db else default_path()
    own = OWN_HISTORY.get(settings.backend)
    return path.with_name(own) if own is not None and path == default_path() else path


def open_history(settings: Settings) -> History | None:
    """The history database of ``settings`` (FANWHY_DB=none turns it off)."""
    path = history_path(settings)
    if path is None:
        return None
    from ..store.history import History
    from ..store.lock import HistoryInUse

    try:
        return History(path, retention_hours=settings.retention_hours, max_bytes=int(settings.db_max_mb * 2**20),
                       keep=VerdictChanges().row).open()
    except HistoryInUse as error:  # one started since the check before serving (app.cli.preflight): no history here
        log.warning("no history: %s", error)
        return None


def _kube() -> KubeClient | None:
    """In a Kubernetes pod: the client that names this node's pods, already listing; elsewhere None."""
    kube = KubeClient.in_cluster()
    if kube is not None:
        kube.start()
        kube.first_answer.wait(1.0)  # the names from the first tick on; a slow API server delays start-up 1 s at most
    return kube


def fan_service(settings: Settings, backend: Backend | None = None) -> FanService:
    """The fans of ``settings``: hwmon under FANWHY_SYS_ROOT, the daemons' configurations under FANWHY_ETC_ROOT, the
    BMC unless FANWHY_BMC=off; or those of the machine the backend brings (``Backend.surroundings``: the demo's)."""
    around = backend.surroundings() if backend is not None else None
    if around is not None:
        return FanService(sys_root=around.sys_root, etc_root=around.etc_root, bmc_run=around.bmc_run,
                          bmc_every_s=around.bmc_every_s, threaded=True)
    bmc = ipmitool(settings.bmc_timeout_s, settings.bmc_command) if settings.bmc else "no BMC read: FANWHY_BMC=off"
    extra = registered(settings.host_proc, settings.sys_root, liquidctl_command())
    gpu_fans = backend.fans_apart() if backend is not None else None
    if gpu_fans is not None:  # the cards' fans on a clock of their own: a fan call that hangs holds only them
        extra.append(FansOf("gpu-fans", f"the GPUs' fans ({backend.name if backend else '?'})", gpu_fans,
                            period_s=max(0.5, settings.interval_s)))
    return FanService(sys_root=settings.sys_root, etc_root=settings.etc_root, bmc_run=bmc,
                      bmc_every_s=settings.bmc_interval_s, bmc_timeout_s=settings.bmc_timeout_s, threaded=True,
                      extra=extra)


def build_collector(settings: Settings, selection: Selection | None = None,
                    history: History | None = None) -> Collector:
    """The collector for ``settings``: the backend picked by the factory unless one is given."""
    selection = selection or select_backend(settings.backend, default_builders(settings.vendor_options))
    around = selection.backend.surroundings()  # the demo's machine, where the backend brings one
    return Collector(
        selection,
        interval_s=settings.interval_s,
        alerts=AlertEngine(alert_rules(settings)),
        attributor=Attributor(ProcessInspector(top_cpu=settings.top_cpu_processes, proc_root=settings.host_proc,
                                               redactor=Redactor(settings.mask_patterns, settings.names_only)),
                              DockerClient(settings.docker_socket) if settings.docker_socket else None,
                              kube=_kube()),
        host=HostSampler(proc_root=settings.host_proc, sys_root=around.sys_root if around else settings.sys_root),
        fans=fan_service(settings, selection.backend),
        min_tick_gap_s=settings.min_tick_gap_s,
        history=history,
        watchdog_s=settings.watchdog_timeout_s,
    )
