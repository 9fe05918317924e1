"""Pastes of shell sessions and tools' own lines that the fan wing once refused or misread: a ThinkPad's fan and
thermal files in one paste, a Raspberry Pi's session (its prompt, its fan's hwmon by the device's path, vcgencmd's
SoC temperature), nvidia-smi dmon, and auto-cpufreq's table. Each capture is written for its test in the shape the
tool prints (the tool's manual or source), asserting findings and what must not be found."""

from __future__ import annotations

from pathlib import Path

from app.collect.captures import text_of
from app.fans import read
from app.fans.adapt import machine
from app.fans.alarm_words import state_word
from app.fans.answer import explained
from tests.unit.test_fan_readers import explain, findings_of

THINKPAD = ("$ cat /proc/acpi/ibm/fan\nstatus:\t\tenabled\nspeed:\t\t0\nlevel:\t\tauto\n"
            "commands:\tlevel <level> (<level> is 0-7, auto, disengaged, full-speed)\n"
            "$ cat /proc/acpi/ibm/thermal\ntemperatures:\t{cpu} 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n")


def kinds(answer: dict[str, object]) -> list[str]:
    return [f["kind"] for f in findings_of(answer)]


def test_a_thinkpads_fan_and_thermal_files_in_one_paste_are_both_read(tmp_path: Path) -> None:
    """thinkpad-acpi.rst: /proc/acpi/ibm/fan's speed and /proc/acpi/ibm/thermal's temperatures (°C, the first the
    CPU's on most models). Pasted together, the fan at 0 beside 86 °C is a hot part without working cooling, never
    "no temperature is read" (fails when only the fan file is read, as it was)."""
    code, answer = explain(THINKPAD.format(cpu=86), tmp_path)
    assert code == 0 and kinds(answer)[0] == "hot-not-cooled", kinds(answer)
    assert "at-rest" not in kinds(answer) and "/proc/acpi/ibm/thermal" in str(answer["read_as"])
    code, answer = explain(THINKPAD.format(cpu=45), tmp_path)
    assert code == 0 and "hot-not-cooled" not in kinds(answer)


PI_SESSION = ("pi@raspberrypi:~ $ vcgencmd measure_temp\ntemp={soc}'C\n"
              "pi@raspberrypi:~ $ cat /sys/devices/platform/cooling_fan/hwmon/hwmon*/fan1_input\n{rpm}\n"
              "pi@raspberrypi:~ $ cat /sys/devices/platform/cooling_fan/hwmon/hwmon*/pwm1\n{pwm}\n")


def test_a_raspberry_pis_session_reads_its_fan_and_its_socs_temperature(tmp_path: Path) -> None:
    """A prompt with a space before "$" (user@host:~ $), a fan's hwmon named by its device's path with a glob, and
    vcgencmd's "temp=81.3'C" (Raspberry Pi's documentation: the SoC's temperature). The fan at 0 RPM and pwm 0 while
    the SoC is at 81 °C is not cooling it; at 2,900 RPM it runs and nothing is flagged. Was refused whole."""
    code, answer = explain(PI_SESSION.format(soc="81.3", rpm=0, pwm=0), tmp_path)
    assert code == 0 and kinds(answer)[0] == "hot-not-cooled", answer
    assert findings_of(answer)[0]["facts"]["source_c"] == 81.3
    code, answer = explain(PI_SESSION.format(soc="55.0", rpm=2900, pwm=128), tmp_path)
    assert code == 0 and "hot-not-cooled" not in kinds(answer) and "cooling_fan fan1" in str(answer["sentence"])
    alone = machine(read.read("temp=45.3'C\n")[0])
    assert [(t.celsius, t.role) for t in alone.temperatures] == [(45.3, "cpu")]


PI_CAT = ("$ cat /sys/class/thermal/thermal_zone0/temp\n{milli}\n"
          "$ cat /sys/devices/platform/cooling_fan/hwmon/*/fan1_input\n0\n"
          "$ cat /sys/devices/platform/cooling_fan/hwmon/*/pwm1\n0\n")


def test_a_thermal_zones_file_catted_beside_a_fans_is_read(tmp_path: Path) -> None:
    """The same session as people paste it without vcgencmd: the zone's ``temp`` in millidegrees (the kernel's
    thermal sysfs-api.rst) under its ``cat``, and the fan's hwmon folder globbed whole (``hwmon/*/``). Both are
    read: the zone at 81.3 °C beside the fan at 0 RPM is not cooled (fails when the zone's file is left out: the
    temperature is lost, or when the whole-folder glob is: the capture is refused)."""
    code, answer = explain(PI_CAT.format(milli=81300), tmp_path)
    assert code == 0, answer
    assert kinds(answer)[0] == "hot-not-cooled" and findings_of(answer)[0]["facts"]["source_c"] == 81.3, answer
    assert findings_of(answer)[0]["subjects"] == ["cooling_fan/fan1", "thermal_zone0/thermal_zone0"]
    assert "thermal_zone0 is at 81 °C" in str(answer["sentence"])  # a zone of no known type: its folder, once


ZONES = ("$ cat /sys/class/thermal/thermal_zone*/type\nacpitz\nINT3400 Thermal\nTCPU\nx86_pkg_temp\n"
         "$ cat /sys/class/thermal/thermal_zone*/temp\n27800\n20000\n56050\n{pkg}\n")


def test_every_zones_type_and_temp_catted_by_a_glob_are_paired_in_the_shells_order(tmp_path: Path) -> None:
    """One shell expands ``thermal_zone*`` in one order for both commands, so the n-th type names the n-th
    temperature (as paste(1) pairs them; the zone numbers stay unknown: counted in that order). Fails when the two
    globs are not read (the capture was refused) or paired out of order (89 °C named for another zone); with one
    temperature fewer than types nothing is paired."""
    code, answer = explain(ZONES.format(pkg=89000), tmp_path)
    assert code == 0, answer
    hottest = next(f for f in findings_of(answer) if f["kind"] == "hottest")
    assert (hottest["facts"]["celsius"], hottest["facts"]["role"]) == (89.0, "cpu"), hottest
    assert "x86_pkg_temp" in str(answer["sentence"])
    code, answer = explain(ZONES.format(pkg=89000).replace("56050\n", ""), tmp_path)
    assert code == 2  # three temperatures for four zones: which is which cannot be told


def test_a_pwm_fan_whose_duty_reads_0_is_asked_to_stop_by_its_thermal_zone(tmp_path: Path) -> None:
    """hwmon's sysfs ABI: pwmN 0 is the output off (where pwmN_enable is not 0, "no control", the fan at full); a
    pwm-fan's duty is set by the kernel's thermal zone from its cooling state (pwm-fan.yaml, cooling-levels). A fan at
    0 RPM whose duty reads 0 is asked to stop, not "not connected, or not counted" (fails when the duty read is not
    taken as the ask; the zone's trips are not in the capture, so which of the two is not said)."""
    code, answer = explain(PI_SESSION.format(soc="60.0", rpm=0, pwm=0), tmp_path)
    assert code == 0, answer
    lead = findings_of(answer)[0]
    assert (lead["kind"], lead["facts"]["asked"], lead["facts"]["controller"]) == ("headers-read-zero", "off",
                                                                                  "kernel"), lead
    assert str(answer["sentence"]).startswith(
        "The only fan read here is at 0 RPM with its duty at 0 %: it is asked to stop, by the kernel's thermal zone "
        "(at its first cooling state: below its first trip, or no trip bound to the fan); meanwhile cpu_thermal "
        "temp1 at 60 °C.")
    code, answer = explain(PI_SESSION.format(soc="60.0", rpm=0, pwm=0) + "$ cat /sys/devices/platform/cooling_fan/"
                           "hwmon/hwmon*/pwm1_enable\n0\n", tmp_path)
    assert "asked" not in findings_of(answer)[0]["facts"]  # no control: its pwm says nothing of what it is asked


DMON = ("# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk\n"
        "# Idx      W      C      C      %      %      %      %    MHz    MHz\n"
        "    0    312     84      -     99     45      0      0  10501   1920\n"
        "    1     21     33      -      0      0      0      0    405    210\n"
        "    0    310     86      -     99     44      0      0  10501   1905\n")


def test_nvidia_smi_dmon_is_read_as_each_gpus_temperature_power_and_use() -> None:
    """nvidia-smi(1), dmon: a row per GPU a second under "# gpu pwr gtemp ...", "-" where nothing is reported (the
    memory temperature here). Each GPU's last row is its state; dmon has no fan column, so no fan is made of it.
    Was refused ("no reading")."""
    found = machine(read.read(DMON)[0])
    assert [(g.index, g.temperature_c) for g in found.gpus] == [(0, 86.0), (1, 33.0)]
    assert [(g.index, g.power_w, g.busy_percent) for g in found.loads] == [(0, 310.0, 99.0), (1, 21.0, 0.0)]
    assert not found.fans and read.read(DMON)[1] == "nvidia-smi dmon"


AUTO_CPUFREQ = ("Core\tUsage\tTemperature\tFrequency\nCPU0\t 87.0%\t    {t} °C\t 3400 MHz\n"
                "CPU1\t 91.0%\t    {t} °C\t 3400 MHz\n\nCPU fan speed: {rpm} RPM\n")


def test_a_space_aligned_table_with_a_temperature_column_is_read_with_the_lines_around_it(tmp_path: Path) -> None:
    """auto-cpufreq's per-core table (Core, Usage, Temperature, Frequency) and its "CPU fan speed" line below: the
    fan at 0 RPM beside cores at 92 °C is not cooling them, which leads (while the table was not read, "every fan is
    at 0, nothing tells which" did); a fan at 2,400 RPM beside them is running."""
    code, answer = explain(AUTO_CPUFREQ.expandtabs(8).format(t=92, rpm=0), tmp_path)
    assert code == 0 and kinds(answer)[0] == "hot-not-cooled" and findings_of(answer)[0]["facts"]["source_c"] == 92
    assert "at-rest" not in kinds(answer) and "no-fault" not in kinds(answer)
    found = machine(read.read(AUTO_CPUFREQ.expandtabs(8).format(t=92, rpm=2400))[0])
    assert [(t.label, t.celsius, t.role) for t in found.temperatures] == [("CPU0", 92.0, "cpu"), ("CPU1", 92.0, "cpu")]
    assert [f.rpm for f in found.fans] == [2400.0]


def test_a_kernel_log_is_refused_without_calling_it_cut_json(tmp_path: Path) -> None:
    """A refusal's hint fits the text: "[ 8812.112233] usb ..." is a kernel log's time stamp, not a JSON array cut
    short; a JSON object cut before its first reading still gets the hint. (A kernel log of a CPU slowed for heat is
    read: tests/unit/test_kernel_log.py.)"""
    code, answer = explain("[ 8812.112233] usb 1-1: new high-speed USB device number 2 using xhci_hcd", tmp_path)
    assert code == 2 and "not a capture FanWhy reads" in str(answer["error"]) and "JSON" not in str(answer["error"])
    code, answer = explain('{"coretemp-isa-0000": {"Adapter": "ISA adapter", "Package id 0": {"temp1_in', tmp_path)
    assert code == 2 and "starts as JSON" in str(answer["error"])


FAN2GO_DETECT = ("$ fan2go detect\n=========== hwmon: ============\n\n> Platform: nct6798-isa-0290\n"
                 "  Fans     Index  PWM Channel  RPM Channel  Label   RPM   PWM  Mode\n"
                 "           1      1            1            hwmon3  0     255  Manual\n"
                 "           2      2            2            hwmon3  1180  120  Auto\n"
                 "  Sensors  Index  Label                 Value\n"
                 "           1      SYSTIN (temp1_input)  31000\n"
                 "           5      AUXTIN2 (temp5_input) -13000\n"
                 "> Platform: k10temp-pci-00c3\n  Sensors  Index  Label               Value\n"
                 "           1      Tctl (temp1_input)  {tctl}\n")
FAN2GO_OLD = ("> asus-isa-0\n  Fans     Index  Label    RPM  PWM  Auto\n           1      cpu_fan  0    0    true\n"
              "  Sensors  Index  Label                 Value\n           1      hwmon2 (temp1_input)  43050\n")


def test_fan2go_detect_is_read_as_each_chips_fans_their_control_and_temperatures(tmp_path: Path) -> None:
    """fan2go's cmd/detect.go: per chip a Fans table (RPM, PWM 0-255, Mode: Auto, Manual or Disabled; older releases
    an Auto column of true or false) and a Sensors table in millidegrees. A fan held at 255 by hand reading 0 is
    never "running" or "at rest"; the one in Auto at 1,180 RPM runs under the board's chip; Tctl at 88.75 °C is
    the CPU's. Was refused ("no reading")."""
    found = machine(read.read(FAN2GO_DETECT.format(tctl=88750))[0])
    fans = {f.key: f for f in found.fans}
    assert (fans["nct6798/fan1"].rpm, fans["nct6798/fan1"].duty_percent, fans["nct6798/fan1"].controller) == \
        (0.0, 100.0, "manual")
    assert (fans["nct6798/fan2"].rpm, fans["nct6798/fan2"].pwm_enable, fans["nct6798/fan2"].controller) == \
        (1180.0, 2, "bios")
    temps = {t.label: t for t in found.temperatures}
    assert temps["Tctl"].celsius == 88.75 and temps["Tctl"].role == "cpu" and temps["SYSTIN"].celsius == 31.0
    code, answer = explain(FAN2GO_DETECT.format(tctl=88750), tmp_path)
    about_fan1 = [f["kind"] for f in findings_of(answer) if "nct6798/fan1" in f["subjects"]]
    assert code == 0 and about_fan1 and not {"turning", "at-rest", "no-fault"} & set(about_fan1), about_fan1
    old = machine(read.read(FAN2GO_OLD)[0])
    assert [(f.label, f.rpm, f.pwm_enable) for f in old.fans] == [("cpu_fan", 0.0, 2)]
    assert [(t.label, t.celsius) for t in old.temperatures] == [("temp1", 43.05)]


def test_glances_sensors_and_pasted_thermal_zones_are_read(tmp_path: Path) -> None:
    """glances' SENSORS section ("Package id 0    93C", "cpu_fan    0RPM": no colon, the unit on the value) and
    paste(1) of the zones' type and temp files (the Arch wiki's idiom: "x86_pkg_temp<TAB>94000", millidegrees as
    sysfs-api.rst gives them, x86_pkg_temp the CPU package's zone). Both were refused; the fan at 0 beside the
    package at 93 °C is not cooling it."""
    code, answer = explain("SENSORS\nacpitz 1                 50C\nPackage id 0             93C\n"
                           "cpu_fan                 0RPM\n", tmp_path)
    assert code == 0 and kinds(answer)[0] == "hot-not-cooled" and findings_of(answer)[0]["facts"]["source_c"] == 93
    # glances 4 writes a fan's speed with "R" (its sensors plugin's SENSOR_FAN_UNIT): was read as no fan at all
    four = machine(read.read("SENSORS\nPackage id 0                  79C\nthinkpad 0                  4521R\n")[0])
    assert [(f.label, f.rpm) for f in four.fans] == [("thinkpad 0", 4521.0)]
    assert not machine(read.read("SENSORS\nrevision                  12R3\n")[0]).fans
    zones = machine(read.read("$ paste <(cat /sys/class/thermal/thermal_zone*/type) <(cat /sys/class/thermal/"
                              "thermal_zone*/temp)\nacpitz\t27800\nINT3400 Thermal\t20000\nx86_pkg_temp\t94000\n")[0])
    assert [(t.label, t.celsius, t.role) for t in zones.temperatures][-1] == ("x86_pkg_temp", 94.0, "cpu")
    assert [t.celsius for t in zones.temperatures] == [27.8, 20.0, 94.0]
    assert not read.read("acpitz\t27800\nx86_pkg_temp\t94000\n")[0]  # a tab-separated pair alone is no reading


EVEREST = ("    Temperaturen:\n      Motherboard                                       38 °C  (100 °F)\n"
           "      CPU                                               {cpu} °C  ({cpu_f} °F)\n"
           "      1. CPU / 1. Kern                                  34 °C  (93 °F)\n"
           "      North Bridge                                      51 °C  (124 °F)\n\n"
           "    Kühllüfter:\n      CPU                                               {rpm} RPM\n"
           "      Gehäuse                                           1035 RPM\n")


def test_an_everest_or_aida64_reports_celsius_with_its_fahrenheit_beside_it_is_read(tmp_path: Path) -> None:
    """Everest's report (openhardwaremonitor issue 106 quotes one; AIDA64, its successor, writes the same) gives each
    temperature in Celsius and then in Fahrenheit in brackets: the Celsius value is the reading, never 100 or the
    line left unread (every temperature was, so a CPU fan at 0 beside a CPU at 92 °C went unsaid)."""
    facts = machine(read.read(EVEREST.format(cpu=37, cpu_f=99, rpm=1814))[0])
    assert [(t.label, t.celsius) for t in facts.temperatures] == [
        ("Motherboard", 38.0), ("CPU", 37.0), ("1. CPU / 1. Kern", 34.0), ("North Bridge", 51.0)]
    assert [(f.label, f.rpm) for f in facts.fans] == [("CPU", 1814.0), ("Gehäuse", 1035.0)]
    code, answer = explain(EVEREST.format(cpu=92, cpu_f=198, rpm=0), tmp_path)
    assert code == 0 and kinds(answer)[0] == "hot-not-cooled" and findings_of(answer)[0]["facts"]["source_c"] == 92
    assert not machine(read.read("      Motherboard      38 °C  (100 °F) extra\n")[0]).temperatures


def test_liquidctls_rows_with_their_tree_cut_by_a_grep_are_read() -> None:
    """liquidctl prints a status row as its name, then the value and two spaces before the unit ("Fan speed   576
    rpm"); a real paste of ``liquidctl status | grep Fan`` (liquidctl's pull request 57, a Corsair supply's fan) kept
    the rows without their tree's glyphs and was refused. The speed is a fan's, "Fan", not a fan named "Fan speed"
    (fails with one space before the unit required)."""
    rows = "Fan control mode                 Software  \nFan speed                             576  rpm\n"
    assert [(f.label, f.rpm) for f in machine(read.read(rows)[0]).fans] == [("Fan", 576.0)]
    assert not machine(read.read("Firmware version      0.7.0.0\n")[0]).fans


SEL = ("   1 | 11/28/2026 | 14:02:11 | Fan FAN2 | Lower Critical going low  | Asserted{reading}\n"
       "   2 | 11/28/2026 | 14:02:11 | Fan FAN2 | Lower Non-recoverable going low  | Asserted\n"
       "   3 | 11/28/2026 | 14:02:14 | Fan FAN2 | Lower Non-recoverable going low  | Deasserted\n"
       "   4 | 11/28/2026 | 14:02:14 | Fan FAN2 | Lower Critical going low  | Deasserted\n"
       "   5 | 11/28/2026 | 14:02:40 | Temperature CPU Temp | Upper Critical going high | Asserted\n")


def test_a_bmcs_event_log_of_a_fan_falling_under_its_threshold_and_back_is_the_quiet_fan_cycle(tmp_path: Path) -> None:
    """IPMI v2.0 threshold events as ipmitool's sel list prints them: FAN2 asserted under its lower-critical
    threshold, deasserted back above it, asserted again: it turns when the fans are raised, so most likely a quiet
    fan under a threshold set too high (likely), and the BMC's full-speed answer makes the fans cycle. Fallen once
    (back or not), the BMC counts it failing: a failing or a quiet fan (possible). A temperature's upper event is no
    fan's. Was refused ("no reading")."""
    again = "   6 | 11/28/2026 | 14:03:05 | Fan FAN2 | Lower Critical going low  | Asserted\n"
    code, answer = explain(SEL.format(reading="") + again, tmp_path)
    found = findings_of(answer)
    assert code == 0 and found[0]["kind"] == "bmc-fan-logged" and found[0]["confidence"] == "likely", found
    facts = found[0]["facts"]
    assert (facts["sensor"], facts["falls"], facts["recovered"]) == ("FAN2", 2, "yes")
    assert "fan-fault" not in kinds(answer) and "a BMC's event log" in str(answer["read_as"])
    code, answer = explain(SEL.format(reading=" | Reading 200 < Threshold 300 RPM").split("   2 |")[0], tmp_path)
    found = findings_of(answer)
    assert found[0]["kind"] == "bmc-fan-logged" and found[0]["confidence"] == "possible"
    assert (found[0]["facts"]["rpm"], found[0]["facts"]["lcr"], found[0]["facts"]["ends_below"]) == (200, 300, "yes")
    code, answer = explain(SEL.format(reading=""), tmp_path)  # fallen once and back: no cycle seen
    assert findings_of(answer)[0]["confidence"] == "possible" and findings_of(answer)[0]["facts"]["recovered"] == "yes"
    code, answer = explain(SEL.format(reading="").splitlines()[-1], tmp_path)
    assert code == 2  # an upper temperature event alone: no fan's record, no reading
    listing = "FAN2 | 400.000 | RPM | ok | na | na | 500.000 | na | na | na\n"  # the same fan in ipmitool sensor
    logged = [f for f in findings_of(explain(listing + SEL.format(reading="") + again, tmp_path)[1])
              if f["kind"] == "bmc-fan-logged"]
    assert [f["subjects"] for f in logged] == [["bmc/FAN2"]]


HWINFO = ("CPU [#0]: AMD Ryzen 9 5950X: Enhanced\nSensor\tCurrent\tMinimum\tMaximum\tAverage\n"
          "CPU (Tctl/Tdie)\t{tctl} °C\t38.1 °C\t91.0 °C\t84.2 °C\n"
          "CPU Package Power\t141.2 W\t22.0 W\t143.3 W\t128.9 W\n"
          "ASUS ROG CROSSHAIR VIII HERO (Nuvoton NCT6798D)\nCPU\t{fan} RPM\t0 RPM\t1,912 RPM\t231 RPM\n"
          "Chassis1\t812 RPM\t790 RPM\t840 RPM\t811 RPM\n")


def test_a_monitors_summary_reads_its_current_column_and_a_thousands_separator(tmp_path: Path) -> None:
    """HWiNFO's sensor summary copied as text (Sensor, Current, Minimum, Maximum, Average): the Current cell is the
    reading, never the Average (what was read when the label took the row's first values); a group's name between
    rows does not end the table; "1,912 RPM" is one speed (a thousands separator), never 1.9 RPM."""
    found = machine(read.read(text_of_capture(HWINFO.format(tctl="90.3", fan="1,212"), tmp_path))[0])
    assert sorted((f.label, f.rpm) for f in found.fans) == [("CPU", 1212.0), ("Chassis1", 812.0)]
    assert [(t.label, t.celsius, t.role) for t in found.temperatures] == [("CPU (Tctl/Tdie)", 90.3, "cpu")]
    code, answer = explain(HWINFO.format(tctl="90.3", fan="0"), tmp_path)
    assert code == 0 and kinds(answer)[0] == "hot-not-cooled" and findings_of(answer)[0]["facts"]["source_c"] == 90.3


def text_of_capture(text: str, tmp_path: Path) -> str:
    """``text`` as a capture file's text enters the readers (app.collect.captures.text_of)."""
    path = tmp_path / "summary.txt"
    path.write_text(text)
    return text_of(path)


def test_a_graphics_cards_hwmon_by_its_drm_path_and_psutils_sensors_are_read(tmp_path: Path) -> None:
    """A session of cat under /sys/class/drm/card1/device/hwmon/hwmon4/ (where AMD's documentation points): its name
    file makes it amdgpu's, so 0 RPM under 34 % duty beside a 94 °C junction is not cooling it (was refused). And
    psutil's sensors_fans() and sensors_temperatures() as Python prints them (psutil's documentation: RPM, °C):
    each chip's items by label (was refused)."""
    session = ("$ cat /sys/class/drm/card1/device/hwmon/hwmon4/name\namdgpu\n"
               "$ cat /sys/class/drm/card1/device/hwmon/hwmon4/fan1_input\n0\n"
               "$ cat /sys/class/drm/card1/device/hwmon/hwmon4/pwm1\n87\n"
               "$ cat /sys/class/drm/card1/device/hwmon/hwmon4/temp2_input\n94000\n")
    code, answer = explain(session, tmp_path)
    assert code == 0 and kinds(answer)[0] in ("hot-not-cooled", "stalled") and "amdgpu fan1" in str(answer["sentence"])
    assert "at-rest" not in kinds(answer)
    printed = ("{'thinkpad': [sfan(label='', current=0)]}\n{'coretemp': [shwtemp(label='Package id 0', current=93.0, "
               "high=100.0, critical=100.0), shwtemp(label='Core 0', current=91.0, high=100.0, critical=100.0)]}\n")
    found = machine(read.read(printed)[0])
    assert [(f.chip, f.label, f.rpm) for f in found.fans] == [("thinkpad", "fan1", 0.0)]
    assert [(t.chip, t.label, t.celsius, t.role) for t in found.temperatures] == \
        [("coretemp", "Package id 0", 93.0, "cpu"), ("coretemp", "Core 0", 91.0, "cpu")]
    code, answer = explain(printed, tmp_path)
    assert code == 0 and kinds(answer)[0] == "hot-not-cooled"


def test_a_fan_held_by_hand_is_said_as_held_not_as_a_list_of_guesses(tmp_path: Path) -> None:
    """nvidia-settings(1): GPUFanControlState 1 is the user's control through GPUTargetFanSpeed; older sensors print
    it87's "pwm1: 255 (enable = 1, ...)", pwm_enable 1 (it87.rst: manual). Both fans of the card at 100 % beside a
    41 °C core are one finding, known: held there by hand, never "likely" with the list of what may hold a fan at full
    (a setting, a lost sensor, a fault), which the control read already answers; nor said twice (held, then full)."""
    text = "".join(f"  Attribute '{a}' (desk:0[{t}]): {v}.\n" for a, t, v in (
        ("GPUFanControlState", "gpu:0", 1), ("GPUTargetFanSpeed", "fan:0", 100), ("GPUTargetFanSpeed", "fan:1", 100),
        ("GPUCurrentFanSpeed", "fan:0", 100), ("GPUCurrentFanSpeed", "fan:1", 100),
        ("GPUCurrentFanSpeedRPM", "fan:0", 3100), ("GPUCurrentFanSpeedRPM", "fan:1", 3080),
        ("GPUCoreTemp", "gpu:0", 41)))
    code, answer = explain(text, tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and lead["kind"] == "full-while-cool" and len(lead["subjects"]) == 2, lead
    assert lead["confidence"] == "known" and lead["facts"]["held"] == "manual"
    assert "fixed-duty" not in kinds(answer) and "a controller that lost" not in str(answer["sentence"])
    code, answer = explain(text.replace("(desk:0[gpu:0]): 1.", "(desk:0[gpu:0]): 0."), tmp_path)
    assert findings_of(answer)[0]["confidence"] == "likely" and "held" not in findings_of(answer)[0]["facts"]
    board = ("it8728-isa-0a30\nAdapter: ISA adapter\nfan1:        2170 RPM  (min =    0 RPM)\n"
             "temp3:        +{t}°C  (low  = +127.0°C, high = +127.0°C)  sensor = Intel PECI\n"
             "pwm1:         255  (enable = {e}, freq = 25882 Hz)\n")
    held = machine(read.read(board.format(t="46.0", e=1))[0]).fans[0]
    assert (held.pwm_enable, held.controller, held.duty_percent) == (1, "manual", 100.0)
    assert findings_of(explain(board.format(t="46.0", e=1), tmp_path)[1])[0]["facts"]["held"] == "pwm_enable 1"
    hot = findings_of(explain(board.format(t="75.0", e=1), tmp_path)[1])  # not cool: held, by the other rule
    assert [f["facts"]["pwm_enable"] for f in hot if f["kind"] == "fixed-duty"] == [1]
    assert machine(read.read(board.format(t="46.0", e=2))[0]).fans[0].controller == "bios"


ILO = ("</>hpiLO-> show /system1/fan1\n\n/system1/fan1\n  Targets\n  Properties\n    DeviceID=fan1\n"
       "    ElementName=Fan 1\n    OperationalStatus={status}\n    VariableSpeed=Yes\n    DesiredSpeed={speed}\n"
       "    HealthState={status}\n\n</>hpiLO-> show /system1/sensor3\n\n/system1/sensor3\n  Properties\n"
       "    DeviceID=09-PCI 1\n    ElementName=Temp 9\n    SensorType=Temperature\n    OperationalStatus=Ok\n"
       "    RateUnits=Celsius\n    CurrentReading=81\n    HealthState=Ok\n")


def test_hpe_ilos_command_line_fans_and_sensors_are_read(tmp_path: Path) -> None:
    """HPE iLO's SMASH CLP (the iLO scripting and command line guide): a fan's ElementName, DesiredSpeed (a share of
    its full speed) and OperationalStatus; a sensor's CurrentReading in RateUnits Celsius. The fan at 82 % is the
    BMC's; a fan whose status reads Failed is a fault, its status read beside the share it reports in place of a
    speed (it was read only beside a speed). Was refused."""
    found = machine(read.read(ILO.format(status="Ok", speed=82))[0])
    assert [(f.label, f.duty_percent, f.chip) for f in found.fans] == [("Fan 1", 82.0, "bmc")]
    assert [(t.label, t.celsius) for t in found.temperatures] == [("Temp 9", 81.0)]
    code, answer = explain(ILO.format(status="Failed", speed=0), tmp_path)
    assert code == 0 and "fan-fault" in kinds(answer) and "no-fault" not in kinds(answer), kinds(answer)
    assert kinds(answer)[0] == "hot-not-cooled"  # beside Temp 9 at 81 °C the heat leads; the fault is known


HWMONITOR = ("Hardware monitors\n---------------------------------------------\n\nHardware monitor\tITE IT8686\n"
             "\tVoltage 0\t1.39 Volts [0x57] (CPU VCORE)\n\tTemperature 0\t37 degC (98 degF) [0x25] (SYSTIN)\n"
             "\tTemperature 1\t{cpu} degC (186 degF) [0x56] (CPU)\n\tFan 0\t{rpm} RPM [0x0] (CPU)\n"
             "\tFan 1\t1088 RPM [0x26B] (SYSTEM 1)\n\tFan PWM 0\t100 pc [0xFF] (CPU)\n"
             "\tFan PWM 1\t37 pc [0x5E] (SYSTEM 1)\n")


def test_cpuid_hwmonitors_saved_report_is_read(tmp_path: Path) -> None:
    """HWMonitor's report: a chip per "Hardware monitor" line (its part number, it8686, is the chip table's: a
    board's Super-I/O), each sensor's value and unit (degC, RPM, pc) and its name in the last parentheses (never
    the °F one); "Fan n" and "Fan PWM n" are one channel. The CPU header at 100 % reading 0 RPM beside the CPU at
    86 °C is not cooling it. Was refused."""
    found = machine(read.read(HWMONITOR.format(cpu=86, rpm=1900))[0])
    assert sorted((f.label, f.rpm, f.duty_percent, f.chip) for f in found.fans) == \
        [("CPU", 1900.0, 100.0, "it8686"), ("SYSTEM 1", 1088.0, 37.0, "it8686")]
    assert [(t.label, t.celsius) for t in found.temperatures] == [("SYSTIN", 37.0), ("CPU", 86.0)]
    code, answer = explain(HWMONITOR.format(cpu=86, rpm=0), tmp_path)
    assert code == 0 and kinds(answer)[0] in ("hot-not-cooled", "stalled") and "at-rest" not in kinds(answer)
    assert "it8686/fan1" in findings_of(answer)[0]["subjects"]
    # CPU-Z's report of the same monitors writes °C where HWMonitor writes degC (a real W83627EHF's: "30°C (86°F)");
    # its temperatures were dropped, the fans read with nothing they cool
    cpuz = HWMONITOR.format(cpu=86, rpm=1900).replace(" degC (98 degF)", "°C (98°F)").replace(" degC (186 degF)",
                                                                                             "°C (186°F)")
    assert [(t.label, t.celsius) for t in machine(read.read(cpuz)[0]).temperatures] == [("SYSTIN", 37.0),
                                                                                        ("CPU", 86.0)]


def test_a_temperature_input_the_chip_has_disabled_is_no_reading() -> None:
    """sensors prints "sensor = disabled" for an input whose tempN_type is 0 (the it87 driver takes 0 to disable an
    input, 3 for a diode, 4 for a thermistor; w83793.rst: 0 stops the channel's monitoring): its 29 °C is not a
    reading, left out; the PECI input beside it is the CPU's reading."""
    text = ("it8688-isa-0a40\nAdapter: ISA adapter\nfan1:        1400 RPM  (min =    0 RPM)\n"
            "temp1:                 +{t}°C  (low  = +127.0°C, high = +127.0°C)  sensor = disabled\n"
            "temp3:                 +36.0°C  (low  = +127.0°C, high = +127.0°C)  sensor = Intel PECI\n")
    temps = {t.label: t for t in machine(read.read(text.format(t="49.0"))[0]).temperatures}
    assert temps["temp1"].celsius is None and temps["temp1"].invalid == "not-available"
    assert temps["temp3"].celsius == 36.0
    enabled = machine(read.read(text.format(t="49.0").replace("sensor = disabled", "sensor = thermistor"))[0])
    assert {t.label: t.celsius for t in enabled.temperatures}["temp1"] == 49.0


ROCM = (" GPU  Temp    AvgPwr   SCLK     MCLK     Fan      Perf    SCLK OD\n"
        "  1   79.0c   31.0W    1528Mhz  945Mhz   18.82%   auto      0%\n"
        "$ rocm-smi --setperflevel low\n GPU  Temp    AvgPwr   SCLK     MCLK     Fan      Perf    SCLK OD\n"
        "  1   {after}c   3.0W     852Mhz   167Mhz   12.94%   {level}       0%\n")


def test_a_cards_heat_that_followed_its_performance_level_is_said(tmp_path: Path) -> None:
    """amdgpu's power_dpm_force_performance_level (Documentation/gpu/amdgpu/thermal.rst: auto lets the driver pick
    the clocks, low forces the lowest): rocm-smi before and after the level changed, the card from 79 °C to 36 °C:
    the heat came with the level (likely), leading. The same level in both, or a change of a few degrees, is not
    said."""
    code, answer = explain(ROCM.format(after="36.0", level="low"), tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and lead["kind"] == "level-and-heat" and lead["confidence"] == "likely", lead
    assert (lead["facts"]["level_before"], lead["facts"]["level_after"], lead["facts"]["before_c"],
            lead["facts"]["after_c"]) == ("auto", "low", 79, 36)
    assert "level-and-heat" not in kinds(explain(ROCM.format(after="36.0", level="auto"), tmp_path)[1])
    assert "level-and-heat" not in kinds(explain(ROCM.format(after="72.0", level="low"), tmp_path)[1])
    detail = "GPU[1]\t\t: Performance Level: {}\nGPU[1]\t\t: Temperature (Sensor edge) (C): {}\n"
    code, answer = explain(detail.format("high", "80.0") + detail.format("auto", "41.0"), tmp_path)
    assert findings_of(answer)[0]["kind"] == "level-and-heat"


SMI_ROW = ("+-----------------------------------------------------------------------------------------+\n"
           "| NVIDIA-SMI 550.120                Driver Version: 550.120        CUDA Version: 12.4     |\n"
           "|-----------------------------------------+------------------------+----------------------+\n"
           "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
           "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n"
           "|=========================================+========================+======================|\n"
           "|   0  NVIDIA GeForce RTX 3080        Off |   00000000:0A:00.0  On |                  N/A |\n"
           "| 30%   83C    P2            310W /  320W |    9000MiB /  10240MiB |    100%      Default |\n"
           "+-----------------------------------------+------------------------+----------------------+\n")


def test_sensors_and_nvidia_smi_in_one_paste_are_both_read(tmp_path: Path) -> None:
    """A post often gives sensors and nvidia-smi's table together: the board's fans and the card (83 °C at 30 %,
    310 W) are both read, and the card leads; the card was left out (one listing a file)."""
    board = ("$ sensors\nk10temp-pci-00c3\nAdapter: PCI adapter\nTctl:         +45.5°C\n\nnct6798-isa-0290\n"
             "Adapter: ISA adapter\nfan1:                   650 RPM  (min =    0 RPM)\n"
             "fan2:                  1900 RPM  (min =    0 RPM)\n\n$ nvidia-smi\n")
    code, answer = explain(board + SMI_ROW, tmp_path)
    assert code == 0 and "nvidia-smi" in str(answer["read_as"]) and "sensors" in str(answer["read_as"])
    lead = findings_of(answer)[0]
    assert lead["kind"] == "slow-while-hot" and lead["facts"]["source_c"] == 83, lead
    turning = {s for f in findings_of(answer) if f["kind"] == "turning" for s in f["subjects"]}
    assert {"nct6798/fan1", "nct6798/fan2"} <= turning, turning


def test_windows_acpi_thermal_zone_in_tenths_of_a_kelvin_is_read() -> None:
    """MSAcpi_ThermalZoneTemperature's CurrentTemperature is in tenths of a kelvin (Microsoft's documentation):
    3632 is 90 °C, the firmware's zone; a number outside what a zone reads is no temperature."""
    text = "CurrentTemperature : {}\nInstanceName       : ACPI\\ThermalZone\\TZ00_0\n"
    found = machine(read.read(text.format(3632))[0])
    assert [(t.chip, round(t.celsius or 0)) for t in found.temperatures] == [("acpitz", 90)]  # 363.2 K
    assert not machine(read.read(text.format(9999))[0]).temperatures
    # PowerShell's table of the same class (Get-WmiObject ... | Select CurrentTemperature), as a real post shows it:
    # the property's name, a rule of dashes, a value a zone; it was refused as holding no reading
    table = ("PS C:\\> Get-WmiObject MSAcpi_ThermalZoneTemperature -Namespace \"root/wmi\" | Select "
             "CurrentTemperature\nCurrentTemperature\n------------------\n              3312\n              3632\n")
    zones = machine(read.read(table)[0]).temperatures
    assert [(t.chip, t.label, t.celsius) for t in zones] == [("acpitz", "ACPI thermal zone 0", 58.1),
                                                            ("acpitz", "ACPI thermal zone 1", 90.1)]
    wmic = "C:\\>wmic /namespace:\\\\root\\wmi PATH MSAcpi_ThermalZoneTemperature get CurrentTemperature\n" \
           "CurrentTemperature\n3312\n\n"  # wmic's table: no rule under the name
    assert [t.celsius for t in machine(read.read(wmic)[0]).temperatures] == [58.1]


def test_a_fan_whose_speed_is_not_read_is_never_running_in_the_table() -> None:
    """An iLO fan reports only the share it is asked for (DesiredSpeed): the fan table says its speed is not read,
    never "running" (a fan FanWhy cannot see turning is not said to turn); a fan with a speed read runs."""
    found = machine(read.read(ILO.format(status="Ok", speed=82))[0])
    turning = next(f for f in explained(found)[0] if f.kind == "turning")
    assert state_word(turning, found.fans[0]) == "speed not read"
    counted = machine(read.read("nct6798-isa-0290\nfan1:  900 RPM\n")[0])
    assert state_word(next(f for f in explained(counted)[0] if f.kind == "turning"), counted.fans[0]) == "running"


def test_proc_i8k_and_i8kctl_are_read_by_their_documented_fields(tmp_path: Path) -> None:
    """i8kctl(1)'s own example ("1.0 A17 B5W123K 52 2 1 8040 6420 1 2": the CPU at 52 °C, the left fan high at 8040
    RPM, the right low at 6420), both fans off at 52 °C (Dell's controller rests them), and -1 where the SMM call
    failed (the driver's error value: no speed). Was refused; ten numbers on a line with no i8k named stay no
    reading."""
    example = machine(read.read("$ i8kctl\n1.0 A17 B5W123K 52 2 1 8040 6420 1 2\n")[0])
    # state 1 of 2 is pwm 128 of 255, as dell_smm's own pwm1 gives it
    assert [(f.label, f.rpm, f.duty_percent) for f in example.fans] == [("Left fan", 8040.0, 100.0),
                                                                        ("Right fan", 6420.0, 50.2)]
    assert [(t.label, t.celsius) for t in example.temperatures] == [("CPU", 52.0)]
    code, answer = explain("$ cat /proc/i8k\n1.0 A17 B5W123K 52 0 0 0 0 1 2\n", tmp_path)
    assert code == 0 and kinds(answer)[0] == "at-rest"
    code, answer = explain("$ i8kctl\n1.0 A05 XYZ 61 -1 -1 -1 -1 1 -1\n", tmp_path)
    assert code == 0 and kinds(answer)[0] == "speed-not-a-reading" and findings_of(answer)[0]["facts"]["why"] == "error"
    assert not read.read("1.0 A17 B5W123K 52 2 1 8040 6420 1 2\n")[0]


def test_a_relative_listing_is_read_in_the_hwmon_folder_its_shell_was_in() -> None:
    """`grep -r . pwm*` run in a hwmon folder lists "pwm1:101" alone: read as that folder's, its chip named by its
    name file, or else by the platform device's driver (nct6687.2592: the out-of-tree nct6687, whose pwm_enable 99
    is the firmware's control). Was read as fans of no chip; a listing with no folder named stays as it was."""
    prompt = "/sys/devices/platform/nct6687.2592/hwmon/hwmon1# grep -r . pwm*\n"
    listing = "pwm1:101\npwm1_enable:99\nfan1_input:1100\n"
    (fan,) = machine(read.read(prompt + listing)[0]).fans
    assert (fan.chip, fan.duty_percent, fan.pwm_enable, fan.controller) == ("nct6687", 39.6, 99, "bios")
    (named,) = machine(read.read(prompt + "name:nct6683\n" + listing)[0]).fans
    assert named.chip == "nct6683"  # the name file says which driver read it
    (bare,) = machine(read.read(listing)[0]).fans
    assert bare.chip is None
    # sensors' own lines beside a prompt in a hwmon folder stay its chip's (grep's "file:content" has no space)
    beside = "/sys/class/hwmon/hwmon3# sensors\nnct6798-isa-0290\nAdapter: ISA adapter\nfan1:   1200 RPM\n"
    assert [(f.chip, f.rpm) for f in machine(read.read(beside)[0]).fans] == [("nct6798", 1200.0)]


TWO_CARDS = ("amdgpu-pci-0300\nAdapter: PCI adapter\nfan1:           0 RPM  (min =    0 RPM, max = 3200 RPM)\n"
             "edge:         +35.0°C  (crit = +100.0°C, hyst = -273.1°C)\njunction:     +36.0°C\n\n"
             "amdgpu-pci-0b00\nAdapter: PCI adapter\nfan1:        3100 RPM  (min =    0 RPM, max = 3200 RPM)\n"
             "edge:         +88.0°C  (crit = +100.0°C, hyst = -273.1°C)\njunction:     +99.0°C\n")


def test_two_devices_of_one_driver_are_two_devices_not_two_readings_of_one(tmp_path: Path) -> None:
    """sensors heads each device with its driver, bus and address (libsensors' chip name): two cards at
    amdgpu-pci-0300 and amdgpu-pci-0b00 are two fans, each with its own junction. Read as one chip, the second card
    was a later reading of the first: "read 0 RPM at 36 °C and turns now that it is at 99 °C", a time series made
    of two cards. The same header met again stays the next reading of that device."""
    code, answer = explain(TWO_CARDS, tmp_path)
    found = {f["kind"]: f for f in findings_of(answer)}
    assert code == 0 and "rest-then-turning" not in found and "started-as-warmed" not in found
    assert found["at-rest"]["subjects"] == ["amdgpu-pci-0300/fan1"]
    assert found["at-rest"]["facts"]["source"] == "amdgpu-pci-0300/junction"
    assert found["turning"]["subjects"] == ["amdgpu-pci-0b00/fan1"]
    dual = ("coretemp-isa-0000\nAdapter: ISA adapter\nCore 0:        +41.0°C\n\n"
            "coretemp-isa-0001\nAdapter: ISA adapter\nCore 0:        +86.0°C\n")
    temps = {t.key: t for t in machine(read.read(dual)[0]).temperatures}
    assert {k: t.celsius for k, t in temps.items()} == {"coretemp-isa-0000/Core 0": 41.0,
                                                        "coretemp-isa-0001/Core 0": 86.0}
    assert all(t.role == "cpu" and not t.history for t in temps.values())  # the chip table knows them: coretemp
    again = machine(read.read(TWO_CARDS.split("\n\n")[0] + "\n\n" + TWO_CARDS.split("\n\n")[0].replace(
        "fan1:           0 RPM", "fan1:        1200 RPM"))[0])
    assert [f.key for f in again.fans] == ["amdgpu/fan1"] and again.snapshots == 2
    # a listing of /sys/class/hwmon with two cards' chips named "amdgpu": each by its entry, as the live reader names
    # a device it cannot address (both were one fan, the second card's readings over the first's)
    listing = "".join(f"/sys/class/hwmon/{h}/name:amdgpu\n/sys/class/hwmon/{h}/fan1_input:{rpm}\n"
                      f"/sys/class/hwmon/{h}/temp2_label:junction\n/sys/class/hwmon/{h}/temp2_input:{mc}\n"
                      for h, rpm, mc in (("hwmon3", 0, 36000), ("hwmon5", 3100, 99000)))
    two = machine(read.read(listing)[0])
    assert sorted((f.key, f.rpm) for f in two.fans) == [("amdgpu-hwmon3/fan1", 0.0), ("amdgpu-hwmon5/fan1", 3100.0)]


def test_fans_with_no_chip_header_all_at_zero_may_be_a_bmcs(tmp_path: Path) -> None:
    """Fan lines copied without their chip's header (``fan1: 0 RPM``, hwmon's fanN naming): which chip reads them is
    not known, so besides stopped, not connected and not counted, a board whose fans its BMC reads and drives (the
    Super-I/O's inputs then unwired) is one of the causes named; under a header that is not a board's fan chip
    (an AIO's), it is not."""
    bare = "fan1:        0 RPM\nfan2:        0 RPM\nfan3:        0 RPM\n/dev/sda: 33°C\n"
    code, answer = explain(bare, tmp_path)
    assert code == 0, answer
    lead = findings_of(answer)[0]
    assert (lead["kind"], lead["confidence"], lead["facts"]["unnamed"]) == ("headers-read-zero", "possible", "yes")
    assert str(answer["sentence"]).startswith(
        "Every fan read here is at 0 RPM: stopped by its controller, not connected, or not counted (or read and "
        "driven by something else, as a server board's BMC does: ipmitool sensor); nothing read tells which.")
    cooler = ("Corsair H110i GT\n├── Liquid temperature    33.6  °C\n├── Fan 1 speed              0  rpm\n"
              "└── Fan 2 speed              0  rpm\n")
    code, answer = explain(cooler, tmp_path)
    zero = next(f for f in findings_of(answer) if f["kind"] == "headers-read-zero")
    assert "unnamed" not in zero["facts"] and "BMC" not in str(answer["sentence"])
    code, answer = explain("CPU Fan:        0 RPM\nSystem Fan:     0 RPM\n", tmp_path)  # a tool's own labels
    assert code == 0 and "unnamed" not in findings_of(answer)[0]["facts"], answer


CAT_SESSION = ("$ cat /sys/class/hwmon/hwmon3/name\nit8686\n$ cat /sys/class/hwmon/hwmon3/fan1_input\n0\n"
               "$ cat /sys/class/hwmon/hwmon3/pwm1\n{pwm}\n$ cat /sys/class/hwmon/hwmon3/pwm1_enable\n1\n"
               "$ cat /sys/class/hwmon/hwmon3/temp1_input\n42000\n")


def test_a_board_header_driven_at_a_duty_and_reading_zero_is_said(tmp_path: Path) -> None:
    """A board's pwmN drives its header whether or not a fan is on it (nct6775.rst, it87.rst), and a duty of 20 % or
    more spins any fan that is there (sysfs-interface.rst, pwmN): a header at 0 RPM under such a duty, with no fan
    turning beside it, is empty, a stalled fan or a speed the chip does not count, each said; never left unsaid, never
    at rest. (A self-built ``cat`` session, in the form people post one.)"""
    code, answer = explain(CAT_SESSION.format(pwm=255), tmp_path)
    assert code == 0, answer
    found = findings_of(answer)
    lead = found[0]
    assert (lead["kind"], lead["confidence"]) == ("headers-read-zero", "possible")
    assert {k: lead["facts"][k] for k in ("count", "board", "duty", "driven")} == \
        {"count": 1, "board": "yes", "duty": 100.0, "driven": 1}
    assert not {"at-rest", "turning", "no-fault"} & {f["kind"] for f in found}
    assert str(answer["sentence"]).startswith(
        "The only fan header read here is at 0 RPM while driven at 100 %: nothing is plugged in, a fan that does not "
        "turn (stalled) or whose speed the chip does not count, it is read and driven by something else (a server "
        "board's BMC: ipmitool sensor), or the driver does not read this board's fan registers.")
    code, answer = explain(CAT_SESSION.format(pwm=25), tmp_path)  # 10 %: under any fan's start duty
    lead = findings_of(answer)[0]
    assert lead["kind"] == "headers-read-zero" and "duty" not in lead["facts"]


def test_every_header_at_0_beside_a_cpu_hot_enough_to_need_cooling_says_to_check_its_fan(tmp_path: Path) -> None:
    """No fan seen turning while the CPU is past the temperature any controller rests a fan at (80 °C: see
    docs/FAN-RULES.md, Thresholds): the readings may be the chip's, but a CPU that hot needs a fan that spins, and the
    answer says to check it; a cool CPU beside the same headers gets no such warning (node_exporter's hwmon metrics,
    as a fleet's Prometheus serves them)."""
    metrics = ('node_hwmon_chip_names{{chip="platform_nct6775_656",chip_name="nct6798"}} 1\n'
               'node_hwmon_chip_names{{chip="pci0000:00_0000:00:18_3",chip_name="k10temp"}} 1\n'
               'node_hwmon_sensor_label{{chip="pci0000:00_0000:00:18_3",label="Tctl",sensor="temp1"}} 1\n'
               'node_hwmon_fan_rpm{{chip="platform_nct6775_656",sensor="fan1"}} 0\n'
               'node_hwmon_pwm{{chip="platform_nct6775_656",sensor="pwm1"}} 255\n'
               'node_hwmon_temp_celsius{{chip="pci0000:00_0000:00:18_3",sensor="temp1"}} {cpu}\n')
    for cpu, hot in ((94.5, True), (58.5, False)):
        _, answer = explain(metrics.format(cpu=cpu), tmp_path)
        lead = findings_of(answer)[0]
        assert lead["kind"] == "headers-read-zero" and (lead["facts"].get("hot") == "yes") == hot, lead
        assert ("check that its fan spins" in str(answer["sentence"])) == hot, answer["sentence"]


def test_a_path_and_its_value_apart_by_blanks_are_read_as_grep_prints_them(tmp_path: Path) -> None:
    """A shell loop's ``echo "$f $(cat $f)"`` or ``paste`` puts blanks, not grep's colon, between a sysfs path and
    its value: the same readings, read the same (self-built, in the form a shell prints; the ``grep`` form is the
    corpus's)."""
    loop = ("/sys/class/hwmon/hwmon3/name it8686\n/sys/class/hwmon/hwmon3/fan2_input 1230\n"
            "/sys/class/hwmon/hwmon3/pwm2\t120\n/sys/class/hwmon/hwmon3/pwm2_enable 2\n"
            "/sys/class/hwmon/hwmon3/temp1_input 42000\n")
    code, spaced = explain(loop, _dir(tmp_path, "spaced"))
    grep = "".join(f"{path}:{value}\n" for path, value in (line.split(None, 1) for line in loop.splitlines()))
    code_grep, colon = explain(grep, _dir(tmp_path, "grep"))
    assert code == code_grep == 0, spaced
    assert spaced["fans"] == colon["fans"] and spaced["sentence"] == colon["sentence"]
    fans = spaced["fans"]
    assert isinstance(fans, list) and [(f["chip"], f["rpm"], f["pwm_enable"]) for f in fans] == [("it8686", 1230, 2)]
    code, zone = explain("/sys/class/thermal/thermal_zone0/type acpitz\n"
                         "/sys/class/thermal/thermal_zone0/temp 45000\n", _dir(tmp_path, "zone"))
    hottest = next(f for f in findings_of(zone) if f["kind"] == "hottest")
    assert code == 0 and hottest["facts"]["celsius"] == 45.0, zone


def _dir(tmp_path: Path, name: str) -> Path:
    (tmp_path / name).mkdir()
    return tmp_path / name


ARCH_WIKI_2008 = """Adapter: ISA adapter
VCore 1:   +1.14 V  (min =  +0.00 V, max =  +4.08 V)
fan1:     2428 RPM  (min =    0 RPM, div = 4)
fan2:        0 RPM  (min = 1630 RPM, div = 4)              ALARM
fan3:     2191 RPM  (min = 6367 RPM, div = 4)              ALARM
temp1:       +38°C  (high =   +20°C, hyst =   +68°C)   sensor = thermistor
"""


def test_a_fan_at_zero_under_an_old_chips_divisor_may_be_a_slow_fan(tmp_path: Path) -> None:
    """An 8-bit fan counter with a divisor counts down to 1,350,000 / (254 x divisor) RPM and reads a slower fan as 0
    (lm-sensors' doc/fan-divisors: 5,314 at 1, 2,657 at 2, 1,328 at 4, 664 at 8). The ArchWiki's 2008 example
    (`sensors` on such a chip, "increase the fan divisor" if a running fan shows no speed): fan2's alarm at 0 names a
    fan slower than 1,328 RPM among its causes; without an alarm, a fan at 0 beside turning ones is said to possibly
    be turning slowly, and empty only possibly; a hwmon folder's fanN_div is read as sensors' div is. Not on a chip
    whose driver sets the divisor itself (nct6775, w83627ehf): it raises the divisor on an invalid reading."""
    code, answer = explain(ARCH_WIKI_2008, _dir(tmp_path, "wiki"))
    alarm = next(f for f in findings_of(answer) if f["kind"] == "fan-alarm" and f["facts"].get("uncounted"))
    assert code == 0 and (alarm["facts"]["divisor"], alarm["facts"]["slowest"]) == (4.0, 1328.0)
    assert "slower than about 1,328 RPM" in str(answer["sentence"])
    quiet = ARCH_WIKI_2008.replace("(min = 1630 RPM, div = 4)              ALARM", "(min =    0 RPM, div = 2)")
    code, answer = explain(quiet, _dir(tmp_path, "quiet"))
    found = {f["kind"]: f for f in findings_of(answer)}
    assert (found["under-divisor"]["facts"]["slowest"], found["under-divisor"]["confidence"]) == (2657.0, "possible")
    listing = "".join(f"/sys/class/hwmon/hwmon2/{name}:{value}\n" for name, value in
                      (("name", "it8712"), ("fan1_input", "2400"), ("fan2_input", "0"), ("fan2_div", "8")))
    code, answer = explain(listing, _dir(tmp_path, "sysfs"))  # a board chip: its 0 beside a turning fan is empty
    found = {f["kind"]: f for f in findings_of(answer)}
    assert found["under-divisor"]["facts"]["slowest"] == 664.0 and found["empty-slots"]["confidence"] == "possible"
    assert "may have no fan on it" in str(answer["sentence"])
    auto = listing.replace("it8712", "nct6775")  # nct6775.rst: the driver raises the divisor itself on an invalid
    code, answer = explain(auto, _dir(tmp_path, "auto"))  # reading, so its 0 is not a fan too slow for the divisor
    found = {f["kind"]: f for f in findings_of(answer)}
    assert "under-divisor" not in found and found["empty-slots"]["confidence"] == "likely"


# A real ThinkPad T420's hwmon dump, as a fan tool's debug printed it (ichiriac/ubuntu-smart-fan#3), cut to its fan
# and its CPU's package temperature
T420_DUMP = """## hwmon1 :
  - fan1_input = 3855
  - name = thinkpad
  - pwm1 = 255
  - pwm1_enable = {enable}
  - uevent =

## hwmon2 :
  - name = coretemp
  - temp1_crit = 100000
  - temp1_input = 69000
  - temp1_label = Package id 0
  - temp1_max = 86000
"""


def test_a_thinkpads_pwm_under_its_ec_is_no_duty_and_a_dumps_label_with_spaces_names_its_reading(
        tmp_path: Path) -> None:
    """thinkpad_acpi.c (fan_pwm1_show): in auto or full-speed mode pwm1 reads the level kept for manual control,
    not the fan's: 255 there is no "100 % duty" (it was). A label file's value with spaces ("Package id 0") names
    its reading (it was left out: the temperature was "temp1")."""
    code, answer = explain(T420_DUMP.format(enable=2), tmp_path)
    assert code == 0, answer
    fans = answer["fan_facts"]
    assert isinstance(fans, list) and len(fans) == 1
    assert (fans[0]["duty_percent"], fans[0]["controller"], fans[0]["found"]) == (None, "ec", "running")
    assert "duty" not in findings_of(answer)[0]["facts"]
    hottest = next(f for f in findings_of(answer) if f["kind"] == "hottest")
    assert hottest["subjects"] == ["coretemp/temp1"] and "Package id 0 (coretemp)" in str(answer["sentence"])
    code, answer = explain(T420_DUMP.format(enable=1), tmp_path)  # by hand: pwm1 is the level the fan is set to
    fans = answer["fan_facts"]
    assert isinstance(fans, list) and (fans[0]["duty_percent"], fans[0]["controller"]) == (100.0, "manual")


# A real Radeon VII's `sensors` after a driver fault (freedesktop.org bug 110674, comment 37): libsensors' error
# lines on stderr above the listing, which shows the same reads as N/A
RADEON_VII_FAULT = """ERROR: Can't get value of subfeature fan1_input: I/O error
ERROR: Can't get value of subfeature power1_average: I/O error
amdgpu-pci-4400
Adapter: PCI adapter
vddgfx:       +0.74 V
fan1:             N/A  (min =    0 RPM, max = 3850 RPM)
temp1:        +39.0°C  (crit = +118.0°C, hyst = -273.1°C)
power1:           N/A  (cap = 250.00 W)
"""


def test_sensors_error_beside_its_own_na_is_one_fan_and_an_amdgpu_fan_listed_is_fitted(tmp_path: Path) -> None:
    """lm-sensors prints a subfeature it could not read as an ERROR line and as N/A in the listing: one fan, not an
    unnamed second one. amdgpu_pm.c hides every fan attribute of a board with no fan: an amdgpu fan1 listed is a
    fitted fan, never "a card with no fan of its own"."""
    code, answer = explain(RADEON_VII_FAULT, tmp_path)
    assert code == 0, answer
    fans = answer["fan_facts"]
    assert isinstance(fans, list) and [f["key"] for f in fans] == ["amdgpu/fan1"]
    unread = next(f for f in findings_of(answer) if f["kind"] == "speed-not-a-reading")
    assert "card" not in unread["facts"] and "no fan of its own" not in str(answer["sentence"])
    code, answer = explain(RADEON_VII_FAULT.replace("amdgpu-pci-4400", "nouveau-pci-4400"), tmp_path)
    unread = next(f for f in findings_of(answer) if f["kind"] == "speed-not-a-reading")
    assert unread["facts"]["card"] == "yes"  # a chip whose listing does not say: the fanless card stays possible


def test_a_geforce_that_reads_no_fan_is_not_said_to_have_none(tmp_path: Path) -> None:
    """nvidia-smi(1): many parts report no fan speed because the enclosure's fans cool them; a GeForce or workstation
    card is sold with its own, so [N/A] there leaves open whether it has one: never "it has no fan of its own" (it
    was said of any card whose line is not a data-center's)."""
    csv = "name, fan.speed [%], temperature.gpu\n{name}, [N/A], 88\n"
    _, answer = explain(csv.format(name="NVIDIA GeForce RTX 3090"), tmp_path)
    assert findings_of(answer)[0]["facts"]["line"] == "consumer"
    assert "no fan of its own" not in str(answer["sentence"]) and "cannot be told" in str(answer["sentence"])
    _, answer = explain(csv.format(name="NVIDIA H100 80GB HBM3"), tmp_path)
    assert "a data-center card has no fan of its own" in str(answer["sentence"])


def test_a_fan_an_emc2305_reads_0_under_a_duty_may_be_turning_slowly(tmp_path: Path) -> None:
    """emc2305.c (emc2305_show_fan): a tachometer count that comes to 480 or less reads 0, and the rest is doubled,
    so a quiet fan at 960 RPM or slower reads 0 under its duty: "stalled" is then one cause of two, at "possible",
    and the slow fan is named. A listing built from the driver's attributes (no real paste of it was found)."""
    text = ("/sys/class/hwmon/hwmon3/name:{chip}\n/sys/class/hwmon/hwmon3/fan1_input:0\n"
            "/sys/class/hwmon/hwmon3/pwm1:90\n")
    _, answer = explain(text.format(chip="emc2305"), tmp_path)
    stalled = next(f for f in findings_of(answer) if f["kind"] == "stalled")
    assert stalled["confidence"] == "possible" and stalled["facts"]["counts_from"] == 960.0
    assert "960 RPM or slower" in str(answer["sentence"])
    _, answer = explain(text.format(chip="mlxsw"), tmp_path)  # a controller whose driver counts slow fans too
    stalled = next(f for f in findings_of(answer) if f["kind"] == "stalled")
    assert "counts_from" not in stalled["facts"]


def test_an_nzxt_smart2_listing_says_which_connectors_have_a_fan(tmp_path: Path) -> None:
    """nzxt-smart2.c (pwm_enable: the fan the device detected): FAN 1 detected at 0 RPM is a fan there and not
    turning; FAN 2 with pwm_enable 0 an empty connector known, never a fan with no control at full speed. A listing
    built from the driver's attributes (no real paste of one was found)."""
    text = "".join(f"/sys/class/hwmon/hwmon5/{name}:{value}\n" for name, value in (
        ("name", "nzxtsmart2"), ("fan1_input", 0), ("pwm1", 102), ("pwm1_enable", 1), ("fan2_input", 0),
        ("pwm2", 102), ("pwm2_enable", 0), ("fan3_input", 1104), ("pwm3", 102), ("pwm3_enable", 1)))
    _, answer = explain(text, tmp_path)
    found = {f["kind"]: f for f in findings_of(answer)}
    assert found["detected-still"]["subjects"] == ["nzxtsmart2/fan1"] and "no-control" not in found
    fans = answer["fan_facts"]
    assert isinstance(fans, list) and [f["found"] for f in fans][1] == "empty"


# A Dell XPS 15 9570 owner's session (JackHack96/dell-xps-9570-ubuntu-respin#57), cut to its commands and the first
# sensors: the BIOS's fan control turned off, both fans set to state 0, then the readings
XPS_SESSION = """andrea@andrea:~/dell-bios-fan-control$ sudo ./dell-bios-fan-control 0
BIOS CONTROL DISABLED
andrea@andrea:~/dell-bios-fan-control$ i8kfan 0 0
1 1
andrea@andrea:~/dell-bios-fan-control$ sensors
coretemp-isa-0000
Adapter: ISA adapter
Package id 0:  +68.0°C  (high = +100.0°C, crit = +100.0°C)
Core 0:        +67.0°C  (high = +100.0°C, crit = +100.0°C)

dell_smm-virtual-0
Adapter: Virtual device
fan1:           0 RPM
fan2:           0 RPM
"""


def test_a_dells_fans_stopped_with_its_bios_control_off_are_held_not_at_rest(tmp_path: Path) -> None:
    """dell-bios-fan-control turns the BIOS's fan control off ("BIOS CONTROL DISABLED": the SMM calls that
    dell-smm-hwmon uses for pwm1_enable 1) and i8kfan 0 0 sets both fans off: at 68 °C they are held stopped by that
    setting, never "at rest by its controller's design" (it was: a stopped fan called at rest)."""
    code, answer = explain(XPS_SESSION, tmp_path)
    assert code == 0, answer
    kinds = [f["kind"] for f in findings_of(answer)]
    assert "at-rest" not in kinds and kinds[0] == "fixed-duty", kinds
    fans = answer["fan_facts"]
    assert isinstance(fans, list) and {f["controller"] for f in fans} == {"manual"}
    journal = ("Jul 28 23:36:25 fedora dell-bios-fan-control[653]: BIOS CONTROL DISABLED\n"
               + XPS_SESSION.split("$ sensors\n", 1)[1])  # the unit's journal line (no state set): duty not read
    _, answer = explain(journal, tmp_path)
    found = {f["kind"]: f for f in findings_of(answer)}
    assert "at-rest" not in found and found["warm-not-turning"]["facts"]["by_hand"] == "yes"
    _, answer = explain(XPS_SESSION.split("$ sensors\n", 1)[1], tmp_path)  # the readings alone: the EC's rest
    assert findings_of(answer)[0]["kind"] == "at-rest"


def test_an_i8kfan_that_failed_set_nothing() -> None:
    """i8kfan prints the fans' states after it, -1 -1 where the SMM call failed (i8kctl.c): such a command set no
    state, and no fan is made of it (a laptop whose SMM interface is missing logged it so)."""
    from app.fans.read import i8k

    assert i8k.control("user@host:~$ sudo i8kfan 2 2\n-1 -1\n") == []
    set_ = i8k.control("user@host:~$ sudo i8kfan 2 1\n2 1\n")
    assert sorted((r.attr, r.value) for r in set_) == [("pwm1", 128.0), ("pwm2", 255.0)]  # left is fan 2
    assert i8k.control("Dec 1 i8kmon[812]: /usr/bin/i8kfan - 2\n") == []  # a daemon's log: its rule's own
