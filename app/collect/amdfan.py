"""What amdgpu-fan (chestm007's daemon for AMD cards, ``/etc/amdgpu-fan.yml``) or its fork amdfan (mcgillij's,
``/etc/amdfan.yml``) is configured to do: one curve, ``speed_matrix``, for the fan of every amdgpu card it finds (or
of the cards ``cards`` lists).

Their source (``controller.py``, ``Curve``): each pass reads the card's ``temp1_input`` (amdgpu's edge temperature),
takes the speed ``numpy.interp`` gives on the ``[temperature, per cent]`` points (linear between two points, the first
point's speed below the first, the last's above the last), takes the fan under manual control (``pwm1_enable`` 1)
and writes that share of ``pwm1_max`` to ``pwm1``. ``Curve`` refuses a matrix, and the daemon exits as it starts,
where a speed is under 0 or over 100, the temperatures do not rise strictly, the speeds fall, or the lowest speed is
3 or under ("Lowest speed value to be set to 4": a driver bug; amdfan's source, and amdgpu-fan's from the version
that added the check: its first versions' own default matrix began at 0 %, so an amdgpu-fan matrix under 4 % is said
refused only by versions that check). A log line the daemon prints once it took the matrix (``starting amdgpu-fan``,
``Configuration succesfully loaded``) in the same paste says it was not refused. amdfan's ``threshold`` leaves the
speed alone while the temperature stays within that many degrees of the one it last acted on.
"""

from __future__ import annotations

import re
from itertools import pairwise

from ..core.jsonvalue import JsonObject, member, members
from .daemonyaml import Read, load_pasted, number
from .fancontrol import Declared

HIGHEST_REFUSED = 3.0  # Curve: "Lowest speed value to be set to 4" (np.min(speeds) <= 3 is refused)
_CARD = re.compile(r"card\d+")
# logged once the matrix is taken: amdgpu-fan's "starting amdgpu-fan", amdfan's "Configuration succesfully loaded"
_STARTED = re.compile(r"starting amdgpu-fan|Configuration succes+fully loaded|Controller is running")
_KEYS = re.compile(r"^(?:speed_matrix|threshold|frequency|cards)\s*:", re.MULTILINE)  # its top-level keys


def file_of(text: str) -> str:
    """Where a pasted configuration belongs: amdgpu-fan's file where the paste names amdgpu-fan (or its module,
    amdgpu_fan), amdfan's otherwise (the maintained fork; the two read the same matrix)."""
    return "amdgpu-fan.yml" if re.search(r"amdgpu[-_]fan", text) else "amdfan.yml"


def refused(points: tuple[tuple[float, float], ...]) -> str | None:
    """Why ``Curve`` refuses these points (the daemon then exits as it starts), as a code the words turn into a
    reason; None where it takes them."""
    speeds = [p for _, p in points]
    temps = [t for t, _ in points]
    if min(speeds) < 0 or max(speeds) > 100:
        return "out-of-range"
    if any(b <= a for a, b in pairwise(temps)):
        return "temperatures-not-rising"
    if any(b < a for a, b in pairwise(speeds)):
        return "speeds-fall"
    if min(speeds) <= HIGHEST_REFUSED:
        return "lowest-under-4"
    return None


def amdgpu_fan(text: str) -> Read:
    return parse(text, "amdgpu-fan")


def _matrix(config: JsonObject) -> tuple[tuple[tuple[float, float], ...], str | None]:
    """The ``[temperature, speed]`` points of ``speed_matrix``, or why there are none."""
    points = []
    for row in members(member(config, "speed_matrix")):
        pair = [number(v) for v in members(row)] if isinstance(row, list) else []
        if len(pair) != 2 or None in pair:
            return (), "a speed_matrix row that is not [temperature, speed]"
        points.append((float(pair[0] or 0.0), float(pair[1] or 0.0)))
    return tuple(points), None if points else "an empty speed_matrix"


def amdfan_file(text: str) -> Read:
    return parse(text, "amdfan")


def parse(text: str, daemon: str | None = None) -> Read:
    """The curve a ``speed_matrix`` declares for each card it drives; nothing from a text without one. Its daemon is
    the one whose file it is, or the one a pasted text names (``file_of``)."""
    daemon = daemon or file_of(text).removesuffix(".yml")
    start = _KEYS.search(text)
    if start is None or "speed_matrix" not in text:
        return Read(())
    config, error = load_pasted(text[start.start():])  # from its first key: a post's prose before it is no YAML
    if config is None:
        return Read((), error)
    curve, why_not = _matrix(config)
    if not curve:
        return Read((), why_not)
    cards: list[str | None] = [c for c in members(member(config, "cards"))
                               if isinstance(c, str) and _CARD.fullmatch(c.strip().lower())]
    why = None if _STARTED.search(text) else refused(curve)  # its own log says it took the matrix
    if why == "lowest-under-4" and daemon == "amdgpu-fan":
        why = "lowest-under-4-newer"  # amdgpu-fan's first versions ran such a matrix (their default began at 0 %)
    return Read(tuple(Declared(chip="amdgpu", pwm="pwm1", source_chip="amdgpu", source="edge", fans=("fan1_input",),
                               curve=curve, floor_percent=curve[0][1], daemon=daemon,
                               follows=f"{card}'s edge temperature" if card else "the card's edge temperature",
                               refused=why)
                      for card in (cards or [None])))
