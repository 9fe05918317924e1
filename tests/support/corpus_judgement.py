"""FanWhy's answer on each block of the fan corpus, judged against the thread's answer, and what must stay true of
it (tests/unit/test_corpus.py checks every entry through the replay path; docs/FAN-CORPUS.md shows the judgement).

Verdicts: ``agree`` (the sentence says what the thread established, or all a capture can show of it), ``partly``
(nothing false, but it misses the cause the thread found), ``disagree`` (it says something the thread refutes),
``not read`` (FanWhy does not read this capture: a tool's own log, a shell session, a curve being written),
``no answer`` (the thread itself could not say). Each entry's ``says`` are words the sentence (or the next causes)
must hold, ``states`` each named fan's state, ``left_out`` temperatures that must be left out as junk.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

Verdict = Literal["agree", "partly", "disagree", "not read", "no answer"]
_NONE: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    why: str
    says: tuple[str, ...] = ()
    states: Mapping[str, str] = field(default_factory=lambda: _NONE)
    left_out: tuple[str, ...] = ()


def _j(verdict: Verdict, why: str, says: tuple[str, ...] = (), states: dict[str, str] | None = None,
       left_out: tuple[str, ...] = ()) -> Judgement:
    return Judgement(verdict, why, says, MappingProxyType(states or {}), left_out)


NOT_A_CAPTURE = "not a capture FanWhy reads"
JUDGED: dict[str, Judgement] = {
    "amdgpu-01": _j("agree", "asked for 0 % by hand and still turning at 1,062 RPM: its lowest speed (no fan-stop), "
                    "nothing making it spin faster, at an idle 48 °C",
                    ("asked for 0 % by hand and still turns at 1,062 RPM", "no fan-stop", "48 °C"),
                    {"amdgpu fan1": "floor"}),
    "amdgpu-02": _j("agree", "the points ask for 15 %, outside the 20-100 % the card accepts: refused, the card stays "
                    "on its own curve", ("ask for 15 %", "20-100 %", "refused", "own automatic curve")),
    "amdgpu-03": _j("agree", "the fan curve's range reads 0-0: every point written is refused, the fan stays on the "
                    "card's built-in control", ("0-0 %", "every point written is refused", "built-in control")),
    "amdgpu-04": _j("agree", "the fan at 19 % (1,472 RPM) under the card's own firmware control (pwm_enable 2), a low "
                    "speed: nothing else sets it", ("runs at 19 % (1,472 RPM), set by the GPU's firmware",
                                                    "a low speed"), {"amdgpu fan1": "running"}),
    "desktop-superio-01": _j("agree", "the two fans on headers run (CPU Fan, CPU OPT), the others are empty; the "
                             "216 °C placeholder is left out with its reason",
                             ("CPU Fan (asuswmisensors fan1) runs at 844 RPM",),
                             {"CPU Fan (asuswmisensors fan1)": "running", "CPU OPT (asuswmisensors fan7)": "running"},
                             ("asuswmisensors Tsensor 1 Temperature",)),
    "desktop-superio-02": _j("agree", "names the VRM heatsink fan at 8,680 RPM as the loudest, beside the VRM it is "
                             "named for at only 48 °C (a guess by its name, said so); the -40 °C water probes are left "
                             "out", ("VRM HS (asusec fan2) runs at 8,680 RPM", "VRM at 48 °C", "by its name"),
                             {"VRM HS (asusec fan2)": "running", "Chipset (asusec fan3)": "running"},
                             ("asusec Water_In", "asusec Water_Out")),
    "desktop-superio-03": _j("agree", "every Super-I/O header at 0 RPM: the fans are the BMC's (ipmitool sdr); the "
                             "123.5 °C CPUTIN is left out", ("every fan header read here is at 0 rpm", "ipmitool sdr"),
                             left_out=("nct6776 CPUTIN",)),
    "desktop-superio-04": _j("agree", "two drivers of one chip disagree: nct6683 sees the case fans turning, "
                             "nct6687's zeros are not stopped fans (its register map, most likely)",
                             ("nct6683 reads 7 fans turning", "not stopped fans", "most likely"),
                             {"nct6683 fan4": "running", "nct6683 fan9": "running"}),
    "desktop-superio-05": _j("agree", "pwm set to 100 % by hand, the fans at the BIOS's speeds: the IT8689 board's own "
                             "controller overrides the registers until its Smart Fan curve is flattened",
                             ("most likely overrides the pwm registers", "speeds set in the BIOS",
                              "Smart Fan curve flat"), {"it8689 fan1": "running"}),
    "desktop-superio-06": _j("agree", "writes accepted, fan2 stays at ~1,040 RPM: the board's own controller keeps it, "
                             "not Linux", ("stays at 1,040 RPM", "overrides the pwm registers")),
    "desktop-superio-07": _j("agree", "with the it87 driver the CPU fan reads 1,956 RPM; SYS Fan 1 at 0 RPM is an "
                             "empty header", ("CPU Fan (it8686 fan1) runs at 1,956 RPM",),
                             {"CPU Fan (it8686 fan1)": "running"}),
    "desktop-superio-08": _j("not read", "a shell session of pwm writes (and the thread has no answer)"),
    "desktop-superio-09": _j("agree", "two fans spin (fan2, fan4), the others are empty; CPUTIN -60 °C is left out; "
                             "nothing is hot", ("nct6776 fan4 runs at 819 RPM", "36 °C",
                                                "nct6776 fan1, nct6776 fan3 and 1 more have no fan on them"),
                             {"nct6776 fan2": "running", "nct6776 fan4": "running", "nct6776 fan1": "dead"},
                             ("nct6776 CPUTIN",)),
    "desktop-superio-10": _j("agree", "the fan at its low step (910 RPM, 15 % of its maximum) while the CPU is at 68 "
                             "°C, and i8kutils reads -1, so i8kmon never steps it up; Dell's firmware steps",
                             ("runs at 910 RPM", "15 % of its 6,100 RPM maximum, a low speed", "as -1",
                              "neither read nor step it", "68 °C", "few fixed steps")),
    "laptops-01": _j("agree", "0 RPM with no duty is not called rest: the EC may not fill the tachometer; the "
                     "111 °C and -80 °C slots are left out", ("at rest, or its tachometer does not report",),
                     {"thinkpad fan1": "unknown"}, ("thinkpad temp5", "thinkpad temp6", "thinkpad temp11")),
    "laptops-02": _j("agree", "thinkfan's level 3 with speed 0: stalled, or an EC that does not report the speed; "
                     "judge by ear or by temperatures", ("level 3", "does not report the speed", "by ear"),
                     {"thinkpad fan1": "stalled"}),
    "laptops-03": _j("agree", "the fan is held at level 1 by software; what that level is in RPM is the EC's",
                     ("level 1 of 7", "held by software"), {"thinkpad fan1": "running"}),
    "laptops-04": _j("agree", "all the capture shows: no fan is read, and the PCH, its only reading, is named as the "
                     "hottest at 72 °C", ("no fan is read here", "pch_skylake) at 72 °C")),
    "laptops-05": _j("no answer", "the thread could not say what the EC follows"),
    "laptops-06": _j("agree", "0 RPM with nothing above 39 °C: probably at rest (Dell's EC stops its fans while cool), "
                     "the unreported tachometer still named", ("probably at rest", "39 °C", "does not report"),
                     {"Processor Fan (dell_smm fan1)": "stopped"}),
    "laptops-07": _j("agree", "0 RPM at 66 °C: probably at rest under Dell's EC; i8kutils reads -1, it cannot "
                     "reach the fan", ("probably at rest", "66 °C", "as -1", "cannot reach the fan"),
                     {"CPU Fan (dell_ddv fan1)": "stopped"}),
    "laptops-08": _j("agree", "both laptop fans run under the EC; no NVIDIA fan is claimed",
                     ("gpu_fan (asus fan2) runs at 2,600 RPM",), {"cpu_fan (asus fan1)": "running"}),
    "laptops-09": _j("agree", "under the EC's own control the fan is off at APU 42 °C; the 7,281 and 3,171 RPM were "
                     "manual settings", ("reads 0 RPM with APU at 42 °C", "keeps it off", "settings, not heat")),
    "laptops-10": _j("agree", "the EC cannot read the CPU over PECI (0x0A), and the fan's 50 % is most likely its "
                     "fallback, not heat", ("cannot read the CPU's temperature", "0x0A", "reads 50 %",
                                            "fallback speed, not an answer to heat")),
    "laptops-11": _j("agree", "the EC's CPU reading is 0 °C while the package is at 99 °C: it lost PECI and never runs "
                     "its curve", ("0 °C while the CPU package is at 99 °C", "lost its CPU temperature",
                                   "fan reads 0 RPM")),
    "liquidctl-daemons-01": _j("agree", "the pump's 0 rpm is not rest: liquidctl cannot read it, or it failed; the "
                               "empty fan channels are dead", ("a pump does not stop", "cannot read this pump"),
                               {"Pump (Corsair H110i GT)": "stalled", "Fan 1 (Corsair H110i GT)": "dead"}),
    "liquidctl-daemons-02": _j("agree", "the pump set to 20 % reads 2,280 RPM: its driver sends it 50 % at least, so "
                               "it runs at its minimum", ("set to a fixed 20 % and reads 2,280 RPM", "runs at 50 %")),
    "liquidctl-daemons-03": _j("agree", "the duties swapped 20/100 % while both speeds stayed ~1,190 RPM: the fans do "
                               "not follow the duties; fan 1's source is said as a guess",
                               ("from 20 % to 100 %", "stayed at 1,192 RPM", "not following the duties",
                                "runs at 100 % (1,192 RPM), probably following"),
                               {"Fan 1 (Corsair Hydro H100i Pro XT)": "full"}),
    "liquidctl-daemons-04": _j("agree", "the six fans run (~470 rpm), liquidctl cannot set this (broken) device, so no "
                               "software curve is in effect", ("cannot set Corsair Commander Core XT",
                                                               "no software curve is in effect", "runs at 472 RPM")),
    "liquidctl-daemons-05": _j("agree", "pump and two fans run, the empty channels have no fan, and the set fails: no "
                               "software curve is in effect", ("cannot set Corsair Commander ST",
                                                               "no software curve is in effect",
                                                               "Pump (Corsair Commander ST) runs at 2,269 RPM",
                                                               "and 2 more have no fan on them"),
                               {"Fan 3 (Corsair Commander ST)": "dead", "Fan 1 (Corsair Commander ST)": "running"}),
    "liquidctl-daemons-06": _j("agree", "nothing unusual: pump and fans turn slowly with the liquid at 32 °C, none "
                               "reports a fault", ("Pump (Corsair Hydro H150i Pro) runs at 1,050 RPM", "32 °C",
                                                   "none of the 4 fans read here reports a fault")),
    "liquidctl-daemons-07": _j("agree", "the profile runs on the cooler against the liquid, not the CPU, so the fans "
                               "stay near its 35-40 °C points", ("against its liquid temperature, not the CPU's",
                                                            "most likely stay near this curve's 35-40 °C points")),
    "liquidctl-daemons-08": _j("not read", "fan2go's log (and its configuration, which names no fan FanWhy reads)"),
    "liquidctl-daemons-09": _j("no answer", "the thread could not say"),
    "liquidctl-daemons-10": _j("agree", "thinkfan's bias (259) read the jump from -128 to 45 °C as a steep rise: level "
                               "7 for one cycle, then back to 0; not hot", ("level 7", "bias (259)", "-128",
                                                                          "not hot", "back to level 0")),
    "nvidia-01": _j("agree", "the fan is on the card's own curve (35 %, about 1,040 RPM at an idle 25 °C): "
                    "nvfancontrol leaves a fan in automatic mode alone unless forced",
                    ("runs at 35 % (1,039 RPM), set by the card's own curve", "unless run with --force", "25 °C"),
                    {"GPU 0 fan 0": "running"}),
    "nvidia-02": _j("agree", "the card's firmware is in charge (Mode: Auto), spinning the fan between 0 and 26 %; "
                    "the daemon's curve is not what drives it, though it was run with --force",
                    ("set by the card's own curve", "between 0 and 26 %", "not driving it")),
    "nvidia-03": _j("agree", "manual control taken, and 0 % is below the 1-100 % this driver accepts under it: the "
                    "fan keeps turning until handed back to the automatic policy",
                    ("accepts 1-100 %", "asked for 0 %", "automatic policy lets it stop")),
    "nvidia-04": _j("agree", "under manual control this GeForce accepts 30-100 %, so it never stops; fan-stop only "
                    "on the automatic policy", ("accepts 30-100 %", "below the 30 %", "automatic policy lets it stop")),
    "nvidia-05": _j("agree", "the card is idle (12 W, 32 °C, no process) and its fan at 49 % is not following the "
                    "daemon's 30-40 %", ("not following it", "reads 49 %", "12 W")),
    "nvidia-06": _j("agree", "the busy card's fan (51 %) is the one heard, at 68 °C and 76 W",
                    ("GPU 2's fan runs at 51 %", "68 °C")),
    "nvidia-07": _j("agree", "all zeros: fan-stop or a driver that does not report; not a failed fan",
                    ("stopped by fan-stop, or a driver that does not report",),
                    {"GPU 0 fan 0": "unknown", "GPU 0 fan 1": "unknown"}),
    "servers-bmc-01": _j("agree", "the two dead rotors named, the other eight healthy",
                         ("Fan3B (BMC) at 0 RPM: the BMC reports it critical",),
                         {"Fan3B (BMC)": "failed", "Fan4B (BMC)": "failed", "Fan1A (BMC)": "running"}),
    "servers-bmc-02": _j("agree", "the fans turn slowly, none reports a fault, FAN 1 is empty, the CPU is not read in "
                         "degrees (a discrete 0x8) and System Temp's 0 °C is left out as no sensor",
                         ("FAN A (BMC) runs at 975 RPM", "FAN 1 (BMC) has no fan on it", "30 °C",
                          "CPU's temperature is not read", "0x8"), left_out=("BMC System Temp", "BMC CPU Temp")),
    "servers-bmc-03": _j("partly", "the fans are healthy (none reports a fault); the controller's stepping is not "
                         "seen in one listing", ("runs at 4,100 RPM", "none of the 6 fans read here reports a fault")),
    "servers-bmc-04": _j("agree", "the fans turn slowly (980 RPM the fastest), none reports a fault, and FAN4 is an "
                         "empty header", ("FANB (BMC) runs at 980 RPM", "none of the 6 fans read here reports a fault",
                                          "FAN4 (BMC) has no fan on it")),

    "servers-bmc-05": _j("agree", "the backplane fan at 13,300 RPM, past its warning threshold (nc): running, "
                         "not absent", ("BPN-FAN2 (BMC) at 13,300 RPM", "warning threshold"),
                         {"BPN-FAN2 (BMC)": "running"}),
    "servers-bmc-06": _j("partly", "node c460c802's Fan1 rotors at 0 RPM beside six turning at about 10,700: a failed "
                         "fan or a reading the BMC gets wrong; the nodes reading about 22,000 are not judged (their "
                         "lines hold no siblings)"),
}
