"""The capture parsers: each reads one family of formats into readings (``app.fans.facts.Reading``) and says
nothing. ``FORMATS`` is the registry: a new format is one module and one row here. The first that finds a reading
in a text reads it (a JSON document whole; then tool tables; then labelled lines, the general reader)."""

from __future__ import annotations

import re
from collections.abc import Callable

from ..facts import Reading
from . import (
    cardfiles,
    chipheader,
    columns,
    corsairlink,
    critical,
    csv,
    daemonlog,
    ectool,
    fan2go,
    frameworktool,
    fwfanctrl,
    gpustat,
    hddfc,
    i8k,
    idracfc,
    jsonish,
    legion,
    lhm,
    lines,
    macsmc,
    msiec,
    nbfc,
    nvmlgpucontrol,
    nvsettings,
    oneline,
    pwmconfig,
    smart,
    smfc,
    sysctl,
    tables,
    tagged,
    tailor,
    tegra,
    turbostat,
)
from .prompts import PROMPT

FORMATS: tuple[tuple[str, Callable[[str], list[Reading]]], ...] = (
    ("JSON (sensors -j, liquidctl --json, Redfish, amd-smi)", jsonish.read),
    ("nvidia-smi -q -x XML", tagged.xml),
    ("Prometheus metrics (node_exporter's hwmon)", tagged.prometheus),
    ("Prometheus metrics (dcgm-exporter's GPUs)", tagged.dcgm),
    ("Prometheus metrics (ipmi_exporter's BMC sensors)", tagged.ipmi_exporter),
    ("a monitoring plugin's performance data", tagged.perfdata),
    ("psutil's sensors_fans() and sensors_temperatures()", tagged.psutil),
    ("nvidia-settings' answer to fan writes (assigned value)", nvsettings.read),
    ("nvidia-smi --query-gpu CSV", csv.read),
    ("nvidia-smi dmon", columns.dmon),
    ("gpustat", gpustat.read),
    ("a GPU fan daemon's debug log (nvfancontrol -d)", daemonlog.nvfancontrol),
    ("NVML-GPU-Control's log", nvmlgpucontrol.read),
    ("smfc's log (a Supermicro BMC's zones set by smfc)", smfc.read),
    ("hddfancontrol's log (a fan set for its drives' temperature)", hddfc.read),
    ("Dell_iDRAC_fan_controller's log (a PowerEdge's fans set through its iDRAC)", idracfc.read),
    ("a sensor logger's CSV (units in its header)", csv.logged),
    ("OpenCorsairLink's status of a Corsair device", corsairlink.read),
    ("a | table (ipmitool sensor, sdr, ipmiutil; FreeIPMI's, or its comma-separated output) or a sensor's key-value "
     "block (ipmitool sensor get, omreport, iLO's show /system1)",
     tables.read),
    ("HP's hpasmcli show fans / show temp", columns.hpasmcli),
    ("Dell's racadm getsensorinfo", columns.racadm),
    ("HPE iLO's Fans page copied as text", columns.ilo),
    ("amd-smi's default table", columns.amdsmi_table),
    ("NoteBook FanControl's status (nbfc status)", nbfc.read),
    ("fw-fanctrl's status (fw-fanctrl print)", fwfanctrl.read),
    ("the msi-ec driver's files", msiec.read),
    ("tuxedo-rs' tailor_hwcaps (a TUXEDO laptop's embedded controller)", tailor.read),
    ("the legion-laptop driver's debug dump (LenovoLegionLinux's debugfs fancurve)", legion.read),
    ("/proc/i8k or i8kctl (Dell's SMM: the CPU's temperature, each fan's state and speed)", i8k.read),
    ("the Chrome EC's ectool (temps all, with its fan table; pwmgetfanrpm)", ectool.read),
    ("Framework's framework_tool --thermal (its embedded controller's sensors and fans)", frameworktool.read),
    ("fan2go detect", fan2go.detect),
    ("fan2go's debug log (each curve's sensor and the pwm it asks)", fan2go.log_readings),
    ("pwmconfig's listing of outputs and fan inputs", pwmconfig.read),
    ("a LibreHardwareMonitor or Open Hardware Monitor report", lhm.read),
    ("CPUID HWMonitor's saved report", lhm.hwmonitor),
    ("a space-aligned GPU table (rocm-smi)", columns.read),
    ("rocm-smi -a's per-card lines", columns.detail),
    ("a Mac's SMC (smcFanControl's smc -f, osx-cpu-temp)", macsmc.read),
    ("turbostat's table (CoreTmp, PkgTmp)", turbostat.read),
    ("an NVIDIA Jetson's tegrastats, its pwm-fan's files or jetson_clocks --show", tegra.read),
    ("the BSDs' sysctl sensors (OpenBSD's hw.sensors, FreeBSD's dev.cpu, acpi_ibm, asmc)", sysctl.read),
    ("smartctl's drive temperatures (ATA attributes, the NVMe health log, SCSI)", smart.read),
    ("Windows' ACPI thermal zones as PowerShell's table shows them (MSAcpi_ThermalZoneTemperature)",
     oneline.acpi_zone_table),
    ("labelled readings (sensors, label: value, path:value)", lines.read),
)


MAX_CHIPS = 256  # chips read from one text: a machine has a few dozen (the replay's tree keeps as many)


def read(text: str) -> tuple[list[Reading], str | None]:
    """The readings of ``text`` and the format that read them; ([], None) for a text with no reading in it. What
    ``sensors`` writes to stderr beside any of its formats (a subfeature it could not read) is read as well, and so
    is a command's output of another format in a paste of several commands (``$ sensors`` then ``$ ipmitool sdr``):
    each command's output is read on its own, and those a format other than the whole text's reads are added. The
    readings of the first MAX_CHIPS chips only: past them a paste is not one machine, and judging every fan of
    95,000 chips cost minutes."""
    if len(text) > PROBE_CHARS:  # past MAX_CHIPS chips a listing is not read on (its reader cost seconds a MiB)
        text = chipheader.within_chips(text, MAX_CHIPS)
    errors = lines.sensors_errors(text)
    control = i8k.control(text)  # a Dell's BIOS fan control turned off, i8kfan's states: beside whatever is read
    found, name = _first(text)
    if not found:
        return errors, "sensors' errors" if errors else None
    names = [name]
    seen = {(r.chip, r.label, r.unit) for r in found}  # one sensor in two formats (sensors, then sensors -j): once
    for output in dict.fromkeys(_outputs(text)):  # one command's output pasted again reads as once
        more, other = _first(output)
        more = [r for r in more if (r.chip, r.label, r.unit) not in seen]
        if more and other not in names:  # another tool's output among the commands: read as that tool's
            found, names = [*found, *more], [*names, other]
            seen.update((r.chip, r.label, r.unit) for r in more)
    found = _first_chips(found)  # past MAX_CHIPS no more is judged, so no more is looked up (a card's files)
    limits = critical.limits(text)  # a temperature's critical limit, as sensors prints it beside the value
    card = cardfiles.readings(text, found)  # a card's pwm1, pwm1_enable cat'ed beside its listing
    return _first_chips([*_unlisted(errors, found), *found, *control, *limits, *card]), \
        " and ".join(n for n in names if n)


def _unlisted(errors: list[Reading], found: list[Reading]) -> list[Reading]:
    """sensors' errors but those its listing shows as well: the subfeature it could not read it lists as N/A
    (lm-sensors' prog/sensors/chips.c), so an error beside an N/A of that channel is that reading, not another."""
    shown = {(r.attr or "").partition("_")[0] for r in found if r.value is None and (r.raw or "").upper() == "N/A"}
    return [e for e in errors if (e.attr or "").partition("_")[0] not in shown]


PROBE_CHARS = 256 << 10  # a paste longer than this is tried by each format on its start first


def _first(text: str) -> tuple[list[Reading], str | None]:
    """The readings of the first format that reads anything in ``text``, and its name. A text longer than
    PROBE_CHARS (a paste is a few kilobytes; the limit, 4 MiB, is a machine's tens of thousands of chips or a
    mistake) is read whole only by a format that reads something in its first PROBE_CHARS: trying every format on
    megabytes of text cost seconds each."""
    probe = text[:text.rfind("\n", 0, PROBE_CHARS) + 1] if len(text) > PROBE_CHARS else None
    for name, parser in FORMATS:
        if probe is not None and not parser(probe):
            continue
        found = parser(text)
        if found:
            return found, name
    return [], None


_PROMPT = re.compile(r"^" + PROMPT + r"\s+\S", re.MULTILINE)  # a command after a shell's prompt


def _outputs(text: str) -> list[str]:
    """Each command's output in a paste of several, split at the prompts; none where fewer than two commands."""
    starts = [m.start() for m in _PROMPT.finditer(text)]
    if len(starts) < 2:
        return []
    return [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]


def _first_chips(found: list[Reading]) -> list[Reading]:
    chips: set[str | None] = set()
    kept = []
    for reading in found:
        if reading.chip not in chips and len(chips) >= MAX_CHIPS:
            continue
        chips.add(reading.chip)
        kept.append(reading)
    return kept
