"""Alerts that reach you without an open tab: webhook, ntfy, Slack and Discord targets (FANWHY_NOTIFY).

One thread per target reads a bounded queue; the collector never waits on it (``submit`` drops the oldest event
when a queue is full, and counts it). A burst of alert events within ``group_s`` goes out as one message; a target
gets at most ``per_minute`` messages; a failed delivery is retried with backoff (1, 2, 4 s), then given up and
counted. What each target did is in ``status()`` (for /api/health), named by its kind and position, never by its
URL: a webhook URL is a secret (Slack's and Discord's carry their token in the path), so it is never logged,
served or put in a payload. Messages are masked like command lines before they leave.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Protocol, Sequence, TypedDict
from urllib.parse import urlsplit

from ..core.cells import shown
from ..core.redact import Redactor
from ..core.snapshot import Alert
from ..core.threads import spawn

log = logging.getLogger(__name__)


class Published(Protocol):
    """A frame the collector published: its sequence number is all the notifier reads."""

    @property
    def seq(self) -> int: ...


class AlertSource(Protocol):
    """What the notifier follows (the collector, assembled above this package): its frames as they are published,
    and the alert events of a span of them."""

    def wait_frame(self, after_seq: int, timeout: float) -> Published | None: ...

    def alert_events(self, after_seq: int, upto_seq: int) -> list[Alert]: ...

KINDS = ("webhook", "ntfy", "slack", "discord")
QUEUE_SIZE = 200
RETRIES = (1.0, 2.0, 4.0)  # seconds to wait before each retry
TIMEOUT_S = 5.0


def parse_targets(text: str) -> list[tuple[str, str]]:
    """``slack:https://hooks.slack.com/...,ntfy:https://ntfy.sh/topic`` -> [(kind, url), ...]; ValueError naming
    the position (never the URL) of a target that is not ``KIND:http(s)://...``."""
    targets = []
    for position, item in enumerate(filter(None, (p.strip() for p in text.replace(" ", ",").split(","))), start=1):
        kind, sep, url = item.partition(":")
        parts = urlsplit(url)
        if not sep or kind not in KINDS or parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"target {position} must be KIND:URL with KIND one of {', '.join(KINDS)} and an "
                             f"http(s) URL")
        targets.append((kind, url))
    return targets


def render(kind: str, host: str, alerts: Sequence[Alert]) -> tuple[bytes, dict[str, str]]:
    """The request body and headers of one message about ``alerts`` for a target of ``kind``."""
    alerts = [replace(a, message=shown(a.message)) for a in alerts]  # a fan's or a process's name is untrusted
    host = shown(host)
    lines = [f"{'✔' if a.state == 'resolved' else '▲'} {a.message}" for a in alerts]
    firing = [a for a in alerts if a.state != "resolved"]
    title = (f"FanWhy on {host}: {len(firing)} alert{'s' if len(firing) != 1 else ''}" if firing
             else f"FanWhy on {host}: resolved")
    text = "\n".join(lines)
    if kind == "ntfy":
        worst = max((a.severity for a in firing), key=("info", "warning", "critical").index, default="info")
        priority = {"critical": "urgent", "warning": "high", "info": "default"}[worst]
        return text.encode(), {"Title": title, "Priority": priority, "Tags": "fan",
                               "Content-Type": "text/plain; charset=utf-8"}
    if kind == "slack":
        body: dict[str, object] = {"text": f"*{title}*\n{text}"}
    elif kind == "discord":
        body = {"content": f"**{title}**\n{text}"[:2000]}
    else:
        body = {"source": "fanwhy", "host": host, "title": title, "text": text,
                "alerts": [{"id": a.id, "rule": a.rule, "gpu_index": a.gpu_index, "severity": a.severity,
                            "state": a.state, "message": a.message, "value": a.value, "threshold": a.threshold,
                            "since": a.since, "resolved_at": a.resolved_at} for a in alerts]}
    return json.dumps(body).encode(), {"Content-Type": "application/json"}



class TargetStatus(TypedDict):
    """One notification target as /api/health shows it."""

    target: str
    kind: str
    delivered: int
    failed: int
    dropped: int
    retries: int
    queued: int
    last_error: str | None
    last_success: float | None

@dataclass
class Target:
    """One destination and what happened to it; ``name`` is safe to show (``slack #2``), ``url`` is not."""

    kind: str
    url: str
    name: str
    queue: queue.Queue[Alert] = field(default_factory=lambda: queue.Queue(maxsize=QUEUE_SIZE))
    delivered: int = 0
    failed: int = 0
    dropped: int = 0
    retries: int = 0
    last_error: str | None = None
    last_success: float | None = None
    next_send_at: float = 0.0

    def view(self) -> TargetStatus:
        return {"target": self.name, "kind": self.kind, "delivered": self.delivered, "failed": self.failed,
                "dropped": self.dropped, "retries": self.retries, "queued": self.queue.qsize(),
                "last_error": self.last_error, "last_success": self.last_success}


def _post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> None:
    import urllib.error
    import urllib.request  # here: urllib.request loads http.client, email and ssl

    request = urllib.request.Request(url, data=body, headers={"User-Agent": "fanwhy", **headers}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # http(s) only: parse_targets
            response.read(1024)
    except urllib.error.HTTPError as error:
        error.close()  # it holds the answer's socket open until the garbage collector finds it
        raise


class Notifier:
    def __init__(self, targets: Sequence[tuple[str, str]], host: str, group_s: float = 10.0, per_minute: float = 6.0,
                 redactor: Redactor | None = None, post: Callable[[str, bytes, dict[str, str], float], None] = _post,
                 retries: Sequence[float] = RETRIES, timeout_s: float = TIMEOUT_S):
        counts: dict[str, int] = {}
        self.targets = []
        for kind, url in targets:
            counts[kind] = counts.get(kind, 0) + 1
            self.targets.append(Target(kind, url, f"{kind} #{counts[kind]}"))
        self.host = host
        self.group_s = group_s
        self.min_gap_s = 60.0 / per_minute if per_minute > 0 else 0.0
        self.redactor = redactor or Redactor()
        self._post = post
        self._retries = tuple(retries)
        self._timeout_s = timeout_s
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for target in self.targets:
            self._threads.append(spawn(self._run, f"fanwhy-notify-{target.name}", target))

    def stop(self, join_s: float = 2.0) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=join_s)

    def submit(self, alerts: Sequence[Alert]) -> None:
        """Queue alert events for every target; never blocks (a full queue loses its oldest event, counted)."""
        for alert in alerts:
            if alert.rule == "new_process":
                continue  # a notice for the page, not a reason to wake someone
            masked = self.redactor.text(alert.message)
            for target in self.targets:
                while True:
                    try:
                        target.queue.put_nowait(alert if masked == alert.message else replace(alert, message=masked))
                        break
                    except queue.Full:
                        try:
                            target.queue.get_nowait()
                            target.dropped += 1
                        except queue.Empty:
                            pass

    def status(self) -> list[TargetStatus]:
        return [t.view() for t in self.targets]

    def follow(self, collector: AlertSource) -> None:
        """Feed the targets every alert event the collector publishes, from a thread of its own."""
        # from the start: the events of frames published before this thread ran are kept by the collector; kept
        # outside the loop's body, so that the body started again after a fault sends nothing twice
        seen = [0]

        def run() -> None:
            while not self._stop.is_set():
                frame = collector.wait_frame(seen[0], 1.0)
                if frame is None or frame.seq <= seen[0]:
                    continue
                events = collector.alert_events(seen[0], frame.seq)
                seen[0] = frame.seq
                self.submit(events)

        self._threads.append(spawn(run, "fanwhy-notify-follow"))

    def _run(self, target: Target) -> None:
        while not self._stop.is_set():
            try:
                first = target.queue.get(timeout=0.5)
            except queue.Empty:
                continue
            batch = [first]
            deadline = time.monotonic() + self.group_s  # a burst becomes one message
            while (left := deadline - time.monotonic()) > 0 and not self._stop.is_set():
                try:
                    batch.append(target.queue.get(timeout=min(left, 0.5)))
                except queue.Empty:
                    continue
            wait = target.next_send_at - time.monotonic()
            if wait > 0 and self._stop.wait(wait):
                return
            self._deliver(target, batch)
            target.next_send_at = time.monotonic() + self.min_gap_s

    def _deliver(self, target: Target, batch: list[Alert]) -> None:
        body, headers = render(target.kind, self.host, batch)
        for attempt in range(len(self._retries) + 1):
            try:
                self._post(target.url, body, headers, self._timeout_s)
            except (OSError, ValueError) as error:  # urllib's URLError and HTTPError are OSErrors
                target.last_error = _safe(error, target.url)
                if attempt < len(self._retries):
                    target.retries += 1
                    if self._stop.wait(self._retries[attempt]):
                        return
                    continue
                # logged before it is counted: whoever sees the count can find the line
                log.warning("notification to %s failed after %d tries: %s", target.name, attempt + 1,
                            target.last_error)
                target.failed += 1
                return
            target.delivered += 1
            target.last_success = time.time()
            target.last_error = None
            return


def _safe(error: Exception, url: str) -> str:
    """The error in words, without the URL (or any part of its path, where a token lives)."""
    from urllib.error import HTTPError

    if isinstance(error, HTTPError):
        text = f"HTTP {error.code} {error.reason}"
    else:
        text = f"{type(error).__name__}: {getattr(error, 'reason', None) or error}"
    parts = urlsplit(url)
    for secret in filter(None, (url, parts.path, parts.query)):
        text = text.replace(secret, "…")
    return text[:300]
