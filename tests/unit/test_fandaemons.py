"""thinkfan and fan2go configurations of real machines (tests/fixtures/fandaemons/, each with its source) read into
the fans they drive, what those follow and the curve."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path

from app.cli.replay import run
from app.collect.fan2go import fan2go
from app.collect.fwfanctrl import fwfanctrl
from app.collect.thinkfan import thinkfan
from tests.support.explained import explained
from tests.unit.test_fan_readers import explain, findings_of

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "fandaemons"


def config(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_thinkfan_levels_drive_the_thinkpad_fan_from_the_hottest_sensor() -> None:
    read = thinkfan(config("thinkfan-p14s-levels.yaml"))
    (fan,) = read.declared
    assert (fan.chip, fan.pwm, fan.daemon, fan.fans) == ("thinkpad", "pwm1", "thinkfan", ())
    assert fan.follows is not None and fan.follows.startswith("the hottest of ")
    assert "coretemp temp2,3,4,5" in fan.follows and "nvme temp1,2,3" in fan.follows
    assert fan.curve[0] == (0.0, 0.0) and fan.curve[1] == (58.0, 14.3) and fan.curve[-1] == (93.0, 100.0)


def test_thinkfan_limit_lists_take_each_levels_highest_lower_limit() -> None:
    (fan,) = thinkfan(config("thinkfan-e540-limits.yaml")).declared
    assert fan.curve == ((0.0, 0.0), (45.0, 42.9), (55.0, 100.0), (65.0, 100.0))
    assert "the NVIDIA GPU at 01:00.0" in (fan.follows or "")


def test_thinkfans_legacy_syntax_is_read_as_thinkfan_reads_it() -> None:
    """thinkfan.conf.legacy(5): ``tp_fan``, ``hwmon`` paths and ``(level, low, high)`` lines (here a real dotfiles'
    generator's levels, one of them 127: thinkpad_acpi's 0x40 bit, full speed); and the complex form, whose level
    starts at the highest of its lower bounds."""
    text = ("tp_fan /proc/acpi/ibm/fan\nhwmon /sys/devices/platform/coretemp.0/temp1_input\n\n# level  min  max\n"
            "(0,     0,      42)\n(1,     40,     47)\n(7,     73,     93)\n(127,   85,     32767)\n")
    (fan,) = thinkfan(text).declared
    assert (fan.chip, fan.pwm, fan.stepped) == ("thinkpad", "pwm1", True)
    assert fan.curve == ((0.0, 0.0), (40.0, 14.3), (73.0, 100.0), (85.0, 100.0))
    assert fan.follows == "coretemp.0/temp1_input"
    complex_form = ("pwm_fan /sys/class/hwmon/hwmon2/pwm1\n{0 (0 0) (50 60)}\n{128 (45 55) (70 80)}\n"
                    "{255 (65 75) (99 99)}\n")
    (hwmon,) = thinkfan(complex_form).declared
    assert (hwmon.chip, hwmon.pwm, hwmon.curve) == ("hwmon", "pwm1", ((0.0, 0.0), (55.0, 50.2), (75.0, 100.0)))


def test_a_complex_thinkfan_level_over_several_lines_is_one_level() -> None:
    """thinkfan's own issue 19 shows the complex form written as a block over lines (``{"level 1"``, its lower
    bounds, its upper bounds, ``}``): each block is one level, starting at its highest lower bound; read line by
    line, each bound's line was taken for a level of its own (a level 45, a level 57: 100 % from 73 °C)."""
    text = ('tp_fan /proc/acpi/ibm/fan\n\n{"level 0"\n        (0 0 0 0)\n        (45 54 54 54)\n}\n\n'
            '{"level 1"\n        (40 46 46 46)\n        (55 58 58 58)\n}\n\n{"level 7"\n        (57 63 63 63)\n'
            '        (65 73 73 73)\n}\n\n{"level disengaged"\n        (60 69 69 69)\n        (99 99 99 99)\n}\n')
    (fan,) = thinkfan(text).declared
    assert fan.curve == ((0.0, 0.0), (46.0, 14.3), (63.0, 100.0), (69.0, 100.0))


def test_one_thinkfan_level_over_every_temperature_is_a_fan_held_at_it(tmp_path: Path) -> None:
    """A real thinkfan.conf (legacy syntax, thinkfan's issue 127: an E14 whose fan "periodically switches to auto"):
    ``tp_fan``, ``tp_thermal`` and one level, ``(5, -32767, 32767)``, a comment after it. The fan is held at level 5
    (71 %) at every temperature, said so; it was refused (a configuration with fewer than two levels was taken for no
    configuration). One level without a fan line stays no configuration (fails with two levels required)."""
    text = ("tp_fan /proc/acpi/ibm/fan\ntp_thermal /proc/acpi/ibm/thermal (10 0 0 0 0 0 0 0)\n"
            "(5, -32767, 32767)  # (also tried (127, 0, 256) in case that matters, but same effect\n")
    (fan,) = thinkfan(text).declared
    assert (fan.chip, fan.pwm, fan.curve) == ("thinkpad", "pwm1", ((-32767.0, 71.4),))
    code, answer = explain(text, tmp_path)
    assert code == 0 and "held at 71 % whatever the temperature (one level)" in str(answer["sentence"])
    assert not thinkfan("(5, -32767, 32767)\n").declared


def test_thinkfans_defaults_its_auto_level_and_a_hwmon_fans_pwm_scale() -> None:
    """No fan named: thinkfan drives /proc/acpi/ibm/fan ("Using default fan control in /proc/acpi/ibm/fan"); "level
    auto" is the range it gives the fan back to the firmware, not a duty (a ThinkPad X220's configuration as its
    owner posted it, under a heading line); a hwmon fan's speeds are pwm values 0-255, not the EC's 0-7; several
    fans take one speed each from a list."""
    x220 = ("/etc/thinkfan.yaml\nsensors:\n  - hwmon: /sys/class/thermal/thermal_zone0/temp\n"
            "  - tpacpi: /proc/acpi/ibm/fan\nlevels:\n  - [0, 0, 50]\n  - [\"level auto\", 45, 75]\n"
            "  - [\"level disengaged\", 70, 255]\n")
    (fan,) = thinkfan(x220).declared
    assert (fan.chip, fan.curve, fan.firmware_c) == ("thinkpad", ((0.0, 0.0), (70.0, 100.0)), (45.0, 75.0))
    two = ("sensors:\n  - hwmon: /sys/class/hwmon/hwmon1/temp1_input\nfans:\n  - hwmon: /sys/class/hwmon/hwmon2/pwm1\n"
           "  - hwmon: /sys/class/hwmon/hwmon2/pwm2\nlevels:\n  - speed: [0, 64]\n    upper_limit: [50]\n"
           "  - speed: [128, 255]\n    lower_limit: [45]\n")
    first, second = thinkfan(two).declared
    assert (first.pwm, first.curve) == ("pwm1", ((0.0, 0.0), (45.0, 50.2)))
    assert (second.pwm, second.curve) == ("pwm2", ((0.0, 25.1), (45.0, 100.0)))


def test_fan2go_names_each_fan_by_chip_and_channel_with_its_sensor() -> None:
    front, bottom, top = fan2go(config("fan2go-it8620.yaml")).declared
    assert (top.chip, top.pwm, top.fans, top.daemon) == ("it8620", "pwm5", ("fan5_input",), "fan2go")
    # never_stop: yes, so the curve's 0 % is the fan's minimum, fan2go's 1 % (it replaces values under MinPwm with it)
    assert (top.source_chip, top.source, top.curve) == ("coretemp", "package", ((45.0, 1.0), (70.0, 100.0)))
    assert front.follows == "acpitz temp1" and bottom.source == "temp3"


def test_fan2gos_current_schema_names_each_fan_its_curve_and_sensors() -> None:
    """fan2go's current example configuration: a fan's controller and channels under ``hwmon``, its curve by id, a
    linear curve by steps or from min to max, a function of curves following each of their sensors. Pasted after
    the prompt that printed it, it is read as well (the whole text is no YAML)."""
    text = config("fan2go-current.yaml")
    cpu, front = fan2go(text).declared
    assert (cpu.chip, cpu.pwm, cpu.fans, cpu.follows) == ("nct6798", "pwm1", ("fan1_input",), "coretemp temp1")
    # neverStop: its 0 % is the fan's minimum, fan2go's 1 %
    assert cpu.curve == ((40.0, 1.0), (41.0, 1.0), (65.0, 33.0), (80.0, 100.0)) and cpu.floor_percent == 1.0
    assert (front.chip, front.pwm, front.curve, front.combined) == ("it8620", "pwm4", (), "average")
    assert front.follows_all == ("coretemp temp1", "it8620 temp3", "drivetemp temp1")
    # a step's bare number is fan2go's speed value, 0-255, not a share (its README: "Speed (0-255)"; 255 is 100 %):
    # 80 °C: 255 was read as "255 %"
    bare = text.replace("- 65: 33%", "- 65: 84").replace("- 80: 100%", "- 80: 255")
    assert fan2go(bare).declared[0].curve == ((40.0, 1.0), (41.0, 1.0), (65.0, 32.9), (80.0, 100.0))
    # followed after a blank line by its log, whose indented lines are no YAML, the configuration is still read
    logged = text + "\n  DEBUG   Evaluating curve 'cpu_curve'. Sensor 'cpu_sensor' temp '95°'. Desired PWM: 255\n"
    assert fan2go(logged).declared == fan2go(text).declared
    pasted = "$ cat /etc/fan2go/fan2go.yaml\n" + text + "$ sudo systemctl status fan2go\n● fan2go.service - active\n"
    assert fan2go(pasted).declared == (cpu, front)


def test_a_broken_file_declares_nothing_and_says_why() -> None:
    assert thinkfan("sensors: [").declared == () and "not YAML" in (thinkfan("sensors: [").error or "")
    assert fan2go("- a list").error == "not a mapping of sensors, fans and levels"
    assert fan2go("sensors: []\n").error == "no fans declared"


def test_a_configuration_is_parsed_once_per_change_not_each_minute(tmp_path: Path) -> None:
    """A daemon's file is read once a minute; a large one within CONFIG_LIMIT (a 240 KB fan2go file took seconds
    of CPU each time) is parsed again only when its text changes."""
    from app.collect.daemonyaml import Read
    from app.collect.fandaemons import ConfigSource

    calls: list[str] = []

    def counted(text: str) -> Read:
        calls.append(text)
        return fan2go(text)

    path = tmp_path / "fan2go.yaml"
    path.write_text(config("fan2go-it8620.yaml"))
    source = ConfigSource(path, counted, "fan2go")
    first = [source.read() for _ in range(5)]
    assert len(calls) == 1 and all(r == first[0] for r in first)
    path.write_text(path.read_text() + "\n# changed\n")
    source.read()
    assert len(calls) == 2


def test_fw_fanctrl_drives_the_framework_ec_fan_by_the_strategy_it_uses() -> None:
    """fw-fanctrl's own default configuration (github.com/TamtamHero/fw-fanctrl, src/fw_fanctrl/_resources/
    config.json at 1479f266): the default strategy "lazy" on mains power, a flat 15 % below 50 °C (its floor: it
    never stops the fan), then the line through its points to 100 % at 85 °C; the other strategies are not in use.
    A strategy named for battery (``strategyOnDischarging``) is a second curve, said as the battery's; one named but
    missing declares nothing, said as such."""
    text = config("fw-fanctrl-config.json")
    (fan,) = fwfanctrl(text).declared
    assert (fan.chip, fan.pwm, fan.daemon) == ("cros_ec", "pwm1", "fw-fanctrl")
    assert fan.floor_percent == 15.0 and fan.curve == ((50.0, 15.0), (65.0, 25.0), (70.0, 35.0), (75.0, 50.0),
                                                       (85.0, 100.0))
    assert fan.follows is not None and "ectool temps all" in fan.follows
    mains, battery = fwfanctrl(text.replace('"strategyOnDischarging": ""', '"strategyOnDischarging": "laziest"')
                               ).declared
    assert (mains.daemon, mains.strategy, mains.on_battery) == ("fw-fanctrl", "lazy", False)
    assert (battery.daemon, battery.strategy, battery.on_battery) == ("fw-fanctrl", "laziest", True)
    assert battery.floor_percent == 0.0 and battery.curve[0] == (45.0, 0.0)
    missing = fwfanctrl(text.replace('"defaultStrategy": "lazy"', '"defaultStrategy": "gone"'))
    assert missing.declared == () and missing.error == "no strategy with a speed curve is named"
    assert fwfanctrl("not json").declared == ()


def test_a_pasted_fw_fanctrl_configuration_is_its_curve_not_readings(tmp_path: Path) -> None:
    """``fanwhy explain`` of the configuration after its ``cat`` line: the curve it imposes, and no fan or temperature
    read from its fields (the general JSON reader took "fanSpeedUpdateFrequency" for a fan at 5 % and a curve
    point's temp for a sensor)."""
    path = tmp_path / "config.txt"
    path.write_text("$ cat /etc/fw-fanctrl/config.json\n" + config("fw-fanctrl-config.json"))
    out, err = io.StringIO(), io.StringIO()
    assert run([path], as_json=True, out=out, err=err) == 0, err.getvalue()
    answer = json.loads(out.getvalue())
    assert [f["kind"] for f in answer["findings"]] == ["daemon-curve"] and answer["fans"] == []


def test_fw_fanctrls_status_is_the_duty_it_set_and_the_temperature_it_follows() -> None:
    """``fw-fanctrl print`` as its StatusRuntimeResult writes it: the duty it set on the EC's fans, by a daemon;
    paused (``Active: False``) the EC's own control has them, and the duty shown is only the last one it set."""
    from app.fans import read
    from app.fans.adapt import machine

    status = ("$ fw-fanctrl print\nStrategy: 'lazy'\nSpeed: 25%\nTemp: 66.0°C\nMovingAverageTemp: 63.4°C\n"
              "EffectiveTemp: 63.4°C\nActive: {active}\n")
    found, kind = read.read(status.format(active="True"))
    (fan,) = machine(found).fans
    assert kind == "fw-fanctrl's status (fw-fanctrl print)"
    assert (fan.chip, fan.duty_percent, fan.controller) == ("fw-fanctrl", 25.0, "daemon")
    temps = {t.label: t.celsius for t in machine(found).temperatures}
    assert temps == {"EC hottest sensor": 66.0, "EC moving average": 63.4, "temperature followed": 63.4}
    paused = machine(read.read(status.format(active="False"))[0])
    assert all(f.duty_percent is None for f in paused.fans)


NVML_GPU_CONTROL_PASS = ("LOG[2024-09-23 02:16:{s:02d}]: Current temp: {c}°C\nLOG[2024-09-23 02:16:{s:02d}]: Current "
                         "speed: {p}%\nLOG[2024-09-23 02:16:{s:02d}]: Fan controller speed 0: {p}%\nLOG[2024-09-23 "
                         "02:16:{s:02d}]: Fan controller speed 1: {p}%\nLOG[2024-09-23 02:16:{s:02d}]: {decision}\n")


def test_nvml_gpu_controls_default_duty_holds_the_cards_fans(tmp_path: Path) -> None:
    """NVML-GPU-Control's control loop (HackTestes/NVML-GPU-Control, helper_functions.py's fan_control_subroutine):
    each pass logs the card's temperature and every fan controller's speed, then writes a duty to them all; with no
    point of its curve at or below the temperature it writes its --default-speed, at every pass. The fans are then
    held by the tool (nvmlDeviceSetFanSpeed_v2 sets NVML's manual policy), not by the card's curve: said with the
    duty, the temperature and the passes, never as the card's firmware's speed. A pass cut before its temperature
    (the log's first line) is not counted."""
    default = "Found no temperature match, using default fan speed: 50"
    text = "LOG[2024-09-23 02:16:45]: " + default + "\n" + "".join(
        NVML_GPU_CONTROL_PASS.format(s=s, c=28, p=50, decision=default) for s in (46, 47, 48))
    answer = explained(tmp_path, text)
    lead = answer["findings"][0]
    assert (lead["kind"], lead["confidence"], lead["subjects"]) == \
        ("daemon-decided", "known", ["nvidia/gpu0 fan 0", "nvidia/gpu0 fan 1"])
    assert lead["facts"] == {"daemon": "NVML-GPU-Control", "duty": 50.0, "celsius": 28.0, "why": "default",
                             "passes": 3.0}
    assert {f["controller"] for f in answer["fan_facts"]} == {"daemon"}
    assert answer["read_as"] == ["paste.txt: NVML-GPU-Control's log"]
    assert answer["sentence"].startswith(
        "NVML-GPU-Control found no point of its curve at or below the card's 28 °C and wrote its default speed, 50 %, "
        "to the fan 0 of GPU 0 and fan 1 of GPU 0 at each of its last 3 passes: they are held at 50 % by the tool "
        "(NVML's manual fan policy, which its writes set), not by the card's own curve"), answer["sentence"]


def test_nvml_gpu_controls_curve_writes_and_a_card_that_does_not_take_them(tmp_path: Path) -> None:
    """The tool's newer log (one LOG line, its pass's lines under it): "Setting GPU fan speed: 70%" is its curve's
    duty for the temperature read; "Same as previous speed" writes nothing, the fan already at the curve's duty. Fans
    read at 40 % after two passes wrote 70 % are not taking it (likely: a reading may lag its write); after one pass
    they were read before the write and say nothing of it."""
    curve = "LOG[2025-01-10 10:00:{s:02d}]: \nCurrent temp: 65°C\nCurrent speed: 40%\nFan controller speed 0: 40%\n" \
            "Setting GPU fan speed: 70%\n\n"
    once = explained(tmp_path, curve.format(s=1))["findings"][0]
    assert (once["kind"], once["confidence"], once["facts"]["why"], once["facts"]["duty"]) == \
        ("daemon-decided", "known", "curve", 70.0)
    assert "read" not in once["facts"]
    twice = explained(tmp_path, curve.format(s=1) + curve.format(s=2))
    lead = twice["findings"][0]
    assert (lead["kind"], lead["confidence"], lead["facts"]["read"], lead["facts"]["passes"]) == \
        ("daemon-decided", "likely", 40.0, 2.0)
    assert "yet the fans read 40 % after it: the card or its driver is not taking that duty" in twice["sentence"]
    same = ("Current temp: 55°C\nCurrent speed: 45%\nFan controller speed 0: 45%\n"
            "Same as previous speed, nothing to do!\n")
    held = explained(tmp_path, same)["findings"][0]
    assert (held["kind"], held["facts"]["why"], held["facts"]["duty"], held["facts"]["celsius"]) == \
        ("daemon-decided", "same", 45.0, 55.0)


def test_fan2go_logging_a_pwm_changed_beneath_it(tmp_path: Path) -> None:
    """fan2go's "PWM of <fan> was changed by third party!" (its README's FAQ: something else, the board or another
    program, changes the fan's speed, or its driver keeps a pwm of its own; controller.go compares the pwm read with
    the one its measured map expects). In its three forms: another value read, with fan2go unable to put the output
    under manual control (its older log); the value set read back, only fan2go's expectation differing (its newer
    log); and a value within one per-cent step of the one set, as a driver that keeps the duty in per cent
    (corsair-cpro.c) reads it back."""
    changed = ("WARNING  Could not enable manual fan mode on in_front, trying to continue anyway...\n" +
               "".join(f" WARNING  PWM of {fan} was changed by third party! Last set PWM value was: {a} but is now: "
                       f"{b}\n" for fan, a, b in (("in_front", 134, 125), ("out_back", 124, 110),
                                                   ("in_front", 134, 125), ("cpu", 57, 56))))
    answer = explained(tmp_path, changed)
    lead = answer["findings"][0]
    assert (lead["kind"], lead["confidence"]) == ("daemon-overridden", "known")
    assert lead["facts"] == {"daemon": "fan2go", "fan": "in_front", "set": 134.0, "read": 125.0, "times": 4.0,
                             "fans": "in_front, out_back, cpu", "no_manual": "in_front", "how": "changed"}
    assert answer["sentence"].startswith(
        "fan2go logged 4 times that the pwm of its fan 'in_front' (and of out_back, cpu) was changed by a third party "
        "(it set 134, read 125): something other than fan2go sets that output (the board's own automatic fan "
        "control, the BIOS or another fan program), or its driver holds a value of its own (a fan that takes only a "
        "few levels); it could not put in_front under manual control (pwm_enable 1), so the chip's own automatic "
        "control most likely writes it; the fan is not on fan2go's curve alone."), answer["sentence"]
    newer = ("WARNING: PWM of rear_exhaust was changed by third party! Last set PWM value was '70', expected reported "
             "pwm '153' but was '70'\n")
    same = explained(tmp_path, newer)["findings"][0]
    assert (same["kind"], same["confidence"], same["facts"]["how"], same["facts"]["expected"]) == \
        ("daemon-overridden", "known", "expectation", 153.0)
    other = explained(tmp_path, newer.replace("expected reported pwm '153' but was '70'",
                                               "expected reported pwm '70' but was '120'"))["findings"][0]
    assert (other["facts"]["how"], other["facts"]["read"], other["facts"]["expected"]) == ("changed", 120.0, 70.0)
    rounded = explained(tmp_path, " WARNING  PWM of Front-02 was changed by third party! Last set PWM value was: 249 "
                                   "but is now: 250\n")["findings"][0]
    assert (rounded["confidence"], rounded["facts"]["how"]) == ("likely", "rounding")
    three_off = explained(tmp_path, " WARNING  PWM of Front-02 was changed by third party! Last set PWM value was: "
                                     "249 but is now: 252\n")["findings"][0]
    assert three_off["facts"]["how"] == "changed"


def test_fan2go_giving_up_on_a_fan_that_reads_no_speed_at_its_top(tmp_path: Path) -> None:
    """fan2go's controller.go: a fan whose average speed is 0 even at its highest pwm is logged CRITICAL and its
    controller ends (ErrFanStalledAtMaxPwm), handing the fan back to the mode it found: said as a fan stalled, not
    connected or not counted, to be checked, never as a fan at rest."""
    log = ("INFO: PWM settings of fan 'cpu': Min 30, Start 40, Max 255\n"
           "ERROR: CRITICAL: Fan cpu avg. RPM is 0, even at PWM value 255\n"
           "ERROR: Fan Control Error: Fan cpu: fan stalled at max pwm\n")
    answer = explained(tmp_path, log)
    kinds = [f["kind"] for f in answer["findings"]]
    lead = answer["findings"][0]
    assert (lead["kind"], lead["confidence"]) == ("daemon-stopped", "known"), kinds
    assert (lead["facts"]["event"], lead["facts"]["fan"], lead["facts"]["pwm"], lead["facts"]["rpm"]) == \
        ("stalled-at-max", "cpu", 255.0, 0.0)
    assert "at-rest" not in kinds and "no-fault" not in kinds
    assert "stopped regulating it" in answer["sentence"] and "check that it spins" in answer["sentence"]


def test_fan2gos_older_log_of_a_fans_range(tmp_path: Path) -> None:
    """fan2go's older releases log a fan's range as "Start PWM of X: N" and "Max PWM of X: N" (controller.go's
    Run, before it printed "PWM settings of fan"): a Max at its Start leaves its curve nothing to map onto (the rule
    of a daemon that measured no range); a fan with a range (Start 0, Max 255) is not said."""
    log = (" INFO  Loading fan curve data for fan '{fan}'...\n INFO  Start PWM of {fan}: 0\n"
           " INFO  Max PWM of {fan}: {top}\n INFO  Starting controller loop for fan '{fan}'\n")
    answer = explained(tmp_path, log.format(fan="cpu", top=0) + log.format(fan="Front-02", top=255))
    found = [f for f in answer["findings"] if f["kind"] == "daemon-no-range"]
    assert [(f["facts"]["fan"], f["facts"]["start"], f["facts"]["max"]) for f in found] == [("cpu", 0.0, 0.0)]
    assert answer["read_as"] == ["paste.txt: a fan daemon's log (fan2go)"]


def _kraken_log(points: list[tuple[int, int]], channel: str = "fan", prefix: str = "[INFO] "
                "liquidctl.driver.kraken2:") -> str:
    """liquidctl's INFO lines of a profile it sends to a Kraken X (kraken2.py: the duty for each liquid temperature
    from 20 to 59 °C, drawn through the points given and rounded to a whole per cent)."""
    def duty(t: int) -> int:
        if t <= points[0][0]:
            return points[0][1]
        for (a, pa), (b, pb) in itertools.pairwise(points):
            if a <= t <= b:
                return round(pa + (pb - pa) * (t - a) / (b - a))
        return points[-1][1]
    return "".join(f"{prefix} setting {channel} PWM duty to {duty(t)}% for liquid temperature >= {t}°C\n"
                   for t in range(20, 60))


def test_liquidctls_log_of_a_profile_it_sent_is_that_profile(tmp_path: Path) -> None:
    """liquidctl(8): a cooler's speed profile runs on the device against its liquid temperature, the only one it
    reads; its INFO lines (-v, --debug) list the table it sent. Read without its command (or with the command cut
    by a pipe, ``2>&1 | grep INFO``, which was not read as one): the points the table was drawn through, the cooler
    named by its driver, and the words say it follows the liquid, not the CPU. A text of only that was refused."""
    points = [(30, 50), (40, 60), (50, 75), (55, 100)]
    answer = explained(tmp_path, _kraken_log(points))
    (lead,) = [f for f in answer["findings"] if f["kind"] == "daemon-curve"]
    assert (lead["facts"]["output"], lead["facts"]["t0"], lead["facts"]["p0"], lead["facts"]["t1"],
            lead["facts"]["p1"], lead["facts"]["points"]) == ("kraken2 fan", 30.0, 50.0, 55.0, 100.0, 4)
    assert answer["sentence"].startswith(
        "liquidctl drives kraken2 fan from Liquid temperature: 50 % at 30 °C rising through 4 points to 100 % at "
        "55 °C: the cooler reads no other temperature (its profile runs on the device), so this follows the liquid, "
        "which moves far less than the CPU, not the CPU itself."), answer["sentence"]
    piped = "# liquidctl --debug --match kraken set fan speed 30 50  40 60  50 75  55 100 2>&1 | grep INFO\n"
    from_command = explained(tmp_path, piped)["findings"][0]
    assert (from_command["kind"], from_command["facts"]["output"], from_command["facts"]["points"]) == \
        ("daemon-curve", "kraken fan", 4)


def test_liquidctls_log_of_one_duty_throughout_is_a_fixed_duty_and_a_cut_log_is_not(tmp_path: Path) -> None:
    """One duty at every liquid temperature from 20 to 59 °C is a fixed duty (liquidctl's ``set pump speed 30``
    sends it so): the pump held there, no curve; a log of one duty over a few degrees is a paste cut short
    ("[...]"), and where the command is in the text its points are the profile, not the log's sample."""
    from app.fans.read.profiles import fixed, profiles

    whole = _kraken_log([(20, 30), (59, 30)], channel="pump", prefix="INFO:")
    assert fixed(whole, "kraken2") == (("pump", 30.0),) and profiles(whole, "kraken2") == ()
    cut = "".join(whole.splitlines(keepends=True)[:3]) + "[...]\n"
    assert fixed(cut, "kraken2") == () and profiles(cut, "kraken2") == ()
    command = "$ liquidctl -m kraken set fan speed 30 35 35 45 40 70 45 90 50 100 --verbose\n" + \
        "".join(_kraken_log([(20, 20), (59, 100)], prefix="INFO:").splitlines(keepends=True)[:5]) + "[...]\n"
    (curve,) = profiles(command, "kraken2")
    assert curve.points == ((30.0, 35.0), (35.0, 45.0), (40.0, 70.0), (45.0, 90.0), (50.0, 100.0))
    assert fixed(command, "kraken2") == ()


# i8kmon's default table as its manual page gives it (i8kmon(1)), in the file's syntax
I8KMON_CONF = """# Temperature thresholds: {fan_speeds low_ac high_ac low_batt high_batt}
set config(0) {{0 0}  -1  60  -1  65}
set config(1) {{1 0}  50  70  55  75}
set config(2) {{1 1}  60  80  65  85}
set config(3) {{2 2}  70 128  75 128}
"""
# the table i8kmon -v echoes as it starts, five entries of which num_configs uses three (vitorafsr/i8kutils#34)
I8KMON_ECHO = """i8kmon
config(0)           = {0 0} -1 70 -1 70
config(1)           = {1 1} 65 80 65 80
config(2)           = {2 2} 75 128 75 128
config(3)           = {2 1}  65  85  70  90
config(4)           = {2 2}  70 128  75 128
config(num_configs) = 3
"""


def test_i8kmons_table_is_each_fans_states_by_temperature() -> None:
    """i8kmon(1): each entry {{left right} low_ac high_ac low_batt high_batt}, the next entered above its high, the
    fan states i8k's 0 off, 1 low, 2 high (linux/i8k.h), a state dell-smm's duty (0, 50, 100 %); only the entries
    num_configs names are used. Both the file and i8kmon -v's echo were refused as "not a capture"."""
    from app.collect.i8kmon import parse

    left, right = parse(I8KMON_CONF).declared
    assert (left.daemon, left.pwm, right.pwm, left.stepped) == ("i8kmon", "left fan", "right fan", True)
    assert left.curve == ((-1.0, 0.0), (50.0, 50.0), (70.0, 100.0)) and left.floor_percent == 0.0
    assert right.curve == ((-1.0, 0.0), (60.0, 50.0), (70.0, 100.0))  # the right fan starts one entry later
    left, right = parse(I8KMON_ECHO).declared
    assert left.curve == right.curve == ((-1.0, 0.0), (65.0, 50.0), (75.0, 100.0))  # config(3), (4) not used
    assert parse("set config(timeout) 2\nset config(t_high) 80\n").declared == ()


def test_an_i8kmon_table_pasted_is_said_as_the_steps_it_imposes(tmp_path: Path) -> None:
    code, answer = explain(I8KMON_CONF, tmp_path)
    assert code == 0, answer
    curves = [f for f in findings_of(answer) if f["kind"] == "daemon-curve"]
    assert [c["facts"]["daemon"] for c in curves] == ["i8kmon", "i8kmon"]
    assert curves[0]["facts"]["step1_c"] == 50.0 and curves[1]["facts"]["step1_c"] == 60.0


def test_i8kmons_passes_are_the_states_it_left_each_fan_in(tmp_path: Path) -> None:
    """i8kmon -v logs each pass as "temp, left fan state, right fan state, ac state: 51 0 1 0" (vitorafsr/i8kutils#34),
    and the commands it runs ("i8kfan - 0"): the states are its decisions for the CPU's temperature read, each fan
    apart; its own i8kfan lines are not a person's typed command (no fan is made of them)."""
    from app.fans.read import i8k

    log = I8KMON_ECHO + ("...\ntemp, left fan state, right fan state, ac state: 51 0 1 0\ni8kfan - 0\n"
                         "temp, left fan state, right fan state, ac state: 51 0 1 0\ni8kfan - 0\n")
    made = i8k.decisions(log)
    assert [(d.what, d.celsius, d.percent) for d in made[-2:]] == [("left fan", 51.0, 0.0), ("right fan", 51.0, 50.0)]
    assert i8k.control(log) == []
    code, answer = explain(log, tmp_path)
    assert code == 0 and answer["fan_facts"] == []
    written = {f["facts"]["written_to"]: f["facts"]["duty"] for f in findings_of(answer)
               if f["kind"] == "daemon-decided"}
    assert written == {"left fan": 0.0, "right fan": 50.0}
