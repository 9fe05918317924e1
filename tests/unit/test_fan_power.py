"""What a fan controller says of its connectors. The Corsair Commander Pro's driver lists only the connectors its
device detects a fan on, labelled by the kind found (corsair-cpro.c, get_fan_cnct: "fan1 3pin", "fan4 4pin"), and
reads the 12 V of the SATA power connector its fans run from (corsair-cpro.rst: in0_input), while the device itself
is a USB device. A detected fan at 0 is a fan there that does not turn, never an empty connector; every fan at 0
with that rail at 0 V is fans with no power. (The capture is a real Commander Pro's ``sensors`` on Arch Linux, fans
and 12 V all reading 0 while its temperature probes read.)"""

from __future__ import annotations

from pathlib import Path

from app.collect import liquidctl
from app.core.fan import Fan
from app.fans import read
from app.fans.adapt import machine
from app.fans.answer import explained
from tests.support.fan_checks import assert_nothing_dangerous
from tests.unit.test_fan_readers import explain

CPRO = """corsaircpro-hid-3-a
Adapter: HID adapter
in0:           0.00 V
in1:              N/A
in2:           0.00 V
fan1 3pin:      0 RPM
fan2 3pin:      0 RPM
fan3 3pin:      0 RPM
fan4 4pin:      0 RPM
fan5 4pin:      0 RPM
temp1:            N/A
temp2:        +26.6°C
temp3:        +27.2°C
temp4:        +29.4°C

zenpower-pci-00c3
Adapter: PCI adapter
SVI2_Core:     1.40 V
Tdie:         +44.5°C  (high = +95.0°C)
Tctl:         +44.5°C
"""
FANS = tuple(f"corsaircpro/fan{n} {'3pin' if n <= 3 else '4pin'}" for n in range(1, 6))


def _kinds(text: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    found = explained(machine(read.read(text)[0]))[0]
    return {f.kind: (f.confidence, f.subjects) for f in found}


def test_detected_fans_at_0_with_their_12_v_rail_at_0_v_have_no_power(tmp_path: Path) -> None:
    found = explained(machine(read.read(CPRO)[0]))[0]
    assert (found[0].kind, found[0].confidence, found[0].subjects) == ("no-power", "likely", FANS)
    assert dict(found[0].facts) == {"volts": 0.0, "nominal": 12.0, "detected": 5}
    kinds = {f.kind for f in found}
    assert not kinds & {"headers-read-zero", "empty-slots", "no-fault", "at-rest"}  # never "not connected"
    code, answer = explain(CPRO, tmp_path)
    assert code == 0
    assert_nothing_dangerous(CPRO, answer)


def test_golden_sentence_of_fans_with_no_power(tmp_path: Path) -> None:
    _, answer = explain(CPRO, tmp_path)
    assert str(answer["sentence"]).startswith(
        "The fan1 3pin (corsaircpro), fan2 3pin (corsaircpro) and 3 more read 0 RPM while the 12 V rail their "
        "controller powers them from reads 0.00 V: with no 12 V a fan has no power, so most likely the "
        "controller's power lead (a SATA power cable from the supply) is unplugged or dead; the controller itself "
        "runs from USB, and so still reads its temperatures.")


def test_with_the_rail_powered_a_detected_fan_at_0_is_there_and_not_turning() -> None:
    powered = CPRO.replace("in0:           0.00 V", "in0:          12.10 V")
    kinds = _kinds(powered)
    assert kinds["detected-still"] == ("likely", FANS) and "no-power" not in kinds
    assert "headers-read-zero" not in kinds and "empty-slots" not in kinds
    # beside two fans that turn, the three at 0 are still fans there: no "no fault" for the turning two
    turning = powered.replace("fan4 4pin:      0 RPM", "fan4 4pin:   1210 RPM") \
        .replace("fan5 4pin:      0 RPM", "fan5 4pin:    830 RPM")
    kinds = _kinds(turning)
    assert kinds["detected-still"] == ("likely", FANS[:3])
    assert "no-fault" not in kinds and "empty-slots" not in kinds and "no-power" not in kinds


def test_a_rail_at_0_v_with_a_fan_turning_is_not_no_power() -> None:
    """A fan turning on the same controller proves power reaches its fans: the 0 V is then not the cause."""
    kinds = _kinds(CPRO.replace("fan4 4pin:      0 RPM", "fan4 4pin:   1210 RPM"))
    assert "no-power" not in kinds and kinds["detected-still"][1] == (*FANS[:3], FANS[4])


def test_a_connector_its_early_driver_labels_nc_is_empty() -> None:
    text = CPRO.replace("in0:           0.00 V", "in0:          12.10 V").replace("fan3 3pin", "fan3 nc") \
        .replace("fan4 4pin:      0 RPM", "fan4 4pin:   1210 RPM")
    kinds = _kinds(text)
    assert kinds["empty-slots"][1] == ("corsaircpro/fan3 nc",)
    assert "corsaircpro/fan3 nc" not in kinds["detected-still"][1]


def test_live_a_detected_fan_at_0_is_there_and_not_turning() -> None:
    """The live hwmon reader's fan keeps its driver's label: the same fact, the same finding."""
    fans = (Fan("hwmon:corsaircpro/fan1", "corsaircpro", 1, "fan1 4pin", rpm=1190),
            Fan("hwmon:corsaircpro/fan2", "corsaircpro", 2, "fan2 4pin", rpm=0))
    found = explained(machine((), fans))[0]
    assert {f.kind: f.subjects for f in found}["detected-still"] == ("corsaircpro/fan2 4pin",)


# liquidctl's Commander Core guide: its initialization and status as the guide prints them, with fan port 2's speed
# made 0 (the guide's own reads 791 rpm): a pasted pair of commands, the initialization before the status
CORE = """# liquidctl initialize
Corsair Commander Core (experimental)
├── Firmware version           2.6.201
├── AIO port connected             Yes
├── Fan port 1 connected           Yes
├── Fan port 2 connected           Yes
├── Fan port 3 connected            No
├── Fan port 4 connected            No
├── Fan port 5 connected            No
├── Fan port 6 connected            No
├── Water temperature sensor       Yes
└── Temperature sensor 1            No
# liquidctl status
Corsair Commander Core (experimental)
├── Pump speed            2356  rpm
├── Fan speed 1            810  rpm
├── Fan speed 2              0  rpm
├── Fan speed 3              0  rpm
├── Fan speed 4              0  rpm
├── Fan speed 5              0  rpm
├── Fan speed 6              0  rpm
└── Water temperature     35.8  °C
"""


def _liquidctl(text: str, tmp_path: Path) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    code, answer = explain(text, tmp_path)
    assert code == 0
    found = answer["findings"]
    assert isinstance(found, list)
    facts = answer["fan_facts"]
    assert isinstance(facts, list)
    return {f["label"]: f["found"] for f in facts}, {f["kind"]: tuple(f["subjects"]) for f in found}


def test_a_connector_liquidctls_initialization_says_has_a_fan_is_not_empty(tmp_path: Path) -> None:
    """liquidctl's Commander Core guide: initialization lists what the device detects on each fan port. A port with
    a fan at 0 rpm is a fan there that does not turn; one with nothing detected is empty, known, not guessed."""
    found, kinds = _liquidctl(CORE, tmp_path)
    assert found["Fan 2"] == "there, not turning" and found["Fan 3"] == "empty" and found["Fan 1"] == "running"
    assert kinds["detected-still"] == ("Corsair Commander Core/Fan 2",)
    assert "Corsair Commander Core/Fan 2" not in kinds["empty-slots"]
    # the status alone says nothing of the connectors: fan 2 is then one of the channels most likely empty
    status = CORE[CORE.index("# liquidctl status"):]
    found, kinds = _liquidctl(status, tmp_path)
    assert found["Fan 2"] == "empty" and "detected-still" not in kinds


def test_a_commander_pro_whose_12_v_rail_reads_0_v_powers_no_fan(tmp_path: Path) -> None:
    """liquidctl's Commander Pro guide: its initialization says each fan's control mode (N/A: none), its status the
    rails it reads. Every detected fan at 0 with the +12V rail at 0.02 V: no power reaches them (a built capture in
    the guide's format)."""
    text = ("Corsair Commander Pro\n├── Fan 1 control mode               PWM\n├── Fan 2 control mode               DC\n"
            "└── Fan 3 control mode               N/A\n"
            "Corsair Commander Pro\n├── Temperature 1        26.9  °C\n├── Fan 1 speed             0  rpm\n"
            "├── Fan 2 speed             0  rpm\n├── Fan 3 speed             0  rpm\n├── +12V rail            0.02  V\n"
            "└── +5V rail             4.98  V\n")
    found, kinds = _liquidctl(text, tmp_path)
    assert kinds["no-power"] == ("Corsair Commander Pro/Fan 1", "Corsair Commander Pro/Fan 2")
    assert found["Fan 3"] != "NO POWER?" and "headers-read-zero" not in kinds
    # the live collector reads the same: what is detected, and the rail, on each fan
    fans = {f.label: f for f in liquidctl.reading(liquidctl.parse(text)).fans}
    assert (fans["Fan 1"].detected, fans["Fan 3"].detected, fans["Fan 1"].supply_v) == (True, False, 0.02)
    assert fans["Fan 3"].dead is not None and fans["Fan 1"].dead is None


def test_a_detected_fan_set_to_0_percent_is_stopped_by_that_setting() -> None:
    """corsair-cpro.rst: pwm[1-6] "can only be read if pwm was set directly": a duty read there was set by a person or
    a program, so a detected fan at 0 % and 0 RPM is stopped by that setting (the fixed-duty rule), not a fan that
    fails to turn; one at 0 RPM with no duty read stays "there, not turning"."""
    listing = ("/sys/class/hwmon/hwmon5/name:corsaircpro\n/sys/class/hwmon/hwmon5/in0_input:12100\n"
               "/sys/class/hwmon/hwmon5/fan1_input:1190\n/sys/class/hwmon/hwmon5/fan1_label:fan1 4pin\n"
               "/sys/class/hwmon/hwmon5/fan2_input:0\n/sys/class/hwmon/hwmon5/fan2_label:fan2 4pin\n"
               "/sys/class/hwmon/hwmon5/fan3_input:0\n/sys/class/hwmon/hwmon5/fan3_label:fan3 3pin\n"
               "/sys/class/hwmon/hwmon5/pwm2:0\n")
    facts = machine(read.read(listing)[0])
    assert {f.label: f.controller for f in facts.fans}["fan2 4pin"] == "manual"
    kinds = {f.kind: f.subjects for f in explained(facts)[0]}
    assert kinds["fixed-duty"] == ("corsaircpro/fan2",)
    assert kinds["detected-still"] == ("corsaircpro/fan3",)
