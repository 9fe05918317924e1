"""The demo machine's tree: removed at exit by the process that made it only (a forked child's exit leaves it), and
read whole while it is written, as sysfs is."""

from __future__ import annotations

import os

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
