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
    assert found[0].kind == "turning" and found[0].facts["controller"] == "ec"


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
