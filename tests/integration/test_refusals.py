"""Refusals on record (app/web/refusals.py): each cause of refusal, against a real server, is one line in its log
with the peer's address and the reason (never the token), and a count by cause in /api/health; a flood of one cause
writes a line or two, not one a request."""

from __future__ import annotations

import logging
import time

import pytest
import requests

from app.web.refusals import CAUSES, Refusals
from tests.support.servers import free_port, start_server, stop, wait_healthy

TOKEN = "3e7a9c1f5b2d8064c9e1a7f3b5d20c84"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def test_every_cause_is_logged_with_the_peer_and_counted_and_a_flood_is_not_a_line_each() -> None:
    port = free_port()
    # 5 requests a second (10 in a burst): the health polls stay under it, 30 requests at once do not
    proc = start_server(port, FANWHY_TOKEN=TOKEN, FANWHY_CLIENT_SESSIONS="1", FANWHY_RATE_LIMIT="5")
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, headers=AUTH)
        assert requests.get(f"{url}/api/health", headers={**AUTH, "Host": "evil.example"}, timeout=30).status_code \
            == 200  # a bearer token passes the Host check (a Prometheus by any name): not a refusal
        for _ in range(500):  # a flood of one cause
            assert requests.get(f"{url}/api/gpu/summary", headers={"Host": "evil.example"}, timeout=30).status_code \
                == 400
        assert requests.post(f"{url}/login", data={"token": TOKEN}, timeout=30,
                             headers={"Origin": "http://evil.example"}).status_code == 403
        assert requests.get(f"{url}/api/gpu/summary", timeout=30).status_code == 401
        assert requests.get(f"{url}/api/gpu/summary", headers={"Authorization": "Bearer " + "0" * 32},
                            timeout=30).status_code == 401
        assert requests.post(f"{url}/api/recordings", data=b"x" * 70_000, headers=AUTH, timeout=30).status_code \
            == 413
        first = requests.get(f"{url}/socket.io/?EIO=4&transport=polling", headers=AUTH, timeout=30)
        assert first.status_code == 200
        assert requests.get(f"{url}/socket.io/?EIO=4&transport=polling", headers=AUTH, timeout=30).status_code \
            == 200  # one session per client; loopback makes room rather than refusing (network: test_gate.py)
        rates = [requests.get(f"{url}/api/gpu/summary", headers=AUTH, timeout=30).status_code for _ in range(30)]
        assert 429 in rates
        deadline = time.monotonic() + 60  # the bucket refills at 5 a second
        while (answer := requests.get(f"{url}/api/health", headers=AUTH, timeout=30)).status_code == 429:
            assert time.monotonic() < deadline
            time.sleep(0.5)
        health = answer.json()
    finally:
        log = stop(proc)
    counts = health["refusals"]
    assert counts["host"] == 500 and counts["origin"] == 1 and counts["token"] == 2 and counts["body"] == 1
    assert counts["session"] == 0 and counts["rate"] >= 1 and health["sessions"]["closed_room"] == 1, counts
    lines = [line for line in log.splitlines() if "fanwhy: refused (" in line]
    for cause, status in (("host", 400), ("origin", 403), ("token", 401), ("body", 413), ("rate", 429)):
        assert any(f"refused ({cause}, {status}) a request from 127.0.0.1: " in line for line in lines), (cause, log)
    host_lines = [line for line in lines if "refused (host," in line]
    assert 1 <= len(host_lines) <= 2 and "'evil.example' is not one of this FanWhy's names" in host_lines[0]
    token_lines = [line for line in lines if "refused (token," in line]
    assert len(token_lines) == 1  # the second, within 10 s of the first, is counted and not logged
    assert TOKEN not in log and "0" * 32 not in log


def test_the_lines_between_are_counted_and_said_in_the_next(caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    refusals = Refusals(every_s=10, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="fanwhy.refusals"):
        for _ in range(5):
            refusals.record("rate", "192.0.2.1", 429, "too many requests")
        refusals.record("host", "192.0.2.2", 400, "unknown Host")  # another cause: its own line
        now[0] += 10
        refusals.record("rate", "192.0.2.1", 429, "too many requests")
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "fanwhy: refused (rate, 429) a request from 192.0.2.1: too many requests",
        "fanwhy: refused (host, 400) a request from 192.0.2.2: unknown Host",
        "fanwhy: refused (rate, 429) a request from 192.0.2.1: too many requests (4 more rate refusals not logged "
        "in the last 10 s)",
    ]
    assert refusals.counts() == {**dict.fromkeys(CAUSES, 0), "rate": 6, "host": 1}
