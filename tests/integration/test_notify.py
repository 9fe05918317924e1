"""Notifications against a real HTTP receiver on loopback: the payload of each kind, grouping and the rate limit,
a receiver that is down then up, one that hangs, one that answers 500, a full queue, and secrets kept out."""

from __future__ import annotations

import json
import logging
import socket
import time
from typing import Any, Literal

import pytest

from app.core.snapshot import Alert
from app.verdict.notify import Notifier, parse_targets, render
from tests.support.receivers import Receiver
from tests.support.servers import wait_for


def alert(n: int = 0, state: Literal["firing", "resolved"] = "firing",
          message: str = "GPU 0 (H200) at 97 % utilization, above 50 % for 10 s", severity: str = "warning") -> Alert:
    return Alert(id=f"gpu_utilization:0:{n}", rule="gpu_utilization", gpu_index=0, severity=severity,
                 message=message, value=97.0, threshold=50.0, since=1000.0 + n, state=state)


def notifier(kind: str, url: str, **kw: Any) -> Notifier:
    n = Notifier([(kind, url)], host="gpu-box", **{"group_s": 0.2, "retries": (0.1, 0.2), **kw})
    n.start()
    return n


def test_a_generic_webhook_gets_json_with_every_alert_of_a_burst_in_one_message(receiver: Receiver) -> None:
    n = notifier("webhook", receiver.url(), group_s=0.5)
    try:
        n.submit([alert(1), alert(2, severity="critical")])
        time.sleep(0.1)
        n.submit([alert(3, state="resolved", message="GPU 0 utilization back to 3 %")])
        wait_for(lambda: n.status()[0]["delivered"] == 1)
        time.sleep(0.3)
        assert len(receiver.requests) == 1  # the burst: one message
        request = receiver.requests[0]
        body = json.loads(request["body"])
        assert request["headers"]["Content-Type"] == "application/json"
        assert body["source"] == "fanwhy" and body["host"] == "gpu-box"
        assert body["title"] == "FanWhy on gpu-box: 2 alerts"
        assert [a["id"] for a in body["alerts"]] == [f"gpu_utilization:0:{i}" for i in (1, 2, 3)]
        assert body["alerts"][2]["state"] == "resolved" and "✔ GPU 0 utilization back to 3 %" in body["text"]
    finally:
        n.stop()


@pytest.mark.parametrize("kind", ["ntfy", "slack", "discord"])
def test_ntfy_slack_and_discord_payloads(receiver: Receiver, kind: str) -> None:
    n = notifier(kind, receiver.url())
    try:
        n.submit([alert(1, severity="critical")])
        wait_for(lambda: n.status()[0]["delivered"] == 1)
    finally:
        n.stop()
    request = receiver.requests[0]
    if kind == "ntfy":
        assert request["body"].decode() == "▲ GPU 0 (H200) at 97 % utilization, above 50 % for 10 s"
        assert request["headers"]["Title"] == "FanWhy on gpu-box: 1 alert"
        assert request["headers"]["Priority"] == "urgent" and request["headers"]["Tags"] == "fan"
    else:
        body = json.loads(request["body"])
        key = "text" if kind == "slack" else "content"
        assert list(body) == [key] and "FanWhy on gpu-box: 1 alert" in body[key] and "97 % utilization" in body[key]


def test_the_rate_limit_spaces_messages_per_target(receiver: Receiver) -> None:
    n = notifier("webhook", receiver.url(), group_s=0.05, per_minute=60)  # at most one a second
    try:
        n.submit([alert(1)])
        wait_for(lambda: len(receiver.requests) == 1)
        n.submit([alert(2)])
        wait_for(lambda: len(receiver.requests) == 2)
    finally:
        n.stop()
    assert receiver.requests[1]["at"] - receiver.requests[0]["at"] >= 0.95


def test_a_receiver_down_then_up_gets_the_message_after_a_retry() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    n = notifier("webhook", f"http://127.0.0.1:{port}/hook", retries=(0.5, 1.0, 1.0))
    late: Receiver | None = None
    try:
        n.submit([alert(1)])
        wait_for(lambda: n.status()[0]["retries"] >= 1)
        assert "Connection refused" in (n.status()[0]["last_error"] or "")
        late = Receiver(port)
        wait_for(lambda: n.status()[0]["delivered"] == 1)
        assert n.status()[0]["failed"] == 0 and n.status()[0]["last_error"] is None
        assert len(late.requests) == 1
    finally:
        n.stop()
        if late is not None:
            late.close()


def test_a_hanging_receiver_times_out_and_never_blocks_the_collector() -> None:
    hanging = Receiver(mode="hang")
    n = notifier("webhook", hanging.url(), retries=(0.1,), timeout_s=0.3)
    try:
        n.submit([alert(-1)])
        wait_for(lambda: hanging.requests)  # the sender now waits on the hanging target: it takes nothing off the queue
        started = time.monotonic()
        for i in range(500):  # far more than the queue holds, while the target hangs
            n.submit([alert(i)])
        assert time.monotonic() - started < 0.5  # submit never waits for the network
        wait_for(lambda: n.status()[0]["failed"] >= 1)
        status = n.status()[0]
        assert "timed out" in (status["last_error"] or "") and status["dropped"] > 0 and status["queued"] <= 200
    finally:
        n.stop()
        hanging.close()


def test_a_receiver_answering_500_is_retried_then_counted_as_failed(caplog: Any) -> None:
    """The failure is logged before it is counted, so a reader who sees the count finds the line (once, in an idle
    `make test`, the count came first and the log a moment later; the mutant that counts first and logs 0.3 s later
    fails here)."""
    failing = Receiver(mode="500")
    n = notifier("slack", failing.url("/services/T000/B000/s3cr3t-t0ken"))
    try:
        with caplog.at_level(logging.WARNING, logger="app.verdict.notify"):
            n.submit([alert(1)])
            wait_for(lambda: n.status()[0]["failed"] == 1)
        assert len(failing.requests) == 3  # the first try and two retries
        status = n.status()[0]
        assert status["retries"] == 2 and status["target"] == "slack #1"
        assert status["last_error"] == "HTTP 500 Internal Server Error"
        logged = " ".join(r.getMessage() for r in caplog.records)
        assert "slack #1" in logged and "s3cr3t-t0ken" not in logged and "/services/" not in logged
        assert "s3cr3t-t0ken" not in json.dumps(n.status())
    finally:
        n.stop()
        failing.close()


def test_secrets_in_messages_are_masked_and_new_process_notices_stay_home(receiver: Receiver) -> None:
    n = notifier("webhook", receiver.url())
    try:
        leaky = alert(1, message="GPU 0 busy: fetch https://ann:hunter2@example.com/x?token=abc&page=2")
        notice = Alert(id="n", rule="new_process", gpu_index=0, severity="info", message="A new process", value=1.0,
                       threshold=None, since=1.0)
        n.submit([leaky, notice])
        wait_for(lambda: n.status()[0]["delivered"] == 1)
    finally:
        n.stop()
    text = receiver.requests[0]["body"].decode()
    assert "hunter2" not in text and "abc" not in text and "page=2" in text
    assert "A new process" not in text


def test_targets_are_checked_and_named_by_position_only() -> None:
    assert parse_targets("webhook:http://a/x, ntfy:https://ntfy.sh/t slack:https://hooks.slack.com/s") == [
        ("webhook", "http://a/x"), ("ntfy", "https://ntfy.sh/t"), ("slack", "https://hooks.slack.com/s")]
    for bad in ["teams:https://x/y", "webhook:ftp://x/y", "webhook:https://", "https://hooks.slack.com/s"]:
        with pytest.raises(ValueError) as raised:
            parse_targets(f"ntfy:https://ntfy.sh/ok,{bad}")
        assert "target 2 must be" in str(raised.value) and "hooks" not in str(raised.value)
    body, _ = render("webhook", "h", [alert(1, state="resolved")])
    assert json.loads(body)["title"] == "FanWhy on h: resolved"


def test_an_alert_from_the_collector_reaches_a_webhook_and_health_shows_the_target(
        make_app: Any, fake_nvml: Any, receiver: Receiver) -> None:
    """End to end: the fake NVML's busy GPU fires the utilization alert; the app's notifier sends it."""
    from tests.conftest import nvidia_selection

    app = make_app(nvidia_selection(fake_nvml), notify=f"webhook:{receiver.url()}", notify_group_s=0.1,
                   alert_hold_s=0.0)
    wait_for(lambda: receiver.requests, timeout=15)
    body = json.loads(receiver.requests[0]["body"])
    assert body["alerts"][0]["rule"] == "gpu_utilization" and body["alerts"][0]["gpu_index"] == 1
    # the receiver holds the request before it answers; the notifier counts a delivery once the answer is read
    wait_for(lambda: app.extensions["fanwhy"].notifier.targets[0].delivered >= 1, timeout=5)
    health = app.test_client().get("/api/health").get_json()
    assert health["notifications"][0]["target"] == "webhook #1" and health["notifications"][0]["delivered"] >= 1
    assert "s3cr3t" not in json.dumps(health)
