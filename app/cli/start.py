"""The collector a terminal command starts (``snapshot``, ``top``): the backend picked on a thread against a deadline
(a stuck driver meets it), the CPU times of the machine and of every process read first thing, so the first
collection after start-up already has every rate."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..collect.collector import Collector
    from ..collect.settings import Settings

ONE_SHOT_WINDOW_S = 0.08  # the shortest span of the CPU % in a first answer


def started(settings: Settings, watch: bool) -> Collector | int:
    """A started collector, or exit code 5 when picking the backend hung. ``watch``: it runs on (an XID event
    thread is started; a one-shot answer could not see an event in its time, and stopping it costs its poll).

    The order keeps one thread running Python at a time, the others only in the driver: under the GIL a thread
    that makes system calls waits for the GIL after each one while another runs Python (up to the interpreter's
    5 ms switch interval), so work of both kinds at once is slower than in turn. The baseline's scan of /proc
    (several times slower beside pynvml's import on a thread) comes first and starts the CPU
    window (read before anything else was imported, app.cli.early, where the command was run as a program);
    then NVML's ``nvmlInit`` on a thread (in the driver, the GIL free) while this thread imports the backends;
    then the GPUs are opened, on a thread each (their first calls mostly in the driver), while this one imports the
    collector; then it waits for them."""
    from ..attribution.procstat import CpuBaseline, cpu_baseline
    from .early import taken

    early = taken(settings.host_proc)  # read before the command line was parsed (app.cli.early)
    baseline = CpuBaseline(*early) if early is not None else cpu_baseline(settings.host_proc)
    if settings.backend in ("auto", "nvidia"):
        from ..vendors import nvml_early

        nvml_early.start()
    from ..vendors.base import BackendUnavailable
    from ..vendors.factory import default_builders, select_in_background
    from ..vendors.nvidia import NvidiaBackend

    builders = default_builders(settings.vendor_options)
    if not watch:
        builders["nvidia"] = lambda: NvidiaBackend(watch_xid=False)
    selected = select_in_background(settings.backend, builders)
    from ..collect.assemble import build_collector  # imported while the GPUs open (their first calls: in the driver)
    from . import terminal  # noqa: F401  (what the answer is printed with)

    try:
        selection = selected(settings.watchdog_timeout_s)  # a vendor call longer than this is hung
        collector = build_collector(settings, selection)  # no history: a terminal answer writes none
    except BackendUnavailable as error:
        from .preflight import backend_failed

        raise backend_failed(settings, error) from None
    except TimeoutError as error:
        from ..core.cells import shown

        print(f"fanwhy: {shown(error)} (a GPU call hung: the driver may be stuck)", file=sys.stderr)
        return 5
    collector.prime(baseline)  # the first tick measures every process against the baseline
    time.sleep(max(0.0, baseline.at + ONE_SHOT_WINDOW_S - time.monotonic()))
    collector.start()
    return collector
