"""The fan wing judged by findings on the 72 real machines of the corpus (tests/support/fan_expectations.py says
what each thread's answer requires), what must never be found on any of them, and a few golden sentences."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from app.cli.replay import run
from app.fans import read
from app.fans.adapt import machine
from app.fans.answer import explained, findings
from app.fans.build import fans_of
from app.fans.chips import chip
from app.fans.facts import Curve, FanFact, Machine, TempFact
from app.fans.read.columns import perf_levels
from app.fans.read.daemonlog import decisions
from app.fans.read.sel import events as bmc_log
from app.fans.roles import role
from app.fans.rules import RULES
from tests.support.corpus import every_block
from tests.support.fan_checks import assert_nothing_dangerous
from tests.support.fan_expectations import EXPECTED, held_out

BLOCKS = {b.key: b for b in every_block()}
DOCS = Path(__file__).resolve().parent.parent.parent / "docs" / "FAN-RULES.md"


def explain(key: str, tmp_path: Path) -> tuple[int, dict[str, object], str]:
    path = tmp_path / f"{key}.txt"
    path.write_text(BLOCKS[key].capture)
    out, err = io.StringIO(), io.StringIO()
    code = run([path], as_json=True, out=out, err=err)
    return code, json.loads(out.getvalue()) if code == 0 else {}, err.getvalue()


def test_the_corpus_has_72_machines_and_a_third_is_held_out() -> None:
    assert len(BLOCKS) == 72 and sorted(EXPECTED) == sorted(BLOCKS)  # every machine judged by findings
    out = held_out(sorted(BLOCKS))
    assert len(out) == 24 and set(out) <= set(BLOCKS)
    assert out == held_out(sorted(BLOCKS))  # the same third every run


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_what_the_thread_requires_is_found(key: str, tmp_path: Path) -> None:
    expect = EXPECTED[key]
    code, answer, err = explain(key, tmp_path)
    if expect.refused:
        assert code == 2 and "not a capture FanWhy reads" in err, f"now read ({expect.gap}): judge it again"
        return
    assert code == 0, err
    found = answer["findings"]
    assert isinstance(found, list)
    kinds = [f["kind"] for f in found]
    causes = [f for f in found if f["priority"] >= 50]
    if expect.lead is None:
        assert not causes, (key, kinds)
    else:
        assert causes and causes[0]["kind"] == expect.lead, (key, kinds)
    assert set(expect.has) <= set(kinds), (key, kinds)
    judged = causes[0] if expect.lead else next((f for f in found if expect.has and f["kind"] == expect.has[0]), None)
    if expect.confidence:
        assert judged is not None and judged["confidence"] == expect.confidence, judged
    if expect.subject:  # the fan the lead is about, or with no lead the one heard (or the hottest reading)
        about = causes[0] if expect.lead else next(f for f in found if f["kind"] in ("turning", "hottest"))
        assert expect.subject.lower() in about["subjects"][0].lower(), (key, about)
    assert not set(expect.never) & set(kinds), (key, kinds)


@pytest.mark.parametrize("key", sorted(BLOCKS))
def test_nothing_dangerous_is_found_on_any_machine(key: str, tmp_path: Path) -> None:
    """Never: a fan flagged, unreadable or stopped called at rest or fine; a placeholder as the hottest reading; an
    embedded controller's fans sent to a BMC; comfort beside a fault."""
    code, answer, _ = explain(key, tmp_path)
    if code == 0:
        assert_nothing_dangerous(BLOCKS[key].capture, answer)


def test_every_rule_is_written_up_with_its_source() -> None:
    page = DOCS.read_text()
    for registered in RULES:
        assert f"**{registered.name}**" in page, f"{registered.name}: not in docs/FAN-RULES.md"
        assert registered.source, registered.name


def test_one_classifier_names_what_a_sensor_measures() -> None:
    assert role("coretemp", "Package id 0") == "cpu"
    assert role("amdgpu", "edge") == "gpu" and role("amdgpu", "mem") == "memory"
    assert role("nouveau", "temp1") == "gpu" and role("i915", "temp1") == "gpu"  # a GPU's sensor, whatever its label
    assert role("bmc", "Inlet Temp") == "inlet" and role("bmc", "CPU1 Temp") == "cpu"
    assert role("liquidctl", "Liquid temperature") == "liquid"
    assert role("nvme", "Composite") == "storage"
    # a memory module's own sensor, whatever its label (spd5118.rst: DDR5's SPD hub; jc42.rst: JC 42.4 on DIMMs)
    assert role("spd5118", "temp1") == "memory" and role("jc42", "temp1") == "memory"
    assert role("acpitz", "temp1") == "unknown"  # an ACPI zone is the firmware's, not known to be the CPU's


def test_chip_knowledge_is_data_and_says_what_0_and_65535_mean() -> None:
    assert chip("nct6798").kind == "superio" and chip("nct6798").zero == "empty"
    assert chip("amdgpu").no_pulses == (65535,) and chip("amdgpu").target_echoes
    assert chip("dell_smm").error_values == (-1,) and chip("thinkpad").not_available_c == (-128.0,)
    assert chip("thinkpad").kind == "ec" and chip("bmc").kind == "bmc"
    assert chip("no-such-chip").kind == "unknown"


def _one(text: str) -> list[FanFact]:
    return list(fans_of(read.read(text)[0]))


def test_a_stall_is_a_duty_with_no_speed_on_a_fan_that_is_there() -> None:
    card = "/sys/class/hwmon/hwmon2/name:amdgpu\n/sys/class/hwmon/hwmon2/fan1_input:0\n" \
           "/sys/class/hwmon/hwmon2/pwm1:128\n/sys/class/hwmon/hwmon2/pwm1_enable:2\n"
    found, _, _ = explained(machine(read.read(card)[0]))
    assert found[0].kind == "stalled" and found[0].confidence == "likely"
    board = card.replace("amdgpu", "nct6798")  # a board header: 0 RPM under a duty is an empty header
    found, _, _ = explained(machine(read.read(board)[0]))
    assert "stalled" not in {f.kind for f in found}


def test_a_stopped_fan_on_a_hot_card_is_never_at_rest() -> None:
    cool = "amdgpu-pci-0300\nAdapter: PCI adapter\nfan1:           0 RPM\nedge:         +40.0°C\n"
    found, _, _ = explained(machine(read.read(cool)[0]))
    assert found[0].kind == "at-rest"
    hot = cool.replace("+40.0", "+84.0")
    found, _, _ = explained(machine(read.read(hot)[0]))
    assert found[0].kind == "hot-not-cooled" and "at-rest" not in {f.kind for f in found}


def test_golden_sentences() -> None:
    bmc = "FAN3  | 400.000  | RPM  | cr  | 300.000 | 500.000 | 700.000 | 25300.000 | 25400.000 | 25500.000\n"
    _, sentence, _ = explained(machine(read.read(bmc)[0]))
    assert sentence.startswith("The FAN3 (BMC) turns at 400 RPM, at or below the BMC's lower-critical threshold of "
                               "500 RPM: the BMC counts it as failing, and a BMC that answers a failing fan with "
                               "every fan at full speed (Supermicro's does) ramps them up")
    tach = "/xyz/openbmc_project/sensors/fan_tach/fan0:65535\n/xyz/openbmc_project/sensors/fan_tach/fan1:65535\n"
    _, sentence, _ = explained(machine(read.read(tach)[0]))
    assert sentence == ("The fan0 (BMC) and fan1 (BMC) read 65535 RPM, past any fan's speed (a counter's maximum or a "
                        "driver's error value): how fast they turn is not known.")
    ec = "system76_acpi-acpi-0\nAdapter: ACPI interface\nCPU fan:        0 RPM\nCPU temp:      +0.0°C\n"
    _, sentence, _ = explained(machine(read.read(ec)[0]))
    assert sentence == ("The embedded controller's own CPU temperature (CPU temp (system76_acpi)) reads 0 °C, which "
                        "is no reading: a controller whose fan curve follows it never asks for cooling. Its fan reads "
                        "0 RPM.")
    _, sentence, _ = explained(machine(read.read(ec.replace("  0 RPM", "5012 RPM"))[0]))
    assert sentence == ("The embedded controller's own CPU temperature (CPU temp (system76_acpi)) reads 0 °C, which "
                        "is no reading: the controller cannot read the CPU, and its firmware then runs the fan at 50 % "
                        "whatever the CPU does (it turns at 5,012 RPM), until it reads the CPU again.")
    misread = ec.replace("  0 RPM", "7309 RPM").replace("+0.0°C", "+100.0°C") + "coretemp-isa-0000\nCore 0:  +32.0°C\n"
    _, sentence, _ = explained(machine(read.read(misread)[0]))
    assert sentence.startswith("The embedded controller's own CPU temperature (CPU temp (system76_acpi)) reads 100 °C "
                               "while the CPU's own sensor (Core 0 (coretemp)) reads 32 °C: the CPU fan "
                               "(system76_acpi) at 7,309 RPM follows the controller's reading, which is wrong (stuck "
                               "or misread), so it runs for heat the CPU does not have"), sentence
    sel = "".join(f"   {n} | 11/28/2026 | 14:0{n}:11 | Fan FAN1 | Lower Critical going low | {state}\n"
                  for n, state in enumerate(("Asserted", "Deasserted", "Asserted"), start=1))
    _, sentence, _ = explained(Machine(bmc_events=bmc_log(sel)))
    assert sentence.startswith("The BMC's event log shows FAN1 falling under its lower critical threshold 2 times "
                               "and rising back above it between: a BMC that answers a fan under that threshold with "
                               "every fan at full speed (Supermicro's does) raises them")
    _, sentence, _ = explained(Machine(bmc_events=bmc_log(sel.split("   2 |")[0])))
    assert sentence.startswith("The BMC's event log ends with it under its lower critical threshold: the BMC counts "
                               "FAN1 as failing")
    ilo = "Fan 1     System   OK     40%\nFan 2     System   Degraded     40%\n"
    _, sentence, _ = explained(machine(read.read(ilo)[0]))
    assert sentence.startswith("The BMC flags the Fan 2 System (BMC) as degraded while it runs at 40 %: short of "
                               "failed, but needing attention (a fan wearing out or slower than it should be, a fault "
                               "in its reading, a lost redundancy); the controller's event log says which")
    card = "GPU[1]\t\t: Performance Level: {}\nGPU[1]\t\t: Temperature (Sensor edge) (C): {}\n"
    text = card.format("auto", "79.0") + card.format("low", "36.0")
    _, sentence, _ = explained(replace(machine(read.read(text)[0]), settings=perf_levels(text)))
    assert sentence == ("GPU 1's performance level went from auto to low and its temperature from 79 °C to 36 °C: most "
                        "likely the heat came with the clocks that level lets the card hold (amdgpu's "
                        "power_dpm_force_performance_level; a load that changed between the readings would too): at "
                        "auto it was at 79 °C.")


def test_temperatures_are_judged_by_their_chip() -> None:
    def temp(text: str) -> TempFact:
        return machine(read.read(text)[0]).temperatures[0]
    assert temp("asuswmisensors-isa-0000\nTsensor 1 Temperature:   +216.0°C\n").invalid == "over-range"
    assert temp("nct6776-isa-0290\nCPUTIN:       +123.5°C\n").invalid == "unconnected"
    # a grep that cut the header keeps the pin's name (nct6775.rst: AUXTIN0-3, CPUTIN, SYSTIN): still a board fan
    # chip's input, open at +127 °C; a label no such driver gives is not judged by a chip nobody named
    assert temp("AUXTIN1:               +127.0°C    sensor = thermistor\n").invalid == "unconnected"
    assert temp("temp1:        +127.0°C  (crit = +105.0°C)\n").invalid is None
    assert temp("amdgpu-pci-0300\njunction:     +110.0°C\n").invalid is None  # a GPU's junction reaches it for real
    assert temp("thinkpad-isa-0000\ntemp3:        -128.0°C\n").invalid == "not-available"
    # thinkpad-acpi.rst: the slots' sensors vary with the model (5 and 6 the main and the bay battery on most): an
    # X390's temp5 at +111 °C is a slot with nothing behind it, but a reading its driver names is the reading
    assert temp("thinkpad-isa-0000\ntemp5:        +111.0°C\n").invalid == "unconnected"
    assert temp("thinkpad-isa-0000\nCPU:          +108.0°C\n").invalid is None
    # k10temp.rst: before family 17h its one value, temp1 (no label), is Tctl, "a non-physical temperature on an
    # arbitrary scale"; from 17h the labelled Tctl/Tdie aim at the real temperature
    assert temp("k10temp-pci-00c3\ntemp1:         +5.5°C  (high = +70.0°C)\n").invalid == "relative"
    assert temp("k10temp-pci-00c3\nTctl:         +45.5°C\n").invalid is None


def test_the_cpu_header_at_zero_is_not_most_likely_empty() -> None:
    """Boards' manuals put the CPU cooler's fan on CPU_FAN (CPU_OPT is an optional second): a header named for the
    CPU at 0 beside turning fans is as likely a stopped fan as an empty header (possible, both said); CPU_OPT and a
    system header stay most likely empty."""
    text = ("nct6798-isa-0290\nCPU Fan:        0 RPM\nCPU_OPT:        0 RPM\nSYS Fan 1:      0 RPM\n"
            "SYS Fan 2:    900 RPM\n")
    found = {f.subjects: f for f in explained(machine(read.read(text)[0]))[0] if f.kind == "empty-slots"}
    assert (found[("nct6798/CPU Fan",)].confidence, found[("nct6798/CPU Fan",)].facts["named"]) == ("possible", "cpu")
    assert found[("nct6798/CPU_OPT", "nct6798/SYS Fan 1")].confidence == "likely"
    _, sentence, _ = explained(machine(read.read(text)[0]))
    assert "(CPU Fan (nct6798) reads 0 RPM beside fans that turn: no fan on it, or a stopped one" in sentence
    # a header named for a pump (a real it8792's SYS_FAN5_PUMP) is as likely a stopped pump: said apart from the CPU's
    pump = text.replace("CPU_OPT:", "SYS_FAN5_PUMP:")
    found = {f.subjects: f for f in explained(machine(read.read(pump)[0]))[0] if f.kind == "empty-slots"}
    assert found[("nct6798/SYS_FAN5_PUMP",)].facts["named"] == "pump"
    assert found[("nct6798/CPU Fan",)].facts["named"] == "cpu"


def test_an_older_amd_cpus_relative_value_is_neither_hot_nor_cool_nor_missing() -> None:
    """A real FX-era listing: every nct6776 fan at 0 RPM, k10temp temp1 at +5.5 °C. The relative value was "the
    CPU at 5.5 °C" (a cool CPU for the rest and hottest rules); alone it made "none of the temperatures is a
    reading: a controller never sees heat" though it is the very value AMD's cooling follows."""
    text = ("nct6776-isa-0290\nfan1:           0 RPM  (min =    0 RPM)\nfan2:         900 RPM  (min =    0 RPM)\n"
            "\nk10temp-pci-00c3\nAdapter: PCI adapter\ntemp1:         +5.5°C  (high = +70.0°C)\n")
    found, sentence, _ = explained(machine(read.read(text)[0]))
    kinds = {f.kind for f in found}
    assert "hottest" not in kinds and "no-temperature" not in kinds
    (relative,) = [f for f in found if f.kind == "temperatures-left-out"]
    assert relative.facts["relative"] == "yes" and relative.subjects == ("k10temp/temp1",)
    assert "an AMD CPU's Tctl as k10temp gives it unlabelled, a relative value on an arbitrary scale" in sentence


def test_a_bias_that_chose_the_level_and_where_its_rise_came_from() -> None:
    """thinkfan adds a bias to a reading that rises fast: the level it chose above the one the reading alone gives
    is the bias's; a rise from -128 (not available) is named as one."""
    log = ("thinkfan[1]: Temperatures(bias): {0}(0), 0(0) -> level 0\n"
           "thinkfan[1]: Temperatures(bias): 45(259), 0(0) -> level 7\n"
           "thinkfan[1]: Temperatures(bias): 45(0), 0(0) -> level 0\n"
           "levels:\n  - [0, 0, 58]\n  - [1, 53, 65]\n  - [7, 68, 32767]\n")
    steps, levels = decisions(log.format("-128"))
    found, _, _ = explained(Machine(decisions=steps, levels=levels))
    (bias,) = [f for f in found if f.kind == "bias-chose-level"]
    assert (bias.facts["level"], bias.facts["alone"], bias.facts["before"], bias.facts["next"]) == (7, 0, -128, 0)
    assert bias.confidence == "known"
    steps, levels = decisions(log.format("30"))
    (bias,) = [f for f in explained(Machine(decisions=steps, levels=levels))[0] if f.kind == "bias-chose-level"]
    assert "before" not in bias.facts  # a real rise from 30 °C: no placeholder to name
    steps, levels = decisions(log.format("30").replace("45(259)", "70(0)").replace("level 7", "level 7"))
    assert "bias-chose-level" not in {f.kind for f in explained(Machine(decisions=steps, levels=levels))[0]}


def _wing(text: str) -> set[str]:
    return {f.kind for f in explained(machine(read.read(text)[0]))[0]}


def test_the_wing_rests_a_fan_only_where_its_duty_asks_for_nothing() -> None:
    card = "/sys/class/hwmon/hwmon2/name:amdgpu\n/sys/class/hwmon/hwmon2/fan1_input:0\n" \
           "/sys/class/hwmon/hwmon2/temp1_input:40000\n/sys/class/hwmon/hwmon2/pwm1:{}\n"
    assert "at-rest" in _wing(card.format(0))
    assert "at-rest" not in _wing(card.format(25))  # 10 %: a little asked, so 0 RPM is not a rest


def test_the_wing_reads_a_lowest_speed_only_from_a_duty_written_by_hand() -> None:
    board = "/sys/class/hwmon/hwmon2/name:nct6798\n/sys/class/hwmon/hwmon2/fan1_input:900\n" \
            "/sys/class/hwmon/hwmon2/pwm1:0\n/sys/class/hwmon/hwmon2/pwm1_enable:{}\n"
    assert "turns-at-zero" in _wing(board.format(1))
    assert "turns-at-zero" not in _wing(board.format(5))


def test_the_wing_says_two_drivers_disagree_only_when_they_do() -> None:
    both = "nct6683-isa-0a20\nfan1: 900 RPM\nfan2: {} RPM\nnct6687-isa-0a20\nfan1: 905 RPM\nfan2: 0 RPM\n"
    assert "drivers-disagree" in _wing(both.format(700))
    assert "drivers-disagree" not in _wing(both.format(0))


def test_the_wing_gives_no_comfort_beside_a_fan_nothing_vouches_for() -> None:
    bmc = ("FAN1 | 5400.000 | RPM | ok | na | na | na | na | na | na\n"
           "FAN2 | 5300.000 | RPM | ok | na | na | na | na | na | na\n"
           "FAN3 | {} | RPM | ok | na | na | na | na | na | na\n")
    assert "no-fault" in _wing(bmc.format("5350.000"))
    assert "no-fault" not in _wing(bmc.format("0.000"))  # a server fan at 0 RPM with no status: not "no fault"


def test_every_finding_kind_has_a_template_and_a_word_for_the_fan_table() -> None:
    from typing import get_args

    from app.core.finding import FindingKind
    from app.fans.alarm_words import STATE_WORDS
    from app.fans.words import TEMPLATES

    assert set(TEMPLATES) == set(get_args(FindingKind)) == set(STATE_WORDS)


def test_a_fan_asked_below_what_manual_control_accepts_keeps_turning() -> None:
    """NVIDIA's driver takes 30-100 % under manual control on a GeForce (nvidia-settings' GPUTargetFanSpeed range):
    0 % asked keeps the fan at its floor; 30 % asked is at the floor, not below it."""
    from app.fans.facts import FanFact

    def floor_finding(target: float) -> dict[str, float | str]:
        fan = FanFact(key="nvidia/gpu0 fan 0", chip="nvidia", label="gpu0 fan 0", duty_percent=30.0,
                      target_percent=target, floor_percent=30.0, controller="manual", gpu=0)
        (found,) = [f for f in explained(Machine(fans=(fan,)))[0] if f.kind == "firmware-floor"]
        return dict(found.facts)
    assert floor_finding(0.0)["held"] == "asked-below"
    assert floor_finding(30.0)["held"] == "floor"


KRAKEN = ("$ liquidctl set pump speed {duty}{flag}\n\n$ liquidctl status\n{name}\n"
          "├── Liquid temperature    29.1  °C\n├── Fan speed              982  rpm\n"
          "├── Pump speed            1896  rpm\n└── Firmware version     6.0.2\n")


@pytest.mark.parametrize(("name", "duty", "floor"), [
    ("NZXT Kraken X (X42, X52, X62 or X72)", 30, 50.0),  # kraken2.py: pump 50-100 %
    ("Asetek 690LC (assuming EVGA CLC)", 20, 50.0),  # asetek.py: a fixed pump duty 50-100 %
    ("NZXT Kraken X (X53, X63 or X73)", 10, 20.0),  # kraken3.py: pump 20-100 %
    ("NZXT Kraken X (X53, X63 or X73)", 30, None),  # above its floor: taken as asked
    ("Corsair Hydro H100i Pro XT", 20, None),  # a cooler whose pump floor no driver document gives: not said
])
def test_a_pump_asked_below_its_drivers_floor_runs_at_the_floor(name: str, duty: int, floor: float | None,
                                                                 tmp_path: Path) -> None:
    """liquidctl's drivers clamp a cooler's pump duty to the channel's range before sending it (kraken2.py, kraken3.py,
    asetek.py): a pump set below its floor runs at the floor, known; at or above it, or on a cooler no driver gives a
    floor for, nothing is said of a floor (the capture notes guessed "most likely the firmware does not take a duty
    that low" of any cooler)."""
    for flag in ("", " -v"):  # liquidctl's own flags after the command
        path = tmp_path / "kraken.txt"
        path.write_text(KRAKEN.format(duty=duty, flag=flag, name=name))
        out = io.StringIO()
        assert run([path], as_json=True, out=out, err=io.StringIO()) == 0
        answer = json.loads(out.getvalue())
        floors = [f for f in answer["findings"] if f["kind"] == "firmware-floor"]
        if floor is None:
            assert not floors, floors
            continue
        (found,) = floors
        cooler = name.split(" (assuming")[0]  # liquidctl's guess of the vendor is not part of the device's name here
        assert (found["subjects"], found["confidence"]) == ([f"{cooler}/Pump"], "known")
        assert (found["facts"]["floor"], found["facts"]["target"], found["facts"]["pump"]) == (floor, duty, "yes")
        assert "most likely" not in answer["sentence"]
    if name.startswith("NZXT Kraken X (X42"):
        assert (f"The Pump ({name}) was set to 30 %, below the 50 % liquidctl's driver sends this cooler's pump at "
                "least (it raises a lower duty to it): the pump runs at 50 %, not at the 30 % asked, as slowly as "
                "liquidctl can run it.") in answer["sentence"]


def test_a_duty_set_on_a_coolers_channel_holds_only_that_coolers_fan(tmp_path: Path) -> None:
    """``liquidctl set pump speed 30`` sets the cooler's pump; a board's header also labelled "Pump" in the same paste
    stays under its own chip (it was taken as set to 30 % by hand)."""
    board = "\n$ sensors\nasuswmisensors-isa-0000\nAdapter: ISA adapter\nPump:        2400 RPM\n"
    path = tmp_path / "mixed.txt"
    path.write_text(KRAKEN.format(duty=30, flag="", name="NZXT Kraken X (X42, X52, X62 or X72)") + board)
    out = io.StringIO()
    assert run([path], as_json=True, out=out, err=io.StringIO()) == 0
    facts = {f["key"]: (f["controller"], f["target_percent"]) for f in json.loads(out.getvalue())["fan_facts"]}
    assert facts["NZXT Kraken X (X42, X52, X62 or X72)/Pump"] == ("manual", 30.0)
    assert facts["asuswmisensors/Pump"] == ("bios", None)


def test_a_hubs_duty_on_a_channel_at_0_is_a_stall_only_where_the_hub_lists_just_connected_channels() -> None:
    """NZXT's HUE 2 controllers list a channel only with a fan on it (liquidctl's nzxt-hue2-guide): 0 rpm at 40 % is
    a stall there. A Lian Li Uni hub keeps the duty last set on any channel (lianli-uni-guide): 0 rpm is no fan."""
    def kinds(device: str) -> set[str]:
        fan = FanFact(key=f"{device}/Fan 1", chip=device, label="Fan 1", rpm=0.0, raw="0 rpm", duty_percent=40.0,
                      controller="firmware")
        return {f.kind for f in findings(Machine(fans=(fan,)))}

    assert "stalled" in kinds("NZXT Smart Device V2")
    assert "stalled" not in kinds("Lian Li Uni SL") and "stalled" not in kinds("Corsair Commander Pro")


def test_a_channel_read_at_0_is_said_empty_as_a_guess_and_one_its_controller_calls_absent_as_known() -> None:
    """0 RPM beside fans that turn is most likely an empty header or channel, but a stopped fan reads the same: the
    words say it is a guess. A slot its controller reports absent (a BMC's na/ns) is said plainly."""
    def said(fan: FanFact) -> str:
        turning = FanFact(key="hub/Fan 2", chip="Lian Li Uni SL", label="Fan 2", rpm=900.0, raw="900 rpm",
                          duty_percent=40.0, controller="firmware")
        return explained(Machine(fans=(turning, fan)))[1]

    zero = said(FanFact(key="hub/Fan 1", chip="Lian Li Uni SL", label="Fan 1", rpm=0.0, raw="0 rpm",
                        controller="firmware"))
    driven = said(FanFact(key="hub/Fan 1", chip="Lian Li Uni SL", label="Fan 1", rpm=0.0, raw="0 rpm",
                          duty_percent=40.0, controller="firmware"))
    absent = said(FanFact(key="bmc/FAN4", chip="bmc", label="FAN4", rpm=None, raw="na", present=False))
    assert "has no fan on it, most likely" in zero and "as a stopped fan would read" in zero
    assert "no fan on it, or a fan whose speed its controller does not count" in driven  # driven at 40 %: both
    assert "has no fan on it.)" in absent and "most likely" not in absent


def test_golden_sentences_of_a_daemons_levels() -> None:
    """thinkfan's levels are steps, each said from where it starts, the one it gives back to the firmware (level
    auto) among them; fancontrol's curve is a line between its two ends (no "0 % below" a floor equal to its start)."""
    levels = Curve("thinkfan", "thinkpad", "pwm1", "acpitz temp1", ((0.0, 0.0), (70.0, 100.0)), 0.0, (45.0, 75.0),
                   stepped=True)
    _, sentence, _ = explained(Machine(curves=(levels,)))
    assert sentence == ("thinkfan drives thinkpad pwm1 from acpitz temp1: level by level, 0 % from 0 °C, its "
                        "firmware's own control (level auto) from 45 °C, 100 % from 70 °C.")
    line = Curve("fancontrol", "it8728", "pwm2", "temp1_input", ((20.0, 0.0), (60.0, 100.0)), 0.0)
    _, sentence, _ = explained(Machine(curves=(line,)))
    assert sentence == "fancontrol drives it8728 pwm2 from temp1_input: 0 % at 20 °C rising to 100 % at 60 °C."
    combined = Curve("fan2go", "it8620", "pwm4", "coretemp temp1, it8620 temp3", (), combined="average")
    _, sentence, _ = explained(Machine(curves=(combined,)))  # fan2go's function curve: no one temperature's duty
    assert sentence == "fan2go drives it8620 pwm4 by the average of its curves over coretemp temp1, it8620 temp3."
    steps, _ = decisions("thinkfan: Temperatures(bias): 67(0) -> Fans: level 5\n"
                         "thinkfan: Temperatures(bias): 81(0) -> Fans: level disengaged\n")
    _, sentence, _ = explained(Machine(decisions=steps))
    assert sentence == ("thinkfan last logged setting the fan to level disengaged (unregulated: as fast as the fan "
                        "goes), for a reading of 81 °C (before it, level 5 at 67 °C): the level holds until its next "
                        "decision.")


def test_the_hottest_reading_on_an_input_named_for_its_pin_says_the_board_chose_its_wiring() -> None:
    """nct6775.rst and it87.rst: what a board fan chip's temperature inputs measure depends on the motherboard; an
    input named for the chip's pin (AUXTIN0, CPUTIN, SYSTIN, a bare tempN) may have nothing on it. The hottest such
    reading is said with that caveat, once; a board firmware's named reading, or a CPU's own, without it (fails when
    every board input carries it, or none does)."""
    board = ("nct6798-isa-0290\nAdapter: ISA adapter\nfan2:  1105 RPM  (min =    0 RPM)\n"
             "SYSTIN:  +33.0°C  sensor = thermistor\nAUXTIN0:  +95.0°C  sensor = thermistor\n")
    found, sentence, _ = explained(machine(read.read(board)[0]))
    hottest = next(f for f in found if f.kind == "hottest")
    assert (hottest.subjects, hottest.facts.get("wiring")) == (("nct6798/AUXTIN0",), "board"), hottest
    assert sentence.endswith("The hottest temperature read is AUXTIN0 (nct6798) at 95 °C, an input the board wires "
                             "as it chooses (it may have nothing attached, or measure something else than its name "
                             "says).")
    named = board.replace("AUXTIN0", "Chipset Temperature")
    assert "wiring" not in next(f for f in explained(machine(read.read(named)[0]))[0] if f.kind == "hottest").facts
    cpu = board + "\ncoretemp-isa-0000\nAdapter: ISA adapter\nPackage id 0:  +99.0°C\n"
    assert "wiring" not in next(f for f in explained(machine(read.read(cpu)[0]))[0] if f.kind == "hottest").facts
    grepped = board.split("\n", 2)[2]  # `sensors | grep` cut the chip's header: the pin's name is still its own
    assert next(f for f in explained(machine(read.read(grepped)[0]))[0] if f.kind == "hottest").facts.get(
        "wiring") == "board"
    bare = "temp1:  +95.0°C\nfan2:  1105 RPM\n"  # a bare tempN of no named chip: nothing says whose pin it is
    assert "wiring" not in next(f for f in explained(machine(read.read(bare)[0]))[0] if f.kind == "hottest").facts


HOT_BOARD = ("k10temp-pci-00c3\nAdapter: PCI adapter\nTctl:         +{cpu}°C  \n\n"
             "nct6798-isa-0290\nAdapter: ISA adapter\nfan2:   2012 RPM  (min =    0 RPM)\n"
             "pwm2:   {duty}%  (mode = pwm){manual}\n")


def test_a_fan_at_full_under_its_own_curve_beside_a_hot_part_is_that_curve_at_its_top() -> None:
    """sysfs-interface.rst and nct6775.rst: under the chip's automatic curve the duty rises with its temperature to
    its top. At 100 % beside a CPU at 95 °C the curve is at its top and the cooling can do no more (likely); at 60 %,
    beside a CPU at 60 °C, or held there by hand (MANUAL CONTROL: pwm_enable 1), it is not this rule's (fails when
    the rule ignores the duty, the heat or the control); a laptop's fan at its maximum speed is at its top too."""
    found, sentence, _ = explained(machine(read.read(HOT_BOARD.format(cpu="95.1", duty=100, manual=""))[0]))
    assert (found[0].kind, found[0].confidence, found[0].subjects) == ("full-while-hot", "likely", ("nct6798/fan2",))
    assert sentence.startswith("The nct6798 fan2 is at full (100 %) because Tctl (k10temp) is at 95 °C: its "
                               "controller's curve is at its top and the cooling can do no more (a part this hot "
                               "may be slowing itself for heat).")
    for cpu, duty, manual in (("95.1", 60, ""), ("60.0", 100, ""), ("95.1", 100, "  MANUAL CONTROL")):
        kinds = {f.kind for f in explained(machine(read.read(HOT_BOARD.format(cpu=cpu, duty=duty,
                                                                            manual=manual))[0]))[0]}
        assert "full-while-hot" not in kinds, (cpu, duty, manual, kinds)
    laptop = ("dell_smm-isa-0000\nAdapter: ISA adapter\nProcessor Fan: 4912 RPM  (min =    0 RPM, max = 4900 RPM)\n"
              "CPU:            +94.0°C  \n")
    (lead, *_), _, _ = explained(machine(read.read(laptop)[0]))
    assert (lead.kind, lead.facts["rpm"]) == ("full-while-hot", 4912.0)
