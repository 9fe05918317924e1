"""On a real NVIDIA GPU: a load fires the utilization alert, and the webhook receiver's message names the load's
command (the why), as a person reading it away from the machine needs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.support.receivers import Receiver
from tests.support.servers import free_port, wait_healthy

pytestmark = pytest.mark.gpu
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def test_the_alert_a_load_fires_names_its_command() -> None:
    receiver = Receiver()
    port = free_port()
    env = {**os.environ, "FANWHY_BACKEND": "nvidia", "FANWHY_PORT": str(port), "FANWHY_DB": "none",
           "FANWHY_ALERT_HOLD": "3", "FANWHY_NOTIFY": f"webhook:{receiver.url()}", "FANWHY_NOTIFY_GROUP": "0.5"}
    server = subprocess.Popen([sys.executable, "-m", "app"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    load = None
    try:
        wait_healthy(f"http://127.0.0.1:{port}", timeout=60)
        load = subprocess.Popen([sys.executable, str(HERE / "cuda_load.py"), "--seconds", "40", "--hold-gb", "1"],
                                stdout=subprocess.PIPE, text=True)
        assert load.stdout is not None and load.stdout.readline().strip() == "ready"
        def fired() -> list[dict[str, object]]:  # the utilization alert (a new-process notice may come first)
            return [a for r in receiver.requests for a in json.loads(r["body"])["alerts"]
                    if a["rule"] == "gpu_utilization" and a["state"] == "firing"]

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not fired():
            time.sleep(0.2)
        body = {"alerts": fired()}
        assert body["alerts"], "no utilization alert notified within 30 s"
        print(json.dumps(body, indent=1))
        out = os.environ.get("FANWHY_GPU_OUT")
        if out:
            Path(out, "alert-why.json").write_text(json.dumps(body, indent=1) + "\n")
        message = str(body["alerts"][0]["message"])
        assert "Why: " in message and "cuda_load.py" in message, message
        alerts = requests.get(f"http://127.0.0.1:{port}/api/alerts", timeout=5).json()
        assert any("cuda_load.py" in a["message"] for a in alerts["active"])
    finally:
        if load is not None:
            load.kill()
            load.wait()
            if load.stdout is not None:
                load.stdout.close()
        server.terminate()
        server.wait(timeout=20)
        receiver.close()
