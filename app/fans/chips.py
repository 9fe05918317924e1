"""What each fan or sensor chip is and does, as data: one table, looked up by the driver's name (hwmon ``name``, the
chip header of ``sensors``, "bmc" for a server's BMC). Each entry names where its behaviour is documented
(docs/FAN-RULES.md lists the documents); a chip that is not here is ``UNKNOWN``, and nothing is assumed of it.
Over 400 lines on purpose: the one table of what each chip is, which the rules read and nothing else holds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field, replace
from functools import lru_cache
from types import MappingProxyType
from typing import Literal, cast, get_args

from ..core.record import record
from ..core.vocabulary import driver_of
from .facts import Controller

# superio: a board's fan chip (nct67xx, it87), its automatic modes set up by the BIOS; ec: a laptop's or small
# machine's embedded controller; wmi: a board's firmware interface reading the same sensors; gpu: a graphics card;
# bmc: a server's baseboard management controller; aio: a liquid cooler or fan hub; cpu, chipset, storage, memory,
# acpi: sensors without fans; controller: a dedicated fan controller chip (MAX31785, pwm-fan); psu: a power supply
# that reports its own fan.
ChipKind = Literal["superio", "ec", "wmi", "gpu", "bmc", "aio", "cpu", "chipset", "storage", "memory", "acpi",
                   "controller", "psu", "unknown"]
# What a fan at 0 RPM is on this chip, by its design: "empty" (a header with nothing on it, or a fan another
# controller reads), "rest" (the controller stops its fans while cool: zero-RPM, fan-stop), "unreported" (the
# controller may never fill the tachometer), "rest-or-unreported", "failed" (a pump, a BMC's rotor), "unknown".
Zero = Literal["empty", "rest", "unreported", "rest-or-unreported", "failed", "unknown"]

_NONE_INT: Mapping[int, Controller] = MappingProxyType({})
_NO_NAMES: Mapping[int, str] = MappingProxyType({})


@record
class Chip:
    kind: ChipKind
    controller: Controller = "unknown"  # who drives its fans when nothing else is said
    zero: Zero = "unknown"
    rest_below_c: float | None = None  # a rest is its design only while its source is cooler than this
    no_pulses: tuple[int, ...] = ()  # raw speeds that mean the counter saw no pulses
    error_values: tuple[int, ...] = ()  # raw values that are the driver's error, not a speed
    target_echoes: bool = False  # its fanN_target repeats fanN_input: not a target
    pwm_enable: Mapping[int, Controller] = field(default_factory=lambda: _NONE_INT)
    not_available_c: tuple[float, ...] = ()  # temperatures the driver documents as "no sensor here"
    unconnected_from_c: float | None = None  # at or above this its thermistor inputs have nothing attached
    same_chip_as: tuple[str, ...] = ()  # other drivers of the same silicon (both may be loaded)
    mode_names: Mapping[int, str] = field(default_factory=lambda: _NO_NAMES)  # its driver's name for a pwm_enable
    duty_means_fan: bool = False  # it lists a duty only for a channel with a fan on it: a 0 there is not empty
    reads_back_duty: bool = False  # the duty it lists is read back from the controller, beside the one it asks
    stall_reads_zero: bool = False  # it reports a stalled fan as 0 RPM with no fault, as it reports a fan at rest
    relative_labels: tuple[str, ...] = ()  # its readings under these labels are on an arbitrary scale, not in °C
    min_is_floor: bool = False  # its fanN_min is the lowest speed its controller runs the fan at, not an alarm limit
    pump_floor_percent: float | None = None  # the lowest pump duty its driver sends (a lower duty is raised to it)
    shared_pwm: bool = False  # its one pwm output drives every fan it counts (elsewhere pwmN drives fanN's header)
    divisor_auto: bool = False  # its driver sets each fan's divisor itself, raising it when a reading is invalid
    extremes_seen: bool = False  # its fanN_min and fanN_max are the lowest and highest speeds read since the driver
    # loaded, not limits: neither is the fan's top speed or its alarm
    mapped_fans: str = ""  # the label its driver gives the fans it reads at registers that differ by board: with a
    # map that does not fit the board, every one of them reads 0 whatever turns there
    map_setting: str = ""  # where its driver's user chooses that register map
    connected_label: str = ""  # the labels its driver gives a channel its device detects a fan on (a pattern)
    absent_label: str = ""  # the label its driver gives a channel its device detects nothing on (a pattern)
    fan_supply: str = ""  # the voltage input that reads the rail its fans are powered from
    fan_supply_v: float = 0.0  # that rail's nominal voltage
    pwm_read_if_set: bool = False  # its pwmN reads only once software has written it: a duty read is one set by hand
    pwm_is_fan_in: tuple[int, ...] = ()  # the pwmN_enable modes in which its pwmN reads the fan's own level; in the
    # others it reads something else (none listed: in every mode)
    fan_listed_if_fitted: bool = False  # its driver lists fan attributes only for a board with a fan fitted
    speed_is_state: bool = False  # its fanN_input is the speed its table gives the state it drives, not a count
    zero_below_rpm: float | None = None  # its driver reports a fan turning at or below this speed as 0
    enable_means_detected: bool = False  # its pwmN_enable reads 1 where its device detects a fan, 0 where none
    lists_unfitted: bool = False  # its driver lists the fan its firmware describes, fitted or not (a 0: maybe none)
    refuses_under_floor: bool = False  # a duty set under its manual-control least is refused: the last one holds
    enable_0_if_full: bool = False  # its pwmN_enable reads 0 (full speed) also for a duty set by hand to full
    floor_up_to: float | None = None  # where its manual-control least is not read, the highest it is documented at
    unread_cpu_duty: float | None = None  # the duty its firmware runs its fan at while it cannot read the CPU
    own_cpu_curve: bool = False  # its firmware's source computes its fan's duty from its own CPU reading
    source: str = ""


# hwmon's sysfs ABI: pwmN_enable 0 = no control (full speed), 1 = manual, 2+ = automatic (the chip's own modes)
_SUPERIO_MODES: Mapping[int, Controller] = MappingProxyType({0: "none", 1: "manual", 2: "bios", 3: "bios", 4: "bios",
                                                             5: "bios"})
_GPU_MODES: Mapping[int, Controller] = MappingProxyType({0: "none", 1: "manual", 2: "firmware"})
_EC_MODES: Mapping[int, Controller] = MappingProxyType({0: "none", 1: "manual", 2: "ec", 3: "ec"})
_ABI = "kernel Documentation/hwmon/sysfs-interface.rst"

SUPERIO = Chip("superio", "bios", "empty", unconnected_from_c=108.0, pwm_enable=_SUPERIO_MODES,
               source=f"{_ABI}; Documentation/hwmon/nct6775.rst, it87.rst")
# it87's pwm_mode() reports "full speed" (0) for a channel whose duty is 0xff where the chip has no fan on/off control
# (and on its fourth channel): a duty written by hand to 255 reads back as pwmN_enable 0
IT87 = replace(SUPERIO, enable_0_if_full=True, source=f"{_ABI}; Documentation/hwmon/it87.rst; drivers/hwmon/it87.c "
               "(pwm_mode: 0, full speed, for a duty of 0xff without FANCTL_ONOFF)")
# An EC keeps its fans stopped while the machine is cool. No EC documents the temperature it starts them at: 70 °C
# is a cautious bound (docs/FAN-RULES.md, Thresholds), and the words say "probably" or name both causes.
EC = Chip("ec", "ec", "rest-or-unreported", rest_below_c=70.0, pwm_enable=_EC_MODES, unconnected_from_c=108.0,
          source=f"{_ABI}; Documentation/admin-guide/laptops/thinkpad-acpi.rst; Documentation/hwmon/dell-smm-hwmon.rst")
# asus-wmi's fan is the one the firmware's WMI describes: the driver guesses from its answer whether one is there
ASUS_WMI = Chip("ec", "ec", "rest-or-unreported", rest_below_c=70.0, pwm_enable=_EC_MODES, unconnected_from_c=108.0,
                lists_unfitted=True, error_values=(-1,), source="drivers/platform/x86/asus-wmi.c (asus_wmi_has_agfn_fan"
                ": \"We need to find a better way\"; asus_wmi_has_fan: \"ad hoc\"; fan1_input_show: -1 for an error); "
                "asus-nb-wmi.c (quirk wmi_ignore_fan: a fan the ACPI tables describe, none fitted)")
# A Mac's SMC: its fanN_min is the SMC's own minimum speed for the fan (the F<n>Mn key), which its automatic
# control keeps the fan at or above; hwmon's ABI makes fanN_min an alarm limit elsewhere
APPLESMC = Chip("ec", "ec", "rest-or-unreported", rest_below_c=70.0, pwm_enable=_EC_MODES, min_is_floor=True,
                source="drivers/hwmon/applesmc.c (fanN_min: the SMC key F<n>Mn, the fan's minimum speed; fanN_manual "
                "0: the SMC's own control); smcFanControl's smc -f (Min speed)")
WMI = Chip("wmi", "bios", "empty", unconnected_from_c=108.0, source="Documentation/hwmon/asus_wmi_sensors.rst, "
           "asus_ec_sensors.rst, gigabyte_wmi.rst (a board's firmware reading its own sensors)")
# amdgpu: zero-RPM stops the fan below fan_zero_rpm_stop_temperature, whose range on RDNA3 cards tops out near
# 60-67 °C: a rest up to the top of that range is within the design (a real RX 7900 XTX rests with its junction at
# 61 °C); a stopped counter may read 65535 (Documentation/gpu/amdgpu/thermal.rst, the gpu_od fan_ctrl files)
# Its hwmon hides every fan attribute on a board without a fan (no_fan) and on an APU: a fan1 it lists is fitted on a
# Radeon card (a passive Instinct MI100 lists one too: no product name in hwmon tells the two apart).
AMDGPU = Chip("gpu", "firmware", "rest", rest_below_c=67.0, no_pulses=(65535,), target_echoes=True,
              pwm_enable=_GPU_MODES, fan_listed_if_fitted=True,
              source="Documentation/gpu/amdgpu/thermal.rst; drivers/gpu/drm/amd/pm (hwmon); amdgpu_pm.c "
              "(hwmon_attributes_visible: \"Skip fan attributes if fan is not present\", and on APUs); "
              "radeon_pm.c (the same)")
# NVIDIA: fan-stop ("0 %") on GeForce cards while cool. NVML's fan speed is the fan's current speed, its target the
# one asked (nvmlDeviceGetTargetFanSpeed: the driver attempts to reach it), as nvidia-settings' GPUCurrentFanSpeed
# beside GPUTargetFanSpeed. Under manual control the card's VGA BIOS keeps a least speed: 20 % on most cards
# (nvfancontrol's README: "limits are arbitrary and vary among different VGA BIOS"), 30 % in nvidia-settings' range
NVIDIA = Chip("gpu", "firmware", "rest", rest_below_c=60.0, pwm_enable=_GPU_MODES, reads_back_duty=True,
              refuses_under_floor=True, floor_up_to=30.0, source="NVML API reference: nvmlDeviceGetFanSpeed_v2, "
              "nvmlDeviceGetTargetFanSpeed, nvmlDeviceGetFanControlPolicy_v2, nvmlDeviceGetMinMaxFanSpeed; "
              "nvidia-settings' GPUTargetFanSpeed (a value out of its range is refused, with the valid range); "
              "nvfancontrol's README (the least speed in manual control, set by the VGA BIOS)")
GPU_SENSOR = Chip("gpu", "firmware", "unknown", source="Documentation/gpu/ (i915, xe, nouveau hwmon)")
BMC = Chip("bmc", "bmc", "failed", source="IPMI v2.0 specification, sensor thresholds (35.x); ipmitool(1) sensor, sdr")
AIO = Chip("aio", "firmware", "empty", source="liquidctl documentation (docs/*-guide.md), the device's status: a fan "
           "channel with nothing on it reads 0 rpm (aquacomputer-quadro-guide), and some hubs keep the duty last set "
           "on a channel whatever is on it (lianli-uni-guide); a pump is its own rule")
# Coolers whose pump liquidctl's driver clamps up to a floor before sending (kraken2.py, kraken3.py, asetek.py)
KRAKEN_X2 = Chip("aio", "firmware", "empty", pump_floor_percent=50.0, source="liquidctl's kraken2.py (Kraken X42, X52, "
                 "X62 and X72: _SPEED_CHANNELS pump 50-100 %, fan 25-100 %; a duty clamped to them)")
KRAKEN_X3 = Chip("aio", "firmware", "empty", pump_floor_percent=20.0, source="liquidctl's kraken3.py (Kraken X53, X63, "
                 "X73 and Z53, Z63, Z73: pump 20-100 %; a duty clamped to it)")
ASETEK_690LC = Chip("aio", "firmware", "empty", pump_floor_percent=50.0, source="liquidctl's asetek.py (fifth "
                    "generation Asetek 690LC: EVGA CLC, NZXT Kraken X31/X41/X61, X40/X60; pump duty 50-100 %, clamped)")
# NZXT's HUE 2 fan controllers report only the channels with a fan on them, each with its duty and speed
HUE2_FANS = Chip("aio", "firmware", "empty", duty_means_fan=True, source="liquidctl's nzxt-hue2-guide (Smart Device "
                 "V2, RGB & Fan Controller: the device reports the state of each fan channel, as well as speed, duty)")
# Corsair's Commander Pro detects what is on each fan connector and its driver lists only those channels, labelled by
# the kind found; it reads the SATA power connector its fans are powered from (in0, the 12 V rail), runs from USB
CORSAIR_CPRO = Chip("aio", "firmware", "empty", connected_label=r"fan\d+ (3pin|4pin|other)",
                    absent_label=r"fan\d+ nc", fan_supply="in0", fan_supply_v=12.0, pwm_read_if_set=True,
                    source="Documentation/hwmon/corsair-cpro.rst (a USB device; fan[1-6]_label: the fan type as "
                    "detected by the device; in0_input: the voltage on its SATA power connector's 12 V); "
                    "drivers/hwmon/corsair-cpro.c (get_fan_cnct: a connector with nothing detected is not listed, the "
                    "others are labelled 3pin, 4pin or other; an early version labelled it nc; pwm[1-6]: can only be "
                    "read if pwm was set directly)")
# a Corsair device as OpenCorsairLink reads it: the duty the device reports (what set it, its own default or a host,
# is not said) and its speed; a channel with nothing on it reads 0
OPENCORSAIRLINK = Chip("aio", "unknown", "empty", source="OpenCorsairLink drivers/commanderpro.c (PWM: command 0x22, "
                       "RPM: 0x21; Mode: the fan type the channel is set to)")
# NZXT's Smart Device V2 and RGB & Fan Controller detect what is on each connector: the kernel's driver reads a
# channel's pwmN_enable as 1 where the device found a fan and 0 where it found none (read-only: not a mode), keeps a
# duty on a channel with no fan too (its speed 0), the one the host last set (no curve of its own through this driver)
NZXT_SMART2 = Chip("aio", "firmware", "empty", enable_means_detected=True, pwm_enable=MappingProxyType({1: "manual"}),
                   source="drivers/hwmon/nzxt-smart2.c (pwm_enable: fan_type != FAN_TYPE_NONE, the type the device "
                   "detected; fan_rpm: zero for channels without fans; duty_percent: non-zero even for channels "
                   "without fans); Documentation/hwmon/nzxt-smart2.rst")
# Corsair's HXi and RMi supplies run their own fan ("Fan control mode: Hardware"), and the guide's own status shows it
# at 0 rpm in that mode: a rest by design; no document gives the temperature it starts at.
PSU = Chip("psu", "firmware", "rest", source="liquidctl's corsair-hxi-rmi-psu-guide (fan control mode Hardware, its "
           "status reading 0 rpm); Documentation/hwmon/corsair-psu.rst")
# The kernel's thermal framework: a thermal zone turns the cooling devices bound to its active trip points on at a
# trip and off once it falls below the trip less its hysteresis; a fan cooling device off below its trip is at rest
KERNEL_FAN = Chip("controller", "kernel", "rest", source="Documentation/driver-api/thermal/sysfs-api.rst "
                  "(trip_point_*_temp, _type active, _hyst; cooling_device cur_state, max_state); "
                  "Documentation/devicetree/bindings/thermal/thermal-zones.yaml (trips, hysteresis, cooling-maps)")
# NoteBook FanControl writes a laptop's embedded controller's fan registers from its own curve (auto control) or
# at a speed set by hand; the EC stops the fan while cool, and the speed nbfc shows is the duty it reads back
NBFC = Chip("ec", "daemon", "rest-or-unreported", rest_below_c=70.0,
            pwm_enable=MappingProxyType({1: "manual", 2: "daemon"}), reads_back_duty=True,
            source="NoteBook FanControl's README (nbfc status: auto control, current and target fan speed); "
            "nbfc-linux src/fan.c (the target written, the current speed read back from the EC)")
# fw-fanctrl sets a Framework laptop's EC fans to the duty its curve asks (ectool fanduty); paused, the EC's own
# control has them again (ectool autofanctrl); the EC stops its fans while cool, its curve may ask 0 %
FW_FANCTRL = Chip("ec", "daemon", "rest-or-unreported", rest_below_c=70.0,
                  pwm_enable=MappingProxyType({2: "daemon", 3: "ec"}), source="fw-fanctrl's FanController "
                  "(adaptSpeed, pause: ectool autofanctrl) and EctoolHardwareController (ectool fanduty)")
# System76's open EC: its fan follows its own PECI reading of the CPU (system76_acpi's "CPU temp"); 0 when unread
SYSTEM76 = Chip("ec", "ec", "rest-or-unreported", rest_below_c=70.0, pwm_enable=_EC_MODES, unread_cpu_duty=50.0,
                own_cpu_curve=True,
                source="system76/ec src/board/system76/common/peci.c (peci_get_fan_duty: \"Default to 50% if there is "
                "an error\", peci_temp 0; \"Turn fan off if not in S0 state\"), acpi.c (EC RAM 0x07: peci_temp)")
# msi-ec: an MSI laptop's EC (its 0 °C where it has none, a discrete GPU that is off: no reading)
MSI_EC = Chip("ec", "ec", "rest-or-unreported", rest_below_c=70.0,
              source="the msi-ec driver's README (realtime_temperature, realtime_fan_speed, fan_mode, cooler_boost)")
CPU = Chip("cpu", source="Documentation/hwmon/coretemp.rst, k10temp.rst")
# before family 17h k10temp's one value (temp1, no label) is Tctl; from 17h its labelled values aim at the real one
K10TEMP = Chip("cpu", relative_labels=("temp1",), source="Documentation/hwmon/k10temp.rst (before family 17h, temp1 "
               "is Tctl: a non-physical temperature on an arbitrary scale; from 17h the labelled values aim at the "
               "real one)")
# a thermal zone's hwmon takes the zone's type as its name (the Pi's SoC zone "cpu_thermal", vcgencmd's measure_temp)
SOC_ZONE = Chip("cpu", source="Documentation/driver-api/thermal/sysfs-api.rst (a zone's hwmon is named for its "
                "type); Raspberry Pi's documentation of vcgencmd (measure_temp: the SoC's temperature)")
CHIPSET = Chip("chipset", source="Documentation/thermal/intel_pch_thermal (pch_* hwmon)")
STORAGE = Chip("storage", source="Documentation/hwmon/drivetemp.rst; NVMe composite temperature")
# a memory module's own sensor: DDR5's SPD hub (spd5118) and the JEDEC JC-42.4 sensors on DDR3/DDR4 modules (jc42)
MEMORY = Chip("memory", source="Documentation/hwmon/spd5118.rst (the SPD hub's temperature sensor on a DDR5 "
              "module); Documentation/hwmon/jc42.rst (JEDEC JC 42.4 temperature sensors on memory modules)")
ACPI = Chip("acpi", source="Documentation/driver-api/thermal (ACPI thermal zones: the firmware's own zones)")
CONTROLLER = Chip("controller", "unknown", "unknown", source=f"{_ABI}; Documentation/hwmon/max31785.rst, pwm-fan.rst")
# a single-board computer's fan on a PWM line: a thermal cooling device whose states the zone it is mapped to steps
# (cooling-levels: the duty of each state); whether a 0 is below its first trip cannot be told without the trips
PWM_FAN = Chip("controller", "kernel", "unknown", source="Documentation/devicetree/bindings/hwmon/pwm-fan.yaml "
               "(cooling-levels: the PWM duty of each cooling state); Documentation/hwmon/pwm-fan.rst; "
               "thermal-zones.yaml (cooling-maps)")
# gpio-fan drives a fan through GPIO lines, one speed state at a time, and counts nothing: its fan1_input is the RPM
# its speed map gives the state it set (gpio-fan.c, fan1_input_show), its fan1_min and fan1_max the map's ends; a
# board's device tree writes that map (gpio-fan.yaml: gpio-fan,speed-map), so a stopped fan reads its state's speed
GPIO_FAN = Chip("controller", "unknown", "unknown", speed_is_state=True,
                pwm_enable=MappingProxyType({0: "none", 1: "manual"}),
                source="Documentation/hwmon/gpio-fan.rst (pwm1_enable 0: full speed, 1: manual); drivers/hwmon/"
                "gpio-fan.c (fan1_input_show: fan_data->speed[speed_index].rpm, the speed map's RPM of the state set); "
                "Documentation/devicetree/bindings/hwmon/gpio-fan.yaml (gpio-fan,speed-map)")
# Microchip's EMC2301-2305 fan controllers (the Raspberry Pi Compute Module IO boards' among them): the driver turns
# the tachometer count into RPM and reports 0 where that comes to 480 or less before its x2 multiplier, so a fan
# turning at 960 RPM or slower reads 0 (emc2305.c, emc2305_show_fan: EMC2305_TACH_RANGE_MIN, _CNT_MULTIPLIER)
EMC2305 = Chip("controller", "unknown", "unknown", zero_below_rpm=960.0,
               source="drivers/hwmon/emc2305.c (emc2305_show_fan: a count at or below EMC2305_TACH_RANGE_MIN, 480, "
               "reads 0; above it the value is doubled, EMC2305_TACH_CNT_MULTIPLIER); Documentation/hwmon/emc2305.rst")
# OneXPlayer, AOKZOE and AYANEO handhelds' EC (oxp-sensors): its pwm1_enable is 1 for manual and 0 for the EC's own
# control, not the hwmon ABI's "0: no control, full speed"
OXP_EC = Chip("ec", "ec", "rest-or-unreported", rest_below_c=70.0, pwm_enable=MappingProxyType({0: "ec", 1: "manual"}),
              source="Documentation/hwmon/oxp-sensors.rst (pwm1_enable: write 1 to set manual, 0 to let the EC "
              "control the fan speed)")
UNKNOWN = Chip("unknown")

# A dual-fan ThinkPad's EC sets one level for both fans: thinkpad_acpi lists fan1_input and fan2_input beside one
# pwm1 (only an out-of-tree patch, with a per-model quirk, splits them into pwm1 and pwm2). Its pwm1 is the fan's
# level only under manual control: while the EC drives the fan (auto) or at full speed it reads the level the driver
# keeps for the next manual setting (7, 255, until one is written), not the level the fan runs at
THINKPAD = Chip("ec", "ec", "rest-or-unreported", rest_below_c=70.0, pwm_enable=MappingProxyType(
    {0: "none", 1: "manual", 2: "ec"}), not_available_c=(-128.0,), unconnected_from_c=108.0, shared_pwm=True,
    pwm_is_fan_in=(1,),
    source="Documentation/admin-guide/laptops/thinkpad-acpi.rst (fan, pwm1_enable 0/1/2; -128 = not available; "
    "one fan level for the EC's fans); drivers/platform/x86/thinkpad_acpi.c (fan_pwm1_show: in auto or full-speed "
    "mode pwm1 shows fan_control_desired_level)")
# Dell's EC stops its fans while the machine is cool and dell_smm reports their speed: a 0 there is a rest
DELL = Chip("ec", "ec", "rest", rest_below_c=70.0, error_values=(-1,), pwm_enable=_EC_MODES,
            source="Documentation/hwmon/dell-smm-hwmon.rst; i8kutils(1) (-1: the SMM call failed)")
# The Chrome EC (Chromebooks, Framework laptops): its thermal engine asks every fan for the highest of each sensor's
# share between that sensor's fan_off and fan_max, and a share of 0 turns the fans off (common/thermal.c, fan.c:
# fan_percent_to_rpm, which regulates each fan to a speed its tachometer counts); it marks a stalled fan 0xfffe
# (older ECs) or 0 (ec_commands.h)
# (EC_FAN_SPEED_STALLED_DEPRECATED: newer ECs report a stalled fan's speed as 0, and cros_ec_hwmon flags a fault
# only for 0xfffe, so its 0 may be a stall)
CROS_EC = Chip("ec", "ec", "rest", rest_below_c=70.0, no_pulses=(65534,), pwm_enable=_EC_MODES, stall_reads_zero=True,
               source="Chrome EC common/thermal.c (thermal_control, thermal_fan_percent), common/fan.c "
               "(fan_percent_to_rpm), include/ec_commands.h (EC_FAN_SPEED_STALLED); "
               "Documentation/hwmon/cros_ec_hwmon.rst")
MAX31785 = Chip("controller", "unknown", "unknown", no_pulses=(65535,),
                source="Documentation/hwmon/max31785.rst; openbmc phosphor-hwmon (65535: no tach, host off)")
# The nct6775 driver's family names its automatic modes (Documentation/hwmon/nct6775.rst, pwm[1-7]_enable), and
# where a chip has fan divisors (NCT6775F) the driver sets them itself, raising one each time a reading is invalid
NCT6775 = Chip("superio", "bios", "empty", unconnected_from_c=108.0, pwm_enable=_SUPERIO_MODES,
               mode_names=MappingProxyType({2: "Thermal Cruise", 3: "Fan Speed Cruise", 4: "SmartFan III",
                                            5: "SmartFan IV"}), divisor_auto=True,
               source=f"{_ABI}; Documentation/hwmon/nct6775.rst (pwm_enable 2-5; the driver sets the fan divisor)")
# The w83627ehf driver's chips: a board's fan chip like the rest, whose fan divisors the driver adjusts itself
# (lm-sensors' doc/fan-divisors: "the w83627ehf driver exposes fan divisor values, but they are adjusted
# automatically by the driver")
W83627EHF = Chip("superio", "bios", "empty", unconnected_from_c=108.0, pwm_enable=_SUPERIO_MODES, divisor_auto=True,
                 source=f"{_ABI}; Documentation/hwmon/w83627ehf.rst; lm-sensors' doc/fan-divisors")
NCT6683 = Chip("superio", "bios", "empty", unconnected_from_c=108.0, pwm_enable=_SUPERIO_MODES,
               same_chip_as=("nct6687",), source="Documentation/hwmon/nct6683.rst; the out-of-tree nct6687 driver")
# The out-of-tree nct6687 driver keeps, beside each reading, the lowest and highest it has read since it loaded, and
# shows them as fanN_min and fanN_max (nct6687.c, nct6687_update_fans: rpm[1] = MIN, rpm[2] = MAX of the readings)
NCT6687 = Chip("superio", "bios", "empty", unconnected_from_c=108.0, pwm_enable=MappingProxyType(
    {1: "manual", 99: "bios"}), same_chip_as=("nct6683",), extremes_seen=True, mapped_fans="System Fan",
    map_setting="the driver's fan_config parameter: default or msi_alt1",
    source="the out-of-tree nct6687d driver's README (fan_config, default or msi_alt1: \"motherboards which need this "
    "will show CPU/Pump RPMs but no data on System fans\"); its nct6687.c (nct6687_update_fans: fanN_min and fanN_max "
    "are the lowest and highest speeds read since the driver loaded; the fans' labels)")

# Exact names first, then patterns (a driver and its numbered chips: nct6775 ... nct6799, it8686 ...).
EXACT: Mapping[str, Chip] = MappingProxyType({
    "amdgpu": AMDGPU, "radeon": AMDGPU, "nvidia": NVIDIA, "gpu_nvidia": NVIDIA, "nouveau": GPU_SENSOR,
    "i915": GPU_SENSOR, "xe": GPU_SENSOR, "bmc": BMC, "thinkpad": THINKPAD, "dell_smm": DELL, "dell_ddv": DELL,
    "i8k": DELL, "asus": ASUS_WMI, "asus_nb_wmi": ASUS_WMI, "system76_acpi": SYSTEM76, "system76": SYSTEM76,
    "cros_ec": CROS_EC, "framework": CROS_EC, "msi_wmi_platform": EC, "hp": EC, "msi_ec": MSI_EC,
    "applesmc": APPLESMC, "acpi_fan": EC, "thinkpad_acpi": THINKPAD, "hp_wmi_sensors": WMI,  # HP business machines'
    # firmware sensors; handhelds' and small machines' embedded controllers (Documentation/hwmon: steamdeck-hwmon,
    # oxp-sensors, gpd-fan, surface_fan)
    "steamdeck_hwmon": EC, "oxpec": OXP_EC, "oxp_ec": OXP_EC, "gpd_fan": EC, "gpdfan": EC, "surface_fan": EC,
    # gaming laptops' ECs: acer-wmi's Predator sensors (drivers/platform/x86/acer-wmi.c registers hwmon "acer", the
    # fans' speeds read from the EC) and the out-of-tree legion-laptop's (LenovoLegionLinux's README: a fan that is
    # off reads 0, and the discrete GPU's temperature reads 0 while it sleeps)
    "acer": EC, "legion_hwmon": EC,
    # a TUXEDO laptop's EC (Clevo or Uniwill) as tuxedo_io answers tuxedo-rs' tailor_hwcaps: its fans' duties
    "tuxedo": EC,
    "nct6683": NCT6683, "nct6687": NCT6687, "max31785": MAX31785, "pwmfan": PWM_FAN, "pwm_fan": PWM_FAN,
    # the Raspberry Pi 5's pwm-fan, named by its device-tree node (bcm2712-rpi-5-b.dts: cooling_fan, "pwm-fan")
    "cooling_fan": PWM_FAN,
    "gpio_fan": GPIO_FAN, "emc2305": EMC2305, "mlxsw": CONTROLLER, "coretemp": CPU, "k10temp": K10TEMP, "zenpower": CPU,
    "cpu_thermal": SOC_ZONE, "acpitz": ACPI, "nvme": STORAGE, "drivetemp": STORAGE, "spd5118": MEMORY, "jc42": MEMORY,
    "asuswmisensors": WMI, "asus_wmi_sensors": WMI,
    "asusec": WMI, "asus_ec_sensors": WMI, "gigabyte_wmi": WMI, "liquidctl": AIO, "corsairpsu": PSU, "nbfc": NBFC,
    "liquidctl device": AIO,  # a liquidctl device whose name line was not pasted (app.collect.liquidctl.UNNAMED)
    "fw_fanctrl": FW_FANCTRL,
})
PATTERNS: tuple[tuple[str, Chip], ...] = (
    (r"nzxt (smart device v2|rgb & fan controller)\b.*", HUE2_FANS),
    (r"nct(6106|6116|677[5-9]|679[1-9])", NCT6775),
    (r"w83627ehf|w83627dhg\w*|w83627uhg|w83667hg\w*", W83627EHF),
    (r"it8\d{3}\w*|it87\w*", IT87),
    (r"nct6\d{3}[a-z]?|nct67\w*|w83\w+|f718\w+|f71\w+|sch5\w+|nct5\w+", SUPERIO),
    (r"pch_\w+", CHIPSET),
    (r"cooling_device\d+", KERNEL_FAN),
    (r"corsair (rm|hx)\d+i\b.*", PSU),
    # liquidctl's names of the coolers whose pump duty its driver clamps (their drivers' SUPPORTED_DEVICES)
    (r"nzxt kraken x \(x42, x52, x62 or x72\).*", KRAKEN_X2),
    (r"nzxt kraken [xz] \((x53, x63 or x73|z53, z63 or z73)\).*", KRAKEN_X3),
    (r"asetek 690lc\b.*", ASETEK_690LC),
    (r"opencorsairlink: .*", OPENCORSAIRLINK),
    (r"corsaircpro|corsair (commander pro|obsidian 1000d)\b.*", CORSAIR_CPRO),
    (r"nzxtsmart2", NZXT_SMART2),
    (r"(corsair|nzxt|kraken|hydro|commander|smart device|grid|aquacomputer|octo|quadro|d5next|lian li uni)\b.*", AIO),
    # the other coolers liquidctl's device guides name, as its status heads them (MSI MPG Coreliquid, Gigabyte Aorus
    # Waterforce, ASUS ROG Ryujin, Razer Hanbo, EVGA CLC, Asetek)
    (r"(msi mpg coreliquid|gigabyte aorus waterforce|asus rog ryujin|razer hanbo|evga clc|asetek)\b.*", AIO),
    # the kernel's cooler drivers by their hwmon names (Documentation/hwmon: corsair-cpro, nzxt-smart2, nzxt-kraken2,
    # nzxt-kraken3, aquacomputer_d5next, gigabyte_waterforce, asus_rog_ryujin): a channel with nothing on it reads 0
    (r"nzxtsmart2|kraken[23]|z53|kraken2023\w*|aquaero|farbwerk\w*|highflow\w*|leakshield|aquastream\w*|"
     r"poweradjust\d*|waterforce|rog_ryujin", AIO),
    (r"dell\w*", DELL),
    # the BSDs' drivers by their device names (OpenBSD's it(4), lm(4), acpithinkpad(4), asmc(4), ipmi(4), km(4),
    # cpu(4), acpitz(4), aibs(4) as sysctl hw.sensors names them; FreeBSD's dev.cpu.N.temperature)
    (r"it\d{1,2}|lm\d{1,2}|wbsio\d*|nct\d{1,2}", SUPERIO),
    (r"acpithinkpad\d*", THINKPAD),
    (r"asmc\d*", EC),
    (r"ipmi\d*", BMC),
    (r"cpu\d*|km\d*|ksmn\d*", CPU),
    (r"acpitz\d+", ACPI),
    (r"pchtemp\d*", CHIPSET),
    (r"aibs\d*", WMI),
)


def controller_of(entry: Chip, pwm_enable: int | None, duty: float | None, stated: object = None) -> Controller:
    """Who sets a fan of this chip: the capture's own word for it where one is stated (jetson_clocks: nvfancontrol
    active); the mode its pwm_enable names where one is read; else a hand (a person or a program) where its chip's
    pwm reads only once written and a duty is read; else the chip's own controller."""
    if stated in get_args(Controller):
        return cast(Controller, stated)
    if pwm_enable is not None:
        return entry.pwm_enable.get(pwm_enable, entry.controller)
    return "manual" if entry.pwm_read_if_set and duty is not None else entry.controller


def fan_duty(entry: Chip, pwm_enable: int | None, duty: float | None) -> float | None:
    """A fan's duty as its chip's pwm reads it, None where in this mode (or with no mode read) that pwm is not the
    fan's level."""
    if entry.pwm_is_fan_in and pwm_enable not in entry.pwm_is_fan_in:
        return None
    return duty


# A quantity a driver reports through a fan channel, its unit in the channel's label: the Aquacomputer devices' flow
# (dL/h), water quality (%), conductivity (nS/cm) and pressure (mbar) are fanN_input values labelled so
# (aquacomputer_d5next.c: label_quadro_speeds "Flow speed [dL/h]", label_highflownext_fan_speed "Water quality [%]",
# "Conductivity [nS/cm]", label_aquastreamult_speeds "Pressure [mbar]"): a reading, never a fan
# (a unit has no blank: "[Pump Fan]" is a name a tool prints beside the channel)
_OTHER_QUANTITY = re.compile(r"\[(?!rpm\])[^\]\s]{1,8}\]\s*$", re.IGNORECASE)


def not_a_fan(label: str | None) -> bool:
    """Whether a fan channel's label names another quantity's unit in brackets: a flow, a pressure, a water
    quality its driver reports through a fan channel, not a fan's speed."""
    return bool(label and _OTHER_QUANTITY.search(label))


def fitted(entry: Chip, label: str) -> bool:
    """Whether a fan is fitted because its chip's hwmon lists it (its channel, fanN): a chip whose driver lists fan
    attributes only for a board with a fan. Another tool's fan of the same chip (amd-smi's FAN) says nothing."""
    return entry.fan_listed_if_fitted and re.fullmatch(r"fan\d+", label.strip()) is not None


def detected(entry: Chip, label: str, pwm_enable: int | None = None) -> bool | None:
    """Whether the device says a fan is on the channel its driver labels ``label``: True where the label is the
    one its driver gives a detected fan, False where the one it gives an empty connector (or where its pwm_enable
    is what it reads of that, nzxt-smart2's), None where it says neither."""
    if entry.enable_means_detected and pwm_enable in (0, 1):
        return pwm_enable == 1
    if entry.connected_label and re.fullmatch(entry.connected_label, label.strip(), re.IGNORECASE):
        return True
    if entry.absent_label and re.fullmatch(entry.absent_label, label.strip(), re.IGNORECASE):
        return False
    return None


@lru_cache(maxsize=512)
def chip(name: str | None) -> Chip:
    """What the chip or driver ``name`` is (``UNKNOWN`` for one the table does not know). Looked up once per name
    (every rule asks of every fan and temperature, every tick)."""
    if not name:
        return UNKNOWN
    key = name.strip().lower().replace("-", "_")
    if key in EXACT:
        return EXACT[key]
    found = next((entry for pattern, entry in PATTERNS if re.fullmatch(pattern, key)), UNKNOWN)
    driver = driver_of(name.strip())  # a device named by its whole sensors header ("amdgpu-pci-0b00"): its driver's
    return chip(driver) if found is UNKNOWN and driver != name.strip() else found
