"""The page. Its data arrives over Socket.IO; the first paint uses the latest snapshot's JSON."""

from __future__ import annotations

from flask import Blueprint, Flask, Response, current_app, render_template

bp = Blueprint("views", __name__)


@bp.get("/")
def index() -> str:
    settings = current_app.extensions["fanwhy"].settings
    return render_template("index.html", interval_s=settings.interval_s,
                           alert_util=settings.alert_gpu_util_percent)


@bp.after_app_request
def security_headers(response: Response) -> Response:
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    response.headers.setdefault(
        "Content-Security-Policy",
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
    return response


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)
