"""A Docker Engine API served on a unix socket inside the test, shaped like /containers/json and
/containers/<id>/json (the fields FanWhy reads, as Docker 24-28 return them)."""

from __future__ import annotations

import json
import socketserver
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any


def container(cid: str, name: str, image: str, gpu: str | None = None, labels: dict[str, str] | None = None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the /containers/json item, the /containers/<id>/json document). ``gpu``: how it got GPUs."""
    host_config: dict[str, Any] = {"Runtime": "runc", "DeviceRequests": None, "Devices": []}
    env = ["PATH=/usr/local/bin:/usr/bin"]
    if gpu == "device-request":  # docker run --gpus all
        host_config["DeviceRequests"] = [{"Driver": "", "Count": -1, "DeviceIDs": None,
                                          "Capabilities": [["gpu"]], "Options": {}}]
    elif gpu == "runtime":  # docker run --runtime=nvidia
        host_config["Runtime"] = "nvidia"
    elif gpu == "env":
        env.append("NVIDIA_VISIBLE_DEVICES=all")
    listing = {"Id": cid, "Names": [f"/{name}"], "Image": image, "State": "running", "Labels": labels or {}}
    inspect = {"Id": cid, "Name": f"/{name}", "HostConfig": host_config, "Config": {"Env": env, "Image": image}}
    return listing, inspect


class FakeDockerApi:
    def __init__(self, path: Path, containers: list[tuple[dict[str, Any], dict[str, Any]]], delay_s: float = 0.0):
        self.path = path
        self.containers = containers
        self.delay_s = delay_s
        self.requests: list[str] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                api.requests.append(self.path)
                time.sleep(api.delay_s)
                if self.path.startswith("/containers/json"):
                    body: Any = [c[0] for c in api.containers]
                else:
                    cid = self.path.split("/")[2]
                    found = [c[1] for c in api.containers if c[0]["Id"] == cid]
                    if not found:
                        self.send_error(404)
                        return
                    body = found[0]
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def address_string(self) -> str:
                return "unix"

            def log_message(self, *args: Any) -> None:
                pass

        class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
            daemon_threads = True

        self.server = Server(str(path), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeDockerApi:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
