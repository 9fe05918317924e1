"""The demo machine's tree is removed at exit by the process that made it only: a forked child's exit leaves it."""

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
