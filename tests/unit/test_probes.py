"""What a probe for sensor chips answered (sensors-detect's summary, sensors' "No sensors found!"), pasted where no
fan is read: before, refused as no capture; now the chips it found and what among them reads the fans. The texts are
sensors-detect's and sensors' own output as forums quote it."""

from __future__ import annotations

from pathlib import Path

from app.fans.read.probes import probes
from tests.unit.test_fan_readers import explain, findings_of

SUMMARY = ("Now follows a summary of the probes I have just done.\nJust press ENTER to continue: \n\n"
           "Driver `nct6775':\n  * ISA bus, address 0x290\n    Chip `Nuvoton NCT6798D Super IO Sensors' (confidence: 9)"
           "\n\nDriver `coretemp':\n  * Chip `Intel digital thermal sensor' (confidence: 9)\n\n"
           "To load everything that is needed, add this to /etc/modules:\n")
UNWRITTEN = ("Driver `to-be-written':\n  * ISA bus, address 0xa20\n    Chip `Nuvoton NCT6687D Super IO Sensors' "
             "(confidence: 9)\n\nNote: there is no driver for Nuvoton NCT6687D Super IO Sensors yet.\n")
NONE = ("Probing for `SPD EEPROM'...                                 Yes\n    (confidence 8, not a hardware monitoring "
        "chip)\n\nSorry, no sensors were detected.\nThis is relatively common on laptops, where thermal management is\n"
        "handled by ACPI rather than the OS.\n")
NO_SENSORS = ("$ sensors\nNo sensors found!\nMake sure you loaded all the kernel drivers you need.\n"
              "Try sensors-detect to find out which these are.\n")


def test_the_summary_is_each_driver_with_its_chips() -> None:
    assert [(p.tool, p.found) for p in probes(SUMMARY + UNWRITTEN)] == [("sensors-detect", (
        ("nct6775", "Nuvoton NCT6798D Super IO Sensors"), ("coretemp", "Intel digital thermal sensor"),
        ("to-be-written", "Nuvoton NCT6687D Super IO Sensors")))]
    assert [(p.tool, p.found) for p in probes(NONE)] == [("sensors-detect", ())]
    assert [(p.tool, p.found) for p in probes(NO_SENSORS)] == [("sensors", ())]


def test_a_probe_alone_is_answered_with_what_reads_the_fans(tmp_path: Path) -> None:
    code, answer = explain(SUMMARY, tmp_path)
    (probed,) = [f for f in findings_of(answer) if f["kind"] == "chips-probed"]
    assert code == 0 and probed["facts"]["fan_chips"] == "nct6775" and probed["confidence"] == "known"
    assert "nct6775 reads and drives the fans" in str(answer["sentence"])
    code, answer = explain(UNWRITTEN, tmp_path)
    assert code == 0 and 'no driver reads Nuvoton NCT6687D Super IO Sensors yet ("to-be-written")' in \
        str(answer["sentence"])
    for text, said in ((NONE, "sensors-detect found no hardware-monitoring chip"),
                       (NO_SENSORS, "sensors found no sensor chip")):
        code, answer = explain(text, tmp_path)
        assert code == 0 and str(answer["sentence"]).startswith(said)


def test_beside_a_fan_read_the_probe_says_nothing(tmp_path: Path) -> None:
    listing = ("$ sensors\nnct6798-isa-0290\nAdapter: ISA adapter\nfan2:        1100 RPM  (min =    0 RPM)\n"
               "CPUTIN:       +38.0°C  (high = +80.0°C, hyst = +75.0°C)  sensor = thermistor\n\n"
               "$ sudo sensors-detect\n")
    code, answer = explain(listing + SUMMARY, tmp_path)
    assert code == 0 and not [f for f in findings_of(answer) if f["kind"] == "chips-probed"]
