"""The page (its data arrives over Socket.IO; the first paint uses the latest snapshot's JSON), the icon, and the
exporter's own small page at ``/``."""

from __future__ import annotations

from flask import Blueprint, Flask, Response, current_app, render_template, request, send_from_directory

from ..core.version import __version__
from .services import services

bp = Blueprint("views", __name__)
EXPORTER_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>FanWhy exporter</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="favicon.ico"></head>
<body><main><h1>FanWhy exporter {version}</h1><p>Prometheus metrics: <a href="metrics">/metrics</a>. The JSON API:
<a href="api/docs">/api/docs</a>. The dashboard is <code>fanwhy</code> without <code>exporter</code>.</p></main>
</body></html>"""


@bp.get("/")
def index() -> str:
    settings = services().settings
    return render_template("index.html", interval_s=services().collector.interval_s,  # the collector's, now
                           alert_util=settings.alert_gpu_util_percent, fleet=bool(settings.prometheus_url),
                           signed_in=bool(settings.token))


def favicon() -> Response:
    return send_from_directory(current_app.static_folder or "static", "favicon.ico", mimetype="image/x-icon",
                               max_age=86400)


def exporter_index() -> tuple[str, int, dict[str, str]]:
    page = EXPORTER_PAGE.format(version=__version__).replace('href="', f'href="{request.script_root}/')
    return page, 200, {"Content-Type": "text/html; charset=utf-8"}


def init_app(app: Flask, exporter: bool = False) -> None:
    app.add_url_rule("/favicon.ico", "favicon", favicon)
    if exporter:
        app.add_url_rule("/", "exporter_index", exporter_index)
        return
    app.register_blueprint(bp)
