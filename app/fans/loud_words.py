"""The words of a loud fan on a live machine (the verdict's fan chain, ``app.verdict.fanchain``): which fans, their
speed and target against their idle floor, what they follow and how that is known. Part of the fan wing's words
(``app.fans.words`` lists the template); the verdict adds what heats the source."""

from __future__ import annotations

from collections.abc import Mapping

Facts = Mapping[str, float | str]


def group_subject(f: Facts) -> str:
    """"GPU 0's fans", "The chassis fans", "The CPU fan (nct6798 fan2)", "The Case fan (nct6798 fan1)": fans as a
    person hears them, from a loud fan's facts (``group``, ``count``, ``gpu``, ``name``, ``labelled``, ``cpu``)."""
    if f["group"] == "gpu":
        return f"GPU {float(f['gpu']):.0f}'s fan{'s' if float(f['count']) > 1 else ''}"
    if f["group"] == "chassis":
        return "The chassis fans"
    if f.get("labelled") != "yes" and f.get("cpu") == "yes":
        return f"The CPU fan ({f['name']})"
    return f"The {f['name']}"


def _speed_said(f: Facts) -> str:
    """"65 % (1,400 RPM)", "1,850 RPM", "65 %": a fan's duty and speed as read."""
    if "rpm" in f and "duty" in f:
        return f"{float(f['duty']):.0f} % ({float(f['rpm']):,.0f} RPM)"
    return f"{float(f['rpm']):,.0f} RPM" if "rpm" in f else f"{float(f['duty']):.0f} %"


_GUESSED = {"guess-named": "by its name; nothing read says what sets its speed",
            "guess-card": "the hottest of the card's sensors; the card does not say",
            "guess-design": "by design; nothing read says what sets its speed"}


def loud(f: Facts) -> str:
    """A fan above its idle floor: its speed (and target), how far above its floor, what it follows and how that is
    known. The verdict adds what heats the source."""
    plural = float(f["count"]) > 1 or f["group"] == "chassis"
    verb, its = ("run", "their") if plural else ("runs", "its")
    speed = f"{verb} at {_speed_said(f)}"
    if "target_percent" in f and "duty" in f:
        speed += f" (target {float(f['target_percent']):.0f} %)"
    elif "target_rpm" in f and "rpm" in f:
        speed += f" (target {float(f['target_rpm']):,.0f} RPM)"
    if "duty" in f and float(f.get("floor_percent", 0)):
        speed += f", {float(f['duty']) - float(f['floor_percent']):.0f} points above {its} " \
                 f"{float(f['floor_percent']):.0f} % floor"
    elif "rpm" in f and float(f.get("floor_rpm", 0)):
        speed += f", {float(f['rpm']) - float(f['floor_rpm']):,.0f} above {its} idle floor"
    return f"{group_subject(f)} {speed}{_loud_source(f)}"


def _loud_source(f: Facts) -> str:
    if "source" not in f:
        return f" (inlet {float(f['inlet_c']):.0f} °C)" if "inlet_c" in f else ""
    at = f" at {float(f['source_c']):.0f} °C" if "source_c" in f else ""
    how = str(f.get("how", ""))
    if how in _GUESSED:
        return f", probably following {f['source']}{at} ({_GUESSED[how]})"
    learned = f" (learned from its history, {100 * float(f.get('sure', 0)):.0f} % sure)" if how == "learned" else ""
    return f", following {f['source']}{at}{learned}"
