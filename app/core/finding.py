"""What a rule concludes, as data: a kind, what it is about, the facts it rests on, how sure, and how strongly it
answers "why is my fan running?" (``priority``: the highest leads). Words are made of findings elsewhere
(``app.fans.words``); nothing here is a sentence. The fan wing (``app.fans``) makes them; the verdict carries them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Literal

from .record import record

# known: read, or declared by what controls the fan; likely: what the hardware's documented design makes of the
# facts; possible: one of several explanations the facts leave open.
Confidence = Literal["known", "likely", "possible"]
FindingKind = Literal[
    "hot-not-cooled", "pump-stopped", "fan-fault", "fan-alarm", "full-while-cool", "full-while-hot", "slow-while-hot",
    "stops-and-starts", "fan-loud", "fault-then-reading", "target-not-met", "stalled", "below-bmc-threshold",
    "ec-cpu-unread", "ec-cpu-misread", "off-target", "fan-disabled", "bmc-failing-at-times",
    "speed-not-a-reading", "drivers-disagree", "zero-then-turning", "unlike-siblings",
    "headers-read-zero", "no-temperature", "follows-no-reading", "no-control", "fixed-duty", "firmware-floor",
    "channels-crossed", "turns-at-zero",
    "warm-not-turning", "bmc-zero-ok", "zero-unknown", "daemon-curve", "daemon-not-followed", "bias-chose-level",
    "daemon-decided", "daemon-no-range", "trip-not-followed", "trip-on", "bmc-setting", "daemon-stopped",
    "daemon-overridden",
    "control-offset", "bmc-fan-logged", "level-and-heat", "read-back-off-target", "daemon-critical",
    "passive-cards", "slowing-for-heat", "gpu-threshold", "cpu-slowed", "ec-setting", "ec-table", "platform-profile",
    "gpu-fan-unreported", "bmc-warning", "duty-not-driving", "at-rest", "zero-unjudged", "turning", "no-fault",
    "empty-slots", "temperatures-left-out", "hottest", "no-fan-read", "under-divisor", "no-power", "detected-still",
    "listed-unfitted", "at-critical", "crit-since-boot", "chip-claimed", "ec-cpu-low", "swings-with-source",
    "chips-probed", "zone-critical"]
_NO_FACTS: Mapping[str, float | str] = MappingProxyType({})


@record
class Finding:
    kind: FindingKind
    rule: str  # the rule that found it (docs/FAN-RULES.md)
    subjects: tuple[str, ...]  # the fans and temperatures it is about (their keys)
    confidence: Confidence
    priority: int
    facts: Mapping[str, float | str] = field(default_factory=lambda: _NO_FACTS)

    @property
    def cause(self) -> bool:
        """True for a finding that answers the question on its own (a fault, a stall, a controller's choice);
        False for one that describes (the hottest reading, what was left out)."""
        return self.priority >= CAUSE


CAUSE = 50
