"""``fanwhy explain`` for the captures people post from NVIDIA's tools, ipmiutil, a ThinkPad's /proc/acpi/ibm and
liquidctl; and the ThinkPad and liquidctl fan sources on the live path, read from the same captures."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest

from app.cli.replay import run
from app.collect.fans import FanService
from app.collect.registry import registered
from app.core.model import HostSample
from tests.support.corpus import blocks

CAPTURES = Path(__file__).resolve().parent.parent / "fixtures" / "captures"
BY_KEY = {b.key: b for b in blocks()}


def explained(*paths: Path) -> dict:
    out = io.StringIO()
    assert run(list(paths), as_json=True, out=out) == 0
    return json.loads(out.getvalue())


def corpus(tmp: Path, key: str) -> Path:
    path = tmp / f"{key}.txt"
    path.write_text(BY_KEY[key].capture)
    return path


@pytest.mark.parametrize("name", ["h200-nvidia-smi-q.txt", "h200-nvidia-smi-q-x.xml", "h200-nvidia-smi.txt"])
def test_nvidia_smi_q_q_x_and_the_table_of_one_h200_read_alike(name: str) -> None:
    """Captured on an H200 (driver 580.159.04): no fan of its own, 35 °C, about 81 W, P0."""
    answer = explained(CAPTURES / name)
    assert answer["sentence"].startswith("GPU 0 (NVIDIA H200) reports no fan speed ([N/A]): a data-center card has "
                                         "no fan of its own"), answer["sentence"]
    assert answer["fans"] == []
    assert [f["kind"] for f in answer["findings"] if f["priority"] >= 50] == []  # nothing wrong: no cause
    assert "gpu-fan-unreported" in {f["kind"] for f in answer["findings"]}
    hottest = next(f for f in answer["findings"] if f["kind"] == "hottest")
    assert hottest["facts"]["celsius"] == 35  # the GPU's reading, never a limit (T.Limit, Slowdown Temp)


def test_an_nvidia_smi_xml_that_declares_entities_is_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "q.xml"
    bomb.write_text('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
                    "<nvidia_smi_log><gpu><product_name>&b;</product_name></gpu></nvidia_smi_log>")
    err = io.StringIO()
    assert run([bomb], out=io.StringIO(), err=err) == 2
    assert "declares XML entities" in err.getvalue() and len(err.getvalue().splitlines()) == 1


def test_nvidia_settings_zeros_are_not_called_at_rest_or_failed(tmp_path: Path) -> None:
    """Two fans whose every attribute reads 0: fan-stop and a driver that stopped reporting look alike."""
    answer = explained(corpus(tmp_path, "nvidia-07"))
    found = {f["kind"]: f for f in answer["findings"]}  # no temperature read: rest and a silent tachometer stay two
    assert set(found) == {"zero-unjudged"} and found["zero-unjudged"]["confidence"] == "possible"
    assert "at rest, or a tachometer that does not report" in answer["sentence"]
    assert [f["state"] for f in answer["fans"]] == ["unknown", "unknown"]  # 0 % and 0 RPM, neither judged: not known
    assert all(f["stopped"] is False and f["alarm"] is None for f in answer["fans"])


def test_ipmiutil_sensor_lines_are_the_bmcs_fans_and_air() -> None:
    answer = explained(CAPTURES / "supermicro-ipmiutil-sensor.txt")
    lead = answer["findings"][0]  # critical while it turns at 500 RPM: under a lower threshold, not a dead fan
    assert (lead["kind"], lead["subjects"], lead["confidence"]) == ("below-bmc-threshold", ["bmc/FAN1"], "possible")
    assert "fan-fault" not in {f["kind"] for f in answer["findings"]}
    assert {f["name"]: f["rpm"] for f in answer["fans"]} == {"FAN1 (BMC)": 500, "FAN2 (BMC)": 4300,
                                                             "FAN3 (BMC)": 4400}
    assert {a["label"] for a in answer["air"]} == {"CPU Temp", "System Temp"}


def test_a_thinkpads_ec_level_and_a_speed_it_does_not_report(tmp_path: Path) -> None:
    """ThinkPad E-series: thinkfan holds level 3 (its configuration in the paste drives the fan), the EC's speed
    stays 0 (its speed field is not a tachometer)."""
    answer = explained(corpus(tmp_path, "laptops-02"))
    (fan,) = answer["fans"]
    assert fan["controller"] == "thinkfan (its configuration in the paste), at level 3" and fan["state"] == "stalled"
    lead = answer["findings"][0]
    assert (lead["kind"], lead["confidence"], lead["facts"]["tach_may_not_report"]) == ("stalled", "possible", "yes")


def test_a_thinkpad_at_level_1_is_held_there_by_software(tmp_path: Path) -> None:
    answer = explained(corpus(tmp_path, "laptops-03"))
    (fan,) = answer["fans"]
    assert (fan["rpm"], fan["percent"], fan["control"]) == (1608, 14.3, "manual")  # the last reading of the post


def test_liquidctl_text_pump_at_0_rpm_is_not_at_rest_and_empty_channels_are_dead(tmp_path: Path) -> None:
    answer = explained(corpus(tmp_path, "liquidctl-daemons-01"))
    states = {f["name"]: f["state"] for f in answer["fans"]}
    assert states == {"Fan 1 (Corsair H110i GT)": "dead", "Fan 2 (Corsair H110i GT)": "dead",
                      "Pump (Corsair H110i GT)": "stalled"}
    lead = answer["findings"][0]  # the liquid at 33.6 °C: a pump that does not report is as likely as one stopped
    assert (lead["kind"], lead["confidence"]) == ("pump-stopped", "possible")
    assert not {"at-rest", "no-fault"} & {f["kind"] for f in answer["findings"]}
    assert {t["label"] for t in answer["temperatures"]} == {"Liquid temperature"}


def test_liquidctl_json_and_its_guessed_source() -> None:
    answer = explained(CAPTURES / "kraken-x53-liquidctl.json")
    fans = {f["name"]: f for f in answer["fans"]}
    pump = fans["Pump (NZXT Kraken X (X53, X63 or X73))"]
    assert (pump["rpm"], pump["percent"]) == (1992, 60.0)
    assert pump["source"] == "NZXT Kraken X (X53, X63 or X73) Liquid temperature"
    assert fans["Fan 1 (NZXT Smart Device V2)"]["state"] == "stalled"  # 0 rpm at 40 % duty: stalled or unreported
    assert fans["Fan 3 (NZXT Smart Device V2)"]["state"] == "dead"  # 0 rpm, no duty: an empty channel


def host() -> HostSample:
    return HostSample(hostname="t", cpu_percent=None, cpu_count=None, load_average=None, memory_used_bytes=None,
                      memory_total_bytes=None)


def test_the_thinkpad_and_liquidctl_sources_on_the_live_path(tmp_path: Path) -> None:
    """The same captures as a machine's /proc and a liquidctl that answers: one registration each."""
    ibm = tmp_path / "proc" / "acpi" / "ibm"
    ibm.mkdir(parents=True)
    (ibm / "fan").write_text("status:\t\tenabled\nspeed:\t\t2067\nlevel:\t\tauto\n")
    (ibm / "thermal").write_text("temperatures:\t52 0 0 0 -128 0 0 0\n")
    liquid = (CAPTURES / "kraken-x53-liquidctl.json").read_text()
    service = FanService(sys_root=str(tmp_path / "sys"), etc_root=str(tmp_path / "etc"), threaded=True,
                         extra=registered(tmp_path / "proc", tmp_path / "sys", lambda: liquid))
    try:
        deadline = time.monotonic() + 30
        while len([f for f in service.read([], host())[0] if f.state != "dead"]) < 4:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        fans = {f.id: f for f in service.read([], host())[0]}
        ec = fans["acpi:thinkpad/fan1"]
        assert (ec.rpm, ec.control, ec.controller) == (2067, "automatic", "the embedded controller (level auto)")
        assert fans["liquidctl:NZXT Kraken X (X53, X63 or X73)/Pump"].rpm == 1992
        temperatures, _ = service.temperatures()
        assert {(t.chip, t.label) for t in temperatures} == {("thinkpad_acpi", "temp1"),
                                                            ("NZXT Kraken X (X53, X63 or X73)", "Liquid temperature")}
        assert {s.key for s in service.statuses} >= {"thinkpad-acpi", "liquidctl"}
    finally:
        service.close()


def test_a_thinkpad_whose_hwmon_chip_has_the_fan_is_read_once(tmp_path: Path) -> None:
    """thinkpad_acpi gives the fan twice (its hwmon chip and /proc/acpi/ibm/fan): the chip's, with its pwm, counts."""
    from tests.support.hwmon import hwmon_tree

    sys_root = hwmon_tree(tmp_path / "sys", "thinkpad-t420")
    ibm = tmp_path / "proc" / "acpi" / "ibm"
    ibm.mkdir(parents=True)
    (ibm / "fan").write_text("status:\t\tenabled\nspeed:\t\t3855\nlevel:\t\tauto\n")
    service = FanService(sys_root=str(sys_root), etc_root=str(tmp_path / "etc"),
                         extra=registered(tmp_path / "proc", sys_root, None))
    fans = [f.id for f in service.read([], host())[0]]
    assert fans == ["hwmon:thinkpad/fan1"]
