""""Another machine" (a network namespace joined by a veth pair) stays reachable when a run killed before its
clean-up left its pair behind, addresses and all."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from tests.support.netns import IP, other_host, why_not
from tests.support.servers import ROOT, free_port

KILLED_RUN = ("import time; from tests.support.netns import other_host\n"
              "with other_host(tag=13) as host:\n"
              "    print(host.namespace, host.host_address, flush=True)\n"
              "    time.sleep(600)\n")


def test_a_pair_left_by_a_killed_run_does_not_capture_the_new_ones_replies() -> None:
    """A run killed with its pair made (kill -9: no clean-up) leaves the tag's addresses on this host. The next
    pair of that tag takes the next /30 of its series, and a program inside it reaches this host. The mutant this
    fails on: the tag's own /30 whatever holds it (this host's replies then leave by the stale pair: a browser on
    the other host once waited 30 s for a page so)."""
    reason = why_not()
    if reason is not None:
        pytest.skip(reason)
    assert IP is not None
    killed = subprocess.Popen([sys.executable, "-c", KILLED_RUN], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert killed.stdout is not None
    stale_namespace, stale_address = killed.stdout.readline().split()
    killed.kill()
    killed.wait()
    killed.stdout.close()
    try:
        with other_host(tag=13) as fresh:
            assert fresh.host_address != stale_address
            with socket.socket() as server:
                server.bind((fresh.host_address, free_port()))
                server.listen()
                port = server.getsockname()[1]
                reach = f"import socket; socket.create_connection(({fresh.host_address!r}, {port}), timeout=5)"
                result = subprocess.run(fresh.inside(sys.executable, "-c", reach), capture_output=True, text=True,
                                        timeout=60)
                assert result.returncode == 0, result.stderr
    finally:
        suffix = stale_namespace.removeprefix("fanwhy-")
        subprocess.run([IP, "link", "del", f"fwh{suffix}"], capture_output=True, timeout=30)
        subprocess.run([IP, "netns", "del", stale_namespace], capture_output=True, timeout=30)
