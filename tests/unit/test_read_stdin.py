"""explain's standard input: read whole, up to its limit, and never by a read() that could wait past a signal.

A blocking read() is interrupted only by a signal that comes while it waits; one that comes after Python last looked
for signals and before the read began leaves the read waiting for input that may never come. On a loaded 2-core
machine explain's SIGTERM so left it reading for a minute (3 of 120 tries beside six busy loops; none of 260 once it
read after select with a timeout)."""

from __future__ import annotations

import contextlib
import io
import os
import select
import sys
import threading
from collections.abc import Iterator

import pytest

from app.cli import main as cli_main


@pytest.fixture
def pipe_stdin(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, int]]:
    """Standard input replaced by a pipe's read end; the write end is the test's."""
    read_end, write_end = os.pipe()
    stream = os.fdopen(read_end, "rb", buffering=0)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(stream)))
    try:
        yield read_end, write_end
    finally:
        stream.close()
        with contextlib.suppress(OSError):  # closed by the test already
            os.close(write_end)


def test_it_reads_every_byte_to_the_end_in_pieces(pipe_stdin: tuple[int, int]) -> None:
    _, write_end = pipe_stdin
    data = bytes(range(256)) * 300  # past one read's 64 KiB
    os.write(write_end, data[:40_000])
    os.write(write_end, data[40_000:60_000])
    os.close(write_end)
    assert cli_main.read_stdin(1 << 20) == data[:60_000]


def test_it_stops_at_its_limit(pipe_stdin: tuple[int, int]) -> None:
    _, write_end = pipe_stdin
    os.write(write_end, b"x" * 5000)
    assert cli_main.read_stdin(1234) == b"x" * 1234


def test_it_waits_in_turns_of_select_with_a_timeout_never_in_a_read(pipe_stdin: tuple[int, int],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Each wait for input is a select() bounded by STDIN_POLL_S, after which Python runs any signal handler due;
    read() is called only when select() says bytes (or the end) are there (fails on a plain blocking read)."""
    read_end, write_end = pipe_stdin
    waits: list[float | None] = []
    real = select.select
    fed = threading.Lock()

    def feed() -> None:
        if fed.acquire(blocking=False):
            os.write(write_end, b"fan1: 900 RPM\n")
            os.close(write_end)

    def watched(r: list[int], w: list[int], x: list[int], timeout: float | None = None) -> object:
        waits.append(timeout)
        if len(waits) == 3:  # input comes after two empty waits
            feed()
        return real(r, w, x, timeout)

    late = threading.Timer(5.0, feed)  # a read that never selects still ends (and fails below), never hangs
    late.start()

    reads: list[int] = []
    real_read = os.read

    def watched_read(fd: int, n: int) -> bytes:
        assert real([fd], [], [], 0)[0], "read() while nothing was there to read"
        reads.append(fd)
        return real_read(fd, n)

    monkeypatch.setattr(select, "select", watched)
    monkeypatch.setattr(os, "read", watched_read)
    try:
        assert cli_main.read_stdin(1 << 20) == b"fan1: 900 RPM\n"
    finally:
        late.cancel()
    assert len(waits) >= 3 and all(t == cli_main.STDIN_POLL_S for t in waits), waits
    assert reads and set(reads) == {read_end}


def test_a_stand_in_with_no_descriptor_is_read_as_it_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"temp1: +40.0\xc2\xb0C\n")))
    assert cli_main.read_stdin(100) == b"temp1: +40.0\xc2\xb0C\n"
