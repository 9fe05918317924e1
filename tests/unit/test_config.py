"""Settings: each range and choice refuses a value just outside it, naming the setting; the edges are accepted."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from app.collect.config import _CHOICES, _RANGES, ConfigError, Settings, load_settings


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
    Settings(host="0.0.0.0", token="7d2f9a4c1e8b3065f2a9d4c7e1b80a36").validate()


def test_tokens_can_come_from_files(tmp_path: Path) -> None:
    from app.collect.config import load_settings

    secret = tmp_path / "metrics-token"
    secret.write_text("e3a91f7c2b5d8064a1c9\n")
    settings = load_settings({"FANWHY_METRICS_TOKEN_FILE": str(secret), "FANWHY_TOKEN_FILE": str(secret)})
    assert settings.metrics_token == settings.token == "e3a91f7c2b5d8064a1c9"
    assert load_settings({"FANWHY_TOKEN": "direct-wins-3f8a1c9e2b7d4056", "FANWHY_TOKEN_FILE": str(secret)}).token == \
        "direct-wins-3f8a1c9e2b7d4056"
    with pytest.raises(ConfigError, match=r"FANWHY_METRICS_TOKEN_FILE=.* cannot be read"):
        load_settings({"FANWHY_METRICS_TOKEN_FILE": str(tmp_path / "missing")})
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(ConfigError, match="is empty"):
        load_settings({"FANWHY_TOKEN_FILE": str(tmp_path / "empty")})


@pytest.mark.parametrize("token", [" " * 16, " " * 40, "abc def ghi jkl", " a-long-enough-token-0123",
                                   "a-long-enough-token-0123\n", "\ta-long-enough-token-0123"])
def test_a_token_needs_16_characters_that_are_not_spaces_and_none_around_it(token: str) -> None:
    with pytest.raises(ConfigError) as refused:
        load_settings({"FANWHY_TOKEN": token})
    assert "FANWHY_TOKEN" in str(refused.value) and refused.value.setting == "token"


def test_a_token_of_16_characters_with_a_space_inside_is_accepted() -> None:
    assert load_settings({"FANWHY_TOKEN": "abcd efgh ijkl mnop"}).token == "abcd efgh ijkl mnop"
    with pytest.raises(ConfigError, match="FANWHY_METRICS_TOKEN"):
        load_settings({"FANWHY_METRICS_TOKEN": " " * 20})


@pytest.mark.parametrize(("variable", "name"), [("FANWHY_COLLECTOR", "collector"), ("FANWHY_NAMES_ONLY", "names_only"),
                                                ("FANWHY_SEED_METRICS", "seed_metrics")])
def test_switches_are_parsed_once_into_booleans(variable: str, name: str) -> None:
    for word, value in (("on", True), ("off", False), ("ON", True), ("false", False), ("1", True), ("no", False)):
        assert getattr(load_settings({variable: word}), name) is value
    with pytest.raises(ConfigError, match=f"{variable} must be on or off, got 'maybe'"):
        load_settings({variable: "maybe"})


def test_lists_are_parsed_once_into_tuples() -> None:
    settings = load_settings({"FANWHY_ALLOWED_HOSTS": " gpu-box.lab, 10.1.2.3 ,", "FANWHY_ALLOWED_ORIGINS":
                              "https://a.example,https://b.example", "FANWHY_MASK_PATTERNS": r"acct-\d{2,4}||tok_\w+"})
    assert settings.allowed_hosts == ("gpu-box.lab", "10.1.2.3")
    assert settings.allowed_origins == ("https://a.example", "https://b.example")
    assert settings.mask_patterns == (r"acct-\d{2,4}", r"tok_\w+")  # a comma inside a pattern stays in it
    with pytest.raises(ConfigError, match="FANWHY_MASK_PATTERNS: '\\(' is not a regular expression"):
        load_settings({"FANWHY_MASK_PATTERNS": "ok||("})


def test_alerts_and_notification_targets_are_parsed_once_at_load() -> None:
    settings = load_settings({"FANWHY_ALERTS": "temperature.threshold=80,power.enabled=0",
                              "FANWHY_NOTIFY": "ntfy:https://ntfy.sh/gpu, webhook:http://127.0.0.1:9/x"})
    assert settings.alerts == {"temperature": {"threshold": 80.0}, "power": {"enabled": False}}
    assert settings.notify == (("ntfy", "https://ntfy.sh/gpu"), ("webhook", "http://127.0.0.1:9/x"))
    assert settings.alert_rules()["temperature"].threshold == 80.0 and not settings.alert_rules()["power"].enabled
    with pytest.raises(ConfigError, match=r"FANWHY_NOTIFY: .*target 1"):
        load_settings({"FANWHY_NOTIFY": "carrier-pigeon:somewhere"})
