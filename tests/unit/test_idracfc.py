"""Dell_iDRAC_fan_controller's log: each row's temperatures as a snapshot of the BMC's sensors, its profile as the
tool's own account of what holds a PowerEdge's fans (one duty for every fan with the iDRAC's own control off, or
the iDRAC's own control), read as its functions.sh prints them. R720XD and R_90 are rows of real logs posted to the
tool's issue tracker (an R720xd whose CPU passed the threshold, where the iDRAC refused the third-party card
command; a server whose CPU 1 sensor read 0 after a power cycle); the others are shaped on its source
(print_temperature_array_line, build_header, build_fan_control_fallback_comment)."""

from __future__ import annotations

from pathlib import Path

from app.fans import read
from app.fans.adapt import machine
from app.fans.read import idracfc
from tests.unit.test_fan_readers import explain, findings_of

HEADER = ("                     ------- Temperatures -------\n"
          "    Date & time      Inlet  CPU 1  CPU 2  Exhaust          Active fan speed profile          "
          "Third-party PCIe card Dell default cooling response  Comment\n")
STARTED = ("Server model: DELL PowerEdge R730xd\niDRAC/IPMI host: local\nFan speed objective: 5%\n"
           "CPU temperature threshold: 50°C\nCheck interval: 60s\nMonitoring only mode: Disabled\n\n")
STATIC = ("08-08-2026 07:45:01   21°C   42°C   44°C     34°C            User static fan control profile (5%)"
          "                                              Enabled  All CPU temperatures are now OK (<= 50°C), user's "
          "fan control profile applied.\n")
DYNAMIC = ("08-08-2026 07:46:01   22°C   61°C   55°C     38°C         Dell default dynamic fan control profile"
           "                                              Enabled  CPU 1 temperature is too high, Dell default "
           "dynamic fan control profile applied for safety\n")
R720XD = ("iDRAC/IPMI host: local\nFan speed objective: 5%\nCPU temperature threshold: 50°C\nCheck interval: 60s\n\n"
          "Unable to send RAW command (channel=0x0 netfn=0x30 lun=0x0 cmd=0xce rsp=0xc1): Invalid command\n\n"
          + HEADER +
          "\n11-03-2023 03:32:15   24°C   59°C   58°C     42°C  Dell default dynamic fan control profile"
          "                                              Enabled   -\n\n"
          "Unable to send RAW command (channel=0x0 netfn=0x30 lun=0x0 cmd=0xce rsp=0xc1): Invalid command\n\n"
          "11-03-2023 03:33:15   23°C   58°C   51°C     41°C  Dell default dynamic fan control profile"
          "                                              Enabled   -\n")
R_90 = ("./Dell_iDRAC_fan_controller.sh: line 94: [: -gt: unary operator expected\n" + HEADER +
        "./Dell_iDRAC_fan_controller.sh: line 159: printf: -: invalid number\n"
        "21-05-2024 07:45:31   27°C    0°C   34°C  User static fan control profile (15%)°C"
        "                                  Disabled  CPU temperature decreased and is now OK (<= 55°C), user's fan "
        "control profile applied.\n"
        "21-05-2024 07:46:31   27°C    0°C   34°C  User static fan control profile (15%)°C"
        "                                  Disabled                                                    -\n")
SDR = ("Fan1 RPM         | 30h | ok  |  7.1 | 2160 RPM\nFan2 RPM         | 31h | ok  |  7.1 | 2160 RPM\n"
       "Fan3 RPM         | 32h | ok  |  7.1 | 2040 RPM\n")
P40 = ("name, temperature.gpu [C], fan.speed [%], power.draw [W]\nTesla P40, 88, [N/A], 180.20 W\n")


def test_each_row_is_a_snapshot_of_its_columns_and_the_settings_are_not_fans() -> None:
    readings, kind = read.read(STARTED + HEADER + STATIC + DYNAMIC)
    assert kind is not None and kind.startswith("Dell_iDRAC_fan_controller's log")
    assert [(r.label, r.value, r.snapshot) for r in readings] == [
        ("Inlet", 21.0, 0), ("CPU 1", 42.0, 0), ("CPU 2", 44.0, 0), ("Exhaust", 34.0, 0),
        ("Inlet", 22.0, 1), ("CPU 1", 61.0, 1), ("CPU 2", 55.0, 1), ("Exhaust", 38.0, 1)]
    assert machine(readings).fans == ()  # "Fan speed objective: 5%" is a setting of the tool, not a fan at 5 %
    # a single-CPU server's row with a sensor the script could not read ("-"), and no header pasted
    bare = idracfc.read("08-08-2026 07:45:01   21°C    -°C     32°C  Dell default dynamic fan control profile  -\n")
    assert [(r.label, r.value) for r in bare] == [("Inlet", 21.0), ("CPU 1", None), ("Exhaust", 32.0)]


def test_each_profile_is_a_decision_with_the_threshold_and_the_duty_it_returns_to() -> None:
    steps = idracfc.decisions(STARTED + HEADER + STATIC + DYNAMIC)
    assert [(s.why, s.percent, s.celsius, s.limit_c, s.asked, s.drives) for s in steps] == [
        ("fixed", 5.0, 44.0, 50.0, None, "bmc"), ("firmware", None, 61.0, 50.0, 5.0, "bmc")]
    watching = idracfc.decisions("08-08-2026 07:45:01   21°C   45°C     32°C  User static fan control profile (20%) "
                                 "(monitoring only, not applied)  -\n")
    assert [(s.why, s.percent) for s in watching] == [("watching", None)]
    refused = idracfc.decisions("Unable to send RAW command (channel=0x0 netfn=0x30 lun=0x0 cmd=0x30 rsp=0xd4): "
                                "Insufficient privilege level\n" + STATIC)
    assert [(s.why, s.percent) for s in refused] == [("refused", 5.0)]


def test_the_card_response_is_the_one_sent_unless_the_idrac_refused_that_command() -> None:
    assert [(s.controller, s.name, s.value) for s in idracfc.settings(HEADER + DYNAMIC)] == [
        ("iDRAC", "ThirdPartyPCIFanResponse", "Enabled")]
    assert idracfc.settings(R720XD) == ()  # a 12th generation's iDRAC has no such command ("Invalid command")


def test_a_static_profile_holds_every_fan_and_the_card_response_is_not_said(tmp_path: Path) -> None:
    """While the tool holds every fan at one duty the iDRAC's own control, and its card response, are off: the
    response the row says it sent is no cause then (bmc-setting), the duty is (known)."""
    code, answer = explain(STARTED + HEADER + STATIC, tmp_path)
    found = findings_of(answer)
    assert code == 0 and found[0]["kind"] == "daemon-decided" and found[0]["confidence"] == "known"
    assert {k: found[0]["facts"][k] for k in ("daemon", "duty", "why", "limit")} == {
        "daemon": "Dell_iDRAC_fan_controller", "duty": 5.0, "why": "fixed", "limit": 50.0}
    assert not [f for f in found if f["kind"] == "bmc-setting"]
    assert str(answer["sentence"]).startswith(
        "Dell_iDRAC_fan_controller last set every fan to 5 %, the CPUs reading 44 °C: it turns the iDRAC's own fan "
        "control off and holds one duty for every fan, chosen from the CPUs' temperatures alone, so a GPU or the "
        "disks get no more air as they heat; the iDRAC takes the fans back when a CPU reads above 50 °C (or cannot "
        "be read).")


def test_past_the_threshold_the_idrac_has_the_fans_and_the_card_response_stands(tmp_path: Path) -> None:
    code, answer = explain(STARTED + HEADER + STATIC + DYNAMIC, tmp_path)
    found = findings_of(answer)
    decided = next(f for f in found if f["kind"] == "daemon-decided")
    assert code == 0 and decided["facts"]["why"] == "firmware" and decided["facts"]["asked"] == 5.0
    assert [f["facts"]["effect"] for f in found if f["kind"] == "bmc-setting"] == ["pcie-card"]
    assert "gave the fans back to the iDRAC's own control (Dell's default dynamic profile), as a CPU read 61 °C, " \
        "above 50 °C" in str(answer["sentence"])
    # the real R720xd: past its threshold too, and its iDRAC refused the card command, so no response is said
    code, answer = explain(R720XD, tmp_path)
    found = findings_of(answer)
    assert code == 0 and found[0]["kind"] == "daemon-decided" and found[0]["facts"]["why"] == "firmware"
    assert not [f for f in found if f["kind"] == "bmc-setting"]


def test_a_cpu_read_at_0_is_said_as_no_temperature(tmp_path: Path) -> None:
    """The real log whose CPU 1 sensor read 0 after a power cycle: the tool compared 0 with its threshold and kept
    the fans at 15 %; the 0 is no CPU's temperature, and it is said so."""
    code, answer = explain(R_90, tmp_path)
    decided = next(f for f in findings_of(answer) if f["kind"] == "daemon-decided")
    assert code == 0 and (decided["facts"]["duty"], decided["facts"]["celsius"]) == (15.0, 0.0)
    assert "its CPU reading 0 °C, which is no temperature" in str(answer["sentence"])
    assert "the CPUs reading 0 °C" not in str(answer["sentence"])


def test_a_passive_card_under_fans_the_tool_holds_gets_no_more_air(tmp_path: Path) -> None:
    """A passive card's heat is what a BMC's fans run for (NVIDIA's product briefs, IPMI) only where the BMC runs
    them: held at one duty from the CPUs alone, the card's heat does not move them."""
    code, answer = explain("$ docker logs Dell_iDRAC_fan_controller\n" + STARTED + HEADER + STATIC +
                           "$ ipmitool sdr type fan\n" + SDR + "$ nvidia-smi --query-gpu=name,temperature.gpu,"
                           "fan.speed,power.draw --format=csv\n" + P40, tmp_path)
    passive = next(f for f in findings_of(answer) if f["kind"] == "passive-cards")
    assert code == 0 and passive["facts"]["held"] == 5.0
    assert "heat does not move them: Dell_iDRAC_fan_controller holds them at 5 %" in str(answer["sentence"])
    assert "most likely what the fans run for" not in str(answer["sentence"])
    code, answer = explain("$ ipmitool sdr\n" + SDR + "Inlet Temp       | 04h | ok  |  7.1 | 21 degrees C\n"
                           "$ nvidia-smi --query-gpu=name,temperature.gpu,fan.speed,power.draw --format=csv\n" + P40,
                           tmp_path)  # no tool's log: the BMC runs them, for the card
    passive = next(f for f in findings_of(answer) if f["kind"] == "passive-cards")
    assert "held" not in passive["facts"] and "most likely what the fans run for" in str(answer["sentence"])


TYPED = ("root@pve:~# ipmitool -I lanplus -H 192.168.1.120 -U root -P calvin raw 0x30 0x30 0x01 0x00\n"
         "root@pve:~# ipmitool -I lanplus -H 192.168.1.120 -U root -P calvin raw 0x30 0x30 0x02 0xff 0x14\n")


def test_dells_fan_commands_typed_into_ipmitool_are_decisions_in_turn() -> None:
    """The commands as Dell_iDRAC_fan_controller's functions.sh sends them (hex, or decimal bytes), typed with or
    without a prompt and sudo; a script's line with its duty in a variable is no command read."""
    from app.fans.read import ipmiraw
    assert [(s.daemon, s.why, s.percent) for s in ipmiraw.decisions(TYPED)] == [("ipmitool", "fixed", 20.0)]
    assert [(s.why, s.percent) for s in ipmiraw.decisions("sudo ipmitool raw 0x30 0x30 0x02 0xff 30\n"
                                                           "$ ipmitool raw 0x30 0x30 0x01 0x01\n")] == [
        ("fixed", 30.0), ("firmware", None)]
    assert ipmiraw.decisions("ipmitool -I $IDRAC_LOGIN_STRING raw 0x30 0x30 0x02 0xff $HEXADECIMAL_FAN_SPEED\n") == ()
    assert ipmiraw.decisions("ipmitool raw 0x30 0x30 0x02 0xff 0xff\n") == ()  # a duty is 0 to 0x64 (its script)
    refused = TYPED + "Unable to send RAW command (channel=0x0 netfn=0x30 lun=0x0 cmd=0x30 rsp=0xc1): Invalid command\n"
    assert [s.why for s in ipmiraw.decisions(refused)] == ["refused"]


def test_a_typed_duty_is_likely_and_holds_the_bmcs_fans(tmp_path: Path) -> None:
    """What was typed is what was asked, not what the iDRAC did: likely; its fans are then held from nothing the
    card does, as under the script's static profile."""
    code, answer = explain(TYPED + "root@pve:~# ipmitool sdr\n" + SDR + "Inlet Temp       | 04h | ok  |  7.1 | "
                           "21 degrees C\nroot@pve:~# nvidia-smi --query-gpu=name,temperature.gpu,fan.speed,"
                           "power.draw --format=csv\n" + P40, tmp_path)
    found = findings_of(answer)
    decided = next(f for f in found if f["kind"] == "daemon-decided")
    assert code == 0 and (decided["facts"]["duty"], decided["confidence"]) == (20.0, "likely")
    assert next(f for f in found if f["kind"] == "passive-cards")["facts"]["held"] == 20.0
    assert "ipmitool holds them at 20 %, set by hand," in str(answer["sentence"])  # not "chosen from the CPUs"


def test_a_supermicro_fan_mode_typed_is_a_setting_asked_not_read_back(tmp_path: Path) -> None:
    """raw 0x30 0x45 0x01 <mode> as smfc's ipmi.py sends it (1: Full): the BMC's Full mode said as set by the command
    typed (likely), not as read back; none where ipmitool's refusal of that command is pasted."""
    from app.fans.read import ipmiraw
    typed = "root@truenas:~# ipmitool raw 0x30 0x45 0x01 0x01\n"
    assert [(s.controller, s.value, s.typed) for s in ipmiraw.settings(typed)] == [("Supermicro BMC", "Full", True)]
    assert ipmiraw.settings(typed + "Unable to send RAW command (channel=0x0 netfn=0x30 lun=0x0 cmd=0x45 rsp=0xc1): "
                                    "Invalid command\n") == ()
    code, answer = explain(typed + "root@truenas:~# ipmitool sdr\nFAN1             | 1700 RPM          | ok\n"
                           "CPU Temp         | 38 degrees C      | ok\n", tmp_path)
    setting = next(f for f in findings_of(answer) if f["kind"] == "bmc-setting")
    assert code == 0 and (setting["facts"]["effect"], setting["confidence"]) == ("full-mode", "likely")
    assert str(answer["sentence"]).startswith("The Supermicro BMC's fan mode is set to Full by the ipmitool command "
                                              "typed here")
