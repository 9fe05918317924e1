"""The words of a live machine's fans in the verdict: a loud fan (the verdict's fan chain, ``app.verdict.fanchain``:
which fans, their speed and target against their idle floor, what they follow and how that is known; the verdict
adds what heats the source) and what cools a busy GPU (its own fans at rest, at their floor or their speed; or,
passively cooled, the chassis fans). Part of the fan wing's words (``app.fans.words`` lists the loud fan's
template); each is made of facts the verdict gathers, never of another sentence."""

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


def speed_said(f: Facts) -> str:
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
    speed = f"{verb} at {speed_said(f)}"
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


def cooling(f: Facts) -> str:
    """What cools a GPU, from its facts: its own fans ("its fans rest (fan-stop)", "its fan idles at the floor (30 %
    is this card's minimum)", "its fan runs at 65 % (target 70 %)"), one speed a backend gives ("its fan runs at 40
    %"), or, passively cooled, the chassis fans ("the chassis fans run at 9,800 RPM (inlet 24 °C)", "the chassis
    fans answer its heat"); "" where nothing is known."""
    if f.get("own") == "yes":
        subject, s = ("its fans", "") if float(f["count"]) > 1 else ("its fan", "s")
        if f.get("state") == "stopped":
            return f"{subject} rest{s} (fan-stop)"
        if f.get("state") == "floor" and float(f.get("floor_percent", 0)):
            return f"{subject} idle{s} at the floor ({float(f['floor_percent']):.0f} % is this card's minimum)"
        target = f" (target {float(f['target_percent']):.0f} %)" if "target_percent" in f else ""
        return f"{subject} run{s} at {speed_said(f)}{target}"
    if "duty" in f:  # a backend that gives one speed and no fan detail
        return f"its fan runs at {float(f['duty']):.0f} %"
    if f.get("passive") == "yes":
        return f"it has no fan of its own (passively cooled): {chassis(f) or 'the chassis fans answer its heat'}"
    return ""


def chassis(f: Facts) -> str:
    """"the chassis fans run at 9,800 RPM (inlet 24 °C)" from the fastest chassis fan's ``chassis_rpm`` or
    ``chassis_duty``; "" with neither."""
    speed = {k.removeprefix("chassis_"): v for k, v in f.items() if k in ("chassis_rpm", "chassis_duty")}
    if not speed:
        return ""
    inlet = f" (inlet {float(f['inlet_c']):.0f} °C)" if "inlet_c" in f else ""
    return f"the chassis fans run at {speed_said(speed)}{inlet}"
