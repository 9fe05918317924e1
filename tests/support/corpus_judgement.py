"""FanWhy's answer on each block of the fan corpus, judged against the thread's answer, and what must stay true of
it (tests/test_corpus.py checks every entry through the replay path; docs/FAN-CORPUS.md shows the judgement).

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
    "amdgpu-01": _j("partly", "names the fan and its 1,062 RPM at an idle 48 °C, but cannot know it is the blower's "
                    "hardware floor (the capture has no duty)", ("1,062 RPM", "no idle floor is known", "48 °C")),
    "amdgpu-02": _j("not read", "tuxclocker's log and an error, no sensor listing"),
    "amdgpu-03": _j("not read", "ROCm's fan_curve file and rocm-smi's errors"),
    "amdgpu-04": _j("not read", "amdgpu-ls's own output"),
    "desktop-superio-01": _j("agree", "the two fans on headers run (CPU Fan, CPU OPT), the others are empty; the "
                             "216 °C placeholder is left out with its reason",
                             ("CPU Fan (asuswmisensors fan1) runs at 844 RPM",),
                             {"CPU Fan (asuswmisensors fan1)": "running", "CPU OPT (asuswmisensors fan7)": "running"},
                             ("asuswmisensors Tsensor 1 Temperature",)),
    "desktop-superio-02": _j("partly", "names the VRM heatsink fan at 8,680 RPM as the loudest, but not that the "
                             "VRM is cool (no floor, no curve read)", ("VRM HS (asusec fan2) runs at 8,680 RPM",),
                             {"VRM HS (asusec fan2)": "running", "Chipset (asusec fan3)": "running"}),
    "desktop-superio-03": _j("agree", "every Super-I/O header at 0 RPM: the fans are the BMC's (ipmitool sdr); the "
                             "123.5 °C CPUTIN is left out", ("every fan header read here is at 0 rpm", "ipmitool sdr"),
                             left_out=("nct6776 CPUTIN",)),
    "desktop-superio-04": _j("not read", "a shell session of cat on two drivers' files"),
    "desktop-superio-05": _j("not read", "pwm writes and their echoes in a shell"),
    "desktop-superio-06": _j("not read", "pwm writes and their echoes in a shell"),
    "desktop-superio-07": _j("agree", "with the it87 driver the CPU fan reads 1,956 RPM; SYS Fan 1 at 0 RPM is an "
                             "empty header", ("CPU Fan (it8686 fan1) runs at 1,956 RPM",),
                             {"CPU Fan (it8686 fan1)": "running"}),
    "desktop-superio-08": _j("not read", "a shell session of pwm writes (and the thread has no answer)"),
    "desktop-superio-09": _j("agree", "two fans spin (fan2, fan4), the others are empty; CPUTIN -60 °C is left out; "
                             "nothing is hot", ("nct6776 fan4 runs at 819 RPM", "36 °C",
                                                "nct6776 fan1, nct6776 fan3 and 1 more have no fan on them"),
                             {"nct6776 fan2": "running", "nct6776 fan4": "running", "nct6776 fan1": "dead"},
                             ("nct6776 CPUTIN",)),
    "desktop-superio-10": _j("partly", "names the fan at its low 910 RPM step at 57 °C, but not the firmware's "
                             "two-step curve", ("dell_smm fan1 runs at 910 RPM", "57 °C")),
    "laptops-01": _j("agree", "0 RPM with no duty is not called rest: the EC may not fill the tachometer; the "
                     "111 °C and -80 °C slots are left out", ("at rest, or its tachometer does not report",),
                     {"thinkpad fan1": "unknown"}, ("thinkpad temp5", "thinkpad temp6", "thinkpad temp11")),
    "laptops-02": _j("agree", "thinkfan's level 3 with speed 0: stalled, or an EC that does not report the speed; "
                     "judge by ear or by temperatures", ("level 3", "does not report the speed", "by ear"),
                     {"thinkpad fan1": "stalled"}),
    "laptops-03": _j("agree", "the fan is held at level 1 by software; what that level is in RPM is the EC's",
                     ("level 1 of 7", "held by software"), {"thinkpad fan1": "running"}),
    "laptops-04": _j("partly", "no fan in the capture (only the PCH's temperatures): nothing false, the cause not "
                     "seen", ("no fan is read here",)),
    "laptops-05": _j("no answer", "the thread could not say what the EC follows"),
    "laptops-06": _j("partly", "0 RPM at 39 °C: says at rest or unreported, where the thread leans to at rest",
                     ("at rest, or its tachometer does not report", "39 °C"),
                     {"Processor Fan (dell_smm fan1)": "unknown"}),
    "laptops-07": _j("partly", "0 RPM at 66 °C: says at rest or unreported, where the thread knows the EC stops "
                     "them below 70 °C", ("at rest, or its tachometer does not report",),
                     {"CPU Fan (dell_ddv fan1)": "unknown"}),
    "laptops-08": _j("agree", "both laptop fans run under the EC; no NVIDIA fan is claimed",
                     ("gpu_fan (asus fan2) runs at 2,600 RPM",), {"cpu_fan (asus fan1)": "running"}),
    "laptops-09": _j("not read", "framework_tool's own output"),
    "laptops-10": _j("not read", "System76 EC's console log"),
    "laptops-11": _j("not read", "System76 EC's console log"),
    "liquidctl-daemons-01": _j("agree", "the pump's 0 rpm is not rest: liquidctl cannot read it, or it failed; the "
                               "empty fan channels are dead", ("a pump does not stop", "cannot read this pump"),
                               {"Pump (Corsair H110i GT)": "stalled", "Fan 1 (Corsair H110i GT)": "dead"}),
    "liquidctl-daemons-02": _j("partly", "names the pump at 2,280 RPM, not that the firmware ignores a 20 % duty",
                               ("Pump (Asetek 690LC) runs at 2,280 RPM",)),
    "liquidctl-daemons-03": _j("partly", "fan 1 at a 100 % duty, its source (the liquid) said as a guess, never as "
                               "proof of an override; that the speeds do not follow the duties is not said",
                               ("runs at 100 % (1,192 RPM), probably following",),
                               {"Fan 1 (Corsair Hydro H100i Pro XT)": "full"}),
    "liquidctl-daemons-04": _j("partly", "the six fans run (~470 rpm) and the device is marked broken for writes, "
                               "but the sentence does not say no software curve is in effect",
                               ("runs at 472 RPM",)),
    "liquidctl-daemons-05": _j("partly", "pump and two fans run, the empty channels are said to have no fan; lost "
                               "control is not said", ("Pump (Corsair Commander ST) runs at 2,269 RPM",
                                                       "and 2 more have no fan on them"),
                               {"Fan 3 (Corsair Commander ST)": "dead", "Fan 1 (Corsair Commander ST)": "running"}),
    "liquidctl-daemons-06": _j("agree", "nothing unusual: pump and fans turn slowly with the liquid at 32 °C, none "
                               "reports a fault", ("Pump (Corsair Hydro H150i Pro) runs at 1,050 RPM", "32 °C",
                                                   "none of the 4 fans read here reports a fault")),
    "liquidctl-daemons-07": _j("not read", "a liquidctl set command, no status"),
    "liquidctl-daemons-08": _j("not read", "fan2go's log (and its configuration, which names no fan FanWhy reads)"),
    "liquidctl-daemons-09": _j("no answer", "the thread could not say"),
    "liquidctl-daemons-10": _j("partly", "no fan in the capture (thinkfan's configuration and log): nothing false, "
                               "the cause not seen", ("no fan is read here",)),
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
    "nvidia-05": _j("partly", "the card is idle (12 W, 32 °C, no process) and its fan at 49 % is said as a guess; "
                    "not that it ignores the daemon", ("probably following the GPU", "12 W")),
    "nvidia-06": _j("agree", "the busy card's fan (51 %) is the one heard, at 68 °C and 76 W",
                    ("GPU 2's fan runs at 51 %", "68 °C")),
    "nvidia-07": _j("agree", "all zeros: fan-stop or a driver that does not report; not a failed fan",
                    ("stopped by fan-stop, or a driver that does not report",),
                    {"GPU 0 fan 0": "running", "GPU 0 fan 1": "running"}),
    "servers-bmc-01": _j("agree", "the two dead rotors named, the other eight healthy",
                         ("Fan3B (BMC) at 0 RPM: the BMC reports it critical",),
                         {"Fan3B (BMC)": "failed", "Fan4B (BMC)": "failed", "Fan1A (BMC)": "running"}),
    "servers-bmc-02": _j("partly", "the fans turn slowly, none reports a fault, FAN 1 is empty and nothing read is "
                         "hot, but the discrete CPU sensor and the absent System Temp probe are not said",
                         ("FAN A (BMC) runs at 975 RPM", "FAN 1 (BMC) has no fan on it", "30 °C")),
    "servers-bmc-03": _j("partly", "the fans are healthy (none reports a fault); the controller's stepping is not "
                         "seen in one listing", ("runs at 4,100 RPM", "none of the 6 fans read here reports a fault")),
    "servers-bmc-04": _j("agree", "the fans turn slowly (980 RPM the fastest), none reports a fault, and FAN4 is an "
                         "empty header", ("FANB (BMC) runs at 980 RPM", "none of the 6 fans read here reports a fault",
                                          "FAN4 (BMC) has no fan on it")),

    "servers-bmc-05": _j("agree", "the backplane fan at 13,300 RPM, past its warning threshold (nc): running, "
                         "not absent", ("BPN-FAN2 (BMC) at 13,300 RPM", "warning threshold"),
                         {"BPN-FAN2 (BMC)": "running"}),
    "servers-bmc-06": _j("not read", "xCAT rvitals' output"),
}
