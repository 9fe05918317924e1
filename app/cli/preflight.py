"""Checks made before anything is served: the packages the serving needs, the history path, the port, a backend the
user forced. A terminal command (snapshot, top, run, explain) needs none of them.

Each check answers with ConfigError naming the setting and what to do, so ``fanwhy`` prints one line and exits
non-zero instead of printing "serving" and then a traceback from the worker.
"""

from __future__ import annotations

import errno
import importlib.util
import os
import socket

from ..collect.assemble import history_path
from ..collect.config import ConfigError
from ..collect.settings import Settings
from ..store.lock import holder
from ..store.schema import SCHEMA_VERSION, file_version, newer_message, ownership


class PortUnavailable(ConfigError):
    """The port cannot be listened on (exit code 3)."""


class BackendFailed(ConfigError):
    """The backend the user named cannot start on this machine (exit code 4)."""


def check_packages(settings: Settings) -> None:
    """The packages the settings' serving needs (gevent for FANWHY_SERVER=gevent, redis for a message queue) can be
    imported."""
    if settings.message_queue and not settings.message_queue.startswith(("redis://", "rediss://")):
        raise ConfigError("FANWHY_MESSAGE_QUEUE must be a redis:// URL", "message_queue")
    if settings.message_queue and importlib.util.find_spec("redis") is None:
        raise ConfigError("FANWHY_MESSAGE_QUEUE needs the redis package: pip install -r requirements-queue.txt "
                          "(make run does it when FANWHY_MESSAGE_QUEUE is set)", "message_queue")
    if settings.server == "gevent" and importlib.util.find_spec("gevent") is None:
        raise ConfigError("FANWHY_SERVER=gevent needs the gevent package (pip install -r requirements.txt), "
                          "or set FANWHY_SERVER=threads", "server")


def check_history(settings: Settings) -> None:
    """FANWHY_DB must name a file FanWhy may create or its own history: never a folder, another program's file,
    or a place it cannot write."""
    path = history_path(settings)
    if path is None:
        return
    where = f"FANWHY_DB={str(path)!r}"
    if path.is_dir():
        raise ConfigError(f"{where} is a folder: name a file in it (e.g. {path / 'history.db'}), "
                          "or FANWHY_DB=none for no history", "db")
    if path.exists():
        owner = ownership(path)
        if owner == "other":
            raise ConfigError(f"{where} is not a FanWhy history (another program's file): FanWhy leaves it "
                              "alone; name another file, or FANWHY_DB=none", "db")
        if not os.access(path, os.R_OK | os.W_OK):
            raise ConfigError(f"{where} cannot be read and written by this user: fix its permissions, or name "
                              "another file", "db")
        found = file_version(path)
        if found is not None and found > SCHEMA_VERSION:
            raise ConfigError(f"FANWHY_DB: {newer_message(path, found)}", "db")
        held = holder(path)
        if held is not None:
            raise ConfigError(str(held), "db")
        return
    try:  # permissions alone do not say it (root, read-only mounts, /sys): create it, then take it away again
        path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        path.unlink()
    except OSError as error:
        raise ConfigError(f"{where} cannot be created ({error.strerror}): name a file in a folder you can write, "
                          "or FANWHY_DB=none", "db") from None


def check_port(host: str, port: int, setting: str = "port") -> None:
    """The port can be bound now (gunicorn binds it again at once; SO_REUSEADDR as gunicorn sets it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host.strip("[]"), port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                why = f"port {port} on {host} is in use by another program: choose another with FANWHY_PORT"
            elif error.errno == errno.EACCES:
                why = f"port {port} needs privileges this user lacks: use a port above 1023 with FANWHY_PORT"
            elif error.errno == errno.EADDRNOTAVAIL:
                why = f"FANWHY_HOST={host} is not an address of this machine"
                setting = "host"
            else:
                why = f"cannot listen on {host}:{port} ({error.strerror}): check FANWHY_HOST and FANWHY_PORT"
            if setting == "exporter_port":
                why = why.replace("FANWHY_PORT", "EXPORTER_PORT")
            raise PortUnavailable(why, setting) from None


def check_backend(settings: Settings) -> None:
    """A backend the user named (not ``auto``, which always finds one) must open now, not in the worker.

    This runs in gunicorn's master, which then forks the worker: the backend is opened without a thread waiting for
    NVML's events and shut down at once, so the worker inherits no NVML held by a thread that does not follow it
    across the fork (one that did hung the worker's own NVML in nvmlEventSetCreate)."""
    if settings.backend in ("auto", "simulated"):
        return  # auto falls back to basic; the simulated one starts worker processes: only the server opens it
    from ..vendors.base import BackendUnavailable
    from ..vendors.factory import default_builders, select_backend

    try:
        selection = select_backend(settings.backend, default_builders(settings.vendor_options, watch_events=False))
    except BackendUnavailable as error:
        raise backend_failed(settings, error) from None
    selection.backend.close()


def backend_failed(settings: Settings, error: Exception) -> BackendFailed:
    return BackendFailed(f"FANWHY_BACKEND={settings.backend} cannot start here: {error}; use FANWHY_BACKEND=auto "
                         "to take whatever this machine has", "backend")
