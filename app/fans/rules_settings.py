"""The rules of what a controller's own settings, log or state impose, whatever the temperatures: a server BMC's
thermal settings (Dell's iDRAC), a BMC's event log of a fan crossing its lower threshold, a fan daemon that
stopped (fancontrol aborting, which leaves its fans at full speed, or refusing an outdated configuration), a
daemon in its critical mode, a speed a daemon asks that its controller does not read back, a CPU the kernel
logged slowing for heat, a GPU's driver at its heat threshold (nouveau), and a laptop embedded controller's fan
settings (msi-ec, legion-laptop). Registered in ``app.fans.rules`` like the others."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..core.finding import FindingKind
from ..core.vocabulary import driver_of
from .chips import chip
from .facts import PERF_LEVEL, BmcEvent, Machine, Setting, TempFact
from .limits import own_limit
from .read import legion, msiec, platform
from .read.bmcsettings import FAN_MODE
from .read.nbfc import CRITICAL
from .rules import Hit, rule
from .rules_state import off_asked
from .speeds import COOL_C, FULL_DUTY, bmc_held

_DEFAULT_MINIMUM = "255"  # MinimumFanSpeed's value when no minimum is set (Dell's RACADM guide)


@rule("a BMC's fan setting", 61, "Dell's iDRAC RACADM CLI guide (System.ThermalSettings: ThirdPartyPCIFanResponse, "
      "FanSpeedOffset, MinimumFanSpeed, ThermalProfile); Dell_iDRAC_fan_controller's functions.sh (raw 0x30 0x30 "
      "0x01 0x00 takes the fans from Dell's own dynamic profile); Supermicro's SMCIPMITool and IPMICFG (the fan modes: "
      "Standard, Full, Optimal, Heavy IO) and superfans' presets (Full: all fans at 100 %, unless a zone's duty is "
      "written, which only Full keeps; Heavy IO: peripheral zone target 75 %); smfc's ipmi.py (set_fan_mode: raw "
      "0x30 0x45 0x01 <mode>, 0 Standard, 1 Full, 2 Optimal, 3 PUE, 4 Heavy IO)")
def bmc_setting(machine: Machine) -> Iterator[Hit]:
    # the card response raises the fans only where a card Dell did not qualify is fitted, which no reading shows:
    # likely; Heavy IO's raise is a mode's target, not read: likely; the others act on every fan: known. The card
    # response is the iDRAC's own control's: while a tool holds every fan at one duty, with that control off, it
    # does not act
    held = bmc_held(machine) is not None
    return _setting_hits(machine, "bmc-setting", lambda s: None if held and _effect(s) == "pcie-card" else _effect(s),
                         likely=("pcie-card", "heavy-io"))


def _setting_hits(machine: Machine, kind: FindingKind, effect_of: Callable[[Setting], str | None],
                  likely: tuple[str, ...] = ()) -> Iterator[Hit]:
    """A finding of ``kind`` for each setting ``effect_of`` finds an effect in (known, or likely for ``likely``)."""
    for setting in machine.settings:
        effect = effect_of(setting)
        if effect is not None:  # a setting typed in the paste is what was asked, not read back: likely
            yield Hit(kind, (), "likely" if effect in likely or setting.typed else "known",
                      {"controller": setting.controller, "setting": setting.name, "value": setting.value,
                       "effect": effect, **({"typed": "yes"} if setting.typed else {})})


def _effect(setting: Setting) -> str | None:
    """What a setting does to every fan, or None where it leaves them to the temperatures."""
    value = setting.value.strip().lower()
    if setting.name == "ThirdPartyPCIFanResponse":
        return "pcie-card" if value in ("enabled", "1") else None
    if setting.name == "FanSpeedOffset":
        return "offset" if value not in ("off", "none", "0", "") else None
    if setting.name == "MinimumFanSpeed":
        return "floor" if value.isdigit() and value != _DEFAULT_MINIMUM else None
    if setting.name == "ThermalProfile":
        return "performance" if "maximum performance" in value else None
    if setting.name == FAN_MODE:
        return "full-mode" if value.startswith("full") else "heavy-io" if value.startswith("heavy") else None
    return None


@rule("a fan daemon that stopped", 67, "the lm-sensors fancontrol script and fancontrol(8) (on an error it prints "
      "\"Aborting, restoring fans...\", sets each output it drove back to full speed and exits; it refuses a "
      "configuration whose hwmon devices changed: \"Configuration appears to be outdated\"); the lm-sensors "
      "pwmconfig script (pwmdisable sets each output it tests to full speed, pwmN_enable 0 or 1 with pwmN 255, and "
      "is what it restores them with: \"restore each fan to full speed after testing\"; before any test it exits on no "
      "hwmon device, none with a pwmN file, \"There are no pwm-capable sensor modules installed\", none with a "
      "fanN_input, or none writable; an output whose pwmN_enable reads back neither 0 nor 1 once written is "
      "\"stuck to\" its mode and skipped: \"Manual control mode not supported\"); sysfs-interface.rst (pwmN_enable "
      "2 and up: automatic); thinkfan's messages (\"Module thinkpad_acpi doesn't seem to support "
      "fan_control\", \"Thinkfan needs to be run as root\": it exits) and thinkpad-acpi.rst (fan control is off "
      "unless the module is loaded with fan_control=1; level auto is the EC's own control); fan2go's controller.go (a "
      "fan reading no speed even at its highest pwm ends its controller, ErrFanStalledAtMaxPwm, which gives the fan "
      "back to the mode it found it in, or full speed); NVIDIA's jetson_clocks script (--show prints whether "
      "nvfancontrol is active beside each fan pwm; --fan stops nvfancontrol and writes 255 to each fan pwm)")
def daemon_stopped(machine: Machine) -> Iterator[Hit]:
    for event in machine.events:
        if event.event == "overridden":
            continue  # a daemon still running, whose pwm something changed: its own rule
        # what pwmconfig did is known; that nothing has set the outputs back since is likely (so with nvfancontrol
        # not running: the kernel's thermal governor may still step a Jetson's fan, and where a part is hot it may
        # hold it at full itself: possible); a fan jetson_clocks lists is the fan the finding is about (its key)
        about = (event.fan,) if event.event == "not-running" else ()
        hot = max((t.celsius for t in machine.temperatures if t.celsius is not None), default=0.0) if about else 0.0
        warm = hot >= COOL_C
        yield Hit("daemon-stopped", about, "possible" if warm else "likely" if event.event in
                  ("left-full", "not-running") else "known",
                  {"daemon": event.daemon, "event": event.event, "detail": event.detail,
                   **({"fan": event.fan} if event.fan else {}), **({"hot_c": hot} if warm else {}),
                   **dict(event.values)})


@rule("a BMC's log of a fan under its lower threshold", 86, "IPMI v2.0 threshold sensors (an event is asserted when "
      "the reading goes below a lower threshold and deasserted when it rises back above it, past the hysteresis); "
      "ipmitool(1) sel list and elist; Dell's iDRAC Event and Error Message Reference Guide (its fan messages, as "
      "racadm getsel words them); Supermicro's BMC fan behaviour on a critical fan")
def bmc_fan_logged(machine: Machine) -> Iterator[Hit]:
    bmc_fans = {f.label: f.key for f in machine.fans if f.chip == "bmc"}
    for sensor, records in _fan_records(machine.bmc_events).items():
        facts = _falls(sensor, [r for r in records if r.threshold.startswith("lower")])
        if facts is None:
            continue
        subject = bmc_fans.get(sensor)
        # fallen and come back more than once: the fan reaches its threshold when every fan is raised, so it turns
        # and is slower than its threshold at a low duty (likely); once, or never back: failing or slow (possible)
        yield Hit("bmc-fan-logged", (subject,) if subject else (), "likely" if float(facts["falls"]) > 1 and
                  facts["recovered"] == "yes" else "possible", facts)


def _falls(sensor: str, lower: list[BmcEvent]) -> dict[str, float | str] | None:
    """What a fan's lower-threshold events show: how often it fell under (its lower-critical threshold, or any lower
    one where none is logged), whether it came back above after the first fall, whether the log ends with it under;
    None where it never fell under."""
    falls = [r for r in lower if r.asserted and r.threshold == "lower critical"] or [r for r in lower if r.asserted]
    if not falls:
        return None
    recovered = any(not r.asserted for r in lower[lower.index(falls[0]):])
    facts: dict[str, float | str] = {"sensor": sensor, "threshold": falls[-1].threshold, "falls": len(falls),
                                     "recovered": "yes" if recovered else "no",
                                     "ends_below": "yes" if lower[-1].asserted else "no"}
    if falls[-1].reading is not None and falls[-1].limit is not None:
        facts.update(rpm=falls[-1].reading, lcr=falls[-1].limit)
    return facts


def _fan_records(records: tuple[BmcEvent, ...]) -> dict[str, list[BmcEvent]]:
    """A BMC's logged threshold events of its fan sensors, by sensor, in the order logged."""
    found: dict[str, list[BmcEvent]] = {}
    for record in records:
        if "fan" in record.sensor_type.lower():
            found.setdefault(record.sensor, []).append(record)
    return found


LEVEL_HEAT_C = 15.0  # a change of temperature this large between two readings of an idle card is not noise


@rule("a GPU's heat that followed its performance level", 58, "Documentation/gpu/amdgpu/thermal.rst "
      "(power_dpm_force_performance_level: auto lets the driver pick the clocks, low forces the lowest, high the "
      "highest); that the heat moved with the level is read from the two readings, not from the document")
def level_and_heat(machine: Machine) -> Iterator[Hit]:
    levels: dict[str, list[str]] = {}
    for setting in machine.settings:
        if setting.name == PERF_LEVEL:
            levels.setdefault(setting.controller, []).append(setting.value)
    read_twice: dict[str, TempFact] = {}  # each card's first temperature read in two snapshots ("GPU 1 edge")
    for t in machine.temperatures:
        if t.chip == "amdgpu" and len(t.history) >= 2 and None not in (t.history[0], t.history[-1]):
            read_twice.setdefault(" ".join(t.label.split()[:2]), t)
    for card, seen in levels.items():
        temp = read_twice.get(card)
        if temp is None or seen[0] == seen[-1]:
            continue
        before, after = temp.history[0] or 0.0, temp.history[-1] or 0.0
        if abs(before - after) >= LEVEL_HEAT_C:  # the level changed and the heat with it, between two readings
            yield Hit("level-and-heat", (temp.key,), "likely", {"card": card, "level_before": seen[0],
                                                                "level_after": seen[-1], "before_c": before,
                                                                "after_c": after})


NBFC_SOURCE = "nbfc-linux src/fan.c"
CRITICAL_OFFSET_C = 15.0  # nbfc leaves its critical mode this far under its critical temperature (src/fan.c)


@rule("a fan daemon in its critical mode", 68, f"{NBFC_SOURCE} (Fan_SetTemperature: past the configuration's "
      "critical temperature the fan is critical until 15 °C under it; Fan_GetTargetSpeed: 100 % while critical, "
      "whatever its curve or a speed set by hand)")
def daemon_critical(machine: Machine) -> Iterator[Hit]:
    fans = {f.label: f.key for f in machine.fans if f.chip == "nbfc"}
    for setting in machine.settings:
        if setting.controller == "nbfc" and setting.name == CRITICAL:
            subject = fans.get(setting.value)
            yield Hit("daemon-critical", (subject,) if subject else (), "known",
                      {"daemon": "nbfc", "fan": setting.value, "offset_c": CRITICAL_OFFSET_C})


@rule("a speed asked that is not read back", 56, f"{NBFC_SOURCE} (each cycle Fan_ECFlush writes the speed asked to "
      "the embedded controller's write register and Fan_UpdateCurrentSpeed reads its read register back); NVML API "
      "reference (nvmlDeviceGetTargetFanSpeed: the speed set, which the driver attempts to reach; "
      "nvmlDeviceGetFanSpeed_v2: the fan's current speed)")
def read_back_off_target(machine: Machine) -> Iterator[Hit]:
    for fan in machine.fans:
        if off_asked(fan):
            # one reading: the controller may still be changing speed, or what was written does not drive it
            yield Hit("read-back-off-target", (fan.key,), "possible",
                      {"asked": fan.target_percent or 0.0, "reads": fan.duty_percent or 0.0,
                       "by": "gpu" if chip(fan.chip).kind == "gpu" else "ec"})


@rule("a CPU the kernel logged slowing for heat", 72, "arch/x86/kernel/cpu/mce/therm_throt.c (\"temperature above "
      "threshold, cpu clock throttled\" when the CPU's thermal sensor asserts at its limit, \"temperature/speed "
      "normal\" when it clears)")
def cpu_slowed(machine: Machine) -> Iterator[Hit]:
    logged = [e for e in machine.heat_events if e.source == "therm_throt"]
    if not logged:
        return
    cpus = sorted({e.part for e in logged}, key=lambda c: int(c[3:]) if c[3:].isdigit() else 0)
    levels = sorted({e.level for e in logged})
    yield Hit("cpu-slowed", (), "known", {"cpus": ", ".join(cpus), "levels": " and ".join(levels),
                                          "events": float(max(e.count for e in logged)),
                                          "ended": "yes" if all(e.ended for e in logged) else "no"})


@rule("a part at its own critical temperature", 71, "Documentation/hwmon/coretemp.rst (tempX_crit: TjMax, the "
      "maximum junction temperature; at it the protection mechanism forcibly cools the processor); "
      "Documentation/gpu/amdgpu/thermal.rst (temp*_crit); drivers/nvme/host/hwmon.c (the critical composite "
      "temperature); Documentation/hwmon/sysfs-interface.rst (temp[1-*]_crit)")
def at_critical(machine: Machine) -> Iterator[Hit]:
    for temps in _by_chip(machine, lambda t: t.crit_c is not None and (t.celsius or 0.0) >= t.crit_c):
        yield Hit("at-critical", tuple(t.key for t in temps), "known",
                  {"celsius": temps[0].celsius or 0.0, "crit_c": temps[0].crit_c or 0.0, "role": temps[0].role,
                   "count": float(len(temps))})


@rule("a part's critical alarm set", 70, "Documentation/ABI/testing/sysfs-class-hwmon (tempY_crit_alarm: the "
      "temperature has reached tempY_crit; unlike other alarms it sticks until cleared by the user); "
      "Documentation/hwmon/coretemp.rst (tempX_crit_alarm: set with the Out-of-spec bit, never clears; correct CPU "
      "operation is no longer guaranteed); lm-sensors' chips.c (\"ALARM (CRIT)\" after a temperature's limits)")
def crit_since(machine: Machine) -> Iterator[Hit]:
    # at its limit now, a sensor is the rule above's
    for temps in _by_chip(machine, lambda t: t.crit_alarm and (t.crit_c is None or (t.celsius or 0.0) < t.crit_c)):
        first = temps[0]
        facts: dict[str, float | str] = {"celsius": first.celsius or 0.0, "role": first.role,
                                         "count": float(len(temps)), "never_clears": "yes" if
                                         driver_of(first.chip) == "coretemp" else "no"}
        if first.crit_c is not None:
            facts["crit_c"] = first.crit_c
        yield Hit("crit-since-boot", tuple(t.key for t in temps), "known", facts)


def _by_chip(machine: Machine, holds: Callable[[TempFact], bool]) -> list[list[TempFact]]:
    """The read temperatures of a part whose critical limit is its own (``app.fans.limits``) for which ``holds``,
    chip by chip, each chip's hottest first: one finding a chip."""
    found: dict[str | None, list[TempFact]] = {}
    for temp in machine.temperatures:
        if temp.celsius is not None and own_limit(temp.chip, temp.label) and holds(temp):
            found.setdefault(temp.chip, []).append(temp)
    return [sorted(temps, key=lambda t: -(t.celsius or 0.0)) for temps in found.values()]


NOUVEAU_THRESHOLDS = ("fanboost", "downclock", "critical", "shutdown")  # nvkm's order: each one hotter


@rule("a GPU's driver at its heat threshold", 74, "drivers/gpu/drm/nouveau/nvkm/subdev/therm/temp.c "
      "(nvkm_therm_sensor_event: at 'fanboost' the driver sets the fan to 100 % and automatic mode; at 'downclock' "
      "it lowers the clocks; at 'critical' it pauses the card; at 'shutdown' it powers the machine off)")
def gpu_threshold(machine: Machine) -> Iterator[Hit]:
    for device in dict.fromkeys(e.part for e in machine.heat_events if e.source == "nouveau"):
        logged = [e for e in machine.heat_events if e.source == "nouveau" and e.part == device]
        top = max(logged, key=lambda e: NOUVEAU_THRESHOLDS.index(e.level))  # the hottest threshold it reached
        facts: dict[str, float | str] = {"device": device, "threshold": top.level, "ended": "yes" if top.ended else
                                         "no", "celsius": top.celsius if top.celsius is not None else 0.0}
        boost = next((e for e in logged if e.level == "fanboost" and e.celsius is not None), None)
        if boost is not None and boost.celsius is not None:
            facts["fanboost_c"] = boost.celsius
        yield Hit("gpu-threshold", (), "known", facts)


@rule("a thermal zone at its critical trip", 75, "drivers/thermal/thermal_core.c (handle_critical_trips: at a zone's "
      "critical trip the kernel logs \"critical temperature reached\" and shuts the machine down, "
      "hw_protection_shutdown \"Temperature too high\"); Documentation/driver-api/thermal/sysfs-api.rst (trip types: "
      "critical shuts the system down)")
def zone_critical(machine: Machine) -> Iterator[Hit]:
    for event in machine.heat_events:
        if event.source == "thermal":
            yield Hit("zone-critical", (), "known", {"zone": event.part, "times": float(event.count),
                                                     **({"type": event.level} if event.level != "critical" else {}),
                                                     **({"celsius": event.celsius} if event.celsius is not None
                                                        else {})})


@rule("an embedded controller's fan setting", 69, "the msi-ec driver's README (cooler_boost: \"boosting the "
      "airflow\"; fan_mode: auto adjusts the speed, silent disables the fan, basic holds one speed, advanced six "
      "fixed levels set by hand); LenovoLegionLinux's documentation and legion-laptop.c (fan_fullspeed: maximum fan "
      "speed, the EC's EC_FANFULLSPEED_ON; lockfancontroller: \"lock fans at current speed\")")
def ec_setting(machine: Machine) -> Iterator[Hit]:
    return _setting_hits(machine, "ec-setting", _ec_effect)


def _ec_effect(setting: Setting) -> str | None:
    """What a laptop embedded controller's setting does to its fans, or None where it leaves them to the
    temperatures."""
    value = setting.value.strip().lower()
    if setting.controller == legion.CONTROLLER:
        return {"fan_fullspeed": "full", "lockfancontroller": "locked"}.get(setting.name) if value == "1" else None
    if setting.controller != msiec.CONTROLLER:
        return None
    if setting.name == "cooler_boost":
        return "boost" if value == "on" else None
    if setting.name == "fan_mode":
        return {"silent": "off", "basic": "fixed", "advanced": "levels"}.get(value)
    return None



@rule("a platform profile biased to performance", 59, "Documentation/ABI/testing/sysfs-platform_profile (profiles "
      "bias the firmware's automatic power, thermal and fan behaviour towards low power or towards performance, "
      "\"and higher power consumption and thermals\"); power-profiles-daemon's profiles map onto it; a Dell's thermal "
      "modes (libsmbios' smbios-thermal-ctl) are the profiles the kernel's dell-pc driver offers; an ASUS laptop's "
      "fan_boost_mode (Documentation/ABI/testing/sysfs-platform-asus-wmi: 1 overboost); asusctl's main.rs (its active "
      "profile is the platform profile asusd sets)")
def platform_profile(machine: Machine) -> Iterator[Hit]:
    for setting in machine.settings:
        if setting.controller == platform.CONTROLLER and setting.value in ("performance", "balanced-performance"):
            # the firmware decides what the profile changes; that its fans run faster for the same work is likely
            yield Hit("platform-profile", (), "likely", {"profile": setting.value, "set_by": setting.name})


@rule("a curve that follows no reading", 67, "Documentation/hwmon/nct6775.rst (pwm[1-7]_temp_sel: the temperature "
      "source of the automatic fan modes); sysfs-interface.rst (tempN_input; pwmN_auto_channels_temp); nct6775.rst "
      "and it87's inputs: an open thermistor input reads its ceiling")
def follows_no_reading(machine: Machine) -> Iterator[Hit]:
    temps = {t.key: t for t in machine.temperatures}
    for fan in machine.fans:
        source = temps.get(fan.follows or "")
        if fan.follows_how != "declared" or source is None or not source.invalid or source.invalid == "relative" \
                or fan.controller in ("manual", "daemon", "none") or chip(fan.chip).kind != "superio":
            continue  # a duty set by hand or by a daemon does not come from the chip's own curve
        facts: dict[str, float | str] = {"why": source.invalid}
        if source.raw is not None:
            facts["raw_c"] = source.raw
        if fan.duty_percent is not None:
            facts["duty"] = fan.duty_percent
        full = (fan.duty_percent or 0.0) >= FULL_DUTY
        if full:
            facts["full"] = "yes"
        yield Hit("follows-no-reading", (fan.key, source.key), "known" if full else "likely", facts)
