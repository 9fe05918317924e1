"""Settings: each range and choice refuses a value just outside it, naming the setting; the edges are accepted."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from app.collect.config import DECLARED, ConfigError, load_settings, validate
from app.collect.settings import Settings

RANGED = [name for name, said in DECLARED.items() if not (math.isinf(said.low) and math.isinf(said.high))]
CHOSEN = [name for name, said in DECLARED.items() if said.choices]


@pytest.mark.parametrize("name", RANGED)
def test_each_range_refuses_just_outside_and_accepts_its_edges(name: str) -> None:
    """Each declared range, from its declaration: just outside either end is refused, naming the variable; the
    ends themselves are accepted."""
    said, kind = DECLARED[name], type(getattr(Settings(), name))
    step = 1 if kind is int else 0.01
    for outside in (said.low - step, said.high + step):
        if not math.isinf(outside):
            with pytest.raises(ConfigError, match=f"{said.env} must be") as refused:
                validate(replace(Settings(), **{name: kind(outside)}))
            assert refused.value.setting == name
    for edge in (said.low, said.high):
        if not math.isinf(edge):
            validate(replace(Settings(), **{name: kind(edge)}))


@pytest.mark.parametrize("name", CHOSEN)
def test_each_choice_refuses_another_word(name: str) -> None:
    with pytest.raises(ConfigError, match=f"{DECLARED[name].env} must be one of"):
        validate(replace(Settings(), **dict[str, Any]({name: "maybe"})))
    for choice in DECLARED[name].choices:
        validate(replace(Settings(), **dict[str, Any]({name: choice})))


def test_every_setting_is_declared_once_with_its_own_variable_and_flag() -> None:
    """One declaration per field (a field without one is refused when the table is built), no variable or flag
    said twice, and each default inside its own range and choices."""
    variables = [said.env for said in DECLARED.values()]
    flags = [said.flag for said in DECLARED.values() if said.flag]
    assert len(set(variables)) == len(variables) and len(set(flags)) == len(flags)
    assert validate(Settings()) == Settings()


def test_a_number_that_is_not_one_is_refused_by_its_reader_naming_the_variable() -> None:
    with pytest.raises(ConfigError, match="FANWHY_PORT must be a whole number, got 'eighty'"):
        load_settings({"FANWHY_PORT": "eighty"})
    with pytest.raises(ConfigError, match="FANWHY_INTERVAL must be a number, got 'x'"):
        load_settings({"FANWHY_INTERVAL": "x"})
    assert load_settings({"FANWHY_INTERVAL": "0.5", "FANWHY_PORT": "8091"}).interval_s == 0.5


def test_a_public_bind_needs_the_token() -> None:
    with pytest.raises(ConfigError, match=r"refusing to bind 0\.0\.0\.0"):
        validate(Settings(host="0.0.0.0"))
    validate(Settings(host="0.0.0.0", token="7d2f9a4c1e8b3065f2a9d4c7e1b80a36"))


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


def test_alerts_and_notification_targets_are_text_in_settings_and_built_at_assembly() -> None:
    from app.collect.assemble import alert_rules, check_assembly, notify_targets

    settings = load_settings({"FANWHY_ALERTS": "temperature.threshold=80,power.enabled=0",
                              "FANWHY_NOTIFY": "ntfy:https://ntfy.sh/gpu, webhook:http://127.0.0.1:9/x"})
    assert settings.alerts == "temperature.threshold=80,power.enabled=0"
    assert notify_targets(settings) == [("ntfy", "https://ntfy.sh/gpu"), ("webhook", "http://127.0.0.1:9/x")]
    assert alert_rules(settings)["temperature"].threshold == 80.0 and not alert_rules(settings)["power"].enabled
    for variable, bad, message in (("FANWHY_NOTIFY", "carrier-pigeon:somewhere", r"FANWHY_NOTIFY: .*target 1"),
                                   ("FANWHY_ALERTS", "pump.threshold=1", r"FANWHY_ALERTS: bad alert setting")):
        loaded = load_settings({variable: bad})  # text, as given: nothing is built while loading
        with pytest.raises(ConfigError, match=message):
            check_assembly(loaded)
