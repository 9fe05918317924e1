"""``python -m app`` serves through gunicorn: one worker (one collector), in the serving model FANWHY_SERVER names.

- ``gevent`` (default; measured against ``threads`` in docs/SERVING.md): a connection is a greenlet, so idle
  WebSockets, slow senders and long waits cost kilobytes, not threads. Only ``socket``, ``ssl`` and name
  lookups are monkey-patched (TLS, and the Redis message queue's client); **threads, queues, time, os and
  subprocess are not**, so the collector, the history writer, the NVML event thread and every vendor call keep
  running on native threads with native locks and queues: a slow NVML call cannot stall the loop. The few
  handlers that wait on them do so through app.web.concurrency.
- ``threads``: gunicorn's gthread worker, a thread per connection, bounded by FANWHY_THREADS.

Both read a request's headers under a deadline (FANWHY_HEADER_TIMEOUT) and cap the connections of one client
address (FANWHY_CLIENT_CONNECTIONS); app.web.gate then checks Host, Origin, the token and the session limits.
The exporter (/metrics and the JSON API, no sockets) always uses ``threads``.
"""

from __future__ import annotations

import contextlib
import ctypes
import ipaddress
import json
import os
import socket
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol

from .collect.config import is_wildcard
from .collect.settings import Settings
from .core.cells import shown

if TYPE_CHECKING:
    from flask import Flask


def in_container(root: str = "/") -> bool:
    """Whether this process runs in a container (Docker's /.dockerenv, Podman's /run/.containerenv)."""
    return any(os.path.exists(os.path.join(root, marker)) for marker in (".dockerenv", "run/.containerenv"))


def url(settings: Settings, root: str = "/") -> str:
    """The address to open in a browser: a wildcard bind (0.0.0.0, ::) is reached by the machine's name; in a
    container that name is the container's, which the host cannot open: the published port is what to open."""
    scheme = "https" if settings.tls_cert else "http"
    wildcard = is_wildcard(settings.host)
    if wildcard and in_container(root):  # as `-p 8090:8090` publishes it on the host
        return f"{scheme}://localhost:{settings.port}/"
    host = socket.gethostname() if wildcard else settings.host
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{settings.port}/"


class _Address(Protocol):
    address: str  # as psutil.net_if_addrs() gives it


def addresses_urls(settings: Settings, interfaces: Mapping[str, Sequence[_Address]] | None = None) -> list[str]:
    """A wildcard bind's URLs at each address of this machine (loopback's first; IPv6 ones for ``::`` only, link-local
    ones left out: a browser cannot open them without a zone), so that a person on another machine knows one to
    type. [] for a bind to one address."""
    if not is_wildcard(settings.host):
        return []
    import psutil

    scheme = "https" if settings.tls_cert else "http"
    found: list[tuple[bool, str]] = []
    for addresses in (psutil.net_if_addrs() if interfaces is None else interfaces).values():
        for address in addresses:
            try:
                ip = ipaddress.ip_address(address.address.split("%")[0])
            except ValueError:
                continue
            if ip.version == 6 and (":" not in settings.host or ip.is_link_local):
                continue
            text = f"[{ip}]" if ip.version == 6 else str(ip)
            found.append((not ip.is_loopback, f"{scheme}://{text}:{settings.port}/"))
    return [u for _, u in sorted(set(found))]


def serving_line(settings: Settings, mode: str) -> str:
    """What the server prints once it listens: where to open it."""
    suffix = "metrics" if mode == "exporter" else ""
    line = f"FanWhy is serving {url(settings)}{suffix}"
    if is_wildcard(settings.host) and in_container():
        return line + " (in a container: on the host, or its address, at the port published with -p)"
    others = [u + suffix for u in addresses_urls(settings)]
    return line + (f" (this machine's addresses: {', '.join(others)})" if others else "")


class Connection(Protocol):
    """A client's socket as the worker hands it over (gevent's, or the OS's under it)."""

    def close(self) -> None: ...

    def shutdown(self, how: int, /) -> None: ...


def _client_ip(addr: object) -> str:
    return addr[0] if isinstance(addr, tuple) and addr else "?"


def _give_back_memory(sleep: Callable[[float], object], period_s: float = 10.0) -> None:
    """After a burst of connections their memory is free but glibc keeps it, and the worker stays larger for
    good (tests/system/test_exhaustion.py measures it). malloc_trim hands free heap pages back to the system (glibc
    only; elsewhere this does nothing)."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    while True:
        sleep(period_s)
        trim(0)


def _end(client: Connection) -> None:
    """End a connection between requests: the OS socket's shutdown, so the handler's read sees the end and returns
    (gevent's own shutdown() raises into the waiting handler, which gunicorn logs as an error)."""
    with contextlib.suppress(OSError):
        getattr(client, "_sock", client).shutdown(socket.SHUT_RDWR)


def gevent_worker(per_client: int, proxies: Sequence[str] = ()) -> type:
    """gunicorn's gevent worker with threads left native and at most ``per_client`` connections per address; a
    trusted proxy (FANWHY_TRUSTED_PROXIES) carries everyone's connections, so it has no such limit (the gate counts
    its clients one by one)."""
    from .web.proxy import networks, trusted

    through = networks(proxies)
    import gevent
    from gevent import monkey
    from gevent import socket as gsocket
    from gunicorn.workers.ggevent import GeventWorker

    class FanWhyGeventWorker(GeventWorker):  # type: ignore[misc]  # gunicorn ships no type hints
        sockets: list[Any]
        connections: Counter[str]

        def patch(self) -> None:
            # Sockets only. Patched queues and os broke the native threads (the history writer's queue.get raised
            # LoopExit; subprocess.Popen waited forever on a patched os.read), so nothing else is touched.
            monkey.patch_socket()
            monkey.patch_dns()
            monkey.patch_ssl()  # TLS connections are wrapped by gevent's ssl (gunicorn hands it an SSLContext)
            self.sockets = [gsocket.socket(s.FAMILY, socket.SOCK_STREAM, fileno=s.sock.detach())
                            for s in self.sockets]
            self.connections = Counter()  # one event loop: no lock needed

            self.between_requests: set[Connection] = set()  # keep-alive connections waiting for their next request

        def run(self) -> None:
            gevent.spawn(_give_back_memory, gevent.sleep)
            super().run()

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            """SIGTERM: a connection between two requests has nothing in flight, so it is closed at once; gunicorn
            would otherwise wait out its keep-alive (graceful_timeout, 5 s) before the worker could exit."""
            super().handle_exit(sig, frame)
            for client in list(self.between_requests):
                _end(client)

        def handle(self, listener: object, client: Connection, addr: object) -> None:
            ip = _client_ip(addr)
            if per_client and self.connections[ip] >= per_client and not trusted(ip, through):
                client.close()
                return
            self.connections[ip] += 1
            self.between_requests.add(client)
            try:
                super().handle(listener, client, addr)
            finally:
                self.between_requests.discard(client)
                self.connections[ip] -= 1
                if not self.connections[ip]:
                    del self.connections[ip]

        def handle_request(self, listener_name: object, req: object, client: Connection, addr: object) -> object:
            self.between_requests.discard(client)
            try:
                return super().handle_request(listener_name, req, client, addr)
            finally:
                if self.alive:
                    self.between_requests.add(client)
                else:  # the stop came while this request ran: its answer is sent, no other is awaited
                    _end(client)

    return FanWhyGeventWorker


def json_error(sock: object, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's own answers (a request line, header or chunk it cannot parse: 400, 414, 431, 501) as FanWhy's
    JSON error, like every answer of the app, instead of gunicorn's HTML page."""
    from gunicorn.util import write_nonblock

    from .web.security import SECURITY_HEADERS

    body = json.dumps({"error": reason.lower(), "detail": mesg}).encode()
    head = [f"HTTP/1.1 {status_int} {reason}", "Connection: close", "Content-Type: application/json",
            f"Content-Length: {len(body)}", "Cache-Control: no-store",
            *(f"{name}: {value}" for name, value in SECURITY_HEADERS.items())]
    write_nonblock(sock, ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)


def serve(settings: Settings, mode: str = "dashboard") -> int:
    import gunicorn.util
    from gunicorn.app.base import BaseApplication

    from .web.keepalive import keepalive_s

    gunicorn.util.write_error = json_error  # the workers' handle_error writes through it (this process only)

    model = "threads" if mode == "exporter" else settings.server

    class FanWhyServer(BaseApplication):  # type: ignore[misc]  # gunicorn ships no type hints
        def load_config(self) -> None:
            options: dict[str, object] = {
                "bind": f"[{settings.host}]:{settings.port}" if ":" in settings.host else
                        f"{settings.host}:{settings.port}",
                "workers": 1,
                "timeout": 60,
                "graceful_timeout": 5,
                "keepalive": keepalive_s(settings.header_timeout_s),  # gevent: the deadline for a request's headers
                "worker_connections": settings.max_connections,
                # the listen queue (the kernel caps it at net.core.somaxconn): a burst larger than gunicorn's default
                # 2048 (the slow-body attack opens 2,100 at once) would make late connections, an honest client's
                # too, retry their handshake for seconds
                "backlog": 4096,
                "accesslog": None,
                "loglevel": "warning",
                "when_ready": lambda server: print(serving_line(settings, mode), flush=True),
            }
            if model == "gevent":
                options["worker_class"] = gevent_worker(settings.client_connections, settings.trusted_proxies)
            else:
                options.update(worker_class="gthread", threads=settings.threads)
            if settings.tls_cert:  # optional TLS, terminated by gunicorn
                options.update(certfile=settings.tls_cert, keyfile=settings.tls_key)
            for key, value in options.items():
                self.cfg.set(key, value)

        def load(self) -> Flask:
            from .application import create_app
            from .vendors.base import BackendUnavailable

            try:
                return create_app({"SETTINGS": settings, "MODE": mode, "SERVER": model})
            except BackendUnavailable as error:
                print(f"fanwhy: backend {settings.backend!r} cannot start: {shown(error)}", file=sys.stderr, flush=True)
                sys.exit(4)

    FanWhyServer().run()
    return 0
