"""The page. Its data arrives over Socket.IO; the first paint uses the latest snapshot's JSON."""

from __future__ import annotations

from flask import Blueprint, Flask, current_app, render_template

bp = Blueprint("views", __name__)


@bp.get("/")
def index() -> str:
    settings = current_app.extensions["fanwhy"].settings
    return render_template("index.html", interval_s=settings.interval_s,
                           alert_util=settings.alert_gpu_util_percent, fleet=bool(settings.prometheus_url))


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
