"""Request bodies against the real server (`python -m app`, gevent): bad chunked framing is a 400 JSON answer at
once, a body that never arrives is cut off at its deadline, and bodies in flight are capped per address."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from tests.support.servers import free_port, start_server, stop, wait_for, wait_healthy

BODY_TIMEOUT_S = 2.0


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    port = free_port()
    proc = start_server(port, FANWHY_BODY_TIMEOUT=str(BODY_TIMEOUT_S), FANWHY_CLIENT_BODIES="4")
    try:
        wait_healthy(f"http://127.0.0.1:{port}")
        yield port
    finally:
        output = stop(proc)
        assert "Traceback" not in output, output


def _open(port: int, head: bytes, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket()
    sock.settimeout(BODY_TIMEOUT_S + 8)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    sock.sendall(head)
    return sock


def _answer(sock: socket.socket) -> tuple[int, dict[str, object], float]:
    """(status, JSON body, seconds waited) of the answer on ``sock``."""
    started = time.monotonic()
    data = b""
    with sock:
        while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < _length(data):
            piece = sock.recv(65536)
            if not piece:
                break
            data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    assert b"application/json" in head.lower(), data[:300]
    return int(head.split()[1]), json.loads(body), time.monotonic() - started


def _length(data: bytes) -> int:
    for line in data.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":", 1)[1])
    return 1 << 30


def _post(chunked: bool = False, length: int | None = None) -> bytes:
    framing = b"Transfer-Encoding: chunked\r\n" if chunked else f"Content-Length: {length}\r\n".encode()
    return b"POST /api/recordings HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + framing + b"\r\n"


@pytest.mark.parametrize("body", [b"zz\r\n{}\r\n0\r\n\r\n", b"2\r\n{}XX0\r\n\r\n", b"-1\r\n{}\r\n0\r\n\r\n"])
def test_malformed_chunked_framing_is_a_400_at_once(port: int, body: bytes) -> None:
    status, answer, waited = _answer(_open(port, _post(chunked=True) + body))
    assert status == 400 and answer["error"] == "malformed body", answer
    assert waited < 1.0


@pytest.mark.parametrize(("head", "sent"), [(_post(chunked=True), b'5\r\n{"a"'), (_post(length=100), b'{"labe'),
                                            (_post(chunked=True), b"2\r\n{}\r\n")])
def test_a_body_cut_short_by_its_sender_is_a_400_at_once(port: int, head: bytes, sent: bytes) -> None:
    sock = _open(port, head + sent)
    sock.shutdown(socket.SHUT_WR)  # the client is done: the body ends early
    status, answer, waited = _answer(sock)
    assert status == 400 and answer["error"] == "malformed body" and waited < 1.0, answer


@pytest.mark.parametrize(("head", "sent"), [(_post(chunked=True), b'5\r\n{"a"'), (_post(length=100), b'{"labe')])
def test_a_body_that_never_arrives_is_cut_off_at_its_deadline(port: int, head: bytes, sent: bytes) -> None:
    status, answer, waited = _answer(_open(port, head + sent))
    assert status == 408 and "FANWHY_BODY_TIMEOUT" in str(answer["detail"]), answer
    assert BODY_TIMEOUT_S - 0.5 < waited < BODY_TIMEOUT_S + 2


def _trickled(socks: list[socket.socket], byte: bytes) -> list[tuple[int, dict[str, object], float]]:
    """Each socket sent ``byte`` every 0.4 s until it is answered (at most a minute): the answers."""
    done = threading.Event()

    def trickle() -> None:
        started = time.monotonic()
        while not done.is_set() and time.monotonic() - started < 60:
            time.sleep(0.4)
            for sock in socks:
                with contextlib.suppress(OSError):
                    sock.send(byte)

    threading.Thread(target=trickle, daemon=True).start()
    try:
        return [_answer(sock) for sock in socks]
    finally:
        done.set()


def test_trickled_bodies_are_cut_off_at_their_deadline_from_their_first_byte(port: int) -> None:
    """64 bodies from 16 addresses (the cap in all), each sent one byte every 0.4 s: each wait is short, the body is
    not. Each is answered 408 by the deadline (they were held until their last byte, a minute for 150 bytes), and
    then another client's POST goes through."""
    started = time.monotonic()
    answers = _trickled([_open(port, _post(length=150) + b"{", source=f"127.0.4.{1 + i % 16}") for i in range(64)],
                        b" ")
    assert [status for status, _, _ in answers] == [408] * 64, answers[:3]
    assert time.monotonic() - started < BODY_TIMEOUT_S + 4
    body = json.dumps({"label": "after the trickles"}).encode()
    status, answer, _ = _answer(_open(port, _post(length=len(body)) + body, source="127.0.4.99"))
    assert status == 201, answer


def test_trickled_engineio_polling_posts_are_cut_off_and_polling_clients_still_connect(port: int) -> None:
    """The same for Engine.IO's long-polling POSTs (a polling client's packets): 64 trickled from 16 addresses into
    open sessions are answered 408 by the deadline, and a polling-only Socket.IO client then connects and is
    pushed updates."""
    import requests
    import socketio

    sids = []
    for _ in range(16):
        opened = requests.get(f"http://127.0.0.1:{port}/socket.io/?EIO=4&transport=polling", timeout=30)
        sids.append(json.loads(opened.text[1:])["sid"])

    def head(i: int) -> bytes:
        return (f"POST /socket.io/?EIO=4&transport=polling&sid={sids[i % 16]} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                "Content-Type: text/plain;charset=UTF-8\r\nContent-Length: 150\r\n\r\n4").encode()

    started = time.monotonic()
    answers = _trickled([_open(port, head(i), source=f"127.0.5.{1 + i % 16}") for i in range(64)], b"2")
    assert [status for status, _, _ in answers] == [408] * 64, answers[:3]
    assert time.monotonic() - started < BODY_TIMEOUT_S + 4
    client = socketio.Client(reconnection=False)
    updates: list[object] = []
    client.on("gpu_status_update", updates.append)
    client.connect(f"http://127.0.0.1:{port}", transports=["polling"], wait_timeout=30)
    try:
        deadline = time.monotonic() + 60
        while len(updates) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(updates) >= 2
    finally:
        client.disconnect()


def test_bodies_in_flight_are_capped_per_address(port: int) -> None:
    held = [_open(port, _post(length=100) + b"{", source="127.0.3.1") for _ in range(4)]
    time.sleep(0.3)
    status, answer, waited = _answer(_open(port, _post(length=100) + b"{", source="127.0.3.1"))
    assert status == 429 and "FANWHY_CLIENT_BODIES" in str(answer["detail"]) and waited < 1.0, answer
    body = json.dumps({"label": "from another address"}).encode()
    status, answer, _ = _answer(_open(port, _post(length=len(body)) + body, source="127.0.3.2"))
    assert status == 201 and answer["label"] == "from another address", answer
    for sock in held:
        assert _answer(sock)[0] == 408


def test_a_well_formed_chunked_body_is_read(port: int) -> None:
    body = json.dumps({"label": "chunked"}).encode()
    framed = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    status, answer, _ = _answer(_open(port, _post(chunked=True) + framed, source="127.0.3.3"))
    assert status == 201 and answer["label"] == "chunked", answer


@pytest.mark.parametrize(("request_bytes", "status"), [
    (b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 414),
    (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"".join(b"X-%d: 1\r\n" % n for n in range(200)) + b"\r\n", 431),
    (b"GET / HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n", 400),
    (b"G\x01T / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400),
])
def test_the_servers_own_refusals_are_json(port: int, request_bytes: bytes, status: int) -> None:
    """What gunicorn refuses before FanWhy sees it (a request line, header or version it cannot parse) answers in
    the same JSON shape as every other error, not gunicorn's HTML page."""
    got, answer, _ = _answer(_open(port, request_bytes, source="127.0.3.4"))
    assert got == status and isinstance(answer["error"], str) and "detail" in answer, answer


@pytest.mark.parametrize("host", ["127.0.0.1:{port}@evil.com", "127.0.0.1:{port}/x", "127.0.0.1 evil.com",
                                  "127.0.0.1:{port}:1"])
def test_a_host_that_is_not_a_host_and_port_is_refused(port: int, host: str) -> None:
    head = f"GET /api/health HTTP/1.1\r\nHost: {host.format(port=port)}\r\n\r\n".encode()
    status, answer, _ = _answer(_open(port, head, source="127.0.3.5"))
    assert status == 400 and answer["error"] == "bad Host", answer


@pytest.mark.parametrize("length", ["²", "١٢", "12a", "-5", "9" * 30])
def test_a_content_length_that_is_not_a_number_is_a_400(length: str) -> None:
    """In-process: what the middleware answers for a Content-Length no parser should accept."""
    import io

    from app.web.bodies import BodyReader

    answers: list[str] = []
    reader = BodyReader(lambda environ, start: [b"app"], max_bytes=1024)

    def start(status: str, headers: list[tuple[str, str]], exc_info: object = None) -> Callable[[bytes], object]:
        answers.append(status)
        return lambda data: None

    body = reader({"CONTENT_LENGTH": length, "wsgi.input": io.BytesIO(b"{}"), "REMOTE_ADDR": "127.0.0.1"}, start)
    assert answers == ["400 Bad Request"] and b"Content-Length" in b"".join(body)


TOKEN = "bodies-test-token-0123456789"


def test_with_a_token_bodies_without_it_are_refused_unread_and_cannot_take_the_token_holders_slots() -> None:
    """A body without the token is a 401 at once (never read); the login form's bodies have a pool of their own,
    so slow login forms fill that pool only, and an authenticated POST is answered at once."""
    port = free_port()
    proc = start_server(port, FANWHY_TOKEN=TOKEN, FANWHY_BODY_TIMEOUT=str(BODY_TIMEOUT_S), FANWHY_CLIENT_BODIES="4")
    held: list[socket.socket] = []
    try:
        wait_healthy(f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {TOKEN}"})
        status, answer, waited = _answer(_open(port, _post(length=100) + b'{"labe', source="127.0.4.1"))
        assert status == 401 and answer["error"] == "unauthorized" and waited < 1.0, answer
        login = b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n" \
                b"Content-Length: 100\r\n\r\ntoken="
        held = [_open(port, login, source=f"127.0.4.{2 + n // 4}") for n in range(8)]  # the login pool, full
        time.sleep(0.3)
        status, answer, waited = _answer(_open(port, login, source="127.0.4.9"))
        assert status == 503 and waited < 1.0, answer
        body = json.dumps({"label": "with the token"}).encode()
        head = _post(length=len(body)).replace(b"\r\n\r\n", f"\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())
        status, answer, waited = _answer(_open(port, head + body, source="127.0.4.10"))
        assert status == 201 and answer["label"] == "with the token" and waited < 1.0, answer
    finally:
        for sock in held:
            sock.close()
        output = stop(proc)
    assert "Traceback" not in output, output


def _status(sock: socket.socket) -> int:
    """The status of the answer on ``sock`` (any content type), read to its head."""
    data = b""
    with sock:
        while b"\r\n" not in data:
            piece = sock.recv(65536)
            if not piece:
                break
            data += piece
    return int(data.split()[1])


@contextlib.contextmanager
def _renewed_trickles(port: int, head: bytes, sources: list[str]) -> Iterator[list[int]]:
    """One trickler per source: a body of 150 promised bytes, one sent every 0.4 s, opened again as soon as it is
    answered (a 408 at its deadline, or when it is cut to make room): the statuses they were answered with. Entered
    once each trickling address has been late once (the steady state of a trickling attack; before that, a body
    younger than SLOW_BODY_S is not cut)."""
    done = threading.Event()
    seen: list[int] = []
    late: set[str] = set()

    def trickler(source: str) -> None:
        while not done.is_set():
            try:
                sock = _open(port, head, source=source)
                sock.settimeout(0.4)
                while not done.is_set():
                    try:
                        data = sock.recv(4096)
                    except TimeoutError:
                        sock.send(b" ")
                        continue
                    if data:
                        seen.append(int(data.split()[1]))
                        if seen[-1] == 408:
                            late.add(source)
                    break
                sock.close()
                time.sleep(0.05)  # and again
            except OSError:
                time.sleep(0.1)

    threads = [threading.Thread(target=trickler, args=(s,), daemon=True) for s in sources]
    for thread in threads:
        thread.start()
    try:
        wait_for(lambda: late == set(sources), timeout=120, every=0.1)  # each address late once: known slow
        yield seen
    finally:
        done.set()
        for thread in threads:
            thread.join(10)


def _spaced(send: Callable[[], int], times: int = 20) -> list[int]:
    answers = []
    for _ in range(times):
        answers.append(send())
        time.sleep(0.25)
    return answers


def test_renewed_trickles_from_many_addresses_hold_only_their_share(port: int) -> None:
    """64 trickled POSTs from 16 addresses, each renewed when answered, fill every place (FANWHY_MAX_BODIES): a
    POST from another address makes room (the oldest slow body of the fullest address is cut) and is answered;
    at least 19 of 20."""
    sources = [f"127.0.7.{1 + i % 16}" for i in range(64)]
    with _renewed_trickles(port, _post(length=150) + b"{", sources) as seen:
        body = json.dumps({"label": "between the trickles"}).encode()

        def one() -> int:
            sock = _open(port, _post(length=len(body)) + body, source="127.0.7.200")
            status, answer, _ = _answer(sock)
            if status == 201:
                stop_one = _open(port, f"POST /api/recordings/{answer['id']}/stop HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                       "Content-Length: 0\r\n\r\n".encode(), source="127.0.7.201")
                assert _status(stop_one) == 200
            return status
        answers = _spaced(one)
    assert sum(s == 201 for s in answers) >= 19, answers
    assert 408 in seen  # the tricklers were answered (at their deadline, or cut for room), never left hanging


def test_renewed_login_trickles_leave_sign_in_to_everyone_else() -> None:
    """Before sign-in: 64 renewed trickles of the login form from 16 addresses (the login pool holds 8) leave at
    least 19 of 20 sign-ins from another address answered, and the token holders' POSTs too."""
    port = free_port()
    proc = start_server(port, FANWHY_TOKEN=TOKEN, FANWHY_BODY_TIMEOUT=str(BODY_TIMEOUT_S), FANWHY_CLIENT_BODIES="4",
                        FANWHY_RATE_LIMIT="1000")
    login = b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n" \
            b"Content-Length: 150\r\n\r\ntoken="
    form = f"token={TOKEN}".encode()
    real = (b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            + f"Content-Length: {len(form)}\r\n\r\n".encode() + form)
    body = json.dumps({"label": "with the token"}).encode()
    post = _post(length=len(body)).replace(b"\r\n\r\n", f"\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode()) + body
    try:
        wait_healthy(f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {TOKEN}"})
        with _renewed_trickles(port, login, [f"127.0.8.{1 + i % 16}" for i in range(64)]):
            signed_in = _spaced(lambda: _status(_open(port, real, source="127.0.8.200")))
            posted = _spaced(lambda: _status(_open(port, post, source="127.0.8.201")), times=10)
    finally:
        output = stop(proc)
    assert sum(s == 302 for s in signed_in) >= 19, signed_in  # signed in: sent on to the page
    assert posted.count(201) == 10, posted
    assert "Traceback" not in output, output
