"""Load: N Socket.IO clients on a real `python -m app` (gunicorn) with 8 simulated GPUs at a 1 s interval.

    .venv/bin/python -m benchmarks.load [--clients 200] [--seconds 600] [--rest-seconds 10] [--server gevent|threads]

Reports: collections per tick over the run (must stay 1: one collector whatever the clients), the delivery
latency from a snapshot's timestamp to its arrival at each client (p50/p99; same machine, same clock),
the share of updates the worst client got, the server's CPU % and RSS, then REST /api/gpu/summary throughput
and p99 with 8 concurrent callers. All traffic stays on 127.0.0.1: every client shares that one address, so the
per-address limits (FANWHY_CLIENT_SESSIONS, FANWHY_CLIENT_CONNECTIONS) are lifted for the run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import requests
import socketio

from benchmarks.measure import running_server, save

ROOT = Path(__file__).resolve().parent.parent


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--rest-seconds", type=float, default=10)
    parser.add_argument("--client-processes", type=int, default=4,
                        help="processes the clients are spread over (one Python process cannot decode 200 streams)")
    parser.add_argument("--server", default="gevent", choices=("gevent", "threads"))
    parser.add_argument("--out", default="", help="also write the report to this file")
    parser.add_argument("--client", default="raw", choices=("raw", "socketio"),
                        help="raw: a lean Socket.IO-over-WebSocket client (wsproto, one selector loop a process) "
                             "that reads each update's timestamp without decoding the rest, so the clients do not "
                             "starve the server of the 2 cores; socketio: python-socketio clients (200 of them "
                             "took about 1.7 cores to decode their updates)")
    parser.add_argument("--client-of", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client_of:
        (run_raw_clients if args.client == "raw" else run_clients)(args.client_of, args.clients, args.seconds)
        return

    env = {"FANWHY_BACKEND": "simulated", "FANWHY_SIM_GPUS": "8", "FANWHY_SIM_PEAK": "0.02", "FANWHY_INTERVAL": "1",
           "FANWHY_THREADS": str(args.clients + 64), "FANWHY_RATE_LIMIT": "0", "FANWHY_SERVER": args.server,
           "FANWHY_CLIENT_SESSIONS": str(args.clients + 10), "FANWHY_CLIENT_CONNECTIONS": "0",
           "FANWHY_MAX_SESSIONS": str(args.clients + 100)}
    with running_server(env) as (server, url):
        worker = psutil.Process(server.pid).children()[0]
        shares = [args.clients // args.client_processes + (n < args.clients % args.client_processes)
                  for n in range(args.client_processes)]
        fleet = [subprocess.Popen([sys.executable, "-m", "benchmarks.load", "--client-of", url, "--clients",
                                   str(share), "--seconds", str(args.seconds), "--client", args.client], cwd=ROOT,
                                  stdout=subprocess.PIPE, text=True)
                 for share in shares if share]
        time.sleep(5)  # connected
        tick0 = requests.get(f"{url}/api/health", timeout=5).json()["tick"]
        worker.cpu_percent(None)
        started = time.monotonic()
        rss = []
        while time.monotonic() - started < args.seconds:
            time.sleep(5)
            rss.append(worker.memory_info().rss)
        elapsed = time.monotonic() - started
        cpu = worker.cpu_percent(None)
        tick1 = requests.get(f"{url}/api/health", timeout=5).json()["tick"]
        delivered: list[float] = []
        per_client: list[int] = []
        connected = 0
        for proc in fleet:
            out, _ = proc.communicate(timeout=120)
            report = json.loads(out.strip().splitlines()[-1])
            delivered.extend(report["latencies"])
            per_client.extend(report["per_client"])
            connected += report["connected"]

        def call(_: int) -> float:
            t0 = time.perf_counter()
            requests.get(f"{url}/api/gpu/summary", timeout=10).raise_for_status()
            return time.perf_counter() - t0

        rest: list[float] = []
        rest_started = time.monotonic()
        with ThreadPoolExecutor(8) as pool:
            while time.monotonic() - rest_started < args.rest_seconds:
                rest.extend(pool.map(call, range(64)))
        rest_elapsed = time.monotonic() - rest_started

    ticks = tick1 - tick0
    expected = ticks * args.seconds / elapsed  # the clients' window is the server's, give or take a second
    lines: list[str] = []
    say = lines.append  # the report goes to stdout and, with --out, to a file
    say(f"serving model: {args.server}; clients: {args.client}, in {len(shares)} processes")
    say(f"{args.clients} clients ({connected} still connected at the end) for {elapsed:.0f} s, 8 simulated GPUs, "
          f"1 s interval")
    say(f"collections: {ticks} in {elapsed:.0f} s ({ticks / elapsed:.3f} per second: one collector)")
    say(f"updates delivered: {len(delivered)} (expected about {args.clients * ticks}); latency from snapshot to "
          f"client: p50 {statistics.median(delivered) * 1000:.1f} ms, p99 {percentile(delivered, 0.99) * 1000:.1f} ms,"
          f" max {max(delivered) * 1000:.1f} ms")
    say(f"updates per client: worst {min(per_client)} of about {expected:.0f} "
          f"({100 * min(per_client) / expected:.1f} %), median {statistics.median(per_client):.0f}")
    say(f"server worker: CPU {cpu:.1f} % of one core (average), "
          f"RSS {min(rss) / 2**20:.0f}-{max(rss) / 2**20:.0f} MiB")
    say(f"REST /api/gpu/summary, 8 concurrent callers: {len(rest) / rest_elapsed:.0f} requests/s, "
          f"p50 {statistics.median(rest) * 1000:.1f} ms, p99 {percentile(rest, 0.99) * 1000:.1f} ms")
    say(f"machine: {platform.node()} {platform.machine()}, {psutil.cpu_count()} CPUs, "
          f"{psutil.virtual_memory().total / 2**30:.0f} GiB, Python {platform.python_version()}; "
          "clients and server share the machine")
    text = "\n".join(lines)
    sys.stdout.write(text + "\n")
    save(text, args.out)


def run_clients(url: str, count: int, seconds: float) -> None:
    """One client process: ``count`` clients; prints their latencies as one JSON line at the end."""
    latencies: list[float] = []
    counts = [0] * count
    lock = threading.Lock()

    def on_update(n: int, snapshot: dict) -> None:
        delay = time.time() - snapshot["timestamp"]
        with lock:
            latencies.append(delay)
            counts[n] += 1

    clients = []
    for n in range(count):
        client = socketio.Client(reconnection=False)
        client.on("gpu_status_update", lambda snapshot, n=n: on_update(n, snapshot))
        client.connect(url, transports=["websocket"], wait_timeout=10)
        clients.append(client)
    time.sleep(5)
    with lock:
        latencies.clear()
        counts[:] = [0] * count
    time.sleep(seconds)
    connected = sum(1 for c in clients if c.connected)
    with lock:
        result = {"latencies": latencies[:], "connected": connected, "per_client": counts[:]}
    print(json.dumps(result), flush=True)
    os._exit(0)  # no orderly disconnect of every client: the server notices the closed sockets


def run_raw_clients(url: str, count: int, seconds: float) -> None:
    """``count`` Socket.IO clients over raw WebSockets in one selector loop: the Engine.IO open, the Socket.IO
    connect ("40"), pongs for pings, and each ``gpu_status_update``'s timestamp (the view's first field) read
    from the frame's head. Prints the same JSON line as run_clients."""
    import re
    import selectors
    import socket
    from urllib.parse import urlsplit

    from wsproto import WSConnection
    from wsproto.connection import ConnectionType
    from wsproto.events import AcceptConnection, CloseConnection, Message, Ping, Request, TextMessage

    stamp = re.compile(r'^42\["gpu_status_update",\{"timestamp":([0-9.]+)')
    where = urlsplit(url)
    selector = selectors.DefaultSelector()
    latencies: list[float] = []
    counts = [0] * count
    texts: dict[int, list[str]] = {}
    measuring = False

    for n in range(count):
        sock = socket.create_connection((where.hostname, where.port))
        sock.setblocking(False)
        ws = WSConnection(ConnectionType.CLIENT)
        sock.sendall(ws.send(Request(host=where.netloc, target="/socket.io/?EIO=4&transport=websocket")))
        selector.register(sock, selectors.EVENT_READ, (n, ws))
        texts[n] = []

    def on_text(n: int, ws: WSConnection, sock: socket.socket, text: str) -> None:
        if text.startswith("0{"):
            sock.sendall(ws.send(TextMessage(data="40")))
        elif text == "2":
            sock.sendall(ws.send(TextMessage(data="3")))
        elif measuring and (found := stamp.match(text[:80])):
            latencies.append(time.time() - float(found.group(1)))
            counts[n] += 1

    def pump(until: float) -> None:
        while time.monotonic() < until:
            for key, _ in selector.select(timeout=0.5):
                sock: socket.socket = key.fileobj  # type: ignore[assignment]  # only sockets are registered
                n, ws = key.data
                try:
                    data = sock.recv(1 << 20)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                ws.receive_data(data or None)
                for event in ws.events():
                    if isinstance(event, Message):
                        texts[n].append(event.data)
                        if event.message_finished:
                            on_text(n, ws, sock, "".join(texts[n]))
                            texts[n] = []
                    elif isinstance(event, Ping):
                        sock.sendall(ws.send(event.response()))
                    elif isinstance(event, (AcceptConnection, Request)):
                        pass
                    elif isinstance(event, CloseConnection):
                        selector.unregister(sock)
                        sock.close()
                        break
                if not data:
                    with contextlib.suppress(KeyError, ValueError):
                        selector.unregister(sock)

    pump(time.monotonic() + 5)
    measuring = True
    pump(time.monotonic() + seconds)
    connected = len(selector.get_map())
    print(json.dumps({"latencies": latencies, "connected": connected, "per_client": counts}), flush=True)
    os._exit(0)


if __name__ == "__main__":
    main()
