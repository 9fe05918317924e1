"""The application's services as the web reads them: ``services()``, the one typed accessor (no view looks them up
by a string), and what they are (``FanWhy``: the settings, the collector, the history, the notifier...). The app
factory (app/application.py) makes them and ``install``s them on the app."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from flask import Flask, current_app

from ..collect.collector import Collector
from ..collect.settings import Settings
from .concurrency import Concurrency

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIApplication
    from flask_socketio import SocketIO
    from prometheus_client import CollectorRegistry

    from ..store.history import History
    from ..store.recordings import Recorder
    from ..verdict.notify import Notifier
    from .picking import WaitSlots
    from .realtime import Broadcaster
    from .refusals import Refusals
    from .sessions import Sessions

_KEY = "fanwhy"  # where Flask keeps them (app.extensions)


@dataclass
class FanWhy:
    """What the app holds, read through ``services()``."""

    settings: Settings
    collector: Collector
    concurrency: Concurrency
    wait_slots: WaitSlots  # /api/gpu/pick?wait=: who may wait for GPUs, how many at once
    registry: CollectorRegistry  # /metrics: what it exposes
    exposition: WSGIApplication  # /metrics: prometheus_client's WSGI app over the registry
    socketio: SocketIO | None = None
    broadcaster: Broadcaster | None = None
    history: History | None = None
    recorder: Recorder | None = None
    notifier: Notifier | None = None
    refusals: Refusals | None = None
    sessions: Sessions | None = None

    def start(self) -> None:
        """Start the collector (unless FANWHY_COLLECTOR=off), then the history writer and the broadcaster."""
        if self.history is not None:
            self.history.start()
        if self.settings.collector:
            self.collector.start()
        if self.broadcaster is not None:
            self.broadcaster.start()
        if self.notifier is not None:
            self.notifier.start()
            self.notifier.follow(self.collector)

    def stop(self) -> None:
        if self.notifier is not None:
            self.notifier.stop()
        if self.broadcaster is not None:
            self.broadcaster.stop()
        self.collector.stop()
        if self.history is not None:
            self.history.close()


def install(app: Flask, fanwhy: FanWhy) -> None:
    app.extensions[_KEY] = fanwhy


def services(app: Flask | None = None) -> FanWhy:
    """The services of ``app`` (by default the app of the request being served)."""
    found = (app or current_app).extensions.get(_KEY)
    if not isinstance(found, FanWhy):
        raise RuntimeError("this Flask app was not made by app.create_app: it has no FanWhy services")
    return found
