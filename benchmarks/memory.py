"""The dashboard server's memory: RSS of `python -m app`'s worker over a run, and where it goes.

    python3 -m benchmarks.memory [--backend nvidia] [--clients 5] [--seconds 60] [--server-python P] [--out F]

Starts the real server (gunicorn, history on, 1 s interval), keeps ``--clients`` Socket.IO clients
connected, samples the worker's RSS every 2 s, and reports the largest mappings of /proc/<pid>/smaps
at the end (anonymous memory is mostly Python's heap; the rest is shared libraries such as NVML).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import psutil
import socketio

from benchmarks import targets
from benchmarks.measure import machine, report, running_server

ROOT = Path(__file__).resolve().parent.parent


def mappings(pid: int, top: int = 12) -> list[tuple[str, float]]:
    """(mapping, RSS in MiB) of the largest mappings, those of one file summed."""
    sizes: dict[str, float] = defaultdict(float)
    name = "?"
    with open(f"/proc/{pid}/smaps") as handle:
        for line in handle:
            head = line.split()
            if len(head) >= 5 and "-" in head[0] and not head[0].endswith(":"):
                name = head[5] if len(head) > 5 else "[anonymous]"
            elif head and head[0] == "Rss:":
                sizes[name] += int(head[1]) / 1024
    return sorted(((k, round(v, 1)) for k, v in sizes.items()), key=lambda kv: -kv[1])[:top]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="simulated")
    parser.add_argument("--clients", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--server-python", default=sys.executable,
                        help="the Python that runs the server, e.g. a venv with requirements.txt only")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    env = {"FANWHY_BACKEND": args.backend, "FANWHY_INTERVAL": "1", "FANWHY_THREADS": str(max(64, args.clients + 32))}
    clients = []
    with running_server(env, args.server_python) as (server, url):
        worker = psutil.Process(server.pid).children()[0]
        for _ in range(args.clients):
            client = socketio.Client(reconnection=False)
            client.on("gpu_status_update", lambda _snap: None)
            client.connect(url, transports=["websocket"], wait_timeout=10)
            clients.append(client)
        samples = []
        started = time.monotonic()
        while time.monotonic() - started < args.seconds:
            samples.append(round(worker.memory_info().rss / 2**20, 1))
            time.sleep(2)
        full = worker.memory_full_info()
        result = {"backend": args.backend, "clients": args.clients, "seconds": args.seconds,
                  "server_python": args.server_python,
                  "worker_rss_mib": {"first": samples[0], "last": samples[-1], "max": max(samples)},
                  "worker_rss_every_2s_mib": samples,
                  "worker_uss_mib": round(full.uss / 2**20, 1), "worker_pss_mib": round(full.pss / 2**20, 1),
                  "largest_mappings_mib": mappings(worker.pid), "date": time.strftime("%Y-%m-%d"),
                  "machine": machine()}
        for client in clients:
            client.disconnect()
    code = targets.judged(result, [(targets.RSS, result["worker_rss_mib"]["max"])])
    report(result, args.out)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
