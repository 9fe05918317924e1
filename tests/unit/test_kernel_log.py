"""The kernel's log of a CPU slowing for heat, read as arch/x86/kernel/cpu/mce/therm_throt.c prints it: "CPU%d: %s
temperature above threshold, cpu clock throttled (total events = %lu)" when it asserts and "CPU%d: %s
temperature/speed normal" when it clears, from dmesg or journalctl."""

from __future__ import annotations

from pathlib import Path

from app.fans.read.kernlog import claims, events
from tests.unit.test_fan_readers import explain, findings_of

DMESG = ("[ 4107.201122] CPU2: Core temperature above threshold, cpu clock throttled (total events = 3)\n"
         "[ 4107.202111] CPU2: Package temperature above threshold, cpu clock throttled (total events = 1)\n"
         "[ 4107.203156] CPU2: Core temperature/speed normal\n")
JOURNAL = ("Oct 29 19:16:03 host kernel: mce: CPU0: Package temperature above threshold, cpu clock throttled\n"
           "Oct 29 19:16:04 host kernel: mce: CPU0: Package temperature/speed normal\n")


def test_each_cpu_and_level_its_count_and_whether_it_cleared() -> None:
    assert [(e.part, e.level, e.count, e.ended) for e in events(DMESG)] == [
        ("CPU2", "Core", 3, True), ("CPU2", "Package", 1, False)]
    assert [(e.part, e.level, e.count, e.ended) for e in events(JOURNAL)] == [("CPU0", "Package", 1, True)]
    assert events("CPU0: Core temperature/speed normal\n") == ()  # cleared with nothing logged before: no event


def test_a_cpu_slowed_for_heat_is_the_cause(tmp_path: Path) -> None:
    """Such a log alone was refused; now the CPU's thermal limit leads, known, with what the log shows cleared."""
    code, answer = explain(DMESG, tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and (lead["kind"], lead["confidence"]) == ("cpu-slowed", "known")
    assert (lead["facts"]["cpus"], lead["facts"]["levels"], lead["facts"]["events"], lead["facts"]["ended"]) == (
        "CPU2", "Core and Package", 3.0, "no")
    _, answer = explain(JOURNAL, tmp_path)
    assert findings_of(answer)[0]["facts"]["ended"] == "yes"
    assert str(answer["sentence"]).startswith(
        "The kernel logged CPU0 slowing its clock for heat (Package temperature above threshold, up to 1 event; it "
        "logged them back to normal after): the CPU reached its thermal limit")


NOUVEAU = ("[ 5234.100000] nouveau 0000:01:00.0: therm: temperature (102 C) hit the 'fanboost' threshold\n"
           "[ 5240.100000] nouveau 0000:01:00.0: therm: temperature (107 C) hit the 'downclock' threshold\n")


def test_nouveau_at_its_heat_thresholds(tmp_path: Path) -> None:
    """nouveau's therm (nvkm_therm_sensor_event) logs "temperature (%i C) hit the '%s' threshold" rising and "went
    below" falling; at fanboost the driver sets the fan to 100 %. Such a log was refused; now the hottest threshold
    reached leads, known, with the fanboost that set the fan to full, and whether the log shows it passed."""
    assert [(e.part, e.level, e.ended, e.celsius, e.source) for e in events(NOUVEAU)] == [
        ("0000:01:00.0", "fanboost", False, 102.0, "nouveau"), ("0000:01:00.0", "downclock", False, 107.0, "nouveau")]
    code, answer = explain(NOUVEAU, tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and (lead["kind"], lead["confidence"]) == ("gpu-threshold", "known")
    assert (lead["facts"]["threshold"], lead["facts"]["celsius"], lead["facts"]["fanboost_c"], lead["facts"]["ended"]) \
        == ("downclock", 107.0, 102.0, "no")
    assert "cpu-slowed" not in {f["kind"] for f in findings_of(answer)}  # a GPU's driver is no CPU's log
    boost = NOUVEAU.splitlines()[0] + "\n[ 5300.0] nouveau 0000:01:00.0: therm: temperature (96 C) went below the " \
        "'fanboost' threshold\n"
    _, answer = explain(boost, tmp_path)
    lead = findings_of(answer)[0]
    assert (lead["facts"]["threshold"], lead["facts"]["ended"]) == ("fanboost", "yes")
    assert "set the card's fan to full speed (100 %)" in str(answer["sentence"])
    assert not events("nouveau 0000:01:00.0: therm: programmed thresholds [ 90(3), 95(3), 105(5), 135(5) ]\n")


# as the kernel logs a board's fan chip whose ports the firmware's ACPI declares (nct6775's probe, ACPICA's warning,
# osl.c's notice): the shapes of public reports, an nct6775 board and an it87 one
CLAIMED = ("[    5.101] nct6775: Found NCT6798D or compatible chip at 0x2e:0x290\n"
           "[    5.102] ACPI Warning: SystemIO range 0x0000000000000295-0x0000000000000296 conflicts with OpRegion "
           "0x0000000000000290-0x0000000000000299 (\\AMW0.SHWM) (20200326/utaddress-204)\n"
           "[    5.103] ACPI: If an ACPI driver is available for this device, you should use it instead of the native "
           "driver\n")
LAX = "[    5.104] ACPI: OSL: Resource conflict: System may be unstable or behave erratically\n"
BUSY = "[    5.105] nct6775: probe of nct6775.656 failed with error -16\n"
SENSORS = ("k10temp-pci-00c3\nAdapter: PCI adapter\nTctl:         +45.6°C\n\n")
READ = ("nct6798-isa-0290\nAdapter: ISA adapter\nfan1:        0 RPM  (min =    0 RPM)\n"
        "fan2:     1054 RPM  (min =    0 RPM)\nSYSTIN:        +33.0°C  sensor = thermistor\n")
IT87 = ("[    2.617210] ACPI Warning: SystemIO range 0x0000000000000B00-0x0000000000000B08 conflicts with OpRegion "
        "0x0000000000000B00-0x0000000000000B2F (\\_SB.PCI0.SBRG.ASOC.SMRG) (20240827/utaddress-204)\n"
        "[    2.617216] ACPI: OSL: Resource conflict; ACPI support missing from driver?\n"
        "[    2.617293] it87: Found IT8721F chip at 0x290, revision 3\n")
IT87_HWM = ("[    2.617314] ACPI Warning: SystemIO range 0x0000000000000295-0x0000000000000296 conflicts with OpRegion "
            "0x0000000000000290-0x00000000000002AF (\\_SB.PCI0.SBRG.SIOR.ECRE) (20240827/utaddress-204)\n"
            "[    2.617318] ACPI: OSL: Resource conflict; ACPI support missing from driver?\n")


def test_a_fan_chip_the_firmware_claims_is_why_its_fans_are_unread(tmp_path: Path) -> None:
    """drivers/acpi/osl.c: a native driver's ports that an ACPI OpRegion declares are refused busy under
    acpi_enforce_resources=strict, the default (a kernel developer's report: "And so the driver is not loaded"):
    with no board fan read, that is why, and the fans run as the BIOS set them up. Refused as the default does:
    likely; its probe failing -16 in the log: known."""
    code, answer = explain(CLAIMED + "$ sensors\n" + SENSORS, tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and (lead["kind"], lead["confidence"]) == ("chip-claimed", "likely")
    assert lead["facts"] == {"driver": "nct6775", "chip": "NCT6798D", "address": "0x290", "region": "\\AMW0.SHWM",
                             "probe": "not shown"}
    assert "run as the BIOS set them up" in str(answer["sentence"])
    code, answer = explain(CLAIMED + BUSY, tmp_path)  # the log alone is read, not refused
    lead = findings_of(answer)[0]
    assert code == 0 and (lead["kind"], lead["confidence"], lead["facts"]["probe"]) == ("chip-claimed", "known",
                                                                                         "busy")


def test_a_claimed_chip_let_in_or_read_is_not_said_unread(tmp_path: Path) -> None:
    """Under lax osl.c lets the driver in with its notice; where the board chip's fans are read, its driver reads
    them whatever the log says; a conflict over other ports (an SMBus controller's at 0xb00) is not the fan
    chip's, whose own conflict (0x295, inside its ports from 0x290) is."""
    kinds = {f["kind"] for f in findings_of(explain(CLAIMED + LAX + "$ sensors\n" + SENSORS, tmp_path)[1])}
    assert "chip-claimed" not in kinds
    kinds = {f["kind"] for f in findings_of(explain(CLAIMED + "$ sensors\n" + READ, tmp_path)[1])}
    assert "chip-claimed" not in kinds and "turning" in kinds
    # the board's fans read through its firmware (asus_ec_sensors, as on the ASUS boards whose ACPI claims the chip)
    wmi = "asusec-isa-000a\nAdapter: ISA adapter\nCPU_Opt:        0 RPM\nCPU:        1054 RPM\nCPU:        +45.0°C\n"
    kinds = {f["kind"] for f in findings_of(explain(CLAIMED + "$ sensors\n" + wmi, tmp_path)[1])}
    assert "chip-claimed" not in kinds
    assert claims(IT87) == ()
    assert [(c.driver, c.chip, c.address, c.region, c.taken) for c in claims(IT87 + IT87_HWM)] == [
        ("it87", "IT8721F", "0x290", "\\_SB.PCI0.SBRG.SIOR.ECRE", None)]


def test_a_thermal_zone_at_its_critical_trip_is_the_shutdown_said(tmp_path: Path) -> None:
    """thermal_core.c's own line for a zone at its critical trip (older kernels with the temperature, newer ones with
    the zone's type): the kernel shut the machine down for it (known), said with what was logged."""
    old = ("[ 5123.456789] thermal thermal_zone2: critical temperature reached (105 C), shutting down\n"
           "[ 5123.457001] reboot: HARDWARE PROTECTION shutdown (Temperature too high)\n")
    code, answer = explain(old, tmp_path)
    (found,) = [f for f in findings_of(answer) if f["kind"] == "zone-critical"]
    assert code == 0 and found["confidence"] == "known" and (found["facts"]["zone"], found["facts"]["celsius"]) == (
        "thermal_zone2", 105.0)
    assert str(answer["sentence"]).startswith("The kernel shut the machine down because thermal_zone2 reached its "
                                              "critical trip at 105 °C")
    newer = "kernel: thermal thermal_zone0: acpitz: critical temperature reached\n"
    code, answer = explain(newer, tmp_path)
    (found,) = [f for f in findings_of(answer) if f["kind"] == "zone-critical"]
    assert (found["facts"]["zone"], found["facts"]["type"]) == ("thermal_zone0", "acpitz")
    assert "celsius" not in found["facts"]
