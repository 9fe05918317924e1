"""One bad fan source costs only itself: each source on its own clock with a timeout, every input bounded.

Each failure a machine (or an attacker with write access to /etc) can hand the fan service: a FIFO where a file
was, a read that blocks, a dangling, looping or oddly named chip folder, a chip removed between two reads, a YAML
alias bomb, nesting 50,000 deep, a 50 MB configuration, an ipmitool that hangs, fails or floods. Each must leave
every other fan and temperature as it was, be one reason in /api/fans and /api/health, and (the last test, a real
server) never slow the health probe."""

from __future__ import annotations

import logging
import os
import shutil
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import requests

from app.collect.assemble import build_collector
from app.collect.collector import Collector
from app.collect.fan2go import fan2go
from app.collect.fans import FanService
from app.collect.hwmon import judged_temperatures
from app.collect.settings import Settings
from app.collect.sources import Reading
from app.collect.thinkfan import thinkfan
from app.core.bounded import CommandError, read_file, run_bounded
from app.core.fan import Fan
from app.core.model import GpuSample, HostSample
from app.vendors.factory import Selection
from app.vendors.nvidia import NvidiaBackend
from app.vendors.sysfs import normalize_pci
from tests.fakes.fake_nvml import FakeNvml, captured_card, load_dump
from tests.support.hwmon import hwmon_tree
from tests.support.servers import Probe, free_port, start_server, stop, wait_for, wait_healthy

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
GOOD_FANS = {"hwmon:nct6798/fan2", "hwmon:thinkpad/fan1"}


def host() -> HostSample:
    return HostSample(hostname="t", cpu_percent=None, cpu_count=None, load_average=None, memory_used_bytes=None,
                      memory_total_bytes=None)


def machine(tmp_path: Path) -> Path:
    """A sys root with two good chips (an nct6798 board, a ThinkPad's EC and its acpitz sensor)."""
    return hwmon_tree(tmp_path / "sys", "nct6798-b550f-headers", "thinkpad-t420")


def live_ids(service: FanService) -> set[str]:
    return {f.id for f in service.read([], host())[0] if f.state != "dead" and f.stale_s is None}


def alias_bomb() -> str:
    """A fan2go configuration whose sensors list is 2^40 names once its aliases are expanded (about 500 bytes)."""
    lines = ["a0: &a0 [k10temp, k10temp]"]
    lines += [f"a{n}: &a{n} [*a{n - 1}, *a{n - 1}]" for n in range(1, 41)]
    return "\n".join(lines) + "\nsensors: *a40\nfans: []\ncurves: []\n"


def bad_configs(etc: Path) -> None:
    """The alias bomb as fan2go's, nesting 50,000 deep as thinkfan's, 50 MB as fancontrol's, under ``etc``."""
    (etc / "fan2go").mkdir(parents=True)
    (etc / "fan2go" / "fan2go.yaml").write_text(alias_bomb())
    (etc / "thinkfan.yaml").write_text("sensors: " + "[" * 50_000 + "]" * 50_000 + "\nlevels: []\n")
    with (etc / "fancontrol").open("w") as big:
        big.write("INTERVAL=10\n" + "#" * (50 << 20) + "\n")


def test_a_fifo_where_a_file_or_a_chip_was_is_refused_at_once(tmp_path: Path) -> None:
    """Before: reading a FIFO blocked the collector's tick for good (health said "down", no cause)."""
    sys_root = machine(tmp_path)
    chip = sys_root / "class" / "hwmon" / "hwmon7"
    chip.mkdir()
    (chip / "name").write_text("it8688\n")
    os.mkfifo(chip / "fan1_input")
    os.mkfifo(sys_root / "class" / "hwmon" / "hwmon9")
    etc = tmp_path / "etc"
    etc.mkdir()
    os.mkfifo(etc / "fancontrol")
    with pytest.raises(OSError, match="a FIFO"):
        read_file(etc / "fancontrol")
    service = FanService(sys_root=str(sys_root), etc_root=str(etc), threaded=True)
    try:
        wait_for(lambda: live_ids(service) >= GOOD_FANS and service.config_errors, timeout=30)
        assert "a FIFO" in service.config_errors[str(etc / "fancontrol")]
        wait_for(lambda: any("hwmon9" in p for p in service.problems()), timeout=30)
        assert next(p for p in service.problems() if "hwmon9" in p).startswith("fan source hwmon chip hwmon9: ")
        wait_for(lambda: any(f.chip == "it8688" for f in service.read([], host())[0]), timeout=30)  # read once
        it8688 = [f for f in service.read([], host())[0] if f.chip == "it8688"]
        assert it8688[0].rpm is None  # its FIFO tachometer is not waited on, and not a reading
    finally:
        service.close()


class Blocking:
    """A source that answers once, then blocks until released (a driver that hangs)."""

    key, name, period_s, timeout_s = "stuck", "a stuck embedded controller", 0.2, 0.6

    def __init__(self) -> None:
        self.calls = 0
        self.release = threading.Event()

    def read(self) -> Reading:
        self.calls += 1
        if self.calls > 1:
            self.release.wait(60)
        return Reading(fans=(Fan(id="ec:stuck/fan1", chip="ec", channel=1, label=None, rpm=2100),))


def test_a_read_that_blocks_fails_alone_and_its_last_reading_turns_stale(tmp_path: Path) -> None:
    stuck = Blocking()
    service = FanService(sys_root=str(machine(tmp_path)), etc_root=str(tmp_path / "etc"), threaded=True,
                         extra=[stuck])
    try:
        wait_for(lambda: {"ec:stuck/fan1", *GOOD_FANS} <= live_ids(service), timeout=30)
        wait_for(lambda: stuck.calls > 1 and service.problems(), timeout=30)
        started = time.monotonic()
        fans = {f.id: f for f in service.read([], host())[0]}
        assert time.monotonic() - started < 1.0  # the tick takes the latest; it does not wait for the stuck read
        assert {i for i, f in fans.items() if f.stale_s is None} >= GOOD_FANS
        assert fans["ec:stuck/fan1"].stale_s is not None and fans["ec:stuck/fan1"].stale_s > 0
        assert service.problems()[0].startswith("fan source a stuck embedded controller: no answer for ")
        assert "the read blocks; its last reading is" in service.problems()[0]
        status = next(s for s in service.statuses if s.key == "stuck")
        assert status.state == "failing" and status.age_s is not None
        stuck.release.set()
        wait_for(lambda: "ec:stuck/fan1" in live_ids(service) and not service.problems(), timeout=30)
    finally:
        stuck.release.set()
        service.close()


def test_dangling_looping_and_oddly_named_chips_cost_only_themselves(tmp_path: Path) -> None:
    sys_root = machine(tmp_path)
    base = sys_root / "class" / "hwmon"
    (base / "hwmon11").symlink_to(tmp_path / "gone")
    (base / "hwmon12").symlink_to(base / "hwmon12")
    shutil.copytree(base / "hwmon6", base / "hwmon²")  # '²'.isdigit() is True, int('²') raises: it ended the list
    (base / "hwmon²" / "name").write_text("it8686\n")
    service = FanService(sys_root=str(sys_root), etc_root=str(tmp_path / "etc"), threaded=True)
    try:
        wait_for(lambda: live_ids(service) >= GOOD_FANS and len(service.problems()) == 2, timeout=30)
        assert sorted(p.split(":")[0] for p in service.problems()) == ["fan source hwmon chip hwmon11",
                                                                       "fan source hwmon chip hwmon12"]
        wait_for(lambda: any(f.chip == "it8686" for f in service.read([], host())[0]), timeout=30)
        wait_for(lambda: any(s.chip == "acpitz" for s in service.temperatures()[0]), timeout=30)
        temperatures, left_out = service.temperatures()
        assert {"hwmon chip hwmon11", "hwmon chip hwmon12"} <= set(left_out)
    finally:
        service.close()
    temperatures, left_out = judged_temperatures(sys_root)  # the host's own path, read in place
    assert any(s.chip == "acpitz" for s in temperatures) and {"hwmon11", "hwmon12"} <= set(left_out)


def test_a_chip_removed_between_two_reads_leaves_with_its_fans(tmp_path: Path) -> None:
    sys_root = machine(tmp_path)
    service = FanService(sys_root=str(sys_root), etc_root=str(tmp_path / "etc"), threaded=True, every_s=0.2)
    try:
        wait_for(lambda: live_ids(service) >= GOOD_FANS, timeout=30)
        shutil.rmtree(sys_root / "class" / "hwmon" / "hwmon6")  # hot-unplugged
        wait_for(lambda: "hwmon:nct6798/fan2" not in {f.id for f in service.read([], host())[0]}, timeout=30)
        assert "hwmon:thinkpad/fan1" in live_ids(service)
        assert not any("hwmon6" in p for p in service.problems())  # gone, not failing
    finally:
        service.close()


def test_alias_bombs_deep_nesting_and_huge_configurations_are_refused_with_a_reason(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Before: the bomb froze the server 12-16 s a minute, the nesting escaped the YAML handler with 200 KB of
    traceback each tick, the 50 MB file blocked the collector 30 s."""
    assert "aliases are expanded" in (fan2go(alias_bomb()).error or "")
    assert "nested deeper" in (thinkfan("sensors: " + "[" * 50_000 + "]" * 50_000 + "\nlevels: []\n").error or "")
    etc = tmp_path / "etc"
    bad_configs(etc)
    caplog.set_level(logging.DEBUG)
    service = FanService(sys_root=str(machine(tmp_path)), etc_root=str(etc), threaded=True)
    try:
        wait_for(lambda: len(service.config_errors) == 3 and live_ids(service) >= GOOD_FANS, timeout=30)
        errors = service.config_errors
        assert "aliases are expanded" in errors[str(etc / "fan2go" / "fan2go.yaml")]
        assert "nested deeper than 32 levels" in errors[str(etc / "thinkfan.yaml")]
        assert "larger than 256 KiB" in errors[str(etc / "fancontrol")]
        assert "Traceback" not in caplog.text
    finally:
        service.close()


def test_a_command_that_hangs_or_floods_is_killed_with_its_reason(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match=r"did not answer within 0\.5 s"):
        run_bounded(["sleep", "30"], 0.5)
    with pytest.raises(CommandError, match="wrote more than 1 MiB"):
        run_bounded(["yes", "FAN1 | 1000 RPM | ok"], 10, limit=1 << 20)
    assert run_bounded(["sh", "-c", "echo hi; exit 3"], 5).returncode == 3


FAKE_IPMITOOL = """#!/bin/sh
mode=$(cat "{state}")
case "$mode" in
  good) cat "{listing}" ;;
  hang) exec sleep 600 ;;
  fail) echo "Error: Unable to establish IPMI v2 / RMCP+ session"; exit 1 ;;
  flood) exec yes "FAN9             | 1000 RPM          | ok" ;;
esac
"""


# the server is asked every 0.3 s below: its request budget is for people, not for a tight loop
def _fans(url: str) -> dict:
    response = requests.get(f"{url}/api/fans", timeout=30)
    assert response.status_code == 200, response.text
    return response.json()


def _until(predicate: Callable[[], object]) -> None:
    """``predicate`` true within a minute, asked every 0.3 s (the server's request budget is for people)."""
    wait_for(predicate, timeout=60, every=0.3)


def _bmc_source(url: str) -> dict:
    return next(s for s in _fans(url)["sources"] if s["key"] == "bmc")


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def test_a_server_with_every_bad_source_at_once_keeps_its_good_fans_and_answers_health_in_time(
        tmp_path: Path) -> None:
    sys_root = machine(tmp_path)
    base = sys_root / "class" / "hwmon"
    (base / "hwmon11").symlink_to(tmp_path / "gone")
    (base / "hwmon12").symlink_to(base / "hwmon12")
    os.mkfifo(base / "hwmon9")
    etc = tmp_path / "etc"
    bad_configs(etc)
    state = tmp_path / "ipmitool-mode"
    state.write_text("good")
    tool = tmp_path / "fake-ipmitool"
    tool.write_text(FAKE_IPMITOOL.format(state=state, listing=FIXTURES / "bmc" / "supermicro-sdr.txt"))
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start_server(port, FANWHY_BACKEND="basic", FANWHY_NVIDIA_SMI="/nonexistent", FANWHY_SYS_ROOT=str(sys_root),
                        FANWHY_ETC_ROOT=str(etc), FANWHY_BMC_COMMAND=str(tool), FANWHY_BMC_INTERVAL="2",
                        FANWHY_BMC_TIMEOUT="2", FANWHY_INTERVAL="0.5")
    probe = Probe(url)
    try:
        wait_healthy(url, timeout=90)
        probe.start()
        _until(lambda: {"bmc:FAN1", *GOOD_FANS} <= {f["id"] for f in _fans(url)["fans"] if f["stale_s"] is None})
        state.write_text("hang")
        _until(lambda: _bmc_source(url)["state"] == "failing")
        assert "did not answer within 2 s" in _bmc_source(url)["reason"]
        bmc = _fans(url)["bmc"]  # what /api/fans says of the BMC is what its source says
        assert bmc["read"] is False and "did not answer within 2 s" in bmc["reason"], bmc

        def bmc_fans() -> list[dict]:
            return [f for f in _fans(url)["fans"] if f["id"].startswith("bmc:") and f["state"] != "dead"]
        _until(lambda: all(f["stale_s"] for f in bmc_fans()))  # the next frame: never served as live
        assert len(bmc_fans()) == 3 and all(f["stale_s"] > 0 for f in bmc_fans())
        body = _fans(url)
        assert {f["id"] for f in body["fans"] if f["stale_s"] is None} >= GOOD_FANS
        health = requests.get(f"{url}/api/health", timeout=30).json()
        assert any(r.startswith("fan source the BMC (ipmitool sdr elist): fake-ipmitool did not answer")
                   for r in health["reasons"]), health["reasons"]
        assert any("hwmon chip hwmon12" in r for r in health["reasons"])
        assert any("hwmon chip hwmon9" in r for r in health["reasons"])
        assert health["status"] != "ok"  # refused configurations: what those daemons do to the fans is not known
        assert any(r.startswith(f"fan daemon configuration {etc / 'thinkfan.yaml'}: nested deeper")
                   for r in health["reasons"]), health["reasons"]  # read, and refused
        assert any(str(etc / "fancontrol") in r and "larger than 256 KiB" in r for r in health["reasons"])
        state.write_text("fail")
        _until(lambda: "exited 1" in (_bmc_source(url)["reason"] or ""))
        state.write_text("flood")
        _until(lambda: "wrote more than" in (_bmc_source(url)["reason"] or ""))
        assert _rss_mib(proc.pid) < 400
        state.write_text("good")
        _until(lambda: _bmc_source(url)["state"] == "ok")
        assert _fans(url)["bmc"] == {"read": True, "reason": None}
        assert {f["id"] for f in _fans(url)["fans"]} >= {"bmc:FAN1", *GOOD_FANS}
        assert not any(f["id"] == "bmc:FAN9" for f in _fans(url)["fans"])  # nothing of the flood was taken
        configs = _fans(url)["configs"]
        assert len(configs) == 3 and "larger than 256 KiB" in configs[str(etc / "fancontrol")]
    finally:
        probe.done.set()
        if probe.is_alive():
            probe.join(60)  # its last request answered before the server stops
        log = stop(proc)
    assert probe.times and not probe.failures and probe.p99() < 0.2, (probe.p99(), len(probe.times),
                                                                       probe.failures[:3])
    assert "Traceback" not in log


def _listing(count: int) -> str:
    return "".join(f"FAN{n:05d}          | {2000 + n} RPM          | ok\n" for n in range(count))


def test_a_bmc_listing_of_thousands_of_fans_keeps_the_first_256_and_says_so() -> None:
    from app.collect.bmc import MAX_FANS, BmcSource

    reading = BmcSource(lambda: _listing(5000)).read()
    assert len(reading.fans) == MAX_FANS == 256
    assert reading.problem == "5,000 fan lines: only the first 256 are read"


def test_the_learning_state_of_fans_that_vanished_is_pruned(tmp_path: Path) -> None:
    """A BMC that once listed 200 fans, then 3: after a learning window the 197 gone cost nothing any more."""
    from app.collect.fans import LEARN_WINDOW_S

    clock = {"now": 1000.0}
    listing = {"text": _listing(200)}
    service = FanService(sys_root=str(tmp_path), etc_root=str(tmp_path), bmc_run=lambda: listing["text"],
                         bmc_every_s=0.001, every_s=0, clock=lambda: clock["now"])
    for _ in range(3):
        service.read([], host())
        clock["now"] += 1
    assert len(service._speeds) == 200
    listing["text"] = _listing(3)
    for _ in range(int(LEARN_WINDOW_S) + 5):
        service.read([], host())
        clock["now"] += 1
    assert len(service._speeds) == 3 and len(service._learned_at) <= 3 and len(service._fits) <= 3
    assert len(service._temps) == 0  # no temperature was read at all: none kept


def _card_monitor(tmp_path: Path, fake: FakeNvml) -> Collector:
    backend = NvidiaBackend(nvml=fake, sys_root=str(tmp_path / "sys"))
    backend.open()
    settings = Settings(db="none", backend="nvidia", interval_s=0.2, sys_root=str(tmp_path / "sys"),
                        etc_root=str(tmp_path / "etc"), bmc=False)
    return build_collector(settings, Selection(backend=backend, skipped={}))


def test_a_cards_fans_are_read_on_their_own_clock_and_a_hung_fan_call_holds_only_them(tmp_path: Path) -> None:
    """NVML's fans are a fan source of their own ("gpu-fans"): the GPU's row has them as explained, and a fan
    call that hangs (a driver stuck on one fan) leaves the ticks going, the GPU's own numbers live, the source
    failing with the reason and its fans stale with their age (fails when the fans are read inside the sample:
    the tick then waits on the hung call)."""
    release = threading.Event()
    fake = FakeNvml([captured_card("rtx3090-load-shaped", fans=2)])
    collector = _card_monitor(tmp_path, fake)
    collector.start()

    def card() -> GpuSample:
        frame = collector.latest()
        assert frame is not None and frame.snapshot.gpus
        return frame.snapshot.gpus[0]

    def source() -> str:
        return {s.key: s for s in collector.fans.statuses}["gpu-fans"].state

    try:
        wait_for(lambda: collector.latest() is not None and len(card().fans) == 2, timeout=30)
        gpu = card()
        assert gpu.fan_speed_percent == 65 and all(f.state != "unknown" for f in gpu.fans) and source() == "ok"
        fake.set(0, "fan_v2_1", lambda *_: (release.wait(60), 65)[1])
        latest = collector.latest()
        assert latest is not None
        wait_for(lambda: (collector.latest() or latest).seq >= latest.seq + 10, timeout=30)
        wait_for(lambda: source() == "failing", timeout=30)
        wait_for(lambda: all(f.stale_s for f in card().fans), timeout=30)  # the next tick takes them as stale
        gpu = card()
        assert gpu.fan_speed_percent == 65 and len(gpu.fans) == 2
        assert gpu.utilization_percent is not None and gpu.error is None
        release.set()
        wait_for(lambda: source() == "ok", timeout=30)
    finally:
        release.set()
        collector.stop()


def test_a_sleeping_cards_fans_are_not_called_and_a_fanless_card_has_no_fan_source(tmp_path: Path) -> None:
    """The fan clock reads the GPU's power state first: a runtime-suspended card is not woken (the fake fails any
    call to it); an H100 (no fans) gets no fan source at all."""
    fake = FakeNvml([captured_card("rtx3090-load-shaped", fans=2)])
    device = tmp_path / "bus" / "pci" / "devices" / normalize_pci(fake.tables[0]["pci"]["busId"]) / "power"
    device.mkdir(parents=True)
    (device / "runtime_status").write_text("active\n")
    backend = NvidiaBackend(nvml=fake, sys_root=str(tmp_path))
    backend.open()
    read = backend.fans_apart()
    assert read is not None and len(read()) == 2
    (device / "runtime_status").write_text("suspended\n")
    fake.asleep.add(0)  # from here on, any call to the card fails the test
    assert read() == ()
    h100 = NvidiaBackend(nvml=FakeNvml(load_dump("h100-load")))
    h100.open()
    assert h100.fans_apart() is None
