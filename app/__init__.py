"""FanWhy: why is my fan running? A live GPU dashboard (Flask + Flask-SocketIO).

The package itself imports nothing: ``import app.client`` stays standard-library only, and the gunicorn
master loads no Flask, ssl or socket library before its gevent worker monkey-patches them. The app
factory and its parts live in app.application and are loaded on first use.
"""

from __future__ import annotations

from .core.version import __version__ as __version__

TYPE_CHECKING = False  # typing itself is not imported: a one-shot answer's first step comes before it (app.cli.early)
if TYPE_CHECKING:
    from typing import Any

_APPLICATION = ("create_app", "FanWhy", "ROOT")
_ASSEMBLY = ("build_collector", "open_history")


def __getattr__(name: str) -> Any:
    if name in _APPLICATION:
        from . import application

        return getattr(application, name)
    if name in _ASSEMBLY:
        from .collect import assemble

        return getattr(assemble, name)
    raise AttributeError(f"module 'app' has no attribute {name!r}")
