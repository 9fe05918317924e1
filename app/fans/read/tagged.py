"""Readings in tagged and metric text: ``nvidia-smi -q -x`` XML, whole or an excerpt (``<gpu id=…>``,
``<product_name>``, ``<fan_speed>30 %</fan_speed>``, ``<gpu_temp>``, ``<power_draw>``/``<average_power_draw>``),
read by its tags without an XML parser (nothing is expanded, an excerpt reads as well as a document); Prometheus's
text exposition of hwmon (node_exporter's ``node_hwmon_fan_rpm{chip="…",sensor="fan2"} 1077``,
``node_hwmon_temp_celsius``, ``node_hwmon_pwm``, ``node_hwmon_fan_target_rpm``) and of GPUs (dcgm-exporter's
``DCGM_FI_DEV_GPU_TEMP``, ``_FAN_SPEED``, ``_POWER_USAGE``, the clock event reasons) and of a BMC's sensors
(ipmi_exporter's ``ipmi_fan_speed_rpm{id="12",name="Fan1A"} 4560`` with its state); and monitoring plugins'
performance data (``'fan_Fan 1 Front Tach'=26%;;;0;100 'temp_CPU 1 Temp'=30C;…``, a BMC's through SNMP); and
psutil's sensors as Python prints them."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..facts import Reading, Unit
from ..values import parse

_GPU = re.compile(r"<gpu\s+id=\"([^\"]*)\"")
_TAG = re.compile(r"<(product_name|fan_speed|gpu_temp|power_draw|average_power_draw|instant_power_draw)>"
                  r"([^<]*)</\1>")
_FIELD = {"fan_speed": "fan.speed", "gpu_temp": "temperature.gpu", "power_draw": "power.draw",
          "average_power_draw": "power.draw", "instant_power_draw": "power.draw"}
_METRIC = re.compile(r"^node_hwmon_(fan_rpm|fan_target_rpm|fan_min_rpm|fan_max_rpm|temp_celsius|pwm|pwm_enable|"
                     r"pwm_mode|fan_alarm|fan_fault)\{([^}]*)\}\s+([-+0-9.eE]+|NaN)\s*$")
# node_exporter's annotations (collector/hwmon_linux.go): a chip's driver name, a sensor's label file
_NAMES = re.compile(r"^node_hwmon_(chip_names|sensor_label)\{([^}]*)\}\s+1(?:\.0)?\s*$")
_LABEL = re.compile(r"(\w+)=\"([^\"]*)\"")
_PERF = re.compile(r"'(fan|temp)_([^']+)'=(-?[\d.]+)(%|RPM|rpm|C|F)?;")


def xml(text: str) -> list[Reading]:
    """nvidia-smi -q -x's GPUs (chip "nvidia", each GPU's index in order met)."""
    if "<fan_speed>" not in text and "<gpu_temp>" not in text:
        return []
    found: list[Reading] = []
    index, name = -1, ""
    for line in text.splitlines():
        if _GPU.search(line):
            index, name = index + 1, ""
        for tag, value in _TAG.findall(line):
            index = max(index, 0)
            if tag == "product_name":
                name = value.strip()
                continue
            number, unit, raw = parse(value)
            found.append(Reading("nvidia", _FIELD[tag], number, raw, unit, None, 0,
                                 {"gpu": float(index), "name": name}))
    return found


def prometheus(text: str) -> list[Reading]:
    """node_exporter's hwmon metrics: the attribute from the metric's name and its sensor label, in sysfs units
    made plain (the exporter already gives degrees and RPM); the chip by its driver's name and the sensor by its
    label where the exporter's annotations give them."""
    chips, labels = _annotations(text)
    found: list[Reading] = []
    for metric, named, value in _metrics(_METRIC, text):
        sensor, device = named.get("sensor", ""), named.get("chip", "")
        chip = chips.get(device) or _chip(device)
        number = int(re.sub(r"\D", "", sensor) or 0)
        attr, unit = {"fan_rpm": (f"fan{number}_input", " RPM"), "fan_target_rpm": (f"fan{number}_target", " RPM"),
                      "fan_min_rpm": (f"fan{number}_min", " RPM"), "fan_max_rpm": (f"fan{number}_max", " RPM"),
                      "temp_celsius": (f"temp{number}_input", " C"), "pwm": (f"pwm{number}", ""),
                      "pwm_enable": (f"pwm{number}_enable", ""), "pwm_mode": (f"pwm{number}_mode", ""),
                      "fan_alarm": (f"fan{number}_alarm", ""), "fan_fault": (f"fan{number}_fault", "")}[metric]
        reading, unit_read, raw = parse(value + unit)
        found.append(Reading(chip, labels.get((device, sensor)) or sensor, reading, raw, unit_read, attr))
    return found


# dcgm-exporter's scrape (DCGM's fields, dcgm_fields.h): a GPU's temperature (°C), fan speed (% of its maximum),
# power draw (W), utilization (%) and its clock event reasons (NVML's mask; DCGM_FI_DEV_CLOCK_THROTTLE_REASONS before
# DCGM 3.3), each labelled with the GPU's index and its model name
_DCGM = re.compile(r"^DCGM_FI_DEV_(GPU_TEMP|FAN_SPEED|POWER_USAGE|GPU_UTIL|CLOCK_THROTTLE_REASONS|CLOCKS_EVENT_REASONS)"
                   r"\{([^}]*)\}\s+([-+0-9.eE]+|NaN)\s*$")
_DCGM_FIELD = {"GPU_TEMP": ("temperature.gpu", " C"), "FAN_SPEED": ("fan.speed", " %"),
               "POWER_USAGE": ("power.draw", " W"), "GPU_UTIL": ("utilization.gpu", " %"),
               "CLOCK_THROTTLE_REASONS": ("reasons.active", ""), "CLOCKS_EVENT_REASONS": ("reasons.active", "")}


def dcgm(text: str) -> list[Reading]:
    """dcgm-exporter's metrics of each GPU, read as nvidia-smi's fields of that GPU (chip "nvidia", its index and
    model name from the labels), so the GPU's rules read them alike."""
    found: list[Reading] = []
    for metric, named, value in _metrics(_DCGM, text):
        if not named.get("gpu", "").isdigit():
            continue
        field, unit = _DCGM_FIELD[metric]
        number, unit_read, raw = parse(value + unit)
        found.append(Reading("nvidia", field, number, raw, unit_read, None, 0,
                             {"gpu": float(named["gpu"]), "name": named.get("modelName", "")}))
    return found


def _metrics(pattern: re.Pattern[str], text: str) -> Iterator[tuple[str, dict[str, str], str]]:
    """Each line of Prometheus's text exposition that ``pattern`` takes: the metric's name, its labels, its value."""
    for line in text.splitlines():
        match = pattern.match(line.strip())
        if match:
            metric, tags, value = match.groups()
            yield metric, dict(_LABEL.findall(tags)), value


def _annotations(text: str) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    """node_hwmon_chip_names' driver name of each chip and node_hwmon_sensor_label's label of each sensor."""
    chips: dict[str, str] = {}
    labels: dict[tuple[str, str], str] = {}
    for line in text.splitlines():
        match = _NAMES.match(line.strip())
        if match:
            named = dict(_LABEL.findall(match.group(2)))
            if match.group(1) == "chip_names" and named.get("chip") and named.get("chip_name"):
                chips[named["chip"]] = named["chip_name"]
            elif named.get("chip") and named.get("sensor") and named.get("label"):
                labels[(named["chip"], named["sensor"])] = named["label"]
    return chips, labels


def _chip(label: str) -> str:
    """node_exporter's chip label ("platform_nct6775_656", "pci0000:00_0000:00:18_3") as the driver's name where
    it shows one."""
    named = re.search(r"(nct\d{4}|it\d{4}|k10temp|coretemp|amdgpu|thinkpad|dell_smm|applesmc|nvme|acpitz)", label)
    return named.group(1) if named else label


# ipmi_exporter's sensors (its metrics documentation): a fan's speed in RPM or as a ratio of its maximum, a
# temperature in °C, each beside its state, 0 nominal, 1 warning, 2 critical, NaN N/A (FreeIPMI's ipmi-sensors' State
# column, which the exporter reads)
_IPMI = re.compile(r"^ipmi_(fan_speed_rpm|fan_speed_ratio|fan_speed_state|temperature_celsius|temperature_state)"
                   r"\{([^}]*)\}\s+([-+0-9.eE]+|NaN)\s*$")
_IPMI_STATE = {"0": "nominal", "1": "warning", "2": "critical"}


def ipmi_exporter(text: str) -> list[Reading]:
    """ipmi_exporter's fan and temperature sensors, each with the state the BMC gives it, read as the BMC's (chip
    "bmc"), in the order met; a ratio is the fan's share of its maximum in %, NaN no reading."""
    values: dict[tuple[str, str], tuple[str, Unit]] = {}
    states: dict[tuple[str, str], str] = {}
    for metric, named, value in _metrics(_IPMI, text):
        sensor = (named.get("id", ""), named.get("name", ""))
        if metric.endswith("_state"):
            states[sensor] = _IPMI_STATE.get(value.removesuffix(".0"), "")
        else:
            ratio = metric == "fan_speed_ratio" and value != "NaN"
            values[sensor] = (f"{float(value) * 100:g}" if ratio else value,
                              "%" if metric == "fan_speed_ratio" else "rpm" if metric == "fan_speed_rpm" else "c")
    found = []
    for sensor, (value, unit) in values.items():
        number, _, raw = parse(f"{value} {unit}")
        found.append(Reading("bmc", sensor[1], number, raw, unit, None, 0, {"status": states.get(sensor, "")}))
    return found


def perfdata(text: str) -> list[Reading]:
    """Monitoring plugins' performance data: ``'fan_NAME'=26%`` and ``'temp_NAME'=30C`` (a BMC's, through SNMP)."""
    found: list[Reading] = []
    for kind, name, value, unit in _PERF.findall(text):
        if kind == "temp":
            celsius = float(value) if unit != "F" else (float(value) - 32) * 5 / 9
            found.append(Reading("bmc", name, celsius, f"{value}{unit}", "c"))
        else:
            number, unit_read, raw = parse(f"{value} {unit or 'RPM'}")
            found.append(Reading("bmc", name, number, raw, unit_read))
    return found


# psutil's sensors_fans() and sensors_temperatures() as Python prints them: {'thinkpad': [sfan(label='',
# current=0)], 'coretemp': [shwtemp(label='Package id 0', current=93.0, high=100.0, critical=100.0)]}; each
# chip's list, its items' labels and current values (psutil's documentation: RPM and °C)
_PSUTIL = re.compile(r"'([\w-]+)':\s*\[|\b(sfan|shwtemp)\(label='((?:[^'\\]|\\.)*)',\s*current=(-?[\d.]+)")


def psutil(text: str) -> list[Reading]:
    found: list[Reading] = []
    chip: str | None = None
    counts: dict[tuple[str | None, str], int] = {}
    for match in _PSUTIL.finditer(text):  # a chip's name, then its items, in the order printed
        if match.group(1):
            chip = match.group(1)
            continue
        kind, label, value = match.group(2), match.group(3), match.group(4)
        counts[(chip, kind)] = counts.get((chip, kind), 0) + 1
        number, unit, raw = parse(f"{value} {'RPM' if kind == 'sfan' else '°C'}")
        found.append(Reading(chip, label or f"{'fan' if kind == 'sfan' else 'temp'}{counts[(chip, kind)]}", number,
                             raw, unit))
    return found
