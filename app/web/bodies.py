"""Request bodies are read whole, under a deadline and a cap, before Flask sees the request.

A request with a body (a ``Content-Length`` above 0, or chunked) is read here into memory, so that:
- **malformed or truncated framing** (a chunk size that is not hex, a chunk without its CRLF, a connection that
  closes early) is a 400 JSON answer at once, never a server error from deep inside a handler;
- **a body has a deadline** (FANWHY_BODY_TIMEOUT seconds from its first byte to its last), like the headers: a
  client that promises 100 bytes and sends 6 gets a 408 when it runs out, not a connection held for ever;
- **bodies in flight are capped** per client address (FANWHY_CLIENT_BODIES) and in all (FANWHY_MAX_BODIES): past
  an address's cap, a 429 at once. **A pool that is full makes room** rather than refusing: a body still arriving
  after ``SLOW_BODY_S``, or any body of an address already known slow (one of its bodies missed its deadline or
  was cut in the last ``SLOW_MEMORY_S``), is cut (a 408 to its sender) for a newcomer: a known slow address's
  first, then the oldest of the address holding the most; a known slow address is given no room (503). So slow
  senders, many or few, renewing or not, hold only
  what nobody else asks for, and a login or a POST from anyone else is read: a body of 64 KiB arrives in
  milliseconds, not seconds;
- a body larger than MAX_CONTENT_LENGTH is a 413 as soon as that is known;
- **with FANWHY_TOKEN, a body without the token is never read**: a 401 at once (Flask would say the same after the
  body), except the login form's and Engine.IO's polls (the gate checked their token or session id), which count in
  pools of their own (
LOGIN_BODIES, FANWHY_MAX_BODIES), so that neither can take the slots of REST clients with the
  token.
Flask then reads the body from memory (at most 64 KiB: every body FanWhy takes is small JSON).
"""

from __future__ import annotations

import contextlib
import io
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, BinaryIO

from .access import UNAUTHORIZED, AccessPolicy
from .gate import refuse
from .refusals import Refusals
from .rest import ApiError

if TYPE_CHECKING:  # the standard's types (PEP 3333), from typeshed
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

LOGIN_BODIES = 8  # login forms being sent at once, in all (their own pool: see above)
SLOW_BODY_S = 1.0  # a body still arriving after this may be cut to make room for a newcomer
SLOW_MEMORY_S = 60.0  # how long an address whose body was late is remembered as slow
SLOW_ADDRESSES = 4096  # slow addresses remembered at most (the oldest forgotten first)
SOCKET_BODY_BYTES = 16 * 1024  # an Engine.IO poll's payload at most (its max_http_buffer_size): past it Engine.IO
# closes the session and waits for its queue, so the request hung until the ping timeout; refused here at once (413)


class BodyReader:
    """WSGI middleware: see the module's docstring."""

    def __init__(self, app: WSGIApplication, *, max_bytes: int, timeout_s: float = 10.0, per_client: int = 4,
                 in_all: int = 64, policy: AccessPolicy | None = None, clock: Callable[[], float] = time.monotonic,
                 refusals: Refusals | None = None):
        self.app = app
        self.refusals = refusals
        self.policy = policy or AccessPolicy(None, None, frozenset({"*"}))  # the access policy: whose body is read
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s
        self.per_client = per_client
        self.in_all = in_all
        self._clock = clock
        self._lock = threading.Lock()  # held only to count, never across a read
        self._reading: Counter[tuple[str, str]] = Counter()  # (pool, client address) -> bodies being read
        self._bodies: dict[int, _Body] = {}  # every body being read, by id
        self._slow: dict[str, float] = {}  # address -> when one of its bodies was last late or cut

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        chunked = "chunked" in (environ.get("HTTP_TRANSFER_ENCODING") or "").lower()
        try:
            length = _content_length(environ)
            if not chunked and not length:
                return self.app(environ, start_response)
            pool = self._pool(environ)
            limit = min(self.max_bytes, SOCKET_BODY_BYTES) if pool == "socket" else self.max_bytes
            if length is not None and length > limit:
                raise ApiError(413, "request entity too large", f"at most {limit} bytes")
            body = self._read_counted(environ, length, pool)
            if len(body) > limit:  # a chunked poll: its size is known once read
                raise ApiError(413, "request entity too large", f"at most {limit} bytes")
        except ApiError as refusal:
            if self.refusals is not None:
                self.refusals.record("token" if refusal.status == 401 else "body", environ.get("REMOTE_ADDR"),
                                     refusal.status, f"{refusal.error}: {refusal.detail}")
            return refuse(start_response, refusal.status, refusal.error, str(refusal.detail))
        environ["wsgi.input"] = io.BytesIO(body)
        environ["CONTENT_LENGTH"] = str(len(body))
        environ.pop("HTTP_TRANSFER_ENCODING", None)
        environ["wsgi.input_terminated"] = True
        return self.app(environ, start_response)

    def _pool(self, environ: WSGIEnvironment) -> str:
        """Which pool a body counts in (AccessPolicy.body_pool); a body the policy does not admit is a 401, unread."""
        pool = self.policy.body_pool(environ)
        if pool is None:
            raise ApiError(401, "unauthorized", UNAUTHORIZED)
        return pool

    def _read_counted(self, environ: WSGIEnvironment, length: int | None, pool: str) -> bytes:
        key = (pool, environ.get("REMOTE_ADDR") or "?")
        in_all = LOGIN_BODIES if pool == "login" else self.in_all  # main and socket: FANWHY_MAX_BODIES each
        body = _Body(key, self._clock(), environ.get("gunicorn.socket"))
        with self._lock:
            if self._reading[key] >= self.per_client:
                raise ApiError(429, "too many bodies in flight",
                              f"at most {self.per_client} requests per client may be sending a body at once "
                              "(FANWHY_CLIENT_BODIES)")
            if sum(n for (p, _), n in self._reading.items() if p == pool) >= in_all:
                victim = self._room(key)
                if victim is None:
                    raise ApiError(503, "server busy", f"at most {in_all} requests may be sending a body at once "
                                   f"({'login forms' if pool == 'login' else 'FANWHY_MAX_BODIES'})")
                self._forget(victim)
                victim.cut()
            self._reading[key] += 1
            self._bodies[id(body)] = body
        try:
            return self._read(environ, length, body.stopped)
        except ApiError as refused:
            if refused.status == 408:
                self._remember_slow(key[1])
            raise
        finally:
            with self._lock:
                self._forget(body)

    def _remember_slow(self, address: str) -> None:
        with self._lock:
            self._slow.pop(address, None)
            self._slow[address] = self._clock()
            while len(self._slow) > SLOW_ADDRESSES:
                del self._slow[next(iter(self._slow))]

    def _known_slow(self, address: str, now: float) -> bool:
        return now - self._slow.get(address, -SLOW_MEMORY_S) < SLOW_MEMORY_S

    def _room(self, key: tuple[str, str]) -> _Body | None:
        """The body to cut for a newcomer of ``key`` (held under the lock): none for a known slow address (its
        newcomers would only cut each other's bodies, every one read in turn: the 2,100 bodies of a slow-body flood
        held the worker's memory up); else a slow body of its pool, a known slow address's first, then the address
        holding the most, the oldest."""
        now = self._clock()
        if self._known_slow(key[1], now):
            return None
        slow = [b for b in self._bodies.values() if b.key[0] == key[0] and b.sock is not None
                and not b.stopped.is_set() and (now - b.started >= SLOW_BODY_S or self._known_slow(b.key[1], now))]
        if not slow:
            return None
        return min(slow, key=lambda b: (not self._known_slow(b.key[1], now), -self._reading[b.key], b.started))

    def _forget(self, body: _Body) -> None:
        if self._bodies.pop(id(body), None) is not None:
            self._reading[body.key] -= 1
            if not self._reading[body.key]:
                del self._reading[body.key]

    def _read(self, environ: WSGIEnvironment, length: int | None, stopped: threading.Event) -> bytes:
        """The body, read in pieces; each wait for the socket is bounded by what is left of the deadline, and at
        the deadline the socket's reading side is shut: gunicorn's ``read(n)`` waits for its n bytes one recv after
        another, each within the time left, so a sender of one byte every few seconds was never cut off."""
        sock = environ.get("gunicorn.socket")
        before = sock.gettimeout() if sock is not None else None
        began = self._clock()
        with _shut_at(sock, self.timeout_s, stopped) as cut:
            try:
                body = self._pieces(environ["wsgi.input"], sock, length, self._clock() + self.timeout_s)
            except TimeoutError:
                raise self._late(began) from None
            except ApiError:
                raise
            except Exception as error:  # gunicorn's InvalidChunkSize, ChunkMissingTerminator, NoMoreData, a reset
                if cut.is_set():
                    raise self._late(began) from None
                raise ApiError(400, "malformed body", f"the body could not be read: {type(error).__name__}") \
                    from None
            finally:
                if sock is not None and not cut.is_set():
                    with contextlib.suppress(OSError):
                        sock.settimeout(before)
        if length is not None and len(body) < length:
            if cut.is_set():
                raise self._late(began)
            raise ApiError(400, "malformed body", f"the body ended after {len(body)} of {length} bytes")
        return body

    def _pieces(self, stream: BinaryIO, sock: socket.socket | None, length: int | None, deadline: float) -> bytes:
        """What arrives before ``deadline`` (at most ``length`` bytes, or until the end of a chunked body)."""
        parts: list[bytes] = []
        size = 0
        while length is None or size < length:
            left = deadline - self._clock()
            if left <= 0:
                raise TimeoutError
            if sock is not None:
                sock.settimeout(left)
            piece = stream.read(min(8192, self.max_bytes + 1 - size) if length is None else min(8192, length - size))
            if not piece:
                break
            parts.append(piece)
            size += len(piece)
            if size > self.max_bytes:
                raise ApiError(413, "request entity too large", f"at most {self.max_bytes} bytes")
        return b"".join(parts)

    def _late(self, began: float) -> ApiError:
        if self._clock() - began < self.timeout_s * 0.99:  # cut before its deadline: room for a newcomer
            return ApiError(408, "request timeout", f"the body was still arriving after {SLOW_BODY_S:g} s while "
                                                    "every place was taken: cut to make room for another sender")
        return ApiError(408, "request timeout", f"the body did not arrive within {self.timeout_s:g} s "
                                                "(FANWHY_BODY_TIMEOUT)")


class _Body:
    """A body being read: its pool and address, when it began, its socket; ``cut`` ends its read now (a 408)."""

    def __init__(self, key: tuple[str, str], started: float, sock: socket.socket | None):
        self.key, self.started, self.sock = key, started, sock
        self.stopped = threading.Event()

    def cut(self) -> None:
        if self.sock is not None:
            _shut_reading(self.sock, self.stopped)


@contextlib.contextmanager
def _shut_at(sock: socket.socket | None, seconds: float, cut: threading.Event) -> Iterator[threading.Event]:
    """``cut`` set, and the socket's reading side shut, once ``seconds`` pass inside the block (or sooner, by
    ``_Body.cut``)."""
    timer = threading.Timer(seconds, _shut_reading, (sock, cut)) if sock is not None else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        yield cut
    finally:
        if timer is not None:
            timer.cancel()


def _shut_reading(sock: socket.socket, cut: threading.Event) -> None:
    """The body's deadline passed: its read ends now (the answer, a 408, is still written)."""
    cut.set()
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RD)


def _content_length(environ: WSGIEnvironment) -> int | None:
    raw = (environ.get("CONTENT_LENGTH") or "").strip()
    if not raw:
        return None
    if not (raw.isascii() and raw.isdecimal()) or len(raw) > 18:
        raise ApiError(400, "bad Content-Length", "expected a number of bytes")
    return int(raw)
