"""The whole server's own cost with busy GPUs: every process of `python -m app`, one live client, history on.

    python3 -m benchmarks.server_cpu [--backend nvidia] [--seconds 60] [--profile 30] [--out F]

Starts one CUDA load per real GPU (``--backend nvidia``), the real server (gunicorn, 1 s interval, history in a
temporary file), one Socket.IO client on the WebSocket, lets it settle, then measures over ``--seconds``:
  - the CPU of the server's whole process tree (gunicorn's master, its worker, any child they ran and reaped),
    as % of one core;
  - the worker's RSS (and the master's), and the CPU of each of the worker's threads by name (FanWhy names its
    threads for the OS: fanwhy-collector, fanwhy-history, ...; the main thread runs the gevent hub: the web
    server, the broadcaster and Socket.IO);
  - with ``--profile S`` and py-spy installed, S seconds of py-spy samples of the worker, summed by function
    (where the time went).
"""

from __future__ import annotations

import argparse
import collections
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import psutil
import socketio

from benchmarks import targets
from benchmarks.measure import machine, report, running_server


def tree_cpu(root: psutil.Process) -> float:
    """CPU seconds of ``root`` and every live descendant, children they reaped included."""
    total = 0.0
    for proc in [root, *root.children(recursive=True)]:
        try:
            t = proc.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds of each thread of ``pid``, by its OS name (threads of one name summed)."""
    out: dict[str, float] = collections.defaultdict(float)
    tick = float(psutil.os.sysconf("SC_CLK_TCK"))
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[name] += (int(fields[11]) + int(fields[12])) / tick
    return out


def profile(pid: int, seconds: int, keep: Path | None = None) -> dict[str, object]:
    """py-spy's samples of ``pid`` for ``seconds``, summed by the innermost FanWhy or library function and by every
    function on the stack (inclusive); ``keep``: where to write py-spy's raw stacks too."""
    spy = shutil.which("py-spy")
    if spy is None:
        return {"skipped": "py-spy is not installed"}
    raw = Path(tempfile.mkdtemp()) / "stacks.txt"
    done = subprocess.run([spy, "record", "--pid", str(pid), "--duration", str(seconds), "--rate", "1000",
                           "--format", "raw", "--threads", "--nonblocking", "--output", str(raw)],
                          capture_output=True, text=True, timeout=seconds + 60)
    if done.returncode != 0 or not raw.exists():
        return {"failed": (done.stderr or done.stdout)[-400:]}
    by_leaf: collections.Counter[str] = collections.Counter()
    by_nvml: collections.Counter[str] = collections.Counter()
    by_thread: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()  # samples with the function anywhere on the stack
    total = 0
    text = raw.read_text()
    if keep is not None:
        keep.write_text(text)
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        n = int(count)
        total += n
        by_thread[frames[0]] += n
        for name in {f.split(" (")[0] for f in frames[1:]}:
            inclusive[name] += n
        app = [f for f in frames if "/app/" in f or "app/" in f.split(" ")[-1]]
        by_leaf[(app[-1] if app else frames[-1])[:160]] += n
        nvml = [f for f in frames if f.startswith("nvml")]
        if nvml:
            by_nvml[nvml[-1].split(" ")[0]] += n
    return {"samples": total, "rate_hz": 1000, "by_thread": by_thread.most_common(12),
            "by_innermost_fanwhy_frame": by_leaf.most_common(25), "by_nvml_function": by_nvml.most_common(15),
            "inclusive": inclusive.most_common(60)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="nvidia")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--settle", type=float, default=15)
    parser.add_argument("--profile", type=int, default=0)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    loads: list[subprocess.Popen] = []
    card = None
    if args.backend == "nvidia":
        import pynvml

        from benchmarks.peers import start_loads

        pynvml.nvmlInit()
        real = pynvml.nvmlDeviceGetCount()
        card = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(0))
        loads = start_loads(real, 600, real)
    try:
        env = {"FANWHY_BACKEND": args.backend, "FANWHY_INTERVAL": "1"}
        with running_server(env) as (server, url):
            master = psutil.Process(server.pid)
            worker = master.children()[0]
            updates = []
            client = socketio.Client(reconnection=False)
            timings: list[dict[str, float]] = []  # each pushed tick's collection time per stage (wall ms)

            def on_update(snap: dict) -> None:
                updates.append(time.monotonic())
                timings.append(snap.get("timing") or {})

            client.on("gpu_status_update", on_update)
            client.connect(url, transports=["websocket"], wait_timeout=10)
            time.sleep(args.settle)
            before, threads_before, t0 = tree_cpu(master), thread_cpu(worker.pid), time.monotonic()
            master_before = sum(master.cpu_times()[:2])
            rss = []
            while time.monotonic() - t0 < args.seconds:
                rss.append(worker.memory_info().rss / 2**20)
                time.sleep(2)
            elapsed = time.monotonic() - t0
            used = tree_cpu(master) - before
            threads_after = thread_cpu(worker.pid)
            master_used = sum(master.cpu_times()[:2]) - master_before
            received = sum(1 for u in updates if u >= t0)
            spent = {name: round(100 * (threads_after[name] - threads_before.get(name, 0.0)) / elapsed, 3)
                     for name in threads_after}
            result = {
                "backend": args.backend, "card": card, "cuda_processes": len(loads), "seconds": round(elapsed, 1),
                "server_cpu_percent_of_one_core": round(100 * used / elapsed, 3),
                "master_cpu_percent": round(100 * master_used / elapsed, 3),
                "worker_threads_cpu_percent": dict(sorted(spent.items(), key=lambda kv: -kv[1])),
                "worker_rss_mib": {"first": round(rss[0], 1), "max": round(max(rss), 1), "last": round(rss[-1], 1)},
                "master_rss_mib": round(master.memory_info().rss / 2**20, 1),
                "updates_received": received,
                "tick_wall_ms_median": {k: statistics.median(t.get(k, 0.0) for t in timings[-received:])
                                        for k in ("total_ms", "gpus_ms", "processes_ms", "host_ms")},
                "date": time.strftime("%Y-%m-%d"), "machine": machine()}
            if args.profile:
                keep = Path(args.out).with_suffix(".stacks.txt") if args.out else None
                result["profile"] = profile(worker.pid, args.profile, keep)
            client.disconnect()
    finally:
        for proc in loads:
            proc.kill()
            proc.wait()
    code = targets.judged(result, [(targets.SERVER_CPU, result["server_cpu_percent_of_one_core"]),
                                   (targets.SERVER_RSS, result["worker_rss_mib"]["max"])], gpus=len(loads))
    report(result, args.out)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
