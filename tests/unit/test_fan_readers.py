"""The fan wing's general reader on real captures it was not written from (tests/fixtures/fans/reference/: each block
a real machine's listing with its source): every one is read unless it holds no reading, and nothing dangerous is
found on any; then each capture family on an excerpt of a real one."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from app.cli.replay import run
from app.collect.captures import text_of
from app.fans import read
from app.fans.adapt import machine
from app.fans.answer import explained
from app.fans.chips import chip
from app.fans.names import Names
from app.fans.read import frameworktool
from app.fans.words import said
from tests.support.fan_checks import assert_nothing_dangerous, nvidia_smi_table

REFERENCE = Path(__file__).resolve().parent.parent / "fixtures" / "fans" / "reference"
# Blocks with no reading in them, refused on purpose (one line, exit 2): attribute names without values, a
# structure without numbers, pwm curve points alone. (A daemon's configuration is read: the curve it imposes.)
NO_READING = {"hwmon_superio_nct67xx_sysfs-02",
              "hwmon_superio_nct67xx_sysfs-03", "sensors_laptops_thinkpad_dell_asus-13"}


def reference_blocks() -> dict[str, str]:
    found = {}
    for path in sorted(REFERENCE.glob("*.txt")):
        lines = path.read_text().splitlines()
        starts = [i for i, line in enumerate(lines) if line.startswith("=== ")]
        for n, start in enumerate(starts):
            body = lines[start + 1:starts[n + 1] if n + 1 < len(starts) else len(lines)]
            found[f"{path.stem}-{n + 1:02d}"] = "\n".join(line for line in body if not line.startswith("# source"))
    return found


BLOCKS = reference_blocks()


def explain(text: str, tmp_path: Path) -> tuple[int, dict[str, object]]:
    path = tmp_path / "capture.txt"
    path.write_text(text + "\n")
    out, err = io.StringIO(), io.StringIO()
    code = run([path], as_json=True, out=out, err=err)
    return code, json.loads(out.getvalue()) if code == 0 else {"error": err.getvalue()}


def test_the_reference_captures_are_there() -> None:
    assert len(BLOCKS) == 99 and set(BLOCKS) >= NO_READING


@pytest.mark.parametrize("key", sorted(BLOCKS))
def test_every_reference_capture_is_read_and_nothing_dangerous_is_found(key: str, tmp_path: Path) -> None:
    code, answer = explain(BLOCKS[key], tmp_path)
    if key in NO_READING:
        assert code == 2 and "not a capture FanWhy reads" in str(answer["error"]), answer
        return
    assert code == 0, answer
    assert_nothing_dangerous(BLOCKS[key], answer)


def lead(text: str) -> tuple[str, str]:
    found, _, _ = explained(machine(read.read(text)[0]))
    return found[0].kind, found[0].confidence


def test_nvidia_smi_xml_by_its_tags_a_geforce_rests_and_a_data_center_card_has_no_fan() -> None:
    geforce = BLOCKS["nvidia-smi_xml_geforce_fans-01"]  # RTX 3090 at 0 %, 32 °C
    assert lead(geforce) == ("at-rest", "likely")
    a10g = next(text for text in BLOCKS.values() if "A10G" in text)  # "0 %" on a card with no fan
    found = {f.kind for f in explained(machine(read.read(a10g)[0]))[0]}
    assert "gpu-fan-unreported" in found and "at-rest" not in found


def test_a_key_equals_value_dump_of_hwmon_folders() -> None:
    t420 = BLOCKS["sensors_laptops_thinkpad_dell_asus-02"]
    (fan,) = machine(read.read(t420)[0]).fans
    assert (fan.chip, fan.rpm, fan.duty_percent, fan.controller) == ("thinkpad", 3855, None, "ec")  # pwm1 under the EC


def test_relative_sysfs_paths_and_amdgpus_overdrive_files() -> None:
    rx9070 = BLOCKS["hwmon_amdgpu_sysfs_LACT-02"]
    (fan,) = machine(read.read(rx9070)[0]).fans
    assert fan.zero_rpm is False and fan.rest_below_c == 67 and fan.floor_percent == 30 and fan.rpm == 896
    assert lead(BLOCKS["hwmon_amdgpu_sysfs_LACT-09"])[0] == "stalled"  # RX 7600S: 30 % asked, 0 RPM, zero-RPM off?


def test_a_cut_sensors_json_and_sensors_errors() -> None:
    cut = BLOCKS["sensors_laptops_thinkpad_dell_asus-04"]  # pretty sensors -j with "..." where the post cut it
    facts = machine(read.read(cut)[0])
    assert [(f.chip, f.rpm) for f in facts.fans] == [("thinkpad", 0.0)]
    assert {t.label for t in facts.temperatures} >= {"Package id 0", "Core 0"}
    compact = BLOCKS["sensors_laptops_thinkpad_dell_asus-05"]  # one line, after sensors' own error line
    assert lead(compact) == ("speed-not-a-reading", "known")


def test_percent_fans_and_hexadecimal_states_of_a_bmc() -> None:
    hp = next(text for text in BLOCKS.values() if "43.51 percent" in text)
    fans = {f.label: f for f in machine(read.read(hp)[0]).fans}
    assert fans["Fan 1"].duty_percent == 43.51 and fans["Fan 1"].rpm is None
    assert "Fans" not in fans and "UID Light" not in fans  # "0x00" is a state, not a reading


def test_prometheus_hwmon_metrics_and_monitoring_perfdata() -> None:
    metrics = ('node_hwmon_fan_rpm{chip="platform_nct6775_656",sensor="fan2"} 1077\n'
               'node_hwmon_pwm{chip="platform_nct6775_656",sensor="pwm2"} 128\n'
               'node_hwmon_temp_celsius{chip="platform_nct6775_656",sensor="temp1"} 45\n')
    (fan,) = machine(read.read(metrics)[0]).fans
    assert (fan.chip, fan.rpm, fan.duty_percent) == ("nct6775", 1077, 50.2)
    # the exporter's annotations (collector/hwmon_linux.go): the chip's driver name and a sensor's label file, so
    # an nct6798 is one and its CPUTIN is the input the board wired as the CPU's (they were "nct6775", "temp1")
    annotated = metrics + ('node_hwmon_chip_names{chip="platform_nct6775_656",chip_name="nct6798"} 1\n'
                           'node_hwmon_sensor_label{chip="platform_nct6775_656",label="CPUTIN",sensor="temp1"} 1\n'
                           'node_hwmon_pwm_mode{chip="platform_nct6775_656",sensor="pwm2"} 1\n')
    facts = machine(read.read(annotated)[0])
    assert [(f.chip, f.pwm_mode) for f in facts.fans] == [("nct6798", 1)]
    assert [(t.chip, t.label, t.role) for t in facts.temperatures] == [("nct6798", "CPUTIN", "cpu")]
    xcc = next(text for text in BLOCKS.values() if "'fan_Fan 1 Front Tach'" in text)
    facts = machine(read.read(xcc)[0])
    assert {f.duty_percent for f in facts.fans} >= {26.0, 27.0} and all(f.chip == "bmc" for f in facts.fans)


def test_a_speed_slower_than_any_fan_is_not_a_turning_fan() -> None:
    slow = "/sys/class/hwmon/hwmon1/name:amdgpu\n/sys/class/hwmon/hwmon1/fan1_input:29\n" \
           "/sys/class/hwmon/hwmon1/pwm1:65\n/sys/class/hwmon/hwmon1/temp1_input:40000\n"
    found = {f.kind for f in explained(machine(read.read(slow)[0]))[0]}
    assert "stalled" in found and "turning" not in found


def test_a_section_names_its_generic_readings_and_a_reply_quotes_a_listing() -> None:
    amd_smi = ("GPU: 0\n    TEMPERATURE:\n        EDGE: 45 °C\n        MEM: 62 °C\n"
               "    FAN:\n        SPEED: 25.0 %\n        MAX: 255\n        RPM: 1200\n        USAGE: 9 %\n")
    facts = machine(read.read(amd_smi)[0])
    (fan,) = facts.fans
    assert (fan.chip, fan.label, fan.rpm, fan.duty_percent) == ("amdgpu", "GPU 0 FAN", 1200, 25.0)  # MAX and USAGE
    # are not its speed; the card is the "GPU: 0" the sections are under
    assert {t.role for t in facts.temperatures} == {"gpu", "memory"}
    quoted = "> nct6798-isa-0290\n> Adapter: ISA adapter\n> fan2:        1850 RPM  (min =    0 RPM)\n"
    (fan,) = machine(read.read(quoted)[0]).fans
    assert (fan.chip, fan.rpm) == ("nct6798", 1850)


def test_a_loggers_csv_is_a_sequence_and_a_fan_named_for_the_gpu_follows_it() -> None:
    log = ("Date,Time,CPU Package [°C],CPU Fan [RPM],GPU Temperature [°C],GPU Fan [RPM]\n"
           "1.12.2026,10:00:01,45,800,40,0\n1.12.2026,10:00:02,88,2400,84,0\n")
    facts = machine(read.read(log)[0])
    assert facts.snapshots == 2 and {f.label: f.rpm for f in facts.fans} == {"CPU Fan": 2400, "GPU Fan": 0}
    found, _, _ = explained(facts)
    hot = next(f for f in found if f.kind == "hot-not-cooled")
    assert hot.subjects[0] == "-/GPU Fan" and hot.facts["source"] == "-/GPU Temperature"


def test_the_h200s_own_answers_read_as_a_card_with_no_fan(tmp_path: Path) -> None:
    """nvidia-smi on one H200 (driver 580.159.04, captured by the device tool): --query-gpu's fan.speed is [N/A],
    and -q's temperature section lists limits (T.Limit, Shutdown, Slowdown) beside the readings."""
    captures = REFERENCE.parent.parent / "captures"
    code, answer = explain((captures / "h200-nvidia-smi-query.csv").read_text(), tmp_path)
    assert code == 0 and answer["fans"] == [] and str(answer["sentence"]).startswith(
        "GPU 0 (NVIDIA H200) reports no fan speed ([N/A]): a data-center card has no fan of its own")
    facts = machine(read.read((captures / "h200-nvidia-smi-query.csv").read_text())[0])
    assert facts.fans == () and [(g.name, g.fan_reported, g.temperature_c) for g in facts.gpus] == [
        ("NVIDIA H200", False, 38.0)]
    section = machine(read.read((captures / "h200-nvidia-smi-q-temperature-power.txt").read_text())[0])
    assert {t.label: t.celsius for t in section.temperatures} == {"GPU Current Temp": 38.0,
                                                                   "Memory Current Temp": 39.0}


TABLE = nvidia_smi_table("|  0%   {0}C    P2   250W / 350W |   9000MiB / 24576MiB |     99%      Default |")


@pytest.mark.parametrize("text", [TABLE, "index, name, fan.speed [%], temperature.gpu, power.draw [W]\n"
                                         "0, NVIDIA GeForce RTX 3090, 0 %, {0}, 250.00 W\n"])
def test_a_geforce_at_0_percent_is_at_rest_only_while_cool(text: str, tmp_path: Path) -> None:
    """NVML's fan speed is the intended speed: 0 % at 86 °C under load is a card whose fan does not cool it, never
    fan-stop; at 65 °C it is past where fan-stop holds; at 40 °C it is at rest."""
    for celsius, lead_kind in ((86, "hot-not-cooled"), (65, "warm-not-turning")):
        code, answer = explain(text.format(celsius), tmp_path)
        found = findings_of(answer)
        assert code == 0 and found[0]["kind"] == lead_kind, found
        assert "at-rest" not in {f["kind"] for f in found}
        assert_nothing_dangerous(text.format(celsius), answer)
    code, answer = explain(text.format(40), tmp_path)
    assert "at-rest" in {f["kind"] for f in findings_of(answer)}


@pytest.mark.parametrize("text", [TABLE.replace("|  0%   {0}C", "| ERR!  {0}C"),
                                  "index, name, fan.speed [%], temperature.gpu, power.draw [W]\n"
                                  "0, NVIDIA GeForce RTX 3080, [Unknown Error], {0}, 220.15 W\n"])
def test_a_fan_nvidia_smi_failed_to_read_is_unknown_never_no_fan(text: str, tmp_path: Path) -> None:
    """nvidia-smi(1) prints "[N/A]" for a reading the board does not have, "[Unknown Error]" (its table: "ERR!") for
    one it failed to read: the card has a fan of unknown speed, not none of its own; said with the card's heat when
    that needs cooling (fails when the error reads as [N/A], and when the table's ERR! row is refused)."""
    for celsius, hot in ((91, True), (45, False)):
        code, answer = explain(text.format(celsius), tmp_path)
        found = findings_of(answer)
        assert code == 0 and found[0]["kind"] == "speed-not-a-reading", found
        assert found[0]["facts"]["why"] == "error" and (found[0]["facts"].get("hot") == "yes") is hot
        assert not {"gpu-fan-unreported", "at-rest", "turning", "no-fault"} & {f["kind"] for f in found}
    code, answer = explain(text.format(45).replace("[Unknown Error]", "[N/A]").replace("ERR!", "N/A "), tmp_path)
    assert code != 0 or "speed-not-a-reading" not in {f["kind"] for f in findings_of(answer)}


def findings_of(answer: dict[str, object]) -> list[dict[str, Any]]:
    found = answer["findings"]
    assert isinstance(found, list)
    return found


def test_a_board_header_named_for_the_cpu_at_0_beside_a_hot_cpu_is_said(tmp_path: Path) -> None:
    board = ("asuswmisensors-isa-0000\nAdapter: ISA adapter\nCPU Fan:                    0 RPM\n"
             "Chassis Fan 1:            900 RPM\nChassis Fan 2:              0 RPM\nCPU Temperature:          +{}°C\n")
    _, answer = explain(board.format("91.0"), tmp_path)
    found = findings_of(answer)
    assert found[0]["kind"] == "hot-not-cooled" and found[0]["confidence"] == "possible"
    assert_nothing_dangerous(board.format("91.0"), answer)
    empty = next(f for f in found if f["kind"] == "empty-slots")
    assert empty["subjects"] == ["asuswmisensors/Chassis Fan 2"]  # not the CPU's header: that one is a warning
    _, answer = explain(board.format("45.0"), tmp_path)
    assert "hot-not-cooled" not in {f["kind"] for f in findings_of(answer)}


def test_a_bmc_fan_at_0_with_status_ok_is_neither_fine_nor_failed(tmp_path: Path) -> None:
    listing = "FAN1 | 0 RPM | ok\nFAN2 | 5000 RPM | ok\nCPU Temp | 45 degrees C | ok\n"
    _, answer = explain(listing, tmp_path)
    found = findings_of(answer)
    assert (found[0]["kind"], found[0]["subjects"], found[0]["confidence"]) == ("bmc-zero-ok", ["bmc/FAN1"],
                                                                                 "possible")
    assert not {"no-fault", "fan-fault"} & {f["kind"] for f in found}


def test_a_desktops_fans_are_not_judged_as_a_server_zone_and_its_zero_is_said_as_unseen(tmp_path: Path) -> None:
    """Fans driven together is a server chassis's design (a BMC's zone), not a desktop's: a CPU fan at twice its
    case fans is no wrong reading; a header at 0 with no chip named is said as unseen, never left out or fine."""
    desktop = "CPU Fan: 2400 RPM\nChassis Fan 1: 800 RPM\nChassis Fan 2: 820 RPM\nChassis Fan 3: 0 RPM\n"
    for header, chip_key in (("", "-"), ("boardfans-isa-0000\nAdapter: ISA adapter\n", "boardfans")):
        _, answer = explain(header + desktop, tmp_path)  # no chip named, and a chip the table does not know
        found = findings_of(answer)
        assert "unlike-siblings" not in {f["kind"] for f in found} and "no-fault" not in {f["kind"] for f in found}
        zero = next(f for f in found if f["kind"] == "zero-unknown")
        assert zero["subjects"] == [f"{chip_key}/Chassis Fan 3"] and zero["confidence"] == "possible"
    server = "".join(f"FAN{n} | {rpm} RPM | ok\n" for n, rpm in ((1, 5400), (2, 5300), (3, 5350), (4, 0)))
    _, answer = explain(server, tmp_path)
    assert "unlike-siblings" in {f["kind"] for f in findings_of(answer)}


def test_a_fan_asked_for_0_that_reads_0_is_said_as_asked_beside_a_fan_that_turns(tmp_path: Path) -> None:
    """hwmon's ABI: pwmN is the duty its output asks (0: no speed), fanN_input the speed counted. A fan whose
    controller is not named, asked 0 % and reading 0 RPM (a sensor logger's CSV with each fan's speed and duty), is
    said as asked beside a fan that turns (never left unsaid); with no fan turning, "every header at 0 RPM" says the
    fans once (asked to stop where each is asked 0 %), not this rule again; a fan at 0 RPM asked for more is not
    (a duty with no speed is a stall's question), and hot, it is a part without cooling."""
    log = ('"Date","Time","CPU [RPM]","GPU Temperature [°C]","GPU Fan1 [RPM]","GPU Fan1 [%]",\n'
           '"7.12.2026","15:01:02.123","{cpu}","{temp}","0","{duty}",\n')
    _, answer = explain(log.format(cpu="1250", temp="62.0", duty="0"), tmp_path)
    asked = [f for f in findings_of(answer) if f["kind"] == "zero-unknown" and "asked" in f["facts"]]
    assert [(f["subjects"], f["confidence"]) for f in asked] == [(["-/GPU Fan1"], "possible")], answer
    only = log.replace('"CPU [RPM]",', "").replace('"{cpu}",', "")
    _, answer = explain(only.format(temp="62.0", duty="0"), tmp_path)
    said = [(f["kind"], f["facts"].get("asked")) for f in findings_of(answer) if f["kind"] in
            ("zero-unknown", "headers-read-zero")]
    assert said == [("headers-read-zero", "off")], findings_of(answer)
    _, answer = explain(log.format(cpu="1250", temp="62.0", duty="40"), tmp_path)
    assert not any("asked" in f["facts"] for f in findings_of(answer)), findings_of(answer)
    _, answer = explain(log.format(cpu="1250", temp="95.0", duty="0"), tmp_path)
    kinds = [f["kind"] for f in findings_of(answer)]
    assert kinds[0] == "hot-not-cooled" and "zero-unknown" not in kinds, kinds


def test_a_dell_fan_at_rest_while_cool_then_started_as_it_warmed() -> None:
    """Two `sensors` listings of one Dell laptop (off, then on): 0 RPM with the CPU at 36-39 °C, 3,035 RPM at 56-59
    °C. Dell's EC stops its fans while cool (dell-smm-hwmon.rst): the 0 was a rest by design, not a dead fan; a rule
    that drops the temperatures of the earlier listing, or the chip's rest, says only "was not a missing fan"."""
    key = next(k for k, text in BLOCKS.items() if "Processor Fan: 3035 RPM" in text)
    found = {f.kind: f for f in explained(machine(read.read(BLOCKS[key])[0]))[0]}
    started = found["zero-then-turning"]
    assert (started.facts["rested"], started.facts["then_c"], started.facts["source_c"]) == ("yes", 39.0, 59.0)
    assert not {"fan-fault", "stalled", "at-rest", "hot-not-cooled"} & set(found)
    hot = BLOCKS[key].replace("Core 1:       +39.0°C", "Core 1:       +75.0°C").replace("+59.0°C", "+80.0°C")
    hot_start = {f.kind: f for f in explained(machine(read.read(hot)[0]))[0]}["zero-then-turning"]
    assert "rested" not in hot_start.facts  # a 0 at 75 °C is above where Dell's EC rests its fans: no rest
    (cool,) = [k for k, text in BLOCKS.items() if "Processor Fan:    0 RPM" in text and "pch_skylake" in text and
               "Ambient:        +35.0°C" in text]
    rest = {f.kind: f for f in explained(machine(read.read(BLOCKS[cool])[0]))[0]}["at-rest"]
    assert (rest.confidence, rest.facts["source_c"], rest.facts["below_c"]) == ("likely", 39.0, 70.0)


def test_a_fan_that_stops_and_starts_is_said_and_only_a_resting_chip_makes_it_the_design() -> None:
    """Four listings of a board's fan chip, its fan at 0, 900, 0 and 910 RPM: it stops and starts, which a board's
    header does not do by design (a stalling fan or a dropping tachometer, said as possible); a card that stops its
    fans while cool, near that temperature, cycles at its fan-stop threshold (likely). Two listings are no cycle."""
    def listing(rpm: int, chip_name: str = "nct6798-isa-0290", celsius: float = 45.0) -> str:
        return f"{chip_name}\nAdapter: ISA adapter\nfan2:   {rpm} RPM\nSYSTIN:   +{celsius}°C\n"

    board = "\n".join(listing(r) for r in (0, 900, 0, 910))
    found = {f.kind: f for f in explained(machine(read.read(board)[0]))[0]}
    cycles = found["stops-and-starts"]
    assert (cycles.confidence, cycles.facts["design"], cycles.facts["changes"]) == ("possible", "other", 3.0)
    card = "\n".join(listing(r, "amdgpu-pci-0300", 62.0).replace("SYSTIN", "edge") for r in (900, 0, 905, 0))
    found = {f.kind: f for f in explained(machine(read.read(card)[0]))[0]}
    assert (found["stops-and-starts"].confidence, found["stops-and-starts"].facts["design"]) == ("likely", "rest")
    for once in ((0, 900), (0, 900, 0)):  # started once, or started and stopped: no cycle yet
        text = "\n".join(listing(r) for r in once)
        assert "stops-and-starts" not in {f.kind for f in explained(machine(read.read(text)[0]))[0]}


def test_rocm_smis_per_card_lines_and_a_duty_of_0_with_no_speed_is_no_rest_claimed() -> None:
    """`rocm-smi -a` read by its `GPU[N] : name: value` lines (the duty inside "124 (48.63)%"); a card's 0 % with no
    speed read is at rest or a passive card's reading (Instinct cards have no fan and report one), never "at rest by
    design" (likely): the table does not say which card it is."""
    vega = next(text for text in BLOCKS.values() if "Fan Level: 124 (48.63)%" in text)
    facts = machine(read.read(vega)[0])
    (fan,) = facts.fans
    assert (fan.key, fan.duty_percent, fan.rpm) == ("amdgpu/GPU 0 fan", 48.63, None)
    assert [(t.key, t.celsius) for t in facts.temperatures] == [("amdgpu/GPU 0 edge", 81.0)]
    instinct = next(text for text in BLOCKS.values() if "6.67%" in text)
    rests = [f for f in explained(machine(read.read(instinct)[0]))[0] if f.kind == "at-rest"]
    assert rests and all((f.confidence, f.facts["design"]) == ("possible", "rest-or-passive") for f in rests)


def test_a_passive_instinct_cards_listed_fan_at_0_is_no_failure(tmp_path: Path) -> None:
    """amdgpu lists fan1 on an Instinct MI100, a card with no fan of its own (the server's chassis fans cool AMD's
    Instinct cards): its 0 RPM at an idle 59 °C junction is neither a failure, a stall nor a hot part without cooling.
    A rest or no fan at all, a `sensors` listing cannot tell: it names no product."""
    mi100 = BLOCKS["rocm_smi_amd-04"]
    code, answer = explain(mi100, tmp_path)
    assert code == 0, answer
    kinds = {f["kind"] for f in findings_of(answer)}
    assert not {"hot-not-cooled", "stalled", "fan-fault", "warm-not-turning", "target-not-met"} & kinds, kinds
    assert_nothing_dangerous(mi100, answer)


@pytest.mark.parametrize(("key", "empty", "speeds"), [
    ("opencorsairlink_corsair-01", "fan6", {"Fan 0": (1374.0, 100.0), "Fan 1": (750.0, 0.0), "Fan 4": (751.0, 0.0)}),
    ("opencorsairlink_corsair-02", "fan6", {"Fan 1": (1243.0, 55.0), "Fan 5": (1424.0, 45.0), "Fan 6": (0.0, 100.0)}),
])
def test_opencorsairlinks_status_pairs_each_channels_duty_and_speed(key: str, empty: str,
                                                                     speeds: dict[str, tuple[float, float]]) -> None:
    """OpenCorsairLink prints a channel's duty and speed apart (``FAN PWM 1: 55 %`` and ``FAN 1: 1243``, the speed
    with no unit; or ``Fan 0:`` with ``PWM:`` and ``RPM:`` beneath): each channel is one fan with both, never a fan
    named "RPM" or a duty with no speed. The duty is the one the device reports: nothing says a hand set it (the
    kernel's corsair-cpro reads a pwm only once it is set; this tool reads the device's). A channel at 0 RPM beside
    fans that turn is most likely empty, never running."""
    found, name = read.read(BLOCKS[key])
    assert name == "OpenCorsairLink's status of a Corsair device"
    facts = machine(found)
    fans = {f.label: f for f in facts.fans}
    assert len(fans) == 6 and "RPM" not in fans
    for label, (rpm, duty) in speeds.items():
        assert (fans[label].rpm, fans[label].duty_percent) == (rpm, duty), fans[label]
    assert all(f.controller != "manual" for f in facts.fans)
    found_kinds = explained(facts)[0]
    assert any(f.kind == "empty-slots" and any(s.endswith(f"/{empty}") for s in f.subjects) for f in found_kinds)
    assert not any(f.kind in ("fixed-duty", "turns-at-zero") for f in found_kinds)


def test_a_product_line_beside_bare_fan_numbers_is_not_taken_for_opencorsairlink() -> None:
    """Only OpenCorsairLink's own fan lines ("FAN PWM N:", or "Fan N:" with Mode, PWM and RPM beneath) make its
    status; a "Product:" line beside "FAN 1: 1200" is any tool's, read by the general reader."""
    assert read.read("Product: X11SSL-F\nFAN 1: 1200\nFAN 2: 1100\n")[1] != \
        "OpenCorsairLink's status of a Corsair device"


def test_a_reply_that_quotes_a_daemons_log_and_the_ecs_fan_file(tmp_path: Path) -> None:
    """Quote marks ("> ") before each line are a reply's, not the capture's: /proc/acpi/ibm/fan and thinkfan's
    lines beneath them are read (fails when the quote marks are kept: nothing is read). thinkfan's last decision is
    said, with the one before it; the fan at level 3 reading 0 RPM is the stall-or-unreported finding."""
    key = next(k for k, text in BLOCKS.items() if "> thinkfan[465]" in text)
    code, answer = explain(BLOCKS[key], tmp_path)
    assert code == 0, answer
    findings = answer["findings"]
    assert isinstance(findings, list)
    found = {f["kind"]: f for f in findings}
    decided = found["daemon-decided"]["facts"]
    assert (decided["level"], decided["celsius"], decided["before_level"], decided["before_c"]) == (3, 54, 7, 67)
    assert found["stalled"]["subjects"] == ["thinkpad/fan1"] and "at-rest" not in found


def test_a_daemons_named_level_is_its_last_decision(tmp_path: Path) -> None:
    """thinkpad-acpi names two levels beside 0-7 (auto, the EC's own control; full-speed, once disengaged, the fan
    unregulated), and thinkfan logs them as set: a log whose last line is full-speed at 81 °C was last decided
    there, not at the numbered level before it (fails when a named level is skipped: level 5 was said as the last)."""
    log = ("thinkfan[812]: Temperatures(bias): 52(0), 48(0) -> Fans: level 2\n"
           "thinkfan[812]: Temperatures(bias): 67(0), 58(0) -> Fans: level 5\n"
           "thinkfan[812]: Temperatures(bias): 81(0), 62(0) -> Fans: level full-speed\n")
    code, answer = explain(log, tmp_path)
    assert code == 0, answer
    decided = next(f for f in findings_of(answer) if f["kind"] == "daemon-decided")["facts"]
    assert (decided["level"], decided["celsius"], decided["before_level"]) == ("full-speed", 81, 5)
    code, answer = explain(log.replace("level full-speed", "level auto"), tmp_path)
    assert next(f for f in findings_of(answer) if f["kind"] == "daemon-decided")["facts"]["level"] == "auto"


def test_fancontrols_start_up_listing_is_the_curve_it_imposes(tmp_path: Path) -> None:
    """`sudo fancontrol` prints the settings it loaded before it starts (lm-sensors' fancontrol, LoadConfig): read
    as the curve it imposes on that output (fails when the listing is taken for a configuration with no output)."""
    text = ("Loading configuration from /etc/fancontrol ...\n\nCommon settings:\n  INTERVAL=10\n\n"
            "Settings for hwmon2/pwm2:\n  Depends on hwmon1/temp1_input\n  Controls hwmon2/fan2_input\n"
            "  MINTEMP=40\n  MAXTEMP=70\n  MINSTART=150\n  MINSTOP=100\n  MINPWM=0\n  MAXPWM=255\n"
            "  FCSQUARE=0\n\nEnabling PWM on fans...\nStarting automatic fan control...\n")
    code, answer = explain(text, tmp_path)
    assert code == 0, answer
    curve = next(f for f in findings_of(answer) if f["kind"] == "daemon-curve")
    facts = curve["facts"]
    assert (facts["daemon"], facts["output"], facts["t0"], facts["t1"], facts["p1"]) == \
        ("fancontrol", "hwmon2 pwm2", 40.0, 70.0, 100.0), curve


def test_a_fan_its_driver_raises_the_alarm_for_is_said_and_no_fault_is_never_claimed() -> None:
    """`sensors` prints ALARM beside a fan whose fanN_alarm is set (hwmon sysfs ABI: a speed under fanN_min): 432
    RPM under a 1,500 RPM minimum is the driver's alarm, a cause, and "no fault" is not said beside it (fails when
    the ALARM flag is not read, or when a fan in alarm still counts as vouched for)."""
    text = ("nct6779-isa-0a30\nAdapter: ISA adapter\nfan1:          0 RPM  (min =    0 RPM)\n"
            "fan2:        987 RPM  (min =    0 RPM)\nfan3:        432 RPM  (min = 1500 RPM)  ALARM\n"
            "fan4:       1210 RPM  (min =    0 RPM)\nCPUTIN:       +38.5°C  (high = +80.0°C, hyst = +75.0°C)\n")
    found = {f.kind: f for f in explained(machine(read.read(text)[0]))[0]}
    assert found["fan-alarm"].subjects == ("nct6779/fan3",) and found["fan-alarm"].facts["min"] == 1500.0
    assert "no-fault" not in found
    quiet = text.replace("  ALARM", "")
    assert "fan-alarm" not in {f.kind for f in explained(machine(read.read(quiet)[0]))[0]}


def test_an_alarm_with_no_minimum_is_a_counter_that_sees_no_pulses_said_once_for_every_fan() -> None:
    """With fanN_min at 0 there is no minimum to be under: an alarm beside 0 RPM is the tachometer counting no
    pulses at all (nct6775.rst: a reading the counter cannot make is invalid, the driver raising the divisor to its
    largest, 128 here). Said once for the three fans, never as a minimum set too high, never as no fault (fails
    when the minimum's 0 is taken for "not read", or when the fans are not joined in one sentence)."""
    text = ("nct6775-isa-0680\nAdapter: ISA adapter\n"
            + "".join(f"fan{n}:           0 RPM  (min =    0 RPM, div = 128)  ALARM\n" for n in (1, 2, 3))
            + "SYSTIN:        +38.0°C  (high =  +0.0°C, hyst =  +0.0°C)  ALARM  sensor = thermistor\n")
    found, sentence, _ = explained(machine(read.read(text)[0]))
    alarms = [f for f in found if f.kind == "fan-alarm"]
    assert len(alarms) == 3 and all(f.facts.get("uncounted") == "yes" and "min" not in f.facts for f in alarms)
    assert "no-fault" not in {f.kind for f in found} and "at-rest" not in {f.kind for f in found}
    assert sentence.startswith("The driver raises the alarm of the nct6775 fan1, nct6775 fan2 and nct6775 fan3 at 0 "
                               "RPM with no minimum set (0): their speed counter sees no pulses at all")
    assert sentence.count("raises the alarm") == 1 and "set above" not in sentence


def test_a_fan_at_full_speed_while_what_it_cools_is_cool_is_held_by_something_else(tmp_path: Path) -> None:
    """The H200's own `nvidia-smi -q -d TEMPERATURE,POWER` (a section listing with no product name and no fan line:
    the fan is not said to be missing) and the same with a "Fan Speed : 100 %" line: full speed at 38 °C is held by
    something other than that temperature (a setting, a controller that lost its sensor, a fault); at 60 % it is
    not (fails when the rule ignores the temperature or the duty)."""
    captures = REFERENCE.parent.parent / "captures"
    text = (captures / "h200-nvidia-smi-q-temperature-power.txt").read_text()
    def found(capture: str) -> list[dict[str, Any]]:
        code, answer = explain(capture, tmp_path)
        assert code == 0 and isinstance(answer["findings"], list), answer
        return answer["findings"]

    assert "gpu-fan-unreported" not in {f["kind"] for f in found(text)}
    full = text.replace("    Temperature\n", "    Fan Speed                                          : 100 %\n"
                        "    Temperature\n", 1)
    lead = found(full)[0]
    assert (lead["kind"], lead["facts"]["duty"], lead["facts"]["source_c"]) == ("full-while-cool", 100, 38), lead
    assert "full-while-cool" not in {f["kind"] for f in found(full.replace(": 100 %", ": 60 %"))}
    hot = full.replace("GPU Current Temp                               : 38 C",
                       "GPU Current Temp                               : 85 C")
    assert hot != full and "full-while-cool" not in {f["kind"] for f in found(hot)}


def test_a_fan_daemon_that_measured_no_range_cannot_regulate_its_fan(tmp_path: Path) -> None:
    """fan2go logs what its initialization measured of each fan (its README: the pwm a fan starts at, stops at and
    turns no faster past): Min 0, Start 0, Max 0 leaves its curve nothing to map onto; fans with a range are not
    said (fails when the range is not compared, or the log is refused as no reading)."""
    key = next(k for k, text in BLOCKS.items() if "PWM settings of fan 'front_high'" in text)
    code, answer = explain(BLOCKS[key], tmp_path)
    assert code == 0, answer
    findings = answer["findings"]
    assert isinstance(findings, list)
    found = [f for f in findings if f["kind"] == "daemon-no-range"]
    assert [f["facts"]["fan"] for f in found] == ["front_high"] and found[0]["facts"]["max"] == 0


def test_a_bmc_fan_under_its_threshold_is_a_quiet_fan_only_just_under_it() -> None:
    """IPMI v2.0 threshold sensors: a fan at or under its lower-critical threshold is one the BMC counts failing. Just
    under a threshold read (400 against 500 RPM) it is most likely a quiet fan the threshold was not set for
    (likely); far under it (150), or with only a critical status and no threshold read, a failing fan stays as likely
    as a quiet one (possible) (fails when "a quiet fan" is said without the threshold that shows it)."""
    def finding(rpm: int, thresholds: bool = True) -> tuple[str, bool]:
        lcr = "500.000" if thresholds else "na"
        text = (f"FAN1             | 1400.000   | RPM        | ok    | 100.000   | 500.000   | na   | na | na | na\n"
                f"FAN3             | {rpm}.000    | RPM        | cr    | 100.000   | {lcr}   | na   | na | na | na\n")
        found = next(f for f in explained(machine(read.read(text)[0]))[0] if f.kind == "below-bmc-threshold")
        return found.confidence, found.facts.get("near") == "yes"

    assert finding(400) == ("likely", True)
    assert finding(150) == ("possible", False)
    assert finding(400, thresholds=False) == ("possible", False)


def test_fans_alike_under_their_threshold_are_said_once(tmp_path: Path) -> None:
    """Two BMC fans at one speed and one status under their threshold (a real `ipmitool sdr type fan`, two front fans
    at 720 RPM reading lcr): a finding each, said once of both, in the plural (``app.fans.words.grouped``); a fan
    alone keeps the singular and its own name in the command (fails when each is said apart: one long sentence
    twice)."""
    code, answer = explain(BLOCKS["ipmi_sdr_sensor_servers-14"], tmp_path)
    found = [f for f in findings_of(answer) if f["kind"] == "below-bmc-threshold"]
    assert code == 0 and [f["subjects"] for f in found] == [["bmc/FRNT_FAN3"], ["bmc/FRNT_FAN4"]]
    sentence = str(answer["sentence"])
    assert sentence.count("720 RPM") == 1 and "turn at 720 RPM" in sentence and "counts them as failing" in sentence
    near = ("FAN1             | 1400.000   | RPM        | ok    | 100.000   | 500.000   | na   | na | na | na\n"
            "FAN3             | 400.000    | RPM        | cr    | 100.000   | 500.000   | na   | na | na | na\n")
    code, answer = explain(near, tmp_path)
    assert "The FAN3 (BMC) turns at 400 RPM" in str(answer["sentence"])
    assert "ipmitool sensor thresh FAN3 lower ...)" in str(answer["sentence"])


@pytest.mark.parametrize(("row", "slow"), [("30 %, 88", True), ("30 %, 62", False), ("75 %, 88", False)])
def test_a_slow_fan_on_a_hot_gpu_is_said_as_held_low(row: str, slow: bool) -> None:
    """A GeForce at 88 °C whose fan is at 30 % (nvidia-smi's CSV layout, values made up): no automatic curve runs a
    fan that slowly there (the card's policy holds a target temperature well under it), so something holds it
    low; at 62 °C, or at 75 % duty, nothing is said (fails when the temperature or the duty is not compared)."""
    text = ("index, name, fan.speed [%], temperature.gpu, power.draw [W], utilization.gpu [%]\n"
            f"0, NVIDIA GeForce RTX 3080, {row}, 320.12 W, 100 %\n")
    kinds = {f.kind for f in explained(machine(read.read(text)[0]))[0]}
    assert ("slow-while-hot" in kinds) is slow, kinds


def test_a_channel_driven_at_a_duty_and_reading_0_is_empty_or_uncounted_never_surely_empty(tmp_path: Path) -> None:
    """A cooler's fan channel at 0 rpm: with no duty read, most likely nothing on it; driven at 100 % it is as
    likely a fan whose speed the cooler does not report (liquidctl's guides: some devices keep a duty on an empty
    channel, some do not count a fan's speed), so both are said, as a guess (fails when a driven channel is judged
    empty as "likely")."""
    cooler = ("Corsair iCUE H150i Elite RGB\n├── Liquid temperature    33.6  °C\n{fans}"
              "├── Pump speed            2498  rpm\n└── Pump duty               75  %\n")
    driven = "".join(f"├── Fan {n} speed              0  rpm\n├── Fan {n} duty             100  %\n" for n in (1, 2))
    code, answer = explain(cooler.format(fans=driven), tmp_path)
    (empty,) = [f for f in findings_of(answer) if f["kind"] == "empty-slots"]
    assert code == 0 and empty["confidence"] == "possible" and empty["facts"]["duty"] == 100 and \
        len(empty["subjects"]) == 2
    assert "or fans whose speed their controller does not count" in str(answer["sentence"])
    bare = "".join(f"├── Fan {n} speed              0  rpm\n" for n in (1, 2))
    code, answer = explain(cooler.format(fans=bare), tmp_path)
    (empty,) = [f for f in findings_of(answer) if f["kind"] == "empty-slots"]
    assert empty["confidence"] == "likely" and "duty" not in empty["facts"]


def test_two_channels_of_one_label_under_one_header_are_two_fans(tmp_path: Path) -> None:
    """sensors(1) prints each feature of a chip once under its header, and dell_smm labels a fan by its type, so a
    Dell with two CPU fans lists "Processor Fan" twice: two fans, not one fan read twice (a real paste, lm-sensors'
    pull request 383). Read as one fan's sequence, a stopped fan beside a turning one was "0, then turning: not a
    missing or dead fan" at 89 °C. The same listing under its header again is the next reading (a sequence); a fan and
    a temperature that share a label (asus-ec-sensors' "Chipset") are each the first of their kind."""
    dell = BLOCKS["sensors_laptops_thinkpad_dell_asus-08"]
    code, answer = explain(dell, tmp_path)
    found = {f["kind"]: f for f in findings_of(answer)}
    assert code == 0 and found["no-fault"]["facts"]["count"] == 3 and len(found["no-fault"]["subjects"]) == 3
    hot = dell.replace("Processor Fan:    710 RPM", "Processor Fan:      0 RPM") + \
        "\ncoretemp-isa-0000\nAdapter: ISA adapter\nPackage id 0:  +89.0°C  (high = +100.0°C, crit = +100.0°C)\n"
    code, answer = explain(hot, tmp_path)
    kinds = {f["kind"]: f for f in findings_of(answer)}
    assert kinds["hot-not-cooled"]["subjects"][0] == "dell_smm/Processor Fan" and "zero-then-turning" not in kinds
    code, answer = explain(BLOCKS["sensors_laptops_thinkpad_dell_asus-14"], tmp_path)  # off, then on: a sequence
    assert "zero-then-turning" in {f["kind"] for f in findings_of(answer)}
    shared = "asusec-isa-0000\nAdapter: ISA adapter\nChipset:     5337 RPM\nChipset:      +67.0°C\nVRM:  +48.0°C\n"
    code, answer = explain(shared, tmp_path)
    hottest = {f["kind"]: f for f in findings_of(answer)}["hottest"]
    assert hottest["subjects"] == ["asusec/Chipset"] and "#2" not in str(answer["sentence"])


def test_a_stop_temperature_is_said_only_where_it_was_read(tmp_path: Path) -> None:
    """No embedded controller documents the temperature it starts its fans at (FAN-RULES, Thresholds): a Dell's 0 RPM
    while cool is its EC's rest, and the chip's cautious bound (70 °C) decides that but is never said as the fan's own
    stop temperature; an AMD card's own stop temperature (gpu_od's fan_zero_rpm_stop_temperature, amdgpu's
    thermal.rst) is read, and said (fails when the bound is said as a known figure)."""
    dell = ("dell_smm-virtual-0\nAdapter: Virtual device\nProcessor Fan:    0 RPM\nCPU:            +41.0°C\n\n"
            "coretemp-isa-0000\nAdapter: ISA adapter\nPackage id 0:  +42.0°C  (high = +100.0°C, crit = +100.0°C)\n")
    code, answer = explain(dell, tmp_path)
    rest = {f["kind"]: f for f in findings_of(answer)}["at-rest"]
    assert code == 0 and rest["confidence"] == "likely" and rest["facts"]["below_known"] == "no"
    assert "70 °C" not in str(answer["sentence"]) and "is not read here" in str(answer["sentence"])
    card = ("card1/device/hwmon/hwmon3/name:amdgpu\ncard1/device/hwmon/hwmon3/fan1_input:0\n"
            "card1/device/hwmon/hwmon3/pwm1_enable:2\ncard1/device/hwmon/hwmon3/temp1_input:44000\n"
            "card1/device/hwmon/hwmon3/temp1_label:edge\ncard1/device/hwmon/hwmon3/temp2_input:47000\n"
            "card1/device/hwmon/hwmon3/temp2_label:junction\n"
            "card1/device/gpu_od/fan_ctrl/fan_zero_rpm_stop_temperature:FAN_ZERO_RPM_STOP_TEMPERATURE: | 55 | "
            "OD_RANGE: | ZERO_RPM_STOP_TEMPERATURE: 50 110\n")
    code, answer = explain(card, tmp_path)
    rest = {f["kind"]: f for f in findings_of(answer)}["at-rest"]
    assert code == 0 and rest["facts"]["below_known"] == "yes" and rest["facts"]["below_c"] == 55.0
    assert "below 55 °C, its own stop temperature" in str(answer["sentence"])
    code, answer = explain(card.replace("temp2_input:47000", "temp2_input:61000"), tmp_path)  # past it, still 0
    warm = {f["kind"]: f for f in findings_of(answer)}["warm-not-turning"]
    assert warm["facts"]["below_known"] == "yes" and "own stop temperature (55 °C)" in str(answer["sentence"])
    code, answer = explain(dell.replace("+42.0°C", "+74.0°C"), tmp_path)  # past the EC's bound: said as a bound
    assert "a cautious 70 °C; its own figure is not read" in str(answer["sentence"])


def test_a_power_supplys_fan_at_0_is_its_own_rest_judged_by_its_own_heat(tmp_path: Path) -> None:
    """A Corsair HXi/RMi supply stops its fan at light load under its own control (liquidctl's corsair-hxi-rmi-psu
    guide shows "Fan control mode Hardware" with 0 rpm): a rest while the supply is cool, never an empty channel,
    judged by the supply's temperatures, not a CPU's elsewhere in the paste (fails when the supply is read as a
    cooler hub: "no fan on it"; or when its source is the 88 °C CPU)."""
    psu = ("coretemp-isa-0000\nAdapter: ISA adapter\nPackage id 0:  +{cpu}°C\n\n"
           "Corsair RM750i\n├── VRM temperature     {vrm}  °C\n├── Case temperature    36.5  °C\n"
           "├── Fan control mode                 Hardware\n├── Fan speed              0  rpm\n"
           "└── Total power           96.00  W\n\n"
           "Corsair Hydro H100i Pro XT\n├── Liquid temperature    31.0  °C\n├── Fan 1 speed   900  rpm\n"
           "└── Pump speed   2300  rpm\n")
    code, answer = explain(psu.format(cpu="88.0", vrm="41.0"), tmp_path)
    found = {f["kind"]: f for f in findings_of(answer)}
    assert code == 0 and found["at-rest"]["facts"]["source_c"] == 41.0 and found["at-rest"]["facts"][
        "below_known"] == "no"
    assert "empty-slots" not in found and "hot-not-cooled" not in found
    assert "while cool; the temperature it starts it at is not read here" in str(answer["sentence"])
    assert "50 °C" not in str(answer["sentence"])  # no figure its controller does not document
    code, answer = explain(psu.format(cpu="45.0", vrm="86.0"), tmp_path)
    assert findings_of(answer)[0]["kind"] == "hot-not-cooled"


REDFISH = {"@odata.type": "#Thermal.v1_6_1.Thermal", "Fans": [
    {"Name": "Fan 1 Tach", "LowerThresholdCritical": 630, "Reading": 0, "ReadingUnits": "RPM", "HotPluggable": True,
     "LowerThresholdFatal": None, "Status": {"Health": "Critical", "State": "Enabled"}},
    {"Name": "Fan 2 Tach", "LowerThresholdCritical": 630, "Reading": 5940, "ReadingUnits": "RPM",
     "Status": {"Health": "OK", "State": "Enabled"}},
    {"Name": "Fan 3 Tach", "Reading": None, "ReadingUnits": "RPM", "Status": {"State": "Absent"}},
    {"Name": "Fan 4 Tach", "LowerThresholdCritical": 630, "Reading": 6120, "ReadingUnits": "RPM",
     "Status": {"Health": "OK", "State": "Enabled"}}],
    "Temperatures": [{"Name": "Ambient Temp", "ReadingCelsius": 24}]}


@pytest.mark.parametrize("shape", ["json", "python", "cut"])
def test_a_redfish_thermal_document_whole_printed_by_python_or_cut_short_is_read(shape: str, tmp_path: Path) -> None:
    """Redfish's Resource.Status: Health "Critical" is the service's own judgement of a fan that is there (a failed
    fan, said first, never fine), State "Absent" a slot with no fan. People paste the document as JSON, as Python
    printed it (pprint of a response: single quotes, True, None) or cut after a screenful; each is read, a cut one up
    to its last whole member (fails when Health is not read, when the Python form or the cut one is refused)."""
    text = json.dumps(REDFISH, indent=4) if shape != "python" else repr(REDFISH)
    if shape == "cut":
        text = text[:text.index('"Fan 4 Tach"') + 40]  # cut inside the fourth fan
    code, answer = explain(text, tmp_path)
    assert code == 0, answer
    found = findings_of(answer)
    assert found[0]["kind"] == "fan-fault" and found[0]["subjects"] == ["bmc/Fan 1 Tach"]
    assert not any(f["kind"] in ("no-fault", "turning", "at-rest") and "bmc/Fan 1 Tach" in f["subjects"]
                   for f in found)
    assert any(f["kind"] == "empty-slots" and "bmc/Fan 3 Tach" in f["subjects"] for f in found)
    read_fans = {f.key for f in machine(read.read(text)[0]).fans}
    assert read_fans >= {"bmc/Fan 1 Tach", "bmc/Fan 2 Tach", "bmc/Fan 3 Tach"}
    assert ("bmc/Fan 4 Tach" in read_fans) is (shape != "cut"), read_fans


def test_a_number_a_cut_ends_on_is_not_read(tmp_path: Path) -> None:
    """The last number before a cut may have lost digits ("fan1_input": 12 of 1278): it is no reading, and a
    document with nothing whole before its cut is refused, saying it is not whole JSON."""
    code, answer = explain('{"nct6798-isa-0290": {"fan1": {"fan1_input": 12', tmp_path)
    assert code == 2 and "not whole JSON" in str(answer["error"])


@pytest.mark.parametrize("text", ["{'Fans': " + "[" * 100_000, "{'Fans': [{'Name': 'x', 'Reading': " + "9" * 100_000
                                  + "}]}", "{'Fans': [{'Reading': __import__('os').getpid()}]}"])
def test_a_hostile_python_printed_document_is_no_reading_never_a_traceback(text: str, tmp_path: Path) -> None:
    """A Python-printed document is read as a literal only (ast.literal_eval: no call, no name): nesting past the
    parser's limit, a 100,000-digit number and a call are no reading, each refused in one line."""
    code, answer = explain(text, tmp_path)
    assert code == 2 and "Traceback" not in str(answer["error"]) and str(answer["error"]).count("\n") == 1


def test_temperatures_sensors_printed_in_fahrenheit_are_read_in_celsius(tmp_path: Path) -> None:
    """``sensors -f`` prints every temperature in °F (sensors(1)): a laptop at 185 °F (85 °C) whose fan reads 0 RPM
    is a hot part without a working fan, said first; its temperatures are never left out as unread (fails when °F
    lines are dropped: the answer becomes "no temperature read", a rest it cannot rule out)."""
    text = ("coretemp-isa-0000\nAdapter: ISA adapter\nPackage id 0:  +185.0°F  (high = +176.0°F, crit = +212.0°F)\n\n"
            "thinkpad-isa-0000\nAdapter: ISA adapter\nfan1:           0 RPM\nCPU:          +185.0°F\n")
    code, answer = explain(text, tmp_path)
    found = findings_of(answer)
    assert code == 0 and found[0]["kind"] == "hot-not-cooled" and found[0]["facts"]["source_c"] == 85.0
    assert "at-rest" not in {f["kind"] for f in found}
    temperatures = answer["temperatures"]
    assert isinstance(temperatures, list) and [t["temperature_c"] for t in temperatures] == [85.0, 85.0]
    assert not answer["left_out"]
    facts = machine(read.read(text.replace("185.0", "104.0"))[0])
    assert [t.celsius for t in facts.temperatures] == [40.0, 40.0]


def thermal_listing(zone_c: float, state: int, mode: str = "enabled") -> str:
    """``grep . /sys/class/thermal/*/*`` of a small board: one zone with an active trip at 70 °C (hysteresis 10 °C)
    and a gpio fan of two states, a processor cooling device beside it (sysfs-api.rst's files, millidegrees)."""
    return ("/sys/class/thermal/cooling_device0/cur_state:0\n/sys/class/thermal/cooling_device0/max_state:3\n"
            "/sys/class/thermal/cooling_device0/type:Processor\n"
            f"/sys/class/thermal/cooling_device1/cur_state:{state}\n/sys/class/thermal/cooling_device1/max_state:1\n"
            "/sys/class/thermal/cooling_device1/type:gpio-fan\n"
            f"/sys/class/thermal/thermal_zone0/mode:{mode}\n/sys/class/thermal/thermal_zone0/policy:step_wise\n"
            f"/sys/class/thermal/thermal_zone0/temp:{round(zone_c * 1000)}\n"
            "/sys/class/thermal/thermal_zone0/trip_point_0_hyst:10000\n"
            "/sys/class/thermal/thermal_zone0/trip_point_0_temp:70000\n"
            "/sys/class/thermal/thermal_zone0/trip_point_0_type:active\n"
            "/sys/class/thermal/thermal_zone0/trip_point_1_temp:85000\n"
            "/sys/class/thermal/thermal_zone0/trip_point_1_type:critical\n"
            "/sys/class/thermal/thermal_zone0/type:cpu-thermal\n")


@pytest.mark.parametrize(("zone_c", "state", "mode", "lead", "confidence"), [
    (74.0, 0, "enabled", "trip-not-followed", "likely"),  # past its trip, off: not bound, or held
    (74.0, 0, "disabled", "trip-not-followed", "known"),  # a disabled zone does not act on its trips
    (74.0, 1, "enabled", "trip-on", "likely"),  # on because the zone is past its trip (the binding is taken)
    (65.0, 1, "enabled", "trip-on", "likely"),  # on in the band: off only below 60 °C
    (55.0, 1, "enabled", "trip-on", "possible"),  # on below the band: something else holds it
    (65.0, 0, "enabled", "at-rest", "likely"),  # off in the band: it turns on at 70 °C
    (47.0, 0, "enabled", "at-rest", "likely"),
])
def test_a_kernel_thermal_zone_turns_its_fan_on_at_its_active_trip(zone_c: float, state: int, mode: str, lead: str,
                                                                   confidence: str, tmp_path: Path) -> None:
    """The kernel's thermal framework (Documentation/driver-api/thermal/sysfs-api.rst; thermal-zones.yaml): a zone
    turns the cooling devices bound to an active trip on when its temperature reaches the trip and off once it is
    below the trip less its hysteresis. A fan cooling device off past the trip is the kernel not acting, never at
    rest; off in the band below the trip is the design; a Processor cooling device is no fan (fails when the trip,
    its hysteresis, the zone's mode or the device's type is not read)."""
    code, answer = explain(thermal_listing(zone_c, state, mode), tmp_path)
    found = findings_of(answer)
    assert code == 0 and (found[0]["kind"], found[0]["confidence"]) == (lead, confidence), found
    assert found[0]["subjects"][0] == "cooling_device1/fan"
    kinds = {f["kind"] for f in found}
    assert "warm-not-turning" not in kinds and ("at-rest" not in kinds or (state == 0 and zone_c < 70))
    assert not any("cooling_device0" in s for f in found for s in f["subjects"])  # the processor: no fan
    if lead == "trip-on" and confidence == "likely":
        assert found[0]["facts"]["band"] == ("yes" if zone_c < 70 else "no") and found[0]["facts"]["off_below"] == 60


def test_a_listing_of_hwmon_and_thermal_files_reads_both(tmp_path: Path) -> None:
    """One grep over /sys/class/hwmon and /sys/class/thermal: the hwmon fan and the zone are both read."""
    text = ("/sys/class/hwmon/hwmon2/name:pwmfan\n/sys/class/hwmon/hwmon2/fan1_input:3120\n"
            "/sys/class/hwmon/hwmon2/pwm1:153\n" + thermal_listing(74.0, 1))
    facts = machine(read.read(text)[0])
    assert {f.key for f in facts.fans} == {"pwmfan/fan1", "cooling_device1/fan"}
    assert [t.celsius for t in facts.temperatures] == [74.0]


def test_golden_sentences_of_a_thermal_zones_trip(tmp_path: Path) -> None:
    _, answer = explain(thermal_listing(74.0, 0), tmp_path)
    assert str(answer["sentence"]).startswith(
        "The kernel's thermal zone cpu-thermal (thermal_zone0) is at 74 °C, past its active trip at 70 °C, yet the "
        "gpio-fan (cooling_device1) is off (state 0 of 1): the kernel is not turning it on: the fan is most likely not "
        "bound to this trip (no cooling map for it), or a program holds its state; check that it spins.")
    _, answer = explain(thermal_listing(65.0, 1), tmp_path)
    assert str(answer["sentence"]).startswith(
        "The gpio-fan (cooling_device1) is on (state 1 of 1) because the kernel's thermal zone cpu-thermal "
        "(thermal_zone0) at 65 °C is under its active trip at 70 °C but not yet below 60 °C, where the kernel turns "
        "it off again.")



@pytest.mark.parametrize("indent", ["  ", "Sensors:   "])
def test_inxis_sensors_lines_are_read_fans_and_temperatures_with_their_driver(indent: str, tmp_path: Path) -> None:
    """inxi (inxi -Fxz, the paste forums ask for) prints "System Temperatures: cpu: 84.0 C mobo: N/A" and "Fan
    Speeds (rpm): cpu: 0 ...", with "gpu: amdgpu" naming the driver of the reading after it. A CPU at 84 °C whose
    fan reads 0 RPM is a part without working cooling; the card's fan at 0 while it is at 41 °C is its zero-RPM rest
    (fails when the fan line is not read: "no fan is read here")."""
    hot = f"{indent}System Temperatures: cpu: 84.0 C pch: 62.0 C mobo: N/A\n  Fan Speeds (rpm): cpu: 0\n"
    code, answer = explain("Sensors:\n" + hot if indent == "  " else hot, tmp_path)
    found = findings_of(answer)
    assert code == 0 and found[0]["kind"] == "hot-not-cooled" and found[0]["facts"]["source_c"] == 84.0, found
    card = (f"{indent}System Temperatures: cpu: 45.5 C mobo: 27.8 C gpu: amdgpu temp: 41.0 C\n"
            "           Fan Speeds (RPM): fan-1: 0 fan-2: 1045 gpu: amdgpu fan: 0\n")
    facts = machine(read.read(card)[0])
    assert {(f.chip, f.label, f.rpm) for f in facts.fans} == {(None, "fan-1", 0.0), (None, "fan-2", 1045.0),
                                                              ("amdgpu", "fan", 0.0)}
    assert {(t.chip, t.celsius) for t in facts.temperatures} == {(None, 45.5), (None, 27.8), ("amdgpu", 41.0)}
    code, answer = explain(card, tmp_path)
    assert any(f["kind"] == "at-rest" and f["subjects"] == ["amdgpu/fan"] for f in findings_of(answer))


def test_inxis_nvidia_fan_duty_and_its_wrapped_fan_line(tmp_path: Path) -> None:
    """inxi prints an NVIDIA card's fan as a duty ("gpu: nvidia fan: 29%", as forum pastes of inxi 3.x show it) and
    wraps a long fan line onto the next ("    fan-6: 0 fan-7: 0 gpu: nvidia fan: 0%"). The card's fan and its
    temperature are the card's (as nvidia-smi's fields): at 0 % beside the card at 81 °C, a part without working
    cooling (fails when the duty is dropped: it was, and the answer named only the CPU fan); the wrapped fans are
    read (they were lost)."""
    hot = ("Sensors:\n  System Temperatures: cpu: 45.0 C mobo: 38.0 C gpu: nvidia temp: 81 C\n"
           "  Fan Speeds (rpm): cpu: 1400 case-1: 900 gpu: nvidia fan: 0%\nInfo:\n  Processes: 378\n")
    facts = machine(read.read(hot)[0])
    assert [(g.index, g.temperature_c, g.fan_percent) for g in facts.gpus] == [(0, 81.0, 0.0)]
    code, answer = explain(hot, tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and lead["kind"] == "hot-not-cooled" and lead["facts"]["source_c"] == 81.0, lead
    wrapped = ("Sensors:\n  System Temperatures: cpu: 16.0 C mobo: 31.0 C gpu: nvidia temp: 40 C\n"
               "  Fan Speeds (rpm): fan-1: 994 fan-2: 563 fan-3: 0 fan-4: 0 fan-5: 0\n"
               "    fan-6: 0 fan-7: 0 gpu: nvidia fan: 29%\nRepos:\n  Packages: 2539 pm: dpkg pkgs: 2529\n")
    facts = machine(read.read(wrapped)[0])
    assert sorted(f.label for f in facts.fans if f.chip is None) == [f"fan-{n}" for n in range(1, 8)]
    assert [(g.index, g.fan_percent) for g in facts.gpus] == [(0, 29.0)]


def test_hddtemps_drives_are_storage_temperatures(tmp_path: Path) -> None:
    """hddtemp(8) prints "/dev/sda: WDC WD40EFRX-68N32N0: 52°C", the model between the device and its temperature,
    and "drive is sleeping" for a drive it did not wake: each read drive a storage temperature, a sleeping one none
    (fails when the line is taken as a path's reading: it was, and the paste was refused)."""
    text = ("$ sudo hddtemp /dev/sd[abc]\n/dev/sda: WDC WD40EFRX-68N32N0: 52°C\n/dev/sdb: ST4000VN008-2DR166: 55 C\n"
            "/dev/sdc: ST4000VN008-2DR166: drive is sleeping\n")
    facts = machine(read.read(text)[0])
    assert [(t.label, t.celsius, t.role) for t in facts.temperatures] == [("/dev/sda", 52.0, "storage"),
                                                                         ("/dev/sdb", 55.0, "storage")]
    code, answer = explain(text, tmp_path)
    assert code == 0 and findings_of(answer)[-1]["kind"] == "no-fan-read"


def test_hps_hpasmcli_fans_and_temperatures_are_the_bmcs(tmp_path: Path) -> None:
    """hpasmcli(8)'s "show fans" (a slot, present or not, its share of its maximum) and "show temp" (°C/°F, a
    threshold): each fan a BMC fan at its duty, an absent slot no fan, each zone a temperature (fails when the
    table is not read: "not a capture FanWhy reads")."""
    text = ("Fan  Location        Present Speed  of max  Redundant  Partner  Hot-pluggable\n"
            "---  --------        ------- -----  ------  ---------  -------  -------------\n"
            "#1   SYSTEM          Yes     NORMAL  45%     Yes        0        Yes\n"
            "#2   SYSTEM          Yes     HIGH    100%    Yes        0        Yes\n"
            "#3   SYSTEM          No      -       N/A     No         0        Yes\n\n"
            "Sensor   Location              Temp       Threshold\n"
            "------   --------              ----       ---------\n"
            "#1        PROCESSOR_ZONE       40C/104F   95C/203F\n"
            "#2        CPU#1                61C/141F   95C/203F\n"
            "#3        I/O_ZONE             -          -\n")
    facts = machine(read.read(text)[0])
    assert {(f.label, f.duty_percent, f.present) for f in facts.fans} == {
        ("Fan 1 SYSTEM", 45.0, None), ("Fan 2 SYSTEM", 100.0, None), ("Fan 3 SYSTEM", None, False)}
    assert {(t.label, t.celsius) for t in facts.temperatures} == {("PROCESSOR_ZONE (sensor 1)", 40.0),
                                                                  ("CPU#1 (sensor 2)", 61.0)}
    code, answer = explain(text, tmp_path)
    assert code == 0
    # a slot the controller reports empty, beside fans it runs at a share of their maximum (no speed read), is said
    empty = [f for f in findings_of(answer) if f["kind"] == "empty-slots"]
    assert [f["subjects"] for f in empty] == [["bmc/Fan 3 SYSTEM"]], findings_of(answer)


def test_freeipmis_event_column_is_the_bmcs_status(tmp_path: Path) -> None:
    """ipmi-sensors(8) (FreeIPMI) says a threshold sensor's state in its Event column: a fan turning at 300 RPM "At
    or Below (<=) Lower Non-Recoverable Threshold" is one the BMC counts as failing, never "no fault" (fails when the
    Event column is not read: the fan was "running" beside "neither fan reports a fault")."""
    text = ("ID  | Name            | Type                     | Reading    | Units | Event\n"
            "4   | CPU Temp        | Temperature              | 42.00      | C     | 'OK'\n"
            "41  | FAN1            | Fan                      | 1500.00    | RPM   | 'OK'\n"
            "43  | FAN3            | Fan                      | 300.00     | RPM   | "
            "'At or Below (<=) Lower Non-Recoverable Threshold'\n")
    code, answer = explain(text, tmp_path)
    found = findings_of(answer)
    assert code == 0 and found[0]["kind"] == "below-bmc-threshold" and found[0]["subjects"] == ["bmc/FAN3"]
    assert "no-fault" not in {f["kind"] for f in found}


def test_dells_racadm_getsensorinfo_is_read_by_its_columns(tmp_path: Path) -> None:
    """racadm getsensorinfo (Dell's RACADM CLI guide): rows under "<Sensor Name> <Status> <Reading> <lc> ..."
    headers, names with spaces; a fan the iDRAC calls Critical at 0 RPM is a failed fan, said first (fails when the
    listing is refused, or its Status column is not read)."""
    text = ("Sensor Type : FAN\n"
            "<Sensor Name>                   <Status>        <Reading>       <lc>            <uc>            <PST>\n"
            "System Board Fan1A              Ok              6480 RPM        720 RPM         NA              Present\n"
            "System Board Fan2A              Critical        0 RPM           720 RPM         NA              Present\n"
            "System Board Fan3A              Ok              0 RPM           720 RPM         NA              Absent\n"
            "\nSensor Type : TEMPERATURE\n"
            "<Sensor Name>                   <Status>        <Reading>       <lc>            <uc>\n"
            "CPU1 Temp                       Ok              58C             3C              93C\n")
    facts = machine(read.read(text)[0])
    assert {(f.label, f.rpm, f.lower_critical_rpm, f.present) for f in facts.fans} == {
        ("System Board Fan1A", 6480.0, 720.0, None), ("System Board Fan2A", 0.0, 720.0, None),
        ("System Board Fan3A", 0.0, 720.0, False)}
    assert [(t.label, t.celsius) for t in facts.temperatures] == [("CPU1 Temp", 58.0)]
    code, answer = explain(text, tmp_path)
    assert code == 0 and findings_of(answer)[0]["kind"] == "fan-fault" and findings_of(answer)[0]["subjects"] == [
        "bmc/System Board Fan2A"]


def test_tlp_stat_ectool_and_nbfc_are_read(tmp_path: Path) -> None:
    """Laptop tools' own listings: tlp-stat -t ("CPU temp = 88 [°C]", "Fan speed = 4620 [/min]"), ectool's
    temperatures in kelvin ("1: 355 K", the ChromiumOS EC's unit) beside "Fan 0 RPM: 0", and nbfc status (its
    temperature, each fan's current speed in %, auto control or a speed set by hand). Each was refused."""
    tlp = machine(read.read("+++ Temperatures\nCPU temp               =    48 [°C]\n"
                            "Fan speed              =  4620 [/min]\n")[0])
    assert [(f.label, f.rpm) for f in tlp.fans] == [("Fan", 4620.0)] and tlp.temperatures[0].celsius == 48.0
    code, answer = explain("$ sudo ectool pwmgetfanrpm\nFan 0 RPM: 0\n$ sudo ectool temps all\n0: 352 K\n"
                           "1: 355 K\n", tmp_path)
    found = findings_of(answer)
    assert code == 0 and found[0]["kind"] == "hot-not-cooled" and round(found[0]["facts"]["source_c"]) == 82
    status = ("Temperature                   : 57.00\n\nFan display name              : CPU fan\n"
              "Auto control enabled          : {auto}\nCurrent fan speed             : 45.00\n"
              "Target fan speed              : 45.00\n")
    by_hand = machine(read.read(status.format(auto="false"))[0])
    assert [(f.label, f.duty_percent, f.controller) for f in by_hand.fans] == [("CPU fan", 45.0, "manual")]
    assert [f.controller for f in machine(read.read(status.format(auto="true"))[0]).fans] == ["daemon"]
    assert by_hand.temperatures[0].celsius == 57.0 and by_hand.temperatures[0].role == "cpu"


def test_a_fan_its_driver_gives_no_value_is_unknown_and_said_with_the_heat(tmp_path: Path) -> None:
    """sensors prints N/A where reading fanN_input fails (the hwmon ABI lets a read return an error): the fan's
    speed is unknown, said with the CPU's 88 °C, never "no fan is read" (fails when N/A is taken for no channel)."""
    text = "thinkpad-isa-0000\nAdapter: ISA adapter\nfan1:           N/A\nCPU:          +{c}°C\n"
    code, answer = explain(text.format(c="88.0"), tmp_path)
    found = findings_of(answer)
    assert code == 0 and found[0]["kind"] == "speed-not-a-reading" and found[0]["facts"]["hot"] == "yes"
    assert "no-fan-read" not in {f["kind"] for f in found}
    _, answer = explain(text.format(c="45.0"), tmp_path)
    assert findings_of(answer)[0]["kind"] == "speed-not-a-reading" and "hot" not in findings_of(answer)[0]["facts"]


def test_acpis_thermal_zones_are_temperatures() -> None:
    """acpi -t (acpi(1)): "Thermal 0: ok, 88.0 degrees C", the firmware's zones (it was refused)."""
    facts = machine(read.read("Thermal 0: ok, 88.0 degrees C\nThermal 1: critical, 101.5 degrees C\n")[0])
    assert [(t.label, t.celsius) for t in facts.temperatures] == [("Thermal 0", 88.0), ("Thermal 1", 101.5)]


def test_acpis_cooling_devices_are_the_kernels_fans() -> None:
    """acpi -c (and -V): "Cooling 0: Fan 0 of 1" is a kernel cooling device of the fan type at its state 0 of 1, as
    /sys/class/thermal's cooling_device0 (its Processor and LCD devices are no fans). Off beside a zone at 84 °C, it
    is said as a part without working cooling, never at rest (the fan was not read: "no fan is read here")."""
    text = ("Thermal 0: ok, 27.8 degrees C\nThermal 1: ok, 84.0 degrees C\nCooling 0: Fan 0 of 1\n"
            "Cooling 1: Processor 0 of 10\nCooling 2: LCD 5 of 15\n")
    facts = machine(read.read(text)[0])
    (fan,) = facts.fans
    assert (fan.key, fan.duty_percent) == ("cooling_device0/fan", 0.0)
    found, _, _ = explained(facts)
    assert found[0].kind == "hot-not-cooled" and not {"at-rest", "no-fault"} & {f.kind for f in found}


def test_turbostats_core_and_package_temperatures() -> None:
    """turbostat(8)'s CoreTmp and PkgTmp columns: the package's from the summary row, each core's once (its
    hyperthread's row leaves it out), each interval a snapshot (the table was refused)."""
    header = "Core\tCPU\tBusy%\tBzy_MHz\tCoreTmp\tPkgTmp\tPkgWatt\n"
    rows = "-\t-\t99.62\t2394\t{core}\t{pkg}\t44.95\n0\t0\t99.61\t2394\t{core}\t{pkg}\t44.95\n0\t4\t99.63\t2394\n"
    readings, kind = read.read(header + rows.format(core=97, pkg=99) + header + rows.format(core=71, pkg=72))
    assert kind == "turbostat's table (CoreTmp, PkgTmp)"
    assert [(r.label, r.value, r.snapshot) for r in readings] == [
        ("Package id 0", 99.0, 0), ("Core 0", 97.0, 0), ("Package id 0", 72.0, 1), ("Core 0", 71.0, 1)]



@pytest.mark.parametrize("degrees", ["Â°C".encode(), "ºC".encode(), "˚C".encode(), "℃".encode(), b"\xb0C",
                                     "\u00a0°C".encode()])
def test_a_degree_sign_another_encoding_wrote_is_still_a_temperature(degrees: bytes, tmp_path: Path) -> None:
    """Pastes carry "°" as "Â°" (UTF-8 read as Latin-1 and written again), a lone Latin-1 byte, a look-alike (º, ˚),
    "℃", or after a no-break space: each is read as °C (the temperatures were dropped, the hot CPU unseen)."""
    path = tmp_path / "capture.txt"
    path.write_bytes(b"k10temp-pci-00c3\nAdapter: PCI adapter\nTctl:         +88.0" + degrees + b"\n\n"
                     b"nct6798-isa-0290\nAdapter: ISA adapter\nfan1:         612 RPM  (min =    0 RPM)\n")
    out, err = io.StringIO(), io.StringIO()
    assert run([path], as_json=True, out=out, err=err) == 0, err.getvalue()
    answer = json.loads(out.getvalue())
    assert any(f["kind"] == "hottest" and f["facts"]["celsius"] == 88.0 for f in findings_of(answer))


def test_a_decimal_comma_sensors_printed_in_its_locale_is_read(tmp_path: Path) -> None:
    """sensors prints in the user's locale ("+88,0°C", "+0,86 V" in German or French): the CPU's 88 °C beside a fan
    at 0 RPM is said; a thousands comma ("1,234 RPM") is one number, never 1.234, and a CSV row ("12,34,56") is left
    as it is (fails when
    the comma is not read as the decimal mark: the temperatures were dropped and the fan called a possible rest)."""
    text = ("coretemp-isa-0000\nAdapter: ISA adapter\nPackage id 0:  +88,0°C  (high = +80,0°C, crit = +100,0°C)\n\n"
            "thinkpad-isa-0000\nAdapter: ISA adapter\nfan1:           0 RPM\nCPU:          +88,0°C\n")
    code, answer = explain(text, tmp_path)
    assert code == 0 and findings_of(answer)[0]["kind"] == "hot-not-cooled"
    assert findings_of(answer)[0]["facts"]["source_c"] == 88.0
    path = tmp_path / "other.txt"
    path.write_text("fan1: 1,234 RPM\nrow: 12,34,56\n")
    assert text_of(path) == "fan1: 1234 RPM\nrow: 12,34,56"


def test_sensors_output_whose_line_breaks_were_lost_reads_as_the_lines_it_was() -> None:
    """A forum that joins lines turns sensors' output into one line: each chip header inside it starts its chip again,
    so the fans are the board's (nct6798's, whose 0 RPM headers are empty) and the CPU is k10temp's, as in the
    output it was (fails when the line is read as one: labels "ISA adapter fan1", "RPM) fan2", no chips)."""
    lines = ("k10temp-pci-00c3\nAdapter: PCI adapter\nTctl:         +91.0°C\n\nnct6798-isa-0290\nAdapter: ISA adapter\n"
             "fan1:           0 RPM  (min =    0 RPM)\nfan2:         640 RPM  (min =    0 RPM)\n"
             "CPUTIN:       +45.0°C\n")
    joined = " ".join(part.strip() for part in lines.splitlines() if part.strip())
    def facts(text: str) -> set[tuple[str | None, str, float | None]]:
        read_as = machine(read.read(text)[0])
        return {(f.chip, f.label, f.rpm) for f in read_as.fans} | {(t.chip, t.label, t.celsius)
                                                                   for t in read_as.temperatures}
    assert facts(joined) == facts(lines) and ("nct6798", "fan2", 640.0) in facts(joined)


def test_pwmconfigs_test_with_no_correlation_says_the_output_drives_no_fan(tmp_path: Path) -> None:
    """pwmconfig(8) sets each pwm output to 0 and watches every fan input: an output after which every fan reads "no
    correlation" drives none of the fans read (BIOS control overriding the register, an unwired output); an output a
    fan followed is not said so (fails when pwmconfig's test is refused, or a correlated output is reported)."""
    text = ("Testing pwm control hwmon2/pwm1 ...\n  hwmon2/fan1_input ... speed was 1078 now 1079\n"
            "    no correlation\n  hwmon2/fan2_input ... speed was 0 now 0\n    no correlation\n\n"
            "No correlations were detected.\n\nTesting pwm control hwmon2/pwm2 ...\n"
            "  hwmon2/fan1_input ... speed was 1078 now 420\n    It appears that fan hwmon2/fan1_input\n"
            "    is controlled by pwm hwmon2/pwm2\n")
    code, answer = explain(text, tmp_path)
    (found,) = [f for f in findings_of(answer) if f["kind"] == "daemon-no-range"]
    assert code == 0 and found["facts"]["fan"] == "hwmon2/pwm1" and found["facts"]["how"] == "no-correlation"
    assert (found["facts"]["was"], found["facts"]["now"], found["facts"]["fans"]) == (1078, 1079, 2)
    assert "pwmconfig set hwmon2/pwm1 to 0 and none of the 2 fans it reads slowed" in str(answer["sentence"])


def test_an_nvidia_fan_past_100_percent_is_a_duty(tmp_path: Path) -> None:
    """nvidia-smi(1): fan.speed "may exceed 100% in certain cases": 110 % on a card at 45 °C is a fan held past
    full while cool, not a value thrown away (fails with the 100 % cap: the card's fan had no duty at all)."""
    code, answer = explain("index, name, fan.speed [%], temperature.gpu, power.draw [W]\n"
                           "0, NVIDIA GeForce RTX 2080 Ti, 110 %, 45, 60.00 W\n", tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and lead["kind"] == "full-while-cool" and lead["facts"]["duty"] == 110


SDR = ("Fan1 RPM         | 30h | ok  |  7.1 | 9840 RPM\nFan2 RPM         | 31h | ok  |  7.1 | 9720 RPM\n"
       "Inlet Temp       | 04h | ok  |  7.1 | 21 degrees C\n")


@pytest.mark.parametrize(("settings", "effect"), [
    ("ThirdPartyPCIFanResponse=Enabled\nFanSpeedOffset=Off\nMinimumFanSpeed=255\n", "pcie-card"),
    ("ThirdPartyPCIFanResponse=Disabled\nFanSpeedOffset=Off\nMinimumFanSpeed=255\n", None),
    ("ThirdPartyPCIFanResponse=Disabled\nFanSpeedOffset=High\nMinimumFanSpeed=255\n", "offset"),
    ("ThirdPartyPCIFanResponse=Disabled\nFanSpeedOffset=Off\nMinimumFanSpeed=60\n", "floor"),
    ("ThermalProfile=Maximum Performance\n", "performance"),
    ("# ipmitool raw 0x30 0x45 0x00\n 01\n", None),  # an OEM answer no vendor documents is not read as a setting
])
def test_a_bmcs_own_fan_settings_are_said_as_what_they_impose(settings: str, effect: str | None,
                                                               tmp_path: Path) -> None:
    """Dell's RACADM guide (System.ThermalSettings: a third-party PCIe card's cooling response, a fan speed offset, a
    minimum fan speed, 255 meaning none, the thermal profile): a setting that runs every fan faster is the answer,
    before the fans' speeds; a setting that leaves them to the temperatures is not said (fails when a setting is not
    read, or one at its default is said)."""
    code, answer = explain(settings + SDR, tmp_path)
    found = [f for f in findings_of(answer) if f["kind"] == "bmc-setting"]
    assert code == 0 and [f["facts"]["effect"] for f in found] == ([effect] if effect else [])
    if effect:
        assert findings_of(answer)[0]["kind"] == "bmc-setting"


def test_librehardwaremonitors_report_is_read_by_its_sensor_identifiers(tmp_path: Path) -> None:
    """LibreHardwareMonitor's report (what FanControl users paste): "+- Name : value min max (/hardware/n/kind/i)",
    the identifier naming the kind (fan RPM, control %, temperature °C) and the chip; a fan and the control of the
    same number are one channel. An NVIDIA card's fan at 0 at 45 °C is its fan-stop rest; the board's CPU at 88 °C is
    read (fails when the report is refused, or its controls are read as fans of their own)."""
    text = ("Sensors\n|\n+- ASUS ROG STRIX B550-F GAMING (/motherboard)\n|  +- Nuvoton NCT6798D (/lpc/nct6798d/0)\n"
            "|  |  +- CPU              :       88       41       91 (/lpc/nct6798d/0/temperature/0)\n"
            "|  |  +- Fan #2           :  1071.42  1052.63  1090.91 (/lpc/nct6798d/0/fan/1)\n"
            "|  |  +- Fan Control #2   :       45       30       45 (/lpc/nct6798d/0/control/1)\n"
            "+- NVIDIA GeForce RTX 3070 (/gpu-nvidia/0)\n"
            "|  +- GPU Core         :       45       40       47 (/gpu-nvidia/0/temperature/0)\n"
            "|  +- GPU Fan 1        :        0        0        0 (/gpu-nvidia/0/fan/1)\n"
            "|  +- GPU Fan          :        0        0        0 (/gpu-nvidia/0/control/1)\n")
    facts = machine(read.read(text)[0])
    assert {(f.chip, f.rpm, f.duty_percent) for f in facts.fans} == {("nct6798d", 1071.42, 45.0),
                                                                     ("gpu-nvidia", 0.0, 0.0)}
    assert {(t.chip, t.celsius, t.role) for t in facts.temperatures} == {("nct6798d", 88.0, "cpu"),
                                                                         ("gpu-nvidia", 45.0, "gpu")}
    code, answer = explain(text, tmp_path)
    assert code == 0 and any(f["kind"] == "at-rest" and f["subjects"] == ["gpu-nvidia/fan2"]
                             for f in findings_of(answer))


def test_omreports_probe_blocks_are_sensors_their_thresholds_are_not(tmp_path: Path) -> None:
    """Dell OpenManage's omreport chassis fans: a block per probe (Status, Probe Name, Reading, Minimum Failure
    Threshold). A probe Critical at 0 RPM is a failed fan; a threshold is never a fan of its own (it was read as a
    running "Minimum Failure Threshold" fan beside a failed fan said as possibly unplugged)."""
    text = ("Fan Probes Information\nProbe List\nIndex                     : 0\nStatus                    : Ok\n"
            "Probe Name                : System Board Fan1 RPM\nReading                   : 2880 RPM\n"
            "Minimum Failure Threshold : 600 RPM\n\nIndex                     : 1\n"
            "Status                    : Critical\n"
            "Probe Name                : System Board Fan2 RPM\nReading                   : 0 RPM\n"
            "Minimum Failure Threshold : 600 RPM\n")
    facts = machine(read.read(text)[0])
    assert {(f.label, f.rpm, f.lower_critical_rpm, f.fault) for f in facts.fans} == {
        ("System Board Fan1 RPM", 2880.0, 600.0, None), ("System Board Fan2 RPM", 0.0, 600.0, True)}
    code, answer = explain(text, tmp_path)
    assert code == 0 and findings_of(answer)[0]["kind"] == "fan-fault"


def test_a_reading_s_limits_in_labelled_lines_are_not_fans() -> None:
    """"Minimum Failure Threshold: 600 RPM" and "Maximum Warning Threshold: 9000 RPM" are a fan's limits, not fans:
    no invariant allows a limit to be read as a reading (fails when they become two "running" fans)."""
    facts = machine(read.read("Fan1 Reading: 2880 RPM\nMinimum Failure Threshold: 600 RPM\n"
                              "Maximum Warning Threshold: 9000 RPM\nCPU Temp: 45 C\nCritical temperature: 100 C\n"
                              "Emergency temp: 105 C\n")[0])
    assert [(f.label, f.rpm) for f in facts.fans] == [("Fan1 Reading", 2880.0)]
    assert [(t.label, t.celsius) for t in facts.temperatures] == [("CPU Temp", 45.0)]


@pytest.mark.parametrize(("log", "event"), [
    ("Enabling PWM on fans...\nStarting automatic fan control...\n"
     "/usr/sbin/fancontrol: line 649: echo: write error: Invalid argument\n"
     "Error writing PWM value to /sys/class/hwmon/hwmon1/pwm1\nAborting, restoring fans...\n"
     "Verify fans have returned to full speed\n", "aborted"),
    ("fancontrol[812]: Configuration appears to be outdated, please run pwmconfig again\n"
     "systemd[1]: fancontrol.service: Main process exited, code=exited, status=1/FAILURE\n", "outdated"),
    ("fancontrol[812]: Enabling PWM on fans...\nfancontrol[812]: Starting automatic fan control...\n", None),
    # CheckFiles: a file the configuration names is not there (lm-sensors/lm-sensors#199's lines, alone)
    ("Error: file hwmon1/pwm3 doesn't exist\nError: file hwmon1/pwm4 doesn't exist\n"
     "Error: file hwmon1/pwm2 doesn't exist\n", "missing"),
])
def test_a_fan_daemon_that_stopped_is_the_answer(log: str, event: str | None, tmp_path: Path) -> None:
    """The lm-sensors fancontrol script: on an error it prints "Aborting, restoring fans...", sets every output it
    drove to full speed and exits ("Verify fans have returned to full speed"); it refuses a configuration whose
    hwmon devices changed. Either is the answer, with the error it printed (fails when its log is refused, or a
    running fancontrol is said to have stopped)."""
    code, answer = explain(log, tmp_path)
    stopped = [f for f in findings_of(answer) if f["kind"] == "daemon-stopped"] if code == 0 else []
    assert [f["facts"]["event"] for f in stopped] == ([event] if event else [])
    if event == "aborted":
        assert stopped[0]["facts"]["detail"] == "Error writing PWM value to /sys/class/hwmon/hwmon1/pwm1"
        assert findings_of(answer)[0]["kind"] == "daemon-stopped"


def test_amd_smis_metric_text_keeps_each_cards_readings_its_own(tmp_path: Path) -> None:
    """amd-smi metric prints "GPU: 0" at the margin and the card's FAN and TEMPERATURE sections under it: each card's
    fan is judged by its own temperatures (GPU 0's fan at 0 RPM while GPU 0 is at 40 °C is its zero-RPM rest, though
    GPU 1 is at 52 °C); fails when the cards' readings merge into one "FAN" and one "TEMPERATURE HOTSPOT"."""
    text = ("GPU: 0\n    FAN:\n        SPEED: 0\n        MAX: 255\n        RPM: 0\n        USAGE: 0.0 %\n"
            "    TEMPERATURE:\n        EDGE: 32 °C\n        HOTSPOT: 36 °C\n        MEM: 40 °C\n"
            "GPU: 1\n    FAN:\n        RPM: 1450\n    TEMPERATURE:\n        EDGE: 41 °C\n        HOTSPOT: 52 °C\n")
    facts = machine(read.read(text)[0])
    assert {(f.chip, f.label, f.rpm) for f in facts.fans} == {("amdgpu", "GPU 0 FAN", 0.0),
                                                              ("amdgpu", "GPU 1 FAN", 1450.0)}
    code, answer = explain(text, tmp_path)
    (rest,) = [f for f in findings_of(answer) if f["kind"] == "at-rest"]
    assert code == 0 and rest["subjects"] == ["amdgpu/GPU 0 FAN"] and rest["facts"]["source_c"] == 40.0


def test_supermicros_ipmicfg_table_is_read_by_its_header(tmp_path: Path) -> None:
    """ipmicfg -sdr: "Status | (#)Sensor | Reading | Low Limit | High Limit": each row a sensor by its name (its
    number in parentheses dropped), its reading, its status ("Crit.") and its low limit as the lower-critical
    threshold. A limit is never a reading and a status never a name (the rows were read as fans named "OK" and
    "Crit." at 25,300 RPM, the high limit, beside "neither fan reports a fault")."""
    text = (" Status | (#)Sensor        | Reading    | Low Limit  | High Limit |\n"
            " ------ | ---------        | -------    | ---------  | ---------- |\n"
            " OK     | (4) CPU Temp     | 36C/97F    | 0C/32F     | 95C/203F   |\n"
            " OK     | (17) FAN1        | 1900 RPM   | 300 RPM    | 25300 RPM  |\n"
            " Crit.  | (19) FAN3        | 200 RPM    | 300 RPM    | 25300 RPM  |\n")
    facts = machine(read.read(text)[0])
    assert {(f.label, f.rpm, f.lower_critical_rpm, f.status) for f in facts.fans} == {
        ("FAN1", 1900.0, 300.0, "ok"), ("FAN3", 200.0, 300.0, "critical")}
    assert [(t.label, t.celsius) for t in facts.temperatures] == [("CPU Temp", 36.0)]
    code, answer = explain(text, tmp_path)
    found = findings_of(answer)
    assert code == 0 and found[0]["kind"] == "below-bmc-threshold" and "no-fault" not in {f["kind"] for f in found}


def test_a_markdown_table_of_another_tool_is_not_read_as_ipmitools() -> None:
    """With no header it knows, a | row is ipmitool's only where its cells are what ipmitool puts there (a status
    word, a sensor id, an entity): a post's table of settings is no reading (it was read by position as BMC fans)."""
    text = ("| Setting | Before | After |\n|---|---|---|\n| Fan curve | 30 % | 100 % |\n"
            "| Fan Speed | 1200 RPM | 3000 RPM |\n| Max | 95 C | 80 C |\n")
    assert not machine(read.read(text)[0]).fans


def test_one_fan_is_given_one_cause_in_the_sentence(tmp_path: Path) -> None:
    """A fan asked for 45 % that reads 0 RPM on a card at 76 °C is "asked and not turning"; the weaker finding about
    the same fan (stopped while warm) stays in the findings, not in the sentence a second time."""
    text = ("  Attribute 'GPUCoreTemp' (host:0[gpu:0]): 76.\n"
            "  Attribute 'GPUTargetFanSpeed' (host:0[fan:0]): 45.\n"
            "  Attribute 'GPUCurrentFanSpeed' (host:0[fan:0]): 45.\n"
            "  Attribute 'GPUCurrentFanSpeedRPM' (host:0[fan:0]): 0.\n")
    code, answer = explain(text, tmp_path)
    kinds = [f["kind"] for f in findings_of(answer)]
    assert code == 0 and kinds[0] == "target-not-met" and "warm-not-turning" in kinds
    assert str(answer["sentence"]).count("fan 0 of GPU 0") == 1


def test_a_gpu_fan_set_by_hand_that_runs_elsewhere_is_not_held_at_its_speed(tmp_path: Path) -> None:
    """NVML (nvmlDeviceGetTargetFanSpeed: the speed set, which the driver attempts to reach; nvmlDeviceGetFanSpeed_v2:
    the fan's current speed), as nvidia-settings' GPUTargetFanSpeed and GPUCurrentFanSpeed: a fan set by hand to 50 %
    that runs at 100 % is not at the speed set (possible: one reading), never "held at 100 % by hand" (it was); at
    the speed set it is held there; on the card's own policy its target is the firmware's, not a setting."""
    text = ("  Attribute 'GPUCoreTemp' (host:0[gpu:0]): 80.\n"
            "  Attribute 'GPUFanControlState' (host:0[gpu:0]): {state}.\n"
            "  Attribute 'GPUTargetFanSpeed' (host:0[fan:0]): {target}.\n"
            "  Attribute 'GPUCurrentFanSpeed' (host:0[fan:0]): 100.\n"
            "  Attribute 'GPUCurrentFanSpeedRPM' (host:0[fan:0]): 3320.\n")
    code, answer = explain(text.format(state=1, target=50), tmp_path)
    found = findings_of(answer)
    assert code == 0 and (found[0]["kind"], found[0]["confidence"]) == ("read-back-off-target", "possible")
    assert (found[0]["facts"]["asked"], found[0]["facts"]["reads"]) == (50.0, 100.0)
    assert "fixed-duty" not in [f["kind"] for f in found]
    _, answer = explain(text.format(state=1, target=100), tmp_path)
    kinds = [f["kind"] for f in findings_of(answer)]
    assert "fixed-duty" in kinds and "read-back-off-target" not in kinds
    _, answer = explain(text.format(state=0, target=50), tmp_path)
    assert "read-back-off-target" not in [f["kind"] for f in findings_of(answer)]


def test_a_gpu_fan_past_100_percent_is_a_reading(tmp_path: Path) -> None:
    """nvidia-smi(1), fan.speed: "This value may exceed 100% in certain cases"; nvidia-settings' GPUCurrentFanSpeed
    read 118 on an RTX 2080 Super set to 50 % by hand at 80 °C (nvfancontrol issue 44). Read as a duty past 100 %
    (the card at its cooling top), not dropped as no speed (it was: "speed unknown"); past 200 it is no reading."""
    text = ("  Attribute 'GPUCoreTemp' (debian:0[gpu:0]): 80.\n"
            "  Attribute 'GPUFanControlState' (debian:0[gpu:0]): 1.\n"
            "  Attribute 'GPUTargetFanSpeed' (debian:0[fan:0]): 50.\n"
            "  Attribute 'GPUCurrentFanSpeed' (debian:0[fan:0]): {current}.\n")
    code, answer = explain(text.format(current=118), tmp_path)
    found = findings_of(answer)
    assert code == 0 and (found[0]["kind"], found[0]["facts"]["asked"], found[0]["facts"]["reads"]) == \
        ("read-back-off-target", 50.0, 118.0)
    _, answer = explain(text.format(current=318), tmp_path)
    assert "read-back-off-target" not in [f["kind"] for f in findings_of(answer)]


def test_a_fan_set_to_zero_by_hand_is_held_stopped_not_at_rest(tmp_path: Path) -> None:
    """sysfs-interface.rst: pwmN_enable 1 is manual control, the duty written is kept; amdgpu's automatic control
    (pwm1_enable 2) is what stops a fan while cool (zero-RPM, Documentation/gpu/amdgpu/thermal.rst). A card's fan set
    to 0 % by hand at 0 RPM is held there, and will not start as the card heats: never "at rest by its controller's
    design" (it was); under automatic control the same readings are a rest."""
    text = ("/sys/class/drm/card0/device/hwmon/hwmon2/name:amdgpu\n"
            "/sys/class/drm/card0/device/hwmon/hwmon2/pwm1_enable:{mode}\n"
            "/sys/class/drm/card0/device/hwmon/hwmon2/pwm1:0\n"
            "/sys/class/drm/card0/device/hwmon/hwmon2/fan1_input:0\n"
            "/sys/class/drm/card0/device/hwmon/hwmon2/temp2_label:junction\n"
            "/sys/class/drm/card0/device/hwmon/hwmon2/temp2_input:58000\n")
    code, answer = explain(text.format(mode=1), tmp_path)
    found = findings_of(answer)
    assert code == 0 and (found[0]["kind"], found[0]["facts"]["duty"]) == ("fixed-duty", 0.0)
    assert not {"at-rest", "zero-unjudged"} & {f["kind"] for f in found}
    assert "will not start" in str(answer["sentence"])
    _, answer = explain(text.format(mode=2), tmp_path)
    kinds = [f["kind"] for f in findings_of(answer)]
    assert kinds[0] == "at-rest" and "fixed-duty" not in kinds


def test_sensors_pwm_lines_with_their_mode_say_manual_control_and_the_mode(tmp_path: Path) -> None:
    """sensors prints a pwm output's mode before MANUAL CONTROL ("pwm1: 64%  (mode = dc)  MANUAL CONTROL", as real
    nct6775 listings show): the manual control was not read when a mode stood between (the fan was "set by the
    board's fan chip as the BIOS set it up"). A fan asked for 0 % by hand on a header in PWM mode that turns fast is
    a PWM fan at its lowest speed or a 3-pin fan the PWM signal does not slow (Intel's 4-wire PWM fan specification:
    a 3-wire fan has no PWM input), not only "its lowest speed"."""
    text = ("it8686-isa-0a40\nAdapter: ISA adapter\nfan1:        1506 RPM  (min =    0 RPM)\n"
            "fan3:         812 RPM  (min =    0 RPM)\ntemp1:        +33.0°C  (low  = +127.0°C, high = +127.0°C)  "
            "sensor = thermistor\npwm1:            0%  (mode = {mode})  MANUAL CONTROL\n"
            "pwm3:           38%  (mode = pwm)\n")
    facts = machine(read.read(text.format(mode="pwm"))[0])
    assert [(f.key, f.controller, f.pwm_enable, f.pwm_mode) for f in facts.fans] == [
        ("it8686/fan1", "manual", 1, 1), ("it8686/fan3", "bios", None, 1)]
    code, answer = explain(text.format(mode="pwm"), tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and (lead["kind"], lead["facts"]["mode"]) == ("turns-at-zero", "pwm")
    assert "3-pin fan" in str(answer["sentence"])
    _, answer = explain(text.format(mode="dc"), tmp_path)
    lead = findings_of(answer)[0]
    assert (lead["kind"], lead["facts"]["mode"]) == ("turns-at-zero", "dc") and "3-pin" not in str(answer["sentence"])


CROSSED = ("nct6776-isa-0a10\nAdapter: ISA adapter\nfan1:          2571 RPM  (min =    0 RPM)\n"
           "fan2:          {fan2} RPM  (min =    0 RPM)\n"
           "CPUTIN:         +34.0°C  (high = +80.0°C, hyst = +75.0°C)  sensor = CPU diode\n"
           "pwm1:                0%  (mode = dc){manual}\npwm2:               57%  (mode = pwm)  MANUAL CONTROL\n"
           "\ncoretemp-isa-0000\nAdapter: ISA adapter\nPackage id 0:  +42.0°C  (high = +71.0°C, crit = +91.0°C)\n")


def test_an_output_set_to_zero_beside_a_fan_that_reads_nothing_may_be_crossed(tmp_path: Path) -> None:
    """A real nct6776 listing (a firewall appliance's single 40 mm PWM fan, set up with fancontrol): fan1 turns at
    2,571 RPM while pwm1 is set to 0 % by hand, fan2 reads 0 RPM while pwm2 asks 57 %. pwmconfig(8) tests each output
    against every fan because the numbers do not pair them: pwm2 may drive the fan read as fan1 (it was "its lowest
    speed ... nothing is making it spin faster"). Not found when fan2 turns too, nor when pwm1 is not set by hand."""
    code, answer = explain(CROSSED.format(fan2="   0", manual="  MANUAL CONTROL"), tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and (lead["kind"], lead["confidence"], lead["subjects"]) == (
        "channels-crossed", "possible", ["nct6776/fan1", "nct6776/fan2"])
    assert str(answer["sentence"]).startswith(
        "The nct6776 fan1 turns at 2,571 RPM though its output asks 0 %, and the nct6776 fan2 reads 0 RPM though its "
        "output asks 57 %: a board's fan chip pairs an output and a fan by their numbers only")
    for fan2, manual in (("1200", "  MANUAL CONTROL"), ("   0", "")):
        _, answer = explain(CROSSED.format(fan2=fan2, manual=manual), tmp_path)
        assert "channels-crossed" not in [f["kind"] for f in findings_of(answer)], (fan2, manual)
    # two outputs asking a speed over two fans at 0 (empty headers, as boards have): which would be the one is a
    # guess, so none is said
    two = CROSSED.format(fan2="   0", manual="  MANUAL CONTROL").replace(
        "pwm2:", "fan3:             0 RPM  (min =    0 RPM)\npwm3:               57%  (mode = pwm)\npwm2:")
    _, answer = explain(two, tmp_path)
    assert "channels-crossed" not in [f["kind"] for f in findings_of(answer)]


def test_a_thinkpads_full_speed_level_is_why_its_fan_is_loud(tmp_path: Path) -> None:
    """thinkpad-acpi.rst: the "full-speed" level, also known as "disengaged", has the EC drive the fan as fast as it
    can go with no regulation; it may take up to two minutes to ramp up, and the tachometer readings may go stale
    meanwhile. A fan at that level reading 65535 was only
    "how fast it turns is not known"; at full-speed with a speed, it said nothing of its level at all; at disengaged
    reading 0 (a real /proc/acpi/ibm/fan just after "echo level full-speed") it was "stalled" first, and its level
    second: now the level leads, with the 0 said as a reading not yet a speed, and a stall if it stays."""
    for level, speed in (("disengaged", "65535"), ("full-speed", "6120"), ("disengaged", "0")):
        code, answer = explain(f"status:\t\tenabled\nspeed:\t\t{speed}\nlevel:\t\t{level}\n", tmp_path)
        lead = findings_of(answer)[0]
        assert code == 0 and (lead["kind"], lead["facts"]["level"]) == ("no-control", level), level
        assert str(answer["sentence"]).startswith(f"The thinkpad fan1 is at level {level}: its embedded controller "
                                                  "drives it as fast as it can go"), level
        assert ("is no speed" in str(answer["sentence"])) == (speed != "6120")
        assert ("a fan that does not turn" in str(answer["sentence"])) == (speed != "6120")
        assert "stalled" not in [f["kind"] for f in findings_of(answer)]
    _, answer = explain("status:\t\tenabled\nspeed:\t\t2900\nlevel:\t\tauto\n", tmp_path)
    assert "no-control" not in [f["kind"] for f in findings_of(answer)]
    # a level someone set is no fault: the live fan is "full", with no alarm (pwm_enable 0's no-control raises one)
    from app.collect.thinkpad import parse_fan
    from app.fans.adapt import machine as live_machine
    from app.fans.judged import judge
    fan = parse_fan("status:\t\tenabled\nspeed:\t\t6120\nlevel:\t\tfull-speed\n")
    assert fan is not None
    facts = live_machine((), (fan,))
    (judged,) = judge((fan,), facts, explained(facts)[0])
    assert (judged.state, judged.alarm_kind) == ("full", None)


LABELLED = ("w83627ehf-isa-0290\nAdapter: ISA adapter\n"
            "Case Fan:      0 RPM  (min = 2636 RPM, div = 128)  ALARM\n"
            "CPU Fan:    1110 RPM  (min =    0 RPM, div = 16)  ALARM\n"
            "Aux Fan:    1088 RPM  (min = 5273 RPM, div = 8)  ALARM\n"
            "fan4:          0 RPM  (min = 2109 RPM, div = 128)  ALARM\n"
            "Sys Temp:    +43.0°C  (high =  +2.0°C, hyst =  +4.0°C)  ALARM  sensor = thermistor\n"
            "CPU Temp:    +30.0°C  (high = +80.0°C, hyst = +75.0°C)  sensor = diode\n")


def test_a_labelled_fans_limits_and_alarm_are_read_as_fanN_s_are(tmp_path: Path) -> None:
    """A real w83627ehf listing (an ASUS P6T) whose fans sensors.conf labels ("CPU Fan:"): their minimum and ALARM
    were read only for lines named fanN, so "Aux Fan" at 1,088 RPM under its 5,273 RPM minimum was "running". A fan
    flagged while it turns above its minimum (CPU Fan: 1,110 RPM, minimum 0) is a flag the reading does not bear out
    (sysfs-interface.rst: fanN_alarm is the chip's alarm condition; the limit is fanN_min): said as such, with no
    live alarm and no fault among the causes; fans flagged so are one finding."""
    facts = machine(read.read(LABELLED)[0])
    assert [(f.label, f.rpm, f.min_rpm, f.alarm) for f in facts.fans] == [
        ("Case Fan", 0.0, 2636.0, True), ("CPU Fan", 1110.0, 0.0, True), ("Aux Fan", 1088.0, 5273.0, True),
        ("fan4", 0.0, 2109.0, True)]
    found = {tuple(f.subjects): f for f in explained(facts)[0] if f.kind == "fan-alarm"}
    assert found[("w83627ehf/Aux Fan",)].facts["min"] == 5273.0 and "above" not in found[("w83627ehf/Aux Fan",)].facts
    assert found[("w83627ehf/CPU Fan",)].facts["above"] == "yes"
    assert found[("w83627ehf/Case Fan",)].facts["uncounted"] == "yes"
    from app.fans.judged import _of
    assert _of(found[("w83627ehf/CPU Fan",)]) == (None, None)
    assert _of(found[("w83627ehf/Aux Fan",)]) == (None, "warning")
    # above a minimum that is not 0 the flag may be a dip under it between readings: the warning stays
    dipped = LABELLED.replace("CPU Fan:    1110 RPM  (min =    0 RPM", "CPU Fan:    1110 RPM  (min =  900 RPM")
    (flag,) = [f for f in explained(machine(read.read(dipped)[0]))[0] if f.subjects == ("w83627ehf/CPU Fan",)
               and f.kind == "fan-alarm"]
    assert flag.facts["above"] == "yes" and "unbacked" not in flag.facts and _of(flag) == (None, "warning")
    both = LABELLED.replace("Aux Fan:    1088 RPM  (min = 5273", "Aux Fan:    1088 RPM  (min =    0")
    (grouped,) = [f for f in explained(machine(read.read(both)[0]))[0] if f.facts.get("above") == "yes"]
    assert grouped.subjects == ("w83627ehf/CPU Fan", "w83627ehf/Aux Fan") and "raw" not in grouped.facts
    _, answer = explain(both, tmp_path)
    assert "though they turn above their 0 RPM minimum" in str(answer["sentence"])
    from app.verdict.fanwing import danger_causes
    flagged = machine(read.read(both)[0])
    causes = danger_causes(tuple(explained(flagged)[0]), flagged)
    assert {c.numbers["fan"] for c in causes if c.numbers["finding"] == "fan-alarm"} == {
        "w83627ehf/Case Fan", "w83627ehf/fan4"}  # the fans at 0 under a minimum; not the two turning above theirs


SELECTED = ("/sys/class/hwmon/hwmon2/name:nct6798\n/sys/class/hwmon/hwmon2/fan1_input:1850\n"
            "/sys/class/hwmon/hwmon2/pwm1:{pwm}\n/sys/class/hwmon/hwmon2/pwm1_enable:{enable}\n"
            "/sys/class/hwmon/hwmon2/pwm1_temp_sel:{sel}\n/sys/class/hwmon/hwmon2/temp2_input:38500\n"
            "/sys/class/hwmon/hwmon2/temp2_label:CPUTIN\n/sys/class/hwmon/hwmon2/temp3_input:127000\n"
            "/sys/class/hwmon/hwmon2/temp3_label:AUXTIN0\n")


def test_a_chips_curve_that_follows_an_open_input_runs_its_fan_at_full(tmp_path: Path) -> None:
    """nct6775.rst: pwmN_temp_sel is the temperature source of the chip's automatic modes. A curve following AUXTIN0,
    an open input at its 127 °C ceiling, runs the fan at full: said as that (known). It was "full while cool:
    something holds it there", and the followed input at 127 °C was "the hottest temperature read" (a placeholder
    as the hottest reading). A curve on CPUTIN, or an output set by hand, is not this."""
    code, answer = explain(SELECTED.format(pwm=255, enable=5, sel=3), tmp_path)
    found = findings_of(answer)
    assert code == 0 and (found[0]["kind"], found[0]["confidence"], found[0]["subjects"]) == (
        "follows-no-reading", "known", ["nct6798/fan1", "nct6798/temp3"])
    assert "full-while-cool" not in {f["kind"] for f in found}
    assert next(f for f in found if f["kind"] == "hottest")["subjects"] == ["nct6798/temp2"]
    for pwm, enable, sel in ((255, 5, 2), (255, 1, 3)):
        _, answer = explain(SELECTED.format(pwm=pwm, enable=enable, sel=sel), tmp_path)
        assert "follows-no-reading" not in {f["kind"] for f in findings_of(answer)}, (enable, sel)
    _, answer = explain(SELECTED.format(pwm=128, enable=5, sel=3), tmp_path)
    lead = findings_of(answer)[0]
    assert (lead["kind"], lead["confidence"]) == ("follows-no-reading", "likely")
    # live: the hwmon reader's fan with the source its chip declares, read at its ceiling
    from app.core.fan import Fan
    from app.fans.adapt import machine as live_machine
    fan = Fan("hwmon:nct6798/fan1", "nct6798", 1, None, rpm=1850, percent=100.0, control="automatic",
              source="nct6798 AUXTIN0", source_c=127.0, source_from="declared")
    live, _, _ = explained(live_machine((), (fan,)))
    assert live[0].kind == "follows-no-reading" and "full-while-cool" not in {f.kind for f in live}


def test_the_kernels_cooler_drivers_are_coolers_under_their_hid_chip_headers(tmp_path: Path) -> None:
    """The kernel's cooler drivers (Documentation/hwmon: corsair-cpro, nzxt-smart2, nzxt-kraken2/3,
    aquacomputer_d5next, ...) name their chips "corsaircpro", "nzxtsmart2", "kraken2", "aquaero"; sensors heads them
    "quadro-hid-3-5" (a HID bus and address). A channel at 0 there is most likely empty, as on any hub (fails
    when the header is not taken for a chip, or the chip is not known: the 0 was "stopped, not connected, or not
    counted" with no chip named); on the Commander Pro, whose driver lists only the connectors its device detects a
    fan on (corsair-cpro.c, get_fan_cnct: "fan2 4pin"), the 0 is a fan there that does not turn."""
    text = ("quadro-hid-3-5\nAdapter: HID adapter\nFan 1 speed:   1190 RPM\nFan 2 speed:      0 RPM\n"
            "Sensor 1:      +31.5°C\n")
    facts = machine(read.read(text)[0])
    assert {f.chip for f in facts.fans} == {"quadro"}
    found, _, _ = explained(facts)
    assert any(f.kind == "empty-slots" and f.subjects == ("quadro/Fan 2",) for f in found)
    detected = machine(read.read(text.replace("quadro", "corsaircpro").replace("Fan 1 speed:", "fan1 4pin:  ")
                                 .replace("Fan 2 speed:", "fan2 4pin:  "))[0])
    kinds = {f.kind: f.subjects for f in explained(detected)[0]}
    assert kinds["detected-still"] == ("corsaircpro/fan2 4pin",) and "empty-slots" not in kinds
    assert all(chip(name).kind == "aio" for name in ("nzxtsmart2", "kraken2", "z53", "aquaero", "highflownext"))
    # after another chip, a header whose HID address has two parts ("nzxtsmart2-hid-3-2", as libsensors prints a
    # HID bus and device) starts its own chip: its fans are not the ACPI zone's above it (they were "FAN 1 (acpitz
    # fan1)", and its fans' voltages and currents beside the fans counted 4 fans where there are 2)
    two = ("acpitz-acpi-0\nAdapter: ACPI interface\ntemp1:        +27.8°C\n\nnzxtsmart2-hid-3-2\n"
           "Adapter: HID adapter\nFAN 1 Voltage:  11.09 V\nFAN 2 Voltage:   8.00 V\nFAN 1:         1363 RPM\n"
           "FAN 2:         1010 RPM\nFAN 1 Current:   2.00 mA\nFAN 2 Current:  89.00 mA\n")
    _, answer = explain(two, tmp_path)
    fans = answer["fans"]
    assert isinstance(fans, list)
    assert [(f["chip"], f["rpm"]) for f in fans] == [("nzxtsmart2", 1363), ("nzxtsmart2", 1010)]
    assert all(f["facts"]["count"] == 2 for f in findings_of(answer) if f["kind"] == "no-fault")
    # a single-board computer's PWM fan is a thermal cooling device its zone steps (pwm-fan.yaml's cooling-levels):
    # turning, it is set by the kernel's thermal zone; a 0 there is not judged without the zone's trips
    assert (chip("pwmfan").controller, chip("pwmfan").zero) == ("kernel", "unknown")
    pi = "pwmfan-isa-0000\nAdapter: ISA adapter\nfan1:        7500 RPM\n\ncpu_thermal-virtual-0\ntemp1:  +67.5°C\n"
    _, answer = explain(pi, tmp_path)
    assert "set by the kernel's thermal zone" in str(answer["sentence"])
    # liquidctl's other coolers by the names its status heads them with (its device guides): a cooler's 100 % pump is
    # the duty last set by software, not a fan "at full while cool" for no reason (it was, on an MSI K360)
    assert all(chip(name).kind == "aio" for name in ("MSI MPG Coreliquid K360", "Gigabyte Aorus Waterforce X II 360",
                                                     "ASUS ROG RYUJIN II 360", "Razer Hanbo Chroma", "EVGA CLC 280"))
    k360 = ("MSI MPG Coreliquid K360\n├── Fan 1 speed          1546  rpm\n├── Fan 1 duty             60  %\n"
            "├── Pump speed           2777  rpm\n├── Pump duty             100  %\n"
            "└── Temperature inlet      25  °C\n")
    _, answer = explain(k360, tmp_path)
    assert "full-while-cool" not in [f["kind"] for f in findings_of(answer)]
    # and a handheld's EC stops its fan while cool, as any EC may: a 0 there is never an empty header
    assert all(chip(name).kind == "ec" and chip(name).zero != "empty" for name in ("steamdeck_hwmon", "oxpec",
                                                                                   "gpd_fan", "surface_fan"))
    # so do gaming laptops' (acer-wmi's "acer", legion-laptop's "legion_hwmon"): two fans at 0 RPM at 42 °C are at
    # rest or unreported, not "stopped, not connected, or not counted" of an unknown chip
    legion = ("legion_hwmon-isa-0000\nAdapter: ISA adapter\nFan 1:    0 RPM\nFan 2:    0 RPM\n"
              "CPU Temperature:  +42.0°C\nGPU Temperature:   +0.0°C\n")
    _, answer = explain(legion, tmp_path)
    assert next(f["kind"] for f in findings_of(answer)) == "at-rest" and chip("acer").kind == "ec"


def test_an_alarm_at_0_rpm_is_no_pulses_whatever_its_minimum() -> None:
    """A board's empty header often carries the BIOS's small minimum (10 RPM) and so its alarm: at 0 RPM the alarm
    says no pulses were counted (no fan, a stopped fan, a wire not read), not that a turning fan slowed under its
    minimum (fails when 0 under a minimum is worded as a failing fan)."""
    text = ("it8686-isa-0a40\nAdapter: ISA adapter\nfan1:        1212 RPM  (min =   10 RPM)\n"
            "fan3:           0 RPM  (min =   10 RPM)  ALARM\n")
    found, sentence, _ = explained(machine(read.read(text)[0]))
    (alarm,) = [f for f in found if f.kind == "fan-alarm"]
    assert alarm.facts["uncounted"] == "yes" and alarm.facts["min"] == 10.0
    assert "sees no pulses at all" in sentence and "slowing or failing" not in sentence


def test_a_json_documents_limits_are_not_readings() -> None:
    """Any JSON document is read by its key paths: a key naming a limit ("edge_critical", "fan max",
    "shutdown_temp") is not a reading (a card's 100 °C critical limit read as its temperature is a false alarm)."""
    document = {"gpu": [{"temperature": {"edge": {"value": 45, "unit": "C"}, "edge_critical": {"value": 100,
                                                                                               "unit": "C"}},
                         "fan": {"speed": {"value": 30, "unit": "%"}, "max": 255, "rpm": 1200},
                         "shutdown_temp": {"value": 105, "unit": "C"}}]}
    facts = machine(read.read(json.dumps(document))[0])
    assert [t.celsius for t in facts.temperatures] == [45.0]


@pytest.mark.parametrize(("tdie", "said"), [(48.0, True), (66.0, False)])
def test_an_amd_cpus_control_temperature_above_its_die_is_said(tdie: float, said: bool) -> None:
    """k10temp.rst: "Tdie is the real measured temperature, and Tctl is used for fan control"; on some AMD CPUs
    Tctl is offset 10-27 °C above the die. A 20 °C gap is said (the fan runs for a CPU that much hotter); a 2 °C
    one is two sensors' noise, not said (fails when the gap is not read, or any gap is said)."""
    text = ("k10temp-pci-00c3\nAdapter: PCI adapter\nTctl:         +68.0°C\n"
            f"Tdie:         +{tdie}°C\n\nnct6779-isa-0290\nAdapter: ISA adapter\nfan2:        1850 RPM\n")
    found, sentence, _ = explained(machine(read.read(text)[0]))
    offsets = [f for f in found if f.kind == "control-offset"]
    assert bool(offsets) is said
    if said:
        assert offsets[0].facts["offset"] == 20 and "20 °C above its die's own" in sentence


def test_a_loggers_two_columns_of_one_fan_are_one_fan() -> None:
    """GPU-Z's sensor log writes one fan twice, "Fan Speed (%) [%]" and "Fan Speed (RPM) [RPM]": one fan with its
    duty and its speed (they were two fans, each said as not cooling)."""
    log = ("Date , GPU Temperature [°C] , Hot Spot [°C] , Fan Speed (%) [%] , Fan Speed (RPM) [RPM] ,\n"
           "2026-12-01 10:00:01 , 84.0 , 97.0 , 0 , 0 ,\n2026-12-01 10:00:02 , 85.0 , 98.0 , 0 , 0 ,\n")
    facts = machine(read.read(log)[0])
    assert [(f.label, f.rpm, f.duty_percent) for f in facts.fans] == [("Fan Speed", 0.0, 0.0)]
    found, _, _ = explained(facts)
    assert found[0].kind == "hot-not-cooled" and [f.kind for f in found].count("hot-not-cooled") == 1


def test_a_fan_read_at_0_rpm_is_never_said_to_run_at_full_speed() -> None:
    """pwm1 at 255 under manual control with fan1 at 0 RPM on a board header: not "runs at full speed" (it reads 0),
    but a header driven at 100 % with nothing counted: no fan, or an uncounted one (fails when a duty alone makes a
    fan "run at full")."""
    text = ("/sys/class/hwmon/hwmon2/name: nct6798\n/sys/class/hwmon/hwmon2/fan1_input: 0\n"
            "/sys/class/hwmon/hwmon2/fan2_input: 1230\n/sys/class/hwmon/hwmon2/pwm1: 255\n"
            "/sys/class/hwmon/hwmon2/pwm1_enable: 1\n/sys/class/hwmon/hwmon2/temp1_input: 35000\n")
    found, sentence, _ = explained(machine(read.read(text)[0]))
    assert "full-while-cool" not in {f.kind for f in found} and "runs at full speed" not in sentence
    assert any(f.kind == "empty-slots" and f.subjects == ("nct6798/fan1",) and f.confidence == "possible"
               for f in found)


def test_duties_far_apart_at_one_speed_are_not_what_turns_the_fans(tmp_path: Path) -> None:
    """A Corsair H100i Pro XT (liquidctl#397): its fans asked for 100 % and 20 % turn at 1,192 and 1,188 RPM, as they
    did before the duties were swapped: the cooler does not apply them. A PWM fan's speed follows its duty (Intel's
    4-wire fan specification), so two fans of one controller that far apart at one speed is said; fans that do
    follow their duties are not."""
    status = ("Corsair Hydro H100i Pro XT (experimental)\n├── Liquid temperature    33.0  °C\n"
              "├── Fan 1 speed           {a}  rpm\n├── Fan 1 duty             100  %\n"
              "├── Fan 2 speed           {b}  rpm\n├── Fan 2 duty              20  %\n"
              "├── Pump speed            1951  rpm\n└── Pump duty               55  %\n")
    _, answer = explain(status.format(a=1192, b=1188), tmp_path)
    lead = findings_of(answer)[0]
    assert (lead["kind"], lead["confidence"]) == ("duty-not-driving", "likely")
    assert lead["facts"] == {"duty_a": 100.0, "rpm_a": 1192.0, "duty_b": 20.0, "rpm_b": 1188.0, "one_set": "yes"}
    _, following = explain(status.format(a=1850, b=610), tmp_path)
    assert "duty-not-driving" not in {f["kind"] for f in findings_of(following)}
    # a board's two headers may carry two models whose speeds happen to meet: possible, and said so
    board = ("nct6798-isa-0290\nAdapter: ISA adapter\nfan1:  1190 RPM  (min = 0 RPM)\nfan2:  1195 RPM  (min = 0 RPM)\n"
             "pwm1:   100%  (mode = pwm)  MANUAL CONTROL\npwm2:    20%  (mode = pwm)  MANUAL CONTROL\n")
    _, header = explain(board, tmp_path)
    found = next(f for f in findings_of(header) if f["kind"] == "duty-not-driving")
    assert (found["confidence"], found["facts"]["one_set"]) == ("possible", "no")
    assert "two models whose speeds happen to meet" in str(header["sentence"])


def test_ipmitools_csv_output_is_read_as_its_tables(tmp_path: Path) -> None:
    """``ipmitool -c sdr`` and ``-c sensor`` (ipmitool(1): "Present output in CSV format"), which have no header: the
    same rows as the ``|`` tables, a failed fan and a fan under its lower-critical threshold said as there (both were
    refused)."""
    _, sdr = explain("# ipmitool -c sdr\nCPU Temp,45,degrees C,ok\nFAN1,0,RPM,cr\nFAN2,1200,RPM,ok\n", tmp_path)
    lead = findings_of(sdr)[0]
    assert (lead["kind"], lead["subjects"][0]) == ("fan-fault", "bmc/FAN1")
    _, sensor = explain("# ipmitool -c sensor\nFAN1,300.000,RPM,cr,100.000,300.000,500.000,25300.000,25400.000,"
                        "25500.000\nFAN2,1200.000,RPM,ok,100.000,300.000,500.000,25300.000,25400.000,25500.000\n",
                        tmp_path)
    lead = findings_of(sensor)[0]
    assert (lead["kind"], lead["facts"]["lcr"]) == ("below-bmc-threshold", 300.0)
    assert explain("a,b,c,d\n1,2,3,4\n", tmp_path)[0] == 2  # four columns with no ipmitool status: not its table


FANCONTROL_MISSING = ("Loading configuration from /etc/fancontrol ...\n\nCommon settings:\n  INTERVAL=5\n\n"
                      "Settings for hwmon3/pwm1:\n  Depends on hwmon2/temp1_input\n  Controls hwmon3/fan1_input\n"
                      "  MINTEMP=50\n  MAXTEMP=60\n  MINSTART=75\n  MINSTOP=60\n  MINPWM=0\n  MAXPWM=255\n"
                      "  AVERAGE=1\n\nError: file hwmon3/pwm1 doesn't exist\n\n\n"
                      "At least one referenced file is missing. Either some required kernel\n"
                      "modules haven't been loaded, or your configuration file is outdated.\n"
                      "In the latter case, you should run pwmconfig again.\n")


def test_a_fancontrol_that_refused_to_start_has_a_curve_that_drives_nothing(tmp_path: Path) -> None:
    """fancontrol's CheckFiles (the lm-sensors script and its C port): each file its configuration names that is not
    there ("Error: file X doesn't exist"), then "At least one referenced file is missing", and it exits before it
    enables a pwm. A laptop's owner posted this start in a forum thread (the reply: not every fan controller
    exposes a pwm file for its fan): the answer is that fancontrol did not start, with the files gone; the curve
    its listing shows is the configuration's, never said as what drives the fan."""
    code, answer = explain(FANCONTROL_MISSING, tmp_path)
    found = findings_of(answer)
    assert code == 0 and (found[0]["kind"], found[0]["facts"]["event"], found[0]["facts"]["detail"]) == \
        ("daemon-stopped", "missing", "hwmon3/pwm1")
    curve = next(f for f in found if f["kind"] == "daemon-curve")
    assert curve["facts"]["not_running"] == "missing" and curve["subjects"] == []
    sentence = str(answer["sentence"])
    assert "refused to start" in sentence and "drives hwmon3" not in sentence and "not in effect" in sentence


def test_framework_tools_thermal_is_its_embedded_controllers_fans_and_sensors() -> None:
    """framework_tool --thermal (framework-system's power.rs, print_thermal): the Framework EC's sensors, then a line
    for each fan it has, in its order; a second "Fan Speed" line is the second fan, a sensor met again the tool's
    next run. The EC stops its fans while cool (Chrome EC common/thermal.c), and reads a stalled fan as 0 too, or
    marks it 65534 (ec_commands.h, which the tool prints as "(Stalled)"): its 0 at 62 °C is a rest or a stall, its
    65534 never a rest."""
    example = BLOCKS["framework_tool_thermal-01"]  # the tool's own example: APU at 62 °C, its fan at 0 RPM
    readings, name = read.read(example)
    assert name is not None and name.startswith("Framework's framework_tool")
    facts = machine(readings)
    assert [(f.chip, f.rpm) for f in facts.fans] == [("cros_ec", 0.0)]
    assert lead(example) == ("at-rest", "possible")
    laptop16 = ("  F75303_Local: 40 C\n  APU:          39 C\n  dGPU temp:    NotPowered\n"
                "  Fan Speed:  2165 RPM\n  Fan Speed:  2035 RPM\n")
    two = machine(read.read(laptop16)[0])
    assert sorted((f.label, f.rpm, f.speeds) for f in two.fans) == [("Fan 1", 2165.0, ("2165 RPM",)),
                                                                   ("Fan 2", 2035.0, ("2035 RPM",))]
    assert next(t for t in two.temperatures if t.label == "dGPU temp").invalid == "not-available"
    again = machine(read.read(laptop16 + laptop16.replace("2165 RPM", "0 RPM"))[0])
    assert next(f for f in again.fans if f.label == "Fan 1").speeds == ("2165 RPM", "0 RPM")
    # another command's listing after the tool's output is not the EC's
    after = frameworktool.read(example + "\n$ sensors\nnct6798-isa-0290\nAdapter: ISA adapter\nCPU Fan:  1200 RPM\n")
    assert [r.label for r in after if r.unit == "rpm"] == ["API Fan"]
    stalled, _, _ = explained(machine(read.read(laptop16.replace("2165 RPM", "65534 RPM (Stalled)"))[0]))
    assert not any(f.kind == "at-rest" for f in stalled)
    assert any(f.kind in ("speed-not-a-reading", "fan-fault", "stalled") and "cros_ec/fan1" in f.subjects
               for f in stalled), [(f.kind, f.subjects) for f in stalled]


def test_a_fan_its_controller_never_asks_for_is_said_with_why() -> None:
    """A System76 laptop after an update (a real `sensors`): its EC reads its own CPU temperature as 0 °C and its fan
    at 0 RPM while the package is at 103 °C. system76/ec's fan table follows the EC's own CPU reading, so the fan
    never starts: the sentence says the part is not cooled, and why (the EC's reading), not one of the two alone
    (fails when only one cause a fan is said)."""
    key = next(k for k, text in BLOCKS.items() if "CPU temp:      +0.0°C" in text and "system76_acpi" in text)
    facts = machine(read.read(BLOCKS[key])[0])
    found, sentence, _ = explained(facts)
    kinds = [f.kind for f in found]
    assert kinds[:2] == ["hot-not-cooled", "ec-cpu-unread"], kinds
    names = Names(facts)
    assert all(said(f, names) in sentence for f in found[:2])
    assert sentence.index(said(found[0], names)) < sentence.index(said(found[1], names))


def test_a_part_at_its_own_critical_limit_is_said_and_a_board_inputs_limit_is_not() -> None:
    """coretemp.rst: a CPU's readings run from 0 to TjMax (tempX_crit), where its protection forcibly cools it. A real
    NAS under load reads its CPU at 100 °C, its crit 100 °C: at its limit (known). A CPU at 103 °C under a crit of
    110 °C is not; a board fan chip's input at its limit (a setting an open input passes) is not a part's limit."""
    nas = next(text for text in BLOCKS.values() if "UGREEN" in text or "CPU Temp:     +100.0°C" in text)
    listed, sentence, _ = explained(machine(read.read(nas)[0]))
    found = {f.kind: f for f in listed}
    assert sentence.startswith("CPU Temp (coretemp) is at 100 °C, at its own critical limit (100 °C, as its driver "
                               "reports it): there the CPU protects itself, slowing down to stay at it")
    assert (found["at-critical"].subjects, found["at-critical"].confidence) == (("coretemp/CPU Temp",), "known")
    assert (found["at-critical"].facts["celsius"], found["at-critical"].facts["crit_c"]) == (100.0, 100.0)
    laptop = next(text for text in BLOCKS.values() if "CPU temp:      +0.0°C" in text)
    assert "at-critical" not in {f.kind for f in explained(machine(read.read(laptop)[0]))[0]}
    board = "nct6798-isa-0290\nAdapter: ISA adapter\nSYSTIN:  +100.0°C  (high = +80.0°C, crit = +100.0°C)\n"
    assert "at-critical" not in {f.kind for f in explained(machine(read.read(board)[0]))[0]}
    wrapped = ("nvme-pci-0100\nAdapter: PCI adapter\nComposite:    +85.9°C  (low  = -273.1°C, high = +81.8°C)\n"
               "                       (crit = +84.8°C)\n")  # sensors wraps the limits onto a second line
    assert [f.subjects for f in explained(machine(read.read(wrapped)[0]))[0] if f.kind == "at-critical"] == \
        [("nvme/Composite",)]
    assert explained(machine(read.read(wrapped)[0]))[1].startswith(
        "Composite (nvme) is at 86 °C, past its own critical limit (85 °C, as its driver reports it): the drive is as "
        "hot as it is rated to run")  # a drive's words claim no self-protection its driver does not document
    # a memory module's critical limit is a register the host programs (spd5118.rst, jc42.rst: RW): not its own
    module = ("spd5118-i2c-1-51\nAdapter: x\ntemp1:        +86.0°C  (low  =  +0.0°C, high = +55.0°C)\n"
              "                       (crit low =  +0.0°C, crit = +85.0°C)\n")
    assert "at-critical" not in {f.kind for f in explained(machine(read.read(module)[0]))[0]}
    # a grep that cut the header keeps coretemp's own label ("Package id Y"): still a CPU's limit; a bare tempN is not
    cut = "Package id 0: +100.0°C  (high = +100.0°C, crit = +100.0°C)  ALARM (CRIT)\nfan1:  0 RPM\n"
    kinds = [f.kind for f in explained(machine(read.read(cut)[0]))[0]]
    assert kinds[:2] == ["hot-not-cooled", "at-critical"], kinds
    bare = cut.replace("Package id 0", "temp1")
    assert "at-critical" not in {f.kind for f in explained(machine(read.read(bare)[0]))[0]}


def test_a_cpus_critical_alarm_is_said_though_it_reads_under_its_limit_now() -> None:
    """coretemp.rst: tempX_crit_alarm is set with the Out-of-spec bit and never clears (sysfs-class-hwmon: a critical
    alarm sticks until the user clears it). A real Dell Studio 1749 that lags and freezes reads its cores at 86-87 °C,
    under their 90 °C crit, with ALARM (CRIT) on both: they have been at their limit since boot (known), one finding
    for the chip. The same flag read as ``tempN_crit_alarm`` (sensors -u) says the same; a flag on a board fan chip's
    input (a limit of its own setting), or on a core at its limit now (the rule above), is not this rule (fails when
    "ALARM (CRIT)" is not read)."""
    studio = BLOCKS["sensors_laptops_thinkpad_dell_asus-19"]
    found, sentence, _ = explained(machine(read.read(studio)[0]))
    flagged = next(f for f in found if f.kind == "crit-since-boot")
    assert (flagged.subjects, flagged.confidence) == (("coretemp/Core 0", "coretemp/Core 2"), "known")
    assert (flagged.facts["celsius"], flagged.facts["crit_c"], flagged.facts["never_clears"]) == (87.0, 90.0, "yes")
    assert sentence.startswith("Core 0 (coretemp) reads 87 °C now (and 1 more of its sensors), but its driver's "
                               "critical alarm is set (ALARM (CRIT)): it has reached its critical limit (90 °C)")
    listed = ("coretemp-isa-0000\nAdapter: ISA adapter\nCore 0:\n  temp2_input: 61.000\n  temp2_max: 80.000\n"
              "  temp2_crit: 90.000\n  temp2_crit_alarm: 1.000\n")
    assert [f.subjects for f in explained(machine(read.read(listed)[0]))[0] if f.kind == "crit-since-boot"] == \
        [("coretemp/temp2",)]
    board = ("w83627dhg-isa-0290\nAdapter: ISA adapter\nSys Temp:     +38.0°C  (high = +255.0°C, hyst = +253.0°C)  "
             "ALARM (CRIT)\n")
    assert "crit-since-boot" not in {f.kind for f in explained(machine(read.read(board)[0]))[0]}
    at_it = studio.replace("+87.0°C", "+90.0°C")
    kinds = {f.kind for f in explained(machine(read.read(at_it)[0]))[0]}
    assert "at-critical" in kinds and "crit-since-boot" in kinds  # Core 2, still under it, keeps the flag's finding


IT87_FULL = ("/sys/class/hwmon/hwmon3/name:{chip}\n/sys/class/hwmon/hwmon3/pwm1:255\n"
             "/sys/class/hwmon/hwmon3/pwm1_enable:0\n/sys/class/hwmon/hwmon3/fan1_input:2950\n"
             "/sys/class/hwmon/hwmon3/temp1_input:38000\n")


def test_an_it87_fans_pwm_enable_0_may_be_a_duty_set_by_hand_to_full(tmp_path: Path) -> None:
    """it87.c's pwm_mode() reads "full speed" (0) for a channel whose duty is 0xff on chips without fan on/off
    control (frankcrawford/it87#97: pwmconfig, having set 255, reads 0 back): on an it87 chip pwm_enable 0 is said
    as either, both full speed with the chip's curve off; nct6775's 0 is its own (no control)."""
    code, answer = explain(IT87_FULL.format(chip="it8686"), tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and (lead["kind"], lead["facts"]) == ("no-control", {"or_by_hand": "yes"})
    assert "set by hand to full" in str(answer["sentence"])
    code, answer = explain(IT87_FULL.format(chip="nct6798"), tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and (lead["kind"], lead["facts"]) == ("no-control", {})
    assert chip("it87").enable_0_if_full and not chip("nct6798").enable_0_if_full
