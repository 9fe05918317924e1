"""A token must be a secret (app/core/tokens.py): what people put there by mistake is refused at start with the
reason and how to make one; what the docs tell them to make is never refused."""

from __future__ import annotations

import base64
import os
import random
import string
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from app.collect.config import ConfigError, load_settings
from app.core.tokens import MIN_BITS, estimated_bits, weakness
from tests.support.population import size

ROOT = Path(__file__).resolve().parent.parent.parent

NOT_SECRETS = {
    "$(openssl rand -hex 16)": "shell text",  # an env file or a compose .env does not run it
    "${FANWHY_SECRET}": "shell text",
    "`openssl rand -hex 16`": "shell text",
    "REPLACE_ME_REPLACE_ME": "placeholder words me, replace",
    "your-token-here-1234": "placeholder words here, token, your",
    "ChangeMe-ChangeMe-2024": "placeholder words change, me",
    "EXAMPLE-xxxx-xxxx-xxxx": "repeated character",
    "0123456789abcdef": "one run",
    "1111222233334444": "one run",
    "a" * 32: "repeated character",
    "abcabcabcabcabcabc": "pattern of 3",
    "fedcba9876543210fedc": "one run",
    "Zk3Zk3Zk3Zk3Zk3Zk3": "pattern of 3",
    "my-password-2024!": "about 55 bits",  # left without the word and the run: 8 characters of 95 symbols
}


@pytest.mark.parametrize("token,reason", NOT_SECRETS.items())
def test_what_people_put_by_mistake_is_refused_with_the_reason_and_how_to_make_one(token: str, reason: str) -> None:
    assert reason in (weakness(token) or ""), weakness(token)
    for variable in ("FANWHY_TOKEN", "FANWHY_METRICS_TOKEN"):  # the same rule for both
        with pytest.raises(ConfigError) as refused:
            load_settings({variable: token})
        message = str(refused.value)
        assert message.startswith(f"{variable} is not a secret: it ") and reason in message
        assert "openssl rand -hex 16" in message and "secrets.token_hex(16)" in message


def test_the_shipped_placeholders_stay_refused() -> None:
    """deploy/kubernetes/secret.yaml's values and deploy/fanwhy-metrics-token, as the daemonset would pass them."""
    secret = yaml.safe_load((ROOT / "deploy/kubernetes/secret.yaml").read_text())["stringData"]
    shipped = [secret["token"], secret["metrics-token"], (ROOT / "deploy/fanwhy-metrics-token").read_text().strip()]
    for value in shipped:
        for variable in ("FANWHY_TOKEN", "FANWHY_METRICS_TOKEN"):
            with pytest.raises(ConfigError, match="not a secret"):
                load_settings({variable: value})


def _openssl_hex(draw: random.Random, n_bytes: int) -> str:
    return draw.getrandbits(8 * n_bytes).to_bytes(n_bytes, "big").hex()


def _base64(draw: random.Random) -> str:
    return base64.b64encode(draw.getrandbits(128).to_bytes(16, "big")).decode()


# a password manager's default: letters, digits and Bitwarden's special characters
_MANAGER = string.ascii_letters + string.digits + "!@#$%^&*"


def _manager(draw: random.Random) -> str:
    return "".join(draw.choice(_MANAGER) for _ in range(20))


@pytest.mark.parametrize("make", [lambda d: _openssl_hex(d, 16), lambda d: _openssl_hex(d, 8), _base64, _manager],
                         ids=["openssl-hex-16", "openssl-hex-8", "openssl-base64-16", "password-manager-20"])
def test_a_random_token_as_the_docs_make_it_is_never_refused(make: Callable[[random.Random], str]) -> None:
    draw = random.Random(20261127)
    tokens = (make(draw) for _ in range(size(100_000)))
    refused = [(token, why) for token in tokens if (why := weakness(token)) is not None]
    assert refused == []


def test_the_estimate_is_characters_times_the_bits_of_their_classes() -> None:
    assert estimated_bits("b6c13208cb3b58bb") == 64 == MIN_BITS  # -hex 8: pure hex, 4 bits a character
    assert estimated_bits("Ab3!" * 1) == pytest.approx(4 * 6.57, abs=0.01)  # 26 + 26 + 10 + 33 = 95 symbols
    assert estimated_bits("token-" + "b6c13208cb3b58bb") < estimated_bits("q8v-" + "b6c13208cb3b58bb")  # word: nothing
    assert estimated_bits("x-0123456789") == pytest.approx(4 * 6.11, abs=0.01)  # the run of 10 counts as 2


def test_a_weak_token_stops_the_server_before_it_binds() -> None:
    env = {**os.environ, "FANWHY_TOKEN": "your-token-here-1234", "FANWHY_PORT": "8090"}
    result = subprocess.run([sys.executable, "-m", "app"], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2, result.stderr
    assert "FANWHY_TOKEN is not a secret: it has about" in result.stderr and "openssl rand -hex 16" in result.stderr
    assert "your-token-here" not in result.stderr  # the refused value is not echoed
