"""``python -m app`` serves FanWhy through gunicorn; ``python -m app snapshot --json`` prints one snapshot."""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys
import time
from typing import Sequence

from app.config import ConfigError, Settings, load_settings
from app.serving import serve
from app.vendors.base import BackendUnavailable
from app.vendors.factory import CHOICES


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m app", description="FanWhy: why is my fan running?")
    parser.add_argument("command", nargs="?", default="serve", choices=("serve", "snapshot", "exporter"),
                        help="serve the dashboard (default), print one snapshot, or run only the Prometheus "
                             "exporter on EXPORTER_PORT (9201), collecting every SCRAPE_INTERVAL (10 s)")
    parser.add_argument("--json", action="store_true", help="snapshot: print JSON (the default and only format)")
    parser.add_argument("--host", help="address to bind (FANWHY_HOST, default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port (FANWHY_PORT, default 8090)")
    parser.add_argument("--interval", dest="interval_s", type=float, help="seconds between samples (FANWHY_INTERVAL)")
    parser.add_argument("--backend", choices=CHOICES, help="auto|nvidia|amd|basic|simulated (FANWHY_BACKEND)")
    parser.add_argument("--server", choices=("gevent", "threads"),
                        help="serving model: gevent (default) or threads (FANWHY_SERVER)")
    parser.add_argument("--threads", type=int, help="threads model: gunicorn threads, one per connection "
                                                   "(FANWHY_THREADS)")
    parser.add_argument("--alert-gpu-util", dest="alert_gpu_util_percent", type=float,
                        help="GPU utilization alert threshold, %% (FANWHY_ALERT_GPU_UTIL, default 50)")
    parser.add_argument("--alert-hold", dest="alert_hold_s", type=float,
                        help="seconds above the threshold before an alert fires (FANWHY_ALERT_HOLD)")
    parser.add_argument("--alert", dest="alert_overrides", action="append", metavar="RULE.FIELD=VALUE",
                        help="change an alert rule, e.g. temperature.threshold=80 or power.enabled=0; repeatable "
                             "(added to FANWHY_ALERTS)")
    return parser


def snapshot(settings: Settings) -> int:
    from app import build_monitor

    monitor = build_monitor(settings)  # one snapshot: no history written
    # The collector thread takes two snapshots (CPU % and per-process SM % are rates over a window);
    # waiting for them here is bounded, so a hung NVML call ends this command instead of freezing it.
    monitor.interval_s = min(settings.interval_s, 1.0)
    monitor.start()
    deadline = time.monotonic() + 2 * monitor.interval_s + monitor.watchdog_s + 1
    frame = None
    while (frame is None or frame.seq < 2) and (remaining := deadline - time.monotonic()) > 0:
        frame = monitor.wait_frame(frame.seq if frame else 0, remaining) or frame
    monitor.stop(join_s=1.0)
    if frame is None or frame.seq < 2:
        print(f"fanwhy: {monitor.hung or 'no snapshot in time'}", file=sys.stderr)
        return 5
    json.dump(frame.view, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    overrides = {k: v for k, v in vars(args).items()
                 if k not in ("command", "json", "alert_overrides") and v is not None}
    if args.alert_overrides:
        overrides["alerts"] = ",".join(filter(None, [os.environ.get("FANWHY_ALERTS", ""), *args.alert_overrides]))
    try:
        settings = load_settings(**overrides)
    except ConfigError as error:
        print(f"fanwhy: {error}", file=sys.stderr)
        return 2
    try:
        if args.command == "snapshot":
            return snapshot(settings)
        if args.command == "exporter":
            exporter = dataclasses.replace(settings, port=settings.exporter_port, interval_s=settings.scrape_interval_s,
                                           db="none")
            return serve(exporter, mode="exporter")
        return serve(settings)
    except BackendUnavailable as error:
        print(f"fanwhy: backend {settings.backend!r} cannot start: {error}", file=sys.stderr)
        return 4


if __name__ == "__main__":
    sys.exit(main())
