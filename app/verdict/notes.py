"""What a capture shows was done to a fan's control, in words (the notes app.collect.control_captures reads): the one
place these sentences are written. Each says what was read, and marks what is FanWhy's reading of it ("most
likely", "probably") apart from what the capture shows."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ..core.fan import FULL_PERCENT, Fan, Note
from ..core.jsonvalue import number
from ..core.snapshot import Snapshot

Facts = Mapping[str, float | str]


def note_words(notes: Sequence[Note], snap: Snapshot) -> list[str]:
    """One sentence for each note, in the order read (a note whose facts are missing says nothing)."""
    said = [_WORDS[n.kind](n.facts, snap) for n in notes]
    return [s for s in said if s]


def _n(facts: Facts, key: str) -> float:
    value = facts.get(key)
    return (number(value) or 0.0) if isinstance(value, (int, float)) else 0.0


def _curve_refused(f: Facts, _: Snapshot) -> str:
    return (f"The fan-curve points written ask for {_n(f, 'asked'):.0f} %, outside the {_n(f, 'low'):.0f}-"
            f"{_n(f, 'high'):.0f} % this card's fan curve accepts (amdgpu's OD_RANGE, hotspot {_n(f, 't_low'):.0f}-"
            f"{_n(f, 't_high'):.0f} °C): the driver refused them (Invalid argument), so the card stays on its own "
            "automatic curve.")


def _curve_locked(f: Facts, _: Snapshot) -> str:
    return ("This card's fan curve declares no usable range (amdgpu's OD_RANGE reads 0-0 °C and 0-0 %): every point "
            "written is refused (Invalid argument), so the fan stays under the card's built-in control.")


def _set_failed(f: Facts, _: Snapshot) -> str:
    device = str(f.get("device", ""))
    broken = " (liquidctl marks its driver broken)" if device.endswith("(broken)") else ""
    name = device.removesuffix("(broken)").strip()
    return (f"liquidctl cannot set {name}{broken}: \"{f.get('error')}\". It can read the controller but not drive "
            "it, so no software curve is in effect: the fans turn at what the controller itself holds (its own "
            "default, or the last speeds set), which nothing read here shows.")


def _fan_named(snap: Snapshot, channel: str) -> Fan | None:
    return next((fan for fan in snap.fans if (fan.label or "").lower().startswith(channel.lower())), None)


def _asked_duty(f: Facts, snap: Snapshot) -> str:
    fan = _fan_named(snap, str(f.get("channel")))
    if fan is None or fan.rpm is None:
        return ""
    if _n(f, "asked") >= FULL_PERCENT:  # asked for full speed, it runs at full speed: nothing held it lower
        return (f"The {f.get('channel')} was set to a fixed {_n(f, 'asked'):.0f} % and reads {fan.rpm:,} RPM: it runs "
                "at the full speed asked, not following a temperature.")
    return (f"The {f.get('channel')} was set to a fixed {_n(f, 'asked'):.0f} % and reads {fan.rpm:,} RPM: a fixed "
            "setting, not following a temperature.")


def _duty_ignored(f: Facts, _: Snapshot) -> str:
    others = int(_n(f, "others"))
    more = f" ({others} more channel{'s' if others > 1 else ''} the same)" if others else ""
    return (f"{f.get('channel')}'s duty went from {_n(f, 'duty_a'):.0f} % to {_n(f, 'duty_b'):.0f} % while its speed "
            f"stayed at {_span(_n(f, 'rpm_a'), _n(f, 'rpm_b'))} RPM{more}: the fans are not following the duties "
            "set; the duty lines echo what liquidctl asked for, not what the cooler does.")


def _span(a: float, b: float) -> str:
    low, high = sorted((a, b))
    return f"{low:,.0f}" if round(low) == round(high) else f"{low:,.0f}-{high:,.0f}"


def _daemon_not_obeyed(f: Facts, snap: Snapshot) -> str:
    gpu = int(_n(f, "gpu"))
    card = next((g for g in snap.gpus if g.index == gpu), None)
    now = card.fan_speed_percent if card is not None else None
    if now is None or abs(now - _n(f, "last")) < 5:
        return ""
    return (f"A fan daemon logged setting GPU {gpu}'s fan to {_n(f, 'first'):.0f} % and then {_n(f, 'last'):.0f} %, "
            f"and the card reads {now:.0f} %: the fan is not following it; the card or its driver holds this speed.")


def _tool_cannot_reach(f: Facts, _: Snapshot) -> str:
    cpu = f" while the CPU is at {_n(f, 'cpu_c'):.0f} °C" if "cpu_c" in f else ""
    return (f"{f.get('tool')} reads this machine's fan state as -1: it cannot reach the fan through Dell's SMM "
            f"interface, so i8kmon can neither read nor step it, and the fan stays at the step its firmware chose"
            f"{cpu} (Dell's firmware runs it in a few fixed steps).")


def _ec_lost_cpu(f: Facts, _: Snapshot) -> str:
    if "error" in f:
        held = f" reads {_n(f, 'duty') * 100 / 255:.0f} % ({_n(f, 'duty'):.0f} of 255): most likely" \
            if "duty" in f else ": its speed is then most likely"
        return (f"The embedded controller cannot read the CPU's temperature (peci_get_temp: hardware error "
                f"{f.get('error')}), so the fan{held} the controller's fallback speed, not an answer to heat.")
    return (f"The embedded controller's CPU reading is 0 °C while the CPU package is at {_n(f, 'cpu_c'):.0f} °C: it "
            f"has lost its CPU temperature (PECI), so its fan curve never starts and the fan reads "
            f"{_n(f, 'rpm'):,.0f} RPM while the CPU throttles.")


def _board_keeps_fans(f: Facts, _: Snapshot) -> str:
    low, high = _n(f, "low") * 100 / 255, _n(f, "high") * 100 / 255
    asked = f"{high:.0f} %" if low == high else f"{low:.0f}-{high:.0f} %"
    rpm = f" and the fan stays at {_n(f, 'rpm'):,.0f} RPM" if "rpm" in f else ""
    return (f"The pwm outputs were set by software ({asked}, manual){rpm}: on Gigabyte boards with an IT8689 the "
            "board's own fan controller most likely overrides the pwm registers and keeps the speeds set in the BIOS; "
            "setting the BIOS Smart Fan curve flat hands the fans to Linux.")


def _manual_then_auto(f: Facts, _: Snapshot) -> str:
    rpm = _n(f, "rpm")
    held = "keeps it off" if rpm == 0 else f"runs it at {rpm:,.0f} RPM"
    return (f"Under the embedded controller's own control (--autofanctrl) the fan reads {rpm:,.0f} RPM with "
            f"{f.get('hottest')} at {_n(f, 'hottest_c'):.0f} °C: the EC {held} at these temperatures; the "
            f"{f.get('manual')} RPM readings before it followed --fansetduty and --fansetrpm, settings, not heat.")


def _control_refused(f: Facts, _: Snapshot) -> str:
    if f.get("attribute") == "display":  # no X server to set the fan through: nothing was set
        return ("nvidia-settings found no X display to talk to (\"The control display is undefined\"), so the fan "
                "settings on its command line were not set: the card's fan stays on its own curve. nvidia-settings "
                "sets a fan through the NVIDIA X driver, which allows it only on a running X server with the "
                "Coolbits option's value 4 set (the driver's README, Coolbits).")
    if f.get("attribute") == "GPUTargetFanSpeed":  # the control was taken (or not asked for); the speed was refused
        return (f"nvidia-settings refused to set GPUTargetFanSpeed to {_n(f, 'value'):.0f} %: the speed asked was "
                "not set (outside the range the card takes, or its fan not under manual control), so the fan stays "
                "where it was.")
    return (f"nvidia-settings refused to set {f.get('attribute')} to {_n(f, 'value'):.0f}: the card's fan is not "
            "under manual control, so it stays on the card's own curve. Most likely manual fan control is not "
            "enabled: the NVIDIA X driver allows it only with the Coolbits option's value 4 set, on a running X "
            "server (the driver's README, Coolbits).")


def _write_refused(f: Facts, _: Snapshot) -> str:
    file, error = f.get("file"), f.get("error")
    why = {"Invalid argument": "the driver does not take that value or mode for this channel (each driver lists "
                               "the pwm_enable modes and values it supports; sysfs-interface.rst)",
           "Permission denied": "writing it needs root",
           "Operation not permitted": "writing it needs root",
           "Read-only file system": "/sys is read-only where it was written (a container given hwmon without "
                                    "write access)",
           "Device or resource busy": "the driver or the firmware holds the channel (it87 refuses a duty while its "
                                      "channel is in an automatic mode, pwmN_enable 2 or more: its duty register is "
                                      "the chip's then)",
           "Operation not supported": "this driver does not let software set it",
           "manual fan speed control should be enabled first": "amdgpu takes a pwm1 only under manual control "
                                                               "(pwm1_enable 1) and refuses it otherwise"}.get(
        str(error), "")
    if f.get("driver") == "amdgpu" and str(file) == "pwm1" and error == "Invalid argument":  # amdgpu_pm.c's set_pwm1
        why = "amdgpu takes a pwm1 only while the card reports manual control (it asks the card's firmware for the " \
            "mode; refused, its kernel log says \"manual fan speed control should be enabled first\"), and " + (
                "pwm1_enable 1 was written before it without an error: the card's firmware did not take manual "
                "control (where the card has gpu_od/fan_ctrl, its own curve is set there)" if f.get("enable") == "taken"
                else "either pwm1_enable was not 1 (write 1 to it first) or the card's firmware did not take manual "
                "control (pwm1_enable then reads 2 again)")
    said = "amdgpu refused a write to pwm1" if str(error).startswith("manual") else \
        f"The write to {file} was refused ({error})"
    if error == "not writable":  # a program's check, not a write: the files its driver lists read-only
        some = "it" if f.get("count") == 1 else "them"
        return (f"A fan program found {file} read-only: the driver does not let software set {some} (a read/write "
                "attribute may be read-only for some chips; a board's chip may need another driver for control), so "
                "the fans stay under their chip's own control (a board's as its BIOS set it up, a card's its "
                "firmware's), whatever a curve asks.")
    if f.get("later") == "taken":  # written again later with no error: the refusal is not where it ended
        return f"{said}: {why}; a later write to it was taken (no error follows it)."
    return f"{said}: {why}, so nothing changed and the fan stays as its own control set it."


_WORDS: Mapping[str, Callable[[Facts, Snapshot], str]] = {
    "curve-refused": _curve_refused, "curve-locked": _curve_locked, "set-failed": _set_failed,
    "asked-duty": _asked_duty, "duty-ignored": _duty_ignored,
    "daemon-not-obeyed": _daemon_not_obeyed,
    "tool-cannot-reach": _tool_cannot_reach, "ec-lost-cpu": _ec_lost_cpu, "board-keeps-fans": _board_keeps_fans,
    "manual-then-auto": _manual_then_auto, "control-refused": _control_refused,
    "write-refused": _write_refused}
