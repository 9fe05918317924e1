"""What a finding says of one fan, short: a word or two for the fan table's FOUND column (``state_word``), the clause
a live fan's alarm carries (``alarm_clause``: ``Fan.alarm``, which the alert, the page and /api/fans show after the
fan's name) and a live fan's cell in ``fanwhy top`` (``fan_cell``). The long sentences are ``app.fans.words``'s."""

from __future__ import annotations

from collections.abc import Mapping

from ..core.fan import Fan
from ..core.finding import Finding, FindingKind
from .facts import FanFact
from .names import Names

Facts = Mapping[str, float | str]
CHECK = "(check it by ear or by its temperatures)"


# What a finding says of the fan it is about, in a word or two (the fan table's FOUND column).
STATE_WORDS: Mapping[FindingKind, str] = {
    "hot-not-cooled": "NOT COOLING?", "pump-stopped": "stopped?", "fan-fault": "FAILED",
    "swings-with-source": "follows its swings",
    "stops-and-starts": "stops and starts", "fan-loud": "above its floor", "fan-alarm": "ALARM",
    "full-while-cool": "full, cool", "full-while-hot": "full: hot",
    "slow-while-hot": "slow, hot", "daemon-no-range": "",
    "fault-then-reading": "FAULT read", "target-not-met": "not turning", "stalled": "stalled?",
    "no-power": "NO POWER?", "detected-still": "there, not turning",
    "below-bmc-threshold": "under its threshold", "bmc-warning": "under its warning",
    "ec-cpu-unread": "EC reads no CPU", "ec-cpu-misread": "EC misreads CPU", "ec-cpu-low": "EC reads CPU low",
    "off-target": "off target", "fan-disabled": "DISABLED", "speed-not-a-reading":
    "no reading", "drivers-disagree": "drivers disagree", "zero-then-turning": "0, then turning",
    "unlike-siblings": "unlike its siblings", "headers-read-zero": "0 RPM", "no-temperature": "no temperature",
    "no-control": "full (no control)", "fixed-duty": "held by hand", "firmware-floor": "at its floor",
    "turns-at-zero": "its lowest speed", "channels-crossed": "output crossed",
    "bmc-failing-at-times": "failing at times", "follows-no-reading": "follows no reading",
    "duty-not-driving": "duty not applied", "warm-not-turning": "stopped, warm", "bmc-zero-ok": "0 RPM, status ok",
    "zero-unknown": "0 RPM, unexplained",
    "daemon-curve": "a daemon's curve",
    "daemon-not-followed": "not its daemon's", "bias-chose-level": "a daemon's bias",
    "daemon-decided": "a daemon's level", "trip-on": "on: zone's trip", "trip-not-followed": "OFF past its trip",
    "bmc-setting": "", "daemon-stopped": "", "daemon-overridden": "", "control-offset": "",
    "bmc-fan-logged": "under its threshold",
    "level-and-heat": "", "read-back-off-target": "not at the speed asked", "daemon-critical": "full: critical",
    "passive-cards": "cooling passive cards", "slowing-for-heat": "card at its heat limit",
    "cpu-slowed": "", "at-critical": "", "crit-since-boot": "", "gpu-threshold": "", "ec-setting": "", "ec-table": "",
    "platform-profile": "", "chip-claimed": "", "chips-probed": "", "zone-critical": "",
    "gpu-fan-unreported": "no fan",
    "at-rest": "at rest", "zero-unjudged": "0, unjudged", "listed-unfitted": "0, maybe none", "turning": "running",
    "no-fault": "running",
    "empty-slots": "empty",
    "temperatures-left-out": "", "hottest": "", "no-fan-read": "", "under-divisor": "0 at its divisor"}


def state_word(finding: Finding, fan: FanFact | None = None) -> str:
    """The fan table's word for what ``finding`` says of ``fan`` ("possibly" where it is one of several causes); a
    fan whose speed is not read is never "running": only its duty is known."""
    word = STATE_WORDS[finding.kind]
    if finding.kind == "bmc-warning" and finding.facts.get("side") == "upper":
        word = "over its warning"  # faster than its upper non-critical threshold
    if finding.kind == "bmc-warning" and finding.facts.get("health") == "yes":
        word = f"BMC: {finding.facts.get('status', '')}"  # the controller's own word for it, not a threshold
    if finding.kind == "no-control" and "raw" in finding.facts:
        word = "full? reads no speed"  # its tachometer may be stale while it ramps up, or the fan not turning
    if finding.kind == "daemon-stopped" and finding.facts.get("event") == "not-running":
        word = "full: service off"  # its fan service not running, its pwm at full
    if finding.kind == "daemon-decided" and "duty" in finding.facts:
        # one it writes, not one of its levels; a duty typed into ipmitool is set by hand
        word = "a duty set by hand" if finding.facts.get("daemon") == "ipmitool" else "a daemon's duty"
    if finding.kind == "zero-unknown" and "asked" in finding.facts:
        return "0, as asked"  # its controller asks for 0 %: not unexplained
    if word == "running" and fan is not None and fan.rpm is None:
        return "speed not read"
    return f"{word} (possibly)" if word and finding.confidence == "possible" else word


def _num(value: object) -> str:
    return f"{float(value):,.0f}" if isinstance(value, (int, float)) else str(value)


def _stalled(n: Names, f: Facts) -> str:
    asked = f" at {_num(f['duty'])} % duty" if "duty" in f else " with zero-RPM off"
    tail = "or this controller does not report the speed" if f.get("tach_may_not_report") == "yes" else \
        "or its tachometer does not report"
    return f"reads {f.get('raw') or '0 RPM'}{asked}: stalled, {tail} {CHECK}"


def _threshold(n: Names, f: Facts) -> str:
    line = f"the BMC's lower-critical threshold of {_num(f['lcr'])} RPM" if "lcr" in f else \
        f"a lower threshold (its status reads {f.get('status') or 'critical'})"
    if f.get("near") == "yes":
        return (f"at {_num(f['rpm'])} RPM, just under {line}: most likely a quiet fan the threshold was not set for; "
                "the BMC counts it as failing and may run every fan at full because of it")
    return f"at {_num(f['rpm'])} RPM, at or under {line}: the BMC counts it as failing"


_CLAUSES: Mapping[FindingKind, object] = {
    "stalled": _stalled,
    "hot-not-cooled": lambda n, f: ((_stalled(n, f) if "duty" in f else
                                     f"reads {f.get('raw') or f.get('reading') or '0 RPM'}: not cooling, or its speed "
                                     f"is not counted {CHECK}") + f", while {n(f['source'])} is at "
                                    f"{_num(f['source_c'])} °C"),
    "pump-stopped": lambda n, f: (f"reads {f.get('raw') or '0 rpm'}: a pump does not stop while the cooler runs; its "
                                  "speed is not reported, or the pump failed (is the liquid cooling?)"),
    "target-not-met": lambda n, f: (f"kept at {_num(f['floor_rpm'])} RPM or faster" if "floor_rpm" in f else
                                    "asked for " + (f"{_num(f['target_rpm'])} RPM" if "target_rpm" in f else
                                                    f"{_num(f['target_percent'])} %"))
                                    + " and reads 0: its controller asks and the fan does not turn",
    "no-power": lambda n, f: (f"reads 0 RPM with the {_num(f['nominal'])} V rail that powers it at "
                              f"{float(f['volts']):.2f} V: no power reaches it"),
    "detected-still": lambda n, f: ("reads 0 RPM though its controller detects a fan on its connector: stopped, "
                                    "stalled, or without power"),
    "off-target": lambda n, f: (f"off target: {_num(f['rpm'])} RPM against a target of {_num(f['target_rpm'])} RPM "
                                f"for {_num(f['seconds'])} s (blocked, or failing)"),
    "fan-fault": lambda n, f: ("the BMC reports it critical (a failed or missing fan)" if f.get("status") else
                               "its driver reports a fault (a failed fan, or one that is not there)"),
    "fault-then-reading": lambda n, f: (f"read FAULT in {_num(f['faults'])} of {_num(f['readings'])} readings: its "
                                        "driver flags a fault"),
    "fan-disabled": lambda n, f: f"{f.get('chip') or 'its driver'} reports the fan disabled (status: disabled)",
    "below-bmc-threshold": _threshold,
    "fan-alarm": lambda n, f: "its driver raises the fan's alarm" + (f" (under its {_num(f['min'])} RPM minimum)"
                                                                     if "min" in f else ""),
    "ec-cpu-unread": lambda n, f: (f"its embedded controller's CPU temperature reads {_num(f['raw_c'])} °C, no "
                                   "reading: " + (f"its firmware runs the fan at {_num(f['failsafe'])} % for it"
                                                  if "failsafe" in f else "a curve that follows it never asks for "
                                                  "cooling")),
    "ec-cpu-misread": lambda n, f: (f"it follows its embedded controller's CPU reading of {_num(f['ec_c'])} °C, with "
                                    f"the CPU at {_num(f['other_c'])} °C: a wrong reading"),
    "ec-cpu-low": lambda n, f: (f"it follows its embedded controller's CPU reading of {_num(f['ec_c'])} °C, with the "
                                f"CPU at {_num(f['other_c'])} °C: a reading too low, so it cools too little"),
    "full-while-cool": lambda n, f: (f"full speed while {n(f['source'])} is at {_num(f['source_c'])} °C: a manual "
                                     "override or lost control"),
    "no-control": lambda n, f: "no control (pwm_enable 0): full speed whatever the temperature",
}


def alarm_clause(finding: Finding, names: Names) -> str | None:
    """The clause of a fan's alarm for ``finding`` ("reads 0 RPM at 60 % duty: stalled, ..."), None for a finding
    that is no alarm."""
    make = _CLAUSES.get(finding.kind)
    return make(names, finding.facts) if callable(make) else None


_CELLS = {"stopped": "rest", "full": "full", "failed": "FAILED", "stalled": "STALLED?", "off-target": "OFF TARGET"}


def fan_cell(fan: Fan) -> str:
    """A live fan's speed and state in a cell: "rest", "31 % floor", "65 % (1,400 RPM)", "1,850 RPM", "full",
    "FAILED"; "(stale 12 s)" after a reading whose source is failing."""
    word = _CELLS.get(fan.state) or (f"{fan.speed} floor" if fan.state == "floor" else fan.speed)
    return f"{word} (stale {fan.stale_s:.0f} s)" if fan.stale_s else word


def alarmed(fan: Fan) -> bool:
    """A fan whose state has a word of its own in a cell (what the terminal shows first of a card's fans)."""
    return fan.state in _CELLS
