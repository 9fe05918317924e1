"""A receiver for notifications: an HTTP server on loopback that records what is POSTed to it."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    """An HTTP server that records POSTs; ``mode`` is ok, 500 or hang."""

    def __init__(self, port: int = 0, mode: str = "ok"):
        self.mode = mode
        self.requests: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.requests.append({"path": self.path, "headers": dict(self.headers), "body": body,
                                          "at": time.monotonic()})
                if receiver.mode == "hang":
                    time.sleep(3)
                status = 500 if receiver.mode == "500" else 200
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"no" if status == 500 else b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str = "/hook/s3cr3t-t0ken") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
