"""Settings: each range and choice refuses a value just outside it, naming the setting; the edges are accepted."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pytest

from app.config import _CHOICES, _RANGES, ConfigError, Settings


@pytest.mark.parametrize(("name", "low", "high", "message"), _RANGES)
def test_each_range_refuses_just_outside_and_accepts_its_edges(name: str, low: float, high: float,
                                                              message: str) -> None:
    step = 1 if isinstance(getattr(Settings(), name), int) else 0.01
    with pytest.raises(ConfigError, match=message.split(" ")[0]):
        replace(Settings(), **{name: type(getattr(Settings(), name))(low - step)}).validate()
    if not math.isinf(high):
        with pytest.raises(ConfigError, match=message.split(" ")[0]):
            replace(Settings(), **{name: type(getattr(Settings(), name))(high + step)}).validate()
        replace(Settings(), **{name: type(getattr(Settings(), name))(high)}).validate()
    replace(Settings(), **{name: type(getattr(Settings(), name))(low)}).validate()


@pytest.mark.parametrize(("name", "choices", "message"), _CHOICES)
def test_each_choice_refuses_another_word(name: str, choices: tuple[str, ...], message: str) -> None:
    with pytest.raises(ConfigError, match=message.split(" ")[0]):
        replace(Settings(), **dict[str, Any]({name: "maybe"})).validate()
    for choice in choices:
        replace(Settings(), **dict[str, Any]({name: choice})).validate()


def test_a_public_bind_needs_the_token() -> None:
    with pytest.raises(ConfigError, match=r"refusing to bind 0\.0\.0\.0"):
        Settings(host="0.0.0.0").validate()
    Settings(host="0.0.0.0", token="t" * 32).validate()
