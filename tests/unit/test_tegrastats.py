"""An NVIDIA Jetson's tegrastats lines (as a Jetson Nano in a climate chamber printed them, jetson_stats#35) and its
pwm-fan's files: read, not refused; the PMIC's fixed 100 °C (its zone reports 100 °C whatever the temperature, as
NVIDIA answered it: balena-jetson#142) and a powered-off GPU's -256 °C (jetson_stats#350) are no readings."""

from __future__ import annotations

from app.fans import adapt
from app.fans.answer import explained
from app.fans.read import read

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
