"""Chassis fans and temperatures from BMC listings of real servers (tests/fixtures/bmc/, each with its source):
Supermicro, Dell, HP, OpenBMC; the three ipmitool column layouts; empty slots and failed fans."""

from __future__ import annotations

from pathlib import Path

from app.collect.bmc import fans, parse, temperatures

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "bmc"


def listing(name: str) -> str:
    return (FIXTURES / f"{name}.txt").read_text()


def test_empty_fan_slots_are_left_out_with_the_reason() -> None:
    found = fans(parse(listing("supermicro-sdr")))
    assert [(f.label, f.rpm) for f in found if f.dead is None] == [("FAN1", 3400), ("FAN2", 3400), ("FANA", 3500)]
    assert [f.label for f in found if f.dead] == ["FAN3", "FAN4", "FAN5", "FAN6", "FANB"]
    assert all(f.controller == "the BMC" and f.alarm_kind is None for f in found)


def test_a_failed_fan_carries_the_bmcs_fault_flag() -> None:
    """The BMC's critical status (cr) is its fault flag, read as a fact; the fan wing says what it means."""
    found = fans(parse(listing("dell-r320-failed-fans-sdr")))
    assert len(found) == 10
    failed = [(f.label, f.rpm, f.status) for f in found if f.fault]
    assert failed == [("Fan3B", 0, "cr"), ("Fan4B", 0, "cr")] and all(f.dead is None for f in found)
    assert all(f.alarm_kind is None for f in found)  # no reader judges


def test_fans_in_percent_and_the_fans_status_line_is_no_fan() -> None:
    found = fans(parse(listing("hp-dl380g7-sdr")))
    assert [(f.label, f.percent, f.rpm) for f in found][:2] == [("Fan 1", 43.51, None), ("Fan 2", 43.51, None)]
    assert len(found) == 6  # "Fans | 0x00 | ok" is the group's status


def test_the_sensor_layout_and_dual_rotor_fans() -> None:
    found = fans(parse(listing("openbmc-rainier-sensor")))
    assert [(f.label, f.rpm) for f in found] == [("fan0_0", 11900), ("fan0_1", 17700), ("fan1_0", 12000),
                                                 ("fan1_1", 17500)]


def test_inlet_exhaust_and_dells_two_cpus_named_temp() -> None:
    roles = [(role, r.value) for role, r in temperatures(parse(listing("dell-r720xd-temps-elist")))]
    assert roles == [("inlet", 24.0), ("exhaust", 32.0), ("cpu", 40.0), ("cpu", 42.0)]


def test_a_discrete_cpu_sensor_and_an_absent_fan_in_both_layouts() -> None:
    readings = parse(listing("supermicro-x9-sdr-and-sensor"))
    cpu = [r for r in readings if r.name == "CPU Temp"]
    assert len(cpu) == 2 and all(r.value is None for r in cpu)  # 0x08 and "0x8 | discrete": a state, not °C
    found = fans(readings)
    assert [(f.label, f.rpm) for f in found if f.dead is None] == [("FAN 2", 675), ("FAN 3", 675), ("FAN 4", 750),
                                                                   ("FAN A", 975)]
    assert [f.label for f in found if f.dead] == ["FAN 1"]  # in the sdr and in the sensor listing: one slot
    assert [r.value for role, r in temperatures(readings) if r.name == "Peripheral Temp"] == [30.0, 30.0]
    assert not [r for role, r in temperatures(readings) if r.name == "System Temp"]  # 0 °C: no probe there


def test_nothing_is_read_from_text_that_is_not_a_listing() -> None:
    assert parse("ipmitool: command not found\n\nCould not open device at /dev/ipmi0") == []


def test_a_discrete_fan_sensor_is_no_fan_and_an_unread_slot_is_one() -> None:
    """ipmitool prints a discrete sensor's state where a threshold sensor prints its reading ("Fully Redundant",
    "0x01"), and "no reading", "Disabled" or "na" for a sensor it cannot read (ipmitool(1), sdr and sensor): a fan
    group's redundancy is no fan, an unread fan slot is an empty one."""
    text = ("Fan1 RPM         | 30h | ok  |  7.1 | 2160 RPM\n"
            "Fan Redundancy   | 75h | ok  |  7.1 | Fully Redundant\n"
            "Fan2 RPM         | 31h | ns  |  7.1 | No Reading\n"
            "Fan Status       | 76h | ok  |  7.1 | 0x01\n"
            "FAN3             | na         | RPM        | na    | na        | 300.000   | 500.000   | 25300.000 | "
            "25400.000 | 25500.000\n")
    found = fans(parse(text))
    assert [(f.label, f.rpm, f.dead is not None) for f in found] == [("Fan1 RPM", 2160, False),
                                                                     ("Fan2 RPM", None, True), ("FAN3", None, True)]


def test_a_live_bmc_speed_that_is_no_speed_is_said_as_in_a_paste() -> None:
    """The live BMC reader keeps a speed out of any fan's range (a counter's 65535) as the raw value, and the wing
    says it is no speed, as it does of the same line pasted (was dropped: the fan was 'speed unknown', no finding)."""
    from app.fans.adapt import machine
    from app.fans.answer import explained

    text = "FAN1             | 65535 RPM         | ok\nFAN2             | 4200 RPM          | ok\n"
    live = fans(parse(text))
    assert live[0].rpm is None and live[0].raw_rpm == 65535
    found, _, _ = explained(machine([], fans=live))
    assert [(f.kind, f.subjects) for f in found if f.kind == "speed-not-a-reading"] == [
        ("speed-not-a-reading", ("bmc/FAN1",))]


def test_one_name_under_two_entities_is_two_fans_and_a_loop_is_one() -> None:
    """ipmitool sdr elist names each sensor's entity: two "Fan RPM" sensors of two power supplies (entities 10.1 and
    10.2) are two fans, the failed one kept; the same row read again (a loop of the command) is one fan, as its last
    reading shows it."""
    text = ("Fan RPM          | 70h | ok  | 10.1 | 5040 RPM\n"
            "Fan RPM          | 71h | cr  | 10.2 | 0 RPM\n")
    assert [(f.label, f.rpm, f.fault) for f in fans(parse(text))] == [("Fan RPM", 5040, None), ("Fan RPM", 0, True)]
    loop = "FAN1             | 30h | ok  |  7.1 | 2160 RPM\n" + "FAN1             | 30h | ok  |  7.1 | 2280 RPM\n"
    assert [(f.label, f.rpm) for f in fans(parse(loop))] == [("FAN1", 2280)]
