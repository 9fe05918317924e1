"""How request handlers wait, under each serving model (docs/SERVING.md says why gevent is the default).

- ``threads`` (gunicorn's gthread worker, Flask-SocketIO ``threading``): a handler may block; it holds its thread.
- ``gevent`` (gunicorn's gevent worker, Flask-SocketIO ``gevent``): handlers are greenlets on one event loop, so a
  handler must never block it. The collector, the history writer and every NVML call stay on native threads
  (threads are not monkey-patched: see app.serving); a greenlet that needs to wait for them either sleeps
  cooperatively (``sleep``) or hands the blocking call to a native thread (``blocking``).
"""

from __future__ import annotations

import errno
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ContextManager, TypeVar

if TYPE_CHECKING:  # the standard's types (PEP 3333), from typeshed
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

T = TypeVar("T")


class Wake:
    """A signal a native thread gives (``notify``, never blocks) and one waiter takes (``wait``): threads, an Event."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def notify(self) -> None:
        self._event.set()

    def wait(self, timeout: float) -> bool:
        """Until notified or ``timeout``; True when notified. A notify that comes while the waiter works is kept
        for its next wait."""
        fired = self._event.wait(timeout)
        self._event.clear()
        return fired

    def close(self) -> None:
        """Nothing to give back for threads."""


class GeventWake(Wake):
    """Under gevent: ``notify`` sends an async watcher of the event loop (the one watcher that may be sent from
    another thread); its callback, on the loop, sets a gevent Event the greenlet waits on. No native thread waits on the
    greenlet's behalf (a pool thread blocked in the wait cost a handoff each frame). Made on the loop's thread, by the
    greenlet that waits."""

    def __init__(self) -> None:
        from gevent import get_hub
        from gevent.event import Event

        self._event = Event()
        self._async = get_hub().loop.async_(ref=False)  # keeps no loop running: a worker that stops exits
        self._async.start(self._event.set)

    def notify(self) -> None:
        self._async.send()

    def close(self) -> None:
        self._async.stop()
        self._async.close()


class Concurrency:
    """Threads: a blocking call is just a call."""

    async_mode = "threading"

    def wake(self) -> Wake:
        """A signal from a native thread to a handler (the broadcaster's: a new frame)."""
        return Wake()

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

    def wake(self) -> Wake:
        return GeventWake()

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

    def __init__(self, sock: Any, lock: ContextManager[object], pause: Callable[[float], None] = lambda s: None):
        self._sock = sock
        self._lock = lock
        self._pause = pause

    def send(self, data: bytes, *flags: int) -> int:
        self.sendall(data, *flags)
        return len(data)

    def sendall(self, data: bytes, *flags: int) -> None:
        with self._lock:
            try:
                self._sock.sendall(data, *flags)
            except (ConnectionResetError, ConnectionAbortedError) as gone:
                # a peer that is gone, as simple_websocket's close expects to hear it: it forgives a broken pipe
                # only, and a client that reset the connection (one that exits with frames unread does) made that
                # close raise from Engine.IO's writer greenlet, a traceback in the log
                raise BrokenPipeError(errno.EPIPE, f"the peer is gone ({gone.strerror})") from gone

    def recv(self, size: int, *flags: int) -> bytes:
        data: bytes = self._sock.recv(size, *flags)
        # Under gevent a read that finds data waiting never yields: a client that queued 20,000 frames had them all
        # read and parsed (0.2 s) before anyone else ran, its session's limits included (app.web.sessions). One
        # yield a read (4 KiB) lets the limits close it and the other clients be answered in between.
        self._pause(0)
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
            environ["gunicorn.socket"] = OneWriterSocket(sock, concurrency.lock(), concurrency.sleep)
        return app(environ, start_response)

    return wrapped
