"""A Mac's SMC as macOS tools print it: smcFanControl's `smc -f` (a 2018 Mac mini's, smcFanControl#89) and
osx-cpu-temp's (a Mid 2011 Mac mini's, osx-cpu-temp#19: the fan read 0 RPM while it turned at about 1,800, a
reading the tool got wrong). Both were refused."""

from __future__ import annotations

from app.fans import adapt
from app.fans.answer import explained
from app.fans.read import read

SMC = """Output of 'smc -f':

Total fans in system: 1

Fan #0:
    Actual speed : 1690
    Minimum speed: 1700
    Maximum speed: 4400
    Safe speed   : 0
    Target speed : 1700
    Mode         : auto
"""
OSX = """osx-cpu-temp $ ./osx-cpu-temp -F
128.5°F
osx-cpu-temp $ ./osx-cpu-temp -f
Num fans: 1
Fan 0 - Exhaust   at 0 RPM (0%)
"""


def test_smc_fans_carry_their_range_target_and_mode() -> None:
    machine = adapt.machine(read(SMC)[0])
    (fan,) = machine.fans
    assert (fan.chip, fan.rpm, fan.min_rpm, fan.max_rpm, fan.target_rpm, fan.pwm_enable) == \
        ("applesmc", 1690.0, 1700.0, 4400.0, 1700.0, 2)
    found, _, _ = explained(machine)
    # the SMC asks its own minimum (Target speed = Minimum speed, in auto): the fan idles at its floor
    assert (found[0].kind, found[0].facts["floor_rpm"], found[0].facts["controller"]) == ("firmware-floor", 1700, "ec")
    assert any(f.kind == "turning" and f.facts["controller"] == "ec" for f in found)
    raised = adapt.machine(read(SMC.replace("Actual speed : 1690", "Actual speed : 2600"))[0])
    assert "firmware-floor" not in {f.kind for f in explained(raised)[0]}  # above its floor: the SMC raised it


def test_osx_cpu_temps_zero_is_never_said_as_a_known_rest() -> None:
    readings, kind = read(OSX)
    assert kind is not None and kind.startswith("a Mac's SMC")
    machine = adapt.machine(readings)
    (fan,) = machine.fans
    assert (fan.label, fan.rpm, fan.duty_percent) == ("Exhaust", 0.0, None)  # its "(0%)" is of a range: no duty
    assert [t.celsius for t in machine.temperatures] == [53.6]  # 128.5 °F
    found, _, _ = explained(machine)
    assert not any(f.kind in ("at-rest", "no-fault") and f.confidence == "known" for f in found)
    assert found[0].kind != "turning"


SENSORS = ("applesmc-isa-0300\nAdapter: ISA adapter\nLeft side  : {left} RPM  (min = 2000 RPM, max = 6200 RPM)\n"
           "Right side : 1999 RPM  (min = 2000 RPM, max = 6200 RPM)\nTC0P:         +56.5°C  \n")


def test_a_macs_fans_at_the_smcs_minimum_idle_at_their_floor() -> None:
    """applesmc's fanN_min is the SMC's minimum speed (the F<n>Mn key), not an alarm limit as hwmon's ABI has it
    elsewhere: two fans at it idle there, nothing making them faster; one raised past it is not at its floor."""
    found, sentence, _ = explained(adapt.machine(read(SENSORS.format(left=2001))[0]))
    assert found[0].kind == "firmware-floor" and found[0].subjects == ("applesmc/Left side", "applesmc/Right side")
    assert sentence.startswith("The Left side (applesmc) and Right side (applesmc) run at the minimum speeds their "
                               "controller keeps them at (the first at 2,001 RPM, its floor 2,000 RPM): they idle at "
                               "their floor, and nothing is making them spin faster.")
    found, _, _ = explained(adapt.machine(read(SENSORS.format(left=3400))[0]))
    assert [f.subjects for f in found if f.kind == "firmware-floor"] == [("applesmc/Right side",)]
    nct = adapt.machine(read(SENSORS.format(left=2001).replace("applesmc-isa-0300", "nct6775-isa-0290"))[0])
    assert "firmware-floor" not in {f.kind for f in explained(nct)[0]}  # a Super-I/O's fanN_min is an alarm limit


def test_a_fan_at_its_floor_beside_a_hot_part_is_not_said_to_idle_there() -> None:
    """At the SMC's minimum while the CPU is at 95 °C the SMC is not raising the fan: "idles at its floor, nothing
    making it faster" would call a fan fine beside a hot part (fails when the floor ignores the heat)."""
    hot = SENSORS.format(left=2001).replace("TC0P:         +56.5°C", "TC0P:         +95.0°C")
    found, sentence, _ = explained(adapt.machine(read(hot)[0]))
    assert "firmware-floor" not in {f.kind for f in found} and "idle at their floor" not in sentence


def test_a_cards_fan_idling_at_its_duty_floor_beside_a_hot_junction_is_the_slow_fans_case() -> None:
    """The same for a duty floor (amdgpu's OD_RANGE minimum) under the card's own control: at its floor while the
    junction is at 50 °C it idles there; at 95 °C it is a slow fan on a hot part, not a floor."""
    from app.fans.facts import FanFact, Machine, TempFact

    def kinds(celsius: float) -> list[str]:
        fan = FanFact(key="amdgpu/fan1", chip="amdgpu", label="fan1", rpm=1000.0, duty_percent=20.0,
                      floor_percent=20.0, controller="firmware")
        junction = TempFact(key="amdgpu/temp2", chip="amdgpu", label="junction", celsius=celsius, raw=celsius,
                            role="gpu")
        return [f.kind for f in explained(Machine(fans=(fan,), temperatures=(junction,)))[0]]

    assert kinds(50.0)[0] == "firmware-floor"
    assert kinds(95.0)[0] == "slow-while-hot" and "firmware-floor" not in kinds(95.0)


def test_an_smc_asking_for_no_speed_is_not_a_stall() -> None:
    """An Apple silicon MacBook Pro's smc -f as posted to smcFanControl#137 (its builds print "Current speed"): the
    SMC's own target is 0, so its minimum (1,199) is the least it runs the fan at once it asks, not a floor under a
    fan it asks to stop; with a target above 0 the same 0 RPM is a fan that does not turn as asked."""
    m1 = ("Total fans in system: 1\n\nFan #0:\n    Current speed : 0\n    Minimum speed: 1199\n"
          "    Maximum speed: 7199\n    Safe speed   : 0\n    Target speed : 0\n    Mode         : auto\n")
    machine = adapt.machine(read(m1)[0])
    (fan,) = machine.fans
    assert (fan.rpm, fan.min_rpm, fan.target_rpm) == (0.0, 1199.0, 0.0)
    assert "target-not-met" not in {f.kind for f in explained(machine)[0]}
    asked = adapt.machine(read(m1.replace("Target speed : 0", "Target speed : 1199"))[0])
    assert "target-not-met" in {f.kind for f in explained(asked)[0]}
