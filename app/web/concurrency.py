"""How request handlers wait, under each serving model (docs/SERVING.md says why gevent is the default).

- ``threads`` (gunicorn's gthread worker, Flask-SocketIO ``threading``): a handler may block; it holds its thread.
- ``gevent`` (gunicorn's gevent worker, Flask-SocketIO ``gevent``): handlers are greenlets on one event loop, so a
  handler must never block it. The collector, the history writer and every NVML call stay on native threads
  (threads are not monkey-patched: see app.serving); a greenlet that needs to wait for them either sleeps
  cooperatively (``sleep``) or hands the blocking call to a native thread (``blocking``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ContextManager, TypeVar

if TYPE_CHECKING:  # the standard's types (PEP 3333), from typeshed
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

T = TypeVar("T")


class Concurrency:
    """Threads: a blocking call is just a call."""

    async_mode = "threading"

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def blocking(self, fn: Callable[..., T], *args: object) -> T:
        return fn(*args)

    def lock(self) -> ContextManager[object]:
        """A lock for what handlers share (a threading lock here; under gevent, one that yields)."""
        return threading.Lock()


class GeventConcurrency(Concurrency):
    """gevent: ``blocking`` runs the call on a native thread of a small pool, and the calling greenlet yields."""

    async_mode = "gevent"

    def __init__(self, native_threads: int = 2):
        import gevent
        from gevent.threadpool import ThreadPool

        self._sleep = gevent.sleep
        self._pool = ThreadPool(native_threads)

    def sleep(self, seconds: float) -> None:
        self._sleep(seconds)

    def blocking(self, fn: Callable[..., T], *args: object) -> T:
        result: T = self._pool.apply(fn, args)
        return result

    def lock(self) -> ContextManager[object]:
        from gevent.lock import Semaphore

        lock: ContextManager[object] = Semaphore()
        return lock


def for_model(name: str) -> Concurrency:
    return GeventConcurrency() if name == "gevent" else Concurrency()


class OneWriterSocket:
    """A WebSocket connection's socket whose writes are whole and one at a time.

    simple_websocket writes to the socket from two places: Engine.IO's writer (every update) and its own reader,
    which answers a client's Ping or Close at once. Both call ``sock.send``. Under gevent that send is one
    non-blocking attempt: a frame larger than the socket's buffer (a megabyte of command line, measured) went out
    in part, and while the writer waited to write, the reader's answer raised gevent's ConcurrentObjectUseError
    ("socket already used by another greenlet"); clients got frames they could not decode. Here every write is
    ``sendall`` under one lock, so frames never interleave and are never cut.
    """

    def __init__(self, sock: Any, lock: ContextManager[object]):
        self._sock = sock
        self._lock = lock

    def send(self, data: bytes, *flags: int) -> int:
        self.sendall(data, *flags)
        return len(data)

    def sendall(self, data: bytes, *flags: int) -> None:
        with self._lock:
            self._sock.sendall(data, *flags)

    def recv(self, size: int, *flags: int) -> bytes:
        data: bytes = self._sock.recv(size, *flags)
        return data

    def fileno(self) -> int:
        return int(self._sock.fileno())

    def close(self) -> None:
        self._sock.close()

    def __getattr__(self, name: str) -> Any:  # anything else a server library asks of a socket
        return getattr(self._sock, name)




def one_writer_websockets(app: WSGIApplication, concurrency: Concurrency) -> WSGIApplication:
    """WSGI middleware: a WebSocket upgrade gets its socket (gunicorn's, in the environ) as an OneWriterSocket."""

    def wrapped(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        sock = environ.get("gunicorn.socket")
        if sock is not None and (environ.get("HTTP_UPGRADE") or "").lower() == "websocket":
            environ["gunicorn.socket"] = OneWriterSocket(sock, concurrency.lock())
        return app(environ, start_response)

    return wrapped
