"""Another machine, made on this one: a network namespace joined to this host by a veth pair.

A program started inside the namespace (``inside``) reaches this host only at ``host_address``, over the veth, as a
machine on the same network would; nothing leaves the two ends. The tests that need it skip, saying why, where it
cannot be made (not root, no ``ip``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

IP = shutil.which("ip")


def why_not() -> str | None:
    """None where a namespace can be made here, else why not."""
    if IP is None:
        return "iproute2's ip is not installed"
    if os.geteuid() != 0:
        return "network namespaces need root (CI runs as root)"
    return None


@dataclass(frozen=True)
class OtherHost:
    namespace: str
    host_address: str  # this machine, as the other host reaches it
    address: str  # the other host's own

    def inside(self, *command: str) -> list[str]:
        """``command`` run inside the other host."""
        assert IP is not None
        return [IP, "netns", "exec", self.namespace, *command]

    def wrapper(self, folder: Path, program: str) -> str:
        """An executable that runs ``program`` inside the other host (for tools that take a program's path)."""
        path = folder / f"in-{self.namespace}-{Path(program).name}"
        path.write_text(f'#!/bin/sh\nexec {" ".join(self.inside(program))} "$@"\n')
        path.chmod(0o755)
        return str(path)


def _ip(*args: str) -> None:
    assert IP is not None
    subprocess.run([IP, *args], check=True, capture_output=True, timeout=30)


def _no_ipv6(link: str, namespace: str | None = None) -> None:
    setting = f"/proc/sys/net/ipv6/conf/{link}/disable_ipv6"
    inside = [IP or "ip", "netns", "exec", namespace] if namespace else []
    subprocess.run([*inside, "sh", "-c", f"test ! -e {setting} || echo 1 > {setting}"], capture_output=True,
                   timeout=30)


def _network(tag: int) -> int:
    """The third octet of the pair's /30: ``tag``'s own, unless an interface of this host has an address there
    already (a pair left by a run killed before it could remove it answers for that address, and a browser on the
    new pair then waits for replies that leave by the old one): then the next of tag + 16, + 32, ..."""
    assert IP is not None
    taken = subprocess.run([IP, "-4", "-o", "addr", "show"], capture_output=True, text=True, timeout=30).stdout
    for octet in range(tag, 256, 16):
        if f" 10.213.{octet}." not in taken:
            return octet
    raise RuntimeError(f"every 10.213.x.0/30 of tag {tag} is on an interface of this host already:\n{taken}")


@contextmanager
def other_host(tag: int = 0) -> Iterator[OtherHost]:
    """A namespace named after this process, at 10.213.<n>.2 beside this host's 10.213.<n>.1 (a /30 on the veth
    pair only; n is ``tag``, or the next free one of its series: `_network`), removed afterwards."""
    octet = _network(tag)
    suffix = f"{os.getpid() % 10_000}{octet}"
    namespace, near, far = f"fanwhy-{suffix}", f"fwh{suffix}", f"fwn{suffix}"
    host = OtherHost(namespace, f"10.213.{octet}.1", f"10.213.{octet}.2")
    _ip("netns", "add", namespace)
    try:
        _ip("link", "add", near, "type", "veth", "peer", "name", far)
        _ip("link", "set", far, "netns", namespace)
        # no IPv6 on the pair: a link-local address that finishes its duplicate check a moment after the link is up
        # is an address change, and Chromium answers a page loading then with ERR_NETWORK_CHANGED
        _no_ipv6(near)
        _no_ipv6(far, namespace)
        _ip("addr", "add", f"{host.host_address}/30", "dev", near)
        _ip("link", "set", near, "up")
        _ip("-n", namespace, "addr", "add", f"{host.address}/30", "dev", far)
        _ip("-n", namespace, "link", "set", far, "up")
        _ip("-n", namespace, "link", "set", "lo", "up")
        yield host
    finally:
        subprocess.run(["ip", "link", "del", near], capture_output=True, timeout=30)
        subprocess.run(["ip", "netns", "del", namespace], capture_output=True, timeout=30)
