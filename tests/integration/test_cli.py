"""The command line as a newcomer meets it: every --help, --version, the terminal answer, a closed pipe, and bad
settings refused before anything is served, each with one line naming what the user typed."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from app.core.version import __version__
from tests.support.cpu import Share, spinner
from tests.support.servers import free_port, start_server, stop, wait_healthy

ROOT = Path(__file__).resolve().parent.parent.parent
SIMULATED = {"FANWHY_BACKEND": "simulated", "FANWHY_SIM_GPUS": "2", "FANWHY_SIM_PEAK": "0.3"}


def fanwhy(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "FANWHY_DB": "none", **env})


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["serve", "--help"], ["snapshot", "--help"],
                                  ["exporter", "--help"], ["snapshot", "-h"], ["run", "--help"]])
def test_every_help_works_and_says_only_what_applies_to_its_command(args: list[str]) -> None:
    result = fanwhy(*args)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.startswith("usage: fanwhy") and "exit codes:" in result.stdout
    assert "FANWHY_BACKEND" in result.stdout and "Traceback" not in result.stdout
    command = args[0] if args[0] in ("snapshot", "exporter", "run") else "serve"
    # a port: the dashboard's, or the exporter's own; a one-shot answer and run open none
    assert ("FANWHY_PORT" in result.stdout) == (command == "serve")
    assert ("EXPORTER_PORT" in result.stdout) == (command == "exporter")
    assert ("\n  3   the port" in result.stdout) == (command in ("serve", "exporter"))
    assert ("\n  5   no snapshot" in result.stdout) == (command == "snapshot")
    assert "the exporter:" not in result.stdout  # no other command's setting in a help line
    usage = result.stdout.split("\n\n")[0]
    for flag, value in re.findall(r"\[(--[a-z-]+) ([A-Z.=_]+)\]", usage):  # usage and options name a value alike
        assert f"{flag} {value}" in result.stdout.split("\n\n", 1)[1], (flag, value)


def test_version() -> None:
    result = fanwhy("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"fanwhy {__version__}"


def test_the_terminal_answer_is_a_sentence_and_tables() -> None:
    """The verdict as a plain sentence (no markup), then the tables. Which cause leads is the verdict's rule: the
    demo's GPUs lead on a machine whose CPU is under 50 %, as the answer's own CPU line reports it; on a machine
    this busy (a test run beside CPU burners) the CPU may lead, and the sentence then says so."""
    result = fanwhy("snapshot", **SIMULATED, COLUMNS="200")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    cpu = re.match(r"CPU (\d+) %", lines[-1])
    assert cpu is not None, lines[-1]
    leads = ("GPU ",) if int(cpu.group(1)) < 50 else ("GPU ", "The CPU is at ", "No GPU is busy: the CPU is at ")
    assert lines[1].startswith(leads) and "`" not in lines[1], lines[1]  # the verdict, no markup
    assert "because" in lines[1] or not lines[1].startswith("GPU "), lines[1]
    header = next(line for line in lines if line.startswith("GPU  NAME"))
    assert header.split() == ["GPU", "NAME", "UTIL", "MEMORY", "TEMP", "FAN", "POWER"]
    header = next(line for line in lines if line.split()[:2] == ["PID", "USER"])
    assert header.split() == ["PID", "USER", "GPU", "SM", "GPU", "MEM", "CPU", "PROGRAM", "COMMAND"]
    # the demo's jobs under the names a person knows them by, not `python` (a worker read in the instant between its
    # fork and its exec, on a loaded machine, has its parent's command line in a one-shot answer: at least one)
    assert any("python train.py" in line or "vllm serve" in line for line in lines)
    assert lines[-1].startswith("CPU ") and "memory" in lines[-1]
    assert result.stderr == ""  # the server's INFO log is not the terminal answer


def test_snapshot_json_and_watch_json_lines() -> None:
    import json

    one = fanwhy("snapshot", "--json", **SIMULATED)
    assert one.returncode == 0 and json.loads(one.stdout)["verdict"]["headline"]
    watch = subprocess.run(f"{sys.executable} -m app snapshot --json --watch 0.2 | head -3", shell=True, cwd=ROOT,
                           capture_output=True, text=True, timeout=60, env={**os.environ, **SIMULATED,
                                                                            "FANWHY_DB": "none"})
    rows = [json.loads(line) for line in watch.stdout.splitlines()]
    assert len(rows) == 3 and rows[0]["timestamp"] < rows[1]["timestamp"] < rows[2]["timestamp"]
    assert watch.stderr == ""  # the pipe closed by head: no BrokenPipeError traceback


def test_a_closed_pipe_ends_quietly_with_0() -> None:
    result = subprocess.run(f"{sys.executable} -m app snapshot --watch 0.2 | head -1; echo \"rc=${{PIPESTATUS[0]}}\"",
                            shell=True, executable="/bin/bash", cwd=ROOT, capture_output=True, text=True, timeout=60,
                            env={**os.environ, **SIMULATED, "FANWHY_DB": "none"})
    assert result.stdout.splitlines()[-1] == "rc=0" and result.stderr == ""


def test_one_tick_answers_with_cpu_rates_measured_over_the_start_up() -> None:
    """The one-shot answer collects once: the CPU % of the machine and of its busiest process are measured from the
    command's own start (the CPU times read first thing), and the answer's own start-up is not among the causes."""
    import json

    with spinner() as spin:
        share = Share(spin.pid)
        answer = subprocess.Popen([sys.executable, "-m", "app", "snapshot", "--json", "--backend", "basic"], cwd=ROOT,
                                  env={**os.environ, "FANWHY_DB": "none", "FANWHY_SYS_ROOT": tempfile.mkdtemp(),
                                       "FANWHY_NVIDIA_SMI": "/nonexistent", "FANWHY_TOP_CPU": "50"},
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = answer.communicate(timeout=60)
        truth = share.percent()  # over a span a little longer than the command's own
    assert answer.returncode == 0, err
    view = json.loads(out)
    assert view["timing"]["tick"] == 1  # no second collection to wait for
    row = next(p for p in view["processes"] if p["pid"] == spin.pid)
    # The command's window is a part of the span `truth` covers, and beside other load a spinner's share moves from
    # one part of a second to the next: the rate must be there, and of the spinner's order, not equal.
    assert row["cpu_percent"] is not None and truth / 3 - 5 < row["cpu_percent"] < 3 * truth + 5, (row, truth)
    assert view["host"]["cpu_percent"] is not None and view["host"]["cpu_percent"] > 0
    assert answer.pid not in {p["pid"] for p in view["processes"]}  # its own start-up is not a cause


def test_no_gpu_says_so_in_a_sentence() -> None:
    result = fanwhy("snapshot", "--backend", "basic", FANWHY_SYS_ROOT=tempfile.mkdtemp(),
                    FANWHY_NVIDIA_SMI="/nonexistent")
    assert result.returncode == 0, result.stderr
    assert "No GPU found: no AMD or Intel card" in result.stdout and "Error" not in result.stdout


@pytest.mark.parametrize(("args", "env", "code", "words"), [
    (["--port", "70000"], {}, 2, "--port must be between 1 and 65535, got 70000"),
    ([], {"FANWHY_PORT": "70000"}, 2, "FANWHY_PORT must be between 1 and 65535"),
    (["exporter", "--port", "0"], {}, 2, "--port must be between 1 and 65535"),
    ([], {"FANWHY_PORT": "eighty"}, 2, "FANWHY_PORT must be a whole number, got 'eighty'"),
    (["--alert", "pump.threshold=1"], {}, 2, "FANWHY_ALERTS: bad alert setting 'pump.threshold=1'"),
    ([], {"FANWHY_NOTIFY": "pigeon:coop"}, 2, "FANWHY_NOTIFY: target 1 must be KIND:URL"),
    ([], {"FANWHY_BACKEND": "nvdia"}, 2, "FANWHY_BACKEND must be one of auto, nvidia, amd, basic, simulated"),
    (["--backend", "amd"], {}, 4, "--backend amd cannot start here"),
    (["snapshot", "--backend", "amd"], {}, 4, "amdsmi"),
    (["--host", "0.0.0.0"], {"FANWHY_TOKEN": "short"}, 2, "FANWHY_TOKEN needs at least 16 characters"),
    (["--host", "192.0.2.1"], {"FANWHY_TOKEN": "5e8c1f0a7b3d92e4c6a1"}, 3,
     "--host 192.0.2.1 is not an address of this machine"),
    ([], {"FANWHY_DB": "/proc/no/such/history.db"}, 2, "cannot be created"),
])
def test_bad_settings_are_refused_before_serving(args: list[str], env: dict[str, str], code: int, words: str) -> None:
    result = fanwhy(*args, **{"FANWHY_PORT": str(free_port()), **env, "FANWHY_DB": env.get("FANWHY_DB", "none")})
    assert result.returncode == code, result.stderr
    assert words in result.stderr and "Traceback" not in result.stderr
    assert "serving" not in result.stdout + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1  # one line


def test_a_folder_as_history_is_refused_and_left_alone(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me")
    result = fanwhy(FANWHY_DB=str(tmp_path), FANWHY_PORT=str(free_port()))
    assert result.returncode == 2 and "is a folder" in result.stderr
    assert sorted(p.name for p in tmp_path.parent.iterdir() if p.name.startswith(tmp_path.name)) == [tmp_path.name]
    assert (tmp_path / "mine.txt").read_text() == "keep me"


def test_another_programs_file_as_history_is_refused_and_left_alone(tmp_path: Path) -> None:
    other = tmp_path / "notes.db"
    other.write_text("my notes")
    result = fanwhy(FANWHY_DB=str(other), FANWHY_PORT=str(free_port()))
    assert result.returncode == 2 and "not a FanWhy history" in result.stderr
    assert other.read_text() == "my notes" and sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]


def test_a_port_in_use_names_the_flag_used() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        by_flag = fanwhy("--port", str(port))
        by_env = fanwhy(FANWHY_PORT=str(port))
    assert by_flag.returncode == 3 and f"port {port} on 127.0.0.1 is in use" in by_flag.stderr
    assert "--port" in by_flag.stderr and "FANWHY_PORT" not in by_flag.stderr
    assert by_env.returncode == 3 and "FANWHY_PORT" in by_env.stderr


def test_a_public_bind_prints_a_url_a_browser_can_open() -> None:
    port = free_port()
    proc = start_server(port, FANWHY_HOST="0.0.0.0", FANWHY_TOKEN="c41d9e2b7a06f35d8e1b4c97")
    try:
        wait_healthy(f"http://127.0.0.1:{port}", headers={"Authorization": "Bearer c41d9e2b7a06f35d8e1b4c97"})
    finally:
        output = stop(proc)
    from app.serving import in_container

    # the machine's name; in a container (this test may run in one) the host's side of the published port
    where = "localhost" if in_container() else socket.gethostname()
    line = output.split("FanWhy is serving")[1].splitlines()[0]
    assert f"FanWhy is serving http://{where}:{port}/" in output
    assert "0.0.0.0" not in line
    if not in_container():  # every address of this machine is listed, loopback's first
        import psutil

        ipv4 = [a.address for addresses in psutil.net_if_addrs().values() for a in addresses
                if a.family == socket.AF_INET]
        assert ipv4 and all(f"http://{address}:{port}/" in line for address in ipv4), (ipv4, line)
        assert line.index(f"http://127.0.0.1:{port}/") < min(line.index(f"http://{a}:{port}/") for a in ipv4)


@pytest.mark.parametrize("server", ["gevent", "threads"])
def test_a_server_starts_and_stops_without_a_warning(server: str) -> None:
    """A start prints the URL and its log, never a Python warning (gevent's "Monkey-patching ssl after ssl has
    already been imported" came from the master importing Socket.IO, whose clients hold ssl's classes)."""
    import requests

    port = free_port()
    proc = start_server(port, FANWHY_BACKEND="basic", FANWHY_SERVER=server)
    try:
        wait_healthy(f"http://127.0.0.1:{port}")
        assert requests.get(f"http://127.0.0.1:{port}/", timeout=30).status_code == 200
    finally:
        output = stop(proc)
    assert "FanWhy is serving" in output
    assert not re.search(r"\w*Warning\b", output), output


def test_the_addresses_a_wildcard_bind_lists() -> None:
    from types import SimpleNamespace

    from app.collect.settings import Settings
    from app.serving import addresses_urls

    interfaces = {"lo": [SimpleNamespace(address="127.0.0.1"), SimpleNamespace(address="::1")],
                  "eth0": [SimpleNamespace(address="192.0.2.10"), SimpleNamespace(address="fe80::1%eth0"),
                           SimpleNamespace(address="2001:db8::5"), SimpleNamespace(address="00:11:22:33:44:55")]}
    assert addresses_urls(Settings(host="0.0.0.0"), interfaces) == ["http://127.0.0.1:8090/", "http://192.0.2.10:8090/"]
    assert addresses_urls(Settings(host="::", port=1), interfaces) == [
        "http://127.0.0.1:1/", "http://[::1]:1/", "http://192.0.2.10:1/", "http://[2001:db8::5]:1/"]
    assert addresses_urls(Settings(host="192.0.2.10"), interfaces) == []


def test_the_demo_never_writes_the_real_history(tmp_path: Path) -> None:
    port = free_port()
    proc = start_server(port, FANWHY_DB="", XDG_DATA_HOME=str(tmp_path))  # the default history path, in tmp_path
    try:
        health = wait_healthy(f"http://127.0.0.1:{port}")
    finally:
        stop(proc)
    assert health["backend"] == "simulated"
    assert not (tmp_path / "fanwhy" / "history.db").exists()
    assert (tmp_path / "fanwhy" / "demo-history.db").exists()


def test_demo_workers_end_when_every_server_process_is_killed_9() -> None:
    import time

    import psutil

    port = free_port()
    proc = start_server(port, FANWHY_SIM_GPUS="2")
    try:
        wait_healthy(f"http://127.0.0.1:{port}")
        tree = psutil.Process(proc.pid).children(recursive=True)
        workers = [p for p in tree if "--job" in p.cmdline()]  # the demo's workers, under their jobs' names
        servers = [psutil.Process(proc.pid), *(p for p in tree if p not in workers)]
        assert len(workers) == 2 and len(servers) >= 2  # gunicorn's master and its worker
        for server in servers:
            server.kill()  # SIGKILL: no handler runs, nothing is cleaned up by the server
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(w.is_running() and w.status() != psutil.STATUS_ZOMBIE
                                                  for w in workers):
            time.sleep(0.1)
        assert not [w.pid for w in workers if w.is_running() and w.status() != psutil.STATUS_ZOMBIE]
    finally:
        stop(proc)


def in_a_child(code: str, backend: str = "basic") -> subprocess.CompletedProcess[str]:
    """``code`` run in a fresh interpreter, on a machine with nothing to find (an empty /sys, no nvidia-smi, no
    Docker; ``backend`` as FANWHY_BACKEND), ended with exit code 0."""
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60,
                            env={**os.environ, "FANWHY_DB": "none", "FANWHY_BACKEND": backend,
                                 "FANWHY_SYS_ROOT": tempfile.mkdtemp(), "FANWHY_NVIDIA_SMI": "/nonexistent",
                                 "FANWHY_DOCKER_SOCKET": "/nonexistent/docker.sock"})
    assert result.returncode == 0, result.stderr
    return result


def one_shot_in_a_child(code: str) -> list[str]:
    """The words ``code`` prints after a one-shot answer in a fresh interpreter (the basic backend, ``in_a_child``)."""
    return in_a_child(code).stdout.split()


def test_a_one_shot_answer_loads_no_web_framework_tls_http_client_or_sqlite() -> None:
    """Its speed rests on what it does not import: Flask, the Socket.IO and Engine.IO servers, gevent, TLS,
    urllib/http.client (the Docker and Kubernetes clients and the notifier load them when they first talk, not at
    import), PyYAML (only a fan daemon's configuration needs it), the demo's simulated backend, ``fanwhy top``'s
    screen, psutil (~45 ms on an H100 host: the collector reads /proc itself; psutil only on a kernel older than
    3.14, for the memory it cannot read there), and the fan sources the machine does not have (liquidctl, a
    ThinkPad's embedded controller)."""
    code = ("import sys, io, contextlib; import app.cli.main as m\n"
            "with contextlib.redirect_stdout(io.StringIO()): m.main(['snapshot', '--json'])\n"
            "print(' '.join(sorted(name for name in ('flask', 'socketio', 'engineio', 'gevent', 'ssl', 'http.client',"
            " 'urllib.request', 'prometheus_client', 'sqlite3', 'yaml', 'app.vendors.simulated',"
            " 'app.vendors.simulated_machine', 'curses', 'app.cli.top', 'app.cli.topstate', 'app.cli.topview',"
            " 'psutil', 'app.collect.liquidctl', 'app.collect.thinkpad') if name in sys.modules)))")
    assert one_shot_in_a_child(code) == []


def test_a_terminal_answer_needs_no_serving_package_and_serve_names_the_one_it_lacks() -> None:
    """gevent (and redis, for a message queue) are the server's: a one-shot answer on a machine without them answers
    (it refused before, naming FANWHY_SERVER); ``fanwhy serve`` refuses before binding, naming the package."""
    hide = "import sys; sys.modules['gevent'] = None  # importlib.util.find_spec('gevent') now says: not installed\n"
    code = (hide + "import io, contextlib; import app.cli.main as m\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out: code = m.main(['snapshot'])\n"
            "print(code, 'GPU' in out.getvalue() or 'no GPU' in out.getvalue().lower())")
    assert one_shot_in_a_child(code) == ["0", "True"]
    served = subprocess.run([sys.executable, "-c", hide + "import app.cli.main as m; sys.exit(m.main(['serve']))"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60,
                            env={**os.environ, "FANWHY_DB": "none", "FANWHY_BACKEND": "basic"})
    assert served.returncode == 2
    assert "FANWHY_SERVER=gevent needs the gevent package" in served.stderr


def test_a_one_shot_answer_reads_its_cpu_baseline_before_nvml_opens_beside_it() -> None:
    """The scan of /proc is system calls: beside a thread running Python it waits for the GIL after each (2 ms
    alone, 16-34 ms beside pynvml's import on an H200 host). It comes first, alone; NVML's opening after it. Fails
    when the early opening starts before the baseline (as it did in app.__main__), or when the settings' check
    loads the masking rules (19 regular expressions) before it with no FANWHY_MASK_PATTERNS to check."""
    code = ("import io, sys, contextlib, app.attribution.procstat as p, app.vendors.nvml_early as early\n"
            "inner, seen = p.cpu_baseline, []\n"
            "def first(*args, **kwargs):\n"
            "    seen.extend([early._thread is None, 'app.core.redact' not in sys.modules])\n"
            "    return inner(*args, **kwargs)\n"
            "p.cpu_baseline = first\n"
            "import app.cli.main as m\n"
            "with contextlib.redirect_stdout(io.StringIO()): code = m.main(['snapshot'])\n"
            "print(code, *seen, early._thread is not None)")
    # answered; at the baseline no early thread and no masking rules; an early thread after it
    assert in_a_child(code, backend="auto").stdout.split() == ["0", "True", "True", "True"]


def test_a_one_shot_run_as_a_program_reads_its_cpu_baseline_before_anything_else_and_only_once() -> None:
    """``fanwhy snapshot`` (app.__main__.run) reads the CPU times first, before the command line, the settings and
    the collector are imported, so that its CPU window spans them (on an H200 host it had ended ~13 ms after the
    collector was ready); the collector then primes from that scan instead of reading another. Fails when the scan
    comes after the commands' imports, or when the start reads its own scan beside the early one."""
    code = ("import sys, app.attribution.procscan as scan\n"
            "inner = scan.scan\n"
            "def seen(*args, **kwargs):\n"
            "    loaded = sorted(n for n in sys.modules if n.startswith('app') or n in ('argparse', 'dataclasses'))\n"
            "    sys.stderr.write('scan ' + ' '.join(loaded) + '\\n'); sys.stderr.flush()\n"
            "    return inner(*args, **kwargs)\n"
            "scan.scan = seen\n"
            "sys.argv = ['fanwhy', 'snapshot']\n"
            "import app.__main__ as m\n"
            "m.run()\n")
    result = in_a_child(code)
    assert "CPU" in result.stdout  # the answer, with the machine's CPU line
    scans = [line.split()[1:] for line in result.stderr.splitlines() if line.startswith("scan")]
    assert scans == [["app", "app.__main__", "app.attribution", "app.attribution.procscan", "app.cli", "app.cli.early",
                      "app.core", "app.core.version"]], result.stderr


def test_a_one_shot_answer_starts_no_process_of_its_own() -> None:
    """A process started on the way to the answer is a fork and an exec on its critical path: naming a thread
    through ``ctypes.util.find_library("c")`` ran ``ldconfig -p`` in every start (the mutant this fails on). Seen by
    Python's audit hooks, which every way of starting a process raises."""
    code = ("import sys, io, contextlib\n"
            "started = []\n"
            "kinds = ('subprocess.Popen', 'os.posix_spawn', 'os.exec', 'os.fork', 'os.forkpty', 'os.system')\n"
            "sys.addaudithook(lambda event, args: started.append(event) if event in kinds else None)\n"
            "import app.cli.main as m\n"
            "with contextlib.redirect_stdout(io.StringIO()): m.main(['snapshot', '--json'])\n"
            "print(' '.join(started))")
    assert one_shot_in_a_child(code) == []


def test_a_one_shot_answer_compiles_no_comparison_of_its_own() -> None:
    """Compiling dataclasses' generated methods was the largest part of a one-shot's imports: every frozen class on
    its path is an ``@record`` (sharing one ``__eq__``, ``__hash__``, ``__repr__`` and frozen guards), and a mutable
    one compares by identity. Fails on a ``@dataclass(frozen=True)`` or a plain ``@dataclass`` state holder on the
    path, or on a record given guards of its own."""
    code = ("import sys, io, contextlib, dataclasses\n"
            "import app.cli.main as m\n"
            "from app.core import record\n"
            "with contextlib.redirect_stdout(io.StringIO()): m.main(['snapshot', '--json'])\n"
            "classes = [c for n, mod in list(sys.modules.items()) if n.startswith('app.')\n"
            "           for c in vars(mod).values() if isinstance(c, type) and c.__module__ == n\n"
            "           and dataclasses.is_dataclass(c)]\n"
            "print(len(classes))\n"
            "print(' '.join(c.__qualname__ for c in classes if c.__eq__ is not (record._eq if\n"
            "      c.__dataclass_params__.frozen else object.__eq__) or c.__dataclass_params__.frozen and\n"
            "      c.__setattr__ is not record._setattr))")
    count, *generated = one_shot_in_a_child(code)
    assert int(count) > 40  # the path's classes were found
    assert generated == []


def test_fanwhy_tops_screen_loads_no_http_client_or_tls_until_it_follows_a_server() -> None:
    """A local ``fanwhy top`` waits for its first frame on its own imports: urllib.request (with TLS and
    http.client, ~20 ms) is loaded only by ``--server``'s feed when it first asks."""
    code = ("import sys; import app.cli.top\n"
            "print(' '.join(n for n in ('urllib.request', 'http.client', 'ssl') if n in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == []
