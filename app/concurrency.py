"""How request handlers wait, under each serving model (docs/SERVING.md says why gevent is the default).

- ``threads`` (gunicorn's gthread worker, Flask-SocketIO ``threading``): a handler may block; it holds its thread.
- ``gevent`` (gunicorn's gevent worker, Flask-SocketIO ``gevent``): handlers are greenlets on one event loop, so a
  handler must never block it. The collector, the history writer and every NVML call stay on native threads
  (threads are not monkey-patched: see app.serving); a greenlet that needs to wait for them either sleeps
  cooperatively (``sleep``) or hands the blocking call to a native thread (``blocking``).
"""

from __future__ import annotations

import time
from typing import Any, Callable, TypeVar

T = TypeVar("T")


class Concurrency:
    """Threads: a blocking call is just a call."""

    async_mode = "threading"

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def blocking(self, fn: Callable[..., T], *args: Any) -> T:
        return fn(*args)


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

    def blocking(self, fn: Callable[..., T], *args: Any) -> T:
        result: T = self._pool.apply(fn, args)
        return result


def for_model(name: str) -> Concurrency:
    return GeventConcurrency() if name == "gevent" else Concurrency()
