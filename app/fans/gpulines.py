"""NVIDIA's product lines as their fans behave, told from a card's product name: chip knowledge about the cards
themselves (``chips`` holds the drivers')."""

from __future__ import annotations

import re
from typing import Literal

# NVIDIA's product lines as their fans behave (NVIDIA's product pages and nvidia-smi(1)'s fan.speed): consumer
# GeForce cards stop their fans while cool (fan-stop, "0 %"); workstation cards (Quadro, RTX A-series, RTX PRO) are
# blowers that never stop, with a 30 % floor; data-center cards (Tesla, A10/A100, H100/H200, L4/L40) have no fan
# and are cooled by the chassis, though some report "0 %" anyway. A laptop's GPU (NVIDIA names its mobile parts "...
# Laptop GPU", earlier "with Max-Q Design" or "Mobile") has no fan the card drives: the laptop's embedded controller
# drives the fans that cool it, and nvidia-smi reports its fan.speed as [N/A].
GpuLine = Literal["laptop", "consumer", "workstation", "datacenter"]
_LINES: tuple[tuple[str, GpuLine], ...] = (
    (r"laptop gpu|max-q|\bmobile\b", "laptop"), (r"geforce|titan", "consumer"),
    (r"quadro|rtx a\d|rtx pro|rtx \d+ ada|\bt\d{3,4}\b", "workstation"),
    (r"tesla|\b[ahlbt]\d{2,3}[a-z]?\b|\bh[12]\d{2}\b|\bl40|\bl4\b|\bgh200\b|\bgb200\b", "datacenter"),
)


def gpu_line(name: str | None) -> GpuLine | None:
    """Which of NVIDIA's lines a card's product name is, for how its fan behaves; None when the name does not say."""
    words = (name or "").lower()
    return next((line for pattern, line in _LINES if re.search(pattern, words)), None)
