"""Hostile connections against the real server (`python -m app`, default serving model) cannot starve an
authenticated client, and what they took is given back. The attacks are benchmarks/attack.py's: idle WebSockets,
slow headers, long waits, bodies promised and never sent (2,100 connections from 105 addresses), and all at once."""

from __future__ import annotations

from typing import Any

import psutil
import pytest

from benchmarks.attack import PHASES, TOKEN, run
from tests.support.servers import free_port, start_server, stop, wait_healthy


@pytest.fixture(scope="module")
def attacked() -> dict[str, Any]:
    port = free_port()
    proc = start_server(port, FANWHY_TOKEN=TOKEN, FANWHY_INTERVAL="1", FANWHY_SIM_GPUS="2",
                        FANWHY_SIM_PEAK="0.05")
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, headers={"Authorization": f"Bearer {TOKEN}"})
        worker = psutil.Process(proc.pid).children()[0]
        return run(url, worker, seconds=10, phases=list(PHASES))
    finally:
        output = stop(proc)
        assert "Traceback" not in output, output


@pytest.mark.parametrize("phase", list(PHASES))
def test_an_authenticated_client_gets_every_update_and_fast_answers(attacked: dict[str, Any], phase: str) -> None:
    seen = attacked[phase]
    assert seen["connections_opened"] >= {"websockets": 1000, "slow-headers": 200, "waiters": 100,
                                          "slow-bodies": 2100, "all-at-once": 3400}[phase], seen  # it really ran
    assert seen["updates"] >= seen["ticks"] - 1, seen  # every update (one may fall outside the window)
    assert seen["rest_failures"] == 0 and seen["rest_answers"] >= 50, seen
    assert seen["rest_p99_ms"] < 1000, seen


@pytest.mark.parametrize("phase", list(PHASES))
def test_threads_and_memory_return_after_each_attack(attacked: dict[str, Any], phase: str) -> None:
    start, after = attacked["start"], attacked[phase]["after"]
    seen = {"fresh": attacked["fresh"], "after_warm_up": attacked["after_warm_up"], "start": start,
            "peak": attacked[phase]["peak"], "after": after}
    assert after["threads"] <= start["threads"] * 1.1, seen
    assert after["rss_mib"] <= start["rss_mib"] * 1.1, seen
