"""Secrets in command lines are masked before any output."""

from __future__ import annotations

import pytest

from app.redact import MASK, command_line, redact_argv


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["app", "--password=hunter2"], ["app", f"--password={MASK}"]),
        (["app", "--password", "hunter2", "x"], ["app", "--password", MASK, "x"]),
        (["app", "--token", "abc"], ["app", "--token", MASK]),
        (["app", "--db-password=p"], ["app", f"--db-password={MASK}"]),
        (["app", "--api-key", "k"], ["app", "--api-key", MASK]),
        (["env", "AWS_SECRET_ACCESS_KEY=abc", "HF_TOKEN=hf_x", "PASSWORD=p"],
         ["env", f"AWS_SECRET_ACCESS_KEY={MASK}", f"HF_TOKEN={MASK}", f"PASSWORD={MASK}"]),
        (["curl", "-H", "Authorization: Bearer eyJhbGciOi"], ["curl", "-H", f"Authorization: Bearer {MASK}"]),
        (["psql", "postgres://alice:s3cr3t@db:5432/x"], ["psql", f"postgres://alice:{MASK}@db:5432/x"]),
        (["vllm", "serve", "--max-tokens", "100", "--keyboard", "us"],
         ["vllm", "serve", "--max-tokens", "100", "--keyboard", "us"]),
        (["python", "train.py", "--lr=0.1"], ["python", "train.py", "--lr=0.1"]),
    ],
)
def test_redact_argv(argv: list[str], expected: list[str]) -> None:
    assert redact_argv(argv) == expected


def test_command_line_quotes_and_masks() -> None:
    line = command_line(["python", "-c", "print('hi there')", "--token=abc"])
    assert "abc" not in line and "--token=****" in line and "'print('\"'\"'hi there'\"'\"')'" in line
