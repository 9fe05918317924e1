"""What people paste of a server's BMC beyond ipmitool's tables: a Supermicro BMC's fan mode, as Supermicro's
SMCIPMITool and IPMICFG print it and as superfans decodes it (Full runs every fan at full speed whatever the
temperatures: known; Heavy IO raises the peripheral zone: likely; Standard and Optimal follow the temperatures and
are no cause), and FreeIPMI's ipmi-sensors with --comma-separated-output."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from app.cli.replay import run
from app.fans import read
from app.fans.adapt import machine
from app.fans.answer import explained
from app.fans.read.bmcsettings import FAN_MODE, settings
from tests.unit.test_fan_readers import explain, findings_of

SMC = ("Current Fan Speed Mode is [ {mode} ]\n\nSupported Fan modes:\n0: Standard Speed\n1: Full Speed\n"
       "2: Optimal Speed\n4: Heavy IO Speed\n")
SUPERFANS = ("$ sudo superfans status\nPreset: {mode}\nCurrent fan speed (CPU Zone): 100%\n"
             "Current fan speed (Peripheral zone): 100%\n")


@pytest.mark.parametrize(("text", "mode", "effect", "confidence"), [
    (SMC.format(mode="Full Speed"), "Full Speed", "full-mode", "known"),
    (SUPERFANS.format(mode="Full (All fans at 100%)"), "Full", "full-mode", "known"),
    (SMC.format(mode="Heavy IO Speed"), "Heavy IO Speed", "heavy-io", "likely"),
])
def test_a_mode_that_holds_the_fans_is_the_cause(text: str, mode: str, effect: str, confidence: str,
                                                  tmp_path: Path) -> None:
    """The mode in force is the one printed as current, never one of the supported modes listed under it."""
    assert [(s.controller, s.name, s.value) for s in settings(text)] == [("Supermicro BMC", FAN_MODE, mode)]
    code, answer = explain(text, tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and lead["kind"] == "bmc-setting"
    assert (lead["facts"]["effect"], lead["confidence"]) == (effect, confidence)


@pytest.mark.parametrize("text", [SMC.format(mode="Optimal Speed"),
                                  SUPERFANS.format(mode="Optimal (Temp controlled, target 30%)")])
def test_a_mode_that_follows_the_temperatures_is_no_cause(text: str, tmp_path: Path) -> None:
    _, answer = explain(text, tmp_path)
    assert "bmc-setting" not in [f["kind"] for f in findings_of(answer)]


FREEIPMI_CSV = ("ID,Name,Type,State,Reading,Units,Event\n4,4-CPU 1,Temperature,Nominal,40.00,C,'OK'\n"
                "12,12-Fan 1,Fan,Nominal,29.00,%,'OK'\n14,14-Fan 3,Fan,Critical,0.00,%,'Failed'\n"
                "39,39-P/S 1 Inlet,Temperature,N/A,N/A,C,N/A\n")


def test_freeipmis_comma_separated_output_is_read(tmp_path: Path) -> None:
    """ipmi-sensors(8) --comma-separated-output (with --output-sensor-state): the fan its BMC holds critical at 0 %
    is failed, said with the share it reports; an N/A temperature is no reading (it was refused whole)."""
    code, answer = explain(FREEIPMI_CSV, tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and lead["kind"] == "fan-fault" and lead["subjects"] == ["bmc/14-Fan 3"]
    assert lead["facts"]["raw"] == "0 %"
    hottest = [f for f in findings_of(answer) if f["kind"] == "hottest"]
    assert hottest and hottest[0]["facts"]["celsius"] == 40.0
    _, bare = explain(FREEIPMI_CSV.replace("ID,Name,Type,State,Reading,Units,Event\n", ""), tmp_path)
    assert bare.get("fans", []) == []  # no header: commas alone are not a BMC's table


def test_golden_sentence_of_full_mode(tmp_path: Path) -> None:
    _, answer = explain(SMC.format(mode="Full Speed"), tmp_path)
    assert str(answer["sentence"]).startswith(
        "The Supermicro BMC's fan mode is Full Speed: in that mode the BMC runs every fan at full speed, whatever the "
        "temperatures, unless a duty was written for its zone (as fan tools do), which it then keeps; Standard or "
        "Optimal lets the fans follow the temperatures (IPMICFG -fan 2 sets Optimal, or the BMC's web page).")


def test_a_failed_bmc_fan_is_said_with_what_the_others_turn_at(tmp_path: Path) -> None:
    """A BMC that counts a fan failed may run the rest faster for it: the failed fan leads, said with the others'
    speed (their middle one); a hwmon fan's FAULT has no such siblings to name."""
    sdr = ("FAN1             | 9600 RPM          | ok\nFAN2             | 9800 RPM          | ok\n"
           "FAN3             | 0 RPM             | cr\nFAN4             | 9700 RPM          | ok\n")
    _, answer = explain(sdr, tmp_path)
    lead = findings_of(answer)[0]
    assert (lead["kind"], lead["subjects"], lead["facts"]["others_rpm"]) == ("fan-fault", ["bmc/FAN3"], 9700.0)
    assert "The others turn at about 9,700 RPM" in str(answer["sentence"])
    (tmp_path / "sensors.txt").write_text("nct6798-isa-0290\nfan1:       FAULT\nfan2:      1200 RPM\n")
    (tmp_path / "sdr.txt").write_text(sdr.replace("| cr", "| ok"))  # a BMC's fans beside the board's: not siblings
    out, err = io.StringIO(), io.StringIO()
    assert run([tmp_path / "sensors.txt", tmp_path / "sdr.txt"], as_json=True, out=out, err=err) == 0
    faults = [f for f in json.loads(out.getvalue())["findings"] if f["kind"] == "fan-fault"]
    assert faults and "others_rpm" not in faults[0]["facts"]


GPU_SERVER = ("CPU1 Temp        | 52 degrees C      | ok\nCPU2 Temp        | 49 degrees C      | ok\n"
              "GPU1 Temp        | 84 degrees C      | ok\nGPU2 Temp        | {gpu} degrees C      | ok\n"
              "Inlet Temp       | 24 degrees C      | ok\n"
              + "".join(f"FAN{n}             | {{rpm}} RPM         | ok\n" for n in range(1, 5)))


def test_a_chassis_fan_is_said_with_the_hottest_part_its_bmc_reads(tmp_path: Path) -> None:
    """A server's chassis fans cool every part its BMC reads, GPUs included: fans at 15,500 RPM beside GPUs at
    84-86 °C and CPUs at 49-52 °C are said with the hottest GPU, not the CPU (was 'with CPU1 Temp at 52 °C'); the
    same fans at 0 beside it are a hot part without cooling."""
    _, answer = explain(GPU_SERVER.format(gpu=86, rpm=15500), tmp_path)
    lead = findings_of(answer)[0]
    assert lead["kind"] == "turning" and (lead["facts"]["source"], lead["facts"]["source_c"]) == ("bmc/GPU2 Temp", 86)
    _, answer = explain(GPU_SERVER.format(gpu=86, rpm=0), tmp_path)
    assert {"hot-not-cooled", "fan-fault"} & {f["kind"] for f in findings_of(answer)}


SUPERMICRO = ("CPU Temp         | 45.000     | degrees C  | ok    | 0.000     | 0.000     | 0.000     | 85.000    | "
              "90.000    | 90.000\n"
              + "".join(f"FAN{n}             | {rpm:<11}| RPM        | {status:<6}| 300.000   | 500.000   | "
                        "700.000   | 25300.000 | 25400.000 | 25500.000\n"
                        for n, (rpm, status) in enumerate((("{rpm}", "{status}"), ("1400.000", "ok"),
                                                           ("1500.000", "ok")), start=1)))


def test_a_bmc_fan_under_its_lower_non_critical_threshold_is_its_warning(tmp_path: Path) -> None:
    """IPMI's lower non-critical threshold sits above the lower-critical one: a fan at 600 RPM under a 700 RPM
    warning line and over the 500 RPM critical one is flagged (status nc), known, with both thresholds, and is not
    failing; at 450 RPM the failing fan's rule says it instead; at 1,200 nothing is flagged."""
    _, answer = explain(SUPERMICRO.format(rpm="600.000", status="nc"), tmp_path)
    warned = [f for f in findings_of(answer) if f["kind"] == "bmc-warning"]
    assert [(f["subjects"], f["confidence"], f["facts"]["lnc"], f["facts"]["lcr"]) for f in warned] == [
        (["bmc/FAN1"], "known", 700.0, 500.0)]
    assert not {"fan-fault", "below-bmc-threshold"} & {f["kind"] for f in findings_of(answer)}
    _, answer = explain(SUPERMICRO.format(rpm="450.000", status="cr"), tmp_path)
    kinds = {f["kind"] for f in findings_of(answer)}
    assert "below-bmc-threshold" in kinds and "bmc-warning" not in kinds
    _, answer = explain(SUPERMICRO.format(rpm="1200.000", status="ok"), tmp_path)
    assert "bmc-warning" not in {f["kind"] for f in findings_of(answer)}


LOOP_ROW = ("{name}             | {rpm:<10} | RPM        | {status:<5} | 0.000     | 0.000     | 100.000   | "
            "1700.000  | 1800.000  | 1900.000\n")
# a real loop of ipmitool sensor on a Supermicro X10SLM-F with quiet fans (FAN4 at 200-300 RPM): in turn
LOOP = [("300.000", "ok", "200.000", "ok"), ("300.000", "ok", "200.000", "ok"), ("300.000", "ok", "0.000", "nr"),
        ("300.000", "ok", "0.000", "nr"), ("1400.000", "ok", "1200.000", "ok"), ("1300.000", "ok", "1000.000", "ok"),
        ("300.000", "ok", "300.000", "ok")]


def loop(rows: list[tuple[str, str, str, str]]) -> str:
    return "$ while true; do ipmitool sensor | grep \"FAN[2,4]\"; sleep 1; done\n" + "".join(
        LOOP_ROW.format(name="FAN2", rpm=a, status=sa) + LOOP_ROW.format(name="FAN4", rpm=b, status=sb)
        for a, sa, b, sb in rows)


def test_a_bmc_fan_failing_in_some_readings_of_a_loop_is_the_quiet_fan_cycle(tmp_path: Path) -> None:
    """IPMI v2.0: a reading at or below a lower threshold asserts its event and deasserts back above it. A loop of
    ipmitool sensor where FAN4 reads 0 with status nr twice and 200-300 RPM otherwise, and FAN2 goes from 300 to
    1,400 RPM after it, is the quiet-fan cycle (likely); it was "FAN2 runs at 300 RPM ... Neither fan read here
    reports a fault", FAN4's nr forgotten for its last reading, and each fan listed once a reading. A fast fan that
    fails in one reading is one failing at times (possible); one reading alone is no cycle."""
    code, answer = explain(loop(LOOP), tmp_path)
    found = findings_of(answer)
    lead = found[0]
    assert code == 0 and (lead["kind"], lead["confidence"], lead["subjects"]) == (
        "bmc-failing-at-times", "likely", ["bmc/FAN4"])
    assert {k: lead["facts"][k] for k in ("failing", "readings", "slowest", "raised_from", "raised_to", "quiet")} == {
        "failing": 2, "readings": 7, "slowest": 200.0, "raised_from": 300.0, "raised_to": 1400.0, "quiet": "yes"}
    assert "no-fault" not in {f["kind"] for f in found}
    fans = answer["fans"]
    assert isinstance(fans, list) and [f["label"] for f in fans] == ["FAN2", "FAN4"]  # one row a fan, its last
    fast = [("5000.000", "ok", "5100.000", "ok"), ("5000.000", "ok", "0.000", "nr"),
            ("5000.000", "ok", "5000.000", "ok")]
    _, answer = explain(loop(fast), tmp_path)
    lead = findings_of(answer)[0]
    assert (lead["kind"], lead["confidence"]) == ("bmc-failing-at-times", "possible") and "quiet" not in lead["facts"]
    _, answer = explain(loop(LOOP[2:3]), tmp_path)
    assert "bmc-failing-at-times" not in {f["kind"] for f in findings_of(answer)}


DELL_ELIST = ("Fan1 RPM         | 30h | ok  |  7.1 | 3600 RPM\nFan2 RPM         | 31h | ok  |  7.1 | 3480 RPM\n"
              "Inlet Temp       | 04h | ok  |  7.1 | 24 degrees C\n"
              "Temp             | 0Eh | ok  |  3.1 | {cpu1} degrees C\n"
              "Temp             | 0Fh | ok  |  3.2 | {cpu2} degrees C\n")


def test_sensors_named_alike_on_two_entities_are_two_sensors() -> None:
    """ipmitool(1) sdr elist prints each sensor's entity (ID.instance); a Dell BMC names each processor's
    temperature "Temp" (entity 3, the processor: IPMI v2.0's Entity ID Codes, ipmitool's entity_id_vals). The two
    are two temperatures, each the CPU's, the hotter the hottest (fails when one is read as a later reading of the
    other: the first socket's 45 °C was lost)."""
    found = machine(read.read(DELL_ELIST.format(cpu1=45, cpu2=43))[0])
    temps = {t.label: (t.celsius, t.role) for t in found.temperatures}
    assert temps["Temp (processor 1)"] == (45.0, "cpu") and temps["Temp (processor 2)"] == (43.0, "cpu"), temps
    assert temps["Inlet Temp"] == (24.0, "inlet")
    alone = machine(read.read(DELL_ELIST.format(cpu1=45, cpu2=43).replace("Temp             | 0Fh", "Tmp2 | 0Fh"))[0])
    assert {t.label for t in alone.temperatures} == {"Inlet Temp", "Temp", "Tmp2"}  # a name alone keeps its name


DELL_SDR = ("Fan1 RPM         | 3600 RPM          | ok\nInlet Temp       | 21 degrees C      | ok\n"
            "Temp             | {cpu1} degrees C      | ok\nTemp             | {cpu2} degrees C      | ok\n")


def test_sensors_named_alike_in_one_plain_listing_are_two_and_a_listing_pasted_again_is_read_again() -> None:
    """The same Dell BMC's plain ``ipmitool sdr`` (no entity column) names both processors' temperatures "Temp": a
    name twice in one listing is two sensors ("Temp" and "Temp #2"); the whole listing pasted twice (run again) is
    each sensor read twice, its earlier value its history (fails when the second CPU's row is taken as a later
    reading of the first's, which lost a hot first socket)."""
    once = machine(read.read(DELL_SDR.format(cpu1=88, cpu2=43))[0])
    assert {t.label: t.celsius for t in once.temperatures} == {"Inlet Temp": 21.0, "Temp": 88.0, "Temp #2": 43.0}
    twice = machine(read.read(DELL_SDR.format(cpu1=80, cpu2=41) + DELL_SDR.format(cpu1=88, cpu2=43))[0])
    assert {t.label: (t.celsius, t.history) for t in twice.temperatures} == {
        "Inlet Temp": (21.0, (21.0, 21.0)), "Temp": (88.0, (80.0, 88.0)), "Temp #2": (43.0, (41.0, 43.0))}
    sensor = ("# ipmitool sensor\nFan1 RPM | 3600.000 | RPM | ok | na | 360.000 | 600.000 | na | na | na\n"
              "Inlet Temp | 22.000 | degrees C | ok | na | -7.000 | 3.000 | 38.000 | 42.000 | na\n")  # cut short
    cut = machine(read.read("# ipmitool sdr\n" + DELL_SDR.format(cpu1=88, cpu2=43) + sensor)[0])
    assert {t.label: t.celsius for t in cut.temperatures} == {"Inlet Temp": 22.0, "Temp": 88.0, "Temp #2": 43.0}


ILO_ROWS = "".join(f"Fan Block {n}     System   {status}     94%\n"
                   for n, status in enumerate(("OK", "OK", "{status}", "OK"), start=1))


@pytest.mark.parametrize(("status", "kind"), [("Degraded", "bmc-warning"), ("Failed", "fan-fault")])
def test_a_fan_hpe_ilo_judges_degraded_or_failed_is_said(status: str, kind: str, tmp_path: Path) -> None:
    """HPE iLO's Fans page (iLO 4 and 5 user guides: each fan's status OK, Degraded or Failed and its speed in % of
    its maximum), its rows copied as text without their header: a Degraded fan is the controller's own warning and
    leads, known; a Failed one is a fault; the OK ones are neither (fails when the rows are refused as no reading,
    or when the controller's word is read and not said)."""
    code, answer = explain(ILO_ROWS.format(status=status), tmp_path)
    assert code == 0
    # --json's fan_facts: every fan as the wing read it, as the text's table shows it (the named readers' "fans" is
    # empty for a paste only the general reader reads: a JSON reader had no fan at all)
    facts = answer["fan_facts"]
    assert isinstance(facts, list) and [(f["label"], f["duty_percent"]) for f in facts] == [
        (f"Fan Block {n} System", 94.0) for n in range(1, 5)]
    assert facts[2]["found"] == ("BMC: degraded" if status == "Degraded" else "FAILED") and facts[2]["status"] == \
        status.lower()
    lead = findings_of(answer)[0]
    assert (lead["kind"], lead["subjects"], lead["confidence"]) == (kind, ["bmc/Fan Block 3 System"], "known")
    assert not [f for f in findings_of(answer) if f["kind"] in ("bmc-warning", "fan-fault")
                and f["subjects"] != ["bmc/Fan Block 3 System"]]
    # with iLO 5's header and its tab-separated cells, an all-OK page is read and nothing is flagged
    page = "Fan\tLocation\tRedundant\tStatus\tSpeed\n" + "".join(f"Fan {n} \tSystem \tYes \t OK \t1{n}% \n"
                                                                 for n in range(1, 4))
    code, answer = explain(page, tmp_path)
    turning = [f for f in findings_of(answer) if f["kind"] == "turning"]
    assert code == 0 and sorted(turning[0]["subjects"]) == [f"bmc/Fan {n} System" for n in (1, 2, 3)]
    assert turning[0]["facts"]["duty"] == 13.0
    assert not {"bmc-warning", "fan-fault"} & {f["kind"] for f in findings_of(answer)}


@pytest.mark.parametrize(("health", "flagged"), [("Warning", True), ("OK", False), ("Critical", False)])
def test_a_fan_whose_redfish_health_is_warning_is_the_bmcs_warning(health: str, flagged: bool,
                                                                   tmp_path: Path) -> None:
    """Redfish's Status.Health (DMTF's Resource schema: OK; Warning, a condition requires attention; Critical): a
    fan the service reports Warning is flagged as the BMC's warning, known; OK is not; Critical is a fault, not a
    warning (fails when the health is read and dropped: the fan was only "at 40 % duty")."""
    fans = [{"Name": f"Fan {n}", "Reading": 40, "ReadingUnits": "Percent",
             "Status": {"Health": health if n == 2 else "OK", "State": "Enabled"}} for n in (1, 2, 3)]
    code, answer = explain(json.dumps({"@odata.type": "#Thermal.v1_4_0.Thermal", "Fans": fans}), tmp_path)
    kinds = {(f["kind"], tuple(f["subjects"])) for f in findings_of(answer)}
    assert code == 0 and (("bmc-warning", ("bmc/Fan 2",)) in kinds) == flagged
    assert (("fan-fault", ("bmc/Fan 2",)) in kinds) == (health == "Critical")
    read_as = answer["read_as"]
    assert isinstance(read_as, list) and not [k for k in read_as if k.endswith(": sensors -j")]  # not sensors' JSON


def test_a_fan_at_its_upper_non_critical_threshold_is_warned_for_speed_not_slowness(tmp_path: Path) -> None:
    """IPMI's threshold events go both ways: a reading at or above the upper non-critical threshold asserts a
    going-high warning, which ipmitool's status column shows as nc like a low one. (The row is a real Supermicro
    backplane fan's ``ipmitool sensor`` line: status nc at 13,300 RPM, upper thresholds 13,300, 13,400, 13,500.)"""
    row = ("BPN-FAN2         | 13300.000  | RPM        | nc    | 500.000   | 400.000   | 300.000   | 13300.000 | "
           "13400.000 | 13500.000 \n")
    found = explained(machine(read.read(row)[0]))[0]
    (warned,) = [f for f in found if f.kind == "bmc-warning"]
    assert (warned.facts.get("side"), warned.facts.get("unc")) == ("upper", 13300.0)
    _, answer = explain(row, tmp_path)
    assert "at or above its upper non-critical threshold of 13,300 RPM" in str(answer["sentence"])
    assert "under its lower non-critical" not in str(answer["sentence"])
    # below the upper threshold with a status of nc, and no lower one crossed: nothing to warn of by thresholds
    slower = row.replace("| 13300.000  | RPM        | nc ", "| 9000.000   | RPM        | ok ")
    assert not [f for f in explained(machine(read.read(slower)[0]))[0] if f.kind == "bmc-warning"]
    # at the threshold with a status of ok, the BMC has flagged nothing: no warning is said of it
    calm = row.replace("| nc ", "| ok ")
    assert not [f for f in explained(machine(read.read(calm)[0]))[0] if f.kind == "bmc-warning"]


IPMI_EXPORTER = ("# HELP ipmi_fan_speed_rpm Fan speed in rotations per minute.\n# TYPE ipmi_fan_speed_rpm gauge\n"
                 'ipmi_fan_speed_rpm{{id="12",name="Fan1A"}} 4560\nipmi_fan_speed_rpm{{id="13",name="Fan1B"}} {b}\n'
                 'ipmi_fan_speed_ratio{{id="58",name="Fan 2 DutyCycle"}} 0.2195\n'
                 'ipmi_fan_speed_state{{id="12",name="Fan1A"}} 0\n'
                 'ipmi_fan_speed_state{{id="13",name="Fan1B"}} {state}\n'
                 'ipmi_fan_speed_state{{id="58",name="Fan 2 DutyCycle"}} 0\n'
                 'ipmi_temperature_celsius{{id="18",name="Inlet Temp"}} 24\n'
                 'ipmi_temperature_state{{id="18",name="Inlet Temp"}} 0\n'
                 'ipmi_temperature_celsius{{id="19",name="Exhaust Temp"}} NaN\n')


def test_ipmi_exporters_metrics_are_the_bmcs_sensors_with_their_state(tmp_path: Path) -> None:
    """ipmi_exporter (its metrics documentation): ipmi_fan_speed_rpm, or _ratio of the maximum, and
    ipmi_temperature_celsius, each beside its state, 0 nominal, 1 warning, 2 critical, NaN N/A (FreeIPMI's State
    column). A fan at 0 RPM whose state is critical is failed by the BMC's own judgement; at 1, a warning, not a
    failure; at 0 (Nominal, ipmitool's ok) a 0 is an empty slot or a fan stopped with no threshold, never left
    unsaid; a ratio is a share in %, NaN no reading. Was refused ("no reading")."""
    facts = machine(read.read(IPMI_EXPORTER.format(b=0, state=2))[0])
    assert [(f.chip, f.label, f.rpm, f.duty_percent, f.status) for f in facts.fans] == [
        ("bmc", "Fan1A", 4560.0, None, "ok"), ("bmc", "Fan1B", 0.0, None, "critical"),
        ("bmc", "Fan 2 DutyCycle", None, 21.95, "ok")]
    assert [(t.label, t.celsius) for t in facts.temperatures] == [("Inlet Temp", 24.0), ("Exhaust Temp", None)]
    code, answer = explain(IPMI_EXPORTER.format(b=0, state=2), tmp_path)
    assert code == 0 and (findings_of(answer)[0]["kind"], findings_of(answer)[0]["subjects"]) == \
        ("fan-fault", ["bmc/Fan1B"])
    code, answer = explain(IPMI_EXPORTER.format(b=1200, state=1), tmp_path)
    kinds = {f["kind"]: f["subjects"] for f in findings_of(answer)}
    assert kinds.get("bmc-warning") == ["bmc/Fan1B"] and "fan-fault" not in kinds
    code, answer = explain(IPMI_EXPORTER.format(b=0, state=0), tmp_path)
    kinds = {f["kind"]: f["subjects"] for f in findings_of(answer)}
    assert kinds.get("bmc-zero-ok") == ["bmc/Fan1B"] and "bmc/Fan1B" not in kinds["turning"]


ILO4_REDFISH = ('HTTP/1.1 200 OK\nContent-type: application/json; charset=utf-8\n\n'
                '{"@odata.type":"#Thermal.1.2.0.Thermal","Fans":[{"CurrentReading":19,"FanName":"Fan 1",'
                '"Status":{"Health":"OK","State":"Enabled"},"Units":"Percent"},{"CurrentReading":7,"FanName":"Fan 2",'
                '"Status":{"Health":"OK","State":"Enabled"},"Units":"Percent"}],"Temperatures":[{"CurrentReading":40,'
                '"Name":"02-CPU 1","Status":{"Health":"OK","State":"Enabled"},"Units":"Celsius"}]}\n')
HPILO = (">>> pprint(ilo.get_embedded_health()['fans'])\n{'Fan 1': {'label': 'Fan 1',\n  'speed': (23, 'Percentage'),"
         "\n  'status': 'OK',\n  'zone': 'System'},\n 'Fan 8': {'label': 'Fan 8',\n  'speed': ('-3000', 'Percentage'),"
         "\n  'status': 'OK',\n  'zone': 'System'}}\n")


def test_an_ilo4s_redfish_thermal_is_read_with_its_own_names() -> None:
    """HPE iLO 4's Redfish Thermal (as curl -i printed it in natankeddem/hush#8): CurrentReading and Units in place
    of Reading and ReadingUnits, Units "Percent" a fan's share and "Celsius" a temperature."""
    found = machine(read.read(ILO4_REDFISH)[0])
    assert [(f.label, f.duty_percent, f.rpm) for f in found.fans] == [("Fan 1", 19.0, None), ("Fan 2", 7.0, None)]
    assert [(t.label, t.celsius) for t in found.temperatures] == [("02-CPU 1", 40.0)]


def test_python_hpilos_health_is_read_and_a_negative_share_is_no_reading() -> None:
    """python-hpilo's get_embedded_health as pprint shows it (its own command's brackets before it on the line):
    each fan's (value, unit) pair and the iLO's status; a DL580 Gen10's -3000 % (python-hpilo#242) is no speed."""
    found = machine(read.read(HPILO)[0])
    assert [(f.label, f.duty_percent, f.invalid, f.raw) for f in found.fans] == [
        ("Fan 1", 23.0, None, None), ("Fan 8", None, "negative", "-3000 %")]
    hits, sentence, _ = explained(found)
    assert [h.subjects for h in hits if h.kind == "speed-not-a-reading"] == [("bmc/Fan 8",)]
    assert "-3000 % (a negative speed)" in sentence


def test_dells_own_log_of_a_fan_under_its_threshold_is_the_bmcs_event_log(tmp_path: Path) -> None:
    """racadm getsel as Dell's iDRAC words its fan events (its Event and Error Message Reference Guide): under the
    lower critical threshold, then within range, twice: the quiet-fan cycle, as from ipmitool's sel list."""
    record = ("Record:      {n}\nDate/Time:   01/10/2023 10:16:5{n}\nSource:      system\nSeverity:    {sev}\n"
              "Description: Fan 3 RPM is {what}\n" + "-" * 79 + "\n")
    log = "".join(record.format(n=n, sev=sev, what=what) for n, (sev, what) in enumerate((
        ("Critical", "less than the lower critical threshold."), ("Ok", "within range."),
        ("Critical", "less than the lower critical threshold."), ("Ok", "within range.")), 1))
    code, answer = explain(log, tmp_path)
    logged = next(f for f in findings_of(answer) if f["kind"] == "bmc-fan-logged")
    assert code == 0 and (logged["facts"]["sensor"], logged["facts"]["falls"], logged["facts"]["recovered"]) == (
        "Fan 3", 2, "yes")
