"""Files and commands read with bounds: what a file or a tool answers can be wrong, large or never come.

- ``read_file``: a regular file only (a FIFO or a device in its place is refused at once instead of blocking the
  reader for good), at most ``limit`` bytes (more is an error that names the limit, never a partial read taken as
  whole).
- ``run_bounded``: a command with a hard timeout and a cap on its output (bytes and lines); on either its whole
  process group is killed and reaped, so a tool that hangs or floods costs one error and no zombie.

Every fan source, the fan daemons' configurations and nvidia-smi go through these two.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from .record import record

FILE_LIMIT = 1 << 20  # a configuration file: 1 MiB is a hundred times the largest seen in the wild
OUTPUT_LIMIT = 4 << 20  # a command's output: ipmitool's longest listing is about 20 KB
LINE_LIMIT = 20_000


class BoundError(OSError):
    """A file or a command that is not what it should be (not a regular file, too large, too slow, too long)."""


class CommandError(Exception):
    """A command that could not start, did not answer in time, or answered more than its cap."""


@record
class CommandResult:
    stdout: str
    returncode: int


def read_file(path: str | Path, limit: int = FILE_LIMIT) -> bytes:
    """The bytes of ``path`` (at most ``limit``). A path that is not a regular file (a FIFO, a socket, a device, a
    folder) raises BoundError without waiting for it; so does a file longer than ``limit``."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO opens at once with O_NONBLOCK
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise BoundError(f"{path}: not a regular file ({_kind(mode)}): not read")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(65536, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise BoundError(f"{path}: larger than {_size(limit)}: not read")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text_file(path: str | Path, limit: int = FILE_LIMIT) -> str:
    """``read_file`` as text (undecodable bytes replaced)."""
    return read_file(path, limit).decode(errors="replace")


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a file"


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit >> 10} KiB" if limit >= 1024 else f"{limit} bytes"


def run_bounded(argv: list[str], timeout_s: float, limit: int = OUTPUT_LIMIT,
                line_limit: int = LINE_LIMIT) -> CommandResult:
    """Run ``argv`` (stdout and stderr together) with a hard timeout and at most ``limit`` bytes and ``line_limit``
    lines of output; past any of them its process group is killed and reaped, and CommandError says which."""
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                                stdin=subprocess.DEVNULL)
    except OSError as error:
        raise CommandError(f"{argv[0]} could not start: {error}") from error
    assert proc.stdout is not None
    name = os.path.basename(argv[0])
    try:
        out = _collect(proc, name, time.monotonic() + timeout_s, timeout_s, limit, line_limit)
    except CommandError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        raise
    finally:
        proc.stdout.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)  # reap: no zombie left behind (after a SIGKILL this is at once)
    return CommandResult(out.decode(errors="replace"), proc.returncode if proc.returncode is not None else -9)


def _collect(proc: subprocess.Popen[bytes], name: str, deadline: float, timeout_s: float, limit: int,
             line_limit: int) -> bytes:
    assert proc.stdout is not None
    chunks: list[bytes] = []
    size = lines = 0
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not selector.select(left):
                raise CommandError(f"{name} did not answer within {timeout_s:g} s and was killed")
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size, lines = size + len(chunk), lines + chunk.count(b"\n")
            if size > limit or lines > line_limit:
                raise CommandError(f"{name} wrote more than {_size(limit)} or {line_limit:,} lines and was killed")
    left = deadline - time.monotonic()
    try:
        proc.wait(timeout=max(left, 0.01))
    except subprocess.TimeoutExpired:  # closed its output but did not exit
        raise CommandError(f"{name} did not answer within {timeout_s:g} s and was killed") from None
    return b"".join(chunks)


def runner(argv: list[str], timeout_s: float) -> Callable[[], str]:
    """A function that runs ``argv`` (``run_bounded``) and answers its output, raising CommandError when it exits
    other than 0 (its exit code and first words: a BMC that refused, a cooler liquidctl cannot open)."""
    name = os.path.basename(argv[0])

    def run() -> str:
        result = run_bounded(argv, timeout_s)
        if result.returncode != 0:
            raise CommandError(f"{name} exited {result.returncode}: {result.stdout.strip()[:200]}")
        return result.stdout
    return run
