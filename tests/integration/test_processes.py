"""Process attribution on real processes: details, masking, and rows that survive races."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from app.attribution.processes import ProcessInspector
from app.attribution.procscan import CLOCK_TICKS
from app.attribution.procstat import CpuBaseline, cpu_baseline
from app.core.model import GpuProcessUsage, UsageKind
from tests.support.children import sleeping
from tests.support.cpu import Share, spinner, wait_cpu


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen]:
    with sleeping("--password=hunter2", "--token", "abc123") as proc:
        yield proc


def usage(pid: int, gpu: int = 0, memory: int | None = 2**30, kind: UsageKind = "compute") -> GpuProcessUsage:
    return GpuProcessUsage(pid=pid, gpu_index=gpu, memory_bytes=memory, sm_percent=50.0, kind=kind)


def write_process(root: Path, pid: int, cpu_ticks: int, name: str | None = None, start: int = 500,
                  flags: int = 0) -> None:
    """A process in a fake /proc under ``root``: its stat (CPU ticks, start ticks, flags), command line and owner."""
    name = name or f"p{pid}"
    folder = root / str(pid)
    folder.mkdir(exist_ok=True)
    (folder / "stat").write_text(f"{pid} ({name}) R 1 1 1 0 -1 {flags} 0 0 0 0 {cpu_ticks} 0 0 0 20 0 1 0 {start} "
                                 "1000 250 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n")
    (folder / "cmdline").write_bytes(f"{name}\0".encode())
    (folder / "status").write_text("Uid:\t0\t0\t0\t0\n")


def write_machine(root: Path, busy_ticks: int) -> None:
    """The fake /proc's /proc/stat: the machine's busy CPU ticks."""
    (root / "stat").write_text(f"cpu  {busy_ticks} 0 0 0 0 0 0 0 0 0\nbtime 1790000000\n")


def count_scans(monkeypatch: pytest.MonkeyPatch, now: list[float]) -> list[float]:
    """When (on ``now``) each scan of every process ran."""
    from app.attribution import processes
    from app.attribution.procscan import read_all_cpu

    scans: list[float] = []

    def counted(root: Path | str, *kernel_threads: set[int]) -> dict[int, tuple[int, float]]:
        scans.append(now[0])
        return read_all_cpu(root, *kernel_threads)

    monkeypatch.setattr(processes, "read_all_cpu", counted)
    return scans


def scanner(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[float], list[float], ProcessInspector]:
    """An inspector of the fake /proc under ``root`` on a clock of the test's own (``now``, from 100 s), the three
    busiest users read every 5 s, every process at least every 30 s or when 10 % of a core is unexplained; ``scans``
    says when each scan ran (``count_scans``)."""
    now = [100.0]
    scans = count_scans(monkeypatch, now)
    inspector = ProcessInspector(top_cpu=3, proc_root=root, resolve_foreign=True, top_cpu_every_s=5,
                                 scan_every_s=30, unexplained_percent=10, clock=lambda: now[0])
    return now, scans, inspector


def test_a_gpu_process_is_named_with_user_and_masked_command(sleeper: subprocess.Popen) -> None:
    inspector = ProcessInspector(top_cpu=0)
    (row,) = inspector.collect([usage(sleeper.pid)])
    assert row.pid == sleeper.pid and row.status == "ok" and row.visibility == "visible"
    assert row.name and row.name.startswith("python")
    assert row.user == psutil.Process().username()
    assert row.command is not None
    assert "hunter2" not in row.command and "abc123" not in row.command
    assert "--password=****" in row.command and "--token ****" in row.command
    assert row.start_time == pytest.approx(psutil.Process(sleeper.pid).create_time())
    assert row.rss_bytes and row.rss_bytes > 0
    assert row.cpu_percent is None  # first sighting: no interval to measure over yet
    (row,) = inspector.collect([usage(sleeper.pid)])
    assert row.cpu_percent is not None and row.cpu_percent >= 0


def test_a_primed_baseline_gives_cpu_percent_at_the_first_tick() -> None:
    """A one-shot answer reads every process's CPU time at its start (cpu_baseline): its one tick then has the CPU %
    since that moment of a GPU process and of the busiest CPU users; unprimed, a first tick has neither. The rates
    are held to the spinner's own account of its CPU over the same span, so a loaded machine changes nothing."""
    with spinner() as spin:
        baseline = cpu_baseline()
        share = Share(spin.pid)
        assert spin.pid in baseline.processes and os.getpid() not in baseline.processes
        wait_cpu(spin.pid, 0.2)
        (row,) = ProcessInspector(top_cpu=0).collect([usage(spin.pid)])
        assert row.cpu_percent is None  # no earlier reading
        assert ProcessInspector(top_cpu=5, top_cpu_every_s=0.0).collect([]) == ()
        primed = ProcessInspector(top_cpu=0)
        primed.prime(baseline)
        (row,) = primed.collect([usage(spin.pid)])
        truth = share.percent()
        assert row.cpu_percent is not None and truth > 0
        assert row.cpu_percent == pytest.approx(truth, rel=0.25, abs=5), (row.cpu_percent, truth)
        top = ProcessInspector(top_cpu=50)  # scans every 5 s, but a primed one scans at its next tick
        top.prime(baseline)
        busiest = {p.pid: p for p in top.collect([])}
        truth = share.percent()
        assert spin.pid in busiest and os.getpid() not in busiest
        assert busiest[spin.pid].cpu_percent == pytest.approx(truth, rel=0.25, abs=5)
        recycled = ProcessInspector(top_cpu=0)  # the same PID, another process: no rate across the two
        start_ticks, seconds = baseline.processes[spin.pid]
        recycled.prime(CpuBaseline(at=baseline.at, machine=None, processes={spin.pid: (start_ticks - 1, seconds)},
                                   own_ticks=0))
        (row,) = recycled.collect([usage(spin.pid)])
        assert row.cpu_percent is None


def test_one_process_on_two_gpus_is_one_row(sleeper: subprocess.Popen) -> None:
    (row,) = ProcessInspector(top_cpu=0).collect([usage(sleeper.pid, 1, 3 * 2**30), usage(sleeper.pid, 0, 2**30)])
    assert [g.gpu_index for g in row.gpus] == [0, 1]
    assert row.gpu_memory_bytes == 4 * 2**30


def test_a_pid_only_in_utilization_samples_is_host_pid_only(sleeper: subprocess.Popen) -> None:
    (row,) = ProcessInspector(top_cpu=0).collect([usage(sleeper.pid, memory=None, kind="utilization-only")])
    assert row.visibility == "host-pid-only" and row.gpu_memory_bytes is None and row.sm_percent == 50.0


def test_a_vanished_process_keeps_its_row() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    (row,) = ProcessInspector(top_cpu=0).collect([usage(proc.pid)])
    assert row.status == "vanished" and row.name is None and row.user is None and row.command is None
    assert row.gpu_memory_bytes == 2**30


def test_a_zombie_keeps_its_row() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 5
    while psutil.Process(proc.pid).status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        (row,) = ProcessInspector(top_cpu=0).collect([usage(proc.pid)])
        assert row.status == "zombie" and row.gpu_memory_bytes == 2**30
    finally:
        proc.wait()


def test_a_recycled_pid_is_read_afresh(sleeper: subprocess.Popen) -> None:
    inspector = ProcessInspector(top_cpu=0)
    inspector.collect([usage(sleeper.pid)])
    cached = inspector._known[sleeper.pid]
    # A recycled PID: what we remember started earlier than the process that has the PID now.
    cached.start_ticks -= 1000
    cached.command = "a different program"
    (row,) = inspector.collect([usage(sleeper.pid)])
    assert inspector._known[sleeper.pid] is not cached and row.command != "a different program"
    assert row.cpu_percent is None and row.start_time == pytest.approx(psutil.Process(sleeper.pid).create_time())


def test_top_cpu_users_are_listed_after_gpu_users() -> None:
    """The GPU users first, then the busiest CPU users, busiest first; a burner's rate is held to its own /proc
    account over the same span (beside other load it is neither alone nor sure to be the busiest)."""
    with spinner() as burner:
        inspector = ProcessInspector(top_cpu=50, min_cpu_percent=1.0, top_cpu_every_s=0, unexplained_percent=0)
        inspector.collect([])
        share = Share(burner.pid)
        wait_cpu(burner.pid, 0.2)
        rows = inspector.collect([usage(os.getpid())])
        truth = share.percent()
    assert rows[0].pid == os.getpid() and rows[0].gpus
    cpu_rows = [r for r in rows if not r.gpus]
    rates = [r.cpu_percent or 0.0 for r in cpu_rows]
    assert rates == sorted(rates, reverse=True)
    burning = next(r for r in cpu_rows if r.pid == burner.pid)
    assert burning.cpu_percent == pytest.approx(truth, rel=0.25, abs=5), (burning.cpu_percent, truth)
    assert ProcessInspector(top_cpu=1, top_cpu_every_s=0).collect([]) == ()  # no rate before a second scan


def test_a_foreign_pid_is_not_resolved_outside_the_host_pid_namespace(sleeper: subprocess.Popen) -> None:
    """Inside a container, a host PID from NVML may be the number of an unrelated local process: not read."""
    inspector = ProcessInspector(top_cpu=0, resolve_foreign=False)
    (row,) = inspector.collect([usage(sleeper.pid, memory=None, kind="utilization-only")])
    assert row.status == "outside-namespace" and row.name is None and row.command is None
    assert row.visibility == "host-pid-only" and row.sm_percent == 50.0
    (listed,) = inspector.collect([usage(sleeper.pid)])  # a PID NVML lists is in our namespace: resolved
    assert listed.status == "ok" and listed.name is not None


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root and unshare")
def test_a_child_pid_namespace_is_detected() -> None:
    code = "from app.attribution.processes import in_root_pid_namespace as f; print(f())"
    root = Path(__file__).resolve().parent.parent.parent
    inside = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", code], cwd=root,
                            capture_output=True, text=True, timeout=30)
    assert inside.stdout.strip() == "False", inside.stderr


def test_the_top_cpu_scan_reads_names_with_brackets_and_spaces(tmp_path: Path) -> None:
    """The scan parses /proc/<pid>/stat from the last ')' on: a name like 'x) (y z' cannot shift the fields."""
    from app.attribution.procscan import CLOCK_TICKS

    write_machine(tmp_path, 1)
    now = [100.0]
    inspector = ProcessInspector(top_cpu=2, min_cpu_percent=1.0, proc_root=tmp_path, resolve_foreign=True,
                                 top_cpu_every_s=0, unexplained_percent=0, clock=lambda: now[0])
    write_process(tmp_path, 11, 0, "x) (y z", 500)
    write_process(tmp_path, 12, 0, "quiet", 600)
    inspector.collect([])
    now[0] += 2.0
    write_process(tmp_path, 11, CLOCK_TICKS, "x) (y z", 500)  # one CPU second in two seconds: 50 %
    (row,) = inspector.collect([])
    assert (row.pid, row.name, row.cpu_percent) == (11, "x) (y z", 50.0)
    assert row.start_time == 1790000000 + 500 / CLOCK_TICKS  # that /proc's boot time, not ours
    # the PID was recycled: a new start time, no CPU % from the old one
    write_process(tmp_path, 11, 3 * CLOCK_TICKS, "x) (y z", 700)
    now[0] += 2.0
    assert [r.pid for r in inspector.collect([])] == []

def test_the_scan_waits_while_the_known_processes_explain_the_machines_cpu(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Every process's stat is read only when the machine's CPU time since the last scan is not explained by the
    processes already read (by more than ``unexplained_percent`` of a core), or ``scan_every_s`` has passed."""
    from app.attribution.procscan import CLOCK_TICKS

    now, scans, inspector = scanner(tmp_path, monkeypatch)
    write_process(tmp_path, 11, 0)
    write_machine(tmp_path, 0)
    inspector.collect([])  # the first scan
    for second in range(1, 41):  # p11 uses one core; the machine's busy time is its and nothing else
        now[0] += 1
        write_process(tmp_path, 11, second * CLOCK_TICKS)
        write_machine(tmp_path, second * CLOCK_TICKS)
        inspector.collect([])
    # the first; 5 s later (p11 busy and not yet known); then only every 30 s: p11 explains the machine's CPU
    assert scans == [100.0, 105.0, 135.0]
    for second in range(41, 47):  # something unknown uses a second core
        now[0] += 1
        write_process(tmp_path, 11, second * CLOCK_TICKS)
        write_machine(tmp_path, (40 + 2 * (second - 40)) * CLOCK_TICKS)
        inspector.collect([])
    # due from 140; the first tick whose reading before it shows the unknown core (141's) scans
    assert scans[3:] == [142.0]

def test_a_process_read_before_its_exec_gets_its_command_line_on_a_later_tick(sleeper: subprocess.Popen,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Between fork and exec /proc/<pid>/cmdline can read empty; what is read then must not stick."""
    from app.attribution import processes, procstat

    real = procstat.read_cmdline
    calls = {"n": 0}

    def empty_first(root: Any, pid: int) -> list[str]:
        calls["n"] += 1
        return [] if calls["n"] == 1 else real(root, pid)

    monkeypatch.setattr(processes, "read_cmdline", empty_first)
    inspector = ProcessInspector(top_cpu=0)
    (first,) = inspector.collect([usage(sleeper.pid)])
    assert first.command is None
    (second,) = inspector.collect([usage(sleeper.pid)])
    assert second.command is not None and "time.sleep(60)" in second.command
    (third,) = inspector.collect([usage(sleeper.pid)])
    assert third.command == second.command and calls["n"] == 2  # found: no more reads


def test_the_collector_hands_the_inspector_the_hosts_reading_of_the_machines_cpu() -> None:
    """/proc/stat is read once a tick, by the host sampler, just after the processes: the inspector weighs that
    reading against the processes it read, instead of reading the (large, on many cores) file again."""
    from app.collect.collector import Collector
    from app.collect.host import HostSampler
    from app.vendors.factory import Selection
    from app.vendors.nvidia import NvidiaBackend
    from tests.fakes.fake_nvml import FakeNvml, load_dump

    backend = NvidiaBackend(nvml=FakeNvml([load_dump("h200x2-load")[1]]), watch_xid=False)
    backend.open()
    host = HostSampler()
    collector = Collector(Selection(backend=backend, skipped={}), host=host)
    try:
        collector.collect()
        reading = collector.attributor.inspector.machine_reading
        assert reading is not None and reading() == host.busy_at_read and reading()[0] is not None
        collector.collect()
        assert reading() == host.busy_at_read  # the latest, each tick
    finally:
        collector.stop()


def test_background_work_spread_over_many_processes_does_not_make_every_tick_scan(tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch
                                                                                  ) -> None:
    """On a big host, daemons and the kernel keep some CPU busy that no scan can name (many processes, each below
    the busiest few): the next scan waits for ``unexplained_percent`` of a core above what the last one could not
    explain either. A new busy process is still found within ``top_cpu_every_s``."""
    from app.attribution.procscan import CLOCK_TICKS

    now, scans, inspector = scanner(tmp_path, monkeypatch)
    small = range(20, 30)  # ten daemons at 3 % of a core each: the busiest three are read, seven (21 %) are not
    ticks = {pid: 0 for pid in small}
    ticks[99] = 0  # idle until it takes a whole core
    step, machine = CLOCK_TICKS * 3 // 100, 0

    def tick(hog: int) -> list[Any]:
        nonlocal machine
        now[0] += 1
        for pid in small:
            ticks[pid] += step
        ticks[99] += hog
        machine += 10 * step + hog
        for pid, used in ticks.items():
            write_process(tmp_path, pid, used)
        write_machine(tmp_path, machine)
        return list(inspector.collect([]))

    for pid in ticks:
        write_process(tmp_path, pid, 0)
    write_machine(tmp_path, 0)
    inspector.collect([])
    for _ in range(40):
        tick(0)
    assert scans == [100.0, 105.0, 135.0], scans  # the second scan learns the background: then only every 30 s
    for _ in range(6):  # p99 uses a whole core
        busiest = tick(CLOCK_TICKS)
    assert scans[3:] == [142.0], scans  # the first tick whose reading shows the new core
    assert busiest[0].pid == 99 and busiest[0].cpu_percent == 100.0

def counted_stat_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The PIDs whose /proc/PID/stat is read from now on, in order."""
    from app.attribution import procscan

    reads: list[int] = []
    real = procscan.stat_bytes

    def counted(root: str, pid: int) -> bytes:
        reads.append(pid)
        return real(root, pid)

    monkeypatch.setattr(procscan, "stat_bytes", counted)
    return reads


def test_kernel_threads_are_not_busiest_users_and_are_read_again_only_by_the_full_scans(tmp_path: Path,
                                                                                       monkeypatch: pytest.MonkeyPatch
                                                                                       ) -> None:
    """A kernel thread (PF_KTHREAD in /proc/<pid>/stat's flags) is the kernel's work, in the machine's CPU %, not a
    program anyone runs: it is not among the busiest CPU users, and the scans between the full ones (every
    ``scan_every_s``) do not read its stat again (on a 64-core host kernel threads are most of the processes)."""
    from app.attribution.procscan import CLOCK_TICKS, PF_KTHREAD

    write_machine(tmp_path, 1)
    reads = counted_stat_reads(monkeypatch)
    now = [100.0]
    inspector = ProcessInspector(top_cpu=5, proc_root=tmp_path, resolve_foreign=True, top_cpu_every_s=0,
                                 unexplained_percent=0, scan_every_s=30, clock=lambda: now[0])
    for second in range(3):
        write_process(tmp_path, 2, 0, "kthreadd", flags=PF_KTHREAD)
        write_process(tmp_path, 31, second * CLOCK_TICKS, "ksoftirqd/3", flags=PF_KTHREAD | 0x40)  # a whole core
        write_process(tmp_path, 40, second * CLOCK_TICKS, "python3", flags=0x400000)  # a whole core, a program
        reads.clear()
        busiest = inspector.collect([])
        now[0] += 1
    assert [p.pid for p in busiest] == [40]
    assert 31 not in reads and 2 not in reads  # known kernel threads: not read by the scans between full ones
    now[0] += 30
    reads.clear()
    inspector.collect([])
    assert {2, 31} <= set(reads)  # the full scan reads everything again


def test_a_one_shot_baseline_counts_as_the_full_scan_its_first_tick_reads_no_kernel_thread_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The baseline a one-shot answer reads first thing reads every PID: the kernel threads it found are not read
    again by the tick that follows (most of a 64-core host's processes). Fails when prime() does not take them."""
    from app.attribution.procscan import CLOCK_TICKS, PF_KTHREAD
    from app.attribution.procstat import cpu_baseline

    write_machine(tmp_path, 1)
    write_process(tmp_path, 2, 0, "kthreadd", flags=PF_KTHREAD)
    write_process(tmp_path, 40, 0, "python3", flags=0x400000)
    now = [100.0]
    baseline = cpu_baseline(str(tmp_path), clock=lambda: now[0])
    assert baseline.kernel_threads == {2} and set(baseline.processes) == {40}
    reads = counted_stat_reads(monkeypatch)
    inspector = ProcessInspector(top_cpu=5, proc_root=tmp_path, resolve_foreign=True, top_cpu_every_s=0,
                                 unexplained_percent=0, scan_every_s=30, clock=lambda: now[0])
    inspector.prime(baseline)
    now[0] += 0.5
    write_process(tmp_path, 40, CLOCK_TICKS // 2, "python3", flags=0x400000)  # half a second of CPU in 0.5 s
    busiest = inspector.collect([])
    assert [(p.pid, p.cpu_percent) for p in busiest] == [(40, 100.0)]
    assert 2 not in reads and 40 in reads

def test_a_busy_process_new_at_a_scan_is_found_by_the_next_one_not_hidden_as_background(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that started since the last scan has no CPU % yet at the next: its CPU is not background (which
    would raise the bar above its own use and hide it until the 30 s scan); the scan after names it."""
    from app.attribution.procscan import CLOCK_TICKS

    now, scans, inspector = scanner(tmp_path, monkeypatch)
    write_process(tmp_path, 11, 0)
    write_machine(tmp_path, 0)
    inspector.collect([])  # the first scan, at 100
    found_at = None
    for second in range(1, 31):  # p99 starts just after the scan at 100 and uses a whole core
        now[0] += 1
        write_process(tmp_path, 99, second * CLOCK_TICKS)
        write_machine(tmp_path, second * CLOCK_TICKS)
        if found_at is None and any(r.pid == 99 for r in inspector.collect([])):
            found_at = now[0]
    assert scans[:3] == [100.0, 105.0, 110.0], scans  # 105 meets it without a rate; 110 measures it
    assert found_at == 110.0


def test_the_early_baseline_is_read_only_for_a_command_that_uses_it_and_is_taken_once_for_its_own_proc(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``app.cli.early.begin`` runs before the command line is parsed: it scans only when an argument could name
    ``snapshot`` or ``top``; the start takes the scan once, and only where the settings read the /proc it read (in a
    container FANWHY_HOST_PROC names the host's: the start then reads its own)."""
    from app.cli import early

    write_machine(tmp_path, 7)
    write_process(tmp_path, 40, 3, "python3")
    monkeypatch.setattr(early, "_root", str(tmp_path))
    monkeypatch.setattr(early, "_scan", None)
    early.begin(["serve", "--port", "8080"])
    assert early.taken(str(tmp_path)) is None  # a server reads no early baseline
    early.begin(["--json", "snapshot"])
    assert early.taken("/host/proc") is None  # another /proc: not used, and not kept
    assert early.taken(str(tmp_path)) is None
    early.begin(["top"])
    scan = early.taken(str(tmp_path))
    assert scan is not None
    _at, machine, processes, _own, _kernel = scan
    assert machine == (7, 7) and processes == {40: (500, 3 / CLOCK_TICKS)}
    assert early.taken(str(tmp_path)) is None  # taken once
