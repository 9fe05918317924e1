"""A small client for scripts: record the GPUs while a block of code runs.

    from .client import record

    with record("resnet epoch 3", gpus=[0]) as rec:
        train()
    print(rec.result["gpu_stats"]["0"]["utilization_percent"]["mean"])

Standard library only, so a training script needs nothing more than this file. The token comes from
``token=`` or FANWHY_TOKEN.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .core.origin import UserInfo, checked, open_same_origin


class FanWhyError(RuntimeError):
    """FanWhy answered with an error (its message), or could not be reached."""


@dataclass
class Recording:
    id: str
    url: str
    result: dict[str, Any] = field(default_factory=dict)


def _call(url: str, method: str, body: dict[str, Any] | None, token: str | None, timeout: float) -> dict[str, Any]:
    try:
        checked(url)
    except UserInfo as error:
        raise FanWhyError(str(error)) from None
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json", "Accept": "application/json"})
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with open_same_origin(request, timeout) as response:
            answer: dict[str, Any] = json.load(response)
            return answer
    except urllib.error.HTTPError as error:
        with error:  # it holds the answer's socket open until the garbage collector finds it
            try:
                message = json.load(error).get("error", error.reason)
            except ValueError:
                message = error.reason
        raise FanWhyError(f"{method} {url}: {error.code} {message}") from None
    except OSError as error:
        raise FanWhyError(f"{method} {url}: {error}") from None


@contextmanager
def record(label: str = "", gpus: list[int] | None = None, interval: float | None = None,
           url: str = "http://127.0.0.1:8090", token: str | None = None, timeout: float = 10.0
           ) -> Iterator[Recording]:
    """Record GPU statistics for the duration of the block; ``result`` holds them afterwards
    (also when the block raises)."""
    token = token or os.environ.get("FANWHY_TOKEN")
    base = url.rstrip("/")
    body: dict[str, Any] = {"label": label, "gpus": gpus}
    if interval is not None:
        body["interval"] = interval
    started = _call(f"{base}/api/recordings", "POST", body, token, timeout)
    recording = Recording(id=started["id"], url=base)
    try:
        yield recording
    finally:
        recording.result = _call(f"{base}/api/recordings/{recording.id}/stop", "POST", None, token, timeout)
