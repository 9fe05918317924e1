"""Container names, images and GPU access from the Docker Engine API (or Podman's compatible socket).

Plain HTTP over the unix socket with a short timeout; the container list is cached for ``ttl_s`` and
each container's inspect result for as long as the container exists. A missing, slow or failing
daemon never stalls the collector for more than one timeout: it is retried after ``retry_s``.
"""

from __future__ import annotations

import errno
import functools
import json
import logging
import os
import time
from typing import TYPE_CHECKING, Callable

from ..core.jsonvalue import Json, member, members, text
from ..core.record import record

if TYPE_CHECKING:
    import http.client

log = logging.getLogger(__name__)


@record
class DockerContainer:
    id: str
    name: str | None
    image: str | None
    gpu_access: bool
    pod: str | None = None
    namespace: str | None = None


def _http_error() -> type[Exception]:
    import http.client

    return http.client.HTTPException


@functools.cache
def _unix_connection() -> Callable[[str, float], http.client.HTTPConnection]:
    """An HTTPConnection over a Unix socket. Made on first use: http.client (and the email parser it loads) is
    a fifth of the collector's import time, and `fanwhy snapshot` answers before it is needed (socket too)."""
    import http.client
    import socket

    class UnixConnection(http.client.HTTPConnection):
        def __init__(self, path: str, timeout: float):
            super().__init__("localhost", timeout=timeout)
            self._path = path

        def connect(self) -> None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            try:
                sock.connect(self._path)
            except OSError:
                sock.close()
                raise
            self.sock = sock

    return UnixConnection


def has_gpu_access(inspect: Json) -> bool:
    """Device requests for GPUs, the nvidia runtime, or NVIDIA_VISIBLE_DEVICES set to devices."""
    host = member(inspect, "HostConfig")
    for request in members(member(host, "DeviceRequests")):
        capabilities = [c for group in members(member(request, "Capabilities")) for c in members(group)]
        if member(request, "Driver") == "nvidia" or "gpu" in capabilities:
            return True
    if member(host, "Runtime") == "nvidia":
        return True
    for entry in members(member(member(inspect, "Config"), "Env")):
        key, _, value = (text(entry) or "").partition("=")
        if key == "NVIDIA_VISIBLE_DEVICES" and value not in ("", "void", "none"):
            return True
    paths = [text(member(d, "PathOnHost")) or "" for d in members(member(host, "Devices"))]
    return any("/dev/nvidia" in path or "/dev/dri" in path for path in paths)


class DockerClient:
    def __init__(self, socket_path: str = "/var/run/docker.sock", timeout_s: float = 0.5, ttl_s: float = 10.0,
                 retry_s: float = 30.0, clock: Callable[[], float] = time.monotonic):
        self.socket_path = socket_path
        self.timeout_s = timeout_s
        self.ttl_s = ttl_s
        self.retry_s = retry_s
        self._clock = clock
        self._containers: dict[str, DockerContainer] = {}
        self._inspected: dict[str, DockerContainer] = {}
        self._fresh_until = float("-inf")
        self._retry_at = float("-inf")
        self.error: str | None = None

    def _get(self, path: str) -> Json:
        if not os.path.exists(self.socket_path):  # what connect() would say, before http.client is imported
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT))
        connection = _unix_connection()(self.socket_path, self.timeout_s)
        try:
            connection.request("GET", path, headers={"Host": "docker"})
            response = connection.getresponse()
            body = response.read(8 * 1024 * 1024)
            if response.status != 200:
                raise OSError(f"{path}: HTTP {response.status}")
            answer: Json = json.loads(body)
            return answer
        finally:
            connection.close()

    def containers(self) -> dict[str, DockerContainer]:
        """Running containers by full id (refreshed at most every ``ttl_s``)."""
        now = self._clock()
        if now < self._fresh_until or now < self._retry_at:
            return self._containers
        try:
            listing = self._get("/containers/json")
            found = {}
            for item in members(listing):
                cid = text(member(item, "Id")) or ""
                if cid not in self._inspected:
                    self._inspected[cid] = self._inspect(cid, item)
                found[cid] = self._inspected[cid]
        except (OSError, ValueError) as error:  # a clause of its own: a missing socket never loads http.client
            return self._unavailable(error, now)
        except _http_error() as error:  # looked up only once http.client raised one of its own
            return self._unavailable(error, now)
        if self.error is not None:
            log.info("docker API available again at %s", self.socket_path)
        self.error = None
        self._inspected = {cid: c for cid, c in self._inspected.items() if cid in found}
        self._containers = found
        self._fresh_until = now + self.ttl_s
        return found

    def _unavailable(self, error: Exception, now: float) -> dict[str, DockerContainer]:
        failed = f"{self.socket_path}: {type(error).__name__}: {error}"
        if failed != self.error:  # logged once, and again only when the reason changes
            log.info("docker API unavailable (%s); container names fall back to short ids", failed)
        self.error = failed
        self._retry_at = now + self.retry_s
        return self._containers

    def _inspect(self, cid: str, item: Json) -> DockerContainer:
        names = [name for name in map(text, members(member(item, "Names"))) if name]
        labels = member(item, "Labels")
        inspect = self._get(f"/containers/{cid}/json")
        return DockerContainer(
            id=cid,
            name=names[0].lstrip("/") if names else None,
            image=text(member(item, "Image")),
            gpu_access=has_gpu_access(inspect),
            pod=text(member(labels, "io.kubernetes.pod.name")),
            namespace=text(member(labels, "io.kubernetes.pod.namespace")),
        )
