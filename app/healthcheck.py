"""``python -m app.healthcheck``: the container's health check. Exit 0 when /api/health answers 200, else 1.

It follows the settings the server runs with, from the same environment: FANWHY_PORT (EXPORTER_PORT when the server
is ``python -m app exporter``, read from PID 1's command line), TLS when FANWHY_TLS_CERT is set (the certificate is
not checked: this is the server asking itself), and the token (FANWHY_TOKEN or FANWHY_TOKEN_FILE) in an
Authorization header, which also lets it past a Host allowlist that names no local name. The settings are read by
app.collect.config, as the server reads them; nothing else of FanWhy is imported.
"""

from __future__ import annotations

import os
import ssl
import sys
import urllib.error
import urllib.request
from pathlib import Path

from .collect.config import ConfigError, load_settings
from .core.cells import shown


def _exporter_mode(proc: Path) -> bool:
    try:
        argv = (proc / "1" / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"exporter" in argv


def url_and_headers(env: dict[str, str], proc: Path = Path("/proc")) -> tuple[str, dict[str, str]]:
    """Where the server of ``env`` answers and how to ask it, from the settings it was started with (its defaults,
    its token file: app.collect.config, the one reader of them)."""
    settings = load_settings(env)
    exporter = env.get("FANWHY_HEALTH_MODE", "exporter" if _exporter_mode(proc) else "dashboard") == "exporter"
    port = settings.exporter_port if exporter else settings.port
    scheme = "https" if settings.tls_cert else "http"
    headers = {"Host": "localhost"}
    if settings.token:
        headers["Authorization"] = f"Bearer {settings.token}"
    return f"{scheme}://127.0.0.1:{port}/api/health", headers


def main() -> int:
    try:
        url, headers = url_and_headers(dict(os.environ))
    except ConfigError as error:  # the server itself would have refused these settings
        print(f"fanwhy health check: {shown(error)}", file=sys.stderr)
        return 1
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=4,
                                    context=context) as response:
            return 0 if response.status == 200 else 1
    except (OSError, urllib.error.URLError) as error:
        print(f"fanwhy health check: {url}: {shown(error)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
