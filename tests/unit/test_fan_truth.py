"""The fan sentence says only what it can back (shaped from real machines' captures): a tachometer that reads 0 or
65535 while the duty asks for a spinning fan is stalled or unreported, never "at rest"; amdgpu's fan1_target is not
a target; raw values out of range are not readings; with no floor a fan is judged by its duty; with no fan read the
verdict says so; a guessed source is said to be a guess."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.collect.fans import FanService
from app.collect.hwmon import read_fans
from app.core.fan import Fan, fan_state
from app.core.model import HostSensor
from app.core.snapshot import Snapshot
from app.verdict.explain import explain
from tests.support.builders import gpu as make_gpu
from tests.support.builders import snap
from tests.support.hwmon import hwmon_tree


def amdgpu(tmp: Path, **files: str) -> Path:
    """The RX 7900 XTX capture with some of its files changed (an amdgpu card as its driver shows it)."""
    root = hwmon_tree(tmp, "amdgpu-rx7900xtx")
    for name, value in files.items():
        (root / "class" / "hwmon" / "hwmon8" / name).write_text(value + "\n")
    return root


def with_fans(base: Snapshot, root: Path, tmp: Path, sensors: tuple[HostSensor, ...] = ()) -> Snapshot:
    service = FanService(sys_root=str(root), etc_root=str(tmp / "etc"))
    host = replace(base.host, temperatures=sensors)
    fans, air = service.read(base.gpus, host)
    return replace(base, host=host, fans=fans, air=air)


HOT_CARD = (HostSensor("amdgpu", "edge", 61.0), HostSensor("amdgpu", "junction", 82.0),
            HostSensor("amdgpu", "mem", 70.0))


def test_an_amdgpu_fan_at_0_rpm_under_duty_is_stalled_or_unreported_never_at_rest(tmp_path: Path) -> None:
    """0 RPM and fan1_target 0 (the kernel copies one into the other) while the card drives 44 % at 82 °C."""
    root = amdgpu(tmp_path, pwm1="112", fan1_target="0")
    state = with_fans(snap([make_gpu(util=0, temp=61, power=40, fan=None)]), root, tmp_path, HOT_CARD)
    (fan,) = state.fans
    assert fan.state == "stalled" and not fan.stopped and fan.target_rpm is None
    assert "reads 0 RPM at 44 % duty: stalled, or its tachometer does not report" in (fan.alarm or "")
    headline = explain(state).headline
    assert "rest" not in headline and "it has stalled and nothing cools that part" in headline, headline
    assert "junction (amdgpu) is at 82 °C" in headline  # what the stalled fan leaves uncooled


COOL_CARD = (HostSensor("amdgpu", "edge", 38.0), HostSensor("amdgpu", "junction", 44.0),
             HostSensor("amdgpu", "mem", 46.0))


def test_65535_on_amdgpu_is_a_fan_with_no_pulses_not_a_dropped_channel(tmp_path: Path) -> None:
    root = amdgpu(tmp_path, fan1_input="65535", pwm1="128")
    (read,) = read_fans(root)
    assert read.dead is None and read.rpm == 0 and read.raw_rpm == 65535  # the reader keeps the raw value; no verdict
    assert not read.stopped and read.alarm_kind is None
    base = snap([make_gpu(util=0, temp=40, power=12, fan=None)])
    (fan,) = with_fans(base, root, tmp_path, COOL_CARD).fans
    assert fan.state == "stalled" and fan.alarm_kind == "stalled" and not fan.stopped
    assert "reads 65535 RPM at 50 % duty: stalled" in (fan.alarm or "")  # the wing's clause, as the service puts it
    rest_root = amdgpu(tmp_path / "b", fan1_input="65535", pwm1="0")
    (resting,) = with_fans(base, rest_root, tmp_path, COOL_CARD).fans
    assert resting.stopped and resting.state == "stopped" and resting.alarm_kind is None  # no duty, cool: at rest
    (hot,) = with_fans(base, rest_root, tmp_path, HOT_CARD).fans
    assert not hot.stopped and hot.state != "stopped"  # no duty at 82 °C: never at rest


def test_amdgpu_fan1_target_never_makes_an_off_target_alarm(tmp_path: Path) -> None:
    (fan,) = read_fans(amdgpu(tmp_path, fan1_input="1500", fan1_target="3000", pwm1="128"))
    assert fan.target_rpm is None and fan.alarm_kind is None and "not a target" in fan.unsupported["target_rpm"]


def test_raw_values_out_of_range_are_not_readings_and_say_why(tmp_path: Path) -> None:
    (fan,) = read_fans(amdgpu(tmp_path, pwm1="300", fan1_input="-1"))
    assert fan.percent is None and fan.unsupported["percent"] == "pwm1 read 300: outside 0-255, not a reading"
    assert fan.rpm is None and "read -1" in fan.unsupported["rpm"]
    assert "118 %" not in explain(snap([], fans=(fan,))).headline


def test_with_no_floor_known_a_fan_at_70_percent_is_loud_and_no_floor_is_claimed() -> None:
    fan = Fan("hwmon:it8792/fan1", "it8792", 1, "SYS_FAN1", rpm=2100, percent=70.0, state="running")
    verdict = explain(snap([], fans=(fan,)))
    assert verdict.headline.startswith("The SYS_FAN1 (it8792 fan1) runs at 70 % (2,100 RPM)"), verdict.headline
    assert "floor" not in verdict.headline and "idle curve" not in verdict.headline
    quiet = explain(snap([], fans=(replace(fan, percent=30.0, rpm=900),)))
    (lead,) = quiet.fan_findings  # the fan wing's account: turning at what is read, no floor invented
    assert (lead.kind, lead.confidence, lead.facts["duty"], lead.facts["rpm"]) == ("turning", "known", 30.0, 900.0)
    assert quiet.headline.startswith("Nothing is busy. The SYS_FAN1 (it8792) runs at 900 RPM (30 % duty)")
    assert "floor" not in quiet.headline and "curve" not in quiet.headline


def test_no_fan_read_is_said_and_no_curve_is_invented() -> None:
    headline = explain(snap([])).headline  # a machine whose fans nothing here can read
    assert headline == "Nothing is busy. No fan is read here, so what the fans do cannot be seen."
    dead = Fan("hwmon:nct6776/fan1", "nct6776", 1, None, rpm=None, dead="the driver reports a fault on this channel",
               state="dead")
    assert "No fan is read here" in explain(snap([], fans=(dead,))).headline
    empty = explain(snap([], fans=(replace(dead, rpm=0, dead="0 RPM: no fan on this header (or one the BMC drives)"),)))
    assert [(f.kind, f.confidence) for f in empty.fan_findings] == [("headers-read-zero", "possible")]
    assert "BMC" in empty.headline and "at rest" not in empty.headline  # a Supermicro -F board: its BMC drives them


def test_an_amdgpu_fans_source_is_the_hottest_sensor_and_said_as_a_guess(tmp_path: Path) -> None:
    root = amdgpu(tmp_path, pwm1="153", fan1_input="2100")  # 60 %: memory at 70 °C woke it, edge is 61 °C
    sensors = (HostSensor("amdgpu", "edge", 37.0), HostSensor("amdgpu", "junction", 45.0),
               HostSensor("amdgpu", "mem", 60.0))
    state = with_fans(snap([make_gpu(util=0, temp=37, power=20, fan=None)]), root, tmp_path, sensors)
    (fan,) = state.fans
    assert fan.source == "amdgpu mem" and fan.source_c == 60.0
    headline = explain(state).headline
    assert "probably following amdgpu mem at 60 °C (the hottest of the card's sensors; the card does not say)" \
        in headline, headline


def test_the_terminal_shows_how_sure_a_learned_source_is_and_a_guess_as_a_guess() -> None:
    from app.cli.terminal import render

    learned = Fan("hwmon:nct6798/fan3", "nct6798", 3, "SYS_FAN3", rpm=1400, percent=55.0, source="k10temp Tctl",
                  source_from="learned", confidence=0.62, state="running")
    guessed = Fan("hwmon:amdgpu/fan1", "amdgpu", 1, None, rpm=1400, percent=55.0, source="amdgpu mem",
                  source_from="design", state="running")
    text = render(snap([], fans=(learned, guessed)), width=200)
    assert "k10temp Tctl (learned, 62 % sure)" in text and "amdgpu mem (probably)" in text


def test_a_temperature_that_cannot_be_real_is_left_out_with_its_reason(tmp_path: Path) -> None:
    """216 °C (an empty header's placeholder), -1 (i8kutils' no reading), 123.5 °C beside sensors under 60 °C (an
    unconnected Super-I/O input), at or above its own critical limit; the CPU's 37 °C stays."""
    from app.collect.hwmon import judged_temperatures

    base = tmp_path / "class" / "hwmon" / "hwmon1"
    base.mkdir(parents=True)
    files = {"name": "nct6776", "temp1_input": "37000", "temp1_label": "SYSTIN", "temp2_input": "123500",
             "temp2_label": "CPUTIN", "temp3_input": "216000", "temp3_label": "Tsensor", "temp4_input": "-1000",
             "temp4_label": "AUXTIN", "temp5_input": "40000", "temp5_label": "PECI"}
    for name, value in files.items():
        (base / name).write_text(value + "\n")
    kept, left_out = judged_temperatures(tmp_path)
    assert sorted(s.label for s in kept) == ["PECI", "SYSTIN"]
    assert "nothing attached" in left_out["nct6776 CPUTIN"] and "placeholder" in left_out["nct6776 AUXTIN"]
    assert "216" in left_out["nct6776 Tsensor"]
    (base / "temp5_crit").write_text("35000\n")  # a limit under 100 °C says nothing: the reading stays
    assert "nct6776 PECI" not in judged_temperatures(tmp_path)[1]
    (base / "temp1_input").write_text("105000\n")
    (base / "temp1_crit").write_text("100000\n")
    assert "critical limit" in judged_temperatures(tmp_path)[1]["nct6776 SYSTIN"]


def test_a_cpu_at_its_tjmax_is_a_reading(tmp_path: Path) -> None:
    """coretemp.rst: valid readings run from 0 to TjMax (tempN_crit), the register a delta from it, and at TjMax the
    CPU's protection forcibly cools it: a package at 100 °C with its crit at 100 °C is a CPU at its limit, kept (and
    its limit with it), even beside a board whose other sensors read under 60 °C; a board input there is not."""
    from app.collect.hwmon import judged_temperatures

    cpu = tmp_path / "class" / "hwmon" / "hwmon2"
    cpu.mkdir(parents=True)
    for name, value in {"name": "coretemp", "temp1_input": "100000", "temp1_label": "Package id 0",
                        "temp1_crit": "100000", "temp1_max": "100000"}.items():
        (cpu / name).write_text(value + "\n")
    board = tmp_path / "class" / "hwmon" / "hwmon1"
    board.mkdir(parents=True)
    for name, value in {"name": "nct6776", "temp1_input": "41000", "temp1_label": "SYSTIN",
                        "temp2_input": "100000", "temp2_label": "AUXTIN", "temp2_crit": "100000"}.items():
        (board / name).write_text(value + "\n")
    kept, left_out = judged_temperatures(tmp_path)
    assert [(s.label, s.temperature_c, s.critical_c) for s in kept if s.chip == "coretemp"] == \
        [("Package id 0", 100.0, 100.0)], left_out
    assert "nct6776 AUXTIN" in left_out


def test_0_rpm_with_no_duty_read_is_not_called_at_rest() -> None:
    """A ThinkPad whose EC does not fill the tachometer: 0 RPM while the fan runs."""
    fan = Fan("hwmon:thinkpad/fan1", "thinkpad", 1, None, rpm=0)
    assert fan_state(fan) == "unknown"
    verdict = explain(snap([], fans=(replace(fan, state="unknown"),)))
    assert [(f.kind, f.confidence) for f in verdict.fan_findings] == [("zero-unjudged", "possible")]
    assert "at rest, or a tachometer that does not report" in verdict.headline and "fan-stop" not in verdict.headline


def test_every_fan_reader_range_checks_its_raw_values() -> None:
    """liquidctl, the BMC and a ThinkPad's EC keep no impossible reading (fails when any reader skips ``checked``):
    each is left out with the raw value as the reason."""
    from app.collect import bmc, liquidctl, thinkpad

    cooler = liquidctl.parse("Corsair Hydro H100i Pro XT\n├── Liquid temperature    33.0  °C\n"
                             "├── Fan 1 speed          70000  rpm\n├── Fan 1 duty              300  %\n"
                             "└── Pump speed            1951  rpm\n")
    fans = {f.label: f for f in liquidctl.reading(cooler).fans}
    assert fans["Fan 1"].rpm is None and "read 70000" in fans["Fan 1"].unsupported["rpm"]
    assert fans["Fan 1"].percent is None and "read 300" in fans["Fan 1"].unsupported["percent"]
    assert fans["Pump"].rpm == 1951
    (server,) = bmc.fans(bmc.parse("FAN1 | 65535 RPM | ok\n"))
    assert server.rpm is None and "read 65535" in server.unsupported["rpm"]
    (pct,) = bmc.fans(bmc.parse("Fan 1 DutyCycle | 391 percent | ok\n"))
    assert pct.percent is None and "read 391" in pct.unsupported["percent"]
    ec = thinkpad.parse_fan("status:\t\tenabled\nspeed:\t\t65535\nlevel:\t\tauto\n")
    assert ec is not None and ec.rpm is None and "read 65535" in ec.unsupported["rpm"]


def _board(tmp: Path, **extra: str) -> Path:
    chip = tmp / "sys" / "class" / "hwmon" / "hwmon3"
    chip.mkdir(parents=True)
    files = {"name": "asusec", "fan2_input": "8680", "fan2_label": "VRM HS", "temp1_input": "48000",
             "temp1_label": "VRM", "temp2_input": "67000", "temp2_label": "Chipset", **extra}
    for name, value in files.items():
        (chip / name).write_text(value + "\n")
    return tmp / "sys"


def test_a_board_fan_named_for_a_place_probably_follows_that_place_and_says_it_is_a_guess(tmp_path: Path) -> None:
    """"VRM HS" beside a "VRM" temperature: its source by its name alone, said as a guess; a chip's own declaration
    (pwm_temp_sel) outranks it, and a fan whose name names no place gets none (fails without ``_named_source``)."""
    sensors = (HostSensor("asusec", "VRM", 48.0), HostSensor("asusec", "Chipset", 67.0))
    (fan,) = with_fans(snap([]), _board(tmp_path / "a"), tmp_path / "a", sensors).fans
    assert fan.source == "asusec VRM" and fan.source_from == "named" and fan.source_c == 48.0
    turning = next(f for f in explain(snap([], fans=(fan,))).fan_findings if f.kind == "turning")  # beside, not
    # as what it follows
    assert turning.facts["source"] == "asusec/VRM" and "follows" not in turning.facts
    declared = with_fans(snap([]), _board(tmp_path / "b", pwm2="120", pwm2_temp_sel="2"), tmp_path / "b", sensors)
    assert declared.fans[0].source_from == "declared"
    verdict = explain(declared)
    found = {f.kind: f for f in verdict.fan_findings}
    assert (found["turning"].facts["source"], found["turning"].facts["follows"]) == ("asusec/Chipset", "declared")
    assert (found["fan-loud"].facts["source"], found["fan-loud"].facts["how"]) == ("asusec Chipset", "declared")
    assert "following Chipset (asusec) at 67 °C" in verdict.headline or \
        "following asusec Chipset at 67 °C" in verdict.headline, verdict.headline
    chassis = with_fans(snap([]), _board(tmp_path / "c", fan2_label="Chassis Fan 1"), tmp_path / "c", sensors)
    assert chassis.fans[0].source is None


def test_an_amdgpu_fan_with_none_of_its_cards_temperatures_read_names_no_source(tmp_path: Path) -> None:
    """amdgpu-ls gives a fan and no temperature: no "probably following amdgpu edge" for an edge never read (fails
    when the card's source falls back to a name)."""
    (fan,) = [f for f in with_fans(snap([]), amdgpu(tmp_path), tmp_path).fans if f.chip == "amdgpu"]
    assert fan.source is None and fan.source_from is None and fan.cools == "the GPU"
    (hot,) = [f for f in with_fans(snap([]), amdgpu(tmp_path / "b"), tmp_path / "b", HOT_CARD).fans
              if f.chip == "amdgpu"]
    assert hot.source == "amdgpu junction"
