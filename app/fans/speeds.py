"""Where a fan is in its range, from what is read of it: at full (its duty, or its speed near its top), at the least
speed its controller keeps it at, kept turning by a floor above 0, and the thresholds the rules judge a duty and a
temperature by. One place for each, shared by the rules (``app.fans.rules``, ``rules_state``, ``rules_range``,
``rules_power``)."""

from __future__ import annotations

from .chips import chip
from .facts import ONE_DUTY, Decision, FanFact, Machine

FULL_DUTY = 95.0  # a duty at or above this is full speed
TOP_SHARE = 0.95  # a speed this near its maximum is the fan at its top, as FULL_DUTY is for a duty
SLOW_DUTY = 40.0  # a duty at or below this, on a part past HOT_C, is not what an automatic curve gives there
COOL_C = 50.0  # no fan curve asks for full speed below this (curves start their ramps above idle temperatures)
FLOOR_BAND = 0.05  # a controller that regulates a speed holds it within a few per cent of what it asks
FULL_LEVELS = ("full-speed", "disengaged")  # thinkpad_acpi's one level past 7, by either name: the fan unregulated,
# as fast as it goes; its tachometer reading may go stale (or read 0) while it ramps up, for up to two minutes


def at_full_level(fan: FanFact) -> bool:
    """A fan at thinkpad_acpi's full-speed level (reported as "disengaged" too)."""
    return fan.level in FULL_LEVELS


def at_top(fan: FanFact) -> bool:
    """At full: its duty at FULL_DUTY or more, or, with no duty read, its speed at TOP_SHARE of its maximum."""
    if fan.duty_percent is not None:
        return fan.duty_percent >= FULL_DUTY
    return bool(fan.max_rpm) and fan.rpm is not None and fan.rpm >= (fan.max_rpm or 0.0) * TOP_SHARE


def at_rpm_floor(fan: FanFact) -> bool:
    """A fan at the speed its controller keeps it at, at least, where its chip's fanN_min is that speed (applesmc's
    F<n>Mn; elsewhere a fanN_min is an alarm limit and says nothing of the speed asked)."""
    floor = fan.min_rpm
    return chip(fan.chip).min_is_floor and bool(floor) and fan.rpm is not None and fan.controller != "manual" and \
        (floor or 0.0) * (1 - FLOOR_BAND) <= fan.rpm <= (floor or 0.0) * (1 + FLOOR_BAND)


def kept_turning(fan: FanFact) -> bool:
    """A fan its controller keeps at a least speed above 0 (a Mac SMC's fanN_min): a 0 is no rest of its design;
    unless the controller's own target reads 0 (the SMC's F<n>Tg): it asks for no speed, its minimum being the least
    it runs the fan at once it asks (an Apple silicon MacBook Pro's SMC stops its fans so, "Target speed : 0")."""
    return chip(fan.chip).min_is_floor and bool(fan.min_rpm) and fan.target_rpm != 0


def held_at_floor(fan: FanFact) -> dict[str, float | str] | None:
    """A fan asked by hand for less than it runs at, its floor not read, on a card whose firmware keeps a least
    speed under manual control (``Chip.floor_up_to``): the duty it runs at is most likely that least (one reading:
    it may still be slowing down)."""
    bound = chip(fan.chip).floor_up_to
    if bound is None or fan.floor_percent is not None or fan.controller != "manual" or fan.target_percent is None or \
            fan.duty_percent is None or not fan.target_percent + 1 < fan.duty_percent <= bound + 1:
        return None
    return {"floor": fan.duty_percent, "controller": "manual", "held": "asked-below", "target": fan.target_percent,
            "floor_read": "no"}


def bmc_held(machine: Machine) -> Decision | None:
    """The last decision of a tool that holds every one of a BMC's fans at one duty, the BMC's own control off
    (Dell_iDRAC_fan_controller's static profile): its fans then follow neither the BMC's sensors nor a card's heat."""
    last = machine.decisions[-1] if machine.decisions else None
    return last if last is not None and last.drives == "bmc" and last.why == ONE_DUTY else None
