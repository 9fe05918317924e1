"""The BSDs' sensors as sysctl prints them (OpenBSD's sysctl(8) hw.sensors, FreeBSD's acpi_ibm(4), coretemp(4),
acpi_thermal(4) and asmc(4) nodes): read, not refused, and judged by what each driver is. Before this reader an
OpenBSD listing was refused ("no reading found"), and FreeBSD's ThinkPad fan was not read at all (only its
temperatures: "no fan is read here")."""

from __future__ import annotations

from app.fans import adapt
from app.fans.answer import explained
from app.fans.read import read

OPENBSD = """$ sysctl hw.sensors
hw.sensors.cpu0.temp0=88.00 degC
hw.sensors.acpitz0.temp0=87.00 degC (zone temperature)
hw.sensors.acpibat0.watthour3=19.28 Wh (remaining capacity), OK
hw.sensors.acpibat0.raw0=0 (battery idle), OK
hw.sensors.acpiac0.indicator0=On (power supply)
hw.sensors.acpithinkpad0.fan0=0 RPM
hw.sensors.pchtemp0.temp0=61.00 degC
hw.sensors.it0.fan1=1985 RPM
hw.sensors.ipmi0.fan2=0 RPM (FAN2), CRITICAL
hw.sensors.ipmi0.temp1=invalid (System Temp)
"""

FREEBSD = """$ sysctl dev.cpu | grep temperature
dev.cpu.1.temperature: 71.0C
dev.cpu.0.temperature: 73.0C
$ sysctl hw.acpi.thermal.tz0.temperature
hw.acpi.thermal.tz0.temperature: 69.1C
$ sysctl dev.acpi_ibm.0
dev.acpi_ibm.0.fan_level: 0
dev.acpi_ibm.0.fan_speed: 0
dev.acpi_ibm.0.fan: 1
dev.acpi_ibm.0.thermal: 73 44 -1 34 29 -1 33 -1
"""


def test_openbsds_sensors_are_read_by_driver() -> None:
    readings, kind = read(OPENBSD)
    assert kind is not None and "sysctl" in kind
    by = {(r.chip, r.attr): r for r in readings}
    assert by[("acpithinkpad0", "fan0_input")].value == 0.0 and by[("it0", "fan1_input")].value == 1985.0
    assert by[("cpu0", "temp0_input")].value == 88.0 and by[("ipmi0", "temp1_input")].value is None  # "invalid"
    assert not any(r.chip in ("acpibat0", "acpiac0") for r in readings)  # energy and indicators are no readings
    machine = adapt.machine(readings)
    fans = {f.key: f for f in machine.fans}
    assert fans["ipmi0/fan2"].fault is True  # the BMC's CRITICAL beside a fan at 0
    found, _, _ = explained(machine)
    kinds = {(f.kind, s) for f in found for s in f.subjects}
    assert ("hot-not-cooled", "acpithinkpad0/fan0") in kinds  # the ThinkPad's EC fan at 0 beside a CPU at 88 °C
    assert not any(k in ("at-rest", "no-fault") for k, _ in kinds)


def test_freebsds_thinkpad_fan_is_the_ec_fan_it_is() -> None:
    readings, _ = read(FREEBSD)
    machine = adapt.machine(readings)
    (fan,) = machine.fans
    assert (fan.key, fan.rpm, fan.pwm_enable, fan.duty_percent) == ("thinkpad/fan1", 0.0, 2, None)  # EC auto mode
    celsius = {t.key: t.celsius for t in machine.temperatures}
    assert celsius["cpu/CPU 0"] == 73.0 and celsius["thinkpad/temp2"] == 44.0 and "thinkpad/temp3" not in celsius
    found, _, _ = explained(machine)
    lead = found[0]  # 0 RPM at 73 °C under the EC's automatic mode: warmer than an EC rests a fan, never "at rest"
    assert (lead.kind, lead.subjects[0]) == ("warm-not-turning", "thinkpad/fan1")
    assert not {"at-rest", "no-fault"} & {f.kind for f in found}
