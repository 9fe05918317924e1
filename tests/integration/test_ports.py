"""The tests' servers get ports no one else takes meanwhile: free on every address, and outside the kernel's
ephemeral range, from which each outgoing connection takes its local port."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.support.servers import free_port


def test_a_free_port_is_free_everywhere_below_the_ephemeral_range_and_never_handed_out_twice() -> None:
    """The mutant this fails on: the port the kernel picks for a bind to loopback's port 0 (what `free_port` did),
    which is from the ephemeral range and was once in use on another address when a container's server bound it."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == len(ports)
    assert all(port < low for port in ports), (low, ports)
    for port in ports[:5]:
        with socket.socket() as server:  # as a server that listens on every address binds it
            server.bind(("", port))
            server.listen()
