"""The demo machine's tree: removed at exit by the process that made it only (a forked child's exit leaves it), and
read whole while it is written, as sysfs is."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.vendors.simulated_machine import SimulatedMachine, _remove_if_mine


def test_a_forked_childs_exit_leaves_the_tree_to_its_maker() -> None:
    machine = SimulatedMachine()
    pid = os.fork()
    if pid == 0:  # the child: what its atexit hook would do
        _remove_if_mine(machine.root, creator=os.getppid())
        os._exit(0)
    os.waitpid(pid, 0)
    assert (machine.sys_root / "class" / "hwmon" / "hwmon0" / "name").exists()
    _remove_if_mine(machine.root, creator=os.getpid())
    assert not machine.root.exists()


def test_a_reader_never_finds_an_attribute_half_written() -> None:
    """A sysfs attribute reads whole; the demo's tree must too. Written by truncating and then writing (the mutant
    this fails on), a read in between found the file empty: a tick with no fan duty on the page."""
    import threading

    machine = SimulatedMachine()
    pwm = machine.sys_root / "class" / "hwmon" / "hwmon1" / "pwm2"
    stop = threading.Event()
    empty = 0

    def write() -> None:
        while not stop.is_set():
            machine._write("hwmon1/pwm2", 128)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        for _ in range(20_000):
            empty += pwm.read_text() == ""
        stop.set()
        writer.join()
        assert not list(pwm.parent.glob(".*"))  # no partial file left beside it
    finally:
        stop.set()
        writer.join()
        _remove_if_mine(machine.root, creator=os.getpid())
    assert empty == 0


def test_a_tree_left_by_a_process_that_ran_no_exit_hook_goes_at_the_next_start(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-shot answer ends without exit hooks, as ``kill -9`` does: each left its tree behind in /tmp (hundreds
    a day on a test machine). The next start removes those whose maker is gone and leaves a living maker's. Fails
    without the sweep (both trees stay)."""
    import subprocess
    import sys
    import tempfile

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    left = tmp_path / f"fanwhy-demo-{gone.stdout.strip()}-abc"  # a maker that has exited
    (left / "sys").mkdir(parents=True)
    alive = tmp_path / f"fanwhy-demo-{os.getppid()}-def"  # a maker still running
    alive.mkdir()
    machine = SimulatedMachine()
    try:
        assert machine.root.parent == tmp_path and machine.root.name.startswith(f"fanwhy-demo-{os.getpid()}-")
        assert not left.exists() and alive.exists()
    finally:
        _remove_if_mine(machine.root, creator=os.getpid())
