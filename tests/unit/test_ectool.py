"""The Chrome EC's ectool, as util/ectool.cc prints it, and the EC's own fan table as common/thermal.c and common/fan.c
apply it: each sensor the table uses asks for its share between fan_off and fan_max (thermal_fan_percent), every fan
is asked for the highest share, 0 turns the fans off and any other share runs them (fan_percent_to_rpm); a stalled
fan is 0xfffe on older ECs and 0 on newer ones (ec_commands.h)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.fans import ectable
from app.fans.adapt import machine
from app.fans.answer import findings
from app.fans.facts import TempFact
from app.fans.read import ectool
from tests.support.fan_checks import assert_nothing_dangerous_in
from tests.unit.test_fan_readers import explain, findings_of

# a Framework 16's `ectool temps all`, as posted in TamtamHero/fw-fanctrl#128, and its two fans
FRAMEWORK_16 = """> sudo ectool temps all
--sensor name -------- temperature -------- ratio (fan_off and fan_max) --
ambient_f75303@4d     321 K (= 48 C)        N/A (fan_off=0 K, fan_max=0 K)
charger_f75303@4d     323 K (= 50 C)        N/A (fan_off=0 K, fan_max=0 K)
apu_f75303@4d         321 K (= 48 C)           6% (320 K and 335 K)
cpu@4c                321 K (= 48 C)           0% (338 K and 370 K)
gpu_amb_f75303@4d     313 K (= 40 C)        N/A (fan_off=0 K, fan_max=0 K)
gpu_vr_f75303@4d      314 K (= 41 C)           0% (323 K and 347 K)
gpu_vram_f75303@4d    313 K (= 40 C)        N/A (fan_off=0 K, fan_max=0 K)
gpu_amdr23m@40        311 K (= 38 C)           0% (323 K and 353 K)
> sudo ectool pwmgetfanrpm all
Fan 0 RPM: 1843
Fan 1 RPM: 1822
"""


def _temps(**rows: tuple[int, int, int]) -> str:
    """ectool's temps all with a sensor per row: (kelvin, fan_off, fan_max), the ratio column as ectool computes it."""
    lines = ["--sensor name -------- temperature -------- ratio (fan_off and fan_max) --"]
    for name, (k, off, top) in rows.items():
        ratio = 0 if k < off else 100 if k > top else 100 * (k - off) // (top - off)
        lines.append(f"{name:<20}  {k} K (= {k - 273} C)  {ratio:>10}% ({off} K and {top} K)")
    return "\n".join(lines) + "\n"


def test_each_sensor_with_its_place_in_the_table_and_each_fan() -> None:
    found = ectool.read(FRAMEWORK_16)
    temps = {r.label: r for r in found if r.unit == "c"}
    assert len(temps) == 8 and temps["apu_f75303@4d"].value == pytest.approx(47.85)
    assert temps["apu_f75303@4d"].extra == {"fan_off": pytest.approx(46.85), "fan_max": pytest.approx(61.85)}
    assert temps["ambient_f75303@4d"].extra == {}  # N/A: the table does not use it
    assert [(r.attr, r.value) for r in found if r.unit == "rpm"] == [("fan1_input", 1843.0), ("fan2_input", 1822.0)]
    assert {r.chip for r in found} == {"cros_ec"}
    stalled = ectool.read("$ ectool pwmgetfanrpm\nFan 0 stalled (RPM: 65534)\nFan 1 RPM: 3100\n")
    assert [(r.attr, r.value) for r in stalled][:2] == [("fan1_input", 65534.0), ("fan1_fault", 1.0)]
    assert ectool.read("Fan 0 RPM: 1843\n") == []  # the fan line alone could be any tool's: not claimed


def test_the_share_is_the_ecs_arithmetic() -> None:
    """thermal_fan_percent: 0 below fan_off, 100 above fan_max, else 100 * (t - off) / (max - off) in whole steps;
    the ratio ectool prints for each row is the same number."""
    def temp(k: int, off: int, top: int) -> TempFact:
        return TempFact("cros_ec/s", "cros_ec", "s", k - 273.15, k - 273.15, "unknown", fan_off_c=off - 273.15,
                        fan_max_c=top - 273.15)
    for k, off, top in [(321, 320, 335), (368, 303, 369), (330, 320, 340), (319, 320, 335), (400, 320, 335)]:
        expected = 0 if k < off else 100 if k > top else 100 * (k - off) // (top - off)
        assert ectable.share(temp(k, off, top)) == expected
    assert ectable.share(TempFact("x/s", "x", "s", 50.0, 50.0, "unknown")) is None


def test_the_table_names_the_sensor_the_fans_answer_to(tmp_path: Path) -> None:
    code, answer = explain(FRAMEWORK_16, tmp_path)
    table = next(f for f in findings_of(answer) if f["kind"] == "ec-table")
    assert code == 0 and table["subjects"] == ["cros_ec/apu_f75303@4d"] and table["confidence"] == "likely"
    assert (table["facts"]["percent"], table["facts"]["sensors"]) == (6.0, 4)
    assert findings_of(answer)[0]["kind"] == "ec-table"  # the fans turn: what they answer to leads
    assert str(answer["sentence"]).startswith(
        "The embedded controller's fan table asks for 6 %, for apu_f75303@4d (cros_ec) at 48 °C, the most of the 4 "
        "sensors it uses (the table runs the fans from off at 47 °C to full speed at 62 °C): that sensor is what the "
        "fans answer to.")


@pytest.mark.parametrize(("cpu_k", "rpm", "lead", "never"), [
    (330, "0", "ec-table", "stalled"),  # every sensor below fan_off (338 K): the table asks 0 and the fans are off
    (350, "0", "stalled", "at-rest"),  # 37 %: the table asks for cooling; a fan at 0 is not at rest
    (340, "0", None, "at-rest"),  # 6 %: a board's own steps may still hold it off: stalled, possible; never at rest
    (372, "0", "hot-not-cooled", "at-rest"),  # past fan_max and hot: no cooling
])
def test_a_fan_at_0_judged_by_the_table(tmp_path: Path, cpu_k: int, rpm: str, lead: str | None, never: str) -> None:
    text = _temps(**{"cpu@4c": (cpu_k, 338, 370), "apu_f75303@4d": (318, 320, 335)}) + f"Fan 0 RPM: {rpm}\n"
    readings = ectool.read(text)
    facts = machine(readings)
    found = findings(facts)
    kinds = [f.kind for f in found]
    assert never not in kinds, kinds
    if lead is not None:
        assert kinds[0] == lead, kinds
    stall = [f for f in found if f.kind == "stalled"]
    asked = ectable.asking(facts.temperatures, "cros_ec")
    assert asked is not None and facts.fans[0].table_percent == asked[0]
    if asked[0] > 0:
        assert stall and stall[0].confidence == ("likely" if asked[0] >= ectable.CUSTOM_FIRST_STEP else "possible")
        # under a board's first step the words name that step as the other cause, not a tachometer
        assert stall[0].facts["by"] == ("table" if asked[0] >= ectable.CUSTOM_FIRST_STEP else "table-low")
    else:
        assert [f.kind for f in found if f.kind == "at-rest"] == ["at-rest"]
    assert_nothing_dangerous_in(facts, [{"kind": f.kind, "subjects": list(f.subjects), "facts": dict(f.facts)}
                                        for f in found])


def test_a_stalled_fan_is_a_fault_and_never_at_rest(tmp_path: Path) -> None:
    text = _temps(**{"cpu@4c": (330, 338, 370)}) + "Fan 0 stalled (RPM: 65534)\n"
    code, answer = explain(text, tmp_path)
    kinds = [f["kind"] for f in findings_of(answer)]
    assert code == 0 and "fan-fault" in kinds and "at-rest" not in kinds and "turning" not in kinds


def test_a_cros_ec_fan_at_0_with_no_table_read_may_be_stalled(tmp_path: Path) -> None:
    """Newer Chrome ECs report a stalled fan's speed as 0 (ec_commands.h: EC_FAN_SPEED_STALLED_DEPRECATED; the
    cros_ec_hwmon driver flags a fault only for 0xfffe), as they report a fan at rest: with no fan table read, a cool
    machine's 0 is at rest or stalled, possible, never a likely rest. Its sensors keep their bus address in their
    names ("cpu_f75303@4c")."""
    text = ("cros_ec-isa-0000\nAdapter: ISA adapter\nfan1:           0 RPM\nlocal_f75303@4d: +41.0°C\n"
            "cpu_f75303@4c:   +45.0°C\n")
    code, answer = explain(text, tmp_path)
    rest = next(f for f in findings_of(answer) if f["kind"] == "at-rest")
    assert code == 0 and (rest["confidence"], rest["facts"]["stall_reads_zero"]) == ("possible", "yes")
    assert rest["facts"]["source"] == "cros_ec/cpu_f75303@4c"
    assert "or stalled: this controller reads a stalled fan as 0 too" in str(answer["sentence"])
