"""An NVIDIA Jetson's tegrastats lines (as a Jetson Nano in a climate chamber printed them, jetson_stats#35) and its
pwm-fan's files: read, not refused; the PMIC's fixed 100 °C (its zone reports 100 °C whatever the temperature, as
NVIDIA answered it: balena-jetson#142) and a powered-off GPU's -256 °C (jetson_stats#350) are no readings."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.fans import adapt
from app.fans.answer import explained
from app.fans.read import read
from tests.unit.test_fan_readers import explain, findings_of

LINE = ("RAM 417/3964MB (lfb 727x4MB) SWAP 0/1982MB (cached 0MB) IRAM 0/252kB(lfb 252kB) CPU [0%@1428,0%@1428,"
        "0%@1428,0%@1428] EMC_FREQ 0%@1600 GR3D_FREQ 0%@921 APE 25 PLL@{pll}C CPU@{cpu}C PMIC@100C GPU@{gpu}C "
        "AO@24.5C thermal@18.75C POM_5V_IN 1828/1886 POM_5V_GPU 121/121 POM_5V_CPU 243/297")
FAN = "$ cat /sys/devices/pwm-fan/target_pwm\n{asked}\n$ cat /sys/devices/pwm-fan/cur_pwm\n{driven}\n"


def test_each_tegrastats_line_is_a_snapshot_and_placeholders_are_no_readings() -> None:
    text = LINE.format(pll="15.5", cpu="20", gpu="17.5") + "\n" + LINE.format(pll="15", cpu="19.5", gpu="-256") + "\n"
    readings, kind = read(text)
    assert kind is not None and "tegrastats" in kind
    cpu = [(r.value, r.snapshot) for r in readings if r.label == "CPU"]
    assert cpu == [(20.0, 0), (19.5, 1)]
    assert {r.value for r in readings if r.label == "PMIC"} == {None}
    assert [r.value for r in readings if r.label == "GPU"] == [17.5, None]
    assert not any(r.label in ("CPU [0%", "EMC_FREQ", "GR3D_FREQ") for r in readings)  # loads and clocks: no readings


def test_a_jetson_fan_asked_for_nothing_beside_a_hot_soc_is_said() -> None:
    hot = LINE.format(pll="80", cpu="88", gpu="86.5") + "\n" + FAN.format(asked=0, driven=0)
    machine = adapt.machine(read(hot)[0])
    (fan,) = machine.fans
    assert (fan.key, fan.duty_percent, fan.target_percent) == ("pwm-fan/fan1", 0.0, 0.0)
    found, sentence, _ = explained(machine)
    assert found[0].kind == "hot-not-cooled" and "pwm-fan/fan1" in found[0].subjects
    assert sentence.startswith("The pwm-fan fan1 is asked for 0 % (its speed is not read) while CPU (tegra) is at "
                               "88 °C, hotter than any controller lets a fan rest: nothing is driving it")
    assert not {"at-rest", "no-fault"} & {f.kind for f in found}


# jetson_clocks --show as NVIDIA's script prints it (its do_fan: "FAN Dynamic Speed control=<systemctl is-active
# nvfancontrol> <hwmon>_<pwm>=<value>"); the lines around it shaped on an AGX Orin's output in a real post, their
# values and the fan's chosen here
SHOW = ("$ sudo jetson_clocks --show\nSOC family:tegra234  Machine:NVIDIA Jetson AGX Orin Developer Kit\n"
        "Online CPUs: 0-11\nGPU MinFreq=306000000 MaxFreq=1300500000 CurrentFreq=306000000\n"
        "EMC MinFreq=204000000 MaxFreq=3199000000 CurrentFreq=2133000000 FreqOverride=0\n"
        "FAN Dynamic Speed control={state} hwmon2_pwm1={pwm}\nNV Power Mode: MAXN\n")


def _fan_facts(answer: dict[str, object]) -> list[dict[str, object]]:
    facts = answer["fan_facts"]
    assert isinstance(facts, list)
    return facts


def test_a_fan_at_full_with_nvfancontrol_not_running_is_said_as_jetson_clocks_leaves_it(tmp_path: Path) -> None:
    """jetson_clocks --fan stops nvfancontrol and writes 255: a fan listed at 255 with the service inactive is held
    there (likely: the kernel's governor may still step it), and it leads over the generic full-while-cool."""
    text = SHOW.format(state="inactive", pwm=255) + LINE.format(pll="30", cpu="31", gpu="30") + "\n"
    code, answer = explain(text, tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and (lead["kind"], lead["confidence"], lead["subjects"]) == (
        "daemon-stopped", "likely", ["pwm-fan/fan1"])
    assert (lead["facts"]["event"], lead["facts"]["detail"], lead["facts"]["pwm"]) == ("not-running", "inactive", 255)
    (fan,) = _fan_facts(answer)
    assert (fan["duty_percent"], fan["found"]) == (100.0, "full: service off")


@pytest.mark.parametrize(("state", "pwm", "controller"), [("active", 55, "daemon"), ("nvfancontrol", 255, "daemon"),
                                                          ("kernel", 88, "kernel"), ("inactive", 100, "unknown")])
def test_a_fan_under_its_service_or_below_full_is_not_said_held(state: str, pwm: int, controller: str,
                                                                tmp_path: Path) -> None:
    """nvfancontrol active (or a newer release's "nvfancontrol"/"kernel") follows the temperatures: its fan is the
    daemon's or the kernel's, never held; with the service off at pwm 100 nothing says jetson_clocks set it."""
    code, answer = explain(SHOW.format(state=state, pwm=pwm), tmp_path)
    (fan,) = _fan_facts(answer)
    assert code == 0 and fan["controller"] == controller
    assert fan["duty_percent"] == pytest.approx(100 * pwm / 255, abs=0.1)
    assert "daemon-stopped" not in [f["kind"] for f in findings_of(answer)]


def test_the_older_script_shows_target_pwm_and_a_cat_of_it_is_read_without_tegrastats() -> None:
    """The older jetson_clocks printed "Fan: PWM=" with target_pwm's value: the duty asked, the fan's duty where
    cur_pwm is not read; a cat of target_pwm alone is read as well, and beside cur_pwm the duty is cur_pwm's."""
    old = "EMC MinFreq=204000000 MaxFreq=1600000000 CurrentFreq=1600000000 FreqOverride=1\nFan: PWM=255\n"
    (fan,) = adapt.machine(read(old)[0]).fans
    assert (fan.key, fan.duty_percent, fan.target_percent) == ("pwm-fan/fan1", 100.0, 100.0)
    (fan,) = adapt.machine(read("$ cat /sys/devices/pwm-fan/target_pwm\n128\n")[0]).fans
    assert (fan.duty_percent, fan.target_percent) == (50.2, 50.2)
    (fan,) = adapt.machine(read(FAN.format(asked=255, driven=120))[0]).fans
    assert (fan.duty_percent, fan.target_percent) == (47.1, 100.0)


def test_pwms_of_two_hwmon_devices_are_two_fans() -> None:
    text = ("FAN Dynamic Speed control=active hwmon1_pwm1=60\n"
            "FAN Dynamic Speed control=active hwmon1_pwm1_enable=1\nFAN Dynamic Speed control=active hwmon4_pwm1=90\n")
    assert sorted(f.key for f in adapt.machine(read(text)[0]).fans) == ["pwm-fan hwmon1/fan1", "pwm-fan hwmon4/fan1"]


def test_with_a_hot_part_the_service_off_is_only_possible(tmp_path: Path) -> None:
    """At 88 °C the kernel's thermal governor may hold the fan at full itself: the service off is one possible
    cause, said with the temperature, not the likely one."""
    text = SHOW.format(state="inactive", pwm=255) + LINE.format(pll="80", cpu="88", gpu="86") + "\n"
    code, answer = explain(text, tmp_path)
    (found,) = [f for f in findings_of(answer) if f["kind"] == "daemon-stopped"]
    assert code == 0 and (found["confidence"], found["facts"]["hot_c"]) == ("possible", 88.0)


def test_the_older_line_is_read_only_beside_the_scripts_own_lines() -> None:
    """"Fan: PWM=255" alone could be any tool's (a microcontroller's serial log prints the like): no Jetson fan."""
    assert not any(r.chip == "pwm-fan" for r in read("Fan: PWM=255\n")[0])
