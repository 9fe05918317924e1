"""What the fans do when nothing is loud, and the fan part of the verdict alone: at rest, at a floor, the loudest
speed with no floor to judge it by, a fan an embedded controller rests, two drivers of one chip that disagree,
passive cards, whether any fan reports a fault and the hottest temperature read. Says only what is known: never
"their idle curve" (no curve is read), never "at rest" for a tachometer that may be silent."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.fan import Fan, heat_of
from ..core.model import Snapshot
from .fanchain import NO_FLOOR_QUIET, fan_causes, no_heat, source_words

# Embedded controllers that keep their fans stopped while the machine is cool: below EC_REST_BELOW_C a 0 RPM with
# no duty read is probably rest (a Dell laptop at 39 °C), above it a silent tachometer is as likely.
RESTS_WHEN_COOL = {"dell_smm": "Dell's embedded controller", "dell_ddv": "Dell's embedded controller"}
EC_REST_BELOW_C = 70.0

# Drivers of one chip that read the same headers through different register maps (the in-tree nct6683 and the
# out-of-tree nct6687 both drive the NCT6687D): where both are loaded, their readings can be compared.
ONE_CHIP_DRIVERS = (("nct6683", "nct6687"),)


def idle_fans(fans: Sequence[Fan], hottest_c: float | None = None) -> str:
    """What the fans do when nothing is busy, saying only what is known: no fan read, at rest, at a known floor,
    or their speed with no floor to judge it by. Never "their idle curve": no curve is read. ``hottest_c``, the
    hottest temperature read, tells a fan an embedded controller rests from one whose tachometer is silent."""
    live = [f for f in fans if f.state != "dead"]
    if not live and any((f.dead or "").startswith("0 RPM") for f in fans):
        return ("Every fan header read here is at 0 RPM: nothing is plugged in, or the fans are wired to something "
                "else that drives them (a server board's BMC: read it with ipmitool sdr).")
    if not live:
        return "No fan is read here, so what the fans do cannot be seen."
    floor = at_floor(live)
    if floor is not None:
        return floor
    return _lead_fan(max(live, key=lambda f: (f.percent or 0.0, f.rpm or 0)), hottest_c)


def _lead_fan(lead: Fan, hottest_c: float | None) -> str:
    """The loudest fan of an idle machine whose floor is not known: its speed, and only what is known of it."""
    return _reads_zero(lead, hottest_c) or _held(lead) or _judged(lead)


def _reads_zero(lead: Fan, hottest_c: float | None) -> str:
    """A fan at 0 (RPM with no duty, or 0 % and 0 RPM): rest, a silent tachometer or a driver that does not
    report, told apart only as far as what is read allows; "" for a fan that turns."""
    if lead.state == "unknown" and lead.rpm == 0:
        if lead.chip in RESTS_WHEN_COOL and hottest_c is not None and hottest_c < EC_REST_BELOW_C:
            return (f"The {lead.name} reads 0 RPM and nothing read is above {hottest_c:.0f} °C: probably at rest "
                    f"({RESTS_WHEN_COOL[lead.chip]} keeps its fans stopped while the machine is cool), or its "
                    "tachometer does not report.")
        return (f"The {lead.name} reads 0 RPM and no duty is read: at rest, or its tachometer does not report "
                "(some embedded controllers never fill it); which cannot be said from here.")
    if not (lead.percent == 0 and not lead.rpm and not lead.stopped):
        return ""
    if lead.control == "automatic" and lead.controller:
        return f"The {lead.name} reads {lead.speed}, set by {lead.controller}: its controller has stopped it."
    return (f"The {lead.name} reads {lead.speed}: stopped by fan-stop, or a driver that does not report the fan; "
            "which cannot be said without the card's temperature and load.")


def _held(lead: Fan) -> str:
    """A fan software holds (asked below what it accepts, or a fixed level), or one whose speed is not read."""
    below = lead.target_percent is not None and lead.floor_percent is not None and \
        lead.target_percent < lead.floor_percent
    if lead.control == "manual" and below and lead.controller:
        return (f"The {lead.name} is {lead.controller}, and was asked for {lead.target_percent:.0f} %, below the "
                f"{lead.floor_percent:.0f} % it accepts: it keeps turning; only handing it back to the card's "
                "automatic policy lets it stop.")
    if lead.state == "unknown":
        return f"The {lead.name}'s speed is not read."
    if lead.control == "manual" and lead.source_from is None and lead.controller:
        return (f"The {lead.name} runs at {lead.speed}, {lead.controller}: a level held by software, not one that "
                "follows a temperature FanWhy reads.")
    return ""


def _judged(lead: Fan) -> str:
    """A turning fan with no floor known: judged by its duty, or by its share of the maximum, or not at all."""
    by = f", set by {lead.controller}" if lead.control == "automatic" and lead.controller else ""
    follows = source_words(lead) if lead.source is not None else ""
    share = lead.percent if lead.percent is not None else \
        100 * lead.rpm / lead.max_rpm if lead.rpm and lead.max_rpm else None
    if share is None:
        return (f"The {lead.name} runs at {lead.speed}{by}{follows}; no idle floor is known for it, so whether that "
                "is its idle speed cannot be said.")
    of = "duty" if lead.percent is not None else f"of its {lead.max_rpm:,} RPM maximum"
    pace = "a low speed" if share < NO_FLOOR_QUIET else "a middle speed" if share < 70 else "near its top speed"
    return (f"The {lead.name} runs at {lead.speed}{by}{follows}; no idle floor is known for it: at {share:.0f} % "
            f"{of}, {pace}.")


def at_floor(fans: Sequence[Fan]) -> str | None:
    """"The fans are at their idle floor (30 % is this card's minimum)." when every fan that is there rests or
    idles; None when one runs above its floor or none is known."""
    live = [f for f in fans if f.state != "dead"]
    if not live or any(f.state not in ("floor", "stopped") for f in live):
        return None
    floors = sorted({f.floor_percent for f in live if f.floor_percent})
    lowest = [f for f in live if f.percent == 0 and f.rpm and f.floor_rpm == f.rpm]
    if lowest:
        fan = lowest[0]
        return (f"The {fan.name} is asked for 0 % by hand and still turns at {fan.rpm:,} RPM: that is its lowest "
                "speed (it has no fan-stop), so nothing is making it spin faster.")
    if all(f.state == "stopped" for f in live):
        return "The fans are at rest (fan-stop: they start when their sources warm up)."
    if len(floors) == 1 and any(f.gpu_index is not None for f in live):
        return f"The fans are at their idle floor ({floors[0]:.0f} % is this card's minimum)."
    return "The fans are at their idle floor."


def fan_answer(snap: Snapshot) -> tuple[str, list[str]]:
    """The fan part of the verdict alone (a replay of captured text, which knows no load): the sentence (a fan at
    full speed for no heat, else the loudest group, else a fan fault, else what the fans do at rest) and the other
    fan causes."""
    causes = sorted(fan_causes(snap), key=lambda c: -c.score)
    full = [c for c in causes if no_heat(c)]
    order = [*full, *(c for c in causes if c.kind == "fan"), *(c for c in causes if c not in full and c.kind != "fan")]
    if not order:
        hot = hottest(snap)
        return drivers_disagree(snap.fans) + (passive_cards(snap) or idle_fans(snap.fans, hot[0] if hot else None)
                                              + _all_well(snap.fans) + _hottest(snap)), []
    return order[0].summary or "", [c.summary or "" for c in order[1:]]


# Drivers of one chip that read the same headers through different register maps (the in-tree nct6683 and the
# out-of-tree nct6687 both drive the NCT6687D): where both are loaded, their readings can be compared.
ONE_CHIP_DRIVERS = (("nct6683", "nct6687"),)


def _disagreeing(fans: Sequence[Fan]) -> tuple[str, str, dict[str, int]] | None:
    """(the driver that sees more fans turn, the one that sees fewer, how many each) for two drivers of one chip
    that are both read and disagree."""
    for pair in ONE_CHIP_DRIVERS:
        turning = {c: sum(1 for f in fans if f.chip == c and f.rpm) for c in pair}
        if all(any(f.chip == c for f in fans) for c in pair) and len(set(turning.values())) > 1:
            more, fewer = sorted(pair, key=lambda c: -turning[c])
            return more, fewer, turning
    return None


def _distrusted(fans: Sequence[Fan]) -> str | None:
    found = _disagreeing(fans)
    return found[1] if found else None


def drivers_disagree(fans: Sequence[Fan]) -> str:
    """"Two drivers read this board's one chip and disagree..." where both are read and one sees fewer fans turn;
    "" otherwise."""
    found = _disagreeing(fans)
    if found is not None:
        more, fewer, turning = found
        return (f"Two drivers read this board's one fan chip ({more} and {fewer}) and disagree: {more} reads "
                f"{turning[more]} fans turning, {fewer} only {turning[fewer]}. The headers {fewer} reads at 0 RPM are "
                f"not stopped fans: most likely {fewer}'s map of this board's registers does not fit it. ")
    return ""


def passive_cards(snap: Snapshot) -> str | None:
    """Cards with no fan of their own and no fan read beside them: the chassis fans cool them, unseen here."""
    passive = [g for g in snap.gpus if g.passively_cooled]
    if not passive or any(f.state != "dead" for f in snap.fans):
        return None
    one = len(passive) == 1
    which = f"GPU {passive[0].index} ({passive[0].name})" if one else f"GPUs {', '.join(str(g.index) for g in passive)}"
    return (f"{which} {'has' if one else 'have'} no fan of {'its' if one else 'their'} own (passively cooled): the "
            f"chassis fans cool {'it' if one else 'them'}, and no chassis fan is read here (a server's BMC lists "
            "them: ipmitool sdr).")


def _hottest(snap: Snapshot) -> str:
    """" The hottest temperature read is CPU Temp (BMC) at 45 °C." beside fans at rest or with no floor: whether
    anything is hot, the other half of "why is my fan running"."""
    found = hottest(snap)
    if found is None:
        return ""
    celsius, name = found
    return f" The hottest temperature read is {name} at {celsius:.0f} °C.{_cpu_unread(snap)}"


def _cpu_unread(snap: Snapshot) -> str:
    """" The CPU's temperature is not read in degrees (...)" when the only CPU reading was left out: "the hottest
    temperature read" then says nothing of the CPU."""
    kept = [s for s in snap.host.temperatures if heat_of(f"{s.chip} {s.label}") == "cpu"]
    if kept or any(a.role == "cpu" for a in snap.air):
        return ""
    unread = [(k.removeprefix("temperature "), why) for k, why in snap.host.unsupported.items()
              if k.startswith("temperature ") and "cpu" in k.lower()]
    if not unread:
        return ""
    name, why = unread[0]
    return f" The CPU's temperature is not read ({name}: {why}), so whether the CPU is hot cannot be said."


def hottest(snap: Snapshot) -> tuple[float, str] | None:
    """The hottest temperature read (the host's sensors, the BMC's, the cards'), with its name; None without one."""
    readings = [(s.temperature_c, f"{s.label} ({s.chip})") for s in snap.host.temperatures]
    readings += [(a.temperature_c, f"{a.label} (BMC)") for a in snap.air]
    readings += [(g.temperature_c, f"GPU {g.index}") for g in snap.gpus if g.temperature_c is not None]
    return max(readings) if readings else None


def _all_well(fans: Sequence[Fan]) -> str:
    """" None of the 5 fans read here reports a fault (FAN4 has no fan on it)." for a machine whose fans all turn
    and none is in alarm: what a person checking "is something wrong?" needs besides the loudest one's speed."""
    live = [f for f in fans if f.state != "dead"]
    doubtful = any(f.state in ("unknown", "stalled") or not (f.stopped or f.rpm or f.percent) for f in live)
    if len(live) < 2 or doubtful or any(f.alarm_kind for f in live):  # a 0 that may be unreported: no comfort
        return ""
    distrusted = _distrusted(fans)  # two drivers of one chip: the one that sees fewer fans is not counted
    live = [f for f in live if f.chip != distrusted]
    lead = "Neither fan read here reports" if len(live) == 2 else f"None of the {len(live)} fans read here reports"
    return f" {lead} a fault{_empty_headers([f for f in fans if f.chip != distrusted])}."


def _empty_headers(fans: Sequence[Fan]) -> str:
    """" (FAN4 has no fan on it)", " (fan1, fan3 and 2 more have no fan on them)", or ""."""
    empty = list(dict.fromkeys(f.name for f in fans if f.state == "dead"))
    if len(empty) > 2:
        return f" ({empty[0]}, {empty[1]} and {len(empty) - 2} more have no fan on them)"
    if empty:
        one = len(empty) == 1
        return f" ({' and '.join(empty)} ha{'s' if one else 've'} no fan on {'it' if one else 'them'})"
    return ""
