"""Who sets a fan's speed, in words (``Fan.controller``, shown on the page and in ``fanwhy top``): made from what
was read (a chip's name and its ``pwmN_enable``, a daemon's configuration) and the chip table's knowledge of that
chip (``app.fans.chips``: its pwm_enable modes and its driver's names for them). Readers keep the kind
(``Fan.control``); the words are written here and nowhere else."""

from __future__ import annotations

from ..core.fan import FanControl
from .chips import chip
from .facts import Controller

# What a pwm_enable's controller kind is as the live fan's control (the hwmon ABI's three: full, manual, automatic)
_CONTROL: dict[Controller, FanControl] = {"none": "full-speed", "manual": "manual"}
_WHO: dict[Controller, str] = {"firmware": "the GPU's firmware", "ec": "the embedded controller",
                               "bios": "the board's automatic control", "bmc": "the BMC"}


def pwm_control(chip_name: str, enable: int | None) -> tuple[FanControl, str | None]:
    """(the control as a kind, who sets the speed in words) of a hwmon fan whose ``pwmN_enable`` reads ``enable``
    (the kernel's hwmon ABI: 0 no control, full speed; 1 manual; 2 and up the chip's automatic modes)."""
    if enable is None:
        return "unknown", None
    entry = chip(chip_name)
    if entry.enable_means_detected and enable == 0:  # not a mode: the device found no fan on the connector
        return "unknown", "no fan detected on this connector (pwm_enable 0)"
    kind = entry.pwm_enable.get(enable) or ("none" if enable == 0 else "manual" if enable == 1 else "unknown")
    control = _CONTROL.get(kind, "automatic")
    if kind == "none":  # the ABI's 0; a driver that names 0 otherwise (oxp-sensors: its EC) is said by that
        return control, f"no control: the fan runs at full speed (pwm_enable {enable})"
    if kind == "manual":
        return control, f"set by software (pwm_enable {enable}: a fan daemon, or a person)"
    if enable in entry.mode_names:
        return control, f"the board's {entry.mode_names[enable]} (pwm_enable {enable})"
    if kind == "ec":
        return control, f"the embedded controller (EC auto, pwm_enable {enable})"
    if kind in _WHO and kind != "bios":
        return control, f"{_WHO[kind]} (pwm_enable {enable})"
    return control, f"the chip's own control (pwm_enable {enable})"


def zero_rpm_said(controller: str | None) -> str:
    """A controller's words with its zero-RPM (fan-stop) on (amdgpu's ``gpu_od/fan_ctrl/fan_zero_rpm_enable``)."""
    return (controller or "the GPU's firmware") + "; zero-RPM: the fan stops while the GPU is cool"


def hottest_of(sources: list[str]) -> str | None:
    """The words for what a daemon that takes the hottest of several sensors follows."""
    if not sources:
        return None
    return f"the hottest of {', '.join(sources)}" if len(sources) > 1 else sources[0]


def declared_said(daemon: str, where: str) -> str:
    """A fan a daemon's configuration drives."""
    return f"{daemon} (its configuration {where})"
