"""What the fan wing must and must not find on each real machine of the corpus, derived from the thread's answer
(``# answer:`` of each block in tests/fixtures/fans/corpus/ and corpus-more/), not from FanWhy's own output.

``lead`` is the finding kind that must lead (None: no cause-level finding, so the named readers' account of the
fans speaks); ``has`` kinds that must be found; ``never`` kinds that must not be; ``gap`` says what is not read or
not ruled yet, for a block whose answer FanWhy cannot give today (the test then checks the refusal or the lack of a
cause, so that the gap is seen when it closes). ``HELD_OUT`` is a third of the 72, drawn at random with a named
seed, on which no rule is to be tuned.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Expect:
    lead: str | None = None
    has: tuple[str, ...] = ()
    never: tuple[str, ...] = ()
    refused: bool = False
    gap: str = ""
    confidence: str | None = None  # the lead's confidence, where the thread decides it


DANGER = ("at-rest", "no-fault")  # said of a fan that is stalled, failed, stopped unreported or a placeholder

EXPECTED: dict[str, Expect] = {
    # the corpus the rules were first written from: the blocks where the fan wing leads
    "desktop-superio-03": Expect("headers-read-zero", ("temperatures-left-out",), (*DANGER, "hot-not-cooled")),
    "desktop-superio-04": Expect("drivers-disagree", (), ("at-rest", "headers-read-zero")),
    "desktop-superio-10": Expect("speed-not-a-reading", (), DANGER),
    "laptops-02": Expect("stalled", (), DANGER, confidence="possible"),
    "laptops-03": Expect("fixed-duty", (), DANGER),
    "liquidctl-daemons-01": Expect("pump-stopped", (), ("fan-fault", "at-rest"), confidence="possible"),
    "servers-bmc-01": Expect("fan-fault", (), ("no-fault",)),
    "servers-bmc-06": Expect("unlike-siblings", (), ("no-fault", "fan-fault")),
    # the 24 machines the rules were not written from
    "more-amdgpu-01": Expect("hot-not-cooled", (), DANGER),
    "more-amdgpu-02": Expect("hot-not-cooled", ("speed-not-a-reading",), DANGER),
    "more-amdgpu-03": Expect("zero-then-turning", ("hottest",), ("hot-not-cooled", "fan-fault", "stalled")),
    "more-amdgpu-04": Expect(refused=True, gap="an OD_RANGE listing alone: the card's fan-curve floor (23 %) is not "
                             "a reading, and no rule reads OD_RANGE as a floor yet"),
    "more-amdgpu-05": Expect(refused=True, gap="rocm-smi's concise table (space-aligned columns) is not read yet"),
    "more-desktop-superio-01": Expect(None, ("temperatures-left-out", "hottest"), ("fan-fault", "hot-not-cooled")),
    "more-desktop-superio-02": Expect(None, ("temperatures-left-out",), ("pump-stopped", "fan-fault")),
    "more-desktop-superio-03": Expect("zero-then-turning", (), ("headers-read-zero", "fan-fault")),
    "more-desktop-superio-04": Expect(None, ("hottest",), ("fan-fault",), gap="two drivers of one Super-I/O loaded "
                                      "together (gigabyte_wmi beside it87) are not seen in a temperature listing"),
    "more-desktop-superio-05": Expect("headers-read-zero", (), DANGER),
    "more-laptops-01": Expect("no-temperature", (), DANGER),
    "more-laptops-02": Expect("fault-then-reading", (), DANGER),
    "more-laptops-03": Expect("target-not-met", (), DANGER),
    "more-laptops-04": Expect("ec-cpu-unread", (), (*DANGER, "headers-read-zero")),
    "more-liquidctl-daemons-01": Expect(None, (), ("pump-stopped", "fan-fault", "stalled")),
    "more-liquidctl-daemons-02": Expect(None, (), ("fan-fault",), gap="a fancontrol configuration alone: the curve "
                                        "it imposes is not yet said"),
    "more-liquidctl-daemons-03": Expect(refused=True, gap="thinkfan's configuration and its bias line: no reader "
                                        "takes the level it chose from its own log line yet"),
    "more-nvidia-01": Expect(None, (), ("fan-fault", "hot-not-cooled"), gap="NVAPI's cooler dump: the minimum level "
                             "held under a control program is not yet a rule"),
    "more-nvidia-02": Expect(None, (), ("hot-not-cooled", "fan-fault")),
    "more-nvidia-03": Expect(None, (), ("fan-fault",), gap="two machines' nvidia-smi answers in one paste: the "
                             "laptop's [N/A] is overwritten by the desktop's 39"),
    "more-servers-bmc-01": Expect("below-bmc-threshold", (), ("fan-fault",)),
    "more-servers-bmc-02": Expect("below-bmc-threshold", (), ("fan-fault",)),
    "more-servers-bmc-03": Expect("fan-fault", ("empty-slots",), ("no-fault",)),
    "more-servers-bmc-04": Expect("speed-not-a-reading", (), (*DANGER, "turning")),
}


def held_out(keys: list[str]) -> list[str]:
    """A third of ``keys``, drawn with the seed "fan-wing": no rule is to be tuned on these machines."""
    ordered = sorted(keys)
    return sorted(random.Random("fan-wing").sample(ordered, len(ordered) // 3))
