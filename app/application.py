"""The app factory: create_app() builds the Flask app, its collector and its parts (app.__init__ loads it lazily)."""

from __future__ import annotations

import logging
import socket
from pathlib import Path
from typing import Any, Mapping

from flask import Flask

from .collect.assemble import build_collector, notify_targets, open_history
from .collect.config import load_settings
from .collect.settings import Settings
from .core.redact import Redactor
from .store.recordings import Recorder
from .vendors.factory import Selection
from .verdict.notify import Notifier
from .verdict.receipt import ReceiptMeter
from .web import (
    api,
    auth,
    fleet,
    fleet_manager,
    history_api,
    metrics,
    openapi,
    picking,
    realtime,
    rest,
    security,
    services,
    views,
)
from .web.access import AccessPolicy
from .web.bodies import BodyReader
from .web.concurrency import for_model, one_writer_websockets
from .web.gate import Gate
from .web.picking import WaitSlots
from .web.proxy import Forwarded
from .web.refusals import Refusals
from .web.services import FanWhy
from .web.sessions import Sessions

ROOT = Path(__file__).resolve().parent.parent
# The page's files: inside the package when installed from a wheel (app/static, app/templates), else the clone's.
PAGE = next((p for p in (Path(__file__).resolve().parent, ROOT) if (p / "templates" / "index.html").exists()), ROOT)
log = logging.getLogger(__name__)


def receipt_meter(gpus: tuple[int, ...] | None) -> ReceiptMeter:
    """A recording's receipt (app.store.recordings keeps it; app.verdict.receipt measures it)."""
    return ReceiptMeter(gpus=gpus)


def notifier(settings: Settings) -> Notifier | None:
    """The notification targets of FANWHY_NOTIFY, if any (checked at start: app.cli.preflight)."""
    targets = notify_targets(settings)
    if not targets:
        return None
    return Notifier(targets, host=socket.gethostname(), group_s=settings.notify_group_s,
                    per_minute=settings.notify_per_minute,
                    redactor=Redactor(settings.mask_patterns, settings.names_only))


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """The app factory. ``config`` may hold Flask settings and:
    SETTINGS (a Settings; default: from the environment), SELECTION (an opened backend Selection,
    for tests), START (start the collector and broadcaster; default True), MODE ("dashboard", or
    "exporter": /metrics and the JSON API only, no page, no Socket.IO, no history), SERVER (the serving
    model the app runs under: "threads", the default, or "gevent"; see app.serving)."""
    config = dict(config or {})
    settings: Settings = config.pop("SETTINGS", None) or load_settings()
    selection: Selection | None = config.pop("SELECTION", None)
    start = config.pop("START", True)
    exporter = config.pop("MODE", "dashboard") == "exporter"
    concurrency = for_model(config.pop("SERVER", "threads"))

    app = Flask(__name__, static_folder=str(PAGE / "static"), template_folder=str(PAGE / "templates"))
    app.config.update(MAX_CONTENT_LENGTH=64 * 1024, JSON_SORT_KEYS=False)
    app.json.sort_keys = False  # type: ignore[attr-defined]  # DefaultJSONProvider has it; the base type not
    app.config.update(config)

    history = None if exporter else open_history(settings)
    collector = build_collector(settings, selection, history)
    refusals = Refusals()
    security.init_app(app)
    policy = AccessPolicy.of(settings)
    auth.init_app(app, policy, refusals)
    rest.init_app(app)
    api.init_app(app)
    fleet_manager.init_app(app)
    picking.init_app(app)
    registry, exposition = metrics.init_app(app, collector, seed_names=settings.seed_metrics)
    openapi.init_app(app)
    fanwhy = FanWhy(settings=settings, collector=collector, concurrency=concurrency, history=history,
                    recorder=Recorder(history, receipt_meter) if history is not None else None,
                    notifier=notifier(settings), refusals=refusals, wait_slots=WaitSlots(), registry=registry,
                    exposition=exposition)
    views.init_app(app, exporter)
    if not exporter:
        history_api.init_app(app)
        fleet.init_app(app)
        sessions = Sessions(max_sessions=settings.max_sessions, client_sessions=settings.client_sessions)
        fanwhy.socketio, fanwhy.broadcaster = realtime.init_app(app, collector, settings, concurrency, sessions)
        fanwhy.sessions = sessions
    inner = BodyReader(one_writer_websockets(app.wsgi_app, concurrency), max_bytes=app.config["MAX_CONTENT_LENGTH"],
                       timeout_s=settings.body_timeout_s, per_client=settings.client_bodies,
                       in_all=settings.max_bodies, policy=policy, refusals=refusals)
    gate = Gate(inner, policy=policy, allowed_origins=list(settings.allowed_origins), sessions=fanwhy.sessions,
                rate_limit_per_s=settings.rate_limit_per_s, refusals=refusals)
    # outermost: behind a trusted proxy, the gate sees the real client, scheme, host and prefix (app/web/proxy.py)
    app.wsgi_app = Forwarded(  # type: ignore[method-assign]  # Flask's documented way to wrap its WSGI app
        gate, settings.trusted_proxies, settings.base_path)
    services.install(app, fanwhy)
    if start:
        fanwhy.start()
    log.info("FanWhy backend %s; skipped: %s", collector.backend.name, dict(collector.selection.skipped) or "none")
    return app
